"""Render pipeline benchmarks. Run: ``python benchmarks/bench_render.py``.

    python benchmarks/bench_render.py [--sizes 224 512 1024] [--repeat 2] [--skip-speed]
                                      [--skip-warm] [--scene fixtures/scenes/faithful/bedroom-01.json]

1. Renders per second at each size with the default profile's samples: the harness
   (``RenderService``, cold cache: framing, Blender, PNG decode, cache publish) against a bare
   bpy script that builds the same scene by hand (OBJ import per object, same Cycles settings,
   same camera) and renders with ``write_still``. Each side runs in its own fresh process;
   the scene build and the first (kernel-loading) render are excluded from both.
   Target: harness overhead <= 20 %.
2. ``t3d-audit warm``: cold (empty cache, real renders; smoke profile, 1 prompt, 2 jobs) vs
   warm (everything cached). A second warm measurement covers the full default profile's plan
   with every key pre-filled by a placeholder image (synthetic: it times the all-cached path
   of the default plan, not rendering). Target: warm <= 5 s.
3. Render-plan size per scene for each profile (paper: 39 distinct renders per scene).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEFAULT_SCENE = REPO / "fixtures" / "scenes" / "faithful" / "bedroom-01.json"

_HARNESS = r"""
import json, sys, time
from dataclasses import replace
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from harness.protocol.profiles import get_profile
from harness.render.scene_inputs import load_scene_file
from harness.render.service import RenderService
from harness.scenes.model import scene_identity
scene, root = load_scene_file(Path(sys.argv[2]))
ident = scene_identity(scene, root)
sizes, repeat = json.loads(sys.argv[3]), int(sys.argv[4])
c0 = get_profile("default").c0
service = RenderService(Path(sys.argv[5]))
service.render(scene, root, ident, replace(c0, resolution_px=64, seed=999))  # build + kernels
out = {}
for size in sizes:
    t, cpu = time.perf_counter(), time.process_time()
    for i in range(repeat):
        service.render(scene, root, ident, replace(c0, resolution_px=size, seed=i))
    out[size] = ((time.perf_counter() - t) / repeat, (time.process_time() - cpu) / repeat)
print("RESULT", json.dumps(out))
"""

_BARE = r"""
import json, math, sys, time
from pathlib import Path
import bpy
from mathutils import Matrix
sys.path.insert(0, sys.argv[1])
from harness.protocol.profiles import get_profile
from harness.render import framing, settings
from harness.render.scene_inputs import load_scene_file
scene, root = load_scene_file(Path(sys.argv[2]))
sizes, repeat = json.loads(sys.argv[3]), int(sys.argv[4])
c0 = get_profile("default").c0
bpy.ops.wm.read_factory_settings(use_empty=True)
sc = bpy.context.scene

def mat(rgb):
    m = bpy.data.materials.new("m")
    m.node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value = (*rgb, 1)
    m.node_tree.nodes["Principled BSDF"].inputs["Roughness"].default_value = 0.8
    return m

def box(b, m, camera_only=False):
    me = bpy.data.meshes.new("b")
    me.from_pydata([tuple(c) for c in framing.Box(b.lo, b.hi).corners().tolist()], [],
                   [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)])
    me.materials.append(m)
    ob = bpy.data.objects.new("b", me)
    sc.collection.objects.link(ob)
    if camera_only:
        ob.visible_shadow = ob.visible_diffuse = ob.visible_glossy = False
    return ob

hx, hy = scene.room.size[0] / 2, scene.room.size[1] / 2
box(framing.Box((-hx, -hy, -0.02), (hx, hy, 0.0)), mat(settings.FLOOR_RGB))
for w in framing.wall_boxes(scene.room.size, scene.room.wall_height).values():
    box(w, mat(settings.WALL_RGB), camera_only=True)
for o in scene.objects:
    before = set(bpy.data.objects)
    bpy.ops.wm.obj_import(filepath=str(root / o.asset), forward_axis="Y", up_axis="Z")
    new = [x for x in bpy.data.objects if x not in before]
    pts = [x.matrix_world @ v.co for x in new for v in x.data.vertices]
    lo = [min(p[i] for p in pts) for i in range(3)]
    hi = [max(p[i] for p in pts) for i in range(3)]
    s = [o.size[i] / (hi[i] - lo[i]) for i in range(3)]
    place = (Matrix.Translation(o.position) @ Matrix.Rotation(math.radians(o.yaw_deg), 4, "Z")
             @ Matrix.Diagonal((*s, 1)) @ Matrix.Translation((-(lo[0] + hi[0]) / 2, -(lo[1] + hi[1]) / 2, -lo[2])))
    for x in new:
        x.matrix_world = place @ x.matrix_world
cam = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
sc.collection.objects.link(cam)
sc.camera = cam
pose = framing.solve_camera(framing.scene_box(scene), c0.focal_length_mm, c0.pitch_deg, c0.yaw_deg)
cam.location, cam.rotation_euler = pose.location, pose.rotation_euler
cam.data.sensor_fit, cam.data.sensor_width, cam.data.lens = "HORIZONTAL", 36.0, pose.lens_mm
cam.data.shift_x, cam.data.shift_y = pose.shift
w = bpy.data.worlds.new("w")
env = w.node_tree.nodes.new("ShaderNodeTexEnvironment")
env.image = bpy.data.images.load(bpy.utils.system_resource("DATAFILES") + "/studiolights/world/city.exr")
w.node_tree.links.new(env.outputs["Color"], w.node_tree.nodes["Background"].inputs["Color"])
w.cycles.sampling_method, w.cycles.sample_map_resolution = "MANUAL", settings.WORLD_MAP_RESOLUTION
sc.world = w
r, c = sc.render, sc.cycles
r.engine, r.film_transparent, r.use_persistent_data = "CYCLES", True, True
r.image_settings.file_format, r.image_settings.color_mode = "PNG", "RGBA"
sc.view_settings.view_transform = settings.VIEW_TRANSFORM
c.samples, c.use_adaptive_sampling, c.use_denoising = c0.samples, False, False
c.max_bounces, c.sample_clamp_indirect = settings.MAX_BOUNCES, settings.CLAMP_INDIRECT
c.sample_clamp_direct = settings.CLAMP_DIRECT
c.caustics_reflective = c.caustics_refractive = False
c.blur_glossy = 1.0
r.filepath = sys.argv[5] + "/bare.png"
r.resolution_x = r.resolution_y = 64
bpy.ops.render.render(write_still=True)  # kernels + sync, excluded like the harness's build
out = {}
for size in sizes:
    r.resolution_x = r.resolution_y = size
    t, cpu = time.perf_counter(), time.process_time()
    for i in range(repeat):
        c.seed = i
        bpy.ops.render.render(write_still=True)
    out[size] = ((time.perf_counter() - t) / repeat, (time.process_time() - cpu) / repeat)
print("RESULT", json.dumps(out))
"""


def _run(code: str, *args: str) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, "-c", code, str(REPO), *args], capture_output=True, text=True, check=True
    )
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def bench_speed(scene: Path, sizes: list[int], repeat: int) -> None:
    print(f"== renders/s, default profile samples, scene {scene.name}, repeat {repeat}")
    with tempfile.TemporaryDirectory() as tmp:
        harness = _run(_HARNESS, str(scene), json.dumps(sizes), str(repeat), tmp + "/cache")
        bare = _run(_BARE, str(scene), json.dumps(sizes), str(repeat), tmp)
    # wall time swings with other load on a shared machine; CPU time (all threads) does not
    print(f"{'px':>6} {'harness s':>10} {'bare s':>8} {'harness r/s':>12} {'bare r/s':>9} "
          f"{'wall ovh':>9} {'harness cpu':>12} {'bare cpu':>9} {'cpu ovh':>8}")
    for size in sizes:
        (h, hc), (b, bc) = harness[str(size)], bare[str(size)]
        print(f"{size:>6} {h:>10.2f} {b:>8.2f} {1 / h:>12.3f} {1 / b:>9.3f} {h / b - 1:>+9.1%} "
              f"{hc:>12.2f} {bc:>9.2f} {hc / bc - 1:>+8.1%}")


def bench_harness_side(sizes: list[int]) -> None:
    """The harness's own work per render, without Blender: camera solve, PNG decode of
    Blender's output, PNG encode + sha256 + publish into the cache, verified cache read."""
    import numpy as np

    from harness.protocol.configurations import RenderConfig
    from harness.render import framing
    from harness.render.cache import RenderCache, decode_png, encode_png
    from harness.render.scene_inputs import load_scene_file

    print("== harness-side work per render (no Blender; incompressible noise = worst case), ms")
    scene, _ = load_scene_file(DEFAULT_SCENE)
    box = framing.scene_box(scene)
    rng = np.random.default_rng(0)
    print(f"{'px':>6} {'camera':>7} {'decode':>7} {'publish':>8} {'read':>6} {'total':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        cache = RenderCache(Path(tmp))
        for size in sizes:
            img = rng.integers(0, 256, (size, size, 4), dtype=np.uint8)
            img[..., 3] = 255
            blender_png = encode_png(img)  # stands in for the PNG Blender writes (both sides)
            t0 = time.perf_counter()
            framing.solve_camera(box, 50.0, 45.0, 30.0)
            t1 = time.perf_counter()
            decode_png(blender_png)
            t2 = time.perf_counter()
            key = cache.key(str(size), RenderConfig(resolution_px=size))
            cache.put(key, img)
            t3 = time.perf_counter()
            cache.get(key)
            t4 = time.perf_counter()
            ms = [1000 * x for x in (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0)]
            print(f"{size:>6} " + " ".join(f"{v:>7.1f}" for v in ms))


def _warm(cache: Path, *extra: str) -> float:
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "harness", "warm", "--cache-dir", str(cache), *extra],
        cwd=REPO, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - t


def bench_warm_small() -> None:
    """Cold (real renders) then warm (all cached) on the smoke profile, first prompt, 2 jobs."""
    print("== t3d-audit warm: cold vs warm")
    with tempfile.TemporaryDirectory() as tmp:
        small = ("--profile", "smoke", "--prompts", "1", "--jobs", "2")
        cold = _warm(Path(tmp), *small)
        warm = _warm(Path(tmp), *small)
        print(f"smoke, 1 prompt (84 renders, 2 jobs): cold {cold:.1f} s, warm {warm:.2f} s")


def bench_warm_default_cached() -> None:
    """``warm --profile default`` with every key pre-filled by a placeholder (synthetic)."""
    import numpy as np

    from harness.protocol.profiles import get_profile
    from harness.render.cache import RenderCache
    from harness.render.cache_warmer import resolve_jobs
    from harness.render.job_plan import render_plan
    from harness.render.scene_inputs import apply_probe, load_profile_scenes

    with tempfile.TemporaryDirectory() as tmp:
        profile = get_profile("default")
        sset = load_profile_scenes(profile)
        jobs = render_plan(profile, list(sset.scenes))
        requests, _ = resolve_jobs(jobs, list(sset.scenes), sset.root, probe_fn=apply_probe)
        cache = RenderCache(Path(tmp) / "renders")
        placeholder = np.zeros((2, 2, 4), np.uint8)
        for r in requests:
            cache.put(cache.key(r.identity, r.cfg), placeholder)
        warm = _warm(Path(tmp), "--profile", "default")
        print(f"default ({len(requests)} renders, all cached, synthetic fill): warm {warm:.2f} s")


def bench_plan() -> None:
    from harness.protocol.profiles import load_profiles
    from harness.render.job_plan import per_scene_counts, render_plan
    from harness.scenes.model import Room, Scene

    print("== render plan size per scene")
    scene = Scene("s", "g", "p", "x", "t", Room((4.0, 4.0), 2.5), ())
    for name, profile in load_profiles().items():
        n = per_scene_counts(render_plan(profile, [scene]))["s"]
        print(f"{name:>8}: {n} renders per scene ({len(profile.render_configs())} configs + {len(profile.probes)} probes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[224, 512, 1024])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--scene", type=Path, default=DEFAULT_SCENE)
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-warm", action="store_true")
    parser.add_argument("--skip-cold", action="store_true", help="skip the cold warm-up run")
    args = parser.parse_args()
    bench_plan()
    bench_harness_side(args.sizes)
    if not args.skip_speed:
        bench_speed(args.scene, args.sizes, args.repeat)
    if not args.skip_warm:
        if not args.skip_cold:
            bench_warm_small()
        bench_warm_default_cached()


if __name__ == "__main__":
    main()
