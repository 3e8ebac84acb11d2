"""Cheap stand-ins for testing audits without Blender or torch (used by the harness's tests).

* :class:`BoxRasterizer`: a numpy renderer drawing each object's box footprint, projected
  with the camera's pitch/yaw/focal length, shaded by the lighting level; transparent film.
  Images are 1/8 of the requested resolution, so a render costs microseconds.
* :class:`TinySpec` / :class:`TinyEvaluator`: deterministic numpy "alignment" scores from
  colour statistics of the image and a hashed bag of words of the caption; an embedding
  variant (``score_grid``), a pairwise variant and a prompt-free control.
* :func:`write_tiny_scene_set`: a valid scene set (scene files, assets, sha256 manifest).

Register them from a ``conftest.py`` with the plugin hooks::

    def pytest_audit_renderer(config, cache_dir):
        return BoxRasterizer()

    def pytest_audit_evaluators(config):
        return [TinySpec("tiny-grid"), TinySpec("tiny-pairs", grid=False)]

Environment switches for crash tests: ``T3D_TINY_KILL_AFTER=N`` makes a process exit hard
(``os._exit``) at its N-th scoring call, simulating a worker killed mid-run;
``T3D_TINY_LOG=<dir>`` appends one line per scored pair batch and per render to files there.
"""

from __future__ import annotations

import math
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.core.fileio import write_json_atomic
from harness.core.hashing import sha256_json

LIGHT_GAIN = {
    "city": 1.0, "courtyard": 0.95, "forest": 0.8, "interior": 0.9, "night": 0.45,
    "studio": 1.05, "sunrise": 0.85, "sunset": 0.75,
}


def _colour(label: str) -> np.ndarray:
    h = zlib.crc32(label.encode())
    return np.array([(h >> 0) & 255, (h >> 8) & 255, (h >> 16) & 255], dtype=np.float64)


def _log(kind: str, text: str) -> None:
    folder = os.environ.get("T3D_TINY_LOG")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        with open(Path(folder) / f"{kind}.log", "a", encoding="utf-8") as handle:
            handle.write(text + "\n")


class BoxRasterizer:
    """Numpy renderer of scene boxes (see module docstring). ``identity`` keys caches."""

    identity = "tiny-box-rasterizer/1"

    def render(self, scene: object, scene_root: Path, identity: str, cfg: object) -> np.ndarray:
        """RGBA ``(n, n, 4)`` uint8 with ``n = resolution_px // 8``; alpha 0 off the objects."""
        n = max(8, int(cfg.resolution_px) // 8)
        rgba = np.zeros((n, n, 4), dtype=np.uint8)
        half = max(scene.room.size) / 2.0 * (50.0 / float(cfg.focal_length_mm)) ** 0.5
        pitch = math.radians(float(cfg.pitch_deg))
        yaw = math.radians(float(cfg.yaw_deg))
        gain = LIGHT_GAIN.get(str(cfg.lighting), 1.0)
        # paint tall objects last so they cover lower ones
        for obj in sorted(scene.objects, key=lambda o: (o.position[2] + o.size[2], o.id)):
            sx, sy, sz = obj.size
            corners = []
            for dx in (-sx / 2, sx / 2):
                for dy in (-sy / 2, sy / 2):
                    for z in (obj.position[2], obj.position[2] + sz):
                        a = math.radians(obj.yaw_deg)
                        x = obj.position[0] + dx * math.cos(a) - dy * math.sin(a)
                        y = obj.position[1] + dx * math.sin(a) + dy * math.cos(a)
                        xr = x * math.cos(yaw) - y * math.sin(yaw)
                        yr = x * math.sin(yaw) + y * math.cos(yaw)
                        v = yr * math.cos(pitch) + z * math.sin(pitch)
                        corners.append((xr, v))
            pts = np.array(corners)
            lo = np.floor((pts.min(axis=0) + half) / (2 * half) * n).astype(int)
            hi = np.ceil((pts.max(axis=0) + half) / (2 * half) * n).astype(int)
            x0, y0 = np.clip(lo, 0, n)
            x1, y1 = np.clip(hi, 0, n)
            if x1 <= x0 or y1 <= y0:
                continue
            shade = np.clip(_colour(obj.label) * gain * (0.8 + 0.2 * math.cos(pitch)), 0, 255)
            rgba[n - y1 : n - y0, x0:x1, :3] = shade.astype(np.uint8)
            rgba[n - y1 : n - y0, x0:x1, 3] = 255
        _log("renders", f"{scene.id} {cfg.key[:12]}")
        return rgba


def _text_vector(text: str, dim: int = 8) -> np.ndarray:
    vec = np.zeros(dim)
    for word in text.lower().replace(":", " ").split():
        vec[zlib.crc32(word.encode()) % dim] += 1.0
    return vec


def _image_vector(image: np.ndarray, dim: int = 8) -> np.ndarray:
    img = image.astype(np.float64) / 255.0
    h = img.shape[0]
    feats = [img[..., c].mean() for c in range(3)]
    feats += [img[: h // 2].mean(), img[h // 2 :].mean(), img.std()]
    feats += [float((img.sum(axis=2) < 2.9).mean()), float(img[..., 0].std())]
    return np.asarray(feats[:dim])


class TinyEvaluator:
    """Scores = 2.5 × cosine(image features, caption features) (prompt-free: image features only)."""

    def __init__(self, spec: TinySpec):
        self.spec = spec

    def _one(self, image: np.ndarray, caption: str) -> float:
        iv = _image_vector(image)
        if not self.spec.needs_text:
            return float(iv.mean())
        tv = _text_vector(caption)
        denom = float(np.linalg.norm(iv) * np.linalg.norm(tv))
        return 2.5 * max(float(iv @ tv) / denom, 0.0) if denom else 0.0

    def score(self, images: Sequence[np.ndarray], captions: Sequence[str]) -> list[object]:
        from harness.evaluators.base import ScoreResult

        _maybe_die()
        _log("scores", f"{self.spec.id} pairs {len(images)}")
        out = []
        for image, caption in zip(images, captions, strict=True):
            if self.spec.fail_all:
                out.append(ScoreResult.failed("HTTP 503: service unavailable"))
            elif self.spec.fail_word and self.spec.fail_word in caption:
                out.append(ScoreResult.failed(f"refused caption containing {self.spec.fail_word!r}"))
            else:
                out.append(ScoreResult.ok(self._one(image, caption)))
        return out

    def close(self) -> None:
        pass


class TinyGridEvaluator(TinyEvaluator):
    """The embedding variant: scores whole (images × captions) grids."""

    def score_grid(self, images: Sequence[np.ndarray], captions: Sequence[str]) -> np.ndarray:
        _maybe_die()
        _log("scores", f"{self.spec.id} grid {len(images)}x{len(captions)}")
        return np.array([[self._one(im, c) for c in captions] for im in images], dtype=np.float64)


_CALLS = [0]


def _maybe_die() -> None:
    _CALLS[0] += 1
    kill_after = os.environ.get("T3D_TINY_KILL_AFTER")
    if kill_after and _CALLS[0] >= int(kill_after):
        os._exit(3)  # simulate a worker killed mid-run: no cleanup, no report


@dataclass(frozen=True)
class TinySpec:
    """A spec-shaped tiny evaluator (``grid``: embedding variant; ``needs_text=False``: control)."""

    id: str
    grid: bool = True
    needs_text: bool = True
    fail_word: str = ""
    version: int = 1
    fail_all: bool = False  # every score fails, as a hosted judge that is down

    def identity(self) -> dict[str, object]:
        extra = {"fail_all": True} if self.fail_all else {}
        return extra | {
            "id": self.id,
            "family": "tiny",
            "model_name": f"tiny numpy evaluator ({'grid' if self.grid else 'pairs'})",
            "checkpoint": f"tiny-v{self.version}",
            "needs_text": self.needs_text,
            "fail_word": self.fail_word,
        }

    @property
    def identity_hash(self) -> str:
        return sha256_json(self.identity())

    def build(self, device: str = "auto", batch_size: int = 32) -> TinyEvaluator:
        _log("builds", self.id)
        return TinyGridEvaluator(self) if self.grid else TinyEvaluator(self)


# ------------------------------------------------------------------------------ scene set

_ROOMS = {
    "p01": ("a bedroom with a bed, a nightstand and a lamp", ["bed", "nightstand", "lamp", "rug"]),
    "p02": ("a living room with a sofa and a coffee table", ["sofa", "coffee_table", "armchair", "tv"]),
    "p03": ("a small office with a desk and a chair", ["desk", "office_chair", "bookshelf", "plant"]),
    "p04": ("a dining room with a table and a chair", ["table", "chair", "cabinet", "lamp"]),
}


def _scene_doc(generator: str, gi: int, prompt_id: str) -> dict[str, object]:
    prompt, labels = _ROOMS[prompt_id]
    rng = np.random.default_rng(zlib.crc32(f"{generator}/{prompt_id}".encode()))
    keep = labels[: 2 + gi % 3]
    objects = []
    for k, label in enumerate(keep):
        size = [round(0.4 + 0.3 * rng.random() + 0.2 * (k == 0), 3) for _ in range(2)]
        height = round(0.3 + 0.8 * rng.random(), 3)
        pos = [round(float(rng.uniform(-1.2, 1.2)), 3), round(float(rng.uniform(-1.2, 1.2)), 3), 0.0]
        objects.append(
            {
                "id": f"o{k}",
                "label": label,
                "asset": f"assets/{label}_a.obj",
                "position": pos,
                "yaw_deg": float(int(rng.integers(0, 4)) * 90),
                "size": [size[0], size[1], height],
                "candidates": [
                    {"asset": f"assets/{label}_a.obj", "retrieval_score": 0.9},
                    {"asset": f"assets/{label}_b.obj", "retrieval_score": 0.2},
                ],
            }
        )
    return {
        "schema": "t3d-scene/1",
        "id": f"{generator}-{prompt_id}",
        "generator": generator,
        "prompt_id": prompt_id,
        "prompt": prompt,
        "prompt_source": "tiny test prompts",
        "room": {"size": [4.0, 4.0], "wall_height": 2.5},
        "objects": objects,
    }


def write_tiny_scene_set(
    root: Path, generators: Sequence[str] = ("g1", "g2", "g3"), prompts: Sequence[str] = ("p01", "p02")
) -> Path:
    """Write a valid scene set (scenes, OBJ assets, manifest.json) under ``root``."""
    from harness.scenes.set_manifest import build_manifest, write_manifest

    root = Path(root).resolve()
    (root / "assets").mkdir(parents=True, exist_ok=True)
    (root / "scenes").mkdir(parents=True, exist_ok=True)
    paths = []
    for gi, generator in enumerate(generators):
        for prompt_id in prompts:
            doc = _scene_doc(generator, gi, prompt_id)
            for obj in doc["objects"]:
                for cand in obj["candidates"]:
                    asset = root / cand["asset"]
                    if not asset.exists():
                        asset.write_text(f"# {cand['asset']}\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
            path = root / "scenes" / f"{doc['id']}.json"
            write_json_atomic(path, doc, indent=1, ensure_ascii=True)
            paths.append(path)
    write_manifest(root, build_manifest(root, paths))
    return root
