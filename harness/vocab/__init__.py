"""The core vocabulary, each concept declared once: metrics and thresholds, factors, probes.

Every module that names a statistic, a factor or a probe derives what it needs from these
registries (``metrics.py``, ``factors.py``, ``probes.py``; the generic table is
``registry_type.py``: ``Registry[T]``, the one table shape of every concept, evaluator families
and specs included, and ``Lazy``, the one ``"module:function"`` reference), read live, so
extending the vocabulary is one registry row plus the code that gives the new entry its
meaning. This package imports only ``harness.core.errors`` (and, lazily,
the caption grammar for the template levels and the probe edit modules on first use).
"""
