"""Scoring throughput and memory: harness ``score_grid`` vs a naive per-pair forward loop.

Run: ``python benchmarks/bench_scoring.py [--images 300] [--naive-pairs 300]``.

Model: a small random-init open_clip ViT (config below) saved as safetensors and loaded
through the harness's own open_clip adapter (the same ``pretrained=<path>`` route as real
checkpoints). Random weights cost exactly what trained weights cost.

1. Sweep: ``--images`` images x the 337 caption templates of one prompt (300 x 337 = 101,100
   pairs by default). The harness encodes each distinct image once and each distinct caption
   once, then takes one matrix product. The naive loop runs a full forward per pair
   (preprocess, tokenize, encode image, encode text, cosine); it is timed on
   ``--naive-pairs`` pairs (default 100) and extrapolated linearly to the sweep (its cost per pair is
   constant by construction). Both use the same model in the same process.
2. Memory: 1,000 images (256x256) streamed from a generator through ``score_grid``; peak
   resident memory is sampled every 5 ms. Materialising the images alone would take
   1000 * 256 * 256 * 3 bytes = 197 MB; the streamed run holds one batch at a time.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

SMALL_CFG = {
    "embed_dim": 64,
    "vision_cfg": {"image_size": 64, "layers": 2, "width": 128, "patch_size": 16, "head_width": 32},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 128, "heads": 4, "layers": 2},
}
PROMPT = "a bedroom with a double bed, two nightstands with lamps and a wardrobe"


def rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakRss:
    """Samples resident memory in a thread; ``peak`` is the maximum seen while active."""

    def __init__(self, interval: float = 0.005):
        self.interval = interval
        self.peak = rss_bytes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_bytes())
            time.sleep(self.interval)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes())


def build_evaluator(root: Path, batch_size: int):
    import open_clip
    import torch
    from safetensors.torch import save_file

    from harness.evaluators import builders

    config = root / "t3d-bench-clip.json"
    config.write_text(json.dumps(SMALL_CFG))
    open_clip.add_model_config(config)
    torch.manual_seed(0)
    model = open_clip.create_model("t3d-bench-clip").eval()
    ckpt = root / "bench.safetensors"
    save_file(model.state_dict(), str(ckpt))
    spec = builders.openclip_local_spec("bench-clip", config, ckpt)
    return spec.build(device="cpu", batch_size=batch_size)


def naive_pair(ev, image: np.ndarray, caption: str) -> float:
    """One full forward for one (image, caption) pair: what a per-pair loop does."""
    import torch
    from PIL import Image

    with torch.inference_mode():
        pixels = ev.preprocess(Image.fromarray(image)).unsqueeze(0)
        img = ev.model.encode_image(pixels, normalize=True)
        txt = ev.model.encode_text(ev.tokenizer([caption]), normalize=True)
        return 2.5 * max(float((img @ txt.T).item()), 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=300)
    parser.add_argument("--naive-pairs", type=int, default=100)
    parser.add_argument("--memory-images", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    import torch

    from harness.captions import templates

    captions = [t.text.replace("{prompt}", PROMPT) for t in templates()]
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (128, 128, 3), dtype=np.uint8) for _ in range(args.images)]
    with tempfile.TemporaryDirectory() as tmp:
        ev = build_evaluator(Path(tmp), args.batch_size)
        print(f"torch threads: {torch.get_num_threads()}; model: {json.dumps(SMALL_CFG)}")

        def stream():
            gen = np.random.default_rng(1)
            for _ in range(args.memory_images):
                yield gen.integers(0, 256, (256, 256, 3), dtype=np.uint8)

        # Measured first, before the sweep leaves freed memory behind to hide a peak in.
        ev.score_grid(images[:2], captions[:2])  # warm-up (allocator, kernels)
        base = rss_bytes()
        with PeakRss() as peak:
            out = ev.score_grid(stream(), captions[:8])
        streamed = peak.peak - base
        with PeakRss() as peak:
            held = list(stream())
            ev.score_grid(held, captions[:8])
        listed = peak.peak - base
        del held
        print(f"memory: {args.memory_images} images (256x256) scored, grid {out.shape}, batch "
              f"size {args.batch_size}: streamed from a generator peak RSS "
              f"+{streamed / 2**20:.1f} MiB; same images held in a list +{listed / 2**20:.1f} "
              f"MiB (over a {base / 2**20:.0f} MiB baseline: interpreter, torch, model)")  # fmt: skip

        ev.score_grid(images[:2], captions[:2])  # warm-up (allocator, kernels)
        ev.text_cache._memory.clear()
        t0 = time.perf_counter()
        grid = ev.score_grid(images, captions)
        harness_s = time.perf_counter() - t0
        n_pairs = grid.size
        harness_rate = n_pairs / harness_s
        print(f"harness score_grid: {len(images)} images x {len(captions)} captions = "
              f"{n_pairs:,} pairs in {harness_s:.2f} s -> {harness_rate:,.0f} pairs/s")  # fmt: skip

        idx = [(i % len(images), (i * 7) % len(captions)) for i in range(args.naive_pairs)]
        t0 = time.perf_counter()
        naive = [naive_pair(ev, images[i], captions[j]) for i, j in idx]
        naive_s = time.perf_counter() - t0
        naive_rate = len(idx) / naive_s
        np.testing.assert_allclose(naive, [grid[i, j] for i, j in idx], atol=1e-4)
        print(f"naive per-pair loop: {len(idx)} pairs in {naive_s:.2f} s -> "
              f"{naive_rate:,.1f} pairs/s; extrapolated sweep time "
              f"{n_pairs / naive_rate:,.0f} s (scores agree to 1e-4)")  # fmt: skip
        ratio = harness_rate / naive_rate
        verdict = "PASS" if ratio >= 20 else "FAIL"
        print(f"speed-up: {ratio:,.0f}x (target >= 20x) {verdict}")



if __name__ == "__main__":
    main()
