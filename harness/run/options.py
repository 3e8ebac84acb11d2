"""The ``--audit-*`` options: declared once, resolved and validated once, at configure time.

Each option is read from the command line, else the pytest ini (``audit_<name>``), else
``[tool.t3d-audit]`` in ``pyproject.toml`` (key without ``audit_``). Every value is checked
here, before any test is collected: a bad value is a :class:`pytest.UsageError` (exit 4) of
one line that names the option and says what to write, never a traceback at test setup.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness.checks.thresholds import Thresholds, layered
from harness.core.errors import AuditError
from harness.core.paths import default_cache_dir
from harness.human.audit import HumanInput, load_ratings
from harness.stats.bootstrap import MAX_BOOTSTRAP

MAX_SEED = 2**63 - 1
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


@dataclass(frozen=True)
class AuditOptions:
    """Resolved options (command line > pytest ini > ``[tool.t3d-audit]`` > defaults)."""

    profile: str = "default"
    profile_file: Path | None = None  # --audit-profile-file: saved levels (and a search block) of it
    evaluators: tuple[str, ...] = ()
    scenes: Path | None = None
    report_dir: Path = Path("reports")
    cache_dir: Path = field(default_factory=default_cache_dir)  # $T3D_AUDIT_CACHE_DIR or per-user
    bootstrap: int | None = None
    seed: int = 42
    run_id: str | None = None
    probe_seed: int = 0
    device: str = "auto"
    batch_size: int = 32
    thresholds: Thresholds = field(default_factory=Thresholds)
    gate: bool = False  # release-gate mode: configuration warnings are errors
    allow_empty: bool = False  # a run whose checks all skipped may pass
    store: str | None = None  # shared store URL holding renders and scores (--audit-store)
    store_fill: str = "none"  # none: only read the store; local: compute what is missing here
    view_policy: str = "single"  # harness.protocol.view_policies.VIEW_POLICIES
    human: HumanInput | None = None  # --audit-human (with its scale and dimension)
    evidence: str = "descriptive"  # which evidence level gates a check (harness.checks.evidence)


@dataclass(frozen=True)
class OptionSpec:
    """One ``--audit-*`` option: its help text, pytest ini type and value kind."""

    help: str
    ini_type: str = "string"
    kind: str = "text"  # text | path | store (URL or path) | int | flag | list


OPTIONS: dict[str, OptionSpec] = {
    "audit_profile": OptionSpec("protocol profile: smoke, default or paper"),
    "audit_profile_file": OptionSpec(
        "profile file of your own (written by 't3d-audit search --save-level NAME --into FILE'): "
        "its saved levels of --audit-profile are checked by test_saved_level (docs/search.md)",
        kind="path",
    ),
    "audit_evaluators": OptionSpec(
        "comma-separated evaluator ids or globs (default: the profile's)", "args", "list"
    ),
    "audit_scenes": OptionSpec(
        "scene-set directory, sceneState JSON or GLB (default: bundled)", kind="path"
    ),
    "audit_report_dir": OptionSpec("directory for reports/<run-id>/ (default: reports)", kind="path"),
    "audit_cache_dir": OptionSpec(
        "render/score/records cache (default: $T3D_AUDIT_CACHE_DIR, else the per-user cache "
        "directory, e.g. ~/.cache/t3d-audit)",
        kind="path",
    ),
    "audit_config": OptionSpec(
        "TOML file whose [tool.t3d-audit] table (or top level) replaces the rootdir "
        "pyproject.toml's; layered over the built-in study defaults like it",
        kind="path",
    ),
    "audit_store": OptionSpec(
        "shared store the run reads renders and scores from: s3://bucket/prefix, gs://..., "
        "file://DIR or a directory (filled by 't3d-audit materialize'; default: none, the "
        "local cache)",
        kind="store",
    ),
    "audit_store_fill": OptionSpec(
        "what --audit-store lacks: none (default: fail, naming the command that fills it) "
        "or local (compute it here and publish it to the store)"
    ),
    "audit_bootstrap": OptionSpec(
        f"bootstrap replicates, 0..{MAX_BOOTSTRAP} (default: the profile's)", kind="int"
    ),
    "audit_seed": OptionSpec("bootstrap seed, a non-negative integer (default: 42)", kind="int"),
    "audit_run_id": OptionSpec("report directory name (default: derived from the inputs)"),
    "audit_gate": OptionSpec(
        "release-gate mode: configuration warnings (an override that matches no selected "
        "evaluator) become errors",
        "bool",
        "flag",
    ),
    "audit_view_policy": OptionSpec(
        "how each configuration is looked at: single (the configuration's camera, default), "
        "mean4 or max4 (mean or best score of four azimuths), sheet4 (one 2x2 sheet of them), "
        "preset:NAME (a protocol preset's views and presentation, docs/protocols.md)"
    ),
    "audit_human": OptionSpec(
        "human ratings to measure agreement with (a ratings table .csv/.parquet, or "
        "StanfordT23D .json; docs/formats.md 'Human ratings'); enables test_human_agreement*",
        kind="path",
    ),
    "audit_human_scale": OptionSpec(
        "the declared scale of --audit-human, LOW-HIGH (e.g. 1-5; a .json format declares its own)"
    ),
    "audit_human_dimension": OptionSpec(
        "the rating dimension of --audit-human to use (default: overall, or the only one)"
    ),
    "audit_evidence": OptionSpec(
        "which evidence gates a check: descriptive (its point estimate against the threshold, as "
        "the study reports; default) or confirmed (its interval at the evaluator's family-wise "
        "level is beyond the threshold; docs/release-gate.md, 'Evidence')"
    ),
    "audit_allow_empty": OptionSpec(
        "let a run pass in which no audit check reached an assertion (default: such a run fails)",
        "bool",
        "flag",
    ),
}
PATH_OPTIONS: tuple[str, ...] = (
    *(f"--{dest.replace('_', '-')}" for dest, spec in OPTIONS.items() if spec.kind in ("path", "store")),
    "--audit-baseline",  # declared by harness.release.gate
)
# keys of [tool.t3d-audit] besides the options themselves
# ("compare": the release comparison's margins, read by that command)
TABLE_KEYS = frozenset(
    {"thresholds", "compare"} | {d.removeprefix("audit_") for d in OPTIONS if d != "audit_config"}
)


def flag(dest: str) -> str:
    return f"--{dest.replace('_', '-')}"


def add_options(parser: pytest.Parser) -> None:
    """Register every option on the command line and in the ini file."""
    group = parser.getgroup("t3d-audit", "text-to-3D evaluator audit")
    for dest, spec in OPTIONS.items():
        if spec.kind == "flag":
            group.addoption(flag(dest), dest=dest, action="store_true", default=None, help=spec.help)
        else:
            group.addoption(flag(dest), dest=dest, default=None, help=spec.help)
        parser.addini(dest, spec.help, type=spec.ini_type)  # type: ignore[arg-type]


def config_file(config: pytest.Config) -> tuple[Path, bool]:
    """The project's configuration file and whether it was named explicitly: ``--audit-config``
    (relative to the invocation folder), else the rootdir's ``pyproject.toml``. The rootdir is
    the invoking project's (found from the invocation folder), never the package's location."""
    named = config.getoption("audit_config")
    if named is not None:
        if not isinstance(named, str) or not named.strip():
            raise pytest.UsageError(f"--audit-config must be a path, got {named!r}")
        path = (Path(config.invocation_params.dir) / named).resolve()
        if not path.is_file():
            raise pytest.UsageError(f"--audit-config={path}: no such file; give a TOML file")
        return path, True
    return Path(config.rootpath) / "pyproject.toml", False


def pyproject_table(config: pytest.Config) -> dict[str, object]:
    """``[tool.t3d-audit]`` of the project's configuration file (:func:`config_file`; unknown
    keys rejected). A file named by ``--audit-config`` without that table is read whole."""
    path, named = config_file(config)
    if not path.is_file():
        return {}
    import tomllib

    try:
        from harness.core.bounded_input import read_toml

        data = read_toml(path)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise pytest.UsageError(f"{path}: cannot read [tool.t3d-audit]: {exc}") from exc
    tool = data.get("tool", {})
    table = tool.get("t3d-audit", {}) if not named or "t3d-audit" in tool else data
    if not isinstance(table, dict):
        raise pytest.UsageError(f"{path}: [tool.t3d-audit] must be a table, got {table!r}")
    for key in table:
        if key not in TABLE_KEYS:
            close = difflib.get_close_matches(str(key), TABLE_KEYS, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise pytest.UsageError(
                f"{path}: unknown key {key!r} in [tool.t3d-audit]{hint} "
                f"(known: {', '.join(sorted(TABLE_KEYS))})"
            )
    return dict(table)


def _resolve(config: pytest.Config, dest: str, table: dict[str, object],
             table_dir: Path | None = None) -> tuple[object, Path] | None:
    """The first set value (command line, ini, pyproject) and the directory it is relative to
    (``table_dir``: the configuration file's folder, default the rootdir)."""
    value = config.getoption(dest)
    if value is not None:
        return value, Path(config.invocation_params.dir)
    ini = config.getini(dest)
    if ini not in (None, "", []) and not (OPTIONS[dest].kind == "flag" and ini is False):
        return ini, Path(config.rootpath)
    key = dest.removeprefix("audit_")
    if key in table:
        return table[key], table_dir or Path(config.rootpath)
    return None


def _int(dest: str, value: object, low: int, high: int) -> int:
    text = str(value).strip()
    try:
        number = int(text) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        number = None
    if number is None or not low <= number <= high:
        raise pytest.UsageError(f"{flag(dest)} must be an integer in [{low}, {high}], got {value!r}")
    return number


def _directory(dest: str, path: Path) -> Path:
    """``path`` if it is or can become a directory (no file in its way, creatable there)."""
    from harness.run.argtypes import Error, can_be_directory

    try:
        can_be_directory(path)
    except Error as exc:
        raise pytest.UsageError(
            f"{flag(dest)}={path}: {str(exc).removeprefix(f'{path}: ')}; "
            "pass a directory that exists or can be created"
        ) from None
    return path


STORE_FILL = ("none", "local")


def _store(value: object, base: Path) -> str:
    """``--audit-store`` as a URL (:func:`harness.run.argtypes.store_url`: a plain path, relative
    to ``base``, becomes ``file://``; else a known scheme with a location and its library)."""
    from harness.run.argtypes import Error, store_url

    if not isinstance(value, str) or not value.strip():
        raise pytest.UsageError(f"--audit-store must be a URL or a directory, got {value!r}")
    try:
        return store_url(value, base=base)
    except Error as exc:
        raise pytest.UsageError(f"--audit-store: {exc}") from None


def _check_profile(name: str, profile_file: Path | None = None) -> None:
    from harness.protocol.profiles import get_profile

    try:
        get_profile(name)
    except AuditError as exc:
        raise pytest.UsageError(str(exc)) from exc
    if profile_file is not None:
        from harness.search.saved_levels import audit_profile

        try:
            audit_profile(profile_file, name)
        except AuditError as exc:
            raise pytest.UsageError(f"--audit-profile-file: {exc}") from None


def _human(path: Path | None, scale: object, dimension: object) -> object:
    """``--audit-human`` with its scale and dimension, read and validated now (exit 4 on a bad
    file, scale or dimension, before any render); ``None`` without it."""
    if path is None:
        for dest, value in (("audit_human_scale", scale), ("audit_human_dimension", dimension)):
            if value is not None:
                raise pytest.UsageError(f"{flag(dest)} needs --audit-human (the ratings it describes)")
        return None
    for dest, value in (("audit_human_scale", scale), ("audit_human_dimension", dimension)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise pytest.UsageError(f"{flag(dest)} must be a non-empty text, got {value!r}")
    given = HumanInput(path, None if scale is None else scale.strip(),
                       None if dimension is None else dimension.strip())
    try:
        load_ratings(given)
    except AuditError as exc:
        raise pytest.UsageError(f"--audit-human: {exc}") from None
    return given


def build_options(config: pytest.Config) -> AuditOptions:
    """Options from the command line, the pytest ini and ``[tool.t3d-audit]``, validated."""
    table = pyproject_table(config)
    table_dir = config_file(config)[0].parent
    got = {dest: _resolve(config, dest, table, table_dir) for dest in OPTIONS if dest != "audit_config"}

    def path_of(dest: str) -> Path | None:
        if got[dest] is None:
            return None
        value, base = got[dest]
        if not isinstance(value, str) or not value.strip():
            raise pytest.UsageError(f"{flag(dest)} must be a path, got {value!r}")
        return (base / value).resolve()

    def value_of(dest: str) -> object:
        return None if got[dest] is None else got[dest][0]

    def flag_of(dest: str) -> bool:
        value = value_of(dest)
        if value is None:
            return False
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off", ""):
            return False
        raise pytest.UsageError(f"{flag(dest)} must be true or false, got {value!r}")

    evaluators: tuple[str, ...] = ()
    raw = value_of("audit_evaluators")
    if raw is not None:
        items = raw if isinstance(raw, list) else str(raw).split(",")
        evaluators = tuple(sorted({e.strip() for item in items for e in str(item).split(",") if e.strip()}))
        if not evaluators:
            raise pytest.UsageError("--audit-evaluators names no evaluator; give ids or globs")

    thresholds_table = table.get("thresholds")
    if thresholds_table is not None and not isinstance(thresholds_table, dict):
        raise pytest.UsageError(
            f"[tool.t3d-audit] thresholds must be a table ([tool.t3d-audit.thresholds]), "
            f"got {thresholds_table!r}"
        )
    try:
        # the study's built-in thresholds, with the project's layered over them
        thresholds = layered(thresholds_table)
    except AuditError as exc:
        raise pytest.UsageError(str(exc)) from exc

    bootstrap = value_of("audit_bootstrap")
    seed = value_of("audit_seed")
    run_id = value_of("audit_run_id")
    if run_id is not None and not _RUN_ID.fullmatch(str(run_id)):
        raise pytest.UsageError(
            f"--audit-run-id must be a plain directory name (letters, digits, . _ -), got {run_id!r}"
        )
    scenes = path_of("audit_scenes")
    if scenes is not None and not scenes.exists():
        raise pytest.UsageError(f"--audit-scenes={scenes}: no such file or directory")
    report_dir = path_of("audit_report_dir") or Path(config.rootpath) / "reports"
    cache_dir = path_of("audit_cache_dir") or default_cache_dir()
    profile = str(value_of("audit_profile") or "default")
    profile_file = path_of("audit_profile_file")
    _check_profile(profile, profile_file)
    store = None if got["audit_store"] is None else _store(*got["audit_store"])
    store_fill = str(value_of("audit_store_fill") or "none").strip()
    if store_fill not in STORE_FILL:
        raise pytest.UsageError(
            f"--audit-store-fill must be one of {', '.join(STORE_FILL)}, got {store_fill!r}"
        )
    if store_fill != "none" and store is None:
        raise pytest.UsageError("--audit-store-fill needs --audit-store (the store to fill)")
    from harness.protocol.view_policies import DEFAULT_VIEW_POLICY, VIEW_POLICIES

    view_policy = str(value_of("audit_view_policy") or DEFAULT_VIEW_POLICY).strip()
    if view_policy.startswith("preset:"):  # a protocol preset (docs/protocols.md)
        from harness.core.errors import ProtocolError
        from harness.protocol.presets import PRESETS, get_preset

        try:
            get_preset(view_policy.removeprefix("preset:"))
        except ProtocolError:
            raise pytest.UsageError(
                f"--audit-view-policy: unknown protocol preset in {view_policy!r}: use preset:NAME "
                f"with NAME one of {', '.join(PRESETS)}"
            ) from None
    elif view_policy not in VIEW_POLICIES:
        raise pytest.UsageError(
            f"--audit-view-policy must be one of {', '.join(VIEW_POLICIES)}, got {view_policy!r}"
        )
    human = _human(path_of("audit_human"), value_of("audit_human_scale"), value_of("audit_human_dimension"))
    from harness.checks.evidence import DEFAULT_EVIDENCE, check_evidence

    try:
        evidence = check_evidence(str(value_of("audit_evidence") or DEFAULT_EVIDENCE).strip())
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    return AuditOptions(
        human=human,
        evidence=evidence,
        profile=profile,
        profile_file=profile_file,
        evaluators=evaluators,
        scenes=scenes,
        report_dir=_directory("audit_report_dir", report_dir),
        cache_dir=_directory("audit_cache_dir", cache_dir),
        bootstrap=None if bootstrap is None else _int("audit_bootstrap", bootstrap, 0, MAX_BOOTSTRAP),
        seed=42 if seed is None else _int("audit_seed", seed, 0, MAX_SEED),
        run_id=None if run_id is None else str(run_id),
        thresholds=thresholds,
        gate=flag_of("audit_gate"),
        allow_empty=flag_of("audit_allow_empty"),
        store=store,
        store_fill=store_fill,
        view_policy=view_policy,
    )
