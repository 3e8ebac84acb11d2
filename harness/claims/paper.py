"""The paper-ready block of a claim, in Markdown and in LaTeX: a table row per generator
(generator, score at c0, its 95 % interval, the card id) and the verdict with its scope in
words. The bytes depend only on the inputs (no time, no path, no machine): the same claim
gives the same block. Every text taken from the inputs (generator names, evaluator ids) is
escaped for its target (:func:`latex_escape`, :func:`markdown_escape`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from harness.claims.evidence import GeneratorScore

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
          "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}  # fmt: skip
_MARKDOWN = set("\\`*_<>|~")


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else " " for c in str(text))


def latex_escape(text: str) -> str:
    """``text`` as LaTeX body text: the special characters written as commands, control
    characters (newlines included) as spaces."""
    return "".join(_LATEX.get(c, c) for c in _printable(text))


def markdown_escape(text: str) -> str:
    """``text`` as Markdown inline text (a table cell too): the characters that make emphasis,
    code, HTML, tables or strike-through backslash-escaped, ``](`` (a link) as ``\\](``, control
    characters as spaces. Brackets alone stay as they are: an interval ``[0.1, 0.2]`` is no link."""
    escaped = "".join("\\" + c if c in _MARKDOWN else c for c in _printable(text))
    return escaped.replace("](", "\\](")


def fmt(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{x:.4g}"


@dataclass(frozen=True)
class PaperBlock:
    """The block in both forms."""

    markdown: str
    latex: str


def paper_block(title: str, rows: Sequence[GeneratorScore], card_id: str, sentences: Sequence[str],
                configuration: str) -> PaperBlock:  # fmt: skip
    """The block: ``title`` (the verdict line), one row per generator of ``rows``, the
    ``sentences`` (the scope) and the evaluator ``configuration`` in words."""
    md = [f"**Claim.** {markdown_escape(title)}", "",
          "| Generator | Score at c0 | 95 % interval | Card ID |", "|---|---:|---|---|"]  # fmt: skip
    md += [f"| {markdown_escape(r.generator)} | {fmt(r.mean)} | [{fmt(r.lo)}, {fmt(r.hi)}] | `{card_id}` |" for r in rows]
    md += ["", " ".join(markdown_escape(s) for s in sentences), "", f"*Configuration:* {markdown_escape(configuration)}", ""]
    tex = ["% t3d-audit claim: needs \\usepackage{booktabs}",
           "\\begin{tabular}{lrll}", "\\toprule",
           "Generator & Score at $c_0$ & 95\\,\\% interval & Card ID \\\\", "\\midrule"]  # fmt: skip
    tex += [f"{latex_escape(r.generator)} & {fmt(r.mean)} & [{fmt(r.lo)}, {fmt(r.hi)}] & "
            f"\\texttt{{{latex_escape(card_id)}}} \\\\" for r in rows]  # fmt: skip
    tex += ["\\bottomrule", "\\end{tabular}", "",
            f"\\textbf{{Claim.}} {latex_escape(title)}", "",
            " ".join(latex_escape(s) for s in sentences), "",
            f"\\emph{{Configuration:}} {latex_escape(configuration)}", ""]  # fmt: skip
    return PaperBlock("\n".join(md), "\n".join(tex))
