"""Paper 002 (Choi, Kim, Ersoz, Yoo, Das, SIGMETRICS 2004): coscheduling in clusters.

The paper's Figs. 3–8 are lost drawings; only the text's claims and Tables 3–4 survive. So:

* Tables 3 and 4: the energy formula E = (B + X·U)·N·T of §5.4, with B = 219.10 W and
  X = 18.968 W (the formula line; §5.4 also prints 18.839 W), N = 16, and each row's own U and
  T, against the row's printed total (busy + idle). The busy/idle split does not follow the
  formula (notes), so only totals are checked. Table 4's memory-aware PB and DCS rows are
  swapped in the paper: they are not asserted as printed.
* Figs. 3–8: the claims of the text, checked on our simulation (`cosched.compare`) of the
  paper's cluster (16 one-CPU nodes, MPL 3) with `workload nas` mixes of the paper's sizes. No
  paper value is invented: a claim row shows the claim as `paper_value` and our numbers as
  `ours`. Claims with undefined sizes ("300%", "65%", "performance-energy ratio") are checked
  for direction only; "backfilling within 2%" is not asserted.

**No calibration**: every time-sharing parameter is at its documented default
(docs/cosched.md), chosen before any comparison; Table 3's running-time ratios are therefore
not targets of anything here.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from .. import cosched
from .runner import ARITHMETIC, NOT_REPRODUCED, REPRODUCTION, Check, check, report

PAPER = "002"

B_W, X_W, N_NODES = 219.10, 18.968, 16
X_NOTE = "X = 18.968 W (the formula line of §5.4; the text also prints 18.839 W)"

#: Table 3: (allocation, scheme) → (busy MJ, idle MJ, utilisation %, total running time s).
TABLE3 = {
    ("no packing", "NLS"): (9.40, 86.63, 96, 24710), ("no packing", "PB"): (9.25, 86.52, 96, 24679),
    ("no packing", "DCS"): (8.63, 81.90, 96, 23361), ("no packing", "CC/SB"): (4.24, 65.56, 94, 18700),
    ("no packing", "HYBRID"): (4.98, 62.88, 94, 17938),
    ("packing", "NLS"): (8.60, 81.32, 91, 23198), ("packing", "PB"): (8.20, 79.42, 92, 22655),
    ("packing", "DCS"): (7.66, 74.69, 92, 21305), ("packing", "CC/SB"): (4.56, 58.02, 91, 16549),
    ("packing", "HYBRID"): (4.82, 56.38, 91, 16083),
    ("", "GANG"): (2.99, 61.42, 95, 17520), ("", "BATCH"): (4.35, 94.55, 63, 26971),
}
#: Table 4, same columns.
TABLE4 = {
    ("no memory-aware", "NLS"): (9.20, 91.68, 97, 26151), ("no memory-aware", "PB"): (7.84, 79.09, 92, 22559),
    ("no memory-aware", "DCS"): (6.92, 69.05, 91, 19695), ("no memory-aware", "CC/SB"): (4.73, 89.55, 87, 25545),
    ("no memory-aware", "HYBRID"): (4.16, 59.94, 90, 17098), ("no memory-aware", "GANG"): (6.19, 61.27, 99, 17477),
    ("memory-aware", "NLS"): (7.59, 74.19, 97, 21164), ("memory-aware", "PB"): (7.09, 70.44, 66, 21551),
    ("memory-aware", "DCS"): (7.57, 75.55, 81, 20092), ("memory-aware", "CC/SB"): (3.99, 45.59, 79, 13003),
    ("memory-aware", "HYBRID"): (3.84, 43.90, 78, 12522), ("memory-aware", "GANG"): (4.24, 50.85, 94, 14505),
    ("", "BATCH"): (5.12, 51.62, 99, 14724),
}

TS = ("nls", "gang", "dcs", "sb", "pb", "cc", "hybrid")
BLOCKING, SPINNING = ("hybrid", "cc", "sb"), ("dcs", "pb", "nls")
SEEDS = 2

NO_CALIBRATION = "no calibration: every time-sharing parameter at its documented default (docs/cosched.md)"


def formula_mj(u_percent: float, t_s: float) -> float:
    """E = (B + X·U)·N·T in MJ."""
    return (B_W + X_W * u_percent / 100.0) * N_NODES * t_s / 1e6


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


# --- the simulated experiments (cached: several checks read each) -----------------------------


def _compare(label: str, **kwargs: Any) -> cosched.Comparison:
    return cosched.compare(progress=lambda d, n: report(d, n, label), **kwargs)


@functools.lru_cache(maxsize=None)
def fig3(interarrival: float) -> cosched.Comparison:
    """100 NAS-like jobs (classes A, B), packing and random (the paper's NO PACKING)."""
    return _compare(f"100 jobs at {interarrival:g} s", nas_jobs=100, interarrival=interarrival,
                    policies=("batch",) + TS, allocations=("packing", "random"), seeds=SEEDS, first_seed=1)


@functools.lru_cache(maxsize=None)
def fig4() -> cosched.Comparison:
    return _compare("long-running mix", nas_jobs=20, interarrival=500.0, mix="long", classes=("B", "C"),
                    policies=("batch", "gang", "sb", "cc", "hybrid"), seeds=SEEDS, first_seed=1)


@functools.lru_cache(maxsize=None)
def fig5(cls: str) -> cosched.Comparison:
    return _compare(f"class {cls}", nas_jobs=20, interarrival=100.0, classes=(cls,),
                    policies=("batch", "gang", "sb", "cc", "hybrid"), seeds=SEEDS, first_seed=1)


@functools.lru_cache(maxsize=None)
def fig7() -> cosched.Comparison:
    return _compare("Table 2 mix", nas_jobs=20, interarrival=100.0, mix="table2", classes=("C",),
                    policies=("batch",) + TS, allocations=("packing", "memory-aware"), seeds=SEEDS, first_seed=1)


FIG6_BENCHMARKS = ("CG", "IS", "MG", "SP", "BT", "LU")


@functools.lru_cache(maxsize=None)
def fig6() -> dict[str, dict[str, float]]:
    """Three identical class C 16-process programs submitted together: mean execution time."""
    w = json.loads(cosched.nas_workload(300, 1.0, 0, ["C"], "nas").to_json())
    pick: dict[str, dict[str, Any]] = {}
    for j in w["jobs"]:
        if j["procs"] == 16 and j["benchmark"] not in pick:
            pick[j["benchmark"]] = j
    out: dict[str, dict[str, float]] = {}
    for k, b in enumerate(FIG6_BENCHMARKS):
        doc = {"jobs": [{**pick[b], "id": i, "submit_s": 0.0} for i in range(3)]}
        out[b] = {p: cosched.run(doc, p, 16, "packing").summary["avg_exec_s"] for p in TS}
        report(k + 1, len(FIG6_BENCHMARKS), "three identical class C programs")
    return out


def _r(c: cosched.Comparison, policy: str, allocation: str = "packing", metric: str = "avg_response_s") -> float:
    return c.mean(policy, metric, allocation)


def _fmt(d: dict[str, float], digits: int = 1) -> str:
    return ", ".join(f"{k} {v:.{digits}f}" for k, v in d.items())


def claim(name: str, paper_value: str, ours: str, ok: bool, note: str, why_not: str) -> Check:
    """A claim of the text checked on our simulation: pass, or not_reproduced with `why_not`
    (what was assumed, tried, and the likely cause)."""
    if ok:
        return Check(PAPER, name, paper_value, ours, None, True, kind=REPRODUCTION, note=note)
    return Check(PAPER, name, paper_value, ours, None, False, kind=REPRODUCTION, note=f"{note}. NOT REPRODUCED: {why_not}",
                 status=NOT_REPRODUCED)


def _setup(what: str) -> str:
    return f"{what}; seeds 1..{SEEDS} (`workload nas`), mean over seeds; 16 nodes, MPL 3; {NO_CALIBRATION}"


TIE_CAUSE = ("in our model HYBRID, CC and SB differ only in how long a waiting process spins before it "
             "blocks (0, 200 µs) and in HYBRID's boost inside collectives; with the generator's phase "
             "profiles these change response times by well under 1%, so the three tie and their order is "
             "noise. The paper's HYBRID gain over CC/SB (e.g. 10% in class C) would need costs our model "
             "lacks (SB/CC's spin wasted per message at the paper's measured rates, GM's blocking-mode "
             "overheads); tried: two seeds; no parameter was tuned")


# --- Tables 3 and 4 --------------------------------------------------------------------------


@check(PAPER, "Table 3: energy formula against the printed totals")
def table3_checks() -> list[Check]:
    rows = []
    for (alloc, scheme), (busy, idle, u, t) in TABLE3.items():
        printed = busy + idle
        ours = formula_mj(u, t)
        name = f"Table 3 {scheme}{' ' + alloc if alloc else ''}: total energy (MJ)"
        note = (f"(B + X·U)·N·T with B = 219.10 W, {X_NOTE}, N = 16, the row's U = {u}% and T = {t} s; "
                "against the printed busy + idle (the split does not follow the formula: not checked)")
        if scheme == "GANG":
            rows.append(Check(PAPER, name, round(printed, 2), round(ours, 3), 0.035, _rel(ours, printed) <= 0.035,
                              kind=ARITHMETIC, paper_inconsistent=True,
                              note=note + f"; the paper says the formula is within 3% of every row, but GANG differs "
                                          f"by {100 * _rel(ours, printed):.1f}%: tolerance 3.5%"))
        else:
            rows.append(Check(PAPER, name, round(printed, 2), round(ours, 3), 0.03, _rel(ours, printed) <= 0.03, kind=ARITHMETIC,
                              note=note + "; tolerance 3%, the paper's own claim (§5.4)"))
    return rows


@check(PAPER, "Table 4: energy formula; the swapped PB and DCS rows")
def table4_checks() -> list[Check]:
    rows = []
    for (alloc, scheme), (busy, idle, u, t) in TABLE4.items():
        if alloc == "memory-aware" and scheme in ("PB", "DCS"):
            continue
        printed = busy + idle
        ours = formula_mj(u, t)
        rows.append(Check(PAPER, f"Table 4 {scheme}{' ' + alloc if alloc else ''}: total energy (MJ)",
                          round(printed, 2), round(ours, 3), 0.03, _rel(ours, printed) <= 0.03, kind=ARITHMETIC,
                          note=f"(B + X·U)·N·T, B = 219.10 W, {X_NOTE}, the row's U = {u}% and T = {t} s; tolerance 3% "
                               "(§5.4's claim); totals only"))
    # The memory-aware PB and DCS rows: the energy columns belong to the other row's T.
    pb, dcs = TABLE4[("memory-aware", "PB")], TABLE4[("memory-aware", "DCS")]
    idle_pb_t = B_W * N_NODES * pb[3] / 1e6
    idle_dcs_t = B_W * N_NODES * dcs[3] / 1e6
    swapped = abs(idle_pb_t - dcs[1]) <= 0.01 and abs(idle_dcs_t - pb[1]) <= 0.01
    rows.append(Check(
        PAPER, "Table 4 memory-aware PB/DCS: B·N·T of each row's T is the other row's idle energy (MJ)",
        f"PB idle {pb[1]}, DCS idle {dcs[1]}", f"B·N·T(PB's T) = {idle_pb_t:.2f}, B·N·T(DCS's T) = {idle_dcs_t:.2f}",
        0.01, swapped, kind=ARITHMETIC, paper_inconsistent=True,
        note="the paper's memory-aware PB and DCS rows are swapped (219.10·16·21,551 s = 75.55 MJ is DCS's printed "
             "idle energy, and every other row of Table 4 has idle = B·N·T within 0.01 MJ): noted, these two rows "
             "are not asserted as printed"))
    return rows


# --- Fig. 3 ----------------------------------------------------------------------------------


def _fig3_rows(c: cosched.Comparison, load: str) -> list[Check]:
    setup = _setup(f"Fig. 3 ({load}): 100 jobs, classes A and B, mean inter-arrival "
                   f"{c.setup['interarrival_s']:g} s, packing and random (NO PACKING)")
    rows = []
    resp = {(r["policy"], r["allocation"]): r["avg_response_s"]["mean"] for r in c.rows}
    best = min(resp, key=resp.__getitem__)
    nxt = min((k for k in resp if k != ("hybrid", "packing")), key=resp.__getitem__)
    hyb = resp[("hybrid", "packing")]
    rows.append(claim(
        f"Fig. 3 ({load}): HYBRID has the lowest mean response time", "HYBRID lowest",
        f"HYBRID {hyb:.1f} s; lowest other {nxt[0]}/{nxt[1]} {resp[nxt]:.1f} s ({100 * (hyb / resp[nxt] - 1):+.2f}%)",
        best == ("hybrid", "packing"), setup + "; HYBRID, CC and SB are within 1% of each other here", TIE_CAUSE))
    blocking_ok = {}
    for b in BLOCKING:
        blocking_ok[b] = all(resp[(b, a)] < resp[(s, a)] for a in ("packing", "random") for s in SPINNING)
    spin_best = {a: min(resp[(s, a)] for s in SPINNING) for a in ("packing", "random")}
    for b in BLOCKING:
        name = "HYBRID" if b == "hybrid" else f"{b.upper()} (the paper's CC/SB)"
        rows.append(claim(
            f"Fig. 3 ({load}): {name} beats DCS, PB and NLS", "blocking < spin",
            f"{b} {resp[(b, 'packing')]:.1f} / {resp[(b, 'random')]:.1f} s vs best spin "
            f"{spin_best['packing']:.1f} / {spin_best['random']:.1f} s (packing / random)",
            blocking_ok[b], setup + "; in both allocations",
            "a spin scheme is faster here; see its numbers; no parameter was tuned"))
    gains = {p: 1 - resp[(p, "packing")] / resp[(p, "random")] for p in TS if p != "gang"}
    mean_gain = sum(gains.values()) / len(gains)
    rows.append(claim(
        f"Fig. 3 ({load}): packing improves response time (paper: about 25% in (a))", "packing < no packing (≈ 25%)",
        f"gain {100 * mean_gain:.1f}% mean ({', '.join(f'{p} {100 * g:.0f}%' for p, g in gains.items())})",
        all(g > 0 for g in gains.values()),
        setup + "; direction checked for every time-sharing policy, the size only reported (gang and batch pack only)",
        "some policy is faster without packing"))
    return rows


@check(PAPER, "Fig. 3 (a): heavy load, 100 jobs at 100 s")
def fig3a_checks() -> list[Check]:
    c = fig3(100.0)
    rows = _fig3_rows(c, "a, heavy")
    setup = _setup("Fig. 3 (a): 100 jobs, classes A and B, mean inter-arrival 100 s")
    wait = {(r["policy"], r["allocation"]): r["avg_wait_s"]["mean"] for r in c.rows}
    longest = max(wait, key=wait.__getitem__)
    rows.append(claim("Fig. 3 (a): batch (PBS) has the longest wait", "PBS longest wait",
                      f"batch {wait[('batch', 'packing')]:.1f} s; next {sorted(wait.values())[-2]:.1f} s",
                      longest == ("batch", "packing"), setup, "a time-sharing policy waits longer"))
    resp = {(r["policy"], r["allocation"]): r["avg_response_s"]["mean"] for r in c.rows}
    order = sorted(resp, key=resp.__getitem__, reverse=True)[:3]
    rows.append(claim("Fig. 3 (a): worst NLS no packing, then PB no packing, then PBS", "NLS-np > PB-np > PBS",
                      ", ".join(f"{p}/{a} {resp[(p, a)]:.0f} s" for p, a in order),
                      order == [("nls", "random"), ("pb", "random"), ("batch", "packing")], setup,
                      "the same three are the slowest, in another order: our PBS waits longer than the paper's "
                      "relative to the spin schemes, i.e. our NLS and PB lose less to uncoordinated spinning than "
                      "the real cluster did (our switch and spin costs are uncalibrated assumptions; Table 3's "
                      "NLS/HYBRID running-time ratio 1.44 would be the permitted calibration target, not attempted); "
                      "tried: two seeds"))
    h, b, g = resp[("hybrid", "packing")], resp[("batch", "packing")], resp[("gang", "packing")]
    rows.append(claim("Fig. 3 (a): HYBRID below PBS ('300%') and below gang ('20%'), direction only",
                      "HYBRID < PBS, HYBRID < gang", f"HYBRID {h:.1f}, PBS {b:.1f}, gang {g:.1f} s", h < b and h < g,
                      setup + "; '300%' is undefined (notes): direction only", "HYBRID is not below both"))
    exe = {(r["policy"], r["allocation"]): r["avg_exec_s"]["mean"] for r in c.rows}
    rows.append(claim("Fig. 3 (a): batch has the lowest execution time", "PBS lowest execution",
                      f"batch {exe[('batch', 'packing')]:.1f} s; next {sorted(exe.values())[1]:.1f} s",
                      min(exe, key=exe.__getitem__) == ("batch", "packing"), setup, "a time-sharing run is shorter"))
    return rows


@check(PAPER, "Fig. 3 (b): light load, 100 jobs at 250 s")
def fig3b_checks() -> list[Check]:
    c = fig3(250.0)
    rows = _fig3_rows(c, "b, light")
    setup = _setup("Fig. 3 (b): 100 jobs, classes A and B, mean inter-arrival 250 s")
    resp = {p: _r(c, p) for p in ("batch", "gang", "cc", "sb")}
    rows.append(claim("Fig. 3 (b): gang, CC and SB outperform PBS", "gang, CC, SB < PBS", _fmt(resp),
                      all(resp[p] < resp["batch"] for p in ("gang", "cc", "sb")), setup, "one of them is slower than PBS"))
    return rows


# --- Fig. 4, 5, 6 ----------------------------------------------------------------------------


@check(PAPER, "Fig. 4: long-running mix, 20 jobs at 500 s")
def fig4_checks() -> list[Check]:
    c = fig4()
    setup = _setup("Fig. 4: 20 jobs of the `long` mix (sPPM 2,726 s, BlockSolve95 941 s, LU classes B and C; "
                   "Table 1), mean inter-arrival 500 s")
    resp = {p: _r(c, p) for p in ("hybrid", "cc", "sb", "gang", "batch")}
    cc_sb = max(resp["cc"], resp["sb"])
    order_ok = resp["hybrid"] < min(resp["cc"], resp["sb"]) and cc_sb < resp["gang"] < resp["batch"]
    tail_ok = cc_sb < resp["gang"] < resp["batch"]
    rows = [claim("Fig. 4: HYBRID best, then CC/SB, gang, PBS", "HYBRID < CC/SB < gang < PBS", _fmt(resp), order_ok,
                  setup, ("CC/SB < gang < PBS holds" if tail_ok else "the tail of the order differs too") + "; "
                  + TIE_CAUSE)]
    wait = {r["policy"]: r["avg_wait_s"]["mean"] for r in c.rows}
    rows.append(claim("Fig. 4: batch suffers the largest wait", "PBS longest wait", _fmt(wait),
                      max(wait, key=wait.__getitem__) == "batch", setup, "a time-sharing policy waits longer"))
    return rows


@check(PAPER, "Fig. 5: classes A, B, C, 20 jobs each")
def fig5_checks() -> list[Check]:
    rows = []
    b = fig5("B")
    setup_b = _setup("Fig. 5 class B: 20 jobs, mean inter-arrival 100 s (our assumption, notes)")
    resp_b = {p: _r(b, p) for p in ("batch", "gang", "sb", "cc", "hybrid")}
    rows.append(claim("Fig. 5 class B: PBS has the worst response time", "PBS worst", _fmt(resp_b),
                      max(resp_b, key=resp_b.__getitem__) == "batch", setup_b, "another policy is slower"))
    c = fig5("C")
    setup_c = _setup("Fig. 5 class C: 20 jobs, mean inter-arrival 100 s (our assumption, notes); memory ignored "
                     "(packing, as the figure's runs)")
    resp_c = {p: _r(c, p) for p in ("batch", "gang", "sb", "cc", "hybrid")}
    h = resp_c["hybrid"]
    rows.append(claim("Fig. 5 class C: HYBRID below SCore (paper 12%) and PBS ('65%', direction only)",
                      "HYBRID < gang, HYBRID < PBS", _fmt(resp_c), h < resp_c["gang"] and h < resp_c["batch"], setup_c,
                      "HYBRID is not below both"))
    rows.append(claim("Fig. 5 class C: HYBRID below CC/SB (paper 10%)", "HYBRID < CC, HYBRID < SB",
                      f"HYBRID {h:.1f}, CC {resp_c['cc']:.1f}, SB {resp_c['sb']:.1f} s "
                      f"({100 * (h / min(resp_c['cc'], resp_c['sb']) - 1):+.2f}%)",
                      h < resp_c["cc"] and h < resp_c["sb"], setup_c, TIE_CAUSE))
    a = fig5("A")
    resp_a = {p: _r(a, p) for p in ("batch", "gang", "sb", "cc", "hybrid")}
    wait_a = {p: _r(a, p, metric="avg_wait_s") for p in resp_a}
    rows.append(claim("Fig. 5 class A: PBS waits longest", "PBS higher waiting time", _fmt(wait_a),
                      max(wait_a, key=wait_a.__getitem__) == "batch",
                      _setup("Fig. 5 class A: 20 jobs, mean inter-arrival 100 s"), "another policy waits longer"))
    return rows


@check(PAPER, "Fig. 6: three identical class C programs on 16 nodes")
def fig6_checks() -> list[Check]:
    data = fig6()
    setup = (f"three copies of the generator's class C 16-process job of each benchmark, submitted at 0, packing, "
             f"MPL 3; execution time; {NO_CALIBRATION}")
    rows = []
    hybrid_best = {b: min(d, key=d.__getitem__) == "hybrid" for b, d in data.items()}
    margin = {b: 100 * (d["hybrid"] / min(v for p, v in d.items() if p != "hybrid") - 1) for b, d in data.items()}
    rows.append(claim("Fig. 6: HYBRID has the shortest execution time for every benchmark", "HYBRID shortest (all)",
                      ", ".join(f"{b} {m:+.2f}%" for b, m in margin.items()) + " (HYBRID vs the best other)",
                      all(hybrid_best.values()), setup, TIE_CAUSE))
    gap = {b: 1 - min(d[p] for p in BLOCKING) / min(d[p] for p in ("dcs", "pb")) for b, d in data.items()}
    rows.append(claim("Fig. 6: blocking schemes beat spin schemes (DCS, PB) on every benchmark", "blocking < spin",
                      ", ".join(f"{b} {100 * g:.1f}%" for b, g in gap.items()) + " (best blocking below best spin)",
                      all(g > 0 for g in gap.values()), setup, "a spin scheme is faster on some benchmark"))
    big = {b: g for b, g in gap.items() if b != "IS"}
    rows.append(claim("Fig. 6: CG shows the largest blocking/spin difference, BT and LU the smallest",
                      "CG largest; BT, LU smallest", ", ".join(f"{b} {100 * g:.1f}%" for b, g in big.items()),
                      max(big, key=big.__getitem__) == "CG" and set(sorted(big, key=big.__getitem__)[:2]) == {"BT", "LU"},
                      setup + "; relative difference; IS left out as the paper does (its run is too short to show one)",
                      "the order of the gaps differs"))
    return rows


# --- Fig. 7, Fig. 8 and energy -----------------------------------------------------------------


@check(PAPER, "Fig. 7: memory-aware allocation, Table 2's configurations")
def fig7_checks() -> list[Check]:
    c = fig7()
    setup = _setup("Fig. 7: 20 jobs of Table 2's ten class C configurations (memory from Table 2), mean "
                   "inter-arrival 100 s; no memory-aware = packing (swapping when a node's jobs exceed 900 MB, "
                   "swap_slowdown 2, an assumption)")
    rows = []
    resp = {(r["policy"], r["allocation"]): r["avg_response_s"]["mean"] for r in c.rows}
    batch = resp[("batch", "packing")]
    rows.append(claim("Fig. 7 (a): PBS outperforms every scheme without memory-aware allocation",
                      "PBS < all no-memory-aware", f"PBS {batch:.0f} s; best other {min(resp[(p, 'packing')] for p in TS):.0f} s",
                      all(batch < resp[(p, "packing")] for p in TS), setup,
                      "our swapping cost is an assumption (a node over 900 MB computes swap_slowdown = 2 times slower); "
                      "the paper's disk swapping was far costlier (Table 4: NLS without memory-aware allocation ran "
                      "26,151 s against PBS's 14,724 s). Raising swap_slowdown until PBS wins would be tuning the input "
                      "to the outcome, so it was not done; tried: two seeds"))
    gains = {p: 1 - resp[(p, "memory-aware")] / resp[(p, "packing")] for p in TS}
    mean_gain = sum(gains.values()) / len(gains)
    rows.append(claim("Fig. 7 (a): memory-aware allocation improves response time (paper: over 35%)",
                      "memory-aware < not (> 35%)",
                      f"mean gain {100 * mean_gain:.1f}% ({', '.join(f'{p} {100 * g:.0f}%' for p, g in gains.items())})",
                      all(g > 0 for g in gains.values()), setup + "; direction checked, size reported",
                      "some policy is not faster with memory-aware allocation"))
    ma = {p: resp[(p, "memory-aware")] for p in TS}
    best = min(ma, key=ma.__getitem__)
    rows.append(claim("Fig. 7 (a): with memory-aware allocation HYBRID is best and below PBS (paper: 20%)",
                      "HYBRID best, < PBS", f"HYBRID {ma['hybrid']:.1f} s, best {best} {ma[best]:.1f} s, PBS {batch:.0f} s",
                      best == "hybrid" and ma["hybrid"] < batch, setup,
                      ("HYBRID is below PBS; " if ma["hybrid"] < batch else "") + TIE_CAUSE))
    speed = {p: resp[(p, "packing")] / resp[(p, "memory-aware")] for p in TS}
    blocking_min = min(speed[p] for p in BLOCKING)
    others = {p: s for p, s in speed.items() if p not in BLOCKING}
    rows.append(claim(
        "Fig. 7 (b): memory-aware allocation helps the blocking schemes (CC/SB, HYBRID) most",
        "speed-up of CC/SB, HYBRID highest", _fmt(speed, 3) + " (response, not memory-aware / memory-aware)",
        blocking_min > max(others.values()), setup,
        "the paper's cause is that blocking processes are switched out before their quantum ends and so swap more "
        "(§5.3); our swapping model is a uniform compute slowdown on an over-committed node (swap_slowdown = 2), "
        "with no per-switch paging cost, so it cannot favour blocking schemes: "
        + ", ".join(f"{p} {s:.4f}" for p, s in sorted(others.items(), key=lambda x: -x[1]) if s >= blocking_min)
        + " reach the blocking schemes' minimum " + f"{blocking_min:.4f}; tried: two seeds, no parameter tuned"))
    return rows


@check(PAPER, "Fig. 8 and Table 3: energy on our simulation")
def energy_checks() -> list[Check]:
    rows = []
    heavy = fig3(100.0)
    setup = _setup("Table 3's workload (Fig. 3 (a): 100 jobs at 100 s); energy by §5.4's formula, "
                   f"{X_NOTE}")
    e = {(r["policy"], r["allocation"]): r["energy_j"]["mean"] / 1e6 for r in heavy.rows}
    resp = {(r["policy"], r["allocation"]): r["avg_response_s"]["mean"] for r in heavy.rows}
    h, b = ("hybrid", "packing"), ("batch", "packing")
    rows.append(claim("Table 3: HYBRID's performance-energy ratio better than PBS's (paper '60%', direction only)",
                      "HYBRID better", f"HYBRID {e[h]:.2f} MJ, {resp[h]:.0f} s; PBS {e[b]:.2f} MJ, {resp[b]:.0f} s",
                      e[h] < e[b] and resp[h] < resp[b], setup + "; 'performance-energy ratio' is undefined: "
                      "we check that HYBRID is lower in both energy and response time",
                      "HYBRID is not lower in both"))
    top = max(e, key=e.__getitem__)
    rows.append(claim("Table 3: PBS consumes the most energy", "PBS highest energy",
                      f"PBS {e[b]:.2f} MJ; highest {top[0]}/{top[1]} {e[top]:.2f} MJ", top == b, setup,
                      "our heavy mix of classes A and B keeps the cluster below saturation (T ≈ 11,000 s is set by the "
                      "last arrival, about 100 × 100 s, for every policy; the paper's T is 16,000–27,000 s), so T and "
                      "hence idle energy barely differ between policies and the spin schemes' busy power decides; the "
                      "paper's PBS ran 27,000 s, a backlog our workload (the notes' classes A and B) does not build; tried: two seeds, no parameter "
                      "tuned"))
    by_class = {cl: fig5(cl) for cl in "ABC"}
    adv = {cl: 1 - c.mean("hybrid", "energy_j") / c.mean("batch", "energy_j") for cl, c in by_class.items()}
    rows.append(claim("Fig. 8: the energy advantage of HYBRID over PBS grows from class A to C",
                      "grows A → B → C", ", ".join(f"{cl} {100 * a:+.1f}%" for cl, a in adv.items()),
                      adv["A"] < adv["B"] < adv["C"],
                      _setup("Fig. 8: the Fig. 5 runs (20 jobs per class at 100 s, our assumption)"),
                      "in class C our time-sharing runs finish the 20 jobs later than PBS (larger T, hence more idle "
                      "energy): likely because at MPL 3 a process that waits for a message from a descheduled "
                      "partner leaves its CPU to other jobs, and the lost coordination costs more than PBS's "
                      "queueing with only 20 jobs; PBS's jobs run alone at full speed. Tried: two seeds, no "
                      "parameter tuned; a calibration of the switch cost to Table 3 was not attempted"))
    cc = by_class["C"]
    ec = {p: cc.mean(p, "energy_j") / 1e6 for p in ("hybrid", "cc", "sb", "gang", "batch")}
    rows.append(claim("Fig. 8 class C: HYBRID lowest energy, then CC/SB, then gang", "HYBRID < CC/SB < gang",
                      _fmt(ec, 2) + " MJ", ec["hybrid"] < min(ec["cc"], ec["sb"]) and max(ec["cc"], ec["sb"]) < ec["gang"],
                      _setup("Fig. 8 class C: 20 jobs at 100 s"), TIE_CAUSE))
    return rows


def plot(outdir: str | Path) -> list[Path]:
    """Response-time bars per policy for Fig. 3 (a), (b), Fig. 4, Fig. 5 class C and Fig. 7."""
    out = []
    for name, comp, title in (
        ("fig3a", fig3(100.0), "Fig. 3 (a): 100 jobs at 100 s"),
        ("fig3b", fig3(250.0), "Fig. 3 (b): 100 jobs at 250 s"),
        ("fig4", fig4(), "Fig. 4: long-running mix, 20 jobs at 500 s"),
        ("fig5c", fig5("C"), "Fig. 5: class C, 20 jobs at 100 s"),
        ("fig7", fig7(), "Fig. 7: Table 2 mix, memory-aware or not"),
    ):
        path = Path(outdir) / f"paper002_{name}.svg"
        comp.plot(path, title=title + f" ({SEEDS} seeds)")
        out.append(path)
    return out
