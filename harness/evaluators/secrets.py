"""Secrets in failure reasons: a key is masked wherever a message could carry it.

:class:`Secret` holds a key (an API key of a hosted judge, the value of a secret-looking
environment variable a user scorer may hold) and never shows itself. :meth:`Secret.scrub` masks
every run of :data:`MIN_FRAGMENT`+ characters of the key (or of the key reversed);
:meth:`Secret.leaks` says whether a text still carries the key in another form (letter case,
separators between characters, escapes, base64/hex encodings, reversed). :func:`scrub_reason`
is the one place a failure reason is cleaned with them: scrubbed, then withheld whole
(:data:`WITHHELD`) when a form survives.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import html
import os
import re
import unicodedata
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping

MASK = "***"
MIN_FRAGMENT = 8  # characters: a run this long shared with the key is masked
WITHHELD = "failure reason withheld: it carried the API key"
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{12,}")
_HEX_RUN = re.compile(r"[0-9A-Fa-f]{16,}")
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|x([0-9A-Fa-f]{2})|U([0-9A-Fa-f]{8})|([0-7]{1,3})|(.))", re.S)
# bytes or code points written as numbers: "[115, 107, 45, ...]" (list(key.encode()), map(ord, key))
_NUMBER_LIST = re.compile(r"\d{1,7}(?:\s*[,;]?\s*\d{1,7}){7,}")
# separators a dump puts between hex pairs or base64 lines ("73 6b 2d", "73:6B:2D", MIME wrapping)
_DUMP_SEPARATORS = re.compile(r"[\s:]+")
_NOT_ALNUM = re.compile(r"[\W_]+")


def _fold(text: str) -> str:
    """Lower-case per character, keeping characters whose lower case is longer (same length)."""
    return "".join(ch if len(low := ch.lower()) != 1 else low for ch in text)


def _grams(text: str, width: int) -> frozenset[str]:
    return frozenset(text[i : i + width] for i in range(len(text) - width + 1)) if text else frozenset()


def _unescape(text: str) -> str:
    """JSON/Python string escapes (``\\u0073``, ``\\x73``, ``\\U00000073``, octal ``\\163``,
    ``\\/``) decoded once."""

    def one(m: re.Match[str]) -> str:
        code = m.group(1) or m.group(2) or m.group(3)
        if code:
            return chr(min(int(code, 16), 0x10FFFF))
        return chr(int(m.group(4), 8)) if m.group(4) else m.group(5)

    return _ESCAPE.sub(one, text)


def _aligned(run: str, block: int) -> Iterator[str]:
    """``run`` read from each start within one ``block``, cut to whole blocks: an encoded blob
    at any alignment inside a longer run."""
    for shift in range(block):
        part = run[shift:]
        part = part[: len(part) - len(part) % block]
        if part:
            yield part


def _decoded_blobs(text: str) -> list[str]:
    """Text hidden in base64 (standard or URL-safe, any alignment) or hex runs of ``text``."""
    out: list[str] = []
    for run in _BASE64_RUN.findall(text):
        for part in _aligned(run.replace("-", "+").replace("_", "/"), 4):
            with contextlib.suppress(binascii.Error, ValueError):
                out.append(base64.b64decode(part).decode("latin-1"))
    for run in _HEX_RUN.findall(text):
        out.extend(bytes.fromhex(part).decode("latin-1") for part in _aligned(run, 2))
    return out


_B32_RUN = re.compile(r"[A-Za-z2-7]{16,}")
_REPEATS = re.compile(r"(.)\1+", re.S)
MAX_STRIDE = 3  # every 2nd and 3rd character: a key with its characters doubled or interleaved
STRIDE_LIMIT = 4096  # characters: longer texts are not also read at strides (cost)


def _base32_blobs(text: str) -> list[str]:
    """Text hidden in base32 runs of ``text`` (any case, unpadded, any 8-character alignment)."""
    out: list[str] = []
    for run in _B32_RUN.findall(text):
        for part in _aligned(run.upper(), 8):
            with contextlib.suppress(binascii.Error, ValueError):
                out.append(base64.b32decode(part).decode("latin-1"))
    return out


def _strided(text: str) -> list[str]:
    """``text`` read every 2nd or 3rd character from each start, and with runs of a repeated
    character collapsed: where a doubled (``sskk--``) or interleaved (``sxkx-x``) key shows."""
    if len(text) > STRIDE_LIMIT:
        return []
    out = [text[start::step] for step in range(2, MAX_STRIDE + 1) for start in range(step)]
    return [*out, _REPEATS.sub(r"\1", text)]


def _number_lists(text: str) -> list[str]:
    """Text written as a list of character or byte numbers (``[115, 107, 45, ...]``)."""
    out: list[str] = []
    for run in _NUMBER_LIST.findall(text):
        codes = [int(n) for n in re.findall(r"\d+", run)]
        if all(c <= 0x10FFFF for c in codes):
            out.append("".join(map(chr, codes)))
    return out


def _views(text: str) -> set[str]:
    """``text`` and the forms a key could hide in it: NFKC-normalised (full-width or
    mathematical letters), without dump separators (spaced or colon hex, wrapped base64), as a
    list of numbers, unescaped (JSON, URL, HTML), read at a stride (doubled or interleaved characters), base64-, base32- or hex-decoded (also after a
    stride), and each of those reversed."""
    plain = {text, unicodedata.normalize("NFKC", text), _DUMP_SEPARATORS.sub("", text)}
    plain |= set(_number_lists(text))
    for _ in range(3):  # nested escapes: a JSON string inside a JSON string, and so on
        plain |= {f(t) for t in plain for f in (_unescape, urllib.parse.unquote, html.unescape)}
    plain |= {v for t in list(plain) for v in _strided(t)}
    views = set(plain)
    for t in plain:
        views.update(_decoded_blobs(t))
        views.update(_base32_blobs(t))
    return views | {v[::-1] for v in views}


class Secret:
    """A string that never shows itself in repr/str/format."""

    __slots__ = ("_alnum_grams", "_alnum_width", "_grams", "_value", "_width")

    def __init__(self, value: str):
        self._value = value
        self._width = min(MIN_FRAGMENT, len(value))
        folded = _fold(value)
        self._grams = (_grams(folded, self._width) | _grams(folded[::-1], self._width)
                       | _grams(_REPEATS.sub(r"\1", folded), self._width))  # fmt: skip
        alnum = _NOT_ALNUM.sub("", _fold(value))
        self._alnum_width = min(MIN_FRAGMENT, len(alnum))
        self._alnum_grams = _grams(alnum, self._alnum_width)

    def reveal(self) -> str:
        return self._value

    def scrub(self, text: str) -> str:
        """``text`` with every run of ``MIN_FRAGMENT``+ characters of the secret masked.

        A run is any substring of the key or of the key reversed (the whole key when it is
        shorter), compared case-insensitively; overlapping and adjacent runs merge into one ``***``. Repeated
        until nothing matches, so joining the pieces around a mask cannot form a new run.
        """
        if not self._grams:
            return text
        while True:
            folded = _fold(text)
            starts: list[int] = []
            for gram in self._grams:
                at = folded.find(gram)
                while at != -1:
                    starts.append(at)
                    at = folded.find(gram, at + 1)
            if not starts:
                return text
            pieces: list[str] = []
            kept_from = 0
            run_start, run_end = -1, -1
            for start in sorted(starts):
                if start > run_end:  # a new masked run
                    if run_end >= 0:
                        pieces += [text[kept_from:run_start], MASK]
                        kept_from = run_end
                    run_start = start
                run_end = max(run_end, start + self._width)
            pieces += [text[kept_from:run_start], MASK, text[run_end:]]
            text = "".join(pieces)

    def leaks(self, text: str) -> bool:
        """Whether ``text`` carries a run of :data:`MIN_FRAGMENT`+ characters of the key in any
        known form: as is or in another letter case, with separators or spaces between its
        characters (compared on letters and digits only), reversed, JSON/URL/HTML-escaped,
        base64- or hex-encoded (and combinations of these)."""
        if not self._grams:
            return False
        for view in _views(text):
            folded = _fold(view)
            if _grams(folded, self._width) & self._grams:
                return True
            if self._alnum_grams and _grams(_NOT_ALNUM.sub("", folded), self._alnum_width) & self._alnum_grams:
                return True
        return False

    def shares_run(self, text: str, width: int) -> bool:
        """Whether ``text`` as written (compared case-insensitively, also on letters and digits
        only, also reversed) shares a run of ``width`` characters with the key: a stricter test
        than :meth:`leaks` for short texts such as a served model id, where a piece of the key
        shorter than :data:`MIN_FRAGMENT` is already too much."""
        key = _fold(self._value)
        key_alnum = _NOT_ALNUM.sub("", key)
        wanted = _grams(key, width) | _grams(key[::-1], width)
        wanted |= _grams(key_alnum, width) | _grams(key_alnum[::-1], width)
        folded = _fold(text)
        return bool((_grams(folded, width) | _grams(_NOT_ALNUM.sub("", folded), width)) & wanted)

    def __repr__(self) -> str:
        return "Secret(***)"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)

    def __reduce__(self):
        raise TypeError("a Secret cannot be pickled")


# names of environment variables whose values are treated as secrets in a user scorer's
# failure reasons (an API key, a token, a password a scorer may read)
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|PRIVATE",
                         re.IGNORECASE)
MIN_SECRET_CHARS = 8  # shorter values (flags, ids) are not worth masking and mask too much


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[Secret]:
    """A :class:`Secret` for each environment variable whose name looks secret
    (:data:`SECRET_NAME`) and whose value has :data:`MIN_SECRET_CHARS`+ characters."""
    env = os.environ if environ is None else environ
    return [Secret(value) for name, value in sorted(env.items())
            if SECRET_NAME.search(name) and len(value.strip()) >= MIN_SECRET_CHARS]  # fmt: skip


def scrub_reason(text: str, secrets: Iterable[Secret], limit: int | None = None) -> str:
    """``text`` with every secret masked (:meth:`Secret.scrub`); :data:`WITHHELD` when a form of
    one survives (:meth:`Secret.leaks`); then cut to ``limit`` characters (``...`` ending).
    With a ``limit``, a text beyond ``8 * limit`` characters is first cut there (the checks'
    cost grows with the text; the part cut off could never be kept)."""
    if limit is not None and len(text) > 8 * limit:
        text = text[: 8 * limit]
    for secret in secrets:
        text = secret.scrub(text)
        if secret.leaks(text):
            text = WITHHELD
            break
    if limit is not None and len(text) > limit:
        text = text[: limit - 3] + "..."
    return text
