"""The file references written inside an asset file, by format, read from its bytes.

Pure parsing, no file-system access: ``harness.scenes.assetdeps`` decides whether each
reference is allowed (inside the scene set) and follows it.

* OBJ: the names after ``mtllib``; MTL: the name of a map statement (``map_Kd``, ``bump``,
  ``disp``, ``decal``, ``refl``, ``norm``, ...) after any options, spaces and all;
* USDA (text): every asset path, i.e. every ``@...@`` or ``@@@...@@@`` (sublayers,
  references, payloads, textures, in variant sets too);
* USDC (binary "crate"): asset paths are stored in the token table (LZ4-compressed since
  crate 0.4.0), so every token that looks like a file name (a file extension USD or Blender
  can load, or a path/URI form) counts; a false positive is refused, never ignored;
* USDZ: a zip; each layer entry is read as above, and its references must name entries of the
  same package (:func:`usdz_layers`);
* PLY, STL: none (they cannot reference files). glTF is read by
  ``harness.scenes.importers.gltf_io.dependencies``.

Hostile input gets :class:`harness.core.errors.SceneError`; sizes are bounded by the one input
bound (``$T3D_AUDIT_MAX_INPUT_BYTES``, ``harness.core.bounded_input.max_bytes``): a USDC token
table, and a USDZ's layers together once decompressed.
"""

from __future__ import annotations

import re
import struct
import zipfile
from pathlib import Path

from harness.core import bounded_input
from harness.core.errors import SceneError

_MTL_KEYS = ("map_", "bump", "disp", "decal", "refl", "norm")
_USDA_ASSET = re.compile(rb"@@@(.*?)@@@|@([^@\r\n]*)@")
# USDA strings (triple-quoted too) and comments, each matched from its opening; an asset path
# ("@...@", "@@@...@@@") is matched first where it starts, so a "#" or quote inside it is kept
_USDA_SKIP = re.compile(
    rb'@@@.*?@@@|@[^@\r\n]*@|"""(?:.|\n)*?"""|\'\'\'(?:.|\n)*?\'\'\''
    rb'|"(?:[^"\\\r\n]|\\.)*"|\'(?:[^\'\\\r\n]|\\.)*\'|#[^\r\n]*',
    re.DOTALL,
)
# file extensions a USD stage can load (layers, textures, volumes, shaders) or Blender reads
_FILE_EXT = re.compile(
    r"\.(usd|usda|usdc|usdz|png|jpe?g|exr|hdr|tiff?|tga|bmp|gif|webp|ktx2?|tx|dds|psd|"
    r"obj|mtl|ply|stl|gltf|glb|abc|vdb|fbx|mdl|osl|oso|mtlx|sdf|drc)$",
    re.IGNORECASE,
)
_PATH_FORM = re.compile(r"^(/|\\|~|[A-Za-z]:|[A-Za-z][A-Za-z0-9+.-]*://|\.\.?[/\\])|[/\\]\.\.")


def _lines(data: bytes) -> list[str]:
    """The lines of an OBJ or MTL both ways they may be split: at ``\\n`` only (Blender's
    reader, for which a form feed or vertical tab inside a line is whitespace between words)
    and at every line break Python knows (``\\r``, ``\\x0b``, ``\\x0c``, ``\\x85``, ...), so
    no reference hides from either reading."""
    text = data.decode("utf-8", errors="replace")
    return list(dict.fromkeys([*text.split("\n"), *text.splitlines()]))


def obj_references(data: bytes) -> list[str]:
    """The material libraries an OBJ names (``mtllib a.mtl b.mtl``), each once: each word, and
    the rest of the line as one name when it has several (a name with spaces)."""
    out: list[str] = []
    for line in _lines(data):
        words = line.split()
        if len(words) >= 2 and words[0].lower() == "mtllib":
            out.extend(words[1:])
            if len(words) > 2:
                out.append(line.strip()[len(words[0]):].strip())
    return list(dict.fromkeys(out))


MTL_OPTION_WORDS = 32  # words of options a map statement may start with (-o u v w -s u v w ...)
_SPACE_RUN = re.compile(r"\s+")


def mtl_references(data: bytes) -> list[str]:
    """The texture files an MTL names: the last word of each map statement, and, when it has
    several words, the rest of the line from each of its first :data:`MTL_OPTION_WORDS` words
    on. Blender reads the options (``-s 1 1 1``, ``-bm 0.5``) and takes the rest of the line as
    one name, spaces and all, so ``-s 1 1 1 ../out dir/x.png`` names ``../out dir/x.png``:
    every split is checked (a split naming a missing file is not an error)."""
    out: list[str] = []
    for line in _lines(data):
        words = line.split()
        if len(words) >= 2 and words[0].lower().startswith(_MTL_KEYS):
            out.append(words[-1])
            if len(words) > 2:
                rest = line.strip()[len(words[0]):].strip()
                out.append(rest)
                for i, gap in enumerate(_SPACE_RUN.finditer(rest)):
                    if i >= MTL_OPTION_WORDS:
                        break
                    out.append(rest[gap.end():])
    return list(dict.fromkeys(out))


def usd_references(data: bytes, where: Path | str) -> list[str]:
    """The asset paths of one USD layer (USDA text or USDC crate); see the module docstring."""
    if data.startswith(b"PXR-USDC"):
        return [t for t in _crate_tokens(data, where) if _looks_like_file(t)]
    out: list[str] = []
    # twice: as written, and with strings and comments skipped, so an "@" inside a string
    # ('doc = "a@b" ...') cannot pair with the opening "@" of a real asset path and hide it
    for text in (data, _USDA_SKIP.sub(_keep_assets, data)):
        for match in _USDA_ASSET.finditer(text):
            raw = match.group(1) if match.group(1) is not None else match.group(2)
            name = raw.decode("utf-8", errors="replace")
            if name:
                out.append(name)
    return list(dict.fromkeys(out))


def _keep_assets(match: re.Match[bytes]) -> bytes:
    """An asset path as it is; a string or comment as one space."""
    return match.group(0) if match.group(0).startswith(b"@") else b" "


def _looks_like_file(token: str) -> bool:
    return bool(_FILE_EXT.search(token) or _PATH_FORM.search(token))


def usdz_layers(path: Path) -> dict[str, bytes]:
    """Entry name -> bytes of every USD layer inside the USDZ package ``path``.

    Raises SceneError for an unreadable package or layers over the input bound together
    once decompressed (read at most bound + 1 bytes: a zip header's sizes are not trusted).
    """
    limit = bounded_input.max_bytes()
    try:
        with zipfile.ZipFile(path) as package:
            out: dict[str, bytes] = {}
            left = limit
            for info in package.infolist():
                if not info.filename.lower().endswith((".usd", ".usda", ".usdc")):
                    continue
                with package.open(info) as handle:
                    data = b"" if info.file_size > left else handle.read(left + 1)
                if info.file_size > left or len(data) > left:
                    raise SceneError(
                        f"USDZ layers up to {info.filename!r} are over the input limit of "
                        f"{limit} bytes once decompressed", path=path,
                        hint=f"split or simplify the stage, or raise ${bounded_input.MAX_BYTES_ENV}")
                out[info.filename] = data
                left -= len(data)
            return out
    except (OSError, zipfile.BadZipFile, RuntimeError, ValueError) as exc:
        raise SceneError(f"unreadable USDZ package: {exc}", path=path) from None


def usdz_entries(path: Path) -> set[str]:
    """The entry names of a USDZ package (empty when unreadable)."""
    try:
        with zipfile.ZipFile(path) as package:
            return set(package.namelist())
    except (OSError, zipfile.BadZipFile, RuntimeError, ValueError):
        return set()


# --------------------------------------------------------------------------- USDC token table


def _crate_tokens(data: bytes, where: Path | str) -> list[str]:
    """The token strings of a USDC ("crate") file: bootstrap header -> table of contents ->
    TOKENS section (plain before crate 0.4.0, TfFastCompression/LZ4 blocks since)."""

    def bad(why: str) -> SceneError:
        return SceneError(f"malformed USDC file: {why}", path=where,
                          hint="re-export it from Blender or usdcat")

    try:
        version = tuple(data[8:11])
        (toc,) = struct.unpack_from("<q", data, 16)
        (count,) = struct.unpack_from("<Q", data, toc)
        if count > 64:
            raise bad(f"{count} sections")
        sections = {}
        for i in range(count):
            name, start, size = struct.unpack_from("<16sqq", data, toc + 8 + i * 32)
            sections[name.rstrip(b"\0")] = (start, size)
        if b"TOKENS" not in sections:
            return []
        start, _size = sections[b"TOKENS"]
        (n_tokens,) = struct.unpack_from("<Q", data, start)
        if version < (0, 4, 0):
            (length,) = struct.unpack_from("<Q", data, start + 8)
            table = data[start + 16 : start + 16 + length]
        else:
            usize, csize = struct.unpack_from("<QQ", data, start + 8)
            if max(usize, csize) > bounded_input.max_bytes():
                raise bad("token table over the size limit")
            table = _fast_decompress(data[start + 24 : start + 24 + csize], usize, bad)
    except struct.error:
        raise bad("truncated header or table of contents") from None
    tokens = table.split(b"\0")
    if len(tokens) < n_tokens:
        raise bad("token table shorter than its count")
    return [t.decode("utf-8", errors="replace") for t in tokens[:n_tokens]]


def _fast_decompress(src: bytes, size: int, bad) -> bytes:
    """USD's TfFastCompression: a chunk count byte (0: one LZ4 block follows), else that many
    chunks, each an int32 compressed size then an LZ4 block."""
    if not src:
        raise bad("empty token table")
    chunks = src[0]
    if chunks == 0:
        return _lz4_block(src[1:], size, bad)
    out, pos = bytearray(), 1
    for _ in range(chunks):
        (n,) = struct.unpack_from("<i", src, pos)
        pos += 4
        if n < 0:
            raise bad("negative chunk size")
        out += _lz4_block(src[pos : pos + n], size - len(out), bad)
        pos += n
    return bytes(out)


def _lz4_length(src: bytes, i: int, length: int) -> tuple[int, int]:
    """An LZ4 length whose 4-bit nibble is ``length``: 15 continues in bytes while they are 255.
    Returns the length and the index after it."""
    if length == 15:
        while True:
            extra = src[i]
            i += 1
            length += extra
            if extra != 255:
                break
    return length, i


def _lz4_block(src: bytes, limit: int, bad) -> bytes:
    """Decode one LZ4 block (the public block format) of at most ``limit`` bytes."""
    dst = bytearray()
    i, n = 0, len(src)
    try:
        while i < n:
            token = src[i]
            i += 1
            literal, i = _lz4_length(src, i, token >> 4)
            dst += src[i : i + literal]
            i += literal
            if i >= n:
                break
            offset = src[i] | (src[i + 1] << 8)
            i += 2
            length, i = _lz4_length(src, i, token & 15)
            length += 4
            start = len(dst) - offset
            if offset == 0 or start < 0 or len(dst) + length > limit:
                raise bad("corrupt LZ4 block")
            for k in range(length):  # may overlap its own output: byte by byte
                dst.append(dst[start + k])
            if len(dst) > limit:
                raise bad("LZ4 block larger than declared")
    except IndexError:
        raise bad("truncated LZ4 block") from None
    return bytes(dst)
