"""Scene-set load speed: build a synthetic set of 300 scenes (6 generators x 50 prompts,
10 objects each, one retrieval candidate per object, 20 small OBJ assets) in a temp dir, then
time ``build_manifest``, ``SceneSet.load`` (verify=True: hashes + schema + semantics) and the
300 scene identities. Target: load + verify well under 2 s.

Run: ``python benchmarks/bench_scene_load.py``.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from harness.scenes import SceneSet, build_manifest, write_manifest


def make_set(root: Path, generators: int = 6, prompts: int = 50, objects: int = 10) -> list[Path]:
    (root / "assets").mkdir()
    for k in range(20):
        (root / "assets" / f"m{k}.obj").write_text(f"v 0 0 {k}\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    paths = []
    for g in range(generators):
        (root / "scenes" / f"gen{g}").mkdir(parents=True)
        for p in range(prompts):
            doc = {
                "schema": "t3d-scene/1",
                "id": f"gen{g}__p{p:03d}",
                "generator": f"gen{g}",
                "prompt_id": f"p{p:03d}",
                "prompt": f"a living room number {p}",
                "prompt_source": "bench",
                "room": {"size": [4.0, 5.0], "wall_height": 2.5},
                "objects": [
                    {
                        "id": f"o{i}",
                        "label": "chair",
                        "asset": f"assets/m{(i + p) % 20}.obj",
                        "position": [i * 0.1, 0.2, 0.0],
                        "yaw_deg": 90.0,
                        "size": [0.5, 0.5, 1.0],
                        "candidates": [
                            {"asset": f"assets/m{(i + 1) % 20}.obj", "retrieval_score": 0.5}
                        ],
                    }
                    for i in range(objects)
                ],
            }
            target = root / "scenes" / f"gen{g}" / f"p{p:03d}.json"
            target.write_text(json.dumps(doc, indent=1))
            paths.append(target)
    return paths


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = make_set(root)
        t0 = time.perf_counter()
        write_manifest(root, build_manifest(root, paths))
        print(f"build_manifest + write (300 scenes): {time.perf_counter() - t0:.3f} s")
        loads, cpu = [], []
        for _ in range(3):
            t0, c0 = time.perf_counter(), time.process_time()
            scene_set = SceneSet.load(root)
            loads.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        print(
            f"SceneSet.load verify=True (300 scenes): median {statistics.median(loads):.3f} s wall, "
            f"{statistics.median(cpu):.3f} s CPU"
        )
        t0 = time.perf_counter()
        SceneSet.load(root, verify=False)
        print(f"SceneSet.load verify=False: {time.perf_counter() - t0:.3f} s")
        t0 = time.perf_counter()
        for scene in scene_set:
            scene_set.identity(scene.id)
        print(f"300 identities (asset hashes from manifest): {time.perf_counter() - t0:.3f} s")
    bundled = Path(__file__).resolve().parent.parent / "fixtures" / "scenes"
    if (bundled / "manifest.json").is_file():
        c0 = time.process_time()
        n = len(SceneSet.load(bundled))
        print(f"bundled set ({n} scenes) load+verify: {time.process_time() - c0:.3f} s CPU")


if __name__ == "__main__":
    main()
