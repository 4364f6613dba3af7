"""Sweeps through `--jobqueue slurm`: on a real single-node Slurm started here (rows equal a serial
run's; a driver killed halfway resumes to the same table, no row doubled), and every way the
job queue can fail (no `sbatch`, an `sbatch` that fails, a controller that does not answer, a
job that never starts, an `sbatch` that hangs) ends with exit 2 and one line, within a bounded
time, and writes nothing.

The real-Slurm tests need Debian's `slurm-wlm` and `munge` and root (`tests/peers/
slurm_single_node.py` starts the daemons); they skip elsewhere, unless COMMAWARE_REQUIRE_SLURM=1
(set by `.ci/run`, which installs the packages): then they run and fail with the reason. The
other tests make their own `sbatch` and PATH and run anywhere. Every command runs with a
timeout, so a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from commaware.experiments import sweep
from commaware.experiments.results import EXECUTION_COLUMNS
from conftest import EXAMPLES, requires_slurm_mark
from slurm_single_node import SingleNodeSlurm, slurm_available

requires_slurm = requires_slurm_mark(slurm_available(), "real Slurm sweep")

#: 24 runs of 0.05-0.3 s each: a few seconds on one worker, so the driver can be killed halfway.
GRID24 = """
command = "cosched.run"
[fixed]
jobs = 12
policy = "nls"
[grid]
interarrival_s = [100, 200]
seed = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
"""
#: One single-threaded worker per job, 1 GB; its worker exits 5 s after losing the driver.
JOB_OPTIONS = ("--jobqueue-option", "cores=1", "--jobqueue-option", "memory=1GB", "--jobqueue-option", "death_timeout=5")


def sweep_cli(*args: object, env: dict[str, str] | None = None, cwd: Path | None = None,
              timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`commaware sweep ARGS` in a subprocess, killed (and the test failed) after `timeout` s."""
    return subprocess.run([sys.executable, "-m", "commaware.cli", "sweep", *map(str, args)], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, cwd=cwd, timeout=timeout)


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The command's error, checked to be one `error:` line and exit 2, nothing on stdout, no
    traceback; progress lines may come first (one every 10 s: sbatch can be slow to give up)."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stdout == "" and "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines()
             if line.strip() and not re.fullmatch(r"sweep: .* \(\d+m\d\ds elapsed\)", line)]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


def stored_run_ids(out: Path) -> list[str]:
    """Every run_id of every Parquet file of a results directory (no de-duplication)."""
    return [rid for f in sorted((out / "rows").glob("*.parquet"))
            for rid in pq.read_table(f, columns=["run_id"]).column("run_id").to_pylist()]


def same_rows(table: pd.DataFrame, reference: pd.DataFrame) -> None:
    """The same runs in the same order with the same parameters and outputs (missing: None)."""
    def values(frame: pd.DataFrame, col: str) -> list[object]:
        return [None if pd.isna(v) else v for v in frame[col]]

    assert list(table["run_id"]) == list(reference["run_id"])
    for col in [c for c in reference.columns if c not in EXECUTION_COLUMNS]:
        assert values(table, col) == values(reference, col), col


# --- a real Slurm -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def slurm():
    if not slurm_available()[0]:
        pytest.fail(f"Slurm is required here (COMMAWARE_REQUIRE_SLURM=1): {slurm_available()[1]}")
    folder = tempfile.mkdtemp(prefix="commaware-slurm-")
    try:
        with SingleNodeSlurm(folder) as cluster:
            yield cluster
    finally:
        subprocess.run(["rm", "-rf", folder], check=False)


@pytest.fixture(scope="module")
def grid24(tmp_path_factory):
    """The spec and its serial reference table."""
    folder = tmp_path_factory.mktemp("grid24")
    spec = folder / "spec.toml"
    spec.write_text(GRID24)
    return spec, sweep.run(spec, folder / "reference", serial=True)


def submitted(slurm: SingleNodeSlurm) -> int:
    """Batch jobs the controller has accepted so far (its log says so once per job)."""
    log = slurm.folder / "log" / "slurmctld.log"
    return log.read_text(errors="replace").count("_slurm_rpc_submit_batch_job: JobId=") if log.exists() else 0


@requires_slurm
def test_a_sweep_on_slurm_gives_the_serial_rows(slurm, grid24, tmp_path):
    spec, reference = grid24
    before = submitted(slurm)
    proc = sweep_cli(spec, "--out", tmp_path / "out", "--jobqueue", "slurm", "--jobs", "2", *JOB_OPTIONS, "--json",
                     env=slurm.env(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr + "".join(p.read_text() for p in tmp_path.glob("slurm-*.out"))
    same_rows(pd.DataFrame(json.loads(proc.stdout)), reference)
    assert submitted(slurm) - before == 2  # the two workers really were Slurm jobs
    ids = stored_run_ids(tmp_path / "out")
    assert len(ids) == len(set(ids)) == 24


@requires_slurm
def test_a_driver_killed_halfway_on_slurm_resumes_to_the_same_table(slurm, grid24, tmp_path):
    spec, reference = grid24
    out = tmp_path / "out"
    args = [sys.executable, "-m", "commaware.cli", "sweep", str(spec), "--out", str(out), "--jobqueue", "slurm",
            *JOB_OPTIONS, "--quiet"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=slurm.env(), cwd=tmp_path,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while len(list((out / "rows").glob("*.parquet")) if (out / "rows").exists() else []) < 6:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the Slurm sweep stored too few rows in 90 s"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)  # the driver only: its worker, a Slurm job, is on its own
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    interrupted = stored_run_ids(out)
    assert 6 <= len(interrupted) < 24 and len(set(interrupted)) == len(interrupted), len(interrupted)
    # The orphaned worker gives up on the dead driver (death_timeout) and its job ends.
    deadline = time.monotonic() + 45
    while slurm.jobs() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert slurm.jobs() == [], "the killed driver's Slurm job is still in the queue after 45 s"

    resumed = sweep_cli(spec, "--out", out, "--jobqueue", "slurm", *JOB_OPTIONS, "--json", env=slurm.env(), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    same_rows(pd.DataFrame(json.loads(resumed.stdout)), reference)
    ids = stored_run_ids(out)
    assert len(ids) == len(set(ids)) == 24 and set(interrupted) <= set(ids)
    assert not [p for p in (out / "rows").iterdir() if p.name.endswith(".partial")]


@requires_slurm
def test_an_unreachable_slurm_controller_is_exit_2_without_results(slurm, tmp_path):
    # This cluster's munge, but a controller port where nothing listens: sbatch fails after
    # its own retries (about 10 s).
    with socket_port() as port:
        conf = tmp_path / "slurm.conf"
        conf.write_text("\n".join(f"SlurmctldPort={port}" if line.startswith("SlurmctldPort=") else line
                                  for line in slurm.conf.read_text().splitlines()) + "\n")
        started = time.monotonic()
        proc = sweep_cli(EXAMPLES / "sweeps" / "cosched.toml", "--out", tmp_path / "out", "--jobqueue", "slurm",
                         *JOB_OPTIONS, env={"SLURM_CONF": str(conf)}, cwd=tmp_path, timeout=90)
    line = one_line(proc)
    assert "--jobqueue: slurm: `sbatch` failed: " in line and "Unable to contact slurm controller" in line, line
    assert time.monotonic() - started < 60
    assert not (tmp_path / "out").exists()


class socket_port:  # noqa: N801 (a context manager used as a function)
    """A TCP port bound (so no one takes it) but never listened on: connections are refused."""

    def __enter__(self) -> int:
        import socket

        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        return int(self._sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self._sock.close()


# --- a job queue that fails, set up here ---------------------------------------------------------


def fake_commands(folder: Path, **scripts: str) -> dict[str, str]:
    """A folder holding only the given commands (name: shell script body), and the PATH of it."""
    folder.mkdir()
    for name, body in scripts.items():
        path = folder / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
    return {"PATH": str(folder)}


def test_a_job_queue_without_its_submit_command_is_refused_at_once(tmp_path):
    env = fake_commands(tmp_path / "bin")  # a PATH without sbatch, whatever this machine has
    started = time.monotonic()
    proc = sweep_cli(EXAMPLES / "sweeps" / "cosched.toml", "--out", tmp_path / "out", "--jobqueue", "slurm",
                     *JOB_OPTIONS, env=env, timeout=60)
    assert "error: --jobqueue: slurm: `sbatch` is not on PATH" in one_line(proc)
    assert time.monotonic() - started < 30
    assert not (tmp_path / "out").exists()


def test_a_failing_sbatch_is_exit_2_naming_its_error(tmp_path):
    env = fake_commands(tmp_path / "bin", sbatch='echo "sbatch: error: Batch job submission failed: Invalid account '
                                                 'or account/partition combination specified" >&2; exit 1')
    proc = sweep_cli(EXAMPLES / "sweeps" / "cosched.toml", "--out", tmp_path / "out", "--jobqueue", "slurm",
                     *JOB_OPTIONS, env=env, timeout=60)
    assert one_line(proc) == ("error: --jobqueue: slurm: `sbatch` failed: sbatch: error: Batch job submission failed: "
                              "Invalid account or account/partition combination specified")
    assert not (tmp_path / "out").exists()


def test_a_job_that_never_starts_is_cancelled_after_the_timeout(tmp_path):
    log = tmp_path / "scancel.log"
    env = fake_commands(tmp_path / "bin", sbatch='echo "Submitted batch job 4242"', scancel=f'echo "$@" >> {log}')
    # A results directory with rows already: it is left as it was.
    out = tmp_path / "out"
    first = sweep.run(EXAMPLES / "sweeps" / "cosched.toml", out, serial=True)
    (out / "rows" / "keep.txt").write_text("")
    before = sorted(p.name for p in (out / "rows").iterdir())
    started = time.monotonic()
    spec = tmp_path / "spec.toml"
    spec.write_text(GRID24)
    proc = sweep_cli(spec, "--out", out, "--jobqueue", "slurm", *JOB_OPTIONS, "--jobqueue-timeout", "3",
                     env=env, timeout=60)
    elapsed = time.monotonic() - started
    line = one_line(proc)
    assert "error: --jobqueue: slurm: no worker started within 3 s (--jobqueue-timeout): batch job 4242 " in line, line
    assert line.endswith("cancelled with `scancel`"), line
    assert log.read_text().split() == ["4242"]
    assert 3 <= elapsed < 30, elapsed
    assert sorted(p.name for p in (out / "rows").iterdir()) == before and len(first) == 12


def test_a_job_that_never_starts_without_scancel_says_so(tmp_path):
    env = fake_commands(tmp_path / "bin", sbatch='echo "Submitted batch job 77"')
    proc = sweep_cli(EXAMPLES / "sweeps" / "cosched.toml", "--out", tmp_path / "out", "--jobqueue", "slurm",
                     *JOB_OPTIONS, "--jobqueue-timeout", "2", env=env, timeout=60)
    line = one_line(proc)
    assert "batch job 77 submitted but not running" in line and "cancel the jobs yourself" in line, line
    assert not (tmp_path / "out").exists()


def test_an_sbatch_that_hangs_is_stopped_at_the_timeout(tmp_path):
    pid_file = tmp_path / "sbatch.pid"
    env = fake_commands(tmp_path / "bin", sbatch=f"echo $$ > {pid_file}; exec /bin/sleep 300")
    started = time.monotonic()
    proc = sweep_cli(EXAMPLES / "sweeps" / "cosched.toml", "--out", tmp_path / "out", "--jobqueue", "slurm",
                     *JOB_OPTIONS, "--jobqueue-timeout", "2", env=env, timeout=60)
    assert one_line(proc) == "error: --jobqueue: slurm: `sbatch` did not answer within 2 s (--jobqueue-timeout)"
    assert time.monotonic() - started < 30
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:  # killed, not left to submit later
        if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            break
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args,expected", [
    (["--jobqueue-timeout", "5"], "error: --jobqueue-timeout: goes with --jobqueue"),
    (["--jobqueue", "slurm", "--jobqueue-timeout", "0"], "Invalid value for '--jobqueue-timeout'"),
    (["--jobqueue", "slurm", "--jobqueue-timeout", "nan"], "error: --jobqueue-timeout: must be a positive number of seconds, got nan"),
])
def test_bad_jobqueue_timeouts_are_exit_2(tmp_path, args, expected):
    proc = sweep_cli(EXAMPLES / "sweeps" / "cosched.toml", "--out", tmp_path / "out", *args, timeout=60)
    assert proc.returncode == 2 and expected in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_sweep_left_without_workers_stops_after_the_timeout(tmp_path):
    """The jobs' wall time ends every worker: the sweep stops (TimeoutError, which the CLI makes
    exit 2) instead of waiting forever; the rows stored so far stay."""
    from distributed import Client, LocalCluster

    spec = tmp_path / "spec.toml"
    spec.write_text(GRID24)
    runs = sweep.load_spec(spec).runs
    out = tmp_path / "out"
    from commaware.experiments.results import open_store

    store = open_store(out, create=True)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        cluster.scale(0)  # every worker gone, as when the batch jobs end
        deadline = time.monotonic() + 30
        while client.scheduler_info().get("workers") and time.monotonic() < deadline:
            time.sleep(0.1)
        started = time.monotonic()
        with pytest.raises(TimeoutError, match=r"no worker left for 3 s \(--jobqueue-timeout\)"):
            sweep._run_dask(client, runs, str(store.path), "test", 1, lambda done: None, idle_timeout=3)
        assert 3 <= time.monotonic() - started < 20
    assert stored_run_ids(out) == []


def test_the_cli_defaults_are_the_apis():
    """--help states the defaults the API uses."""
    proc = subprocess.run([sys.executable, "-m", "commaware.cli", "sweep", "--help"], capture_output=True, text=True,
                          timeout=60)
    text = " ".join(proc.stdout.split())
    assert f"[default: {sweep.JOBQUEUE_TIMEOUT_S:g}]" in text and f"[default: {sweep.MAX_RUNS:,}]" in text
    assert sweep.JOBQUEUE_TIMEOUT_S >= 60  # a few minutes: a busy queue takes time to start a job
