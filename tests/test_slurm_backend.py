"""The Slurm backend through submitit's ``debug`` (in process) and ``local`` (one process per
job) executors, no Slurm needed:

* a shard whose job fails is resubmitted, and one that fails ``max_failures`` times is
  reported failed with its error, never as a result; a local job killed mid-run
  (``os._exit``) is resubmitted and its rerun finishes the shard;
* scoring as score shards (tiny numpy evaluators, the box rasterizer) stores exactly the
  records the local backend stores, and a retry of chosen shards scores only what is missing;
* the aggregated run: an audit (``-n 0`` and ``-n 2``) that only reads a store the Slurm
  backend filled writes a report byte-identical to the inline audit's.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.testing import TinySpec
from tests._audit_project import comparable_files, make_project, report_dir, run_audit, tiny_session
from tests._distributed import need

pytest_plugins = ["pytester"]

SPECS = [TinySpec("tiny-grid"), TinySpec("tiny-pairs", grid=False)]


@pytest.fixture(autouse=True)
def _submitit():
    need("submitit")


class Flaky:
    """A job body that fails its first ``fails`` attempts per shard (attempts counted in files
    under ``folder``, as they run in other processes), then returns ``value * 10``.
    ``exit_first``: the first attempt ends its process abruptly, as a killed job."""

    def __init__(self, folder: str, fails: int, exit_first: bool = False):
        self.folder, self.fails, self.exit_first = folder, fails, exit_first

    def __call__(self, value: int) -> int:
        tally = Path(self.folder) / f"attempts-{value}"
        n = len(tally.read_text()) if tally.exists() else 0
        tally.write_text("x" * (n + 1))
        if n < self.fails:
            if self.exit_first:
                os._exit(1)
            raise RuntimeError(f"attempt {n + 1} of shard {value} failed")
        return value * 10


def _options(tmp_path, executor, **over):
    from harness.backends.slurm.options import SlurmOptions

    return SlurmOptions(executor=executor, folder=str(tmp_path / "jobs"), **over)


@pytest.mark.parametrize("executor", ["debug", pytest.param("local", marks=pytest.mark.slow)])
def test_a_failed_shard_is_resubmitted_until_it_succeeds(tmp_path, executor):
    from harness.backends.slurm.jobs import run_shards

    failures = []
    run = run_shards(_options(tmp_path, executor, max_failures=3), "t", Flaky(str(tmp_path), fails=1),
                     {0: (1,), 1: (2,)}, on_failure=lambda i, why, final: failures.append((i, final)))  # fmt: skip
    assert run.results == {0: 10, 1: 20} and run.failed == {}
    assert sorted(failures) == [(0, False), (1, False)]
    assert run.failed_attempts == {0: 1, 1: 1}


def test_a_shard_failing_max_failures_times_is_reported_failed_not_as_a_result(tmp_path):
    from harness.backends.slurm.jobs import run_shards

    run = run_shards(_options(tmp_path, "debug", max_failures=2), "t", Flaky(str(tmp_path), fails=5),
                     {0: (1,), 1: (2,)})  # fmt: skip
    assert run.results == {}
    assert run.failed == {0: "RuntimeError: attempt 2 of shard 1 failed",
                          1: "RuntimeError: attempt 2 of shard 2 failed"}  # fmt: skip
    assert (tmp_path / "attempts-1").read_text() == "xx"  # exactly max_failures attempts


@pytest.mark.slow
def test_a_killed_local_job_is_resubmitted_and_finishes(tmp_path):
    from harness.backends.slurm.jobs import run_shards

    opts = _options(tmp_path, "local", max_failures=2, array_parallelism=2)
    run = run_shards(opts, "t", Flaky(str(tmp_path), fails=1, exit_first=True), {0: (1,), 1: (2,), 2: (3,)})
    assert run.results == {0: 10, 1: 20, 2: 30}
    assert run.failed_attempts == {0: 1, 1: 1, 2: 1}


def _session(tmp_path, tag, store, fill="local"):
    return tiny_session(tmp_path, SPECS, store=store, store_fill=fill, cache_dir=tmp_path / f"cache-{tag}")


def _records(tmp_path, url):
    reader = _session(tmp_path, "read", url, fill="none")
    return {e: reader.record_cache.records(e) for e in ("tiny-grid", "tiny-pairs")}


@pytest.mark.parametrize("executor", ["debug", pytest.param("local", marks=pytest.mark.slow)])
def test_score_shards_store_the_records_the_local_backend_stores(tmp_path, executor):
    from harness.commands.materialize import score_plan

    inline_url, slurm_url = (tmp_path / "inline").as_uri(), (tmp_path / f"slurm-{executor}").as_uri()
    inline = score_plan(_session(tmp_path, "inline", inline_url), backend="local")
    report: dict = {}
    opts = _options(tmp_path, executor, score_shard_groups=2)
    stats = score_plan(_session(tmp_path, executor, slurm_url), backend="slurm", slurm={"options": opts},
                       shard_report=report, log=lambda text: None)  # fmt: skip
    assert report == {"failed": {}, "size": 2}
    for evaluator in ("tiny-grid", "tiny-pairs"):
        assert stats[evaluator].scored_pairs == inline[evaluator].scored_pairs > 0
    expected = _records(tmp_path, inline_url)
    got = _records(tmp_path, slurm_url)
    for evaluator, frame in expected.items():
        assert got[evaluator].equals(frame)


def test_a_retry_of_chosen_score_shards_scores_only_those(tmp_path):
    from harness.commands.materialize import score_plan

    url = (tmp_path / "store").as_uri()
    opts = _options(tmp_path, "debug", score_shard_groups=1)
    first = score_plan(_session(tmp_path, "a", url), backend="slurm",
                       slurm={"options": opts, "only_shards": frozenset({0})}, log=lambda t: None)  # fmt: skip
    assert first["tiny-grid"].scored_pairs > 0 and first["tiny-pairs"].scored_pairs == 0
    rest = score_plan(_session(tmp_path, "b", url), backend="slurm", slurm={"options": opts}, log=lambda t: None)
    # shard 0 (tiny-grid's first scene group) was stored: the full run found it, redid nothing
    assert rest["tiny-grid"].cached_pairs == first["tiny-grid"].scored_pairs
    full = score_plan(_session(tmp_path, "c", (tmp_path / "ref").as_uri()), backend="local")
    assert rest["tiny-grid"].scored_pairs + first["tiny-grid"].scored_pairs == full["tiny-grid"].scored_pairs


def _fill_with_slurm(root: Path, url: str, executor: str) -> None:
    """Score the pytester project's plan into ``url`` on the Slurm backend (its conftest's
    renderer and evaluators, its pyproject's profile and scenes)."""
    from harness.backends.slurm.options import SlurmOptions
    from harness.commands.materialize import score_plan
    from harness.run.options import AuditOptions
    from harness.run.session import AuditSession
    from harness.testing import BoxRasterizer

    options = AuditOptions(profile="smoke", evaluators=("tiny-*",), scenes=root / "scenes",
                           cache_dir=root / "cache-slurm-fill", store=url, store_fill="local")  # fmt: skip
    session = AuditSession(options, renderer_factory=lambda _: BoxRasterizer(), extra_evaluators=SPECS)
    report: dict = {}
    opts = SlurmOptions(executor=executor, folder=str(root / "jobs"), score_shard_groups=3, array_parallelism=2)
    score_plan(session, backend="slurm", slurm={"options": opts}, shard_report=report, log=lambda t: None)
    assert report["failed"] == {}


@pytest.mark.slow
def test_an_audit_reading_a_store_the_slurm_backend_filled_matches_the_inline_audit(pytester):
    """The aggregated run: the store filled by score shards on the local executor (two
    processes at once), then read by ``-n 0`` and ``-n 2`` audits that compute nothing; their
    reports are byte-identical to an inline audit's (no store)."""
    root = make_project(pytester)
    url = (root / "store").as_uri()
    _fill_with_slurm(root, url, "local")
    inline = run_audit(pytester, "inline", "-n", "0")
    assert inline.ret == 0, inline.stdout.str()[-3000:]
    for tag, workers in (("read0", "0"), ("read2", "2")):
        read = run_audit(pytester, tag, "-n", workers, f"--audit-store={url}")
        assert read.ret == 0, read.stdout.str()[-3000:]
        assert comparable_files(report_dir(root, tag)) == comparable_files(report_dir(root, "inline"))


def test_warm_on_slurm_from_the_command_line_checks_the_shard_numbers(tmp_path, capsys):
    """The CLI plumbing (flags over the project table, submitit, the plan's shards): a shard
    number the plan does not have is one line naming the shard size to pass."""
    from harness.cli import main

    code = main(["warm", "--profile", "smoke", "--backend", "slurm", "--slurm-executor", "debug",
                 "--slurm-folder", str(tmp_path / "jobs"), "--store", (tmp_path / "s").as_uri(),
                 "--shard-size", "100", "--shards", "2,5"])  # fmt: skip
    err = capsys.readouterr().err
    assert code != 0 and "no shard 2,5: the plan has 2 shards of 100 renders" in err
    assert "--shard-size" in err and "Traceback" not in err


# -- renders through Blender: a job killed mid-run, resumed from the store --------------------


@pytest.fixture(scope="module")
def smoke_subset():
    """Render requests: the first smoke scene under c0, two more configs and one probe, at
    48 px and 2 samples (as the Ray backend's tests)."""
    from dataclasses import replace

    pytest.importorskip("bpy")
    from harness.protocol.profiles import get_profile
    from harness.render.cache_warmer import resolve_jobs
    from harness.render.job_plan import render_plan
    from harness.render.scene_inputs import apply_probe, load_profile_scenes

    profile = get_profile("smoke")
    sset = load_profile_scenes(profile)
    scene = sset.scenes[0]
    jobs = render_plan(profile, [scene])
    same_res = [j for j in jobs if j.probe is None and j.cfg.resolution_px == profile.c0.resolution_px]
    jobs = [*same_res[:3], next(j for j in jobs if j.probe == "keep_half")]
    small = [replace(j, cfg=replace(j.cfg, resolution_px=48, samples=2)) for j in jobs]
    requests, failures = resolve_jobs(small, [scene], sset.root, probe_fn=apply_probe)
    assert failures == [] and len(requests) == 4
    return requests


def _pngs(url: str) -> dict[str, bytes]:
    from harness.store import open_store

    store = open_store(url)
    return {k.split("/")[-2]: store.read(k) for k in store.list("renders/objects") if k.endswith("/image.png")}


@pytest.fixture(scope="module")
def reference_pngs(smoke_subset, tmp_path_factory):
    """The renders of an undisturbed run, made as the runs under test make theirs: in fresh job
    processes (local executor), not in this long-lived test worker whose Blender has rendered
    other tests' scenes, so the comparison is about resuming and nothing else."""
    from harness.backends.slurm.options import SlurmOptions
    from harness.backends.slurm.render import warm_slurm

    root = tmp_path_factory.mktemp("reference")
    url = (root / "store").as_uri()
    opts = SlurmOptions(executor="local", shard_size=2, folder=str(root / "jobs"))
    result = warm_slurm(smoke_subset, url, options=opts)
    assert (result.rendered, result.failures, result.shards) == (4, [], 2)
    return _pngs(url)


@pytest.mark.slow
def test_a_job_killed_mid_render_is_resubmitted_and_redoes_no_finished_render(smoke_subset, reference_pngs,
                                                                             tmp_path):  # fmt: skip
    from harness.backends.slurm.options import SlurmOptions
    from harness.backends.slurm.render import warm_slurm

    url = (tmp_path / "store").as_uri()
    opts = SlurmOptions(executor="local", shard_size=2, folder=str(tmp_path / "jobs"), max_failures=2)
    # the first job to start publishes one render, then dies inside its second (lease held)
    result = warm_slurm(smoke_subset, url, options=opts, fault_marker=str(tmp_path / "fault"), fault_after=1)
    assert (tmp_path / "fault").exists()
    assert result.failures == [] and result.failed_shards == {}
    assert (result.rendered, result.retries) == (4, 1)
    assert result.resumed == 1  # the killed job's finished render was found, not redone
    assert _pngs(url) == reference_pngs  # byte-identical to the undisturbed run
    again = warm_slurm(smoke_subset, url, options=opts)
    assert (again.rendered, again.cached) == (0, 4)


@pytest.mark.slow
def test_a_shard_out_of_attempts_is_failed_and_its_retry_renders_only_what_is_missing(smoke_subset,
                                                                                     reference_pngs, tmp_path):  # fmt: skip
    from harness.backends.slurm.options import SlurmOptions
    from harness.backends.slurm.render import warm_slurm

    url = (tmp_path / "store").as_uri()
    opts = SlurmOptions(executor="local", shard_size=2, folder=str(tmp_path / "jobs"), max_failures=1)
    result = warm_slurm(smoke_subset, url, options=opts, fault_marker=str(tmp_path / "fault"), fault_after=1)
    assert list(result.failed_shards) in ([0], [1])
    (shard,) = result.failed_shards
    assert len(result.failures) == 1  # its one unpublished render is a failure, not a score
    assert f"render shard {shard} failed 1 times" in result.failures[0]
    assert result.rendered == 3 and len(_pngs(url)) == 3
    retry = warm_slurm(smoke_subset, url, options=opts, only_shards=frozenset({shard}))
    assert (retry.total, retry.cached, retry.rendered, retry.failures) == (2, 1, 1, [])
    assert _pngs(url) == reference_pngs


def test_slurm_executor_without_slurm_is_one_line(tmp_path, monkeypatch):
    from harness.backends.slurm.jobs import run_shards
    from harness.core.errors import AuditError

    monkeypatch.setenv("PATH", str(tmp_path))  # no srun, no sbatch
    with pytest.raises(AuditError) as err:
        run_shards(_options(tmp_path, "slurm"), "t", Flaky(str(tmp_path), 0), {0: (1,)})
    text = err.value.render()
    assert "cannot submit to Slurm" in text and "--slurm-executor local" in text and "\n" not in text


def test_slurm_executor_gets_the_options_as_sbatch_parameters(tmp_path, monkeypatch):
    from harness.backends.slurm.options import make_executor

    srun = tmp_path / "bin" / "srun"
    srun.parent.mkdir()
    srun.write_text("#!/bin/sh\nexit 0\n")
    srun.chmod(0o755)
    monkeypatch.setenv("PATH", f"{srun.parent}:{os.environ['PATH']}")
    opts = _options(tmp_path, "slurm", partition="gpu", time_limit_min=90, gpus_per_task=1, cpus_per_task=8,
                    mem_gb=32.0, array_parallelism=16, max_failures=4)  # fmt: skip
    executor = make_executor(opts, "t3d-render")
    params = executor._executor.parameters
    assert params["partition"] == "gpu" and params["time"] == 90 and params["array_parallelism"] == 16
    assert params["cpus_per_task"] == 8 and params["mem"] == "32GB" and params["job_name"] == "t3d-render"
    assert params.get("gpus_per_node", params.get("gres")) in (1, "gpu:1")
    assert executor._executor.max_num_timeout == 4  # preemptions/timeouts requeued up to max_failures


def test_a_preempted_or_timed_out_shard_is_requeued_with_the_same_arguments():
    """What submitit does on a Slurm time limit or preemption: it asks the job's callable for
    its checkpoint and requeues that; ours is the same shard, which resumes from the store."""
    import submitit

    from harness.backends.slurm.render import RenderShard
    from harness.backends.slurm.score import ScoreShard

    for body, args in ((RenderShard(), ("file:///s", [], 60.0, "cpu", 1, "/o/t-0.txt")),
                       (ScoreShard(), (None, None, [], "tiny-grid", ["g1"]))):  # fmt: skip
        requeued = submitit.helpers.DelayedSubmission(body, *args)._checkpoint_function()
        assert requeued is not None and requeued.function is body and requeued.args == args


@pytest.mark.slow
def test_a_local_job_killed_from_outside_resumes_from_the_store(smoke_subset, reference_pngs, tmp_path):
    """SIGKILL a running local-executor job (its pid read from the shard's owners file) once
    it has published a render and holds the lease of the next: the shard is resubmitted, the
    new attempt breaks the dead lease, finds the finished render and does only the rest."""
    import signal
    import threading
    import time

    from harness.backends.slurm.options import SlurmOptions
    from harness.backends.slurm.render import warm_slurm

    url = (tmp_path / "store").as_uri()
    opts = SlurmOptions(executor="local", shard_size=4, folder=str(tmp_path / "jobs"), max_failures=2)
    out: dict = {}
    runner = threading.Thread(target=lambda: out.update(result=warm_slurm(
        smoke_subset, url, options=opts, fault_marker=str(tmp_path / "fault"), fault_after=1, fault_mode="hang")))
    runner.start()
    owners = tmp_path / "jobs" / "owners"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not (len(_pngs(url)) == 1 and owners.is_dir() and any(owners.iterdir())):
        time.sleep(0.2)
    time.sleep(3.0)  # the job is now inside its second render, which never publishes
    assert len(_pngs(url)) == 1
    (owner_file,) = owners.iterdir()
    pid = int(owner_file.read_text().split()[0].rsplit(":", 1)[1])
    os.kill(pid, signal.SIGKILL)
    runner.join(timeout=300)
    result = out["result"]
    assert result.failures == [] and result.retries == 1
    assert (result.rendered, result.resumed) == (4, 1)  # 1 found from the killed attempt, 3 made
    assert _pngs(url) == reference_pngs
    assert len(owner_file.read_text().split()) == 2  # two attempts, the second broke the first's lease
