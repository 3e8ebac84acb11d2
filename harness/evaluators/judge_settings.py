"""The hosted judge's client settings and their defaults: the one place they are written.

:class:`JudgeSettings` holds every knob of the judge client (endpoint, key variable, decoding,
deadline, retries, concurrency, response cap). Its field defaults are the defaults of
:func:`harness.evaluators.builders.judge_spec`, of :meth:`JudgeSettings.from_spec` for options
a spec leaves out, and of the hosted judge contract in ``docs/evaluators.md`` (a test compares
the docs with this class). Light module: no HTTP client, no image library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class JudgeSpec(Protocol):
    """What :meth:`JudgeSettings.from_spec` reads of a judge's
    :class:`~harness.evaluators.base.EvaluatorSpec` (declared here: the spec module builds on
    this one)."""

    @property
    def checkpoint(self) -> str: ...

    @property
    def instruction(self) -> str: ...

    def option(self, key: str, default: object = None) -> object: ...

RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))
MAX_RESPONSE_BYTES = 4 * 1024 * 1024
JUDGE_INSTRUCTION = (
    "You are rating how well a rendered image of a 3D scene matches a text description.\n"
    'Description: "{text}"\n'
    "Consider the objects, their counts, attributes and spatial relations the description "
    "asks for. Give one integer rating from 0 (does not match at all) to 100 (matches "
    "perfectly). Reply with strict JSON only, exactly of the form {\"rating\": <integer>}, "
    "with no other text."
)
# Options a judge spec records in its identity, in this order of the dataclass fields; the
# response cap is a client safeguard and not part of the identity.
IDENTITY_OPTIONS = (
    "api_key_env",
    "base_url",
    "temperature",
    "max_tokens",
    "timeout_s",
    "max_retries",
    "backoff_base_s",
    "backoff_max_s",
    "max_concurrency",
)


def retry_status_text(codes: frozenset[int] = RETRY_STATUS) -> str:
    """The retried statuses as the docs spell them, e.g. ``HTTP 408, 409, 429 and 5xx``."""
    five = set(range(500, 600))
    named = sorted(c for c in codes if c not in five)
    parts = [str(c) for c in named] + (["5xx"] if five <= codes else [])
    return "HTTP " + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0])


@dataclass(frozen=True)
class JudgeSettings:
    """Client settings of a hosted judge (all but ``max_response_bytes`` in its identity).

    ``model``: the API model snapshot id; ``base_url``: the OpenAI-compatible API root, without
    a trailing slash; ``api_key_env``: the environment variable holding the key;
    ``timeout_s``: seconds, a deadline for a whole request; ``max_retries``: extra attempts;
    ``backoff_base_s``/``backoff_max_s``: seconds, wait ``base * 2**attempt`` capped at max;
    ``max_concurrency``: requests in flight; ``max_response_bytes``: bytes of a response body
    read at most.
    """

    model: str
    base_url: str = "https://api.openai.com/v1"
    instruction: str = JUDGE_INSTRUCTION
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 20
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    max_concurrency: int = 4
    max_response_bytes: int = MAX_RESPONSE_BYTES

    @classmethod
    def from_spec(cls, spec: JudgeSpec) -> JudgeSettings:
        """The settings a judge spec records; options it leaves out take the defaults."""
        d = cls
        return cls(
            model=spec.checkpoint,
            base_url=str(spec.option("base_url", d.base_url)).rstrip("/"),
            instruction=spec.instruction,
            api_key_env=str(spec.option("api_key_env", d.api_key_env)),
            temperature=float(spec.option("temperature", d.temperature)),
            max_tokens=int(spec.option("max_tokens", d.max_tokens)),
            timeout_s=float(spec.option("timeout_s", d.timeout_s)),
            max_retries=int(spec.option("max_retries", d.max_retries)),
            backoff_base_s=float(spec.option("backoff_base_s", d.backoff_base_s)),
            backoff_max_s=float(spec.option("backoff_max_s", d.backoff_max_s)),
            max_concurrency=int(spec.option("max_concurrency", d.max_concurrency)),
            max_response_bytes=int(spec.option("max_response_bytes", d.max_response_bytes)),
        )

    def identity_options(self) -> dict[str, object]:
        """The adapter options a judge spec records (see :data:`IDENTITY_OPTIONS`)."""
        return {name: getattr(self, name) for name in IDENTITY_OPTIONS}

    def decoding(self) -> str:
        """The card's one-line decoding description."""
        return (
            f"temperature={self.temperature:g}; max_tokens={self.max_tokens}; n=1; "
            f"response_format=json_object; retries on timeouts, connection errors and "
            f"{retry_status_text()} with exponential backoff"
        )
