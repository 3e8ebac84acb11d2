"""A fake API key, the forms a server could echo it in, and an independent check that none of
them (nor an 8-character run of one) appears in a text. The check does not use
:meth:`harness.evaluators.judge.Secret.leaks`: it is the tests' own oracle."""

from __future__ import annotations

import base64
import json
import re

KEY = "sk-live-XQ7r2Lm9Pz4Kt8Vw3Yb6Nc1D"
RUN = 8  # characters: the shortest run of a form that counts as a leak (16 hex digits)


def forms(key: str = KEY) -> dict[str, str]:
    """Name → the key as a server might echo it."""
    raw = key.encode()
    return {
        "plain": key,
        "upper": key.upper(),
        "dashes": "-".join(key),
        "dots": ".".join(key),
        "spaces": " ".join(key),
        "base64": base64.b64encode(raw).decode(),
        "base64url": base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "reversed": key[::-1],
        "json-escaped": "".join(f"\\u{ord(c):04x}" for c in key),
        "hex": raw.hex(),
        "in-model-id": f"gpt-4o/{key}",
    }


def _runs(text: str, width: int = RUN) -> set[str]:
    return {text[i : i + width] for i in range(len(text) - width + 1)}


def _needles(key: str) -> set[str]:
    """Runs of every stored shape of every form (as written, lower-cased, letters and digits
    only, JSON-encoded), each of at least :data:`RUN` characters."""
    out: set[str] = set()
    for name, form in forms(key).items():
        width = 2 * RUN if name == "hex" else RUN  # 8 key bytes: report hashes are hex too
        for shape in (form, form.lower(), re.sub(r"[^0-9a-z]", "", form.lower()),
                      json.dumps(form)[1:-1]):  # fmt: skip
            out |= _runs(shape, width)
    # base64 of the key at the other two alignments (the key inside a longer blob)
    for pad in (b"x", b"xy"):
        enc = base64.b64encode(pad + key.encode()).decode()
        out |= _runs(enc[4:-4])
    return out


NEEDLES = _needles(KEY)


def found(text: str, key: str = KEY) -> list[str]:
    """Runs of the key's forms present in ``text`` (case-insensitively, and in ``text``
    reduced to letters and digits); ``[]`` when it holds none."""
    needles = NEEDLES if key == KEY else _needles(key)
    low = text.lower()
    alnum = re.sub(r"[^0-9a-z]", "", low)
    return sorted(n for n in needles if n in text or n.lower() in low or (n.isalnum() and n.lower() in alnum))
