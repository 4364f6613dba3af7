"""Start-up cost (lazy imports), file modes of written charts, and the Gantt heat map of big runs."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import commaware
from commaware import gantt
from conftest import EXAMPLES

HEAVY = ("pandas", "matplotlib", "numpy", "pyarrow")


def imported_after(code: str) -> set[str]:
    """Which heavy top-level modules a fresh interpreter has loaded after running `code`."""
    probe = textwrap.dedent(code) + textwrap.dedent(f"""
        import sys
        print("MODULES", sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY + ("rich",)!r})), file=sys.stderr)
    """)
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    line = [x for x in proc.stderr.splitlines() if x.startswith("MODULES")]
    assert line, proc.stderr
    return set(eval(line[-1][len("MODULES "):]))


def run_main(*args: str) -> str:
    return f"""
        import sys
        from commaware import cli
        try:
            cli.main({list(args)!r})
        except SystemExit:
            pass
    """


def test_importing_the_cli_loads_no_heavy_module():
    assert imported_after("import commaware.cli") == set()
    assert imported_after("import commaware") == set()


@pytest.mark.parametrize("args", [["--help"], ["simulate", "--help"], ["multicast", "--help"], ["--version"],
                                  ["schema", "trace"], ["cosched", "run", "--help"], ["workload", "nas", "--help"]])
def test_help_loads_no_heavy_module(args):
    assert imported_after(run_main(*args)) == set()


def test_tiny_json_simulate_loads_no_pandas_or_matplotlib():
    loaded = imported_after(run_main("simulate", str(EXAMPLES / "cluster16.json"), str(EXAMPLES / "ring.json"), "--json"))
    assert not loaded & {"pandas", "matplotlib", "pyarrow"}, loaded


def test_tiny_simulate_table_loads_no_pandas():
    loaded = imported_after(run_main("simulate", str(EXAMPLES / "cluster16.json"), str(EXAMPLES / "ring.json")))
    assert not loaded & {"pandas", "matplotlib", "pyarrow"}, loaded


def test_simulate_summary_in_a_pipe_imports_neither_rich_nor_numpy():
    # The summary table of a run printed to a pipe (a script's case) is built without rich.
    loaded = imported_after(run_main("simulate", str(EXAMPLES / "cluster16.json"), str(EXAMPLES / "ring.json")))
    assert loaded == set(), loaded


def _summary(result, title: str, plain: bool, monkeypatch) -> str:
    import io

    from commaware.cli import common, simulate

    buf = io.StringIO()
    monkeypatch.setattr(simulate, "plain_lines", common.plain_lines if plain else (lambda *a: None))
    monkeypatch.setattr(sys, "stdout", buf)
    simulate.print_result(result, title)
    monkeypatch.undo()
    return buf.getvalue()


def _ring(ranks: int) -> dict:
    return {"ranks": [[{"op": "compute", "flops": 1e6 * (r + 1)}, {"op": "isend", "dst": (r + 1) % ranks, "bytes": 1e5},
                       {"op": "recv", "src": (r - 1) % ranks}, {"op": "waitall"}] for r in range(ranks)]}


@pytest.mark.parametrize("case", ["ring16", "ranks64", "penalty", "markup_title", "wide_title"])
def test_plain_summary_prints_the_bytes_rich_prints(case, monkeypatch):
    # rich's rendering is the reference: the plain printer must give the same bytes, and fall
    # back to rich where it cannot (markup in a name, a line wider than the console).
    ranks = 64 if case == "ranks64" else 16
    plat = {"cluster": {"count": ranks, "speed": 1e9, "prefix": "node"},
            "network": {"model": "maxmin", "bandwidth": 1.25e8, "latency": 1e-5}}
    result = commaware.simulate(plat, _ring(ranks), model="gige" if case == "penalty" else None,
                                record_messages=False, record_timeline=False)
    title = {"markup_title": "runs/[bold]x:smile:.json on p.json", "wide_title": "w" * 130}.get(case, "ring.json on p.json")
    plain = _summary(result, title, True, monkeypatch)
    assert plain == _summary(result, title, False, monkeypatch)
    wrapped = 1 if case == "wide_title" else 0  # rich folds the 130-character title over two lines
    assert plain.count("\n") == 1 + wrapped + 4 + min(ranks, 16) + (1 if ranks > 32 else 0) + 1


def test_an_error_loads_no_heavy_module():
    assert not imported_after(run_main("simulate", "nope.json", "nope.json")) & set(HEAVY)
    assert not imported_after(run_main("multicast", "generate", "--seed", "-1")) & set(HEAVY)
    assert not imported_after(run_main("cosched", "run", "nope.swf", "--nodes", "4")) & set(HEAVY)


def test_cosched_run_summary_loads_no_heavy_module():
    loaded = imported_after(run_main("cosched", "run", str(EXAMPLES / "cosched" / "easy_guarantee.swf"), "--json"))
    assert not loaded & set(HEAVY), loaded


# --- file modes ---------------------------------------------------------------------------------


def ring_result():
    return commaware.simulate(EXAMPLES / "cluster16.json", EXAMPLES / "ring.json")


@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_gantt_file_mode_follows_umask(tmp_path, umask, mode):
    result = ring_result()
    old = os.umask(umask)
    try:
        for ext in ("png", "svg"):
            path = tmp_path / f"g.{ext}"
            gantt.write_gantt(result, path)
            assert path.stat().st_mode & 0o777 == mode, (ext, oct(path.stat().st_mode))
        (tmp_path / "plain.txt").write_text("x")
        assert (tmp_path / "plain.txt").stat().st_mode & 0o777 == mode
    finally:
        os.umask(old)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.png", "g.svg", "plain.txt"], "no temporary file left"


def test_cli_gantt_is_0644_like_other_outputs(tmp_path):
    out = tmp_path / "m.png"
    proc = subprocess.run([sys.executable, "-m", "commaware.cli", "multicast", str(EXAMPLES / "multicast" / "fig4.json"),
                           "--gantt", str(out), "--summary"], capture_output=True, text=True,
                          preexec_fn=lambda: os.umask(0o022), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_mode & 0o777 == 0o644


# --- Gantt of many ranks: a heat map of bounded size ------------------------------------------------


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def alltoall(tmp_path, n: int):
    plat = {"cluster": {"count": n, "speed": 1e9, "cores": 1, "memory": 4e9},
            "network": {"model": "maxmin", "bandwidth": 1.25e8, "latency": 5e-5, "eager_threshold": 65536}}
    trace = {"ranks": [[{"op": "compute", "flops": 1e7 * (1 + r % 5)}, {"op": "alltoall", "bytes": 1024},
                        {"op": "compute", "flops": 1e7}] for r in range(n)]}
    (tmp_path / "p.json").write_text(json.dumps(plat))
    (tmp_path / "t.json").write_text(json.dumps(trace))
    return commaware.simulate(tmp_path / "p.json", tmp_path / "t.json")


def test_gantt_of_256_ranks_is_a_bounded_heat_map(tmp_path):
    result = alltoall(tmp_path, 256)
    assert len(result.timeline) > 256 * 255  # every pair communicates
    path = tmp_path / "g.png"
    gantt.write_gantt(result, path)
    width, height = png_size(path)
    assert width <= 1200 and height <= 900, (width, height)  # one bar per rank would be 7,800 px high
    svg = tmp_path / "g.svg"
    gantt.write_gantt(result, svg)
    assert svg.stat().st_size < 2_000_000 and b"<image" in svg.read_bytes(), "a raster heat map, not 65,000 bars"


def test_gantt_of_few_ranks_keeps_one_bar_per_rank(tmp_path):
    path = tmp_path / "g.svg"
    gantt.write_gantt(ring_result(), path)
    text = path.read_text()
    assert "<image" not in text and text.count("<path") > 16


def brute_force(rank, kind, start, end, n_ranks, n_kinds, horizon, rows, bins):
    out = np.zeros((n_kinds, rows, bins))
    width = horizon / bins
    for r, k, s, e in zip(rank, kind, start, end):
        for b in range(bins):
            lo, hi = b * width, (b + 1) * width
            out[k, r * rows // n_ranks, b] += max(0.0, min(e, hi) - max(s, lo))
    return out


@pytest.mark.parametrize("n_ranks,rows", [(10, 4), (7, 7), (200, 64)])
def test_state_time_matches_a_loop(n_ranks, rows):
    rng = np.random.default_rng(n_ranks)
    n = 500
    start = rng.uniform(0, 10, n)
    end = np.minimum(start + rng.exponential(1.0, n) * rng.integers(0, 2, n), 10.0)  # zero-length ones too
    start[:5], end[:5] = 0.0, 10.0  # spanning everything
    rank = rng.integers(0, n_ranks, n)
    kind = rng.integers(0, 5, n)
    got = gantt.state_time(rank, kind, start, end, n_ranks, 5, 10.0, rows, 37)
    want = brute_force(rank, kind, start, end, n_ranks, 5, 10.0, rows, 37)
    assert got.shape == (5, rows, 37)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    assert got.sum() == pytest.approx((end - start).sum())
