"""GOAL in and out, and the loggp model (issue 42, item 2).

tests/data/goal/ holds LogGOPSim's end times for 38 schedules (34 written by its own schedgen,
8 to 1,024 ranks, and four by hand) under four parameter sets: 152 runs of LogGOPSim built from
its public source (tests/data/goal/README.md; tests/peers/loggopsim_run.py made them). The
loggp model must give every rank's end time and LogGOPSim's event count exactly, and the same
unmatched queues where LogGOPSim deadlocks. Any trace converts to GOAL; the written file reads
back as the same graph; the CLI's errors are one line and exit 2.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from commaware import _core, load_trace
from commaware.goal import export_goal, goal_of, is_goal_file, load_goal, simulate_loggp
from commaware.traces.export import export_ti

DATA = Path(__file__).resolve().parents[1] / "data" / "goal"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
REFERENCE = json.loads((DATA / "loggopsim_reference.json").read_text())


@pytest.fixture(scope="module")
def schedules(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("goal")
    with tarfile.open(DATA / "schedgen.tar.xz") as tar:
        tar.extractall(folder, filter="data")
    return folder


def path_of(schedules: Path, name: str) -> Path:
    file = REFERENCE["schedules"][name]["file"]
    return schedules / file if file.startswith("schedgen/") else DATA / file


def seconds(params: dict[str, int]) -> dict[str, float]:
    """LogGOPSim's integer nanoseconds as loggp's seconds (S stays bytes)."""
    return {k: (float(params[k]) if k == "S" else params[k] * 1e-9) for k in ("L", "o", "g", "G", "O", "S")}


def outcome(result, n: int) -> dict:
    """The result in the reference's form."""
    if not result.unmatched:
        return {"end": result.ends_units, "events": result.events}
    left = {h: (q, m) for h, q, m in result.unmatched}
    return {"unmatched": {"receive_queue": [left.get(h, (0, 0))[0] for h in range(n)],
                          "unexpected_queue": [left.get(h, (0, 0))[1] for h in range(n)]}, "events": result.events}


def test_loggopsim_end_times_on_its_own_schedules(schedules):
    runs = disagree = 0
    for name in REFERENCE["schedules"]:
        schedule = load_goal(path_of(schedules, name))
        for set_name, expected in REFERENCE["results"][name].items():
            result = simulate_loggp(schedule, params=seconds(REFERENCE["parameters"][set_name]), check=False)
            want = {k: expected[k] for k in ("end", "unmatched", "events") if k in expected}
            runs += 1
            if outcome(result, schedule.n_ranks) != want:
                disagree += 1
                print(f"{name} {set_name}: ours {outcome(result, schedule.n_ranks)} LogGOPSim {want}")
    assert (runs, disagree) == (152, 0)


def test_the_two_deadlocks_of_loggopsim_are_errors_by_default(schedules):
    with pytest.raises(_core.DeadlockError, match="receives and .* messages unmatched"):
        simulate_loggp(path_of(schedules, "allreduce_ring_64"), params=seconds(REFERENCE["parameters"]["note"]))


def test_written_schedules_read_back_as_the_same_runs(schedules, tmp_path):
    for name in ("resnet_8", "linear_alltoallv_64", "features", "nwaydissemination2_64", "binomialtreebcast_1024"):
        original = load_goal(path_of(schedules, name))
        copy = load_goal(original.write(tmp_path / f"{name}.goal"))
        assert (copy.n_ranks, copy.n_ops, copy.n_deps) == (original.n_ranks, original.n_ops, original.n_deps)
        for set_name in ("default", "rendezvous"):
            params = seconds(REFERENCE["parameters"][set_name])
            ours = simulate_loggp(copy, params=params, check=False)
            assert outcome(ours, copy.n_ranks) == outcome(simulate_loggp(original, params=params, check=False), copy.n_ranks)
        assert not any(line[:1] in (" ", "\t") for line in (tmp_path / f"{name}.goal").read_text().splitlines())


def test_a_trace_becomes_chains_and_survives_the_file(tmp_path):
    # TI -> GOAL text -> loggp gives what the TI trace gives under loggp directly
    ti = export_ti(EXAMPLES / "alltoall.json", tmp_path / "ti")
    trace = load_trace(ti)
    direct = simulate_loggp(trace)
    written = export_goal(trace, tmp_path / "a2a.goal")
    assert is_goal_file(written)
    via_file = simulate_loggp(written)
    assert via_file.ends_units == direct.ends_units and via_file.events == direct.events
    assert direct.makespan > 0
    schedule = goal_of(trace)
    assert schedule.n_ranks == 16 and schedule.n_ops == load_goal(written).n_ops
    assert schedule.conversion == {"tests": 0, "waitany_as_waitall": 0, "synchronous_sends": 0}


def test_computes_take_the_platform_host_speed(tmp_path, write_json):
    trace = {"ranks": [[{"op": "compute", "flops": 2e6}], [{"op": "compute", "seconds": 3e-6}]]}
    platform = {"hosts": [{"name": "a", "speed": 1e12}, {"name": "b", "speed": 1e9}], "network": {"bandwidth": 1e9, "latency": 0}}
    on = simulate_loggp(write_json("t.json", trace), platform=write_json("p.json", platform))
    # 2e6 flops at 1e12 flop/s is 2 us; 3 us of compute stays 3 us
    assert on.ends_units == [2000, 3000]
    assert simulate_loggp(write_json("t2.json", trace)).ends_units == [2_000_000, 3000]  # 1e9 flop/s by default


def test_units_and_parameters():
    note = {"L": 1e-6, "o": 0, "g": 0, "G": 1e-8, "O": 0}
    ns = simulate_loggp(DATA / "hand" / "note_bcast8.goal", params=note)
    assert ns.ends_units[7] == 33690 and ns.ends[7] == pytest.approx(33690e-9, rel=1e-12)
    # the same run counted in microseconds: calc and parameters in units of 1e-6 s
    us = simulate_loggp(DATA / "hand" / "note_bcast8.goal", params={"L": 1e-3, "o": 0, "g": 0, "G": 1e-5, "O": 0}, unit=1e-6)
    assert us.ends_units == ns.ends_units
    with pytest.raises(_core.OptionsError, match="--param: G: .*not a whole number of time units"):
        simulate_loggp(DATA / "hand" / "note_bcast8.goal", params={"G": 1e-8}, unit=1e-6)
    with pytest.raises(_core.OptionsError, match="--goal-calc-unit"):
        simulate_loggp(DATA / "hand" / "note_bcast8.goal", unit=0)


def test_zero_byte_wrap_is_an_error_not_a_huge_time(write_json, tmp_path):
    path = tmp_path / "zero.goal"
    path.write_text("num_ranks 2\nrank 0 {\nsend 0b to 1\n}\nrank 1 {\nrecv 0b from 0\n}\n")
    with pytest.raises(_core.TraceError, match="wrapped around on a 0-byte message"):
        simulate_loggp(path, params={"o": 0, "O": 3e-9})
    assert simulate_loggp(path, params={"L": 1e-6, "o": 1e-7, "g": 0, "G": 1e-8, "O": 3e-9}).ends_units == [97, 1197]


def test_cli_simulate_and_export(cli, tmp_path):
    bcast = DATA / "hand" / "note_bcast8.goal"
    note = ["--param", "L=1e-6", "--param", "o=0", "--param", "g=0", "--param", "G=1e-8", "--param", "O=0"]
    doc = json.loads(cli("simulate", EXAMPLES / "cluster16.json", bcast, "--json", *note, check=True).stdout)
    assert [r["end_units"] for r in doc["ranks"]] == [20460, 21460, 21460, 22460, 31690, 32690, 32690, 33690]
    assert doc["model"] == "loggp" and doc["parameters_units"]["G"] == 10 and doc["makespan"] == pytest.approx(33690e-9)
    shown = cli("simulate", EXAMPLES / "cluster16.json", bcast, check=True).stdout
    assert "34914" in shown and "model=loggp" in shown  # LogGOPSim's defaults: its README's example
    out = tmp_path / "ring.goal"
    assert cli("trace", "export", EXAMPLES / "ring.json", "--format", "goal", "-o", out, check=True).returncode == 0
    assert out.read_text().startswith("num_ranks 16\n\nrank 0 {\nl1: recv ")
    direct = json.loads(cli("simulate", EXAMPLES / "cluster16.json", EXAMPLES / "ring.json", "--model", "loggp", "--json",
                            check=True).stdout)
    via = json.loads(cli("simulate", EXAMPLES / "cluster16.json", out, "--format", "goal", "--json", check=True).stdout)
    assert direct["ranks"] == via["ranks"]


@pytest.mark.parametrize(("args", "message"), [
    (["--model", "maxmin"], "runs under --model loggp"),
    (["--param", "X=1"], "unknown loggp parameter"),
    (["--param", "L=1.5e-9"], "not a whole number"),
    (["--gantt", "x.svg"], "--gantt not available"),
    (["--goal-calc-unit", "-1"], "--goal-calc-unit"),
])
def test_cli_refusals(cli, args, message):
    proc = cli("simulate", EXAMPLES / "cluster16.json", DATA / "hand" / "note_bcast8.goal", *args)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_bad_goal_files_name_the_line(cli, tmp_path):
    bad = tmp_path / "bad.goal"
    bad.write_text("num_ranks 2\nrank 0 {\nl1: send 8b to 1\nl1 requires l9\n}\nrank 1 {\n}\n")
    proc = cli("simulate", EXAMPLES / "cluster16.json", bad)
    assert proc.returncode == 2 and "bad.goal: line 4: rank 0: 'l9' is not the label" in proc.stderr
    missing = cli("simulate", EXAMPLES / "cluster16.json", tmp_path / "none.goal", "--format", "goal")
    assert missing.returncode == 2 and "no such GOAL file" in missing.stderr
