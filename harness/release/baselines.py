"""Inputs and outputs of the release gate (the statistics are ``harness.release.comparison``).

* :func:`load_release`: a report directory (``scores/*.csv|parquet`` and ``cards/*.json``),
  a directory of score files, or one score file → records and card ids. A directory with
  ``scores/`` (a report or saved baseline) is verified first (:func:`release_problems`:
  manifest shape and hashes, every card's schema and recomputed id); bare score files carry no
  provenance and are marked unverified.
* :func:`load_margins`: ``[tool.t3d-audit.compare]`` of a ``pyproject.toml``.
* :func:`render_markdown` / :func:`comparison_document`: the outputs, naming every metric
  with its factor or probe.
* :func:`save_baseline`: store a report's raw scores, cards and manifest as a named baseline
  (``baselines/<name>/``, docs/release-gate.md), the next release's ``BASELINE``.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness.core.bounded_input import read_json, read_toml
from harness.core.errors import AuditError
from harness.protocol.records import CSV_SUFFIXES, PARQUET_SUFFIXES
from harness.release.comparison import (
    INCONCLUSIVE,
    REGRESSION,
    CompareError,
    Comparison,
    MetricComparison,
)
from harness.release.margins import Margins
from harness.vocab.metrics import MOVEMENT, PEAK_MOVEMENT

SCORE_SUFFIXES = (*CSV_SUFFIXES, *PARQUET_SUFFIXES)
BASELINES_DIR = "baselines"


@dataclass(frozen=True)
class Release:
    """One side of a comparison: its records, where they came from and its card ids."""

    label: str
    records: pd.DataFrame
    files: tuple[Path, ...]
    card_ids: dict[str, str] = field(default_factory=dict)
    verified: bool = False  # read from a directory whose manifest and cards verified


#: The files ``compare --out`` writes (``html`` adds them to a report's manifest).
COMPARE_OUTPUTS = ("comparison.json", "comparison.md")
#: At most this many verification problems are named in the error (then a count of the rest).
MAX_TRUST_PROBLEMS = 3


def release_problems(folder: Path) -> list[str]:
    """Why a report or saved-baseline directory (one with ``scores/``) cannot be trusted, one
    line per problem (empty: it verifies).

    ``manifest.json`` must exist and be sound (``harness.cards.provenance``). In a full report
    (with ``summary.json``) every output must match its sha256 and nothing may be unlisted, as
    ``t3d-audit validate`` checks; a saved baseline (``save_baseline``: only ``scores/``,
    ``cards/`` and the manifest) must hold exactly the manifest's ``scores/`` and ``cards/``
    entries, each with its listed sha256. Every card must pass its schema and its recomputed
    ``card_id`` and be filed under its evaluator; every score file must have a card. Hashes only
    show nothing changed since the manifest was written: ``t3d-audit validate --deep``
    recomputes the cards from the scores.
    """
    from harness.cards import read_report_cards
    from harness.cards.provenance import (
        load_manifest,
        manifest_problems,
        output_entries,
        verify_outputs,
    )

    try:
        manifest = load_manifest(folder)
    except AuditError as exc:
        return [str(exc)]
    shape = manifest_problems(manifest)
    if shape:
        return shape
    if (folder / "summary.json").is_file():
        # compare --out REPORT writes these two before `t3d-audit html` lists them; they are
        # outputs of a comparison, never read by one
        later = {f"{name}: not listed in manifest.json" for name in COMPARE_OUTPUTS}
        problems = [p for p in verify_outputs(folder, manifest) if p not in later]
    else:
        kept = ("scores/", "cards/")
        listed = {e["path"]: e["sha256"] for e in manifest["outputs"] if e["path"].startswith(kept)}
        on_disk = {e["path"]: e["sha256"] for e in output_entries(folder) if e["path"].startswith(kept)}
        problems = [f"{rel}: listed in manifest.json but missing" for rel in sorted(set(listed) - set(on_disk))]
        problems += [f"{rel}: not listed in manifest.json" for rel in sorted(set(on_disk) - set(listed))]
        problems += [
            f"{rel}: sha256 {on_disk[rel][:12]}… differs from manifest {listed[rel][:12]}…"
            for rel in sorted(set(listed) & set(on_disk)) if listed[rel] != on_disk[rel]
        ]
    card_problems, cards = read_report_cards(folder)
    problems += card_problems
    for path in _score_files(folder / "scores"):
        if path.stem not in cards:
            problems.append(f"scores/{path.name}: no card (cards/{path.stem}.json)")
    return problems


def _score_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in SCORE_SUFFIXES)


def _card_ids(folder: Path) -> dict[str, str]:
    """Evaluator id → card id of every readable card in ``folder`` (unreadable ones skipped:
    the card id is provenance for the output, not an input of the comparison)."""
    out: dict[str, str] = {}
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.json")):
        try:
            card = read_json(path)
        except (OSError, ValueError):
            continue
        cid = card.get("card_id") if isinstance(card, dict) else None
        ev = (card.get("evaluator_identity") or {}).get("evaluator_id") if isinstance(card, dict) else None
        if isinstance(cid, str):
            out[str(ev) if isinstance(ev, str) else path.stem] = cid
    return out


def load_release(path: str | Path, *, role: str) -> Release:
    """Read one release. ``role`` ("baseline"/"candidate") names it in errors.

    A directory with ``scores/`` is a report (or saved baseline) directory; any other
    directory must hold score files itself. Raises :class:`CompareError` or
    :class:`harness.core.errors.RecordsError`.
    """
    from harness.protocol.records import read_records

    path = Path(path)
    verified = False
    if path.is_dir():
        scores = path / "scores"
        files = _score_files(scores if scores.is_dir() else path)
        if scores.is_dir() and files:
            problems = release_problems(path)
            if problems:
                more = len(problems) - MAX_TRUST_PROBLEMS
                raise CompareError(
                    f"the {role} does not verify: " + "; ".join(problems[:MAX_TRUST_PROBLEMS])
                    + (f"; and {more} more" if more > 0 else ""),
                    where=str(path),
                    hint=f"run `t3d-audit validate {path}`; compare only releases whose "
                    "manifest and cards verify",
                )
            verified = True
        cards = _card_ids(path / "cards")
        if not files:
            raise CompareError(
                f"no score files (*.csv, *.parquet) in the {role}",
                where=str(scores if scores.is_dir() else path),
                hint="pass a report directory (with scores/) or a score file",
            )
    elif path.is_file():
        if path.suffix.lower() not in SCORE_SUFFIXES:
            raise CompareError(
                f"the {role} is not a score file or report directory",
                where=str(path),
                hint="use a report directory, or a .csv / .parquet score file",
            )
        files, cards = [path], {}
    else:
        raise CompareError(f"the {role} does not exist", where=str(path), hint="check the path")
    frames = [read_records(f) for f in files]
    records = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return Release(str(path), records, tuple(files), cards, verified)


def parse_pairs(items: Sequence[str] | None) -> list[tuple[str, str]]:
    """``["clip-v1=clip-v2"]`` → ``[("clip-v1", "clip-v2")]`` (``--pair``)."""
    out = []
    for item in items or ():
        b, sep, c = str(item).partition("=")
        if not sep or not b.strip() or not c.strip():
            raise CompareError(f"expected BASE_ID=CAND_ID, got {item!r}", where="--pair")
        out.append((b.strip(), c.strip()))
    return out


def load_margins(pyproject: str | Path | None, *, required: bool = False) -> Margins:
    """Margins from ``[tool.t3d-audit.compare]`` of ``pyproject`` (none → defaults only).

    ``required`` (a file the user named, ``compare --config``): a missing file is an
    :class:`AuditError`, never a silent fall-back to the default margins."""
    if pyproject is None:
        return Margins()
    path = Path(pyproject)
    if not path.is_file():
        if required:
            raise AuditError("config file not found", where=str(path),
                             hint="name an existing pyproject.toml, or omit --config")
        return Margins()
    import tomllib

    try:
        data = read_toml(path)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AuditError(f"cannot read [tool.t3d-audit.compare]: {exc}", where=str(path)) from exc
    table = data.get("tool", {}).get("t3d-audit", {}).get("compare")
    return Margins.from_table(table, where=f"{path}: [tool.t3d-audit.compare]")


def unpaired(
    baseline: Sequence[str], candidate: Sequence[str], pairs: Sequence[tuple[str, str]]
) -> dict[str, list[str]]:
    """Evaluators present on only one side and in no pair: ``{"baseline": [...], "candidate":
    [...]}`` (sorted). Such an evaluator was dropped from the comparison; unless the user allows
    it (``--allow-unpaired``) it fails the gate."""
    b, c = set(baseline), set(candidate)
    paired_b, paired_c = {p[0] for p in pairs}, {p[1] for p in pairs}
    return {"baseline": sorted(b - c - paired_b), "candidate": sorted(c - b - paired_c)}


def exit_code(
    comparisons: Sequence[Comparison],
    *,
    fail_on_inconclusive: bool = False,
    unpaired_evaluators: dict[str, list[str]] | None = None,
) -> int:
    """0 without a confirmed regression, 1 with one (or with an inconclusive metric when
    ``fail_on_inconclusive``, or with an unpaired evaluator in ``unpaired_evaluators``)."""
    bad = {REGRESSION, INCONCLUSIVE} if fail_on_inconclusive else {REGRESSION}
    if unpaired_evaluators and any(unpaired_evaluators.values()):
        return 1
    return int(any(m.verdict in bad for c in comparisons for m in c.metrics))


#: The compared metrics a gate line names first (:mod:`harness.stats.movement`).
HEADLINE_KINDS = frozenset({MOVEMENT, PEAK_MOVEMENT})


def gate_line(
    comparisons: Sequence[Comparison],
    *,
    fail_on_inconclusive: bool = False,
    unpaired_evaluators: dict[str, list[str]] | None = None,
) -> str:
    """The comparison's verdict in one line, naming what regressed: each regressed metric with
    its subject (the factor, probe or block), its change and interval, protocol movement first,
    e.g. ``gate FAIL: v2 regression on movement[lighting] +4.26 [0.85, 7.67] (margin 0.5)``; or
    why it passed."""

    def named(m: MetricComparison, evaluator: str) -> str:
        what = f"{m.kind}[{m.subject}]" if m.subject else m.kind
        lo, hi = m.ci
        return f"{evaluator} {m.verdict} on {what} {m.difference:+.3g} [{lo:.3g}, {hi:.3g}] (margin {m.margin:g})"

    bad = {REGRESSION, INCONCLUSIVE} if fail_on_inconclusive else {REGRESSION}
    # the headline first: movement is what says which factor got worse, whatever the spread
    flagged = [(m, c.candidate_evaluator) for c in comparisons for m in c.metrics if m.verdict in bad]
    flagged.sort(key=lambda pair: pair[0].kind not in HEADLINE_KINDS)
    found = [named(m, ev) for m, ev in flagged]
    left_out = [ev for side in (unpaired_evaluators or {}).values() for ev in side]
    if left_out:
        found.append(f"{', '.join(left_out)} not compared (present on one side only)")
    from harness.checks.wording import is_small_sample, small_sample_note

    small = min((c.n_prompts for c in comparisons if is_small_sample(c.n_prompts)), default=None)
    indicative = "" if small is None else f"; indicative ({small_sample_note(small)})"
    if any(c.evidence == "descriptive" for c in comparisons):
        indicative += "; on descriptive evidence (point differences against the margins)"
    if found:
        more = f" (+{len(found) - 3} more)" if len(found) > 3 else ""
        return "gate FAIL: " + "; ".join(found[:3]) + more + indicative
    counts = Counter(m.verdict for c in comparisons for m in c.metrics)
    told = ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items()))
    return f"gate PASS: no confirmed regression ({told or 'no metric compared'}){indicative}"


def comparison_document(
    comparisons: Sequence[Comparison],
    baseline: Release,
    candidate: Release,
    *,
    fail_on_inconclusive: bool = False,
    unpaired_evaluators: dict[str, list[str]] | None = None,
    allow_unpaired: bool = False,
) -> dict[str, object]:
    """The JSON document of a comparison run (``comparison.json``). ``unpaired_evaluators``
    (:func:`unpaired`) fail the gate unless ``allow_unpaired``."""
    found = unpaired_evaluators or {"baseline": [], "candidate": []}
    gating = None if allow_unpaired else found
    pairs = []
    for c in comparisons:
        entry = c.to_dict()
        entry["baseline_card_id"] = baseline.card_ids.get(c.baseline_evaluator)
        entry["candidate_card_id"] = candidate.card_ids.get(c.candidate_evaluator)
        pairs.append(entry)
    return {
        "baseline": baseline.label,
        "candidate": candidate.label,
        "exit_code": exit_code(
            comparisons, fail_on_inconclusive=fail_on_inconclusive, unpaired_evaluators=gating
        ),
        "fail_on_inconclusive": fail_on_inconclusive,
        "allow_unpaired": allow_unpaired,
        "unpaired": found,
        "verified": {"baseline": baseline.verified, "candidate": candidate.verified},
        "pairs": pairs,
    }


def _fmt(x: float | None, digits: int = 4) -> str:
    return "—" if x is None else f"{x:.{digits}g}" if abs(x) < 1e4 else f"{x:.3e}"


def render_markdown(document: dict[str, object]) -> str:
    """Markdown of :func:`comparison_document`: one table per evaluator pair."""
    lines = [
        "# Release comparison",
        "",
        f"- baseline: `{document['baseline']}`",
        f"- candidate: `{document['candidate']}`",
    ]
    for side in ("baseline", "candidate"):
        if not document["verified"][side]:
            lines.append(f"- {side}: bare score file(s), no manifest or cards: unverified")
    for side in ("baseline", "candidate"):
        if document["unpaired"][side]:
            what = "allowed (--allow-unpaired)" if document["allow_unpaired"] else "fails the gate"
            lines.append(f"- only in the {side}, not compared: "
                         f"{', '.join(document['unpaired'][side])} ({what})")
    from harness.checks.wording import SMALL_SAMPLE_BLOCKS, is_small_sample, small_sample_note

    small = False
    for pair in document["pairs"]:
        fb, fc = pair["failures"]["baseline"], pair["failures"]["candidate"]
        counts = ", ".join(f"{v} {k}" for k, v in pair["verdicts"].items())
        indicative = is_small_sample(pair["n_prompts"])
        small = small or indicative
        lines += [
            "",
            f"## {pair['baseline_evaluator']} → {pair['candidate_evaluator']}",
            "",
            f"- verdicts: {counts}",
            f"- intervals: 95 % paired prompt-block bootstrap (B = {pair['bootstrap']}, seed "
            f"{pair['seed']}, {pair['n_prompts']} prompts), simultaneous over the "
            f"{len(pair['metrics'])} metrics by a {pair['correction']} band (q = {_fmt(pair['q'])})",
            f"- evidence: {pair.get('evidence', 'confirmed')} ("
            + ("the simultaneous interval of each difference against its margin)"
               if pair.get("evidence", "confirmed") == "confirmed"
               else "each point difference against its margin; the intervals are shown, not gated)"),
            f"- failed rows: baseline {fb['failed']} of {fb['rows']}, candidate {fc['failed']} of "
            f"{fc['rows']}; {pair['failures']['excluded_rows']} paired rows excluded",
            f"- cards: baseline `{pair.get('baseline_card_id') or 'not given'}`, candidate "
            f"`{pair.get('candidate_card_id') or 'not given'}`",
        ]
        if indicative:
            lines.append(
                f"- **{small_sample_note(pair['n_prompts'])}**: every verdict below is indicative, "
                "not confirmed (docs/release-gate.md, 'Small samples')"
            )
        if pair["not_compared"]:
            lines.append(f"- undefined on both sides: {', '.join(pair['not_compared'])}")
        lines += [
            "",
            "| metric | factor / probe | baseline | candidate | difference | 95 % CI | margin | verdict |",
            "|---|---|---:|---:|---:|---|---:|---|",
        ]
        for m in pair["metrics"]:
            sign = "+" if m["harmful"] == "increase" else "−"
            lo, hi = m["ci"]
            verdict = m["verdict"] + (" (indicative)" if indicative else "")
            verdict = f"**{verdict}**" if m["verdict"] in (REGRESSION, INCONCLUSIVE) else verdict
            lines.append(
                f"| {m['kind']} | {m['subject'] or '—'} | {_fmt(m['baseline'])} | {_fmt(m['candidate'])} "
                f"| {_fmt(m['difference'])} | [{_fmt(lo)}, {_fmt(hi)}] | {sign}{_fmt(m['margin'])} "
                f"| {verdict} |"
            )
    code = document["exit_code"]
    gate = f"Gate: {'FAIL' if code else 'PASS'} (exit {code})"
    if small:
        gate += f"; indicative: a pair has fewer than {SMALL_SAMPLE_BLOCKS} prompt blocks"
    lines += ["", gate, ""]
    return "\n".join(lines)


def save_baseline(report: str | Path, name: str, *, root: str | Path = BASELINES_DIR) -> Path:
    """Copy a report's ``scores/``, ``cards/`` and ``manifest.json`` to ``root/name/``.

    The copy is assembled under a temporary name and renamed into place, replacing an older
    baseline of that name. Returns the baseline directory.
    """
    report = Path(report)
    if not (report / "scores").is_dir():
        raise AuditError("not a report directory (no scores/)", where=str(report))
    if not name or "/" in name or name in (".", ".."):
        raise AuditError(f"baseline name {name!r} is not a plain directory name", where="--save-baseline")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    final, tmp = root / name, root / f".tmp-{name}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    shutil.copytree(report / "scores", tmp / "scores")
    if (report / "cards").is_dir():
        shutil.copytree(report / "cards", tmp / "cards")
    if (report / "manifest.json").is_file():
        shutil.copyfile(report / "manifest.json", tmp / "manifest.json")
    if final.exists():
        shutil.rmtree(final)
    tmp.rename(final)
    return final
