"""DUMPI traces in (issue 42, item 1): sst-dumpi's binary traces of real programs, read by the
core's native reader, against commaware's own recording of the same runs.

tests/data/dumpi/dumpi_runs.tar.xz holds eight real runs (NPB IS at 4 and 16 ranks, CG, MG, LU,
FT class S, commaware's ring, sst-dumpi's testmpi), each recorded once by libdumpi and by
commaware's recorder stacked in the same processes (tests/data/dumpi/README.md). Checked: every
rank's ops, compute left aside, are the same in both recordings (peers, bytes, tags, requests,
communicators, order), so the replays of their communication end at the same time; compute
becomes flops at --traced-speed; what cannot be replayed (testmpi's cancels and MPI_Comm_create)
is refused with its count; damaged files are clear errors (exit 2) naming the file.
"""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest

from commaware import _core, load_trace, simulate
from commaware.traces.export import export_json

ARCHIVE = Path(__file__).resolve().parents[1] / "data" / "dumpi" / "dumpi_runs.tar.xz"
RUNS = ["ring-4", "is.S-4", "is.S-16", "cg.S-4", "mg.S-4", "lu.S-4", "ft.S-4"]
PLATFORM = {"cluster": {"count": 16, "speed": 1e9, "prefix": "n"}, "network": {"bandwidth": 1.25e9, "latency": 2e-6}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("dumpi")
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(folder, filter="data")
    return folder


def meta(runs: Path, run: str) -> Path:
    (found,) = (runs / run / "dumpi").glob("*.meta")
    return found


def ops(trace, tmp_path: Path) -> list[list[dict]]:
    """The trace's ops per rank (through `trace export --format json`), compute left aside."""
    out = tmp_path / "ops.json"
    export_json(trace, out)
    return [[op for op in rank if op["op"] != "compute"] for rank in json.loads(out.read_text())["ranks"]]


def without_compute(spec: list[list[dict]]) -> dict:
    return {"ranks": spec}


@pytest.mark.parametrize("run", RUNS)
def test_same_ops_and_communication_time_as_commaware_recording(runs, run, tmp_path):
    dumpi = load_trace(meta(runs, run))
    mine = load_trace(runs / run / "commaware.json")
    assert dumpi.dumpi_stats["calls"] > 0 and dumpi.n_ranks == mine.n_ranks == int(run.rsplit("-", 1)[1])
    a, b = ops(dumpi, tmp_path), ops(mine, tmp_path)
    assert sum(map(len, a)) > 0
    for rank, (x, y) in enumerate(zip(a, b, strict=True)):
        assert x == y, f"rank {rank}: {next((i, u, v) for i, (u, v) in enumerate(zip(x, y)) if u != v)}"
    # The same communication gives the same replay (the compute bursts are each recorder's own
    # measure of the gaps between calls: DUMPI's include its own time per call, commaware's not).
    ends = [simulate(PLATFORM, without_compute(s), record_messages=False, record_timeline=False).makespan for s in (a, b)]
    assert ends[0] > 0 and abs(ends[0] - ends[1]) <= 1e-9


def test_counts_match_the_trace_footer(runs):
    """CG's 6,720 sends, irecvs and waits (dumpi2ascii's footer counts, in the manifest)."""
    trace = load_trace(meta(runs, "cg.S-4"))
    summary = trace.summary()
    assert summary["ops_per_kind"]["send"] == 6720 and summary["ops_per_kind"]["irecv"] == 6720
    assert summary["ops_per_kind"]["wait"] == 6720
    assert trace.dumpi_stats["calls"] == 20188


def test_traced_speed_turns_compute_into_flops(runs, tmp_path):
    seconds = load_trace(meta(runs, "ring-4"))
    flops = load_trace(meta(runs, "ring-4"), traced_speed=2e9)
    out_s, out_f = tmp_path / "s.json", tmp_path / "f.json"
    export_json(seconds, out_s)
    export_json(flops, out_f)
    a = [op for rank in json.loads(out_s.read_text())["ranks"] for op in rank if op["op"] == "compute"]
    b = [op for rank in json.loads(out_f.read_text())["ranks"] for op in rank if op["op"] == "compute"]
    assert len(a) == len(b) > 0
    assert all(y["flops"] == pytest.approx(2e9 * x["seconds"], rel=1e-12) for x, y in zip(a, b))


def test_cli_simulate_show_and_export(runs, cli, tmp_path):
    m = meta(runs, "is.S-4")
    by_meta = json.loads(cli("simulate", "examples/cluster16.json", m, "--json", check=True).stdout)
    by_folder = json.loads(cli("simulate", "examples/cluster16.json", m.parent, "--format", "dumpi", "--json",
                               check=True).stdout)
    assert by_meta["makespan"] == by_folder["makespan"] > 0
    shown = json.loads(cli("trace", "show", m, "--json", check=True).stdout)
    assert shown["ranks"] == 4 and shown["ops_per_kind"]["alltoallv"] == 44
    out = tmp_path / "is.json"
    cli("trace", "export", m, "--format", "json", "-o", out, check=True)
    again = json.loads(cli("simulate", "examples/cluster16.json", out, "--json", check=True).stdout)
    assert again["makespan"] == by_meta["makespan"]


def bad(cli, *args):
    proc = cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr
    assert proc.stdout == ""
    return proc.stderr


def test_refused_calls_are_named_with_their_count(runs, cli):
    m = meta(runs, "testmpi-4")
    with pytest.raises(_core.TraceError) as info:
        load_trace(m)
    assert "MPI_Cancel: 24 calls" in str(info.value) and "MPI_Comm_create (4)" in str(info.value)
    assert str(m) in str(info.value)
    err = bad(cli, "simulate", "examples/cluster16.json", m)
    assert "MPI_Cancel: 24 calls" in err


def copy_run(runs: Path, tmp_path: Path, run: str = "ring-4") -> Path:
    target = tmp_path / run
    shutil.copytree(runs / run / "dumpi", target)
    (found,) = target.glob("*.meta")
    return found


def load_error(meta: Path, cli) -> str:
    """The reading's error message (the API's: the CLI shortens long paths), after checking
    that the CLI exits 2 on it with nothing on stdout."""
    bad(cli, "simulate", "examples/cluster16.json", meta, "--format", "dumpi")
    with pytest.raises(_core.TraceError) as info:
        load_trace(meta, format="dumpi")
    return str(info.value)


def test_truncated_rank_file(runs, cli, tmp_path):
    m = copy_run(runs, tmp_path)
    victim = sorted(m.parent.glob("*-0002.bin"))[0]
    victim.write_bytes(victim.read_bytes()[:300])
    err = load_error(m, cli)
    assert str(victim) in err and "index" in err


def test_corrupt_record(runs, cli, tmp_path):
    m = copy_run(runs, tmp_path)
    victim = sorted(m.parent.glob("*-0001.bin"))[0]
    data = bytearray(victim.read_bytes())
    data[16:18] = (0xFFF0).to_bytes(2, "big")  # the first record's function label
    victim.write_bytes(bytes(data))
    err = load_error(m, cli)
    assert str(victim) in err and "unknown function label 65520" in err


def test_missing_rank_file_and_bad_meta(runs, cli, tmp_path):
    m = copy_run(runs, tmp_path)
    gone = sorted(m.parent.glob("*-0003.bin"))[0]
    gone.unlink()
    err = load_error(m, cli)
    assert str(gone) in err and "cannot open" in err
    m.write_text(m.read_text().replace("numprocs=4", "numprocs=four"))
    err = load_error(m, cli)
    assert str(m) in err and "numprocs" in err
    other = tmp_path / "other.meta"
    other.write_text("hello\n")
    assert "not a DUMPI .meta file" in load_error(other, cli)


def test_persistent_requests_post_at_each_start(tmp_path):
    """tests/peers/dumpi_persistent.c: three MPI_Startall + MPI_Waitall rounds, then MPI_Start
    and MPI_Wait on each request, every start a new request."""
    trace = load_trace(Path(ARCHIVE).parent / "persistent-3", format="dumpi")
    for r, rank in enumerate(ops(trace, tmp_path)):
        left, right = (r + 2) % 3, (r + 1) % 3
        round_ = [{"op": "irecv", "src": left, "tag": 5}, {"op": "isend", "dst": right, "bytes": 800.0, "tag": 5, "sync": False}]
        assert rank == round_ + [{"op": "waitall"}] + round_ + [{"op": "waitall"}] + round_ + [{"op": "waitall"}] + round_ + [
            {"op": "wait", "req": 7}, {"op": "wait", "req": 6}]
    result = simulate(PLATFORM, trace, record_messages=True, record_timeline=False)
    assert len(result.messages) == 3 * 4 and set(result.messages["bytes"]) == {800.0}
