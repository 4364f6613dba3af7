"""`commaware reproduce 001`: every row's kind, the §4 condition as a self_check, and the
"overlapping loses" regime judged by formula and simulation together.

Expected values are worked out by hand (64×64×64 on 4×4 at z = 1: tiles of 16×16×1 points,
t_c = 30 µs, FastEthernet 100 Mb/s and 100 µs assumed), never produced by the code under test.
"""

from __future__ import annotations

import json

import pytest

from conftest import run_cli

REGIME = "regime where overlapping loses at the best z: 64×64×64 on 4×4, t_c = 30 µs (eqs. (3)-(4) and simulation)"


@pytest.fixture(scope="module")
def rows() -> dict[str, dict]:
    proc = run_cli("reproduce", "001", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr[-2000:]  # no row fails
    checks = json.loads(proc.stdout)["checks"]
    by_name = {r["name"]: r for r in checks}
    assert len(by_name) == len(checks)
    return by_name


def test_every_row_has_its_kind(rows):
    kinds = {n: r["kind"] for n, r in rows.items()}
    steps = [n for n in kinds if n.startswith("steps P, P'")]
    assert len(steps) == 6 and all(kinds[n] == "self_check" and "derived" in n for n in steps)
    assert all(rows[n]["paper_value"] == rows[n]["ours"] for n in steps)
    # The §4 condition is eqs. (3) and (4) rearranged: an identity of our formulas.
    assert kinds["T_overlap < T_block exactly when (x_i+x_j)/(x_i+x_j+x_k+1) < min/max"] == "self_check"
    best_z = [n for n in kinds if n.endswith("best non-overlapping / best overlapping time")]
    assert len(best_z) == 3 and all(kinds[n] == "reproduction" and rows[n]["status"] == "pass" for n in best_z)
    assert all("deterministic" in rows[n]["note"] for n in best_z)
    # Formula against simulation compares our code with our code; no paper number stands in for it.
    minima = [n for n in kinds if n.startswith("32×32×4K")]
    assert len(minima) == 3 and all(kinds[n] == "self_check" and rows[n]["paper_value"] is None for n in minima)
    assert sorted(kinds.values()).count("reproduction") == 3


def test_overlapping_loses_row_uses_formula_and_simulation(rows):
    r = rows[REGIME]
    assert r["kind"] == "self_check"
    formula, sim = r["extra"]["formula_ratio"], r["extra"]["simulated_ratio"]
    assert f"formula {formula:.3f}" in r["ours"] and f"simulated {sim:.3f}" in r["ours"]
    # The evidence disagrees (formula: overlapping loses; simulation: it wins), so the row does not pass.
    assert formula < 1 < sim
    assert r["status"] == "not_reproduced" and r["pass"] is False
    assert r["extra"]["condition_fails_at"] == r["extra"]["z_values"] == r["extra"]["simulated_overlap_wins_at"]
    # By hand at z = 1: t_comp = 16·16·30 µs = 7.68 ms; t_comm = 100 µs + 16·4 B / 12.5 MB/s = 105.12 µs.
    # Eq. (4): P' = 2(3 + 3) + 63 + 1 = 76 steps × 7.68 ms = 0.58368 s.
    assert r["extra"]["eq4_overlap_s"] == pytest.approx(0.58368, rel=1e-9)
    # The program pays t_comp + t_comm per hop of the fill, then t_comp per tile of its column:
    # 6 × 7.78512 ms + 64 × 7.68 ms = 0.53823072 s.
    assert r["extra"]["fill_estimate_s"] == pytest.approx(0.53823072, rel=1e-9)
    assert r["extra"]["simulated_overlap_s"] == pytest.approx(0.53823072, rel=1e-3)
    assert "0.5837 s" in r["note"] and "0.5382 s" in r["note"]


def test_not_reproduced_rows_say_why(rows):
    assert {n for n, r in rows.items() if r["status"] == "not_reproduced"} == {
        REGIME, "32×32×4K, no contention, eager below 64 KiB: overlapping minima within 1 % at the same z"}
    eager = rows["32×32×4K, no contention, eager below 64 KiB: overlapping minima within 1 % at the same z"]
    assert "latency" in eager["note"] and "at z = 1 eq. (4) gives" in eager["note"]
