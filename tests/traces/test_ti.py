"""SimGrid time-independent traces: the shared file, the index file and the directory
forms, gzip/xz, `init` datatype switching, every collective of a real SMPI trace, and bad
input naming file and line."""

from __future__ import annotations

import gzip
import json
import lzma
import subprocess
import sys
from pathlib import Path

import pytest

import commaware
from conftest import EXAMPLES, ROOT

DATA = ROOT / "tests" / "data"

PLATFORM = {"cluster": {"count": 4, "speed": 1e9, "cores": 1},
            "network": {"model": "maxmin", "bandwidth": 1.25e8, "latency": 1e-5, "eager_threshold": 65536}}

# A 4-rank program: blocking and non-blocking point-to-point, compute, collectives.
TI = """\
0 init
1 init
2 init
3 init
0 compute 1e9
1 compute 2e9
0 send 1 7 1000
1 recv 0 7 1000
1 isend 2 3 500
2 irecv 1 3 500
2 compute 5e8
2 wait 1 2 3
1 wait 1 2 3
3 isend 0 1 200000
0 irecv 3 1 200000
0 waitall 1
3 waitall
0 barrier
1 barrier
2 barrier
3 barrier
0 bcast 4096 1
1 bcast 4096 1
2 bcast 4096 1
3 bcast 4096 1
0 allreduce 100 1e6 0
1 allreduce 100 1e6 0
2 allreduce 100 1e6 0
3 allreduce 100 1e6 0
0 finalize
1 finalize
2 finalize
3 finalize
"""

JSON = {"ranks": [
    [{"op": "compute", "flops": 1e9}, {"op": "send", "dst": 1, "tag": 7, "bytes": 1000},
     {"op": "irecv", "src": 3, "tag": 1}, {"op": "waitall"}, {"op": "barrier"},
     {"op": "bcast", "root": 1, "bytes": 4096}, {"op": "allreduce", "bytes": 800}, {"op": "compute", "flops": 1e6}],
    [{"op": "compute", "flops": 2e9}, {"op": "recv", "src": 0, "tag": 7},
     {"op": "isend", "dst": 2, "tag": 3, "bytes": 500}, {"op": "wait", "req": 0}, {"op": "barrier"},
     {"op": "bcast", "root": 1, "bytes": 4096}, {"op": "allreduce", "bytes": 800}, {"op": "compute", "flops": 1e6}],
    [{"op": "irecv", "src": 1, "tag": 3}, {"op": "compute", "flops": 5e8}, {"op": "wait", "req": 0},
     {"op": "barrier"}, {"op": "bcast", "root": 1, "bytes": 4096}, {"op": "allreduce", "bytes": 800},
     {"op": "compute", "flops": 1e6}],
    [{"op": "isend", "dst": 0, "tag": 1, "bytes": 200000}, {"op": "waitall"}, {"op": "barrier"},
     {"op": "bcast", "root": 1, "bytes": 4096}, {"op": "allreduce", "bytes": 800}, {"op": "compute", "flops": 1e6}],
]}


def per_rank(text: str) -> list[str]:
    out: dict[int, list[str]] = {}
    for line in text.splitlines():
        out.setdefault(int(line.split()[0]), []).append(line + "\n")
    return ["".join(out[r]) for r in sorted(out)]


@pytest.fixture()
def expected() -> float:
    return commaware.simulate(PLATFORM, JSON).makespan


def makespan(trace: commaware.Trace) -> float:
    return commaware.simulate(PLATFORM, trace).makespan


def test_shared_file_replays_like_hand_written_json(tmp_path: Path, expected: float) -> None:
    path = tmp_path / "run.ti"
    path.write_text(TI)
    assert expected > 2.0
    assert makespan(commaware.load_trace(path)) == expected  # auto-detected
    assert makespan(commaware.load_trace(path, format="ti")) == expected


def test_gzip_and_xz(tmp_path: Path, expected: float) -> None:
    gz = tmp_path / "run.txt.gz"
    gz.write_bytes(gzip.compress(TI.encode()))
    xz = tmp_path / "run.txt.xz"
    xz.write_bytes(lzma.compress(TI.encode()))
    assert makespan(commaware.load_trace(gz)) == expected
    assert makespan(commaware.load_trace(xz, format="ti")) == expected


def test_index_file_and_directory(tmp_path: Path, expected: float) -> None:
    files = tmp_path / "run_files"
    files.mkdir()
    for r, text in enumerate(per_rank(TI)):
        (files / f"{r}_run.txt").write_text(text)
    index = tmp_path / "run.txt"
    index.write_text("".join(f"run_files/{r}_run.txt\n" for r in range(4)))
    assert makespan(commaware.load_trace(index)) == expected
    assert makespan(commaware.load_trace(files)) == expected
    assert makespan(commaware.load_trace(files, format="ti")) == expected


def test_init_argument_switches_to_doubles() -> None:
    bytes_trace = "0 init\n1 init\n0 send 1 0 100000\n1 recv 0 0 100000\n"
    doubles = "0 init 1\n1 init 1\n0 send 1 0 100000\n1 recv 0 0 100000\n"
    explicit = "0 init\n1 init\n0 send 1 0 100000 0\n1 recv 0 0 100000 0\n"

    def run(text: str, tmp: Path) -> commaware.Result:
        (tmp / "t.ti").write_text(text)
        return commaware.simulate(PLATFORM, commaware.load_trace(tmp / "t.ti"), record_messages=True)

    import tempfile

    with tempfile.TemporaryDirectory() as d:
        assert run(bytes_trace, Path(d)).messages["bytes"].tolist() == [100000.0]
        assert run(doubles, Path(d)).messages["bytes"].tolist() == [800000.0]
        assert run(explicit, Path(d)).messages["bytes"].tolist() == [800000.0]


def test_json_still_loads(tmp_path: Path, expected: float) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(JSON))
    assert makespan(commaware.load_trace(path)) == expected
    assert makespan(commaware.load_trace(path, format="json")) == expected


BAD = [
    ("0 init\n0 frobnicate 1\n", "line 2", "unknown action `frobnicate`"),
    ("0 init\n0 reduce 10\n", "line 2", "takes COUNT COMP_FLOPS"),
    ("0 init\n0 alltoallv 1 1 1\n1 init\n", "line 2", "2 SEND_COUNTS"),
    ("0 send 1 0\n1 init\n", "line 1", "takes DST TAG COUNT"),
    ("0 send 1 0 1e12\n1 init\n", "line 1", "does not fit"),
    ("0 send 1 0 8 77\n1 init\n", "line 1", "unknown datatype id 77"),
    ("0 send 1 0 8 -2\n1 init\n", "line 1", "unknown datatype id -2"),
    ("0 init\n0 ibarrier\n1 init\n", "line 2", "a non-blocking collective"),
    ("0 isend 1 0 8\n0 wait 0 1 9\n1 init\n", "line 2", "no pending"),
    ("0 send 5 0 8\n1 init\n", "line 1", "out of range"),
    ("0 init\n0 waitall many\n", "line 2", "expected a count (a number), got `many`"),
    ("0 init\n0 waitall 1 2\n", "line 2", "takes [COUNT]"),
]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "commaware.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("text", "field", "reason"), BAD)
def test_bad_input_names_file_and_line(tmp_path: Path, text: str, field: str, reason: str) -> None:
    path = tmp_path / "bad.ti"
    path.write_text(text)
    with pytest.raises(commaware.TraceError) as info:
        commaware.load_trace(path)
    assert info.value.source == str(path)
    assert info.value.field == field
    assert reason in info.value.reason
    platform = tmp_path / "p.json"
    platform.write_text(json.dumps(PLATFORM))
    proc = run_cli("simulate", str(platform), str(path), "--format", "ti", "-q")
    assert proc.returncode == 2, proc.stderr
    assert str(path) in proc.stderr and field in proc.stderr and reason in proc.stderr.replace("\n", " ")
    assert proc.stdout == ""


def test_per_rank_error_names_the_rank_file(tmp_path: Path) -> None:
    (tmp_path / "0.txt").write_text("0 init\n0 send 1 0 8\n")
    (tmp_path / "1.txt").write_text("1 init\n\n1 recv 0 0 8\n1 bogus\n")
    index = tmp_path / "index"
    index.write_text("0.txt\n1.txt\n")
    for source in (index, tmp_path):
        with pytest.raises(commaware.TraceError) as info:
            commaware.load_trace(source, format="ti")
        assert info.value.source == str(tmp_path / "1.txt")
        assert info.value.field == "line 4"
    index.write_text("0.txt\nmissing.txt\n")
    with pytest.raises(commaware.TraceError) as info:
        commaware.load_trace(index, format="ti")
    assert (info.value.source, info.value.field) == (str(index), "line 2")


def test_cli_simulate_ti(tmp_path: Path, expected: float) -> None:
    platform = tmp_path / "p.json"
    platform.write_text(json.dumps(PLATFORM))
    path = tmp_path / "run.txt"
    path.write_text(TI)
    proc = run_cli("simulate", str(platform), str(path), "--json", "-q")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["makespan"] == expected


def test_smpi_trace_of_every_collective_replays():
    # tests/data/ti_colls: `smpirun -np 4 -trace-ti` (SimGrid 3.32) of tests/peers/ti_colls.c,
    # whose comments give each call's counts (doubles unless said otherwise).
    trace = commaware.load_trace(DATA / "ti_colls" / "index.txt")
    assert trace.n_ranks == 4
    res = commaware.simulate(EXAMPLES / "cluster16.json", trace)
    m = res.messages
    sizes = {op: sorted(set(m[m["op"] == op]["bytes"])) for op in set(m["op"])}
    assert sizes["gatherv"] == [160.0, 240.0, 320.0]  # ranks 1-3 send 20, 30, 40 doubles to root 0
    assert sizes["scatterv"] == [80.0, 160.0, 240.0]  # root 3 sends 10, 20, 30 doubles to ranks 0-2
    assert sizes["scatter"] == [120.0, 240.0]  # 30 ints a block; binomial: a 2-block subtree first
    assert sizes["sendrecv"] == [560.0]
    assert sizes["allgatherv"] == [80.0, 160.0, 240.0, 320.0]
    assert sizes["alltoallv"] == sorted({8.0 * (10 * (r + 1) + d) for r in range(4) for d in range(4) if d != r})
    # Binomial gather on 4 ranks (root 2): three messages, one carrying two blocks of 50 doubles.
    assert sorted(m[m["op"] == "gather"]["bytes"]) == [400.0, 400.0, 800.0]
    assert res.makespan > 0 and len(m) == res.message_stats["count"]


# Rank 0 sends 3 elements of a derived datatype (id -1) and broadcasts 2; rank 1 receives.
DERIVED = """\
0 init
1 init
0 send 1 5 3 -1
1 recv 0 5 3 -1
0 bcast 2 0 -1
1 bcast 2 0 -1
"""


def test_derived_datatypes_carry_0_bytes_unless_told(tmp_path: Path) -> None:
    path = tmp_path / "derived.txt"
    path.write_text(DERIVED)
    platform = commaware.load_platform(PLATFORM)
    trace = commaware.load_trace(path)
    assert trace.derived_datatype_ops == 3  # the send and both bcasts, not the receive
    res = commaware.simulate(platform, trace)
    assert res.derived_datatype_ops == 3 and set(res.messages["bytes"]) == {0.0}
    res = commaware.simulate(platform, commaware.load_trace(path, derived_datatype_bytes=1000))
    assert sorted(res.messages["bytes"]) == [2000.0, 3000.0] and res.derived_datatype_ops == 3
    assert commaware.load_trace(ROOT / "examples" / "ring.json").derived_datatype_ops == 0

    platform_file = tmp_path / "p.json"
    platform_file.write_text(json.dumps(PLATFORM))
    proc = run_cli("simulate", str(platform_file), str(path), "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("warning") == 1 and "3 messages of the trace" in proc.stderr, proc.stderr
    proc = run_cli("simulate", str(platform_file), str(path), "--json", "-q", "--derived-datatype-bytes", "1000")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert json.loads(proc.stdout)["derived_datatype_ops"] == 3
    proc = run_cli("trace", "export", str(path), "-o", str(tmp_path / "out"))
    assert proc.returncode == 0 and "3 messages of the trace" in proc.stderr, proc.stderr


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "2.5", "1e12"])
def test_derived_datatype_bytes_must_be_a_datatype_size(tmp_path: Path, value: str) -> None:
    path = tmp_path / "derived.txt"
    path.write_text(DERIVED)
    with pytest.raises(commaware.OptionsError) as info:
        commaware.load_trace(path, derived_datatype_bytes=float(value))
    assert info.value.source == "--derived-datatype-bytes"
    assert "whole number of bytes from 0 to 2147483647" in info.value.reason
    platform = tmp_path / "p.json"
    platform.write_text(json.dumps(PLATFORM))
    for args in (["simulate", str(platform), str(path), "-q"], ["trace", "export", str(path), "-o", str(tmp_path / "x")],
                 ["simulate", str(platform), str(ROOT / "examples" / "ring.json")]):
        proc = run_cli(*args, f"--derived-datatype-bytes={value}")
        assert proc.returncode == 2, proc.stderr
        assert "--derived-datatype-bytes" in proc.stderr and "whole number of bytes" in proc.stderr, proc.stderr
        assert proc.stdout == "" and not (tmp_path / "x").exists()
