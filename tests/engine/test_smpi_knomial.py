"""SimGrid's ``bcast__mvapich2_knomial_intra_node`` (Open MPI's "knomial" in SimGrid 3.32's ``ompi``
selector) and the ``Comm::init_smp`` it runs first on a communicator, against SMPI to 1e-9
relative, with one and with two ranks per host (init_smp groups a communicator's ranks by host).

The reference is SMPI's own run of tests/peers/coll_online.c (smpirun), not its replay: SMPI
3.32's replay aborts (``free(): invalid pointer``) in init_smp, which copies real buffers where
the replay has none. Several bcasts in a row (init_smp communicates before the first only) and
bcasts on two communicators (once on each). docs/formats.md lists the algorithm.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from commaware import load_platform, load_trace, simulate

import smpi_replay
from tests.engine.test_smpi_coll_online import PROGRAM, SMPI_OK, SMPI_REASON, blocks, cluster
from tests.engine.test_smpi_coll_online import pytestmark as requires_smpi


def trace(mode: str, arg: int | str, sizes: list[int], n: int) -> dict:
    """coll_online.c's program as a trace (`mode` bcast, bcast2 or allgatherv even). SMPI's
    communicator constructor (``Comm::Comm``, smpi_comm.cpp) bcasts the new communicator's id,
    one MPI_INT from rank 0, with the bcast in use: written out after the comm_dup here (our
    comm_dup itself costs nothing)."""
    ranks = []
    for r in range(n):
        dup = [{"op": "comm_dup"}, {"op": "bcast", "root": 0, "bytes": 4, "comm": 1}]
        ops: list[dict] = dup if mode == "bcast2" else []
        ops.append({"op": "compute", "seconds": 0.0003 * r})
        for size in sizes:
            if mode == "allgatherv":
                ops.append({"op": "allgatherv", "bytes": blocks(size, n, False)})
            else:
                ops.append({"op": "bcast", "root": arg, "bytes": size})
                if mode == "bcast2":
                    ops.append({"op": "bcast", "root": arg, "bytes": size, "comm": 1})
            ops.append({"op": "compute", "seconds": 0.0001 * (n - r)})
        ranks.append(ops)
    return {"ranks": ranks}


def compare(tmp_path: Path, mode: str, arg: int | str, sizes: list[int], n: int, per_host: int,
            smpi_cfg: dict[str, str], coll: str, round_robin: bool = False) -> tuple[float, float]:
    """SMPI's run of coll_online.c with `smpi_cfg` (``smpi/KEY:VALUE``; ``coll-selector`` too) and
    commaware's makespan of the same program with `coll`, ranks i·per_host … (i + 1)·per_host − 1
    on host i, or with `round_robin` rank i on host i mod (n / per_host)."""
    assert SMPI_OK, SMPI_REASON
    hosts = -(-n // per_host)
    host_of = [r % hosts if round_robin else r // per_host for r in range(n)]
    platform = cluster(hosts)
    platform["cluster"]["cores"] = per_host
    _, run = smpi_replay.run_program(PROGRAM, n, platform, tmp_path / "run", args=[mode, str(arg), *map(str, sizes)],
                                     collectives=smpi_cfg, per_host=per_host, host_of=host_of)
    assert len(run.rank_ends) == n
    ours_platform = {**platform, "network": {**platform["network"], "envelope_bytes": smpi_replay.SMPI_ENVELOPE_BYTES}}
    placed = {**trace(mode, arg, sizes, n), "placement": [f"n{h}" for h in host_of]}
    ours = simulate(load_platform(ours_platform), load_trace(placed), coll=coll).makespan
    return run.makespan, ours


KNOMIAL = {"bcast": "mvapich2_knomial_intra_node"}

#: (rank counts, sizes, root): power-of-two counts and others, 4-nomial levels of 1, 2 and 3
#: children, eager and rendezvous sizes, root 0 and a root in the middle.
CASES = [
    ((2, 3, 4, 5, 8), [1000], 0),
    ((5, 7, 16, 17), [100, 200000, 30], 0),
    ((6, 9), [5000, 5000, 70000], 4),
]


@requires_smpi
@pytest.mark.parametrize("per_host", (1, 2))
@pytest.mark.parametrize("n, sizes, root", [(n, c[1], c[2]) for c in CASES for n in c[0]],
                         ids=[f"{n}-root{c[2]}-{len(c[1])}sizes" for c in CASES for n in c[0]])
def test_knomial_bcast_with_init_smp_matches_smpi(tmp_path, n, sizes, root, per_host):
    smpi, ours = compare(tmp_path, "bcast", root, sizes, n, per_host, KNOMIAL, "bcast=mvapich2_knomial_intra_node")
    assert smpi > 0.0005
    assert ours == pytest.approx(smpi, rel=1e-9), (n, sizes, root, per_host, smpi, ours)


@requires_smpi
@pytest.mark.parametrize("n, per_host", [(6, 2), (9, 3), (8, 4), (7, 3)])
def test_init_smp_with_the_ranks_of_a_host_not_adjacent(tmp_path, n, per_host):
    # Rank i on host i mod hosts: a host's ranks and the leaders are not consecutive ranks.
    smpi, ours = compare(tmp_path, "bcast", 1, [100, 5000], n, per_host, KNOMIAL, "bcast=mvapich2_knomial_intra_node",
                         round_robin=True)
    assert ours == pytest.approx(smpi, rel=1e-9), (n, per_host, smpi, ours)


@requires_smpi
@pytest.mark.parametrize("per_host", (1, 2, 3))
def test_init_smp_runs_once_on_each_of_two_communicators(tmp_path, per_host):
    smpi, ours = compare(tmp_path, "bcast2", 2, [3000, 50], 7, per_host, KNOMIAL, "bcast=mvapich2_knomial_intra_node")
    assert ours == pytest.approx(smpi, rel=1e-9), (per_host, smpi, ours)


@requires_smpi
@pytest.mark.parametrize("per_host", (1, 2, 3))
def test_init_smp_runs_inside_the_allgatherv_bcast_that_first_needs_it(tmp_path, per_host):
    # GB's gatherv, then its bcast: init_smp, then the tree; later allgathervs without it.
    smpi, ours = compare(tmp_path, "allgatherv", "even", [100, 3000, 50], 7, per_host, {**KNOMIAL, "allgatherv": "GB"},
                         "allgatherv=GB,bcast=mvapich2_knomial_intra_node")
    assert ours == pytest.approx(smpi, rel=1e-9), (per_host, smpi, ours)


#: Where Open MPI's decision picks knomial in SimGrid's `ompi` selector: 3 ranks 512-1023 bytes,
#: 8-15 ranks below 8 bytes and 64-4095 bytes, 16-31 ranks below 4096 bytes.
OMPI_KNOMIAL = {3: [600, 1000], 8: [4, 100, 4000], 12: [2000], 16: [1, 4095], 20: [300]}


@requires_smpi
@pytest.mark.parametrize("per_host", (1, 2))
@pytest.mark.parametrize("n", sorted(OMPI_KNOMIAL))
def test_ompi_preset_knomial_matches_smpi(tmp_path, n, per_host):
    smpi, ours = compare(tmp_path, "bcast", n - 1, OMPI_KNOMIAL[n], n, per_host, {"coll-selector": "ompi"}, "ompi")
    assert ours == pytest.approx(smpi, rel=1e-9), (n, per_host, smpi, ours)


def test_init_smp_communicates_once_per_communicator():
    # 4 ranks, one per host, 10-byte bcasts: init_smp's messages come before the first only (the
    # allgather ring over the 4 ranks, then over the 4 leaders: 4·3 each; no intra-host bcast
    # on a host of one; the reduce to rank 0 and the binomial bcast back: 3 each), then the
    # tree's 3 per bcast; on two communicators (a dup), once on each.
    platform = load_platform(cluster(4))
    bcast = {"op": "bcast", "root": 0, "bytes": 10}
    one = simulate(platform, load_trace({"ranks": [[bcast] for _ in range(4)]}), coll="bcast=mvapich2_knomial_intra_node")
    three = simulate(platform, load_trace({"ranks": [[bcast] * 3 for _ in range(4)]}), coll="bcast=mvapich2_knomial_intra_node")
    dup = simulate(platform, load_trace({"ranks": [[{"op": "comm_dup"}, bcast, {**bcast, "comm": 1}, bcast, {**bcast, "comm": 1}]
                                                  for _ in range(4)]}), coll="bcast=mvapich2_knomial_intra_node")
    preamble = 4 * 3 + 4 * 3 + 3 + 3
    assert len(one.messages) == preamble + 3
    assert len(three.messages) == preamble + 3 * 3
    assert len(dup.messages) == 2 * preamble + 4 * 3
