"""Evaluator Configuration Card v1.0: build, identify and validate (study Appendix C, Table 6).

A card is plain JSON data: the ten Table 6 groups plus ``card_type``, ``schema_version`` and
``card_id``. The id is ``ecc-v1-sha256:<hex>``, the sha256 of the canonical JSON of the card
without ``card_id``, so the same inputs give the same id byte for byte on any machine and any
worker count (the served model ids of a hosted evaluator are part of the content, so a
different served model gives a different id). Cards never hold timestamps, host names or environment values: a ``call_date``
is only recorded when the evaluator spec itself declares an API snapshot date.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path

from harness import __version__
from harness.core.bounded_input import read_json
from harness.core.errors import CardError
from harness.core.fileio import write_json_atomic
from harness.core.hashing import canonical_json, sha256_bytes
from harness.core.numbers import finite_or_none
from harness.core.paths import SCHEMAS
from harness.vocab import metrics as m

CARD_TYPE = "evaluator_configuration_card"
SCHEMA_VERSION = "1.0"
ID_PREFIX = "ecc-v1-sha256:"
NOT_REPORTED = "not_reported"
SCHEMA_FILE = SCHEMAS / "ecc-v1.json"

GROUPS = (
    "schema_and_status",
    "scene_artifact_source",
    "render_protocol",
    "caption_protocol",
    "view_policy",
    "evaluator_identity",
    "score_uncertainty",
    "rank_stability",
    "companion_check",
    "released_or_missing_evidence",
)
ID_RULE = "ecc-v1-sha256 over the canonical JSON (sorted keys, compact, UTF-8) of the card without card_id"
EVIDENCE_KEYS = (
    "frozen_scenes",
    "render_grids",
    "raw_score_files",
    "evaluator_responses",
    "hash_manifest",
)


ROOM_FRAMING = "auto-framed room box; dollhouse walls facing the camera hidden"
OBJECT_FRAMING = "auto-framed on the object's box (any size fills the frame alike); no walls"

def card_id(card: Mapping[str, object]) -> str:
    """``ecc-v1-sha256:<hex>`` over the canonical JSON of ``card`` without its ``card_id``."""
    body = {k: v for k, v in card.items() if k != "card_id"}
    try:
        return ID_PREFIX + sha256_bytes(canonical_json(body))
    except ValueError as exc:  # NaN/Infinity: a card must state not_reported instead
        raise CardError(
            f"card is not canonical JSON: {exc}",
            where="card",
            hint="replace NaN/Infinity with 'not_reported' (build_card does this)",
        ) from exc


@cache
def load_schema(path: Path = SCHEMA_FILE) -> dict[str, object]:
    """The card JSON Schema (``fixtures/schemas/ecc-v1.json``)."""
    try:
        return read_json(Path(path))
    except (OSError, ValueError) as exc:
        raise CardError(f"cannot read the card schema: {exc}", where=path) from exc


def validate_card(card: Mapping[str, object], *, where: str = "card") -> None:
    """Raise :class:`CardError` unless ``card`` validates against schema v1.0 and its id matches.

    The error names the first failing JSON pointer (e.g. ``card#/render_protocol``) and the
    schema's complaint; a wrong id says which id the content hashes to.
    """
    import jsonschema  # light, but only needed when validating

    validator = jsonschema.Draft202012Validator(load_schema())
    errors = sorted(validator.iter_errors(card), key=lambda e: (list(e.absolute_path), e.message))
    if errors:
        err = errors[0]
        pointer = "/" + "/".join(str(p) for p in err.absolute_path)
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        raise CardError(
            f"card does not match schema v{SCHEMA_VERSION}: {err.message}{more}",
            where=f"{where}#{pointer}",
            hint="cards are written by the audit run (reports/<run-id>/cards/); every Table 6 group is required",
        )
    expected = card_id(card)
    if card["card_id"] != expected:
        raise CardError(
            f"card_id {card['card_id']} does not match its content (hashes to {expected})",
            where=f"{where}#/card_id",
            hint="the card was edited after it was issued; rerun the audit to reissue it",
        )


def _clean(value: object) -> object:
    """JSON-safe copy: NaN/inf/None numbers become ``not_reported``; tuples become lists."""
    if isinstance(value, float):
        return value if math.isfinite(value) else NOT_REPORTED
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return _clean(value.item())
    return value


def _number_map(values: Mapping[str, object] | None) -> object:
    if not values:
        return NOT_REPORTED
    return {k: (v if v != NOT_REPORTED else None) for k, v in _clean(dict(values)).items()}


def _or_nr(value: object) -> object:
    cleaned = _clean(value)
    return NOT_REPORTED if cleaned is None else cleaned


def _interval(value: object) -> object:
    """``[lo, hi]`` when both ends are finite numbers, else ``not_reported``."""
    cleaned = _clean(value)
    if isinstance(cleaned, list) and len(cleaned) == 2 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in cleaned
    ):
        return cleaned
    return NOT_REPORTED


def _not_reported_fields(value: object, pointer: str = "") -> Iterator[str]:
    if value == NOT_REPORTED:
        yield pointer or "/"
    elif isinstance(value, Mapping):
        for k in sorted(value):
            yield from _not_reported_fields(value[k], f"{pointer}/{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _not_reported_fields(v, f"{pointer}/{i}")


def _post_processing(c0: Mapping[str, object]) -> str:
    denoise = "denoised" if c0.get("denoise") else "no denoising"
    return f"transparent film; background composited after lighting; {denoise}"


#: Card wording per view policy: (Table 6 ``policy``, selection rule).
VIEW_POLICY_CARD = {
    "single": ("fixed", "the default view scores; other declared views are audited, never "
               "selected per scene (best-view inflation is reported, not used)"),
    "mean4": ("averaged", "every score is the mean of four views at azimuths +0, 90, 180 and 270 "
              "degrees (at the yaw-sweep pitch unless the configuration sets the pitch)"),
    "max4": ("selected", "every score is the best of four views at azimuths +0, 90, 180 and 270 "
             "degrees (at the yaw-sweep pitch unless the configuration sets the pitch), "
             "selected per scene and configuration"),
    "sheet4": ("sheet", "every score is one score of a 2 x 2 sheet of four views at azimuths "
               "+0, 90, 180 and 270 degrees (at the yaw-sweep pitch unless the configuration "
               "sets the pitch)"),
}


def _preset_policy(name: str) -> tuple[str, str, dict[str, object]] | None:
    """Card wording of a ``preset:NAME`` view policy: (``policy``, rule, the preset's
    parameters), else ``None``."""
    if not name.startswith("preset:"):
        return None
    from harness.protocol.presets import get_preset

    p = get_preset(name.removeprefix("preset:"))
    word = "sheet" if p.tiling else "selected" if p.aggregation in ("max", "icosphere_max") else "averaged"
    rule = (f"every score follows protocol preset {p.name} ({p.source}): {len(p.shown_views)} views, "
            f"passes {'+'.join(p.passes)}, " + (f"tiled {p.tiling[0]} x {p.tiling[1]}" if p.tiling
                                                else f"{p.aggregation} over views"))  # fmt: skip
    return word, rule, p.to_dict()


def _view_policy(name: str, views: Sequence[Mapping[str, float]], inflation: object) -> dict[str, object]:
    preset = _preset_policy(name)
    policy, rule = VIEW_POLICY_CARD[name] if preset is None else preset[:2]
    out: dict[str, object] = {
        "policy": policy,
        "declared_views": [
            {"pitch_deg": float(v["pitch_deg"]), "yaw_deg": float(v["yaw_deg"])} for v in views
        ],
        "selection_rule": rule,
        m.BEST_VIEW_INFLATION: _or_nr(inflation),
    }
    if name != "single":  # absent: single, so single-view cards keep their ids
        out["view_rule"] = name
    if preset is not None:  # the preset and its parameters travel with every score
        out["protocol"] = preset[2]
    return out


def build_card(
    *,
    evaluator: Mapping[str, object],
    scenes: Mapping[str, object],
    render: Mapping[str, object],
    captions: Mapping[str, object],
    views: Sequence[Mapping[str, float]],
    stats: Mapping[str, object] | None,
    bootstrap: int,
    seed: int,
    thresholds: Mapping[str, object],
    evidence: Mapping[str, tuple[str, str]],
    known_missing: Sequence[str] = (),
    companion: tuple[str, str] | tuple[str, str, Mapping[str, object]] | None = None,
    baseline_card_id: str | None = None,
    view_policy: str = "single",
    human_agreement: Mapping[str, object] | None = None,
    search: Mapping[str, object] | None = None,
    repeatability: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """Assemble a v1.0 card from plain data and stamp its id.

    ``view_policy`` (``harness.protocol.view_policies.VIEW_POLICIES``): ``single`` writes the card as it
    always was (``policy: fixed``); a multi-view policy sets ``policy`` (``mean4`` averaged,
    ``max4`` selected, ``sheet4`` sheet), its selection rule and ``view_rule`` with its name.

    ``evaluator``: ``evaluator_id``, ``name``, ``checkpoint``, ``identity_sha256``,
    ``instruction``, ``decoding``, ``call_date``, ``prompt_free`` (missing → not_reported),
    optionally ``served_models``: the distinct model ids a hosted evaluator's endpoint reported
    serving (the records' ``served_model`` column), written sorted and only when non-empty.
    ``scenes``: ``dataset``, ``generators``, ``n_scenes``, ``n_prompts``, ``scene_set_sha256``.
    ``render``: ``renderer``, ``c0`` (RenderConfig dict), ``background``, ``declared_levels``
    (factor → levels), ``post_processing``, ``probe_seed``. ``captions``: ``template``,
    ``n_templates``, ``paraphrase_rule``, ``prompt_source``. ``views``: declared poses
    (``pitch_deg``, ``yaw_deg``). ``stats``: the evaluator's entry of the audit summary
    (docs/formats.md "summary.json"), or ``None`` when the run computed none. ``evidence``: for each of
    :data:`EVIDENCE_KEYS`, ``(status, location)``. ``companion``: ``(kind, details)``, optionally
    with the agreement numbers as data (``companion_check.agreement``). ``baseline_card_id``: the card of the
    previous release the run was gated against (``--audit-baseline``), recorded when given.
    ``human_agreement``: the human data and the agreement figures (``--audit-human``,
    :func:`harness.human.audit.card_figures`), recorded when given. ``search``: the profile's
    search beyond the grid (:func:`harness.run.searches.card_search`: space, budget, seed,
    objective, split, confirmed worst configuration), recorded only when a search ran.
    ``repeatability``: the evaluator's repeatability check
    (:func:`harness.run.repeatability.card_repeatability`: largest difference, where, sample,
    batch sizes, tolerance, verdict), recorded when the run measured it.
    """
    from harness.stats.summary import EvaluatorSummary

    s = EvaluatorSummary.from_entry(str(evaluator.get("evaluator_id", "")), stats or {})
    c0 = render["c0"]
    ev = {k: _or_nr(evaluator.get(k)) for k in (
        "evaluator_id", "name", "checkpoint", "identity_sha256", "instruction", "decoding",
        "call_date",
    )}
    ev["prompt_free"] = bool(evaluator.get("prompt_free", False))
    served = sorted(set(evaluator.get("served_models") or ()))
    if served:  # only evaluators whose endpoint reports a model id; local ones keep their bytes
        ev["served_models"] = served
    evidence_group: dict[str, object] = {}
    for key in EVIDENCE_KEYS:
        status, location = evidence.get(key, (NOT_REPORTED, NOT_REPORTED))
        evidence_group[key] = {"status": status, "location": location}
    evidence_group["known_missing"] = sorted(set(known_missing))
    kind, details, *agreement = companion or (NOT_REPORTED, "no geometry-grounded, multi-view or human check in this run")
    body: dict[str, object] = {
        "card_type": CARD_TYPE,
        "schema_version": SCHEMA_VERSION,
        "scene_artifact_source": {
            "dataset": scenes["dataset"],
            "generators": sorted(scenes["generators"]),
            "n_scenes": _or_nr(scenes.get("n_scenes")),
            "n_prompts": _or_nr(scenes.get("n_prompts")),
            "frozen_scene_rule": "scenes are saved once with a sha256 manifest and reused for every "
            "configuration; identity = sha256 of canonical scene JSON plus asset bytes",
            **({"import_conventions": sorted(scenes["import_conventions"])}
               if scenes.get("import_conventions") else {}),
            "provenance": {
                "scene_set_sha256": _or_nr(scenes.get("scene_set_sha256")),
                "scene_identities": "per-record scene_sha256 in the raw score files",
            },
        },
        "render_protocol": {
            "renderer": render["renderer"],
            "camera": {
                "pitch_deg": float(c0["pitch_deg"]),
                "yaw_deg": float(c0["yaw_deg"]),
                "framing": render.get("framing", ROOM_FRAMING),
            },
            "focal_length_mm": float(c0["focal_length_mm"]),
            "resolution_px": int(c0["resolution_px"]),
            "lighting": str(c0["lighting"]),
            "background": str(render["background"]),
            "seeds": {
                "render_seed": int(c0["seed"]),
                "samples": int(c0["samples"]),
                "probe_seed": int(render.get("probe_seed", 0)),
            },
            "post_processing": render.get("post_processing") or _post_processing(c0),
            "declared_levels": {k: list(v) for k, v in sorted(render["declared_levels"].items())},
        },
        "caption_protocol": {
            "template": captions["template"],
            "n_templates": _or_nr(captions.get("n_templates")),
            "paraphrase_rule": captions["paraphrase_rule"],
            "prompt_source": captions["prompt_source"],
            "wording_frozen_before_scoring": True,
        },
        "view_policy": _view_policy(view_policy, views, s.best_view_inflation),
        "evaluator_identity": ev,
        "score_uncertainty": {
            "interval_rule": "percentile prompt bootstrap, 95% pointwise; simultaneous max-t band "
            "for reversals",
            "resampling_unit": "prompt block (generators, evaluators and configurations aligned "
            "within each prompt)",
            "bootstrap_replicates": int(bootstrap),
            "bootstrap_seed": int(seed),
            "comparison_family": "(evaluator, generator pair, protocol) contrasts over the "
            "declared shared configurations",
            "decision_thresholds": _clean(dict(sorted(thresholds.items()))),
            **_looser(thresholds),
            "multiplicity_policy": "reversals are confirmed only when intervals from the "
            "simultaneous band exclude zero in opposite directions",
            "claims_cover": ["scores", "ranks", "top_methods"],
            m.PEAK_RHO: _or_nr(s.peak_rho),
            "peak_rho_ci": _interval(s.peak_rho_ci),
            m.RHO: _number_map(s.rho),
            m.DISPERSION: _number_map(s.dispersion),
            m.DISCRIMINATION: _number_map(s.discrimination),
            # raw: the typed summary reads a missing count as 0, the card says not_reported
            "failed_records": _or_nr((stats or {}).get("failed")),
            m.FAILED_SHARE: _or_nr(s.failed_share),
            **_small_sample(scenes.get("n_prompts")),
            # a card of an evaluator that produced nothing says so instead of looking unmeasured
            "records_status": "no_successful_records" if s.failed_share == 1.0 else "ok",
            # the confirmed evidence level's family-wise intervals (with the bootstrap on)
            **({"confirmation": s.confirmation.to_entry()} if s.confirmation is not None else {}),
        },
        "rank_stability": {
            m.KENDALL_W: _number_map(s.kendall_w),
            m.TOP1_COUNT: _number_map(s.top1_count),
            m.MIN_W: _or_nr(s.min_w),
            m.MAX_TOP1: _or_nr(s.max_top1),
            "winner_changes": NOT_REPORTED if s.max_top1 is None else s.max_top1 > 1,
            "stable_winner": s.envelopes.stable_winner,
        },
        "companion_check": {"kind": kind, "details": details, **({"agreement": agreement[0]} if agreement else {})},
        "released_or_missing_evidence": evidence_group,
    }
    registered = registered_metrics(s.registered, thresholds)
    if registered:  # only with registered statistics shown on cards: other cards keep their ids
        body["registered_metrics"] = registered
    missing = [p for p in _not_reported_fields(body) if not p.startswith("/released_or_missing")]
    body["schema_and_status"] = {
        "card_type": CARD_TYPE,
        "schema_version": SCHEMA_VERSION,
        "evidence_status": "partial" if missing else "complete",
        "not_reported_fields": missing,
        "id_rule": ID_RULE,
        "producer": f"t3d-audit {__version__}",
    }
    if baseline_card_id:
        body["baseline_card_id"] = str(baseline_card_id)
    if human_agreement is not None:  # only with --audit-human: other cards keep their ids
        body[m.HUMAN_AGREEMENT] = dict(human_agreement)
    if search is not None:  # only with a profile's search block: other cards keep their ids
        body["search"] = dict(search)
    if repeatability is not None:
        body["repeatability"] = dict(repeatability)
    body = _clean(body)
    body["card_id"] = card_id(body)
    return body


def _looser(thresholds: Mapping[str, object]) -> dict[str, object]:
    """``{"looser_than_study": {...}}`` when any threshold is looser than the study's (a card
    says so beside its decision thresholds), else nothing (the card stays as it was)."""
    from harness.checks.thresholds import looser_than_study

    looser = looser_than_study(thresholds)
    return {"looser_than_study": looser} if looser else {}


def registered_metrics(
    values: Mapping[str, object], thresholds: Mapping[str, object]
) -> dict[str, object]:
    """The card's ``registered_metrics`` group: every statistic registered with a ``compute``
    (:func:`harness.vocab.metrics.computed_metrics`) that is shown on cards, from ``values``
    (``EvaluatorSummary.registered``: name → value, or key → value for a keyed metric;
    docs/formats.md "summary.json"); empty when none is shown.

    Per metric: ``label``, ``unit``, and for a scalar its ``value`` (``not_reported`` when
    undefined or absent) with its gate; for a keyed metric its ``key`` kind and ``values``:
    key → ``{label, value (null when undefined), gate}``. The gate is the ``threshold`` name
    that applies (none when the metric names none), and when ``thresholds`` (the evaluator's
    effective ones) sets it, ``threshold_value`` and ``passed`` (estimate against the value in
    the threshold's direction; an undefined estimate never passes).
    """
    shown = [spec for spec in m.computed_metrics() if spec.shown_in("card")]
    if not shown:
        return {}
    out: dict[str, object] = {}
    for spec in shown:
        entry: dict[str, object] = {"label": spec.label, "unit": spec.unit}
        raw = values.get(spec.name)
        if spec.key is None:
            entry.update(_gated(spec, None, finite_or_none(raw), thresholds))
            entry["value"] = _or_nr(entry["value"])
        else:
            keyed = raw if isinstance(raw, Mapping) else {}
            entry["key"] = spec.key
            entry["values"] = {
                str(k): {"label": spec.label_of(str(k)),
                         **_gated(spec, str(k), finite_or_none(v), thresholds)}
                for k, v in sorted(keyed.items(), key=lambda kv: str(kv[0]))
            } or NOT_REPORTED
        out[spec.name] = entry
    return out


def _gated(
    spec: m.MetricSpec, key: str | None, value: float | None, thresholds: Mapping[str, object]
) -> dict[str, object]:
    """``{value, [threshold, [threshold_value, passed]]}`` of one value of ``spec``."""
    from harness.checks.assertions import check
    from harness.checks.thresholds import direction
    from harness.stats.summary import threshold_of

    out: dict[str, object] = {"value": value}
    name = threshold_of(spec, key)
    if name is None:
        return out
    out["threshold"] = name
    limit = finite_or_none(thresholds.get(name))
    if limit is not None:
        op = "<=" if direction(name) == "max" else ">="
        out["threshold_value"] = limit
        out["passed"] = check(spec.label_of(key), value, op, limit, threshold_name=name)["passed"]
    return out


def write_card(card: Mapping[str, object], path: str | Path) -> None:
    """Write a card as indented, key-sorted JSON with a trailing newline (stable bytes)."""
    write_json_atomic(path, card)


def _small_sample(n_prompts: object) -> dict[str, object]:
    """``{"small_sample": {...}}`` when the intervals come from fewer prompt blocks than
    :data:`harness.checks.wording.SMALL_SAMPLE_BLOCKS` (every interval on the card is then
    indicative); empty otherwise, so cards of larger runs keep their ids."""
    from harness.checks.wording import SMALL_SAMPLE_BLOCKS, is_small_sample, small_sample_note

    if not is_small_sample(n_prompts):
        return {}
    return {"small_sample": {"prompt_blocks": int(n_prompts), "below": SMALL_SAMPLE_BLOCKS,
                             "note": small_sample_note(n_prompts) + ": every interval on this card "
                             "is indicative"}}


def read_card(path: str | Path) -> dict[str, object]:
    """Read and validate a card file; raises :class:`CardError` naming the file."""
    try:
        card = read_json(Path(path))
    except (OSError, ValueError) as exc:
        raise CardError(f"cannot read card: {exc}", where=path, hint="is this a card JSON file?") from exc
    if not isinstance(card, dict):
        raise CardError("a card must be a JSON object", where=path)
    validate_card(card, where=str(path))
    return card


def read_report_cards(folder: str | Path) -> tuple[list[str], dict[str, dict[str, object]]]:
    """Every card under ``folder/cards/``, read and validated (:func:`read_card`: schema and
    recomputed id), each filed under its own evaluator: one problem line per card that is not,
    and the good cards by file stem (= evaluator id)."""
    from harness.core.errors import AuditError

    problems: list[str] = []
    cards: dict[str, dict[str, object]] = {}
    for path in sorted((Path(folder) / "cards").glob("*.json")):
        try:
            card = read_card(path)
        except AuditError as exc:
            problems.append(str(exc))
            continue
        ev = card["evaluator_identity"]["evaluator_id"]
        if ev != path.stem:
            problems.append(f"cards/{path.name}: card is for evaluator {ev!r}")
        cards[path.stem] = card
    return problems, cards
