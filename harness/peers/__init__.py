"""The field's published evaluation protocols as named presets (docs/protocols.md).

``presets.py`` declares each protocol (views, lighting, background, resolution, pass, texture,
tiling, aggregation) with its source; ``cameras.py`` turns views into render configurations
(icosphere included); ``view_reduce.py`` and ``tiling.py`` are the per-view reductions;
``measure.py`` scores a scene set under a protocol; ``rank_concordance.py`` compares generator
rankings across presets; ``forensics.py`` finds the protocols consistent with a reported number;
``render_costs.py`` counts and prices the renders of presets and presentation probes.
"""
