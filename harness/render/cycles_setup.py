"""Cycles and output settings: the compute device, the fixed settings of a built scene
(transparent film, persistent data, 8-bit RGBA PNG, the view transform, bounces, clamps), and
the per-configuration ones (resolution, samples, seed, denoising, time limit)."""

from __future__ import annotations

from harness.protocol.configurations import RenderConfig
from harness.render import bpyaccess, settings
from harness.render.bpyaccess import assign
from harness.render.failures import RenderFailed

GPU_BACKENDS = ("OPTIX", "CUDA", "HIP", "ONEAPI", "METAL")


def choose_device(device: str) -> str:
    """``cpu`` (deterministic default), ``gpu`` (required) or ``auto`` (GPU if present); returns
    the device chosen, ``cpu`` or ``gpu``, after enabling the first GPU backend that has one."""
    if device == "cpu":
        return "cpu"
    bpy = bpyaccess.load()
    try:
        prefs = bpy.context.preferences.addons["cycles"].preferences
    except KeyError:
        prefs = None
    if prefs is not None:
        for backend in GPU_BACKENDS:
            try:
                prefs.compute_device_type = backend
            except TypeError:
                continue
            prefs.get_devices()
            gpus = [d for d in prefs.devices if d.type == backend]
            if gpus:
                for d in prefs.devices:
                    d.use = d.type == backend
                return "gpu"
    if device == "gpu":
        raise RenderFailed("no GPU device is available to Cycles", scene_id="-", hint="use device='cpu'")
    return "cpu"


def configure(bscene: object, device: str) -> None:
    """The settings of ``bscene`` that no configuration changes, rendering on ``device``."""
    r = bscene.render
    r.engine = "CYCLES"
    r.film_transparent = True
    r.use_persistent_data = True
    threads = settings.render_threads()
    r.threads_mode = "FIXED" if threads else "AUTO"
    if threads:
        r.threads = threads
    r.resolution_percentage = 100
    r.use_compositing = False
    r.use_sequencer = False
    r.image_settings.file_format = "PNG"
    r.image_settings.color_mode = "RGBA"
    r.image_settings.color_depth = "8"
    r.image_settings.compression = 0
    r.use_stamp = False
    bscene.view_settings.view_transform = settings.VIEW_TRANSFORM
    bscene.view_settings.look = "None"
    bscene.view_settings.exposure = 0.0
    bscene.view_settings.gamma = 1.0
    c = bscene.cycles
    c.device = "GPU" if device == "gpu" else "CPU"
    c.use_animated_seed = False
    c.use_adaptive_sampling = False
    c.max_bounces = settings.MAX_BOUNCES
    c.denoiser = "OPENIMAGEDENOISE"
    # clamp sample values and drop caustics, or the few samples of the protocol leave
    # fireflies (sun glints, light leaking past walls) all over the floor
    c.sample_clamp_direct = settings.CLAMP_DIRECT
    c.sample_clamp_indirect = settings.CLAMP_INDIRECT
    c.caustics_reflective = False
    c.caustics_refractive = False
    c.blur_glossy = 1.0


def apply_sampling(bscene: object, cfg: RenderConfig, timeout_s: float | None) -> None:
    """``cfg``'s resolution (px), samples, seed and denoising on ``bscene``, and Cycles' time
    limit (s; none when ``timeout_s`` is None or 0)."""
    r, c = bscene.render, bscene.cycles
    assign(r, "resolution_x", int(cfg.resolution_px))
    assign(r, "resolution_y", int(cfg.resolution_px))
    assign(c, "samples", int(cfg.samples))
    assign(c, "seed", int(cfg.seed))
    assign(c, "use_denoising", bool(cfg.denoise))
    assign(c, "time_limit", float(timeout_s) if timeout_s else 0.0)
