"""Open MPI's segmented and pipelined collectives (the ones SimGrid 3.32's ``smpi/coll-selector:ompi``
picks) against SMPI under their explicit names, and the `ompi` preset that now uses them, to 1e-9
relative (tests/peers/smpi_replay.py sets SMPI up; docs/formats.md lists the algorithms).

Sizes sit on both sides of each algorithm's segment size and of the thresholds that choose it;
the root is the last rank (the latest to arrive) unless said otherwise.
"""

from __future__ import annotations

import pytest

from commaware import OptionsError, load_platform, load_trace, simulate
from tests.engine.test_smpi_replay import cluster, compare, requires_smpi

#: (collective, SMPI's algorithm name = ours, sizes in bytes, rank counts, root: "last" or a rank).
SEGMENTED = [
    # NTSL: whole up to 8192 bytes; above, 8192-byte segments, the remainder by NTSL again
    # (8193: one segment and 1 byte; 100000: 12 segments and 1696 bytes).
    ("bcast", "NTSL", [8192, 8193, 40960, 100000], (4, 5, 8), "last"),
    ("bcast", "NTSL", [100000], (5,), 0),
    # NTSB: whole up to 8192 bytes; above, 8192-byte segments down the binary tree, the
    # remainder by NTSB again (8193: one segment and 1 byte; 100000: 12 and 1696; 40960: 5 and
    # none); 2 and 3 ranks: a root with one child, two leaves.
    ("bcast", "NTSB", [8192, 8193, 40960, 100000], (2, 3, 4, 5, 8), "last"),
    ("bcast", "NTSB", [100000], (5, 7), 0),
    # ompi_pipeline: 16 KiB segments on 4-8 ranks below about 1.2 MB (one segment up to 16384).
    ("bcast", "ompi_pipeline", [10000, 16384, 16385, 100000], (4, 5, 8), "last"),
    # 128 KiB segments on 4 ranks from 1.17 MB.
    ("bcast", "ompi_pipeline", [1300000], (4,), "last"),
    # ompi_split_bintree: 1 KiB segments per half below 370728 bytes (2048: one each; 5001:
    # halves of 2501 and 2500), 8 KiB from there.
    ("bcast", "ompi_split_bintree", [2048, 5001, 100000, 400000], (4, 5, 8), "last"),
    ("bcast", "ompi_split_bintree", [100000], (5, 6), 0),
    # ompi_chain: p / 2 chains, 64 KiB segments.
    ("reduce", "ompi_chain", [30000, 65536, 100000, 200000], (4, 5, 8), "last"),
    # ompi_pipeline: 32 KiB segments on 4 ranks below about 721 kB, 64 KiB above.
    ("reduce", "ompi_pipeline", [30000, 100000, 800000], (4, 5, 8), "last"),
    # ompi_binary: a binary tree, 32 KiB segments.
    ("reduce", "ompi_binary", [20000, 32768, 100000], (4, 5, 8), "last"),
    ("reduce", "ompi_binary", [100000], (5,), 0),
    # ompi_binomial: 1 KiB segments on 8 ranks from 2048 to 11328 bytes, whole from 11329.
    ("reduce", "ompi_binomial", [1000, 5000, 11000, 20000], (8,), "last"),
    # ompi_in_order_binary: whole, on the tree rooted at p − 1, then to the root.
    ("reduce", "ompi_in_order_binary", [100000], (4, 5, 8), "last"),
    ("reduce", "ompi_in_order_binary", [100000], (4, 5, 8), 1),
]


def program(name: str, sizes: list[int], n: int, root: str | int) -> dict:
    """Each rank starts 0.3 ms after the one below, then runs the collective once per size."""
    rt = n - 1 if root == "last" else root
    ranks = []
    for r in range(n):
        ops: list[dict] = [{"op": "compute", "seconds": 0.0003 * r}]
        for size in sizes:
            ops += [{"op": name, "root": rt, "bytes": size}, {"op": "compute", "seconds": 0.0001 * (n - r)}]
        ranks.append(ops)
    return {"ranks": ranks}


@requires_smpi
@pytest.mark.parametrize("name, algorithm, sizes, n, root",
                         [(c[0], c[1], c[2], n, c[4]) for c in SEGMENTED for n in c[3]])
def test_segmented_algorithm_matches_smpi(tmp_path, name, algorithm, sizes, n, root):
    smpi, ours = compare(tmp_path, program(name, sizes, n, root), cluster(n), {name: algorithm})
    assert smpi > 0.001
    assert ours == pytest.approx(smpi, rel=1e-9), (name, algorithm, n, smpi, ours)


#: The `ompi` preset where Open MPI's decision picks a segmented algorithm (in brackets).
OMPI_PRESET = {
    # [chain] 131072-262143 bytes on 3 ranks; [basic_linear = NTSL] 8192 to 1 MiB on 4-7, from
    # 32768 on 8-15 ranks (100000: a remainder of 1696 bytes, which the preset sends by its
    # pick for that size, binomial on 4-7 ranks; 163840 on 8 ranks: 20 segments, no remainder,
    # the notes' real-trace case). SMPI's replay aborts (exit 134) on 8 ranks at 100000 bytes
    # under the selector, where the remainder goes by NTSB.
    # [binary_tree = NTSB] 32768-131071 bytes on 3 ranks (100000: a remainder of 1696 bytes by
    # NTSL), from 1 MiB on 3 (remainders of 20 and 200 bytes: pipeline, NTSB whole), 4096-16383
    # on 8 (16000: one segment and 7808 bytes by NTSB whole).
    "bcast": {3: [200000, 100000, 1048596, 1048776], 4: [100000], 5: [20000, 100000], 8: [163840, 16000]},
    # [pipeline] 16-31 bytes and 262144-524287 on 3 ranks, [chain] 524288 to 1 MiB;
    # [chain] 4096-65535 on 4-7 ranks; [binary] below 4096 on 4-7 ranks, below 8192 on 8-15;
    # [binomial] 1 KiB segments on 8 ranks from 8192 to 11328.
    "reduce": {3: [300000, 600000], 4: [2000, 30000], 6: [30000], 8: [5000, 10000, 20000]},
}


@requires_smpi
@pytest.mark.parametrize("name, n", [(name, n) for name, by_n in OMPI_PRESET.items() for n in by_n])
def test_ompi_preset_with_segmented_algorithms_matches_smpi(tmp_path, name, n):
    trace = program(name, OMPI_PRESET[name][n], n, "last")
    smpi, ours = compare(tmp_path, trace, cluster(n), preset="ompi")
    assert ours == pytest.approx(smpi, rel=1e-9), (name, n, smpi, ours)


def test_split_bintree_refuses_a_buffer_without_a_segment_per_half():
    trace = load_trace({"ranks": [[{"op": "bcast", "root": 0, "bytes": 2000}] for _ in range(4)]})
    with pytest.raises(OptionsError, match="ompi_split_bintree needs a segment"):
        simulate(load_platform(cluster(4)), trace, coll="bcast=ompi_split_bintree")


def allreduce_program(sizes: list[int], n: int) -> dict:
    """Each rank starts 0.3 ms after the one below, then runs one allreduce per size."""
    ranks = []
    for r in range(n):
        ops: list[dict] = [{"op": "compute", "seconds": 0.0003 * r}]
        for size in sizes:
            ops += [{"op": "allreduce", "bytes": size}, {"op": "compute", "seconds": 0.0001 * (n - r)}]
        ranks.append(ops)
    return {"ranks": ranks}


#: SimGrid's redbcast and lr under their names, with the reduce and bcast they call: (SMPI's
#: algorithms, ours where the names differ, sizes, rank counts). Sizes below p bytes make lr run
#: redbcast; sizes not a multiple of p leave lr a remainder, which it allreduces again (lr: below
#: p, so redbcast). SMPI's reduce `default` (colls::ireduce) is our `nbc_linear`.
REDBCAST = [
    ({"reduce": "default"}, "reduce=nbc_linear", [1000, 100000], (3, 4, 5, 8)),
    ({"allreduce": "redbcast"}, None, [1000, 100000], (3, 4, 5, 8)),
    ({"allreduce": "redbcast", "reduce": "ompi_binary", "bcast": "NTSL"}, None, [1000, 100000], (4, 5)),
    ({"allreduce": "redbcast", "reduce": "ompi_pipeline", "bcast": "ompi_pipeline"}, None, [100000], (5, 8)),
    ({"allreduce": "lr"}, None, [3, 23, 100003, 100000], (4, 5, 8)),
    ({"allreduce": "lr"}, None, [2, 100001], (3,)),
    # Open MPI's segmented ring from p MiB (4 MiB + 3: one phase, blocks of 1 MiB + 1 and
    # 1 MiB; 7 MiB: two phases), lr below (100003: with a remainder).
    ({"allreduce": "ompi_ring_segmented"}, None, [100003, 4194307, 7340032], (4,)),
    ({"allreduce": "ompi_ring_segmented"}, None, [3145733, 9437184], (3,)),
    ({"allreduce": "ompi_ring_segmented"}, None, [2097152], (2,)),
]


def _flat(algorithms: dict[str, str]) -> str:
    return "-".join(f"{k}={v}" for k, v in algorithms.items())


@requires_smpi
@pytest.mark.parametrize("algorithms, coll, sizes, n",
                         [(c[0], c[1], c[2], n) for c in REDBCAST for n in c[3]],
                         ids=[f"{_flat(c[0])}-{n}" for c in REDBCAST for n in c[3]])
def test_redbcast_and_lr_match_smpi(tmp_path, algorithms, coll, sizes, n):
    name = next(iter(algorithms))
    trace = (program(name, sizes, n, "last") if name == "reduce" else allreduce_program(sizes, n))
    smpi, ours = compare(tmp_path, trace, cluster(n), algorithms, coll=coll)
    assert smpi > 0.001
    assert ours == pytest.approx(smpi, rel=1e-9), (algorithms, n, smpi, ours)


#: The `ompi` preset's allreduce where Open MPI's decision picks ring or segmented ring, which
#: SimGrid runs as lr: below p bytes lr runs redbcast (the selector's reduce and bcast: on 3 ranks
#: basic_linear and pipeline, on 5 binary and NTSB), and lr's remainder goes through the selector
#: again. p 3: ring below 8 bytes, 8192-16383 and 16384-65535, 65536-262143 (segmented
#: ring); p 4-7: ring below 16 bytes.
OMPI_ALLREDUCE = {3: [2, 7, 8200, 20000, 100000], 4: [3, 14], 5: [4, 13], 6: [15]}


@requires_smpi
@pytest.mark.parametrize("n", sorted(OMPI_ALLREDUCE))
def test_ompi_preset_allreduce_ring_and_redbcast_match_smpi(tmp_path, n):
    smpi, ours = compare(tmp_path, allreduce_program(OMPI_ALLREDUCE[n], n), cluster(n), preset="ompi")
    assert ours == pytest.approx(smpi, rel=1e-9), (n, smpi, ours)


#: Open MPI's and SimGrid's remaining choices of the `ompi` preset under their SMPI names
#: (the op, SMPI's name, ours, sizes, rank counts). SimGrid's allgather `ring` sends straight
#: to rank + i (our `ring` is its NTSLR): ours is `direct_ring`.
MORE = [
    ("allgather", "ring", "direct_ring", [1000, 30000, 100000], (3, 4, 5, 8)),
    # linear_sync where its two parts are both eager (SMPI deadlocks when the rest is not:
    # tests/engine/test_smpi_coll_online.py checks those sizes against SMPI's run).
    ("gather", "ompi_linear_sync", "ompi_linear_sync", [1, 1000, 30000, 92161], (2, 3, 4, 5, 8)),
]


def more_program(name: str, sizes: list[int], n: int) -> dict:
    """Each rank starts 0.3 ms after the one below; the root is rank 1; reduce_scatter's blocks
    are 1, 2, 3, 1, 2, 3, ... times the size."""
    ranks = []
    for r in range(n):
        ops: list[dict] = [{"op": "compute", "seconds": 0.0003 * r}]
        for size in sizes:
            if name == "reduce_scatter":
                op = {"op": name, "bytes": [size * (1 + j % 3) for j in range(n)]}
            else:
                op = {"op": name, "bytes": size, **({"root": 1} if name == "gather" else {})}
            ops += [op, {"op": "compute", "seconds": 0.0001 * (n - r)}]
        ranks.append(ops)
    return {"ranks": ranks}


@requires_smpi
@pytest.mark.parametrize("name, smpi_name, ours_name, sizes, n",
                         [(*c[:4], n) for c in MORE for n in c[4]], ids=[f"{c[0]}-{c[2]}-{n}" for c in MORE for n in c[4]])
def test_more_ompi_algorithms_match_smpi(tmp_path, name, smpi_name, ours_name, sizes, n):
    smpi, ours = compare(tmp_path, more_program(name, sizes, n), cluster(n), {name: smpi_name}, coll=f"{name}={ours_name}")
    assert smpi > 0.001
    assert ours == pytest.approx(smpi, rel=1e-9), (name, n, smpi, ours)


#: The `ompi` preset where it picks them: SimGrid's direct ring allgather from 65536 bytes a
#: rank on 32-63 ranks.
OMPI_MORE = [("allgather", 32, [70000])]


@requires_smpi
@pytest.mark.parametrize("name, n, sizes", OMPI_MORE)
def test_ompi_preset_picks_them_as_smpi(tmp_path, name, n, sizes):
    smpi, ours = compare(tmp_path, more_program(name, sizes, n), cluster(n), preset="ompi")
    assert ours == pytest.approx(smpi, rel=1e-9), (name, n, smpi, ours)


def reduce_scatter_program(blocks: list[list[int]], n: int) -> dict:
    """Each rank starts 0.3 ms after the one below, then runs one reduce_scatter per list of blocks."""
    ranks = []
    for r in range(n):
        ops: list[dict] = [{"op": "compute", "seconds": 0.0003 * r}]
        for b in blocks:
            ops += [{"op": "reduce_scatter", "bytes": b}, {"op": "compute", "seconds": 0.0001 * (n - r)}]
        ranks.append(ops)
    return {"ranks": ranks}


def blocks_of(size: int, n: int, uneven: bool) -> list[int]:
    """n blocks of `size`, or of 1, 2, 3, 1, 2, 3, ... times it."""
    return [size * (1 + j % 3) if uneven else size for j in range(n)]


#: Reduce-scatters under SMPI's names (ours where they differ), on blocks of one size and of
#: sizes that differ. SMPI's `default` (`smpi_default`) reduces to rank 0 and scatters back when
#: the blocks have one size; when not it runs SimGrid's reduce_scatter__mpich: `mpich_rdb` up to
#: 524288 bytes in all (uneven sizes 1 and 1000), `pairwise` above (100000: 700000 bytes on 4
#: ranks). Open MPI's butterfly folds the ranks above the largest power of two (3, 5, 6, 7).
REDUCE_SCATTER = [
    ("default", "smpi_default", [1, 1000, 100000], (3, 4, 5, 8)),
    ("mpich_rdb", "mpich_rdb", [1, 1000, 100000], (3, 5, 6, 7, 8)),
    ("ompi_butterfly", "ompi_butterfly", [1, 1000, 100000], (2, 3, 5, 6, 7, 8)),
]


@requires_smpi
@pytest.mark.parametrize("uneven", [False, True], ids=["even", "uneven"])
@pytest.mark.parametrize("smpi_name, ours_name, sizes, n",
                         [(*c[:3], n) for c in REDUCE_SCATTER for n in c[3]],
                         ids=[f"{c[1]}-{n}" for c in REDUCE_SCATTER for n in c[3]])
def test_reduce_scatter_algorithms_match_smpi(tmp_path, smpi_name, ours_name, sizes, n, uneven):
    trace = reduce_scatter_program([blocks_of(s, n, uneven) for s in sizes], n)
    smpi, ours = compare(tmp_path, trace, cluster(n), {"reduce_scatter": smpi_name}, coll=f"reduce_scatter={ours_name}")
    assert smpi > 0.001
    assert ours == pytest.approx(smpi, rel=1e-9), (ours_name, n, uneven, smpi, ours)


#: The `ompi` preset's reduce_scatter where Open MPI's decision picks non-overlapping (SimGrid's
#: default: below 8 bytes in all on 4-7 ranks, below 64 on 32-63) or butterfly (65536-131071
#: bytes on 2-3 ranks, 2048-524287 on 32-63), blocks of one size and of different sizes.
OMPI_REDUCE_SCATTER = {
    3: [[30000] * 3, [20000, 40000, 60000], [70000] * 3],
    4: [[1] * 4, [1, 2, 3, 1]],
    5: [[1] * 5, [1, 2, 1, 2, 1]],
    7: [[1] * 7, [0, 1, 2, 0, 1, 2, 1]],
    32: [[1] * 32, [j % 2 for j in range(32)], [100] * 32, blocks_of(50, 32, True)],
}


@requires_smpi
@pytest.mark.parametrize("n", sorted(OMPI_REDUCE_SCATTER))
def test_ompi_preset_reduce_scatter_matches_smpi(tmp_path, n):
    smpi, ours = compare(tmp_path, reduce_scatter_program(OMPI_REDUCE_SCATTER[n], n), cluster(n), preset="ompi")
    assert ours == pytest.approx(smpi, rel=1e-9), (n, smpi, ours)


def allgatherv_program(sizes: list[int], n: int, uneven: bool) -> dict:
    """Each rank starts 0.3 ms after the one below, then runs one allgatherv per size (blocks
    of :func:`blocks_of`)."""
    ranks = []
    for r in range(n):
        ops: list[dict] = [{"op": "compute", "seconds": 0.0003 * r}]
        for size in sizes:
            ops += [{"op": "allgatherv", "bytes": blocks_of(size, n, uneven)}, {"op": "compute", "seconds": 0.0001 * (n - r)}]
        ranks.append(ops)
    return {"ranks": ranks}


#: Open MPI's Bruck allgatherv (SMPI's `ompi_bruck`, our `bruck`) on 2 to 8 ranks. SimGrid's GB
#: allgatherv is checked against SMPI's own run instead (tests/engine/test_smpi_coll_online.py).
@requires_smpi
@pytest.mark.parametrize("uneven", [False, True], ids=["even", "uneven"])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8])
def test_allgatherv_bruck_matches_smpi(tmp_path, n, uneven):
    trace = allgatherv_program([1, 1000, 30000, 100000], n, uneven)
    smpi, ours = compare(tmp_path, trace, cluster(n), {"allgatherv": "ompi_bruck"}, coll="allgatherv=bruck")
    assert smpi > 0.001
    assert ours == pytest.approx(smpi, rel=1e-9), (n, uneven, smpi, ours)


#: The `ompi` preset's allgatherv where Open MPI's decision picks bruck (bytes a rank on
#: average): 16384-262143 on 3-7 ranks, from 1024 on 8-15, 128-262143 on 16-31.
OMPI_ALLGATHERV_BRUCK = {6: [20000, 100000], 8: [1024, 2000, 30000], 16: [1000, 30000]}


@requires_smpi
@pytest.mark.parametrize("uneven", [False, True], ids=["even", "uneven"])
@pytest.mark.parametrize("n", sorted(OMPI_ALLGATHERV_BRUCK))
def test_ompi_preset_allgatherv_bruck_matches_smpi(tmp_path, n, uneven):
    trace = allgatherv_program(OMPI_ALLGATHERV_BRUCK[n], n, uneven)
    smpi, ours = compare(tmp_path, trace, cluster(n), preset="ompi")
    assert ours == pytest.approx(smpi, rel=1e-9), (n, uneven, smpi, ours)


#: SimGrid's allgatherv `ring` (ours `direct_ring`: straight to rank + i; our `ring` is its
#: `mpich_ring`) and `pair` (XOR partners, a power of two; Open MPI's two_proc in its selector).
ALLGATHERV_MORE = [("ring", "direct_ring", (2, 3, 4, 5, 8)), ("pair", "pair", (2, 4, 8))]


@requires_smpi
@pytest.mark.parametrize("uneven", [False, True], ids=["even", "uneven"])
@pytest.mark.parametrize("smpi_name, ours_name, n", [(c[0], c[1], n) for c in ALLGATHERV_MORE for n in c[2]])
def test_allgatherv_direct_ring_and_pair_match_smpi(tmp_path, smpi_name, ours_name, n, uneven):
    trace = allgatherv_program([1, 1000, 30000, 100000], n, uneven)
    smpi, ours = compare(tmp_path, trace, cluster(n), {"allgatherv": smpi_name}, coll=f"allgatherv={ours_name}")
    assert smpi > 0.001
    assert ours == pytest.approx(smpi, rel=1e-9), (ours_name, n, uneven, smpi, ours)


#: The `ompi` preset's allgatherv and allgather where Open MPI's decision picks the neighbour
#: exchange on an odd count (SimGrid's direct ring: allgatherv 256-4095 and 8192-16383 bytes a
#: rank on 3-7 ranks) and two_proc (allgatherv 2048-4095 and from 8192 bytes on 2 ranks).
OMPI_ALLGATHERV_MORE = {2: [3000, 10000], 3: [300, 10000], 5: [1000, 9000], 7: [4000, 12000]}


@requires_smpi
@pytest.mark.parametrize("n", sorted(OMPI_ALLGATHERV_MORE))
def test_ompi_preset_allgatherv_odd_neighbor_and_two_proc_match_smpi(tmp_path, n):
    smpi, ours = compare(tmp_path, allgatherv_program(OMPI_ALLGATHERV_MORE[n], n, False), cluster(n), preset="ompi")
    assert ours == pytest.approx(smpi, rel=1e-9), (n, smpi, ours)


#: SimGrid's allgather `rdb` on counts that are not a power of two (MPICH's fix), by name and
#: where the `ompi` preset picks it (every size on 3-31 ranks).
@requires_smpi
@pytest.mark.parametrize("preset", [None, "ompi"])
@pytest.mark.parametrize("n", [3, 5, 6, 7, 12])
def test_allgather_rdb_on_any_count_matches_smpi(tmp_path, n, preset):
    trace = more_program("allgather", [1, 1000, 30000, 100000], n)
    smpi, ours = compare(tmp_path, trace, cluster(n), None if preset else {"allgather": "rdb"}, preset=preset)
    assert smpi > 0.001
    assert ours == pytest.approx(smpi, rel=1e-9), (n, preset, smpi, ours)


#: MPICH's scatter-then-allgather bcasts as SimGrid runs them: `scatter_rdb_allgather` on any
#: count (MPICH's fix for a count that is not a power of two), and the scatter of both sending
#: nothing to a rank whose chunks lie past the end of a small buffer (1 byte on 3 ranks).
@requires_smpi
@pytest.mark.parametrize("root", [0, 1, "last"])
@pytest.mark.parametrize("n", [3, 5, 6, 7, 12])
@pytest.mark.parametrize("algorithm", ["scatter_rdb_allgather", "scatter_LR_allgather"])
def test_scatter_allgather_bcasts_match_smpi(tmp_path, algorithm, n, root):
    trace = program("bcast", [1, 1000, 30000, 100000, 1000003], n, root)
    smpi, ours = compare(tmp_path, trace, cluster(n), {"bcast": algorithm})
    assert smpi > 0.001
    assert ours == pytest.approx(smpi, rel=1e-9), (algorithm, n, root, smpi, ours)


#: The `ompi` preset's bcast where Open MPI's decision picks scatter_allgather on a count that is
#: not a power of two (from 1 MiB on 16-31 ranks).
@requires_smpi
def test_ompi_preset_scatter_allgather_on_20_ranks_matches_smpi(tmp_path):
    smpi, ours = compare(tmp_path, program("bcast", [1048576, 2000000], 20, 0), cluster(20), preset="ompi")
    assert ours == pytest.approx(smpi, rel=1e-9), (smpi, ours)
