"""Typed errors. Each says what went wrong, where (file, JSON pointer, field) and what to do.

Every error the harness raises on bad input derives from :class:`AuditError`, so callers
(the CLI, the plugin) can report it cleanly instead of showing a traceback.
"""

from __future__ import annotations

from pathlib import Path


class AuditError(Exception):
    """Base class: ``what`` happened, ``where`` (file/pointer/field), ``hint`` what to do."""

    def __init__(self, what: str, *, where: str | Path | None = None, hint: str | None = None):
        self.what = what
        self.where = str(where) if where is not None else None
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        parts = []
        if self.where:
            parts.append(f"{self.where}: ")
        parts.append(self.what)
        if self.hint:
            parts.append(f" ({self.hint})")
        return "".join(parts)


class SceneError(AuditError):
    """A scene file or scene set is invalid. ``pointer`` is a JSON pointer into the file."""

    def __init__(
        self,
        what: str,
        *,
        path: str | Path | None = None,
        pointer: str = "",
        hint: str | None = None,
    ):
        self.path = str(path) if path is not None else None
        self.pointer = pointer
        where = f"{self.path or '<scene>'}#{pointer or '/'}"
        super().__init__(what, where=where, hint=hint)


class ManifestError(SceneError):
    """A scene set does not match its sha256 manifest (the frozen-scene rule)."""


class ImportError_(SceneError):
    """An external scene (sceneState JSON, glTF/GLB) cannot be imported."""


class ProtocolError(AuditError):
    """Unknown factor, level, profile or template."""


class RecordsError(AuditError):
    """A raw score record table is invalid (schema, values, duplicates)."""


class RenderError(AuditError):
    """A render failed. Subclasses name the failure kind of the taxonomy."""


class EvaluatorError(AuditError):
    """An evaluator cannot be selected, loaded or run."""


class CardError(AuditError):
    """An Evaluator Configuration Card or a report manifest is invalid."""


class HumanDataError(AuditError):
    """A human ratings or votes table is invalid, or does not join with the scores."""
