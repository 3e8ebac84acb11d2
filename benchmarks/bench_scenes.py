"""Speed of the bundled scene set: full rebuild, loading, and the four probes over 300 scenes.

Targets: rebuild (assets + 300 scenes + manifest + prompt files) under 10 s of CPU on one
core, so the regeneration test stays cheap; all four probes over the 300 scenes under 10 s.

    python benchmarks/bench_scenes.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.core.paths import BUNDLED_SCENES
from harness.scenes import probe_edits
from harness.scenes.bundle import build_scene_set
from harness.scenes.sceneset import SceneSet
from harness.vocab.probes import probe_names


def _timed(label: str, fn) -> object:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    print(f"{label:<34} wall {time.perf_counter() - wall:6.2f} s   cpu {time.process_time() - cpu:6.2f} s")
    return out


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        _timed("build 300 scenes + manifest", lambda: build_scene_set(Path(tmp) / "s", Path(tmp) / "p"))
    scene_set = _timed("SceneSet.load (verify manifest)", lambda: SceneSet.load(BUNDLED_SCENES))
    for probe in probe_names():
        _timed(f"probe {probe} x {len(scene_set)}", lambda p=probe: [probe_edits.apply(s, p) for s in scene_set])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
