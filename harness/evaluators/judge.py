"""Hosted MLLM judge over an OpenAI-compatible chat-completions HTTP API (httpx).

One request per (image, caption): the spec's ``instruction`` with ``{text}`` replaced by the
caption, plus the image as a base64 PNG data URL. Decoding is fixed by the spec (temperature
0, ``max_tokens``, ``response_format={"type": "json_object"}``).

Response contract (strict): HTTP 200; a JSON object with a string ``model`` and
``choices[0].message.content`` holding exactly one JSON object with an integer ``rating`` in
[0, 100] (other keys allowed, no surrounding text). Anything else gives a ``failed``
:class:`ScoreResult` with the reason; **never** a score of 0 (the reference study's client
stored failures as 0, Appendix I). The model id the API reports is recorded in
``ScoreResult.metadata["model"]``.

Retries: up to ``max_retries`` extra attempts on timeouts, connection errors, HTTP 429 and
5xx, waiting ``Retry-After`` when the server sends it (seconds or an HTTP date), otherwise
``backoff_base_s * 2**attempt``, each wait capped at ``backoff_max_s``. Other 4xx and parse
failures are not retried (temperature 0 makes a retry unlikely to differ).

The API key is read from the environment variable named by the ``api_key_env`` option
(default ``OPENAI_API_KEY``), kept in a :class:`Secret` whose repr is masked, and scrubbed
from every error message.
"""

from __future__ import annotations

import base64
import email.utils
import io
import json
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.errors import EvaluatorError
from harness.evaluators.base import EvaluatorSpec, ScoreResult, check_image, check_pairs

if TYPE_CHECKING:
    import numpy as np

RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
MASK = "***"


class Secret:
    """A string that never shows itself in repr/str/format."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def scrub(self, text: str) -> str:
        """``text`` with every occurrence of the secret replaced by ``***``."""
        return text.replace(self._value, MASK) if self._value else text

    def __repr__(self) -> str:
        return "Secret(***)"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)

    def __reduce__(self):
        raise TypeError("a Secret cannot be pickled")


@dataclass(frozen=True)
class JudgeSettings:
    """Client settings taken from the spec's options (all part of its identity)."""

    model: str
    base_url: str
    instruction: str
    temperature: float = 0.0
    max_tokens: int = 20
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    max_concurrency: int = 4

    @classmethod
    def from_spec(cls, spec: EvaluatorSpec) -> JudgeSettings:
        return cls(
            model=spec.checkpoint,
            base_url=str(spec.option("base_url", "https://api.openai.com/v1")).rstrip("/"),
            instruction=spec.instruction,
            temperature=float(spec.option("temperature", 0.0)),
            max_tokens=int(spec.option("max_tokens", 20)),
            timeout_s=float(spec.option("timeout_s", 60.0)),
            max_retries=int(spec.option("max_retries", 4)),
            backoff_base_s=float(spec.option("backoff_base_s", 1.0)),
            backoff_max_s=float(spec.option("backoff_max_s", 60.0)),
            max_concurrency=int(spec.option("max_concurrency", 4)),
        )


class ParseError(ValueError):
    """The API answered, but not in the strict response contract."""


def png_data_url(image: np.ndarray) -> str:
    """``data:image/png;base64,...`` for an ``(H, W, 3)`` uint8 image."""
    import numpy as np
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(image)).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def request_body(settings: JudgeSettings, image_url: str, caption: str) -> dict[str, Any]:
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
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
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
        answer = json.loads(content.strip())
    except ValueError:
        raise ParseError(f"content is not strict JSON: {content[:80]!r}") from None
    if not isinstance(answer, dict) or "rating" not in answer:
        raise ParseError(f"content has no 'rating' field: {content[:80]!r}")
    rating = answer["rating"]
    if isinstance(rating, bool) or not isinstance(rating, int):
        raise ParseError(f"rating is not an integer: {rating!r}")
    if not 0 <= rating <= 100:
        raise ParseError(f"rating {rating} is outside [0, 100]")
    return rating, model


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


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
        self._http = httpx.Client(
            timeout=httpx.Timeout(settings.timeout_s),
            headers={"Content-Type": "application/json"},
            trust_env=False,  # never route through a proxy from the environment
        )

    def __repr__(self) -> str:
        return f"JudgeClient(model={self.settings.model!r}, base_url={self.settings.base_url!r})"

    def delay(self, attempt: int, retry_after: str | None) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        hinted = retry_after_seconds(retry_after)
        wait = hinted if hinted is not None else self.settings.backoff_base_s * 2**attempt
        return min(wait, self.settings.backoff_max_s)

    def rate(self, image: np.ndarray, caption: str) -> ScoreResult:
        """One judged pair; never raises for request or parse failures."""
        import httpx

        try:
            payload = json.dumps(request_body(self.settings, png_data_url(image), caption))
        except Exception as exc:  # encoding an image should not fail, but never score it 0
            return ScoreResult.failed(self._key.scrub(f"request build failed: {exc}"))
        url = f"{self.settings.base_url}/chat/completions"
        headers = {"Authorization": f"Bearer {self._key.reveal()}"}
        reason = "no attempt made"
        attempts = self.settings.max_retries + 1
        for attempt in range(attempts):
            retry_after = None
            try:
                response = self._http.post(url, content=payload, headers=headers)
            except httpx.TimeoutException:
                reason = f"timeout after {self.settings.timeout_s:g} s"
            except httpx.HTTPError as exc:
                reason = f"request error: {exc.__class__.__name__}: {exc}"
            except Exception as exc:  # e.g. an invalid base URL: not retryable, still a record
                return ScoreResult.failed(
                    self._key.scrub(f"request error: {exc.__class__.__name__}: {exc}"),
                    attempts=str(attempt + 1),
                )
            else:
                if response.status_code == 200:
                    try:
                        rating, model = parse_response(response.content)
                    except ParseError as exc:
                        return ScoreResult.failed(
                            self._key.scrub(f"unparsable response: {exc}"),
                            attempts=str(attempt + 1),
                        )
                    return ScoreResult.ok(float(rating), model=model, attempts=str(attempt + 1))
                snippet = response.text[:200].replace("\n", " ")
                reason = f"HTTP {response.status_code}: {snippet}"
                if response.status_code not in RETRY_STATUS:
                    return ScoreResult.failed(self._key.scrub(reason), attempts=str(attempt + 1))
                retry_after = response.headers.get("Retry-After")
            if attempt + 1 < attempts:
                self._sleep(self.delay(attempt, retry_after))
        return ScoreResult.failed(
            self._key.scrub(f"gave up after {attempts} attempts; last: {reason}"),
            attempts=str(attempts),
        )

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
    name = str(spec.option("api_key_env", "OPENAI_API_KEY"))
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
