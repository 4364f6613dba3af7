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
from commaware.api import is_goal_file
from commaware.goal import export_goal, goal_of, load_goal, simulate_loggp
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
    doc = json.loads(cli("simulate", EXAMPLES / "cluster16.json", bcast, "--model", "loggp", "--json", *note, check=True).stdout)
    assert [r["end_units"] for r in doc["ranks"]] == [20460, 21460, 21460, 22460, 31690, 32690, 32690, 33690]
    assert doc["model"] == "loggp" and doc["parameters_units"]["G"] == 10 and doc["makespan"] == pytest.approx(33690e-9)
    shown = cli("simulate", EXAMPLES / "cluster16.json", bcast, "--model", "loggp", check=True).stdout
    assert "34914" in shown and "model=loggp" in shown  # LogGOPSim's defaults: its README's example
    out = tmp_path / "ring.goal"
    assert cli("trace", "export", EXAMPLES / "ring.json", "--format", "goal", "-o", out, check=True).returncode == 0
    assert out.read_text().startswith("num_ranks 16\n\nrank 0 {\nl1: recv ")
    direct = json.loads(cli("simulate", EXAMPLES / "cluster16.json", EXAMPLES / "ring.json", "--model", "loggp", "--json",
                            check=True).stdout)
    via = json.loads(cli("simulate", EXAMPLES / "cluster16.json", out, "--format", "goal", "--model", "loggp", "--json",
                         check=True).stdout)
    assert direct["ranks"] == via["ranks"]


@pytest.mark.parametrize(("args", "message"), [
    (["--smpi", "simgrid-3.32"], "SMPI's timing model tells MPI's calls apart"),
    (["--param", "X=1"], "unknown loggp parameter"),
    (["--param", "L=1.5e-9"], "not a whole number"),
    (["--gantt", "x.svg"], "--gantt not available"),
    (["--goal-calc-unit", "-1"], "--goal-calc-unit"),
])
def test_cli_refusals(cli, args, message):
    loggp = [] if args[0] == "--smpi" else ["--model", "loggp"]
    proc = cli("simulate", EXAMPLES / "cluster16.json", DATA / "hand" / "note_bcast8.goal", *loggp, *args)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_bad_goal_files_name_the_line(cli, tmp_path):
    bad = tmp_path / "bad.goal"
    bad.write_text("num_ranks 2\nrank 0 {\nl1: send 8b to 1\nl1 requires l9\n}\nrank 1 {\n}\n")
    proc = cli("simulate", EXAMPLES / "cluster16.json", bad, "--model", "loggp")
    assert proc.returncode == 2 and "bad.goal: line 4: rank 0: 'l9' is not the label" in proc.stderr
    missing = cli("simulate", EXAMPLES / "cluster16.json", tmp_path / "none.goal", "--format", "goal")
    assert missing.returncode == 2 and "no such GOAL file" in missing.stderr


TI_REAL = Path(__file__).resolve().parents[1] / "data" / "ti_real" / "npb_hpcc_8.tar.xz"


@pytest.fixture(scope="module")
def npb(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("npb")
    with tarfile.open(TI_REAL) as tar:
        tar.extractall(folder, filter="data")
    return folder


@pytest.mark.parametrize("model", ["maxmin", "contention_free", "myrinet"])
def test_ti_to_goal_to_replay_gives_the_ti_makespan(npb, tmp_path, model):
    """Each rank's sequence as a chain, replayed as a graph by the flow engine: every rank ends
    when it ends in the trace's own replay (calc units of 1 fs keep the computes exact; see
    test_calc_units_round_lu_s_computes)."""
    from commaware import simulate

    platform = EXAMPLES / "cluster16.json"
    traces = [npb / "lu.S" / "index.txt", npb / "mg.S" / "index.txt", npb / "ft.S" / "index.txt",
              DATA.parent / "ti_colls" / "index.txt", EXAMPLES / "ring.json", EXAMPLES / "master_worker.json"]
    for source in traces:
        goal = export_goal(source, tmp_path / f"{source.parent.name}-{source.stem}.goal", platform=platform, unit=1e-15)
        original = simulate(platform, source, model=model, record_messages=False, record_timeline=False)
        replayed = simulate(platform, load_trace(goal, goal_calc_unit=1e-15), model=model, record_messages=False,
                            record_timeline=False)
        assert replayed.makespan == pytest.approx(original.makespan, rel=1e-9), source
        assert replayed.rank_columns["end"] == pytest.approx(original.rank_columns["end"], rel=1e-9, abs=1e-12), source
        assert replayed.message_stats["count"] == original.message_stats["count"]


def test_calc_units_round_lu_s_computes(npb, tmp_path):
    """The figure docs/traces.md quotes: a GOAL calc is a whole number of units, so 1 ps units
    round LU.S's computes by about 1e-8 of its makespan, and 1 fs units keep it exact here."""
    from commaware import simulate

    platform, source = EXAMPLES / "cluster16.json", npb / "lu.S" / "index.txt"
    original = simulate(platform, source, record_messages=False, record_timeline=False).makespan
    drift = {}
    for unit in (1e-15, 1e-12):
        goal = export_goal(source, tmp_path / f"lu-{unit:g}.goal", platform=platform, unit=unit)
        replayed = simulate(platform, load_trace(goal, goal_calc_unit=unit), record_messages=False,
                            record_timeline=False).makespan
        drift[unit] = abs(replayed - original) / original
    assert drift[1e-15] <= 1e-12
    assert 1e-9 < drift[1e-12] < 1e-7, drift


@pytest.mark.parametrize(("body", "message"), [
    # features.goal's rank 0, op 3: a send on a second NIC
    (None, "rank 0, op 3 (line order): cpu or nic other than 0"),
    ("num_ranks 2\nrank 0 {\nsend 8b to 1 tag -1\n}\nrank 1 {\nrecv 8b from 0\n}\n",
     "rank 0, op 1 (line order): a send with tag -1 (LogGOPSim's wildcard) has no MPI meaning"),
])
def test_the_flow_replay_refuses_what_only_loggp_runs(cli, tmp_path, body, message):
    path = DATA / "hand" / "features.goal"
    if body is not None:
        path = tmp_path / "wild.goal"
        path.write_text(body)
    proc = cli("simulate", EXAMPLES / "cluster16.json", path, "--json")
    assert proc.returncode == 2 and message in proc.stderr and "(use --model loggp)" in proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert cli("simulate", EXAMPLES / "cluster16.json", path, "--model", "loggp", "--json").returncode == 0


def test_the_flow_replay_starts_an_op_when_its_dependencies_are_met(tmp_path):
    """A receive posted first, a calc that needs only its start (irequires) and a send that needs
    its end (requires): the calc overlaps the transfer, the send waits for it."""
    from commaware import simulate

    path = tmp_path / "overlap.goal"
    path.write_text("num_ranks 2\nrank 0 {\nr: recv 1000000b from 1\nc: calc 5000000\nc irequires r\ns: send 8b to 1\n"
                    "s requires r\n}\nrank 1 {\nsend 1000000b to 0\nrecv 8b from 0\n}\n")
    platform = {"hosts": [{"name": "a", "speed": 1e9}, {"name": "b", "speed": 1e9}],
                "network": {"bandwidth": 1e8, "latency": 0}}
    run = simulate(platform, load_trace(path), record_timeline=False)
    ends = run.rank_columns["end"]
    # the 1 MB transfer takes 10 ms at 1e8 B/s; the 5 ms calc runs meanwhile; rank 0 sends at
    # 10 ms, its 8 bytes take 80 ns
    assert ends[0] == pytest.approx(0.01, rel=1e-6) and ends[1] == pytest.approx(0.01 + 8e-8, rel=1e-6)
    cycle = tmp_path / "cycle.goal"
    cycle.write_text("num_ranks 1\nrank 0 {\na: calc 1\nb: calc 1\na requires b\nb requires a\n}\n")
    with pytest.raises(_core.DeadlockError, match="never ran"):
        simulate(platform, load_trace(cycle))
    with pytest.raises(_core.TraceError, match="graph of operations, not a sequence"):
        export_ti(load_trace(path), tmp_path / "ti-out")
