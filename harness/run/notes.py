"""What a run tells a person about its own scope: prompts left out, and why a metric is absent.

- :func:`trim_note`: when the profile audits fewer prompts than the scene set has, one line at
  the start of the run says so (``auditing 2 of 3 prompts (profile smoke); use
  --audit-profile=default for all``) — an imported set is never cut down without a word.
- :func:`absent_reason`: why a factor or probe the check asks for is not measured, naming the
  real cause: the profile does not list it, the scenes are single objects (the layout probes
  edit rooms), or the prompts have no paraphrases (e.g. an imported set without them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from harness.vocab.probes import PROBES


def trim_note(profile: str, audited: int, available: int, profiles: Mapping[str, int | None]) -> str | None:
    """The start-of-run line when ``audited < available`` prompts, else ``None``.

    ``profiles``: every profile's prompt count (``None``: all); the hint names the smallest one
    that audits every prompt of the set."""
    if audited >= available:
        return None
    full = [name for _n, name in sorted(((available * 10**6 if n is None else n), name)
                                         for name, n in profiles.items() if n is None or n >= available)]
    hint = f"use --audit-profile={full[0]} for all" if full else "no profile audits all of them"
    return f"t3d-audit: auditing {audited} of {available} prompts (profile {profile}); {hint}"


def absent_reason(
    kind: str,
    key: str | None,
    *,
    profile: str,
    profile_factors: Iterable[str],
    profile_probes: Iterable[str],
    scene_kind: str,
) -> str:
    """Why ``kind`` ``key`` (``factor``/``shared factor``/``probe``/``block``) is not measured.

    Asked only about what this run's summary lacks: a paraphrase factor the profile lists goes
    missing only when no prompt has paraphrases (its levels collapse to none)."""
    if kind == "probe":
        if key not in set(profile_probes):
            return f"profile {profile!r} has no probe {key}"
        if scene_kind == "object" and key in PROBES and PROBES.get(key).multi_object:
            return (
                f"probe {key} edits the layout of a room and this run's scenes are single objects "
                "(it has nothing to remove or move)"
            )
        return f"probe {key} produced no pairs on this run's scenes"
    if kind in ("factor", "shared factor"):
        if key not in set(profile_factors):
            return f"profile {profile!r} has no {kind} {key}"
        if key == "paraphrase":
            return "the scene set's prompts have no paraphrases (an imported set without them)"
        return f"{kind} {key} has no measured levels on this run's scenes"
    return f"profile {profile!r} has no {kind} {key}"
