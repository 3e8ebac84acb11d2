"""Bundled reference evaluators (no hub weights needed).

- ``companion``: the symbolic companion check (scene vs prompt spec, no rendering).
- ``planted``: planted-fragility wrappers with documented, known protocol effects.
- ``models`` and ``configs/*.json``: three tiny open_clip models (a ViT CLIP, a ModifiedResNet
  CLIP, a SigLIP-loss model) trained on the harness's own renders; ``fit`` is their
  optimisation loop (the data and the runs are in :mod:`harness.training`); weights and
  training cards live in ``fixtures/evaluators/``.
- ``specs``: their registry entries.

Nothing here imports torch at import time, nor the renderer at all.
"""
