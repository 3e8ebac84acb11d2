"""Hosted MLLM judge over an OpenAI-compatible chat-completions HTTP API (httpx).

One request per (image, caption): the spec's ``instruction`` with ``{text}`` replaced by the
caption, plus the image as a base64 PNG data URL. Decoding is fixed by the spec (temperature
0, ``max_tokens``, ``response_format={"type": "json_object"}``).

Response contract (strict): HTTP 200; a JSON object with a string ``model`` and
``choices[0].message.content`` holding exactly one JSON object with an integer ``rating`` in
[0, 100] (other keys allowed, no surrounding text, no key twice in either JSON object).
Anything else gives a ``failed`` :class:`ScoreResult` with the reason; **never** a score of 0
(the reference study's client stored failures as 0, Appendix I). The model id the API reports
(the *served* model) is recorded in ``ScoreResult.metadata["model"]`` and from there in the
records' ``served_model`` column and the card's ``served_models`` -- only when it matches
:data:`harness.core.ids.SERVED_MODEL_ID` and does not carry the API key in any form
(:meth:`Secret.leaks`, :meth:`Secret.shares_run`), alone or joined with the ids the client stored
before (:func:`served_model_id`); otherwise as ``unrecognised model id``.

No other response text is ever kept: a failure reason holds the HTTP status code and its
standard phrase, or a fixed reason (which contract rule failed, which exception class), never
the response body, its headers, a server-sent reason phrase or a value read from the body.

Limits per request: ``timeout_s`` is a deadline for the whole request (connect, send, and
every read of the headers and body together), not a per-read timeout; a response body over
``max_response_bytes`` (sent with ``Accept-Encoding: identity``) is not read further and fails
with ``response body exceeds N bytes`` (not retried).

Retries: up to ``max_retries`` extra attempts on timeouts, connection errors (connect, read,
write, server disconnects) and HTTP 408, 409, 429 and 5xx, waiting ``Retry-After`` when the
server sends it (seconds or an HTTP date), otherwise ``backoff_base_s * 2**attempt``, each wait
capped at ``backoff_max_s``. Errors a retry cannot fix fail at once: an invalid URL, an
unsupported protocol, a local protocol error, any other HTTP status (other 4xx, 3xx: redirects
are not followed, a 2xx other than 200), an oversized body and parse failures
(temperature 0 makes a retry unlikely to differ).

Every default (endpoint, key variable, limits, retries) is a field default of
:class:`~harness.evaluators.judge_settings.JudgeSettings`.

The API key is read from the environment variable named by the ``api_key_env`` option, kept
in a :class:`Secret` whose repr is masked. Every failure message is scrubbed before it is
shortened: each run of :data:`MIN_FRAGMENT` or more characters that occurs anywhere in the key,
compared case-insensitively, becomes ``***``; a message that still carries the key in another
form (:meth:`Secret.leaks`) is replaced by a fixed reason.
"""

from __future__ import annotations

import base64
import email.utils
import http
import io
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.core.bounded_input import DuplicateKeyError, unique_object
from harness.core.errors import EvaluatorError
from harness.core.ids import SERVED_MODEL_ID, UNRECOGNISED_MODEL
from harness.core.jsonout import JSONValue
from harness.evaluators.base import EvaluatorSpec, ScoreResult, check_image, check_pairs
from harness.evaluators.judge_settings import RETRY_STATUS, JudgeSettings
from harness.evaluators.secrets import MASK, MIN_FRAGMENT, WITHHELD, Secret  # noqa: F401 -- re-exported

if TYPE_CHECKING:
    import numpy as np

REASON_LIMIT = 280  # a record's error column keeps 300 characters including a prefix
# keys of the response contract a duplicate-key failure may name (any other key is "a key")
CONTRACT_KEYS = frozenset({"model", "choices", "message", "content", "rating"})


class ParseError(ValueError):
    """The API answered, but not in the strict response contract."""



def strict_json(text: str | bytes, what: str) -> JSONValue:
    """``json.loads`` that rejects duplicate keys; :class:`ParseError` naming ``what``."""
    try:
        return json.loads(text, object_pairs_hook=unique_object)
    except DuplicateKeyError as exc:
        name = repr(exc.key) if exc.key in CONTRACT_KEYS else "a key"
        raise ParseError(f"{what} has {'the key ' if exc.key in CONTRACT_KEYS else ''}{name} twice") from None


def png_data_url(image: np.ndarray) -> str:
    """``data:image/png;base64,...`` for an ``(H, W, 3)`` uint8 image."""
    import numpy as np
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def request_body(settings: JudgeSettings, image_url: str, caption: str) -> dict[str, object]:
    """The chat-completions request for one (image, caption) pair."""
    prompt = settings.instruction.replace("{text}", caption)
    return {
        "model": settings.model,
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        "n": 1,
        "response_format": {"type": "json_object"},
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": prompt},
                    {"type": "image_url", "image_url": {"url": image_url, "detail": "auto"}},
                ],
            }
        ],
    }


def parse_response(body: bytes) -> tuple[int, str]:
    """``(rating, reported model id)`` from a chat-completions response, or :class:`ParseError`."""
    try:
        data = strict_json(body, "response JSON")
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        if isinstance(exc, ParseError):
            raise
        raise ParseError(f"response is not JSON ({exc.__class__.__name__})") from None
    if not isinstance(data, dict):
        raise ParseError("response is not a JSON object")
    model = data.get("model")
    if not isinstance(model, str) or not model:
        raise ParseError("response has no model id")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ParseError("response has no choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise ParseError("choices[0].message.content is missing")
    try:
        answer = strict_json(content.strip(), "content JSON")
    except ParseError:
        raise
    except (ValueError, RecursionError):
        raise ParseError("content is not strict JSON") from None
    if not isinstance(answer, dict) or "rating" not in answer:
        raise ParseError("content has no 'rating' field")
    rating = answer["rating"]
    if isinstance(rating, bool) or not isinstance(rating, int):
        raise ParseError(f"rating is not an integer (a JSON {_json_type(rating)})")
    if not 0 <= rating <= 100:
        raise ParseError("rating is outside [0, 100]")
    return rating, model


def _json_type(value: object) -> str:
    """The JSON type name of a parsed value (a fixed word, never the value)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "value")


MAX_SERVED_IDS = 4  # distinct served model ids one client keeps; later new ones are not stored
SERVED_RUN = 5  # characters: a served model id sharing this long a run with the key is not stored


def _common_prefix(texts: Sequence[str]) -> int:
    first = min(texts, key=len)
    return next((i for i, ch in enumerate(first) if any(t[i] != ch for t in texts)), len(first))


def joined_pieces(ids: Sequence[str]) -> list[str]:
    """Texts a key spread over several served model ids would show in, the last id being the
    new one: all ids joined in the order they came, and the new id's differing middle (the part
    every id shares at the start and at the end removed) joined before and after each earlier
    one's."""
    if len(ids) < 2:
        return []
    head = _common_prefix(ids)
    tail = _common_prefix([t[::-1] for t in ids])
    middles = [t[head : max(head, len(t) - tail)] for t in ids]
    new = middles[-1]
    return (["".join(ids), "".join(middles), "".join(middles[::-1])]
            + [m + new for m in middles[:-1]] + [new + m for m in middles[:-1]])  # fmt: skip


def served_model_id(reported: str, key: Secret, earlier: Sequence[str] = ()) -> str:
    """The served model id a record may keep: ``reported`` when it matches
    :data:`~harness.core.ids.SERVED_MODEL_ID`, carries no form of the key (:meth:`Secret.leaks`),
    shares no run of :data:`SERVED_RUN` characters with it as written, carries none joined with
    the ``earlier`` distinct ids this client stored (a key spread in pieces across rows), and
    is one of the first :data:`MAX_SERVED_IDS` distinct ids; else ``unrecognised model id``."""
    if SERVED_MODEL_ID.fullmatch(reported) is None or key.leaks(reported):
        return UNRECOGNISED_MODEL
    if key.shares_run(reported, SERVED_RUN):
        return UNRECOGNISED_MODEL
    if reported in earlier:
        return reported
    if len(earlier) >= MAX_SERVED_IDS:
        return UNRECOGNISED_MODEL
    if any(key.leaks(text) for text in joined_pieces([*earlier, reported])):
        return UNRECOGNISED_MODEL
    return reported


def status_reason(status: int) -> str:
    """``HTTP <code> <standard phrase>``: the status code and a fixed phrase, never the
    server's own reason text or body."""
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = "(non-standard status)"
    return f"HTTP {status} {phrase}"


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or HTTP date); ``None``
    when absent or unreadable (never raises)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if seconds == seconds else None  # NaN: unreadable
    try:
        when = email.utils.parsedate_to_datetime(value)
        if when is None:
            return None
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    except (TypeError, ValueError, OverflowError, IndexError, OSError):
        return None


class _Fail(Exception):
    """One attempt failed; ``retry`` says whether another attempt could succeed."""

    def __init__(self, reason: str, *, retry: bool, retry_after: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retry = retry
        self.retry_after = retry_after


@dataclass(frozen=True)
class _Reply:
    status: int
    body: bytes
    retry_after: str | None


class JudgeClient:
    """Rates one (image, caption) pair at a time; thread-safe (one pooled httpx client)."""

    def __init__(
        self,
        settings: JudgeSettings,
        api_key: Secret,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ):
        import httpx

        self.settings = settings
        self._key = api_key
        self._sleep = sleep
        self._served_ids: list[str] = []  # distinct served model ids stored, in arrival order
        self._served_lock = threading.Lock()
        self._served_closed = False  # set once a served id carried the key (alone or joined)
        self._http = httpx.Client(
            timeout=httpx.Timeout(settings.timeout_s),
            headers={"Content-Type": "application/json", "Accept-Encoding": "identity"},
            trust_env=False,  # never route through a proxy from the environment
        )

    def __repr__(self) -> str:
        return f"JudgeClient(model={self.settings.model!r}, base_url={self.settings.base_url!r})"

    def delay(self, attempt: int, retry_after: str | None) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        hinted = retry_after_seconds(retry_after)
        wait = hinted if hinted is not None else self.settings.backoff_base_s * 2**attempt
        return min(wait, self.settings.backoff_max_s)

    def failed(self, reason: str, attempts: int) -> ScoreResult:
        """The failed result for ``reason``: scrubbed first, then shortened; a reason that
        still carries the key in another form becomes :data:`WITHHELD`."""
        text = self._key.scrub(reason)
        if self._key.leaks(text):
            text = WITHHELD
        if len(text) > REASON_LIMIT:
            text = text[: REASON_LIMIT - 3] + "..."
        return ScoreResult.failed(text, attempts=str(attempts))

    def rate(self, image: np.ndarray, caption: str) -> ScoreResult:
        """One judged pair; never raises (request, parse and unexpected failures are results)."""
        try:
            return self._rate(image, caption)
        except Exception as exc:  # a bug here must still be a failure, never a score
            return self.failed(f"judge error: {exc.__class__.__name__}", 1)

    def _served_id(self, reported: str) -> str:
        """:func:`served_model_id` against the ids this client stored before (in order); once
        one id is refused for carrying the key (alone or with earlier ones), no new id is
        stored by this client (the rest of a key spread in pieces)."""
        with self._served_lock:
            earlier = self._served_ids
            if reported in earlier:
                return reported
            if self._served_closed:  # a reply echoed the key: store no new id from this server
                return UNRECOGNISED_MODEL
            served = served_model_id(reported, self._key, tuple(earlier))
            if served == reported:
                earlier.append(reported)
            elif SERVED_MODEL_ID.fullmatch(reported) is not None:
                self._served_closed = True
            return served

    def _rate(self, image: np.ndarray, caption: str) -> ScoreResult:
        try:
            payload = json.dumps(request_body(self.settings, png_data_url(image), caption))
        except Exception as exc:  # encoding an image should not fail, but never score it 0
            return self.failed(f"request build failed: {exc}", 0)
        attempts = self.settings.max_retries + 1
        reason = "no attempt made"
        for attempt in range(attempts):
            try:
                reply = self._attempt(payload.encode("utf-8"))
                if reply.status == 200:
                    rating, model = parse_response(reply.body)
                    served = self._served_id(model)
                    return ScoreResult.ok(float(rating), model=served, attempts=str(attempt + 1))
                raise _Fail(
                    status_reason(reply.status),
                    retry=reply.status in RETRY_STATUS,
                    retry_after=reply.retry_after,
                )
            except ParseError as exc:
                return self.failed(f"unparsable response: {exc}", attempt + 1)
            except _Fail as exc:
                reason = exc.reason
                if not exc.retry:
                    return self.failed(reason, attempt + 1)
                if attempt + 1 < attempts:
                    self._sleep(self.delay(attempt, exc.retry_after))
        return self.failed(f"gave up after {attempts} attempts; last: {reason}", attempts)

    def _attempt(self, payload: bytes) -> _Reply:
        """One request under a deadline of ``timeout_s`` for all of it; raises :class:`_Fail`.

        The exchange runs in a daemon thread so the wait is bounded however the server paces
        its bytes; a thread left behind stops at its next chunk or its next read timeout.
        """
        done = threading.Event()
        cancel = threading.Event()
        box: dict[str, object] = {}

        def work() -> None:
            try:
                box["reply"] = self._exchange(payload, cancel)
            except BaseException as exc:  # handed to the waiting thread
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=work, name="judge-request", daemon=True).start()
        if not done.wait(self.settings.timeout_s):
            cancel.set()
            limit = f"{self.settings.timeout_s:g} s"
            raise _Fail(f"timeout: no complete response within {limit}", retry=True)
        if "error" in box:
            raise self._classify(box["error"])
        return box["reply"]

    def _classify(self, exc: BaseException) -> BaseException:
        """Map an exception of :meth:`_exchange` to a :class:`_Fail` (others pass through)."""
        import httpx

        if isinstance(exc, _Fail):
            return exc
        cls = exc.__class__.__name__
        # only errors raised before any response byte keep their message (OS errors, the
        # configured URL); a protocol or decoding error may quote what the server sent
        local = (httpx.NetworkError, httpx.InvalidURL, httpx.UnsupportedProtocol, httpx.LocalProtocolError)
        name = f"{cls}: {exc}" if isinstance(exc, local) else cls
        if isinstance(exc, httpx.TimeoutException):
            return _Fail(f"timeout: {cls}", retry=True)
        if isinstance(exc, httpx.RemoteProtocolError):
            return _Fail(f"request error: {cls} (the server broke the HTTP protocol)", retry=True)
        if isinstance(exc, httpx.NetworkError):
            return _Fail(f"request error: {name}", retry=True)
        if isinstance(exc, (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, ValueError)):
            return _Fail(f"request error (not retried): {name}", retry=False)
        return exc

    def _exchange(self, payload: bytes, cancel: threading.Event) -> _Reply:
        """POST and read the body in chunks, at most ``max_response_bytes`` of it."""
        cap = self.settings.max_response_bytes
        url = f"{self.settings.base_url}/chat/completions"
        headers = {"Authorization": f"Bearer {self._key.reveal()}"}
        with self._http.stream("POST", url, content=payload, headers=headers) as response:
            retry_after = response.headers.get("Retry-After")
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > cap:
                raise _Fail(
                    f"response body exceeds {cap} bytes (HTTP {response.status_code}, "
                    f"Content-Length {int(declared)}; read 0)",
                    retry=False,
                )
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():  # decoded bytes count: a zip bomb stops too
                if cancel.is_set():
                    raise _Fail("abandoned after the deadline", retry=False)
                size += len(chunk)
                if size > cap:
                    raise _Fail(
                        f"response body exceeds {cap} bytes (HTTP {response.status_code}; "
                        f"read {size})",
                        retry=False,
                    )
                chunks.append(chunk)
        return _Reply(response.status_code, b"".join(chunks), retry_after)

    def close(self) -> None:
        self._http.close()


class JudgeEvaluator:
    """The :class:`~harness.evaluators.base.Evaluator` for a hosted judge spec."""

    def __init__(self, spec: EvaluatorSpec, client: JudgeClient):
        self.spec = spec
        self.client = client

    def __repr__(self) -> str:
        return f"JudgeEvaluator({self.spec.id!r}, {self.client!r})"

    def score(self, images: Sequence[np.ndarray], captions: Sequence[str]) -> list[ScoreResult]:
        """Judge each pair ``(images[i], captions[i])``; failures come back as failed results."""
        check_pairs(self.spec, images, captions)
        for i, image in enumerate(images):
            check_image(self.spec, image, i)
        workers = max(1, min(self.client.settings.max_concurrency, len(images)))
        if workers == 1:
            return [self.client.rate(im, cap) for im, cap in zip(images, captions, strict=True)]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(self.client.rate, images, captions))

    def close(self) -> None:
        self.client.close()


def api_key(spec: EvaluatorSpec) -> Secret:
    """The API key from the environment, or an error naming the variable (never the value)."""
    name = str(spec.option("api_key_env", JudgeSettings.api_key_env))
    value = os.environ.get(name, "")
    if not value:
        raise EvaluatorError(
            f"evaluator {spec.id!r} needs an API key in ${name}",
            hint=f"export {name}=... (the key is read from the environment and never written)",
        )
    return Secret(value)


def build(
    spec: EvaluatorSpec,
    *,
    device: str = "auto",
    batch_size: int = 32,
    sleep: Callable[[float], None] = time.sleep,
) -> JudgeEvaluator:
    """Adapter constructor (``device`` and ``batch_size`` do not apply to a hosted API)."""
    del device, batch_size
    return JudgeEvaluator(spec, JudgeClient(JudgeSettings.from_spec(spec), api_key(spec), sleep=sleep))
