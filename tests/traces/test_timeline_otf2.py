"""`simulate --timeline FILE.otf2` (issue 27, items 4 and 6): the simulated run as an OTF2
archive, read back by an independent tool, Debian's otf2-tools (`otf2-print`), which must read
it without an error and count the events we wrote: an Enter and a Leave per trace operation,
an MpiSend and an MpiRecv per message of the `--json` document. CI installs otf2-tools
(.ci/run, with pajeng) and sets COMMAWARE_REQUIRE_PAJENG=1, so there these tests cannot skip."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from conftest import EXAMPLES, requires_peer_mark

from commaware.api import load_trace


def otf2_print_available() -> tuple[bool, str]:
    if shutil.which("otf2-print") is None:
        return False, "otf2-print is not on PATH (Debian: apt-get install otf2-tools)"
    return True, ""


requires_otf2_print = requires_peer_mark(otf2_print_available(), "OTF2 timeline", "otf2-tools",
                                         "COMMAWARE_REQUIRE_PAJENG")


def printed(anchor: Path) -> Counter:
    """otf2-print's event records of `anchor` by kind (it must read the archive without a complaint)."""
    proc = subprocess.run(["otf2-print", str(anchor)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    kinds = Counter()
    for line in proc.stdout.splitlines():
        word = line.split(" ", 1)[0]
        if word in ("ENTER", "LEAVE") or word.startswith("MPI_"):
            kinds[word] += 1
    return kinds


@requires_otf2_print
@pytest.mark.parametrize("trace", ["ring.json", "alltoall.json", "bcast_barrier.json", "master_worker.json"])
def test_otf2_print_reads_it_and_counts_our_events(cli, tmp_path, trace):
    """An Enter and a Leave per op and per rank's MPI_Finalize; inside, the records Score-P's
    adapter writes for each op (counted from the trace): MpiSend per send, MpiRecv per
    receive, MpiIsend and its completion per isend, MpiIrecvRequest and MpiIrecv per irecv,
    MpiCollectiveBegin and End per collective (none for a collective's own messages)."""
    anchor = tmp_path / "run.otf2"
    cli("simulate", EXAMPLES / "cluster16.json", EXAMPLES / trace, "--timeline", anchor, check=True)
    doc = json.loads((EXAMPLES / trace).read_text())
    kind = Counter(op["op"] for rank in doc["ranks"] for op in rank)
    ops, ranks = sum(kind.values()), len(doc["ranks"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "run.def", "run.otf2"]  # nothing partial left
    collectives = sum(v for k, v in kind.items() if k not in
                      ("compute", "sleep", "send", "recv", "isend", "irecv", "sendrecv", "wait", "waitall", "waitany", "test"))
    want = Counter(ENTER=ops + ranks, LEAVE=ops + ranks, MPI_SEND=kind["send"] + kind["sendrecv"],
                   MPI_RECV=kind["recv"] + kind["sendrecv"], MPI_ISEND=kind["isend"], MPI_ISEND_COMPLETE=kind["isend"],
                   MPI_IRECV_REQUEST=kind["irecv"], MPI_IRECV=kind["irecv"], MPI_COLLECTIVE_BEGIN=collectives,
                   MPI_COLLECTIVE_END=collectives)
    assert printed(anchor) == +want


@requires_otf2_print
def test_rewriting_replaces_the_archive_and_our_reader_reads_it(cli, tmp_path):
    anchor = tmp_path / "run.otf2"
    for trace in ("alltoall.json", "ring.json"):
        cli("simulate", EXAMPLES / "cluster16.json", EXAMPLES / trace, "--timeline", anchor, check=True)
    kinds = printed(anchor)
    assert kinds["ENTER"] == load_trace(EXAMPLES / "ring.json").n_ops + 16  # and each rank's MPI_Finalize
    # Our reader takes it back: the same messages between the same ranks.
    shown = json.loads(cli("trace", "show", anchor, "--json", check=True).stdout)
    want = json.loads(cli("trace", "show", EXAMPLES / "ring.json", "--json", check=True).stdout)
    assert shown["ranks"] == want["ranks"]
    assert shown["point_to_point"] == want["point_to_point"]


def test_a_failed_run_leaves_no_archive(cli, tmp_path):
    bad = tmp_path / "deadlock.json"
    bad.write_text(json.dumps({"ranks": [[{"op": "recv", "src": 1}], [{"op": "recv", "src": 0}]]}))
    proc = cli("simulate", EXAMPLES / "cluster16.json", bad, "--timeline", tmp_path / "run.otf2")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["deadlock.json"]


def every_kind(n: int = 4) -> dict:
    """Every trace operation: blocking, synchronous and non-blocking point-to-point (eager and
    rendezvous sizes, a wildcard source and tag), every wait and test, a failed test, every
    collective, communicators made by comm_split and comm_dup and used, sleep and compute."""
    ranks = []
    for r in range(n):
        right, left = (r + 1) % n, (r - 1) % n
        ops = [
            {"op": "compute", "flops": 1e6 * (r + 1)},
            {"op": "sendrecv", "dst": right, "bytes": 3000, "tag": 1, "src": left, "recvtag": 1},
            {"op": "irecv", "src": left, "tag": 2}, {"op": "isend", "dst": right, "bytes": 200_000, "tag": 2},
            {"op": "test", "req": 0}, {"op": "compute", "flops": 2e6}, {"op": "wait", "req": 1}, {"op": "wait", "req": 0},
            {"op": "irecv", "src": left, "tag": 3}, {"op": "isend", "dst": right, "bytes": 5000, "tag": 3, "sync": True},
            {"op": "waitany", "reqs": [2, 3]}, {"op": "waitall"},
        ]
        if r % 2 == 0:
            ops += [{"op": "send", "dst": r + 1, "bytes": 90_000, "tag": 4, "sync": True},
                    {"op": "recv", "src": r + 1, "tag": 5}]
        else:
            ops += [{"op": "recv", "src": "any", "tag": "any"}, {"op": "sleep", "seconds": 0.0005},
                    {"op": "send", "dst": r - 1, "bytes": 70_000, "tag": 5}]
        ops += [
            {"op": "irecv", "src": "any", "tag": "any"}, {"op": "isend", "dst": right, "bytes": 1000, "tag": 6},
            {"op": "waitall"},
            {"op": "barrier"}, {"op": "bcast", "root": 1, "bytes": 100_000}, {"op": "reduce", "root": 2, "bytes": 50_000},
            {"op": "allreduce", "bytes": 80_000}, {"op": "gather", "root": 3, "bytes": 4000},
            {"op": "gatherv", "root": 0, "bytes": [1000 * (k + 1) for k in range(n)]},
            {"op": "scatter", "root": 1, "bytes": 6000},
            {"op": "scatterv", "root": 2, "bytes": [700 * (k + 1) for k in range(n)]},
            {"op": "allgather", "bytes": 3000}, {"op": "allgatherv", "bytes": [500 * (k + 1) for k in range(n)]},
            {"op": "alltoall", "bytes": 2000}, {"op": "alltoallv", "bytes": [900] * n},
            {"op": "reduce_scatter", "bytes": [400 * (k + 1) for k in range(n)]},
            {"op": "scan", "bytes": 700}, {"op": "exscan", "bytes": 900},
            {"op": "comm_split", "color": r % 2, "key": -r}, {"op": "bcast", "root": 0, "bytes": 30_000, "comm": 1},
            {"op": "comm_dup"}, {"op": "allreduce", "bytes": 9000, "comm": 2},
            {"op": "compute", "flops": 3e6},
        ]
        ranks.append(ops)
    return {"ranks": ranks}


@pytest.mark.parametrize("smpi", [None, "simgrid-3.32"])
@pytest.mark.parametrize("trace", ["ring.json", "alltoall.json", "bcast_barrier.json", "master_worker.json", "every_kind"])
def test_the_archive_reads_back_as_the_run_it_shows(tmp_path, trace, smpi):
    """Written as Score-P writes a run (request records, completions in the wait or test that
    completed them, a failed test as MpiRequestTest, collectives with Score-P's counts,
    MPI_Finalize after the last op), the archive replays to the makespan of the trace that
    was simulated, under SMPI's timing model too (where each test sleeps)."""
    from commaware import load_platform, simulate

    source = every_kind() if trace == "every_kind" else EXAMPLES / trace
    platform = load_platform(EXAMPLES / "cluster16.json")
    anchor = tmp_path / "run.otf2"
    first = simulate(platform, load_trace(source), smpi=smpi, timeline=str(anchor))
    again = simulate(platform, load_trace(anchor), smpi=smpi)
    assert again.makespan == pytest.approx(first.makespan, rel=1e-12), (first.makespan, again.makespan)
    assert again.ranks["end"].tolist() == pytest.approx(first.ranks["end"].tolist(), rel=1e-12)
