"""commaware tiling (paper 001): the CLI and API against hand calculation, the formulas'
exact regime against the simulation, interference, and bad input."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from commaware import _core, simulate
from commaware import tiling as tl
from conftest import EXAMPLES, run_cli


def tiling_json(*args: str) -> dict:
    proc = run_cli("tiling", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_one_height_by_hand():
    # 16×16×16384 on 4×4 at z = 64: tiles 4×4×64 = 1024 points, x = (3, 3, 255);
    # faces 4·64 points · 4 bytes = 1024 bytes; default network 12.5e6 B/s, 100 µs.
    d = tiling_json("--space", "16x16x16384", "--procs", "4x4", "--tile-height", "64", "--t-c", "1e-6")
    assert (d["P_block"], d["P_overlap"]) == (3 + 3 + 255 + 1, 2 * (3 + 3) + 255 + 1)
    assert d["t_comp"] == pytest.approx(1024 * 1e-6)
    message = 100e-6 + 1024 / 12.5e6
    assert d["t_comm"] == pytest.approx(message)
    assert d["t_comm_block"] == pytest.approx(4 * message)
    assert d["T_block"] == pytest.approx(262 * (1024e-6 + 4 * message))
    assert d["T_overlap"] == pytest.approx(268 * max(1024e-6, message))
    assert d["face_bytes"] == [1024, 1024, 0]
    # Both programs simulated: the blocking one within eq. (3) (its fill is cheaper).
    assert 0 < d["sim_block"] <= d["T_block"]
    assert d["sim_overlap"] >= (255 + 1) * d["t_comp"]


def test_sci_time_and_closed_forms():
    d = tiling_json("--space", "12x12x512K", "--procs", "3x3", "--tile-height", "1024", "--sci", "--no-simulate", "--t-c", "2e-7")
    a, c, xy = 49.2e-6 + 4 * 18.8e-6, 2 * (2 + 2), 4 * 4
    assert d["T_sci"] == pytest.approx((c + 2**19 / 1024) * (1024 * xy * 2e-7 + a))
    assert "sim_block" not in d
    s = tiling_json("--space", "12x12x512K", "--procs", "3x3", "--sweep-z", "--sci", "--no-simulate", "--t-c", "2e-7")
    assert s["z_opt_sci"] == pytest.approx(math.sqrt(2**19 * a / (c * xy * 2e-7)))
    assert s["T_min_sci"] == pytest.approx((math.sqrt(c * a) + math.sqrt(2**19 * xy * 2e-7)) ** 2)
    assert s["T_min_sci"] <= min(r["T_sci"] for r in s["rows"])


def test_sweep_rows_best_and_plot(tmp_path):
    plot = tmp_path / "z.svg"
    d = tiling_json("--space", "16x16x1024", "--procs", "4x4", "--sweep-z", "--plot", str(plot))
    zs = [r["tile_height"] for r in d["rows"]]
    assert zs == [1, 2, 4, 8, 16, 32, 64, 128, 256]  # divisors of 1024 up to 1024/4
    for col in ("T_block", "T_overlap", "sim_block", "sim_overlap"):
        best = min(d["rows"], key=lambda r: r[col])
        assert d["best"][col] == {"tile_height": best["tile_height"], "time": best[col]}
    assert plot.stat().st_size > 1000 and plot.read_text().lstrip().startswith("<?xml")


def test_eq4_exact_at_balance_through_the_api():
    # Contention-free, every message a rendezvous, t_c chosen so t_comp = t_comm: eq. (4) exact.
    plat = {"cluster": {"count": 9, "speed": 1e9},
            "network": {"model": "contention_free", "bandwidth": 12.5e6, "latency": 1e-4, "eager_threshold": 0}}
    probe = tl.analyze([12, 12, 960], [3, 3], 16, t_c=1.0, simulate=False, platform=plat)
    t_c = probe["t_comm"] / probe["tile_points"]
    d = tl.analyze([12, 12, 960], [3, 3], 16, t_c=t_c, platform=plat)
    assert d["t_comp"] == pytest.approx(d["t_comm"], rel=1e-12)
    assert d["sim_overlap"] == pytest.approx(d["T_overlap"], rel=1e-9)
    # Three times slower compute: eq. (4) charges two whole steps per pipeline hop; the
    # simulation pays t_comp + t_comm, so the formula overestimates.
    d3 = tl.analyze([12, 12, 960], [3, 3], 16, t_c=3 * t_c, platform=plat)
    assert d3["sim_overlap"] < d3["T_overlap"] * (1 - 1e-6)


def test_program_api_replays_like_the_tiling_run():
    trace = tl.program([16, 16, 256], [4, 4], 16, "overlap", t_c=1e-6)
    assert trace.n_ranks == 16
    plat = EXAMPLES / "tiling" / "fast_ethernet.json"
    via_trace = simulate(plat, trace).makespan
    via_tiling = tl.analyze([16, 16, 256], [4, 4], 16, t_c=1e-6, platform=plat)["sim_overlap"]
    assert via_trace == pytest.approx(via_tiling, rel=1e-12)


def test_interference_slows_only_the_overlapped_program():
    args = ("--space", "16x16x4096", "--procs", "4x4", "--tile-height", "256")
    plain = tiling_json(*args, "--platform", str(EXAMPLES / "tiling" / "fast_ethernet.json"))
    slowed = tiling_json(*args, "--platform", str(EXAMPLES / "tiling" / "fast_ethernet_interference.json"))
    tiles_time = 16 * plain["t_comp"]
    assert plain["sim_overlap_max_compute"] == pytest.approx(tiles_time)
    assert slowed["sim_overlap_max_compute"] > tiles_time * 1.05  # computes while messages flow
    assert slowed["sim_overlap"] > plain["sim_overlap"]
    # The blocking program never computes while communicating.
    assert slowed["sim_block"] == pytest.approx(plain["sim_block"], rel=1e-12)


def test_geometry_of_a_skewed_tiling():
    d = tiling_json("--space", "8x8", "--deps", "0,1;1,1", "--h", "0.25,0;-0.125,0.25", "--mapping", "2")
    assert d["tile_volume"] == pytest.approx(16)
    assert d["v_comm_eq1"] == pytest.approx(16 * (0.25 + 0.25 + 0.125))
    assert d["v_comm_eq2"] == pytest.approx(16 * 0.25)
    assert (d["tile_lower"], d["tile_upper"]) == ([0, -1], [1, 1])
    assert (d["P_block"], d["P_overlap"]) == (1 + 2 + 1, 2 * 1 + 2 + 1)


@pytest.mark.parametrize("args, option", [
    (["--space", "16x16x1024", "--procs", "3x4", "--tile-height", "64"], "--procs"),
    (["--space", "16x16x1024", "--procs", "4x4", "--tile-height", "100"], "--tile-height"),
    (["--space", "16x16x1024", "--procs", "4x4", "--tile-height", "0"], "--tile-height"),
    (["--space", "16x0x1024", "--procs", "4x4", "--tile-height", "64"], "--space"),
    (["--space", "16xfoo", "--procs", "4x4", "--tile-height", "64"], "--space"),
    (["--space", "16x16x1024", "--procs", "4", "--tile-height", "64"], "--procs"),
    (["--space", "16x16x1024", "--procs", "4x4", "--tile-height", "64", "--mapping", "4"], "--mapping"),
    (["--space", "16x16x1024", "--procs", "4x4", "--tile-height", "64", "--t-c", "-1"], "--t-c"),
    (["--space", "16x16x1024", "--procs", "4x4", "--tile-height", "64", "--t-c", "nan"], "--t-c"),
    (["--space", "8x8", "--deps", "1,0;1,1", "--h", "0.25,0;-0.125,0.25"], "--h"),
    (["--space", "8x8", "--deps", "3,0", "--tile", "2x2"], "--deps"),
    (["--space", "8x8", "--deps", "1,0", "--tile", "3x2"], "--tile"),
    (["--space", "8x8", "--h", "1,1;1,1"], "--h"),
    (["--space", "16x16x1024", "--procs", "4x4", "--tile-height", "64", "--sweep-z"], "exactly one"),
    (["--space", "16x16x1024", "--procs", "4x4", "--tile-height", "64", "--platform", str(EXAMPLES / "star5.json")], "--procs"),
    (["--space", "16x16x99999999999999999999", "--procs", "4x4", "--tile-height", "64"], "--space"),
])
def test_bad_input_is_exit_2_naming_the_option(args, option):
    proc = run_cli("tiling", *args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert option in proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr


GEOMETRY = ["--space", "8x8", "--deps", "0,1;1,1", "--h", "0.25,0;-0.125,0.25", "--mapping", "2"]


@pytest.mark.parametrize("extra", [
    ["--t-c", "1e-6"], ["--model", "maxmin"], ["--platform", str(EXAMPLES / "tiling" / "fast_ethernet.json")],
    ["--sci"], ["--plot", "z.svg"], ["--param", "alpha=1"], ["--t-start-dma", "1e-5"], ["--t-sci-interrupt", "1e-5"],
    ["--no-simulate"], ["--procs", "2x2"], ["--tile-height", "4"], ["--sweep-z"],
])
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_geometry_rejects_the_options_it_does_not_use(tmp_path, extra, json_flag):
    # geometry mode (--deps/--h/--tile) reads --space, --mapping, --deps, --h, --tile, --json
    # only: anything else was silently ignored (exit 0, no plot written)
    proc = subprocess.run([sys.executable, "-m", "commaware.cli", "tiling", *GEOMETRY, *extra, *json_flag],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and extra[0] in proc.stderr, proc.stderr
    assert not list(tmp_path.iterdir())  # no plot, nothing written


def test_geometry_names_every_unused_option_at_once():
    proc = run_cli("tiling", *GEOMETRY, "--sci", "--t-c", "1e-6", "--model", "maxmin")
    assert proc.returncode == 2 and proc.stdout == ""
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and all(o in line for o in ("--sci", "--t-c", "--model")), line
    # the options geometry mode does use are not named
    assert not any(o in line.split("use")[-1] for o in ("--mapping", "--space", "--json")), line


def test_platform_model_t_c_and_sci_still_work_in_formula_mode():
    d = tiling_json("--space", "16x16x1024", "--procs", "4x4", "--tile-height", "64", "--sci", "--t-c", "1e-6",
                    "--platform", str(EXAMPLES / "tiling" / "fast_ethernet.json"), "--model", "maxmin")
    assert d["t_comp"] == pytest.approx(16 // 4 * 16 // 4 * 64 * 1e-6) and "T_sci" in d


def test_too_many_tiles_to_simulate_is_a_clear_error():
    with pytest.raises(_core.OptionsError, match="--tile-height.*trace operations"):
        tl.analyze([64, 64, 2**24], [8, 8], 1)


def test_time_step_of_each_tile():
    # §3: tile (1, 2, 5) runs at step 1 + 2 + 5 under Π; §4: at 2·1 + 2·2 + 5 under Π' (k mapped).
    assert tl.time_step([1, 2, 5], "block", 2) == 8
    assert tl.time_step([1, 2, 5], "overlap", 2) == 11
    assert tl.time_step([1, 2, 5], "overlap", 0) == 1 + 4 + 10
    with pytest.raises(_core.OptionsError, match="--schedule"):
        tl.time_step([1, 2], "pipelined", 1)
    with pytest.raises(_core.OptionsError, match="--mapping"):
        tl.time_step([1, 2], "block", 2)


def test_progress_within_one_tile_height_and_a_raising_callback_stops_it():
    # A z = 1 height of a deep space is one long simulation per program: with progress_every
    # near zero the callback is called while each runs, with the schedule's name, a simulated
    # time that never goes back, and the ranks.
    calls: list[tuple] = []
    row = tl.analyze([4, 4, 4096], [2, 2], 1, t_c=tl.T_C_SCI, sci=True,
                     on_progress=lambda *a: calls.append(a), progress_every=1e-6)
    assert {c[0] for c in calls} == set(tl.SCHEDULES)
    for name in tl.SCHEDULES:
        times = [c[1] for c in calls if c[0] == name]
        assert times == sorted(times) and times[-1] <= row[f"sim_{name}"]
    assert all(c[3] <= c[4] == 4 for c in calls)
    # The same numbers as without progress calls.
    quiet = tl.analyze([4, 4, 4096], [2, 2], 1, t_c=tl.T_C_SCI, sci=True)
    assert quiet == row

    class Stop(Exception):
        pass

    def stop(*_a: object) -> None:
        raise Stop

    with pytest.raises(Stop):
        tl.analyze([4, 4, 4096], [2, 2], 1, on_progress=stop, progress_every=1e-6)
    with pytest.raises(_core.OptionsError, match="progress"):
        tl.analyze([4, 4, 64], [2, 2], 1, on_progress=stop, progress_every=0.0)
