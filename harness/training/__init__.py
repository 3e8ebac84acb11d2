"""Training of the bundled reference evaluators (``t3d-audit train-reference``).

- ``data``: the training-set recipe, rendered through the harness renderer;
- ``train``: one run per model: the optimisation loop
  (:mod:`harness.evaluators.reference.fit`, the only torch code), then the training card;
- ``checks``: the frozen-set probe check recorded on the cards.

This package may import the renderer and the evaluators; it never imports torch, and nothing
under :mod:`harness.evaluators` imports it.
"""
