"""OTF2 archives in (issue 27, item 3): archives written as Score-P writes them replay to the
makespan of the same program as our JSON trace, and bad archives exit 2 naming the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from otf2.enums import CollectiveOp

from commaware.api import load_platform, load_trace, simulate

from conftest import EXAMPLES
from traces.otf2_archives import Program

PLATFORM = EXAMPLES / "cluster16.json"
HOST_FLOPS = 1e9  # its hosts' speed


def makespan(trace_path: Path, **kwargs) -> float:
    return simulate(load_platform(PLATFORM), load_trace(trace_path, **kwargs)).makespan


def ring(tmp_path: Path, n: int = 4) -> tuple[Path, Path]:
    p = Program(tmp_path / "ring", n)
    for rank in p.ranks:
        rank.compute(0.001 * (rank.r + 1))
        if rank.r == 0:
            rank.send(1, 1_000_000, tag=7)
            rank.recv(n - 1, 1_000_000, tag=7)
        else:
            rank.recv(rank.r - 1, 1_000_000, tag=7)
            rank.compute(0.0005)
            rank.send((rank.r + 1) % n, 1_000_000, tag=7)
    return p.close()


def exchange(tmp_path: Path, n: int = 4) -> tuple[Path, Path]:
    """Non-blocking halo exchange with both neighbours, then compute, then waitall."""
    p = Program(tmp_path / "exchange", n)
    for step in range(3):
        for rank in p.ranks:
            left, right = (rank.r - 1) % n, (rank.r + 1) % n
            reqs = [rank.irecv(left, 200_000 * (step + 1), tag=step), rank.irecv(right, 50_000, tag=10 + step),
                    rank.isend(right, 200_000 * (step + 1), tag=step), rank.isend(left, 50_000, tag=10 + step)]
            rank.compute(0.0002 * (rank.r + 1))
            rank.waitall(reqs)
    return p.close()


def collectives(tmp_path: Path, n: int = 4) -> tuple[Path, Path]:
    """Score-P's byte counts (scorep_mpi_coll bytes): a bcast's root sends N × the buffer,
    an allreduce sends N × the buffer, an alltoall sends N blocks, a gather sends one block."""
    p = Program(tmp_path / "colls", n)
    buf = 80_000
    for rank in p.ranks:
        me = rank.r
        rank.compute(0.001 * (me + 1))
        rank.collective("MPI_Barrier", CollectiveOp.BARRIER, 2**32 - 1, 0, 0, {"op": "barrier"})
        rank.collective("MPI_Bcast", CollectiveOp.BCAST, 1, n * buf if me == 1 else 0, buf,
                        {"op": "bcast", "root": 1, "bytes": buf})
        rank.compute(0.0003)
        rank.collective("MPI_Allreduce", CollectiveOp.ALLREDUCE, 2**32 - 1, n * buf, n * buf,
                        {"op": "allreduce", "bytes": buf})
        rank.collective("MPI_Alltoall", CollectiveOp.ALLTOALL, 2**32 - 1, n * 4096, n * 4096,
                        {"op": "alltoall", "bytes": 4096})
        rank.collective("MPI_Reduce", CollectiveOp.REDUCE, 0, buf, n * buf if me == 0 else 0,
                        {"op": "reduce", "root": 0, "bytes": buf})
        rank.collective("MPI_Gather", CollectiveOp.GATHER, 2, 1000, n * 1000 if me == 2 else 0,
                        {"op": "gather", "root": 2, "bytes": 1000})
        rank.collective("MPI_Scatter", CollectiveOp.SCATTER, 3, n * 3000 if me == 3 else 0, 3000,
                        {"op": "scatter", "root": 3, "bytes": 3000})
        rank.collective("MPI_Allgather", CollectiveOp.ALLGATHER, 2**32 - 1, n * 500, n * 500,
                        {"op": "allgather", "bytes": 500})
        rank.collective("MPI_Scan", CollectiveOp.SCAN, 2**32 - 1, (n - me) * 700, (me + 1) * 700,
                        {"op": "scan", "bytes": 700})
        rank.collective("MPI_Exscan", CollectiveOp.EXSCAN, 2**32 - 1, (n - 1 - me) * 900, me * 900,
                        {"op": "exscan", "bytes": 900})
        blocks = [100 * (k + 1) for k in range(n)]  # rank k's block of the allgatherv
        rank.collective("MPI_Allgatherv", CollectiveOp.ALLGATHERV, 2**32 - 1, n * blocks[me], sum(blocks),
                        {"op": "allgatherv", "bytes": blocks})
        rank.compute(0.0001)
    return p.close()


@pytest.mark.parametrize("build", [ring, exchange, collectives])
def test_replays_as_the_same_json_program(tmp_path, build):
    anchor, as_json = build(tmp_path)
    assert makespan(anchor) == makespan(as_json) > 0


def test_traced_speed_gives_flops(tmp_path):
    """At the hosts' own speed, flops take the traced seconds; at twice it, compute doubles."""
    anchor, _ = ring(tmp_path)
    speed = HOST_FLOPS
    assert makespan(anchor, traced_speed=speed) == pytest.approx(makespan(anchor), rel=1e-12)
    assert makespan(anchor, traced_speed=2 * speed) > makespan(anchor) + 0.001


def test_cli_simulate_and_show(tmp_path, cli):
    anchor, as_json = ring(tmp_path)
    got = cli("simulate", PLATFORM, anchor, "--json", check=True)
    want = cli("simulate", PLATFORM, as_json, "--json", check=True)
    assert json.loads(got.stdout)["makespan"] == json.loads(want.stdout)["makespan"]
    shown = cli("trace", "show", anchor, "--json", check=True)
    summary = json.loads(shown.stdout)
    assert summary["ranks"] == 4
    assert summary["ops_per_kind"]["send"] == 4 and summary["ops_per_kind"]["recv"] == 4
    assert summary["ops_per_kind"]["compute"] == 7  # before the first call, and between recv and send


def test_skipped_paradigms_are_counted(tmp_path, cli):
    from otf2.enums import Paradigm

    p = Program(tmp_path / "omp", 2)
    omp = p.trace.definitions.region("!$omp parallel", paradigm=Paradigm.OPENMP)
    for rank in p.ranks:
        rank.w.enter(rank.t, omp)
        rank.compute(0.001)
        rank.w.leave(rank.t, omp)
    anchor, as_json = p.close()
    proc = cli("simulate", PLATFORM, anchor, check=True)
    assert "4 OTF2 records of other paradigms" in proc.stderr
    assert makespan(anchor) == makespan(as_json)


def bad(cli, *args, env=None):
    proc = cli(*args, env=env)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr
    assert proc.stdout == ""
    return proc.stderr


def test_truncated_archive(tmp_path, cli):
    anchor, _ = ring(tmp_path)
    for evt in (anchor.parent / "traces").glob("*.evt"):
        evt.write_bytes(evt.read_bytes()[: evt.stat().st_size // 2])
    err = bad(cli, "simulate", PLATFORM, anchor, "--format", "otf2")
    assert str(anchor) in err and "event" in err


def test_anchor_without_definitions(tmp_path, cli):
    anchor, _ = ring(tmp_path)
    (anchor.parent / "traces.def").unlink()
    err = bad(cli, "simulate", PLATFORM, anchor)
    assert str(anchor) in err and "definitions" in err


def test_unknown_collective_type(tmp_path, cli):
    p = Program(tmp_path / "unknown", 2)
    for rank in p.ranks:
        rank.collective("MPI_Mystery", 99, 0, 0, 0, {"op": "barrier"})
    anchor, _ = p.close()
    err = bad(cli, "simulate", PLATFORM, anchor)
    assert str(anchor) in err and "unknown collective type 99" in err


@pytest.mark.parametrize("speed", ["0", "-1e9", "nan"])
def test_traced_speed_must_be_positive(tmp_path, cli, speed):
    anchor, _ = ring(tmp_path)
    err = bad(cli, "simulate", PLATFORM, anchor, "--traced-speed", speed)
    assert "--traced-speed" in err and "positive" in err


def test_not_an_archive(tmp_path, cli):
    fake = tmp_path / "fake.otf2"
    fake.write_text("not otf2\n")
    err = bad(cli, "simulate", PLATFORM, fake, "--format", "otf2")
    assert str(fake) in err


def test_without_the_library_says_what_to_install(tmp_path, cli):
    anchor, _ = ring(tmp_path)
    err = bad(cli, "simulate", PLATFORM, anchor, env={"COMMAWARE_OTF2_LIBRARY": str(tmp_path / "libnothing.so")})
    assert "pip install otf2" in err and str(anchor) in err
