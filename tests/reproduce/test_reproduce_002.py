"""`commaware reproduce 002`: the kind of every row; ordering claims judged over seeds by the 95 %
confidence interval, link by link; the stated sizes ("over 35 %", "65 %", "about 25 %") checked as
magnitudes; the Table 3/4 formula rows; the exit code follows the fail rows."""

from __future__ import annotations

import math
import re

import pytest

from commaware import reproduce
from commaware.reproduce import paper002, runner

# mean 1 and sample sd 1 over 10 values; t(0.975, 9) = 2.262157, so the 95 % interval of the mean
# is 1 ± 2.262157 / sqrt(10) = 1 ± 0.715357 (the same hand figures as tests/reproduce/test_reproduce.py)
D = [1 + x for x in (-1.5, -0.5, 0.5, 1.5, -1.0, 1.0, 0.0, 0.0, -1.0, 1.0)]
HALF = 0.715357

MAGNITUDES = {  # name → (paper's figure %, "over")
    "Fig. 7 (a): average response-time gain of memory-aware allocation (%, paper: over 35)": (35.0, True),
    "Fig. 5 class C: HYBRID's response-time improvement over PBS (%)": (65.0, False),
    "Fig. 3 (a): average response-time gain of packing (%)": (25.0, False),
}


@pytest.fixture(scope="module")
def doc(quick_report):
    """The rows of `reproduce all --quick --json --out DIR` (one run per session, shared with the
    report tests: tests/reproduce/conftest.py), with 002's figures and the run's exit code."""
    assert quick_report.returncode in (0, 1), quick_report.stderr
    d = quick_report.doc
    d["_plots"] = quick_report.figures("002")
    d["_rc"] = quick_report.returncode
    return d


def rows_of(doc):
    return [c for c in doc["checks"] if c["paper"] == "002"]


def test_rows_statuses_and_the_exit_code_follows_the_fail_rows(doc):
    assert reproduce.registered("002") >= 8
    rows = rows_of(doc)
    assert len(rows) >= 10
    assert all(c["status"] in ("pass", "fail", "not_reproduced") for c in rows)
    assert all(c["pass"] == (c["status"] == "pass") for c in rows)
    # a fail row is a finding reported as such (exit 1), never relabelled to keep the exit code at 0
    assert doc["_rc"] == (1 if any(c["status"] == "fail" for c in doc["checks"]) else 0)
    for c in rows:
        if c["status"] != "pass":
            assert ("NOT REPRODUCED:" if c["status"] == "not_reproduced" else "FAIL:") in c["note"], c["name"]
            assert "tried" in c["note"].lower(), c["name"]
    names = " ".join(c["name"] for c in rows)
    for fig in ("Table 3", "Table 4", "Fig. 3 (a", "Fig. 3 (b", "Fig. 4", "Fig. 5", "Fig. 6", "Fig. 7", "Fig. 8"):
        assert fig in names, fig


def test_kinds_energy_formula_rows_are_arithmetic_the_simulated_claims_reproductions(doc):
    rows = rows_of(doc)
    formula = [c for c in rows if c["name"].endswith("total energy (MJ)") or "PB/DCS" in c["name"]]
    assert len(formula) == 12 + 11 + 1  # Table 3's rows, Table 4's less the swapped two, the swap row
    assert {c["kind"] for c in formula} == {"arithmetic"}
    simulated = [c for c in rows if c not in formula]
    assert simulated and {c["kind"] for c in simulated} == {"reproduction"}
    assert all(c["status"] != "not_reproduced" for c in formula)  # a formula on printed numbers holds or not


def _status(low, high):
    return "pass" if low > 0 else "fail" if high < 0 else "not_reproduced"


def test_every_ordering_row_is_judged_link_by_link_over_ten_seeds_by_the_interval(doc):
    ordered = [c for c in rows_of(doc) if "links" in c.get("extra", {})]
    assert len(ordered) >= 25
    for c in ordered:
        links = c["extra"]["links"]
        for label, link in links.items():
            assert link["seeds"] == paper002.QUICK_SEEDS >= runner.MIN_SEEDS, (c["name"], label)
            assert link["ci95_low"] <= link["mean_difference"] <= link["ci95_high"]
            assert link["status"] == _status(link["ci95_low"], link["ci95_high"]), (c["name"], label)
        statuses = {link["status"] for link in links.values()}
        expected = "fail" if "fail" in statuses else "pass" if statuses == {"pass"} else "not_reproduced"
        assert c["status"] == expected, c["name"]
        # the row's own extra is its weakest link's, and the note quotes every link's mean and interval
        weakest = links[c["extra"]["weakest_link"]]
        assert c["extra"]["ci95_low"] == weakest["ci95_low"] and c["extra"]["seeds"] == weakest["seeds"]
        unit = c["extra"]["unit"]
        for label, link in links.items():
            assert f"{label}: mean {link['mean_difference']:+.4g}" in c["note"], (c["name"], label)
            # one claim, one 95 %: every link's interval is simultaneous over the row's links
            assert link["comparisons"] == len(links), (c["name"], label)
            level = "95 % CI" if len(links) == 1 else f"simultaneous 95 % CI of {len(links)}"
            assert f"{level} {link['ci95_low']:+.4g}" in c["note"], (c["name"], label)
            if c["status"] != "pass" and link["status"] != "pass":
                # the analysis names each link that does not hold, with its mean from the run
                assert f"{label} (mean {link['mean_difference']:+.3g})" in c["note"], (c["name"], label)
        assert unit in ("%", "pp", "")


def test_no_ordering_claim_rests_on_one_seed_and_no_stock_text(doc):
    rows = rows_of(doc)
    assert not hasattr(paper002, "TIE_CAUSE")
    for c in rows:
        if c["kind"] == "reproduction":
            assert "seeds" in c["extra"] and c["extra"]["seeds"] >= runner.MIN_SEEDS, c["name"]
    # rows that share an analysis sentence still differ in the numbers they quote
    analyses = [c["note"].split("NOT REPRODUCED: ", 1)[1] for c in rows if "NOT REPRODUCED: " in c["note"]]
    assert len(set(analyses)) == len(analyses)


def test_stated_sizes_are_checked_as_magnitudes(doc):
    rows = {c["name"]: c for c in rows_of(doc)}
    for name, (figure, over) in MAGNITUDES.items():
        c = rows[name]
        e = c["extra"]
        assert c["kind"] == "reproduction" and c["paper_value"] == figure
        assert e["seeds"] == paper002.QUICK_SEEDS and len(e["per_seed_pct"]) == e["seeds"]
        assert e["mean_pct"] == pytest.approx(sum(e["per_seed_pct"]) / e["seeds"])
        assert e["ci95_low_pct"] < e["mean_pct"] < e["ci95_high_pct"]
        assert e["pi95_low_pct"] < e["ci95_low_pct"] and e["pi95_high_pct"] > e["ci95_high_pct"]
        if over:  # an inequality: the whole interval above the figure, never just the direction
            assert c["pass"] == (e["ci95_low_pct"] > figure), name
        else:
            assert c["pass"] == (e["ci95_low_pct"] <= figure <= e["ci95_high_pct"]), name
        assert c["status"] in ("pass", "not_reproduced")
        assert f"mean {e['mean_pct']:.1f} %" in c["note"]
    # the reading of "65 %" is stated, and the other reading's value is shown
    assert "1 − response(HYBRID)/response(PBS)" in rows["Fig. 5 class C: HYBRID's response-time improvement over PBS (%)"]["note"]
    assert "response(PBS)/response(HYBRID) − 1" in rows["Fig. 5 class C: HYBRID's response-time improvement over PBS (%)"]["note"]


def test_fig6_runs_the_schemes_of_the_paper_and_no_nls(doc):
    rows = [c for c in rows_of(doc) if c["name"].startswith("Fig. 6")]
    assert len(rows) == 3
    shortest = next(c for c in rows if "shortest" in c["name"])
    assert len(shortest["extra"]["links"]) == len(paper002.FIG6_BENCHMARKS) * 5
    assert not any("NLS" in k for c in rows for k in c["extra"]["links"])


def test_claim_combines_links_by_the_interval_rule_by_hand():
    up, centred, down = [v + 1 for v in D], [v - 1 for v in D], [-v for v in D]
    ok = paper002.claim("c", "x", {"a": D, "b": up}, "setup")
    assert ok.status == "pass" and ok.kind == "reproduction"
    assert ok.extra["weakest_link"] == "a"  # the lower interval
    # two links: each interval at 1 − 0.05/2, t(0.9875, 9) = 2.685 (a t table), half-width 2.685 / sqrt(10)
    half2 = 2.685 / 10 ** 0.5
    assert ok.extra["ci95_low"] == pytest.approx(1 - half2, abs=1e-4) and ok.extra["ci95_high"] == pytest.approx(1 + half2, abs=1e-4)
    assert ok.extra["links"]["b"]["ci95_low"] == pytest.approx(2 - half2, abs=1e-4)
    assert ok.extra["comparisons"] == 2 and 1 - half2 < 1 - HALF  # wider than the lone 95 % interval
    tie = paper002.claim("c", "x", {"a": D, "b": centred}, "setup", why=lambda j: "because")
    assert tie.status == "not_reproduced" and tie.extra["weakest_link"] == "b"
    assert "NOT REPRODUCED: because; tried: 10 seeds" in tie.note
    lost = paper002.claim("c", "x", {"a": D, "b": centred, "z": down}, "setup", why=lambda j: "because")
    assert lost.status == "fail" and lost.extra["weakest_link"] == "z" and "FAIL: because" in lost.note
    with pytest.raises(ValueError, match="at least 10 seeds"):
        paper002.claim("c", "x", {"a": D[:9]}, "setup")


def test_magnitude_by_hand():
    values = [30 + v for v in D]  # mean 31, sd 1: CI 31 ± 0.715357
    # prediction interval for one run: t·s·sqrt(1 + 1/10) = 2.262157 · 1.048809 = 2.372572
    low, high = paper002.prediction(values)
    assert low == pytest.approx(31 - 2.372572, rel=1e-5) and high == pytest.approx(31 + 2.372572, rel=1e-5)
    why = lambda o: f"ours minus the figure {o.mean:+.2f}"  # noqa: E731
    over35 = paper002.magnitude("m", 35.0, True, values, "setup", "reading", why)
    assert over35.status == "not_reproduced" and "ours minus the figure -4.00" in over35.note
    assert over35.ours == pytest.approx(31.0) and over35.tolerance == pytest.approx(0.72)
    assert paper002.magnitude("m", 30.0, True, values, "setup", "reading", why).status == "pass"  # 30.28 > 30
    assert paper002.magnitude("m", 31.0, True, values, "setup", "reading", why).status == "not_reproduced"
    assert paper002.magnitude("m", 31.5, False, values, "setup", "reading", why).status == "pass"  # within 30.28..31.72
    assert paper002.magnitude("m", 32.0, False, values, "setup", "reading", why).status == "not_reproduced"


def test_seeds_and_fig6_offsets():
    assert paper002.QUICK_SEEDS >= runner.MIN_SEEDS and paper002.FULL_SEEDS >= paper002.QUICK_SEEDS
    with runner._reporting(None, True):
        assert paper002.seeds() == paper002.QUICK_SEEDS
    assert paper002.seeds() == paper002.FULL_SEEDS
    offsets = [paper002.fig6_offsets(s) for s in range(1, 11)]
    assert offsets == [paper002.fig6_offsets(s) for s in range(1, 11)]  # seeded
    assert all(o[0] == 0.0 and len(o) == 3 and all(0.0 <= t < paper002.FIG6_JITTER_S for t in o) for o in offsets)
    assert len({tuple(o) for o in offsets}) == 10


def test_plots_written(doc):
    assert {"paper002_fig3a.svg", "paper002_fig7.svg"} <= set(doc["_plots"])


def test_energy_rows_use_18968_and_flag_gang_and_the_swap(doc):
    rows = {c["name"]: c for c in rows_of(doc)}
    gang = rows["Table 3 GANG: total energy (MJ)"]
    assert gang["paper_inconsistent"] is True and gang["tolerance"] == 0.035 and re.search(r"differs by 3\.[0-4]%", gang["note"])
    assert "18.968" in rows["Table 3 BATCH: total energy (MJ)"]["note"]
    # the swapped memory-aware PB and DCS rows are not asserted as printed
    assert "Table 4 PB memory-aware: total energy (MJ)" not in rows
    assert "Table 4 DCS memory-aware: total energy (MJ)" not in rows
    swap = [c for n, c in rows.items() if "PB/DCS" in n]
    assert len(swap) == 1 and swap[0]["paper_inconsistent"] and swap[0]["status"] == "pass"
    assert swap[0]["kind"] == "arithmetic"
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
    assert {c.kind for c in rows.values()} == {"arithmetic"}
