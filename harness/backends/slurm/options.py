"""Slurm settings for ``--backend slurm``: the ``[tool.t3d-audit.slurm]`` table of the
project's ``pyproject.toml``, overridden by command-line flags, and the submitit executor
they describe.

Keys (all optional; flags of the same name with ``-`` win):

==================== ======================================================================
``executor``         ``slurm`` (submit to the cluster, the default), ``local`` (one process
                     per job on this machine) or ``debug`` (in this process, for tests)
``partition``        Slurm partition (``--partition``); default: the cluster's
``time_limit_min``   minutes per job (``--time``); shards are sized to fit in half of it
``gpus_per_task``    GPUs per job (``--gpus-per-node``); 0: CPU only
``cpus_per_task``    CPUs per job (Cycles threads of its renders)
``mem_gb``           memory per job in GB (0: the cluster's default)
``array_parallelism`` jobs of one array running at once (``%N``); locally: processes at once
``max_failures``     attempts per shard before it is recorded as failed
``shard_size``       renders per render shard (0: from the cost model and the time limit)
``score_shard_groups`` scene groups per score shard (0: from the cost model)
``folder``           where submitit keeps job pickles and logs (a path every node sees)
==================== ======================================================================

submitit is imported only when the backend is used (``pip install 't3d-audit[slurm]'``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path
from types import ModuleType

from harness.backends.shared import BackendError

INSTALL_HINT = "pip install 't3d-audit[slurm]'"
EXECUTORS = ("slurm", "local", "debug")
TABLE = "[tool.t3d-audit.slurm]"


@dataclass(frozen=True)
class SlurmOptions:
    """Where and how shards run (see the module docstring for each field)."""

    executor: str = "slurm"
    partition: str = ""
    time_limit_min: int = 60
    gpus_per_task: int = 0
    cpus_per_task: int = 1
    mem_gb: float = 0.0
    array_parallelism: int = 2
    max_failures: int = 3
    shard_size: int = 0
    score_shard_groups: int = 0
    folder: str = "t3d-audit-slurm"

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise BackendError(f"executor must be one of {', '.join(EXECUTORS)}, got {self.executor!r}",
                               where=TABLE, hint="set executor = \"slurm\", \"local\" or \"debug\"")  # fmt: skip
        for name in ("time_limit_min", "cpus_per_task", "array_parallelism", "max_failures"):
            if getattr(self, name) < 1:
                raise BackendError(f"{name} must be at least 1, got {getattr(self, name)!r}",
                                   where=TABLE, hint=f"set {name} to a positive integer")  # fmt: skip
        for name in ("gpus_per_task", "mem_gb", "shard_size", "score_shard_groups"):
            if getattr(self, name) < 0:
                raise BackendError(f"{name} must not be negative, got {getattr(self, name)!r}",
                                   where=TABLE, hint=f"set {name} to 0 or more")  # fmt: skip

    @classmethod
    def from_table(cls, table: dict[str, object] | None, *, where: str = TABLE) -> SlurmOptions:
        """Options from a config table; an unknown key or a value of the wrong type is one
        :class:`BackendError` naming it."""
        table = dict(table or {})
        known = {f.name: f for f in fields(cls)}
        values: dict[str, object] = {}
        for key, value in table.items():
            if key not in known:
                raise BackendError(f"unknown key {key!r}", where=where,
                                   hint=f"known keys: {', '.join(known)}")  # fmt: skip
            want = type(getattr(cls(), key))
            ok = isinstance(value, want) and not isinstance(value, bool)
            if want is float and isinstance(value, int) and not isinstance(value, bool):
                value, ok = float(value), True
            if not ok:
                raise BackendError(f"{key} must be a {want.__name__}, got {value!r}", where=where,
                                   hint=f"fix {key} in {TABLE}")  # fmt: skip
            values[key] = value
        return cls(**values)

    def with_flags(self, **flags: object) -> SlurmOptions:
        """These options with every flag that was given (not ``None``) replacing its key."""
        return replace(self, **{k: v for k, v in flags.items() if v is not None})


def project_table(pyproject: Path | None = None) -> dict[str, object]:
    """``[tool.t3d-audit.slurm]`` of ``pyproject`` (default: ``./pyproject.toml``); ``{}``
    when the file or the table is absent."""
    from harness.core.bounded_input import read_toml

    path = pyproject or Path("pyproject.toml")
    if not path.is_file():
        return {}
    table = read_toml(path).get("tool", {}).get("t3d-audit", {}).get("slurm", {})
    if not isinstance(table, dict):
        raise BackendError("must be a table", where=f"{path}: {TABLE}", hint="write it as [tool.t3d-audit.slurm]")
    return table


def load_options(pyproject: Path | None = None, **flags: object) -> SlurmOptions:
    """The project's options (:func:`project_table`) with the given flags applied."""
    path = pyproject or Path("pyproject.toml")
    return SlurmOptions.from_table(project_table(path), where=f"{path}: {TABLE}").with_flags(**flags)


def require_submitit() -> ModuleType:
    """The ``submitit`` module, or a :class:`BackendError` saying how to install it."""
    try:
        import submitit
    except ImportError:
        raise BackendError("--backend slurm needs the submitit package, which is not installed",
                           where="--backend", hint=INSTALL_HINT) from None  # fmt: skip
    return submitit


def make_executor(options: SlurmOptions, name: str) -> object:
    """A submitit executor for ``options`` (its jobs named ``name``)."""
    submitit = require_submitit()
    folder = Path(options.folder).expanduser().resolve() / "%j"
    if options.executor == "debug":
        return submitit.DebugExecutor(folder)
    params: dict[str, object] = {"timeout_min": options.time_limit_min, "cpus_per_task": options.cpus_per_task,
                              "gpus_per_node": options.gpus_per_task, "name": name}  # fmt: skip
    if options.mem_gb:
        params["mem_gb"] = options.mem_gb
    if options.executor == "local":
        executor = submitit.AutoExecutor(folder, cluster="local")
        executor.update_parameters(**params)
        return executor
    try:
        executor = submitit.AutoExecutor(folder, cluster="slurm", slurm_max_num_timeout=options.max_failures)
    except RuntimeError as exc:  # no srun/sbatch here
        raise BackendError(f"cannot submit to Slurm: {exc}", where="--backend slurm",
                           hint="run on a Slurm login node (srun and sbatch on PATH), or pass "
                           "--slurm-executor local to run the jobs on this machine") from exc  # fmt: skip
    slurm = {"slurm_array_parallelism": options.array_parallelism}
    if options.partition:
        slurm["slurm_partition"] = options.partition
    executor.update_parameters(**params, **slurm)
    return executor
