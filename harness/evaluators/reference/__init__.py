"""Bundled reference evaluators (no hub weights needed).

- ``companion``: the symbolic companion check (scene vs prompt spec, no rendering).
- ``planted``: planted-fragility wrappers with documented, known protocol effects.
- ``configs/*.json``, ``data``, ``train``: three tiny open_clip models (a ViT CLIP, a
  ModifiedResNet CLIP, a SigLIP-loss model) trained on the harness's own renders; weights and
  training cards live in ``fixtures/evaluators/``.
- ``specs``: their registry entries.

Nothing here imports torch at import time.
"""
