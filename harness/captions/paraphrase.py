"""The frozen paraphrase file and the duplicate-collapse rule.

File format (``fixtures/prompts/paraphrases.json``)::

    {"schema": "t3d-paraphrases/1",
     "prompts": {"<prompt_id>": {"original": "...",
                                 "rewrites": [{"text": "...", "meaning_preserved": true},
                                              ...]}}}

At most 10 rewrites per prompt; ``meaning_preserved`` is ``true``, ``false`` or ``null``
(unknown; the key may be omitted). No other keys are allowed.

Levels: ``p0`` is the original prompt, ``pK`` the K-th rewrite (1-based). Collapse rule:
captions are compared after :func:`normalise` (Unicode NFC, casefold, whitespace runs → one
space, trailing periods and surrounding whitespace stripped); among strings with the same
normal form only the first occurrence is scored, the original included (so a rewrite that
only re-capitalizes the original disappears). Levels keep the rewrite's index, so a
collapsed duplicate leaves a gap: p0, p1, p3, ... if rewrite 2 repeated an earlier one.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from harness.core import bounded_input
from harness.core.errors import ProtocolError
from harness.core.paths import FIXTURES

SCHEMA = "t3d-paraphrases/1"
MAX_REWRITES = 10
BUNDLED_PARAPHRASES = FIXTURES / "prompts" / "paraphrases.json"


class ParaphraseError(ProtocolError):
    """The paraphrase file is malformed, or a paraphrase level does not exist."""


@dataclass(frozen=True)
class Rewrite:
    """One rewrite of a prompt; ``meaning_preserved`` is None when not audited."""

    text: str
    meaning_preserved: bool | None = None


@dataclass(frozen=True)
class ParaphraseEntry:
    """A prompt's original text and its (≤ 10) rewrites, in file order."""

    prompt_id: str
    original: str
    rewrites: tuple[Rewrite, ...]

    def text(self, level: str) -> str:
        """The raw prompt string of a level (``p0`` original, ``pK`` rewrite K), uncollapsed."""
        index = _level_index(level, self.prompt_id)
        if index == 0:
            return self.original
        if index > len(self.rewrites):
            raise ParaphraseError(
                f"prompt {self.prompt_id!r} has only {len(self.rewrites)} rewrites, no {level}",
                where=f"paraphrase level {level}",
            )
        return self.rewrites[index - 1].text


def normalise(text: str) -> str:
    """Normal form for the collapse rule: NFC, casefold, single spaces, no trailing period."""
    folded = " ".join(unicodedata.normalize("NFC", text).casefold().split())
    return folded.rstrip(".").rstrip()


def _level_index(level: str, prompt_id: str) -> int:
    if (
        isinstance(level, str)
        and level.startswith("p")
        and level[1:].isdigit()
        and str(int(level[1:])) == level[1:]
        and int(level[1:]) <= MAX_REWRITES
    ):
        return int(level[1:])
    raise ParaphraseError(
        f"unknown paraphrase level {level!r} for prompt {prompt_id!r}",
        where="paraphrase level",
        hint=f"use p0 (original) .. p{MAX_REWRITES}",
    )


def distinct_captions(
    entry: ParaphraseEntry, template_id: str | None = None
) -> list[tuple[str, str]]:
    """``[(level, caption), ...]`` after the collapse rule, p0 first, in level order.

    Without ``template_id`` the caption is the prompt string itself; with it, the string is
    wrapped by that caption template (the study scores paraphrases under the default one).
    The surviving text is the first occurrence's, unnormalised.
    """
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for index, text in enumerate((entry.original, *(r.text for r in entry.rewrites))):
        key = normalise(text)
        if key in seen:
            continue
        seen.add(key)
        out.append((f"p{index}", text))
    if template_id is not None:
        from harness.captions import realize

        out = [(level, realize(template_id, text)) for level, text in out]
    return out


def distinct_levels(entry: ParaphraseEntry) -> tuple[str, ...]:
    """The levels that survive the collapse rule (p0 always first)."""
    return tuple(level for level, _ in distinct_captions(entry))


# ---------------------------------------------------------------------------------------------
# Loading


def _fail(what: str, path: Path | str, pointer: str, hint: str | None = None) -> ParaphraseError:
    return ParaphraseError(what, where=f"{path}#{pointer or '/'}", hint=hint)


def _nonempty_str(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _parse_entry(prompt_id: str, raw: object, path: Path | str) -> ParaphraseEntry:
    ptr = f"/prompts/{prompt_id}"
    if not isinstance(raw, dict):
        raise _fail("prompt entry must be an object", path, ptr)
    extra = set(raw) - {"original", "rewrites"}
    if extra:
        raise _fail(f"unknown field(s) {sorted(extra)}", path, ptr, "allowed: original, rewrites")
    if "original" not in raw or "rewrites" not in raw:
        raise _fail("missing 'original' or 'rewrites'", path, ptr)
    if not _nonempty_str(raw["original"]):
        raise _fail("'original' must be a non-empty string", path, f"{ptr}/original")
    rewrites = raw["rewrites"]
    if not isinstance(rewrites, list):
        raise _fail("'rewrites' must be a list", path, f"{ptr}/rewrites")
    if len(rewrites) > MAX_REWRITES:
        raise _fail(
            f"{len(rewrites)} rewrites, at most {MAX_REWRITES} allowed", path, f"{ptr}/rewrites"
        )
    parsed: list[Rewrite] = []
    for i, item in enumerate(rewrites):
        iptr = f"{ptr}/rewrites/{i}"
        if not isinstance(item, dict):
            raise _fail("rewrite must be an object {text, meaning_preserved}", path, iptr)
        extra = set(item) - {"text", "meaning_preserved"}
        if extra:
            raise _fail(
                f"unknown field(s) {sorted(extra)}", path, iptr, "allowed: text, meaning_preserved"
            )
        if not _nonempty_str(item.get("text")):
            raise _fail("'text' must be a non-empty string", path, f"{iptr}/text")
        flag = item.get("meaning_preserved")
        if flag is not None and not isinstance(flag, bool):
            raise _fail(
                "'meaning_preserved' must be true, false or null", path, f"{iptr}/meaning_preserved"
            )
        parsed.append(Rewrite(item["text"], flag))
    return ParaphraseEntry(prompt_id, raw["original"], tuple(parsed))


def parse_paraphrases(
    data: object, *, path: Path | str = "<paraphrases>"
) -> dict[str, ParaphraseEntry]:
    """Check the JSON value of a paraphrase file; prompt id → entry, in file order."""
    if not isinstance(data, dict):
        raise _fail("paraphrase file must be a JSON object", path, "")
    if data.get("schema") != SCHEMA:
        raise _fail(f"schema must be {SCHEMA!r}, got {data.get('schema')!r}", path, "/schema")
    extra = set(data) - {"schema", "prompts"}
    if extra:
        raise _fail(f"unknown field(s) {sorted(extra)}", path, "", "allowed: schema, prompts")
    prompts = data.get("prompts")
    if not isinstance(prompts, dict):
        raise _fail("'prompts' must be an object: prompt id → entry", path, "/prompts")
    out: dict[str, ParaphraseEntry] = {}
    for prompt_id, raw in prompts.items():
        if not prompt_id.strip():
            raise _fail("empty prompt id", path, "/prompts")
        out[prompt_id] = _parse_entry(prompt_id, raw, path)
    return out


def load_paraphrases(path: Path | str = BUNDLED_PARAPHRASES) -> Mapping[str, ParaphraseEntry]:
    """Read and check a paraphrase file. Errors: :class:`ParaphraseError` naming the pointer."""
    path = Path(path)
    try:
        raw = bounded_input.read_bytes(path, what="paraphrase file")
    except OSError as exc:
        raise _fail(f"cannot read paraphrase file: {exc.strerror or exc}", path, "") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(f"not UTF-8 (byte {exc.start})", path, "", "save the file as UTF-8") from exc
    try:
        data = bounded_input.loads(text, parse_constant=_reject_constant)
    except bounded_input.JsonDepthError as exc:
        raise _fail(exc.what, path, "", exc.hint) from exc
    except json.JSONDecodeError as exc:
        raise _fail(
            f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", path, ""
        ) from exc
    except ValueError as exc:
        raise _fail(str(exc), path, "") from exc
    return parse_paraphrases(data, path=path)


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"non-standard JSON constant {name}")


def bundled_file() -> Path | None:
    """The bundled paraphrase file, ``None`` where it is absent (a trimmed install)."""
    path = Path(BUNDLED_PARAPHRASES)
    return path if path.is_file() else None


def bundled_captions(prompt_id: str, prompt: str, template_id: str) -> list[tuple[str, str]] | None:
    """``[(level, caption)]`` of the bundled paraphrases of ``prompt_id`` after the
    duplicate-collapse rule, wrapped by ``template_id``.

    ``None`` when the bundled file is absent, has no entry for ``prompt_id``, or its entry is
    for another prompt text (scenes imported from elsewhere that reuse an id): the pipeline
    then records no paraphrase rows for that prompt rather than score foreign rewrites.
    """
    path = bundled_file()
    if path is None:
        return None
    entry = load_paraphrases(path).get(prompt_id)
    if entry is None or normalise(entry.original) != normalise(prompt):
        return None
    return distinct_captions(entry, template_id)
