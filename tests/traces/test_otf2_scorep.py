"""OTF2 as Score-P writes it (issue 39, item 3): archives written with the byte counts of
Score-P's MPI adapter for `MPI_IN_PLACE`, the matched receive `MPI_Mrecv`, and the records the
reader refuses (non-blocking collectives, one-sided communication, `MPI_Imrecv`).

Score-P is not built here (docs/howto-scorep.md says why); the archives are written with the
`otf2` package as its adapter writes them. Every count below cites Score-P 9.0's `src/adapters/mpi/c/scorep_mpi_coll.inc.c` (and the
wrappers in `src/adapters/mpi/c/wrappers/`); the JSON side of each program is what
`commaware trace record` records for the same calls (the counts MPI reads: an in-place
call's own block included, python/commaware/traces/recorder/commaware_pmpi.c).
"""

from __future__ import annotations

import pytest

from otf2.enums import CollectiveOp, RmaSyncType

from commaware.api import load_platform, load_trace, simulate

from conftest import EXAMPLES
from traces.otf2_archives import Program
from traces.test_otf2 import bad

PLATFORM = EXAMPLES / "cluster16.json"
NONE = 2**32 - 1  # OTF2's undefined root
AMBIGUOUS = ("allreduce", "allgather", "alltoall", "reduce_scatter_block")


def makespan(path, **kwargs) -> float:
    return simulate(load_platform(PLATFORM), load_trace(path, **kwargs)).makespan


# Score-P's counts (sent, received) at rank `me` of `n`.
def all_to_one(n, me, root, block, in_place):
    """gather, reduce: `coll_bytes_all_to_one`, l. 38-116 (in place at the root: l. 69-72)."""
    if me != root:
        return block, 0
    return (0, (n - 1) * block) if in_place else (block, n * block)


def one_to_all(n, me, root, block, in_place):
    """scatter (and bcast, never in place): all-to-one with sent and received swapped, l. 261-285."""
    sent, received = all_to_one(n, me, root, block, in_place)
    return received, sent


def same_at_every_rank(n, block, in_place):
    """alltoall, allgather and allreduce (which call it): l. 387-398; reduce_scatter_block, l. 630-639."""
    total = (n - 1 if in_place else n) * block
    return total, total


def gatherv(n, me, root, blocks, in_place):
    """l. 166-258: the root receives every block, less its own in place (l. 198-202)."""
    if me != root:
        return blocks[me], 0
    return (0, sum(blocks) - blocks[me]) if in_place else (blocks[me], sum(blocks))


def allgatherv(n, me, blocks, in_place):
    """l. 539-597 (in place: l. 569-584)."""
    own = blocks[me]
    return ((n - 1) * own, sum(blocks) - own) if in_place else (n * own, sum(blocks))


def reduce_scatter(n, me, blocks, in_place):
    """l. 643-693 (in place: l. 661-666)."""
    own = blocks[me]
    return (sum(blocks) - own, (n - 1) * own) if in_place else (sum(blocks), n * own)


def scan(n, me, block, in_place):
    """l. 695-723 (in place: l. 712-716)."""
    return ((n - me - 1) * block, me * block) if in_place else ((n - me) * block, (me + 1) * block)


def in_place_program(tmp_path, in_place: bool, n: int = 4):
    """Every collective that takes MPI_IN_PLACE, called in place (or not), compute between."""
    p = Program(tmp_path / ("in_place" if in_place else "ordinary"), n)
    blocks = [30_000 * (k + 1) for k in range(n)]
    for rank in p.ranks:
        me = rank.r

        def call(name, op, root, counts, json_op):
            rank.collective(name, op, root, *counts, json_op)
            rank.compute(0.0002 * (me + 1))

        rank.compute(0.001 * (me + 1))
        call("MPI_Allreduce", CollectiveOp.ALLREDUCE, NONE, same_at_every_rank(n, 800_000, in_place),
             {"op": "allreduce", "bytes": 800_000})
        call("MPI_Allgather", CollectiveOp.ALLGATHER, NONE, same_at_every_rank(n, 50_000, in_place),
             {"op": "allgather", "bytes": 50_000})
        call("MPI_Alltoall", CollectiveOp.ALLTOALL, NONE, same_at_every_rank(n, 70_000, in_place),
             {"op": "alltoall", "bytes": 70_000})
        call("MPI_Reduce_scatter_block", CollectiveOp.REDUCE_SCATTER_BLOCK, NONE,
             same_at_every_rank(n, 90_000, in_place), {"op": "reduce_scatter", "bytes": [90_000] * n})
        call("MPI_Gather", CollectiveOp.GATHER, 1, all_to_one(n, me, 1, 200_000, in_place),
             {"op": "gather", "root": 1, "bytes": 200_000})
        call("MPI_Reduce", CollectiveOp.REDUCE, 2, all_to_one(n, me, 2, 400_000, in_place),
             {"op": "reduce", "root": 2, "bytes": 400_000})
        call("MPI_Scatter", CollectiveOp.SCATTER, 3, one_to_all(n, me, 3, 150_000, in_place),
             {"op": "scatter", "root": 3, "bytes": 150_000})
        call("MPI_Gatherv", CollectiveOp.GATHERV, 0, gatherv(n, me, 0, blocks, in_place),
             {"op": "gatherv", "root": 0, "bytes": blocks})
        sent, received = gatherv(n, me, 2, blocks, in_place)
        call("MPI_Scatterv", CollectiveOp.SCATTERV, 2, (received, sent), {"op": "scatterv", "root": 2, "bytes": blocks})
        call("MPI_Allgatherv", CollectiveOp.ALLGATHERV, NONE, allgatherv(n, me, blocks, in_place),
             {"op": "allgatherv", "bytes": blocks})
        call("MPI_Reduce_scatter", CollectiveOp.REDUCE_SCATTER, NONE, reduce_scatter(n, me, blocks, in_place),
             {"op": "reduce_scatter", "bytes": blocks})
        call("MPI_Scan", CollectiveOp.SCAN, NONE, scan(n, me, 60_000, in_place), {"op": "scan", "bytes": 60_000})
    return p.close()


def test_in_place_collectives_replay_as_the_same_program(tmp_path):
    """The counts say `MPI_IN_PLACE` for gather, reduce, scatter, gatherv, scatterv,
    allgatherv, reduce_scatter and scan; for the four whose counts cannot say, `in_place`
    names them. Then the archive replays to the JSON program's makespan."""
    anchor, as_json = in_place_program(tmp_path, in_place=True)
    trace = load_trace(anchor, in_place=AMBIGUOUS)
    assert simulate(load_platform(PLATFORM), trace).makespan == pytest.approx(makespan(as_json), rel=1e-12)
    # Per rank 4 ambiguous calls; in place by their counts: the gather's, reduce's and
    # scatter's roots (3), the scan at every rank (4), and allgatherv and reduce_scatter,
    # decided over their 4 ranks at once (4 + 4). gatherv's and scatterv's roots need no
    # decision: the block each rank sends (receives) is its own either way.
    stats = trace.otf2_stats
    assert stats["ambiguous_in_place"] == 4 * 4
    assert stats["in_place_collectives"] == 3 + 4 + 4 + 4
    # Read as not in place, the four ambiguous calls carry N/(N - 1) of their blocks.
    wrong = makespan(anchor)
    assert wrong != pytest.approx(makespan(as_json), rel=1e-6)


def test_the_ordinary_forms_still_read_as_before(tmp_path):
    anchor, as_json = in_place_program(tmp_path, in_place=False)
    trace = load_trace(anchor)
    assert simulate(load_platform(PLATFORM), trace).makespan == pytest.approx(makespan(as_json), rel=1e-12)
    assert trace.otf2_stats["in_place_collectives"] == 0
    assert trace.otf2_stats["ambiguous_in_place"] == 16


def test_cli_in_place_option_and_warning(tmp_path, cli):
    anchor, as_json = in_place_program(tmp_path, in_place=True)
    want = cli("simulate", PLATFORM, as_json, "--json", check=True)
    got = cli("simulate", PLATFORM, anchor, "--json", "--in-place", ",".join(AMBIGUOUS), check=True)
    import json

    assert json.loads(got.stdout)["makespan"] == pytest.approx(json.loads(want.stdout)["makespan"], rel=1e-12)
    assert "16 allreduce/allgather/alltoall/reduce_scatter_block records" in got.stderr
    err = bad(cli, "simulate", PLATFORM, anchor, "--in-place", "bcast")
    assert "--in-place" in err and "'bcast' is not one of allreduce, allgather, alltoall, reduce_scatter_block" in err


def test_counts_that_fit_no_reading_are_refused(tmp_path, cli):
    p = Program(tmp_path / "odd", 3)
    for rank in p.ranks:  # rank 1 receives as if in place, the others not
        rank.collective("MPI_Allgatherv", CollectiveOp.ALLGATHERV, NONE, 3 * 100, 600 - (100 if rank.r == 1 else 0),
                        {"op": "allgatherv", "bytes": [100] * 3})
    anchor, _ = p.close()
    err = bad(cli, "simulate", PLATFORM, anchor)
    assert str(anchor) in err and "allgatherv" in err and "fit neither" in err


def test_mrecv_reads_as_a_receive(tmp_path, cli):
    """Score-P records nothing inside MPI_Mprobe and MPI_Mrecv (wrappers/SCOREP_Mpi_C_P2p.c,
    `MPI_Mrecv`): the matched message's receive is read from the region itself."""
    p = Program(tmp_path / "mrecv", 2)
    sender, receiver = p.ranks
    sender.compute(0.002)
    sender.send(1, 3_000_000, tag=4)
    receiver.call("MPI_Mprobe")
    receiver.call("MPI_Mrecv")
    receiver.ops.append({"op": "recv", "src": 0, "tag": 4})
    receiver.compute(0.001)
    anchor, as_json = p.close()
    trace = load_trace(anchor)
    assert trace.otf2_stats["wildcard_mrecv"] == 1
    assert simulate(load_platform(PLATFORM), trace).makespan == pytest.approx(makespan(as_json), rel=1e-12)
    assert "1 MPI_Mrecv calls" in cli("simulate", PLATFORM, anchor, check=True).stderr


def refused(tmp_path, name, write):
    p = Program(tmp_path / name, 2)
    for rank in p.ranks:
        rank.compute(0.001)
        write(p, rank)
    anchor, _ = p.close()
    return anchor


def test_non_blocking_collectives_are_refused_with_their_count(tmp_path, cli):
    """`MPI_Iallreduce` and the others: a NonBlockingCollectiveRequest in the call, the
    Complete in the wait (wrappers/SCOREP_Mpi_C_Coll.c, `MPI_Iallreduce`)."""
    def write(p, rank):
        rank.call("MPI_Iallreduce", ("non_blocking_collective_request", (77,)))
        rank.call("MPI_Wait", ("non_blocking_collective_complete",
                               (CollectiveOp.ALLREDUCE, p.world, NONE, 8000, 8000, 77)))

    anchor = refused(tmp_path, "nbc", write)
    err = bad(cli, "simulate", PLATFORM, anchor)
    assert str(anchor) in err
    assert "4 NonBlockingCollectiveRequest/Complete records" in err and "does not replay non-blocking collectives" in err


def test_one_sided_communication_is_refused_with_its_count(tmp_path, cli):
    def write(p, rank):
        if not hasattr(p, "win"):
            p.win = p.trace.definitions.rma_win("window", p.world)
        rank.call("MPI_Win_create", ("rma_win_create", (p.win,)))
        rank.call("MPI_Put", ("rma_put", (p.win, 1 - rank.r, 4096, 5)))
        rank.call("MPI_Win_fence", ("rma_sync", (p.win, 1 - rank.r, RmaSyncType.MEMORY)))

    anchor = refused(tmp_path, "rma", write)
    err = bad(cli, "trace", "show", anchor)
    assert "4 RMA records" in err and "one-sided communication" in err


def test_imrecv_is_refused(tmp_path, cli):
    def write(p, rank):
        rank.call("MPI_Improbe")
        rank.call("MPI_Imrecv")

    anchor = refused(tmp_path, "imrecv", write)
    err = bad(cli, "simulate", PLATFORM, anchor)
    assert "2 MPI_Imrecv calls" in err
