"""Test helpers: tiny glTF documents and GLB containers built by hand (no Blender)."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import numpy as np


def glb(doc: dict, binary: bytes = b"") -> bytes:
    """A GLB container: the JSON chunk, then the BIN chunk when ``binary`` is given."""
    js = json.dumps(doc).encode()
    js += b" " * (-len(js) % 4)
    out = struct.pack("<II", len(js), 0x4E4F534A) + js
    if binary:
        binary += b"\0" * (-len(binary) % 4)
        out += struct.pack("<II", len(binary), 0x004E4942) + binary
    return struct.pack("<III", 0x46546C67, 2, 12 + len(out)) + out


def triangle() -> tuple[dict, bytes]:
    """One triangle: 3 float VEC3 positions (36 bytes) then 3 u16 indices (6 bytes + 2 pad)."""
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype="<f4").tobytes()
    idx = np.array([0, 1, 2], dtype="<u2").tobytes() + b"\0\0"
    doc = {
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
        "accessors": [
            {
                "bufferView": 0,
                "componentType": 5126,
                "count": 3,
                "type": "VEC3",
                "min": [0, 0, 0],
                "max": [1, 1, 0],
            },
            {"bufferView": 1, "componentType": 5123, "count": 3, "type": "SCALAR"},
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 6},
        ],
        "buffers": [{"byteLength": 44}],
    }
    return doc, pos + idx


def write_glb(tmp_path: Path, doc: dict, binary: bytes, name: str = "x.glb") -> Path:
    path = tmp_path / name
    path.write_bytes(glb(doc, binary))
    return path


def png_header(width: int, height: int) -> bytes:
    """A PNG of the given size as far as any header reader can tell: signature, IHDR, IEND."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")
