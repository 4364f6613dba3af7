"""Collective algorithms whose reference is SMPI's own run of a program (smpirun, SimGrid 3.32),
not its replay of a trace: tests/peers/coll_online.c calls the collective at several sizes, SMPI
runs it under the configuration the replay comparisons use (tests/peers/smpi_replay.py,
``run_program``), and commaware simulates the same program written as a trace, to 1e-9 relative.

- SimGrid's `GB` allgatherv bcasts the gathered buffer, as long as the program's displacements
  say (here contiguous: the sum of the blocks). SMPI's replay reads no displacements from a TI
  trace and bcasts only the largest block, so its makespan is not the program's.
- Open MPI's `linear_sync` gather deadlocks in SMPI (its run and its replay alike) where a block's
  first segment is eager and its rest is not; those sizes are checked on runs where that cannot
  happen (below).

Needs ``smpirun`` and ``smpicc`` (Debian package ``simgrid``): without them these tests skip,
unless ``COMMAWARE_REQUIRE_SIMGRID=1`` (set by ``.ci/run``): then they fail with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from commaware import load_platform, load_trace, simulate

import smpi_replay
from conftest import requires_smpi_mark

SMPI_OK, SMPI_REASON = smpi_replay.smpi_available()
pytestmark = requires_smpi_mark((SMPI_OK, SMPI_REASON), "SMPI collective programs")

PROGRAM = Path(__file__).resolve().parents[1] / "peers" / "coll_online.c"


def cluster(n: int) -> dict:
    return {"cluster": {"count": n, "speed": 1e9, "prefix": "n"}, "network": {"bandwidth": 1.25e8, "latency": 1e-4}}


def blocks(size: int, n: int, uneven: bool) -> list[int]:
    """Rank j's block in coll_online.c: `size`, or size · (1 + j mod 3)."""
    return [size * (1 + j % 3) if uneven else size for j in range(n)]


def trace(collective: str, arg: str, sizes: list[int], n: int) -> dict:
    """coll_online.c's program as a trace: 0.3 ms times the rank, then per size the collective
    and 0.1 ms times (p − rank)."""
    ranks = []
    for r in range(n):
        ops: list[dict] = [{"op": "compute", "seconds": 0.0003 * r}]
        for size in sizes:
            if collective == "allgatherv":
                op = {"op": "allgatherv", "bytes": blocks(size, n, arg == "uneven")}
            else:
                op = {"op": "gather", "root": int(arg), "bytes": size}
            ops += [op, {"op": "compute", "seconds": 0.0001 * (n - r)}]
        ranks.append(ops)
    return {"ranks": ranks}


def compare(tmp_path: Path, collective: str, arg: str, sizes: list[int], n: int, smpi_cfg: dict[str, str],
            coll: str) -> tuple[float, float, Path]:
    """SMPI's run of coll_online.c with `smpi_cfg` (``smpi/KEY:VALUE``), commaware's makespan of
    the same program with `coll`, and the run's TI trace."""
    assert SMPI_OK, SMPI_REASON
    index, run = smpi_replay.run_program(PROGRAM, n, cluster(n), tmp_path / "run", args=[collective, arg, *map(str, sizes)],
                                         collectives=smpi_cfg)
    assert len(run.rank_ends) == n
    platform = {**cluster(n), "network": {**cluster(n)["network"], "envelope_bytes": smpi_replay.SMPI_ENVELOPE_BYTES}}
    ours = simulate(load_platform(platform), load_trace(trace(collective, arg, sizes, n)), coll=coll).makespan
    return run.makespan, ours, index


@pytest.mark.parametrize("arg", ["even", "uneven"])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
def test_gb_allgatherv_matches_smpis_run(tmp_path, n, arg):
    """Sizes on both sides of the 64 KiB eager threshold, in the gatherv and in the bcast."""
    smpi, ours, _ = compare(tmp_path, "allgatherv", arg, [1, 1000, 30000, 100000], n, {"allgatherv": "GB"}, "allgatherv=GB")
    assert smpi > 0.001
    assert ours == pytest.approx(smpi, rel=1e-9), (n, arg, smpi, ours)


def test_smpis_replay_of_gb_bcasts_only_the_largest_block(tmp_path):
    """Why GB is checked against the run: SMPI's replay of the run's own trace ends earlier."""
    smpi, ours, index = compare(tmp_path, "allgatherv", "even", [30000], 4, {"allgatherv": "GB"}, "allgatherv=GB")
    replay = smpi_replay.run_smpi_replay(cluster(4), index, collectives={"allgatherv": "GB"}).makespan
    assert ours == pytest.approx(smpi, rel=1e-9)
    assert replay < 0.8 * smpi, (replay, smpi)


#: The `ompi` preset where Open MPI's decision picks its "default", SimGrid's GB (below 256
#: bytes a rank on average on 3-7 ranks, below 1024 on 8-15), whose bcast of the sum goes through
#: the preset again (on 3 ranks: pipeline below 32 bytes, NTSB 32-255; on 4-7: NTSB below 64 and
#: 128-2047, binomial 64-127; on 8-15: NTSB 8-63, knomial 64-4095; on 3: knomial 512-1023; on
#: 16-31: knomial below 4096, SimGrid's mvapich2_knomial_intra_node, with Comm::init_smp before
#: the first), and bruck above it on 5, 8 and 16 ranks.
OMPI_GB = {3: [1, 10, 40, 200, 300], 4: [1, 20, 100, 255], 5: [100, 30000], 8: [1, 4, 10, 100, 1024, 2000],
           16: [200, 1000, 30000], 20: [50, 100]}


@pytest.mark.parametrize("arg", ["even", "uneven"])
@pytest.mark.parametrize("n", sorted(OMPI_GB))
def test_ompi_preset_allgatherv_matches_smpis_run(tmp_path, n, arg):
    smpi, ours, _ = compare(tmp_path, "allgatherv", arg, OMPI_GB[n], n, {"coll-selector": "ompi"}, "ompi")
    assert ours == pytest.approx(smpi, rel=1e-9), (n, arg, smpi, ours)


#: Open MPI's linear_sync gather splits each block into a first segment (1 KiB, 32 KiB above
#: 92160 bytes) and the rest. SMPI 3.32 deadlocks on it when the first segment is below the eager
#: threshold and the rest is not, under the configuration every comparison uses
#: (``smpi/async-small-thresh`` at the eager threshold, so that an eager transfer starts when it
#: is sent): the small first segment, sent to the root's other mailbox, is overtaken by the rest,
#: which MPI forbids. Where every receive is posted before its message is sent (the root arrives
#: last and gathers once), ``smpi/async-small-thresh:0`` changes no time and avoids that, so
#: those sizes are checked there.
LINEAR_SYNC_SIZES = [1, 1000, 1024, 1025, 30000, 92160, 92161, 100000, 300000]


@pytest.mark.parametrize("size", LINEAR_SYNC_SIZES)
@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
def test_linear_sync_gather_matches_smpis_run(tmp_path, n, size):
    smpi, ours, _ = compare(tmp_path, "gather", str(n - 1), [size], n, {"gather": "ompi_linear_sync", "async-small-thresh": "0"},
                            "gather=ompi_linear_sync")
    assert ours == pytest.approx(smpi, rel=1e-9), (n, size, smpi, ours)


@pytest.mark.parametrize("root", [0, 2])
@pytest.mark.parametrize("n", [3, 4, 5, 8])
def test_linear_sync_gathers_in_a_row_match_smpis_run(tmp_path, n, root):
    """Under the usual configuration, where both parts are eager (or all in the first segment)."""
    smpi, ours, _ = compare(tmp_path, "gather", str(root), [1, 1000, 30000, 92161], n, {"gather": "ompi_linear_sync"},
                            "gather=ompi_linear_sync")
    assert smpi > 0.001
    assert ours == pytest.approx(smpi, rel=1e-9), (n, root, smpi, ours)


def test_smpi_deadlocks_on_linear_sync_with_an_eager_first_segment_and_a_rendezvous_rest(tmp_path):
    with pytest.raises(smpi_replay.SmpiError, match="exit code 134"):
        compare(tmp_path, "gather", "2", [100000], 3, {"gather": "ompi_linear_sync"}, "gather=ompi_linear_sync")


#: The `ompi` preset's gather where Open MPI's decision picks linear_sync: below 2 bytes and from
#: 131072 on 2-3 ranks, from 262144 on 4-7 (the large ones as above, with the root last).
OMPI_LINEAR_SYNC = [(2, [1], {}), (3, [1], {}), (3, [200000], {"async-small-thresh": "0"}),
                    (5, [300000], {"async-small-thresh": "0"}), (7, [262144], {"async-small-thresh": "0"})]


@pytest.mark.parametrize("n, sizes, cfg", OMPI_LINEAR_SYNC)
def test_ompi_preset_gather_matches_smpis_run(tmp_path, n, sizes, cfg):
    smpi, ours, _ = compare(tmp_path, "gather", str(n - 1), sizes, n, {"coll-selector": "ompi", **cfg}, "ompi")
    assert ours == pytest.approx(smpi, rel=1e-9), (n, sizes, smpi, ours)
