"""Built-in evaluator families that live in their own module, one module each.

:mod:`harness.evaluators.families` imports every module of this package when it is imported
(:func:`harness.evaluators.families.discover_families`), so a new built-in family is one file
here calling :func:`~harness.evaluators.families.register_family`, and no list elsewhere names
it. A module here is imported whenever evaluators are listed: it must import no model library
at load (give ``build`` as ``"module:function"`` or import torch inside the build function).
"""
