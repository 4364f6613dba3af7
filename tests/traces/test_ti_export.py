"""`commaware trace export --format ti`: our traces written as SimGrid time-independent traces,
read back by our TI reader with the same makespan; ops TI cannot express are refused with exit 2
and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from commaware import load_platform, load_trace, simulate
from commaware.cli import main
from commaware.traces.export import export_ti

DATA = Path(__file__).resolve().parents[1] / "data"
PLATFORM = {"cluster": {"count": 4, "speed": 2e9, "prefix": "n"},
            "network": {"bandwidth": 1.25e8, "latency": 1e-4, "eager_threshold": 65536}}


def every_op_trace() -> dict:
    ranks = []
    for r in range(4):
        right, left = (r + 1) % 4, (r + 3) % 4
        counts = [100 * (i + 1) for i in range(4)]
        ranks.append([
            {"op": "compute", "seconds": 0.001 * (r + 1)},
            {"op": "isend", "dst": right, "bytes": 1000, "tag": 1}, {"op": "irecv", "src": left, "tag": 1},
            {"op": "wait", "req": 1}, {"op": "wait", "req": 0},
            {"op": "compute", "flops": 3e6},
            {"op": "isend", "dst": right, "bytes": 200000, "tag": 2}, {"op": "recv", "src": left, "tag": 2},
            {"op": "waitall"},
            {"op": "send", "dst": (r + 2) % 4, "bytes": 60000, "tag": 3}, {"op": "recv", "src": (r + 2) % 4, "tag": 3},
            {"op": "sendrecv", "dst": right, "bytes": 300000, "src": left},
            {"op": "sleep", "seconds": 0.0005},
            {"op": "barrier"}, {"op": "bcast", "root": 1, "bytes": 100000}, {"op": "reduce", "root": 2, "bytes": 8000},
            {"op": "allreduce", "bytes": 80000}, {"op": "alltoall", "bytes": 3000},
            {"op": "gather", "root": 0, "bytes": 500}, {"op": "scatter", "root": 3, "bytes": 700},
            {"op": "gatherv", "root": 1, "bytes": [counts[i] if i == r else 0 for i in range(4)]},
            {"op": "scatterv", "root": 2, "bytes": counts},
            {"op": "allgather", "bytes": 256}, {"op": "allgatherv", "bytes": counts},
            {"op": "alltoallv", "bytes": [10 * (r + 1) + i for i in range(4)]},
            {"op": "reduce_scatter", "bytes": counts}, {"op": "scan", "bytes": 64}, {"op": "exscan", "bytes": 64},
            {"op": "isend", "dst": right, "bytes": 9, "tag": 4}, {"op": "irecv", "src": left, "tag": 4},
            {"op": "waitall"},  # (SimGrid's replay waits for requests still pending at the end; ours does not)
        ])
    return {"ranks": ranks}


def makespan(trace) -> float:
    return simulate(load_platform(PLATFORM), load_trace(trace)).makespan


def test_round_trip_keeps_the_makespan(write_json, tmp_path):
    src = write_json("every.json", every_op_trace())
    out = tmp_path / "ti"
    res = CliRunner().invoke(main, ["trace", "export", str(src), "--format", "ti", "-o", str(out),
                                    "--flops-per-second", "2e9"])
    assert res.exit_code == 0, res.output
    assert (out / "index.txt").read_text() == "".join(f"rank-{r}.txt\n" for r in range(4))
    rank1 = (out / "rank-1.txt").read_text().splitlines()
    assert rank1[1].startswith("# flops_per_second 2000000000.0 (--flops-per-second)")
    assert rank1[2:5] == ["1 init", "1 compute 4000000", "1 isend 2 1 1000 6"]
    assert "1 recv 0 2 200000 6" in rank1  # a receive gets its matching send's size
    assert "1 wait 0 1 1" in rank1 and "1 sendRecv 300000 2 300000 0 6 6" in rank1
    assert "1 gatherv 200 100 200 300 400 1 6 6" in rank1  # the root lists every rank's count
    assert "1 alltoallv 86 20 21 22 23 104 11 21 31 41 6 6" in rank1  # receives: what each rank sends to 1
    assert rank1[-1] == "1 finalize"
    original = makespan(src)
    assert makespan(out / "index.txt") == pytest.approx(original, rel=1e-12)
    assert original > 0.004


def test_default_rate_is_the_platform_first_host_then_1e9(write_json, tmp_path):
    src = write_json("c.json", {"ranks": [[{"op": "compute", "seconds": 0.5}]]})
    export_ti(src, tmp_path / "a", platform=PLATFORM)
    assert "0 compute 1000000000\n" in (tmp_path / "a" / "rank-0.txt").read_text()
    export_ti(src, tmp_path / "b")
    text = (tmp_path / "b" / "rank-0.txt").read_text()
    assert "0 compute 500000000\n" in text and "(the default)" in text


def test_simgrid_trace_exported_again_replays_the_same(tmp_path):
    export_ti(DATA / "ti_colls" / "index.txt", tmp_path / "again")
    assert makespan(tmp_path / "again" / "index.txt") == pytest.approx(makespan(DATA / "ti_colls" / "index.txt"), rel=1e-12)


@pytest.mark.parametrize("ops0, ops1, field, words", [
    ([{"op": "send", "dst": 1, "bytes": 10, "sync": True}], [{"op": "recv", "src": 0}], "ranks[0][0]", "synchronous"),
    ([{"op": "send", "dst": 1, "bytes": 10}], [{"op": "recv", "src": "any"}], "ranks[1][0]", "any source"),
    ([{"op": "send", "dst": 1, "bytes": 10, "tag": 4}], [{"op": "recv", "src": 0, "tag": "any"}], "ranks[1][0]", "any tag"),
    ([{"op": "sendrecv", "dst": 1, "bytes": 10, "src": 1, "tag": 3, "recvtag": 3}],
     [{"op": "sendrecv", "dst": 0, "bytes": 10, "src": 0, "tag": 3, "recvtag": 3}], "ranks[0][0]", "tag 0"),
    ([{"op": "send", "dst": 1, "bytes": 2.5}], [{"op": "recv", "src": 0}], "ranks[0][0]", "whole number"),
])
def test_inexpressible_op_is_exit_2_and_writes_nothing(write_json, tmp_path, ops0, ops1, field, words):
    src = write_json("bad.json", {"ranks": [ops0, ops1]})
    out = tmp_path / "ti"
    res = CliRunner().invoke(main, ["trace", "export", str(src), "-o", str(out)])
    assert res.exit_code == 2, res.output
    assert f"{src}: {field}:" in res.stderr and words in res.stderr and "cannot be written as a SimGrid TI" in res.stderr
    assert "Traceback" not in res.output
    assert not out.exists() and not list(tmp_path.glob(".ti.*"))


def test_bad_options(write_json, tmp_path):
    src = write_json("ok.json", {"ranks": [[{"op": "compute", "seconds": 1}]]})
    res = CliRunner().invoke(main, ["trace", "export", str(src), "-o", str(tmp_path / "x"), "--flops-per-second", "-1"])
    assert res.exit_code == 2 and "--flops-per-second" in res.stderr and not (tmp_path / "x").exists()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    res = CliRunner().invoke(main, ["trace", "export", str(src), "-o", str(tmp_path / "full")])
    assert res.exit_code == 2 and "not an empty directory" in res.stderr
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"
    res = CliRunner().invoke(main, ["trace", "export", str(tmp_path / "missing.json"), "-o", str(tmp_path / "y")])
    assert res.exit_code == 2 and "missing.json" in res.stderr and not (tmp_path / "y").exists()


@pytest.mark.parametrize("fmt", ["ti", "json", "goal"])
def test_an_output_in_a_missing_folder_is_exit_2(write_json, tmp_path, fmt):
    src = write_json("ok.json", {"ranks": [[{"op": "compute", "seconds": 1}]]})
    out = tmp_path / "nope" / "out"
    res = CliRunner().invoke(main, ["trace", "export", str(src), "--format", fmt, "-o", str(out)])
    assert res.exit_code == 2 and f"--output: {out}: the directory {out.parent} does not exist" in res.stderr
    assert "Traceback" not in res.output and not out.parent.exists()
