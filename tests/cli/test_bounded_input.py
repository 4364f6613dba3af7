"""Bounded input (issue 30, items 3 and 7): decompression bombs, deep nesting, huge numbers,
CSV rows longer than their header, no partial output, rank gaps and byte-order marks each
end with one error line and exit code 2, within seconds and megabytes."""

from __future__ import annotations

import gzip
import json
import lzma
import os
import tempfile
from typing import Callable

import pytest

from conftest import EXAMPLES, run_cli, run_measured

PLATFORM = EXAMPLES / "cluster16.json"
CLUSTER = {"cluster": {"count": 16, "speed": 1e9, "cores": 1},
           "network": {"model": "maxmin", "bandwidth": 1.25e8, "latency": 5e-5, "eager_threshold": 65536}}

def measured_cli(*args: object, env: dict[str, str] | None = None) -> tuple[int, float, float, str]:
    """(exit code, seconds, peak RSS in MiB, stdout + stderr) of `commaware ARGS`."""
    with tempfile.TemporaryDirectory() as folder:
        env = {k: v for k, v in os.environ.items() if not k.startswith("COMMAWARE_MAX_")} | (env or {})
        code, stdout, stderr, seconds, rss = run_measured(folder, *args, env=env, timeout=120)
    return code, seconds, rss / (1 << 20), stdout + stderr


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    assert "Traceback" not in output
    return lines[0]


def member(opener, size: int, byte: bytes = b"\0") -> bytes:
    """One compressed member (gzip) or stream (xz) of `size` copies of `byte`."""
    import io

    buf = io.BytesIO()
    with opener(buf, "wb") as f:
        f.write(byte * size)
    return buf.getvalue()


def bomb_file(path, opener, byte: bytes, head: bytes = b""):
    """5 GiB of `byte` after `head`: 80 copies of a 64 MiB member (gzip and xz read
    concatenated members as one stream), a few MB on disk, made in well under a second."""
    one = member(opener, 64 << 20, byte)
    with open(path, "wb") as f:
        if head:
            f.write(member(opener, 1, head))
        for _ in range(80):
            f.write(one)
    assert path.stat().st_size < 8 << 20
    return path


@pytest.mark.parametrize("suffix,opener", [(".gz", gzip.open), (".xz", lzma.open)])
@pytest.mark.parametrize("name,byte,head,expected", [
    # Zeros, the usual bomb, in a line-oriented trace and in a JSON document (exempt from the
    # line limit): no text holds a NUL byte, so the first chunk stops it.
    ("bomb.txt", b"\0", b"", "byte 0 is NUL: not a text file"),
    ("bomb.json", b"\0", b'{"ranks": ', "byte 10 is NUL: not a text file"),
    # Text without a newline: the line limit.
    ("bomb.txt", b"x", b"", "line 1: longer than 16 MiB (the limit; COMMAWARE_MAX_LINE_BYTES raises it)"),
])
def test_a_decompression_bomb_stops_within_seconds_and_megabytes(tmp_path, suffix, opener, name, byte, head, expected):
    bomb = bomb_file(tmp_path / f"{name}{suffix}", opener, byte, head)
    code, seconds, rss_mib, output = measured_cli("simulate", PLATFORM, bomb)
    line = one_error_line(output)
    assert code == 2
    assert f"{bomb}: {expected}" in line
    assert seconds < 20, seconds  # before: 12 s (.gz), 28 s (.xz), then MemoryError at 3.7 GB
    assert rss_mib < 250, rss_mib


def test_the_decompressed_size_is_bounded_and_configurable(tmp_path):
    # Valid TI lines (short), 8 MiB once decompressed.
    trace = tmp_path / "big.txt.gz"
    with gzip.open(trace, "wb", compresslevel=1) as f:
        f.write(b"0 compute 1\n" * ((8 << 20) // 12))
    code, _, _, output = measured_cli("simulate", PLATFORM, trace, env={"COMMAWARE_MAX_INPUT_BYTES": "1M"})
    assert code == 2
    assert f"{trace}: the text is once decompressed more than 1 MiB (the limit; COMMAWARE_MAX_INPUT_BYTES raises it)" \
        in one_error_line(output)
    # A plain file is refused by its size, before it is read.
    plain = tmp_path / "big.txt"
    plain.write_bytes(b"0 compute 1\n" * 200_000)
    code, _, _, output = measured_cli("simulate", PLATFORM, plain, env={"COMMAWARE_MAX_INPUT_BYTES": "1M"})
    assert code == 2 and f"{plain}: the text is more than 1 MiB" in one_error_line(output)
    # A directory's files count together.
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    for r in range(2):
        (ranks / f"r{r}.txt").write_bytes(f"{r} compute 1\n".encode() * 50_000)  # 600 kB each
    code, _, _, output = measured_cli("simulate", PLATFORM, ranks, env={"COMMAWARE_MAX_INPUT_BYTES": "1M"})
    assert code == 2 and "r1.txt: the text is more than 1 MiB with the trace's other files" in one_error_line(output)
    # Raised limits read them.
    for path in (trace, plain, ranks):
        code, _, _, output = measured_cli("simulate", PLATFORM, path, "-q", env={"COMMAWARE_MAX_INPUT_BYTES": "64M"})
        assert code == 0, output


def test_the_line_limit_is_configurable_and_spares_json(tmp_path):
    ti = tmp_path / "long.txt"
    ti.write_text("0 compute 1\n0 compute " + "1" * 5000 + "\n")
    code, _, _, output = measured_cli("simulate", PLATFORM, ti, env={"COMMAWARE_MAX_LINE_BYTES": "4K"})
    assert code == 2 and f"{ti}: line 2: longer than 4 KiB (the limit; COMMAWARE_MAX_LINE_BYTES raises it)" \
        in one_error_line(output)
    # TOML is line-oriented, even when it starts with a [table] as JSON starts with an array.
    toml = tmp_path / "long.toml"
    toml.write_text("[cluster]\ncount = 4\nspeed = 1e9\n# " + "x" * 5000 + "\n")
    code, _, _, output = measured_cli("simulate", toml, EXAMPLES / "ring.json", env={"COMMAWARE_MAX_LINE_BYTES": "4K"})
    assert code == 2 and f"{toml}: line 4: longer than 4 KiB" in one_error_line(output)
    # A JSON document is one line when json.dumps writes it: only its total size is bounded.
    trace = tmp_path / "one_line.json"
    trace.write_text(json.dumps({"ranks": [[{"op": "compute", "flops": 1}] * 1000]}))
    assert trace.stat().st_size > 4096
    code, _, _, output = measured_cli("simulate", PLATFORM, trace, "-q", env={"COMMAWARE_MAX_LINE_BYTES": "4K"})
    assert code == 0, output


@pytest.mark.parametrize("value", ["lots", "0", "-5", "1.5G", "99999999999999999999"])
def test_a_bad_limit_names_the_variable(value):
    code, _, _, output = measured_cli("simulate", PLATFORM, EXAMPLES / "ring.json", env={"COMMAWARE_MAX_INPUT_BYTES": value})
    assert code == 2
    assert one_error_line(output).startswith("error: COMMAWARE_MAX_INPUT_BYTES: expected a byte count > 0")


def deep(n: int) -> str:
    return "[" * n + "]" * n


def nested_text(head: str, opening: str, closing: str, tail: str = "") -> Callable[[int], str]:
    """A text of `n` levels: `head`, `opening` n times, `closing` n times, `tail`."""
    return lambda n: head + opening * n + closing * n + tail


def too_deep(limit: str, where: str) -> str:
    return f"nested more than 80 levels deep (the limit for {limit}) at {where}"


JSON, TOML = "arrays and objects", "tables and arrays"
SIMGRID = '<?xml version="1.0"?>\n<platform version="4.1">\n'


# Every reader of a nested format, from the CLI: the text, and the error after "FILE: " at the
# 81st level (a JSON document's own object is its first).
@pytest.mark.parametrize("args,name,text,error", [
    # Python's reader (paper 000's tree), then the core's.
    (["interference", "throughput"], "tree.json", nested_text('{"task_mb": 1, "nodes": ', "[", "]", "}"),
     too_deep(JSON, "line 1 column 104")),
    (["taskfarm"], "tree.json", nested_text('{"task_mb": 1, "nodes": ', "[", "]", "}"), too_deep(JSON, "line 1 column 104")),
    (["platform", "show"], "platform.xml", nested_text(SIMGRID, "<zone>", "</zone>", "</platform>"),
     "line 3, column 475: nested more than 80 levels deep (the limit for elements)"),
    (["platform", "show"], "platform.xml", nested_text(SIMGRID, '<zone id="z" routing="Full">\n', "</zone>", "</platform>"),
     "line 82, column 1: nested more than 80 levels deep (the limit for elements)"),
    (["platform", "show"], "platform.json", nested_text('{"cluster": ', "[", "]", "}"), too_deep(JSON, "line 1 column 92")),
    (["simulate"], "platform.toml", nested_text("cluster = ", "[", "]", "\n"), too_deep(TOML, "line 1 column 91")),
    (["simulate"], "platform.toml", nested_text("cluster = ", "{a = ", "}", "\n"), too_deep(TOML, "line 1 column 411")),
    (["simulate"], "platform.toml", nested_text("", "a.", "", "a = 1\n"), too_deep(TOML, "line 1 column 161")),
    # tomllib, which looks for the SimGrid file first, would recurse (arrays) or take
    # quadratic memory (dotted keys).
    (["platform", "show"], "platform.toml", nested_text('simgrid_platform = "p.xml"\nx = ', "[", "]", "\n"),
     too_deep(TOML, "line 2 column 85")),
    (["platform", "show"], "platform.toml", nested_text('simgrid_platform = "p.xml"\n', "a.", "", "a = 1\n"),
     too_deep(TOML, "line 2 column 161")),
    (["simulate", PLATFORM], "trace.json", nested_text('{"ranks": ', "[", "]", "}"), too_deep(JSON, "line 1 column 90")),
    (["simulate", PLATFORM], "trace.toml", nested_text("ranks = ", "[", "]", "\n"), too_deep(TOML, "line 1 column 89")),
    (["simulate", PLATFORM], "trace.toml", nested_text("[", "ranks.", "", "ranks]\n"), too_deep(TOML, "line 1 column 482")),
    (["cosched", "run"], "workload.json", nested_text('{"jobs": ', "[", "]", "}"), too_deep(JSON, "line 1 column 89")),
    (["multicast"], "instance.json", nested_text('{"nodes": ', "[", "]", "}"), too_deep(JSON, "line 1 column 90")),
    (["penalties"], "scheme.json", nested_text('{"comms": ', "[", "]", "}"), too_deep(JSON, "line 1 column 90")),
    (["measure", "penalties"], "scheme.json", nested_text('{"comms": ', "[", "]", "}"), too_deep(JSON, "line 1 column 90")),
], ids=["tree-throughput", "tree-taskfarm", "platform-xml-zones", "platform-xml-zone-lines", "platform-json",
        "platform-toml", "platform-toml-inline-tables", "platform-toml-dotted-key", "platform-toml-over-simgrid",
        "platform-toml-dotted-key-over-simgrid", "trace-json", "trace-toml", "trace-toml-table-header", "workload",
        "multicast", "scheme", "scheme-to-measure"])
@pytest.mark.parametrize("levels", [10**5, 10**6])
def test_deep_nesting_names_the_file_and_the_limit(tmp_path, args, name, text, error, levels):
    path = tmp_path / name
    path.write_text(text(levels))
    extra = [EXAMPLES / "ring.json"] if args == ["simulate"] else []
    code, seconds, rss_mib, output = measured_cli(*args, path, *extra)
    assert code == 2
    assert one_error_line(output) == f"error: {path}: {error}"
    # Before: 100,000 zones ended in SIGSEGV (exit 139); over a SimGrid file, tomllib raised
    # RecursionError (a traceback) or was killed for its memory.
    assert seconds < 10 and rss_mib < 500, (seconds, rss_mib)


@pytest.mark.parametrize("args,name,head", [
    (["platform", "show"], "platform.toml", 'simgrid_platform = "p.xml"\n'),  # read as a JSON value: SIGSEGV before
    (["simulate", PLATFORM], "trace.toml", ""),
])
def test_toml_nested_within_each_of_the_toml_crates_limits_is_refused(tmp_path, args, name, head):
    """A header of 79 keys, then a dotted key of 79 keys whose value nests 79 inline tables, each
    behind a dotted key of 79 keys: 6,400 tables deep, each part within the toml crate's limits."""
    keys = ".".join(["k"] * 79)
    value = "1"
    for _ in range(79):
        value = f"{{{keys} = {value}}}"
    path = tmp_path / name
    path.write_text(f"{head}[{keys}]\n{keys} = {value}\n")
    (tmp_path / "p.xml").write_text(SIMGRID + '<zone id="z" routing="Full"><host id="h" speed="1f"/></zone></platform>\n')
    code, seconds, rss_mib, output = measured_cli(*args, path)
    assert code == 2
    header = 2 if head else 1  # its 79 tables, then the next line's dotted key: the second is the 81st
    assert one_error_line(output) == f"error: {path}: {too_deep(TOML, f'line {header + 1} column 3')}"
    assert seconds < 10 and rss_mib < 500, (seconds, rss_mib)


def test_a_huge_xml_attribute_of_many_lines_is_echoed_in_part(tmp_path):
    """64 MiB of digits and newlines in one attribute (the 16 MiB line limit does not apply):
    the message echoes its start, not the whole value (it was 2 × 64 MiB long)."""
    path = tmp_path / "platform.xml"
    with path.open("w") as f:
        f.write(SIMGRID + '<zone id="z" routing="Full"><host id="a" speed="')
        f.writelines("1" * 1023 + "\n" for _ in range(64 << 10))
        f.write('Gf"/></zone></platform>\n')
    code, seconds, rss_mib, output = measured_cli("platform", "show", path)
    assert code == 2
    line = one_error_line(output)
    # Its first digits, in scientific notation as every message shows a number of 97 digits.
    assert line.startswith(f"error: {path}: line 3, column 49: <host id=\"a\"> speed: `1.1111111111111112e96… "
                           f"({(64 << 20) + 2} characters)`: unknown unit ` 1.1111111111111112e95… ({(64 << 20) + 2 - 1023} characters)`"), line[:300]
    assert len(line) < 500 and seconds < 10 and rss_mib < 1000, (len(line), seconds, rss_mib)


def test_nesting_up_to_the_limit_is_read():
    from commaware import _core
    from commaware.api import parse_json

    assert _core.MAX_NESTING == 80
    assert parse_json(deep(80), "x.json", _core.TraceError) == json.loads(deep(80))
    with pytest.raises(_core.TraceError, match=r"^x.json: nested more than 80 levels deep .* at line 2 column 82$"):
        parse_json("\n " + deep(81), "x.json", _core.TraceError)


TREE = {"task_mb": 1, "nodes": [
    {"id": "root", "parent": None, "compute_rate": 2},
    {"id": "a", "parent": "root", "compute_rate": 3, "link_mb_s": 4, "ir_r": 0.1, "ir_s": 0.05}]}


def tree_with(**fields):
    return {**TREE, "nodes": [TREE["nodes"][0], {**TREE["nodes"][1], **fields}]}


@pytest.mark.parametrize("tree,field,reason", [
    (tree_with(ir_r=1e308), "nodes[1].ir_r", "must be at most 1e+15, got 1e+308"),
    (tree_with(ir_s=10**400), "nodes[1].ir_s", "must be at most 1e+15, got an integer of 401 digits"),
    (tree_with(link_mb_s=1e300), "nodes[1].link_mb_s", "must be at most 1e+15, got 1e+300"),
    ({**TREE, "task_mb": 1e200}, "task_mb", "must be at most 1e+15, got 1e+200"),
    (tree_with(ir_r=1e10, compute_rate=1e9), "nodes[1].ir_r", "ir_r × task_mb × its compute_rate is 1e+19, more than 1e+15"),
    (tree_with(ir_s=1e15), "nodes[1].ir_s", "ir_s × task_mb × its parent's compute_rate is 2e+15, more than 1e+15"),
], ids=["ir_r-1e308", "ir_s-huge-int", "link", "task_mb", "ir_r-load", "ir_s-load"])
@pytest.mark.parametrize("command", [["interference", "throughput", "--lp"], ["taskfarm"]])
def test_tree_numbers_are_checked_where_they_are_read(write_json, command, tree, field, reason):
    path = write_json("tree.json", json.dumps(tree))
    proc = run_cli(*command, path)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert one_error_line(proc.stderr) == f"error: {path}: {field}: {reason}"


def test_large_tree_numbers_within_the_limits_are_solved(write_json):
    # Interference terms of 9e14 and 5e14 and a link of 1e15 MB/s: no overflow, and the bound and
    # the LP agree.
    path = write_json("tree.json", json.dumps(tree_with(ir_r=3e14, ir_s=2.5e14, link_mb_s=1e15)))
    proc = run_cli("interference", "throughput", "--lp", "--json", path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    # Sending to a costs the root IR_s·Z·C = 5e14 >= 1: it never does, and computes its 2 tasks/s.
    assert doc["throughput"] == pytest.approx(2.0, rel=1e-6)
    assert doc["lp_throughput"] == pytest.approx(doc["throughput"], rel=1e-6)


MEASURED_HEADER = "src,dst,seq,measured_s\n"


def test_a_measured_row_longer_than_its_header_names_its_line(tmp_path):
    for body, line in [("0,1,0,0.1\n0,1,1,0.2,9\n", 3), ("0,1,0,0.1,7\n0,1,1,0.2,9\n", 2)]:
        csv = tmp_path / "m.csv"
        csv.write_text(MEASURED_HEADER + body)
        proc = run_cli("simulate", PLATFORM, EXAMPLES / "ring.json", "--measured", csv)
        assert proc.returncode == 2 and proc.stdout == ""
        assert one_error_line(proc.stderr) == (f"error: {csv}: row {line}: expected 4 fields (src, dst, seq, measured_s), "
                                               "got 5")


@pytest.mark.parametrize("outputs", [["--messages", "out.parquet"], ["--messages", "out.csv"], ["--gantt", "g.svg"]])
def test_a_failed_measured_run_leaves_no_output(tmp_path, outputs):
    csv = tmp_path / "m.csv"
    csv.write_text(MEASURED_HEADER + "0,1,0,0.1\n0,1,99,0.2\n")  # no 99th message from 0 to 1
    target = tmp_path / outputs[1]
    proc = run_cli("simulate", PLATFORM, EXAMPLES / "ring.json", "--measured", csv, outputs[0], target)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "row 3: no such message in the replay (src=0, dst=1, seq=99)" in one_error_line(proc.stderr)
    assert list(tmp_path.iterdir()) == [csv], "no output, and no temporary file, is left"
    # With a good measurement the same command writes it.
    csv.write_text(MEASURED_HEADER + "0,1,0,0.1\n")
    proc = run_cli("simulate", PLATFORM, EXAMPLES / "ring.json", "--measured", csv, outputs[0], target)
    assert proc.returncode == 0, proc.stderr
    assert target.stat().st_size > 0


def test_a_shared_ti_file_without_rank_1_is_refused_like_a_directory(tmp_path):
    shared = tmp_path / "shared.txt"
    shared.write_text("0 init\n0 compute 100\n2 init\n2 compute 100\n0 finalize\n2 finalize\n")
    proc = run_cli("simulate", PLATFORM, shared)
    assert proc.returncode == 2 and proc.stdout == ""
    assert one_error_line(proc.stderr) == (f"error: {shared}: line 3: rank 2 out of range (lines of 2 ranks given, "
                                           "none for rank 1: the ranks must be 0 to 1, each present)")
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    (ranks / "r0.txt").write_text("0 init\n0 compute 100\n")
    (ranks / "r2.txt").write_text("2 init\n2 compute 100\n")
    proc = run_cli("simulate", PLATFORM, ranks)
    assert proc.returncode == 2
    assert one_error_line(proc.stderr) == (f"error: {ranks / 'r2.txt'}: rank 2: rank 2 out of range (2 rank texts given, "
                                           "none for rank 1: the ranks must be 0 to 1, each present)")


BOM = "\ufeff"


def test_a_byte_order_mark_is_harmless_in_every_format(tmp_path):
    """Each format read with and without a leading UTF-8 BOM gives the same output."""
    def same_with_bom(args, files):
        plain = run_cli(*args)
        assert plain.returncode == 0, plain.stderr
        for f in files:
            f.write_text(BOM + f.read_text())
        marked = run_cli(*args)
        assert marked.returncode == 0, marked.stderr
        assert marked.stdout == plain.stdout

    platform = tmp_path / "p.json"
    platform.write_text(json.dumps(CLUSTER))
    toml = tmp_path / "p.toml"
    toml.write_text((EXAMPLES / "platform_hetero.toml").read_text())
    trace = tmp_path / "t.json"
    trace.write_text((EXAMPLES / "ring.json").read_text())
    same_with_bom(["simulate", platform, trace, "--json"], [platform, trace])
    pingpong = tmp_path / "pp.json"
    pingpong.write_text(json.dumps({"ranks": [[{"op": "send", "dst": 1, "bytes": 8}], [{"op": "recv", "src": 0}]]}))
    same_with_bom(["simulate", toml, pingpong, "--json"], [toml])
    ti = tmp_path / "t.txt"
    ti.write_text("0 init\n0 send 1 0 1000\n1 init\n1 recv 0 0 1000\n")
    same_with_bom(["simulate", platform, ti, "--json"], [ti])
    gz = tmp_path / "t.txt.gz"
    gz.write_bytes(gzip.compress((BOM + ti.read_text()[1:]).encode()))
    marked = run_cli("simulate", platform, gz, "--json")
    assert marked.returncode == 0 and marked.stdout == run_cli("simulate", platform, ti, "--json").stdout
    tree = tmp_path / "tree.json"
    tree.write_text(json.dumps(TREE))
    same_with_bom(["interference", "throughput", tree, "--json"], [tree])
    measured = tmp_path / "m.csv"
    measured.write_text(MEASURED_HEADER + "0,1,0,0.1\n")
    same_with_bom(["simulate", EXAMPLES / "cluster16.json", EXAMPLES / "ring.json", "--measured", measured, "--json"],
                  [measured])
    swf = tmp_path / "log.swf"
    swf.write_text((EXAMPLES / "cosched" / "easy_guarantee.swf").read_text())
    same_with_bom(["cosched", "run", swf, "--json"], [swf])
    scheme = tmp_path / "scheme.json"
    scheme.write_text(json.dumps({"comms": [{"id": "a", "src": 0, "dst": 1}, {"id": "b", "src": 0, "dst": 2}]}))
    same_with_bom(["penalties", scheme, "--json"], [scheme])
