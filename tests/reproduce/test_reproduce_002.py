"""`commaware reproduce 002`: rows exist with statuses; the Table 3/4 formula rows; exit 0 with --json."""

from __future__ import annotations

import json
import re

import pytest

from commaware import reproduce
from commaware.reproduce import paper002


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    from conftest import run_cli

    plots = tmp_path_factory.mktemp("plots")
    proc = run_cli("reproduce", "002", "--json", "--plots", str(plots))
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    d["_plots"] = sorted(p.name for p in plots.iterdir())
    return d


def test_registered_and_at_least_ten_rows_with_statuses(doc):
    assert reproduce.registered("002") >= 8
    rows = [c for c in doc["checks"] if c["paper"] == "002"]
    assert len(rows) >= 10
    assert all(c["status"] in ("pass", "fail", "not_reproduced") for c in rows)
    assert all(c["pass"] == (c["status"] == "pass") for c in rows)
    assert not [c["name"] for c in rows if c["status"] == "fail"]
    for c in rows:
        if c["status"] == "not_reproduced":
            assert "NOT REPRODUCED:" in c["note"] and "tried" in c["note"].lower(), c["name"]
    names = " ".join(c["name"] for c in rows)
    for fig in ("Table 3", "Table 4", "Fig. 3 (a", "Fig. 3 (b", "Fig. 4", "Fig. 5", "Fig. 6", "Fig. 7", "Fig. 8"):
        assert fig in names, fig


def test_plots_written(doc):
    assert {"paper002_fig3a.svg", "paper002_fig7.svg"} <= set(doc["_plots"])


def test_energy_rows_use_18968_and_flag_gang_and_the_swap(doc):
    rows = {c["name"]: c for c in doc["checks"] if c["paper"] == "002"}
    gang = rows["Table 3 GANG: total energy (MJ)"]
    assert gang["paper_inconsistent"] is True and gang["tolerance"] == 0.035 and re.search(r"differs by 3\.[0-4]%", gang["note"])
    assert "18.968" in rows["Table 3 BATCH: total energy (MJ)"]["note"]
    # the swapped memory-aware PB and DCS rows are not asserted as printed
    assert "Table 4 PB memory-aware: total energy (MJ)" not in rows
    assert "Table 4 DCS memory-aware: total energy (MJ)" not in rows
    swap = [c for n, c in rows.items() if "PB/DCS" in n]
    assert len(swap) == 1 and swap[0]["paper_inconsistent"] and swap[0]["status"] == "pass"
    # no row checks backfilling within 2 %, nor a calibrated running-time ratio
    assert not any("backfill" in n.lower() or "1.44" in n or "1.68" in n for n in rows)


def test_formula_by_hand():
    # E = (B + X·U)·N·T (paper 002 §5.4), B = 219.10 W, X = 18.968 W, N = 16; every number below
    # worked out by hand, not by the formula under test.
    #
    # Table 3 BATCH: U = 63 %, T = 26,971 s.
    #   X·U = 18.968 · 0.63 = 11.94984;  B + X·U = 231.04984 W;  · 16 = 3,696.79744 W
    #   · 26,971 s = 99,706,323.754 J = 99.706324 MJ  (printed 4.35 + 94.55 = 98.90 MJ: 0.82 % off)
    assert paper002.formula_mj(63, 26971) == pytest.approx(99.706324, abs=1e-6)
    # Table 3 GANG: U = 95 %, T = 17,520 s.
    #   X·U = 18.968 · 0.95 = 18.0196;  B + X·U = 237.1196 W;  · 16 = 3,793.9136 W
    #   · 17,520 s = 66,469,366.272 J = 66.469366 MJ  (printed 2.99 + 61.42 = 64.41 MJ: 3.20 % off)
    assert paper002.formula_mj(95, 17520) == pytest.approx(66.469366, abs=1e-6)
    # U = 0: the idle part alone, B·N·T = 219.10 · 16 · 21,551 s = 3,505.6 · 21,551 = 75,549,185.6 J
    # = 75.55 MJ, DCS's printed idle energy in Table 4 (the swapped memory-aware rows).
    assert paper002.formula_mj(0, 21551) == pytest.approx(75.5491856, abs=1e-6)
    # §5.4 also prints X = 18.839 W. With it GANG would be (219.10 + 18.839 · 0.95) · 16 · 17,520
    # = 236.99705 · 16 · 17,520 = 66,435,013.056 J = 66.435 MJ, 3.14 % off the printed 64.41 MJ:
    # slightly less than 3.20 %, but still over the paper's 3 %, so the choice of X does not decide
    # that row. X is the formula line's 18.968, and the tables use it (66.469, not 66.435).
    assert paper002.X_W == 18.968 and paper002.B_W == 219.10 and paper002.N_NODES == 16
    assert paper002.formula_mj(95, 17520) != pytest.approx(66.435013, abs=1e-3)
    assert 3.0 < 100 * (66.435013 - 64.41) / 64.41 < 100 * (66.469366 - 64.41) / 64.41 < 3.5
    # and Table 3's rows show these hand figures
    rows = {c.name: c for c in paper002.table3_checks()}
    assert rows["Table 3 BATCH: total energy (MJ)"].ours == pytest.approx(99.706, abs=5e-4)
    assert rows["Table 3 GANG: total energy (MJ)"].ours == pytest.approx(66.469, abs=5e-4)
    assert rows["Table 3 GANG: total energy (MJ)"].paper_value == pytest.approx(64.41)


def test_claim_helper_labels_failures_not_reproduced():
    ok = paper002.claim("c", "x", "y", True, "setup", "why")
    bad = paper002.claim("c", "x", "y", False, "setup", "why")
    assert ok.status == "pass" and bad.status == "not_reproduced" and "why" in bad.note
