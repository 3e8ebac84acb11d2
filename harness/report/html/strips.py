"""The thumbnail sections of ``report.html``: per evaluator x factor, one prompt's scenes
across the factor's levels with each image's score and the generator ranking at each level
(factor strips), and each probe edit beside its intact scene (probe pairs). Both embed the
thumbnails (:class:`Thumbs`) and are cached together as the ``html-sections`` report piece."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Mapping
from pathlib import Path

from harness.report.html.data import ReportData, e, fmt, ordered, plural
from harness.report.thumbs import THUMB_DIR
from harness.vocab.factors import factor_names
from harness.vocab.probes import probe_names

EMBED_PX = 112  # longer side of an embedded thumbnail, in pixels
EMBED_QUALITY = 80
MAX_LEVELS = 12  # levels shown per strip (winner changes first)


def _level_stats(frame: object, factor: str) -> tuple[list[str], dict[str, list[tuple[str, float]]]]:
    """Levels of ``factor`` in record order and, per level, generators by mean score (best
    first, over every prompt; failed rows excluded)."""
    rows = frame[frame["factor"] == factor]
    levels = list(dict.fromkeys(rows["level"]))
    ok = rows[rows["status"] == "ok"]
    means = ok.groupby(["level", "generator"], sort=True)["score"].mean()
    ranking: dict[str, list[tuple[str, float]]] = {}
    for level in levels:
        if level in means.index.get_level_values(0):
            items = [(str(g), float(v)) for g, v in means.loc[level].items()]
            ranking[level] = sorted(items, key=lambda t: (-t[1], t[0]))
        else:
            ranking[level] = []
    return levels, ranking


def prompt_winners(scores: Mapping[str, Mapping[str, float]]) -> dict[str, str | None]:
    """Level → the generator with the top score of one prompt (ties: the first by name);
    ``None`` for a level without scores."""
    return {lv: (min(by, key=lambda g: (-by[g], g)) if by else None) for lv, by in scores.items()}


def usual_winner(winners: Mapping[str, str | None]) -> str | None:
    """The generator that wins at the most levels (ties: the first by name)."""
    counts: dict[str, int] = {}
    for winner in winners.values():
        if winner is not None:
            counts[winner] = counts.get(winner, 0) + 1
    return min(counts, key=lambda g: (-counts[g], g)) if counts else None


def winner_caption(winners: Mapping[str, str | None]) -> tuple[str, int]:
    """A strip's caption in words and the number of levels whose winner is not the usual
    one: ``same winner (gen-a) at every level`` or ``the winner changes: gen-a at 5 of 7
    levels, gen-b at 2 (⇄)``."""
    scored = [w for w in winners.values() if w is not None]
    if not scored:
        return "no scores at any level", 0
    counts: dict[str, int] = {}
    for winner in scored:
        counts[winner] = counts.get(winner, 0) + 1
    if len(counts) == 1:
        return f"same winner ({scored[0]}) at every level", 0
    order = sorted(counts, key=lambda g: (-counts[g], g))
    parts = [f"{order[0]} at {counts[order[0]]} of {plural(len(scored), 'level')}",
             *(f"{g} at {counts[g]}" for g in order[1:])]
    return "the winner changes: " + ", ".join(parts) + " (⇄)", len(scored) - counts[order[0]]


def _shown_levels(levels: list[str], ranking: Mapping[str, list[tuple[str, float]]]) -> list[str]:
    if len(levels) <= MAX_LEVELS:
        return levels
    first = ranking[levels[0]][0][0] if ranking[levels[0]] else None
    flips = [lv for lv in levels if ranking[lv] and ranking[lv][0][0] != first][: MAX_LEVELS // 2]
    keep = set(flips)
    for lv in levels:
        if len(keep) >= MAX_LEVELS:
            break
        keep.add(lv)
    return [lv for lv in levels if lv in keep]


class Thumbs:
    """Embedded thumbnails: index lookups and the data URIs of the images used on the page."""

    def __init__(self, data: ReportData):
        self.dir = data.dir / THUMB_DIR
        self.by_key: dict[tuple[str, str, str, str], dict[str, object]] = {}
        self.prompts: list[str] = []
        if data.thumbs is not None:
            self.prompts = [str(p) for p in data.thumbs.get("prompts", [])]
            for entry in data.thumbs["images"]:
                key = (entry.get("generator"), entry.get("prompt_id"), entry.get("factor"), entry.get("level"))
                self.by_key[tuple(str(k) for k in key)] = entry
        self.used: dict[str, str] = {}

    def img(self, generator: str, prompt: str, factor: str, level: str, alt: str) -> str:
        entry = self.by_key.get((generator, prompt, factor, level))
        name = entry.get("file") if entry else None
        if not name or not (self.dir / str(name)).is_file():
            why = (entry or {}).get("error") or "no thumbnail in this report"
            return f'<div class="noimg" role="img" aria-label="{e(alt)}: {e(why)}">{e(why[:60])}</div>'
        key = str(name).rsplit(".", 1)[0]
        if key not in self.used:
            self.used[key] = self._embed(self.dir / str(name))
        return (f'<a href="{THUMB_DIR}/{e(str(name))}" class="thumb"><img data-thumb="{e(key)}" alt="{e(alt)}" '
                f'width="{EMBED_PX}" height="{EMBED_PX}" decoding="async"></a>')

    @staticmethod
    def _embed(path: Path) -> str:
        from PIL import Image

        with Image.open(path) as im:
            im = im.convert("RGB")
            im.thumbnail((EMBED_PX, EMBED_PX), Image.Resampling.LANCZOS)
            out = io.BytesIO()
            im.save(out, format="JPEG", quality=EMBED_QUALITY, optimize=True)
        return "data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode("ascii")


def _scores_at(frame: object, prompt: str, factor: str, level: str) -> dict[str, float]:
    """Generator → score of the ok rows of one prompt at one factor level."""
    return _score_index(frame).get((prompt, factor, level), {})


_INDEXES: dict[int, tuple[object, dict[tuple[str, str, str], dict[str, float]]]] = {}


def _score_index(frame: object) -> dict[tuple[str, str, str], dict[str, float]]:
    """(prompt, factor, level) → {generator: score} of ``frame``'s ok rows, built once per frame (cleared after each page build)."""
    cached = _INDEXES.get(id(frame))
    if cached is not None and cached[0] is frame:
        return cached[1]
    index: dict[tuple[str, str, str], dict[str, float]] = {}
    ok = frame[frame["status"] == "ok"]
    for g, p, f, lv, sc in zip(ok["generator"], ok["prompt_id"], ok["factor"], ok["level"], ok["score"], strict=True):
        index.setdefault((str(p), str(f), str(lv)), {})[str(g)] = float(sc)
    _INDEXES[id(frame)] = (frame, index)
    return index


def _strip(ev: str, frame: object, factor: str, prompt: str, thumbs: Thumbs) -> str:
    levels, ranking = _level_stats(frame, factor)
    shown = _shown_levels(levels, ranking)
    generators = sorted(set(frame["generator"]))
    # the caption and the ⇄ marks speak of the prompt shown (its ★), not the all-prompt means
    winners = prompt_winners({lv: _scores_at(frame, prompt, factor, lv) for lv in levels})
    usual = usual_winner(winners)
    head = ['<th scope="col">generator</th>']
    for lv in shown:
        flip = winners.get(lv) is not None and winners[lv] != usual
        head.append(f'<th scope="col"{" class=flip" if flip else ""}>{e(lv)}{" ⇄" if flip else ""}</th>')
    body = []
    scores = {lv: _scores_at(frame, prompt, factor, lv) for lv in shown}
    for g in generators:
        cells = [f'<th scope="row">{e(g)}</th>']
        for lv in shown:
            s = scores[lv].get(g)
            top = s is not None and s == max(scores[lv].values())
            alt = f"{g}, prompt {prompt}, {factor} = {lv}, {ev} score {fmt(s)}"
            cells.append(
                f'<td{" class=top" if top else ""}>{thumbs.img(g, prompt, factor, lv, alt)}'
                f'<span class="score">{fmt(s)}{" ★" if top else ""}</span></td>'
            )
        body.append("<tr>" + "".join(cells) + "</tr>")
    rank_cells = ['<th scope="row">ranking<br><span class="muted">mean, all prompts</span></th>']
    for lv in shown:
        items = "".join(f"<li>{e(g)} <span class='muted'>{fmt(v, 3)}</span></li>" for g, v in ranking[lv])
        rank_cells.append(f'<td class="rank"><ol>{items}</ol></td>')
    body.append('<tr class="ranking">' + "".join(rank_cells) + "</tr>")
    more = "" if len(shown) == len(levels) else (
        f'<p class="muted">Showing {len(shown)} of {len(levels)} levels (levels where the winner changes first).</p>')
    caption_text, changes = winner_caption(winners)
    caption = f"{e(ev)} · {e(factor)} · prompt {e(prompt)}: {e(caption_text)}"
    return (f'<details class="strip" data-prompt="{e(prompt)}"{" open" if changes else ""}>'
            f'<summary>{caption}</summary>{more}'
            f'<div class="scroll"><table class="strip"><thead><tr>{"".join(head)}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div></details>')


def _strips(data: ReportData, thumbs: Thumbs) -> str:
    prompts = thumbs.prompts or sorted(
        {p for f in data.records.values() for p in f["prompt_id"]})[:1]
    out = []
    for ev in data.evaluators:
        frame = data.records.get(ev)
        if frame is None:
            continue
        factors = ordered({f for f in frame["factor"]} - {"baseline", "probe"}, factor_names())
        parts = [_strip(ev, frame, f, p, thumbs) for f in factors for p in prompts]
        out.append(f'<details class="ev" data-ev="{e(ev)}"><summary>{e(ev)}</summary>{"".join(parts)}</details>')
    return ('<section id="strips"><h2>Factor strips</h2><p class="muted">One prompt\'s scenes (one row per '
            "generator) across each factor's levels, with this evaluator's score under each image (★ best "
            "for this prompt) and the generator ranking over all prompts; ⇄ marks a level whose winner "
            "differs from the first level's; strips with a winner change start open. Click a thumbnail "
            "for the stored render.</p>"
            + "".join(out) + "</section>")


def _probe_pairs(data: ReportData, thumbs: Thumbs) -> str:
    prompts = thumbs.prompts or sorted({p for f in data.records.values() for p in f["prompt_id"]})[:1]
    comp = data.records.get(data.companion) if data.companion else None
    out = []
    for ev in data.evaluators:
        frame = data.records.get(ev)
        if frame is None:
            continue
        probes = ordered(set(frame.loc[frame["factor"] == "probe", "level"]), probe_names())
        parts = []
        for probe in probes:
            rows = []
            for prompt in prompts:
                intact = _scores_at(frame, prompt, "baseline", "c0")
                edited = _scores_at(frame, prompt, "probe", probe)
                c_in = _scores_at(comp, prompt, "baseline", "c0") if comp is not None else {}
                c_ed = _scores_at(comp, prompt, "probe", probe) if comp is not None else {}
                for g in sorted(set(intact) | set(edited)):
                    a, b = intact.get(g), edited.get(g)
                    drop = "—" if a is None or b is None else ("drops ✓" if b < a else "tie" if b == a else "rises ✗")
                    if g in c_in and g in c_ed:
                        damaging = c_ed[g] < c_in[g]
                        verdict = ("damaging" if damaging else "not damaging") + f" ({fmt(c_in[g], 3)} → {fmt(c_ed[g], 3)})"
                    else:
                        verdict = "no companion in this report"
                    rows.append(
                        f'<div class="pair" data-prompt="{e(prompt)}"><div class="side">'
                        f'{thumbs.img(g, prompt, "baseline", "c0", f"{g} prompt {prompt} intact, score {fmt(a)}")}'
                        f'<span>intact<br><b>{fmt(a)}</b></span></div><div class="side">'
                        f'{thumbs.img(g, prompt, "probe", probe, f"{g} prompt {prompt} {probe}, score {fmt(b)}")}'
                        f'<span>{e(probe)}<br><b>{fmt(b)}</b></span></div>'
                        f'<p><b>{e(g)}</b> · prompt {e(prompt)}<br>{e(ev)}: {drop}<br>companion: {e(verdict)}</p></div>'
                    )
            parts.append(f'<h4>{e(probe)}</h4><div class="pairs">{"".join(rows)}</div>')
        if parts:
            out.append(f'<details class="ev" data-ev="{e(ev)}"><summary>{e(ev)}</summary>{"".join(parts)}</details>')
    if not out:
        from harness.report.figures import NO_PROBE_NOTE

        return f'<section id="probes"><h2>Probe pairs</h2><p class="muted">{e(NO_PROBE_NOTE)}</p></section>'
    return ('<section id="probes"><h2>Probe pairs</h2><p class="muted">Each probe edit next to the intact '
            "scene, with this evaluator's scores and whether the symbolic companion confirms the edit "
            "damages the scene.</p>" + "".join(out) + "</section>")


def _build_thumb_sections(data: ReportData, thumbs: Thumbs) -> tuple[str, str]:
    try:
        return _strips(data, thumbs), _probe_pairs(data, thumbs)
    finally:
        _INDEXES.clear()


def thumb_sections_key(data: ReportData) -> str:
    """The ``html-sections`` piece's cache key: every input of :func:`_strips` and
    :func:`_probe_pairs` (the score files, evaluators and companion, every file under
    ``thumbs/``), the sources that read and lay them out, and the Pillow, pandas and numpy
    versions (embedded thumbnails, score means)."""
    from harness.core.code_identity import package_versions, source_hash
    from harness.core.hashing import sha256_file
    from harness.report.pieces import piece_key, report_sources

    thumb_dir = data.dir / THUMB_DIR
    return piece_key("html-sections", {
        "code": source_hash(report_sources()),
        "packages": package_versions(["numpy", "pandas", "pillow"]),
        "evaluators": list(data.evaluators),
        "companion": data.companion,
        "scores": {p.name: sha256_file(p) for p in sorted((data.dir / "scores").glob("*.csv"))},
        "thumbs": {p.relative_to(thumb_dir).as_posix(): sha256_file(p)
                   for p in sorted(thumb_dir.rglob("*")) if p.is_file()},
    })


def thumb_sections(data: ReportData, thumbs: Thumbs, cache_dir: Path | None = None) -> tuple[str, str]:
    """The factor strips and probe pairs sections (they embed the thumbnails, recorded in
    ``thumbs.used``); with ``cache_dir``, reused from and stored in the ``html-sections``
    report piece (:mod:`harness.report.pieces`) under :func:`thumb_sections_key`."""
    if cache_dir is None:
        return _build_thumb_sections(data, thumbs)
    from harness.core.hashing import canonical_json
    from harness.report.pieces import piece_entries

    entries = piece_entries(Path(cache_dir), "html-sections")
    key = thumb_sections_key(data)
    payload = entries.get(key)
    if payload is not None:
        try:
            doc = json.loads(payload)
            strips, probes, used = doc["strips"], doc["probes"], doc["used"]
        except (ValueError, KeyError, TypeError):
            pass
        else:
            if isinstance(strips, str) and isinstance(probes, str) and isinstance(used, dict):
                thumbs.used.update(used)
                return strips, probes
    before = set(thumbs.used)
    strips, probes = _build_thumb_sections(data, thumbs)
    used = {k: v for k, v in thumbs.used.items() if k not in before}
    entries.put(key, canonical_json({"strips": strips, "probes": probes, "used": used}))
    return strips, probes
