"""Test helpers: write small valid scene sets (scene JSON + tiny OBJ assets) into a directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ASSETS = ("assets/chair/a.obj", "assets/chair/c.obj", "assets/table/a.obj", "assets/bed/a.obj")

_OBJ = "o {name}\nv -0.5 -0.5 0\nv 0.5 -0.5 0\nv 0.5 0.5 0\nv -0.5 0.5 1\nf 1 2 3\nf 1 3 4\n"


def write_assets(root: Path, paths: tuple[str, ...] = ASSETS) -> None:
    """Create each asset file (a 2-triangle OBJ whose text names the file)."""
    for rel in paths:
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_OBJ.format(name=rel), encoding="utf-8")


def scene_doc(generator: str = "gen-a", prompt_id: str = "p01", n_objects: int = 3) -> dict:
    """A valid scene document using the assets of :data:`ASSETS`."""
    objects = []
    for i in range(n_objects):
        obj: dict[str, Any] = {
            "id": f"obj{i}",
            "label": ["chair", "table", "bed"][i % 3],
            "asset": [ASSETS[0], ASSETS[2], ASSETS[3]][i % 3],
            "position": [0.5 * i - 1.0, 0.25 * i, 0.0],
            "yaw_deg": 30.0 * i,
            "size": [0.5, 0.6, 0.9 + 0.1 * i],
        }
        if i % 3 == 0:
            obj["candidates"] = [
                {"asset": ASSETS[0], "retrieval_score": 0.9},
                {"asset": ASSETS[1], "retrieval_score": 0.1},
            ]
        objects.append(obj)
    return {
        "schema": "t3d-scene/1",
        "id": f"{generator}__{prompt_id}",
        "generator": generator,
        "prompt_id": prompt_id,
        "prompt": f"a bedroom for prompt {prompt_id}",
        "prompt_source": "unit-test",
        "room": {"size": [4.0, 5.0], "wall_height": 2.6},
        "objects": objects,
    }


def dumps(doc: Any) -> bytes:
    """JSON bytes as a generator would write them (NaN allowed so tests can inject it)."""
    return json.dumps(doc, indent=1, allow_nan=True).encode("utf-8")


def write_scene_set(
    root: Path,
    generators: tuple[str, ...] = ("gen-a", "gen-b"),
    prompt_ids: tuple[str, ...] = ("p01", "p02", "p03"),
    *,
    manifest: bool = True,
) -> list[Path]:
    """Write assets and one scene per (generator, prompt) under ``root/scenes/<generator>/``;
    with ``manifest`` also write ``root/manifest.json``. Returns the scene paths."""
    from harness.scenes.set_manifest import build_manifest, write_manifest

    write_assets(root)
    paths = []
    for gen in generators:
        for pid in prompt_ids:
            target = root / "scenes" / gen / f"{pid}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(dumps(scene_doc(gen, pid)))
            paths.append(target)
    if manifest:
        write_manifest(root, build_manifest(root, paths))
    return paths
