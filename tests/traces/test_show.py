"""`commaware trace show`: ranks, ops per kind, point-to-point bytes per rank and per
collective kind, on one small trace written by hand in every format the reader takes, with
the numbers worked out by hand below; the matrix drawing; the --json schema; bad input."""

from __future__ import annotations

import gzip
import json
import lzma
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from commaware import _core, load_trace, summarize_trace
from commaware.cli import main

ROOT = Path(__file__).resolve().parents[2]

# Three ranks. Rank 0 sends 100 doubles (800 B) to 1; rank 1 isends 5 chars (5 B) to 2; rank 2
# sends 3 ints (12 B) to 0; then a bcast of 10 doubles (80 B) from 0 and an alltoall of 4-int
# blocks (16 B per destination). Rank 0 computes 1e6 flops, rank 1 2e6.
TI_RANKS = [
    ["0 init", "0 compute 1000000", "0 send 1 0 100 0", "0 recv 2 0 3 1", "0 bcast 10 0 0", "0 alltoall 4 4 1 1",
     "0 finalize"],
    ["1 init", "1 recv 0 0 100 0", "1 compute 2000000", "1 isend 2 0 5 2", "1 wait 1 2 0", "1 bcast 10 0 0",
     "1 alltoall 4 4 1 1", "1 finalize"],
    ["2 init", "2 irecv 1 0 5 2", "2 wait 1 2 0", "2 send 0 0 3 1", "2 bcast 10 0 0", "2 alltoall 4 4 1 1",
     "2 finalize"],
]
JSON_TRACE = {"ranks": [
    [{"op": "compute", "flops": 1e6}, {"op": "send", "dst": 1, "bytes": 800}, {"op": "recv", "src": 2},
     {"op": "bcast", "root": 0, "bytes": 80}, {"op": "alltoall", "bytes": 16}],
    [{"op": "recv", "src": 0}, {"op": "compute", "flops": 2e6}, {"op": "isend", "dst": 2, "bytes": 5},
     {"op": "wait", "req": 0}, {"op": "bcast", "root": 0, "bytes": 80}, {"op": "alltoall", "bytes": 16}],
    [{"op": "irecv", "src": 1}, {"op": "wait", "req": 0}, {"op": "send", "dst": 0, "bytes": 12},
     {"op": "bcast", "root": 0, "bytes": 80}, {"op": "alltoall", "bytes": 16}],
]}


def toml_text() -> str:
    def table(op: dict) -> str:
        return "{" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in op.items()) + "}"

    return "ranks = [\n" + ",\n".join("  [" + ", ".join(table(op) for op in ops) + "]" for ops in JSON_TRACE["ranks"]) + "\n]\n"


def write_formats(tmp: Path) -> dict[str, tuple[Path, str]]:
    """The same trace as JSON, TOML, a shared TI file, a TI index (xz per-rank files) and a TI
    directory (gz per-rank files)."""
    (tmp / "t.json").write_text(json.dumps(JSON_TRACE))
    (tmp / "t.toml").write_text(toml_text())
    (tmp / "shared.txt").write_text("\n".join(line for rank in TI_RANKS for line in rank) + "\n")
    (tmp / "idx").mkdir()
    for r, lines in enumerate(TI_RANKS):
        (tmp / "idx" / f"r{r}.txt.xz").write_bytes(lzma.compress(("\n".join(lines) + "\n").encode()))
    (tmp / "idx" / "index.txt").write_text("".join(f"r{r}.txt.xz\n" for r in range(3)))
    (tmp / "dir").mkdir()
    for r, lines in enumerate(TI_RANKS):
        (tmp / "dir" / f"rank-{r}.txt.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    return {"json": (tmp / "t.json", "auto"), "toml": (tmp / "t.toml", "toml"), "ti-shared": (tmp / "shared.txt", "ti"),
            "ti-index-xz": (tmp / "idx" / "index.txt", "auto"), "ti-dir-gz": (tmp / "dir", "auto")}


FORMATS = ["json", "toml", "ti-shared", "ti-index-xz", "ti-dir-gz"]


def check_counts(s: dict) -> None:
    assert s["ranks"] == 3
    # Rank 0: compute send recv bcast alltoall; rank 1: recv compute isend wait bcast alltoall;
    # rank 2: irecv wait send bcast alltoall (TI's init and finalize are no ops).
    assert s["per_rank"]["ops"] == [5, 6, 5]
    assert s["ops"] == 16
    assert s["ops_per_kind"] == {"compute": 2, "send": 2, "recv": 2, "isend": 1, "irecv": 1, "wait": 2,
                                 "bcast": 3, "alltoall": 3}
    assert s["point_to_point"] == {"messages": 3, "bytes": 817.0, "any_source_receives": 0, "any_tag_receives": 0}
    assert s["per_rank"]["sent_messages"] == [1, 1, 1]
    assert s["per_rank"]["sent_bytes"] == [800.0, 5.0, 12.0]
    assert s["per_rank"]["received_bytes"] == [12.0, 800.0, 5.0]
    # One call each, the bytes the call states: the bcast's buffer, the alltoall's block.
    assert s["collectives"] == {"bcast": {"calls": 1, "ops": 3, "bytes": 80.0},
                                "alltoall": {"calls": 1, "ops": 3, "bytes": 16.0}}
    assert s["computation"] == {"flops": 3e6, "compute_seconds": 0.0, "sleep_seconds": 0.0}
    assert s["derived_datatype_ops"] == 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_counts_in_every_format(tmp_path, fmt):
    path, reader = write_formats(tmp_path)[fmt]
    summary, matrix = summarize_trace(load_trace(path, reader), matrix=True)
    check_counts(summary)
    assert matrix is not None
    assert list(zip(matrix.src.tolist(), matrix.dst.tolist(), matrix.bytes.tolist())) == [(0, 1, 800.0), (1, 2, 5.0),
                                                                                          (2, 0, 12.0)]
    res = CliRunner().invoke(main, ["trace", "show", str(path), "--format", reader, "--json"])
    assert res.exit_code == 0, res.output
    check_counts(json.loads(res.output))


def test_text_output(tmp_path):
    path, _ = write_formats(tmp_path)["json"]
    res = CliRunner().invoke(main, ["trace", "show", str(path)])
    assert res.exit_code == 0, res.output
    assert "3 ranks, 16 ops" in res.output
    assert "point-to-point: 3 messages, 817 bytes" in res.output
    assert "bcast" in res.output and " 80 bytes" in res.output


def test_collectives_and_sub_communicators():
    # 4 ranks; ranks 1 and 3 split off (communicator 1 of theirs) and rank 1 sends 8 B to rank 1
    # of it, world rank 3; a gatherv on it to its rank 0 (world 1), whose list says 3 + 4 B; an
    # alltoallv on the world: 1+2+3+4 per rank; an allreduce of 64 B.
    v = [1, 2, 3, 4]
    ranks = []
    for r in range(4):
        ops = [{"op": "comm_split", "color": r % 2}]
        if r == 1:
            ops += [{"op": "send", "dst": 1, "bytes": 8, "comm": 1}, {"op": "gatherv", "root": 0, "bytes": [3, 4], "comm": 1}]
        if r == 3:
            ops += [{"op": "recv", "src": "any", "comm": 1}, {"op": "gatherv", "root": 0, "bytes": [0, 4], "comm": 1}]
        ops += [{"op": "alltoallv", "bytes": v}, {"op": "allreduce", "bytes": 64}]
        ranks.append(ops)
    summary, matrix = summarize_trace(load_trace({"ranks": ranks}), matrix=True)
    assert matrix is not None and (matrix.src.tolist(), matrix.dst.tolist(), matrix.bytes.tolist()) == ([1], [3], [8.0])
    assert summary["collectives"] == {
        "comm_split": {"calls": 1, "ops": 4, "bytes": 0.0},
        # Only communicator 1's call; ranks 0 and 2 have a communicator of their own but no call on it.
        "gatherv": {"calls": 1, "ops": 2, "bytes": 7.0},
        "alltoallv": {"calls": 1, "ops": 4, "bytes": 40.0},
        "allreduce": {"calls": 1, "ops": 4, "bytes": 64.0},
    }
    assert summary["point_to_point"]["any_source_receives"] == 1


def test_derived_datatype_bytes_are_honoured(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("0 init\n0 send 1 0 10 -1\n1 init\n1 recv 0 0 10 -1\n")
    plain = CliRunner().invoke(main, ["trace", "show", str(path), "--json"])
    assert plain.exit_code == 0, plain.output
    doc = json.loads(plain.stdout)
    assert doc["point_to_point"]["bytes"] == 0.0 and doc["derived_datatype_ops"] == 1
    assert "derived datatype" in plain.stderr
    sized = CliRunner().invoke(main, ["trace", "show", str(path), "--json", "--derived-datatype-bytes", "24"])
    assert json.loads(sized.stdout)["point_to_point"]["bytes"] == 240.0


def test_matrix_png(tmp_path):
    path, _ = write_formats(tmp_path)["ti-shared"]
    out = tmp_path / "m.png"
    res = CliRunner().invoke(main, ["trace", "show", str(path), "--matrix", str(out)])
    assert res.exit_code == 0, res.output
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_matrix_binned_at_many_ranks(tmp_path):
    # A ring of 1,500 ranks: more than 512 cells a side, so 3 ranks per cell (500 x 500).
    n = 1500
    ranks = [[{"op": "isend", "dst": (r + 1) % n, "bytes": 1000 + r}, {"op": "irecv", "src": (r - 1) % n}, {"op": "waitall"}]
             for r in range(n)]
    trace = load_trace({"ranks": ranks})
    matrix = trace.comm_matrix()
    dense = matrix.dense(3)
    assert dense.shape == (500, 500)
    # Cell (0, 0) holds 0->1 and 1->2 (1000 + 1001); cell (0, 1) holds 2->3 (1002).
    assert dense[0, 0] == 2001.0 and dense[0, 1] == 1002.0 and dense.sum() == sum(1000 + r for r in range(n))
    src = tmp_path / "ring.json"
    src.write_text(json.dumps({"ranks": ranks}))
    out = tmp_path / "m.svg"
    res = CliRunner().invoke(main, ["trace", "show", str(src), "--matrix", str(out)])
    assert res.exit_code == 0, res.output
    svg = out.read_text()
    assert svg.lstrip().startswith("<?xml") and "binned 3 per cell" in svg


def test_json_schema(tmp_path):
    path, _ = write_formats(tmp_path)["json"]
    res = CliRunner().invoke(main, ["trace", "show", str(path), "--json"])
    schema_res = CliRunner().invoke(main, ["schema", "trace-summary"])
    assert schema_res.exit_code == 0
    schema = json.loads(schema_res.output)
    jsonschema.validate(json.loads(res.output), schema)
    assert schema == json.loads((ROOT / "docs" / "trace-summary.schema.json").read_text()), (
        "docs/trace-summary.schema.json is stale: regenerate with `commaware schema trace-summary`")
    assert schema == json.loads(_core.trace_summary_schema())


@pytest.mark.parametrize("content,reason", [
    ("0 init\n0 frobnicate 3\n", "unknown action `frobnicate`"),
    ('{"ranks": [[{"op": "send", "dst": 5, "bytes": 1}]]}', "ranks[0][0]"),
    ('{"ranks": ', "malformed"),
])
def test_bad_file_exit_2(tmp_path, cli, content, reason):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    out = tmp_path / "m.svg"
    proc = cli("trace", "show", path, "--matrix", out)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and "error:" in proc.stderr and str(path) in proc.stderr
    assert reason in proc.stderr.replace("\n", " ") or reason.lower() in proc.stderr.lower()
    assert not out.exists()


def test_bad_matrix_suffix_exit_2(tmp_path, cli):
    path, _ = write_formats(tmp_path)["json"]
    proc = cli("trace", "show", path, "--matrix", tmp_path / "m.pdf")
    assert proc.returncode == 2 and "--matrix needs a .svg or .png" in proc.stderr


def test_bad_options_exit_2(tmp_path, cli):
    path, _ = write_formats(tmp_path)["ti-shared"]
    proc = cli("trace", "show", path, "--derived-datatype-bytes", "-1")
    assert proc.returncode == 2 and "--derived-datatype-bytes" in proc.stderr and proc.stdout == ""
    proc = cli("trace", "show", path, "--matrix", tmp_path / "missing" / "m.svg")
    assert proc.returncode == 2 and "cannot write" in proc.stderr
    proc = cli("trace", "show", tmp_path / "nope.txt")
    assert proc.returncode == 2 and "nope.txt: cannot read" in proc.stderr
