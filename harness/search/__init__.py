"""Search beyond the grid (docs/search.md): the continuous protocol space
(``space``), objectives (``objectives``), the batched nevergrad optimiser (``optimiser``),
measurement of points (``evaluate``), the append-only trial log (``trial_log``), held-out
confirmation (``confirm``), the flip region (``flip_region``) and one search end to end
(``run``). Imports nothing at package load."""
