"""Paper 002 (Choi, Kim, Ersoz, Yoo, Das, SIGMETRICS 2004): coscheduling in clusters.

The paper's Figs. 3–8 are lost drawings; only the text's claims and Tables 3–4 survive. So:

* Tables 3 and 4 (kind `arithmetic`): the energy formula E = (B + X·U)·N·T of §5.4, with
  B = 219.10 W and X = 18.968 W (the formula line; §5.4 also prints 18.839 W), N = 16, and each
  row's own U and T, against the row's printed total (busy + idle). The busy/idle split does not
  follow the formula (notes), so only totals are checked. Table 4's memory-aware PB and DCS rows
  are swapped in the paper: they are not asserted as printed.
* Figs. 3–8 (kind `reproduction`): the claims of the text, checked on our simulation
  (`cosched.compare`) of the paper's cluster (16 one-CPU nodes, MPL 3) with `workload nas` mixes
  of the paper's sizes, over seeds FIRST_SEED .. FIRST_SEED + n − 1 (n = QUICK_SEEDS under
  ``--quick``, FULL_SEEDS otherwise; each seed is a fresh workload, the same one for every policy).
  No paper value is invented: a claim row shows the claim as `paper_value`.

  - **Orderings** ("HYBRID has the lowest mean response", "PBS waits longest", "A beats B",
    chains such as HYBRID < CC/SB < gang < PBS) are split into pairwise links: the claimed
    winner against each rival, each step of a chain. Each link is judged by `runner.ordering`
    over its per-seed differences (positive where the link holds, in % of the value claimed to
    be larger unless the row says otherwise): the confidence interval of its mean, simultaneous
    over the row's links (each at 1 − 0.05/m for m links, so the claim is held at 95 %). The row
    is `fail` when some link's interval lies below 0, `pass` when every link's lies above 0, and
    `not_reproduced` otherwise; its note gives every link's mean and interval, its `extra` the
    weakest link's (and every link's under `links`). The same rule in both directions.
  - **Magnitudes** the text states with a defined reading, against the 95 % confidence interval
    of our mean over the seeds (runner.ordering on ours − the paper's figure): "over 35 %"
    (Fig. 7 (a): the average over the time-sharing schemes of the response-time gain of
    memory-aware allocation) is an inequality, judged as an ordering: `pass` only when the whole
    interval lies above 35 %. "65 %" (Fig. 5 class C: 1 − response(HYBRID)/response(PBS), the
    reading of the same sentence's "10 % lower than that of CC/SB") and "about 25 %" (Fig. 3 (a):
    the average gain of packing) are equalities: `pass` when the figure lies within the
    interval (the tolerance is its half-width, from the run). Otherwise `not_reproduced`, with
    the analysis in the note; the note also gives our 95 % prediction interval for one run, as
    each of the paper's figures is one run.
  - "300 %" and the "performance-energy ratio" are never defined (notes): their rows check the
    direction, as orderings. "Backfilling within 2 %" is not asserted.
  - Fig. 6 has no random input in our model (three identical programs submitted together,
    packing): a seed there draws the submission times of the second and third copies
    uniformly in [0, FIG6_JITTER_S) (our stand-in for the text's "start ... almost at the same
    time"), so the orderings of Fig. 6 are judged over the same number of seeds as the rest.

**No calibration**: every time-sharing parameter is at its documented default
(docs/cosched.md), chosen before any comparison; Table 3's running-time ratios are therefore
not targets of anything here.
"""

from __future__ import annotations

import functools
import json
import math
import os
import random
from concurrent.futures import as_completed
from pathlib import Path
from typing import Any, Callable

from .. import cosched
from .._pool import thread_pool
from .runner import (ARITHMETIC, FAIL, NOT_REPRODUCED, PASS, REPRODUCTION, Check, Ordering, check, ordering, quick,
                     report)

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

#: Seeds per experiment: every ordering claim needs at least runner.MIN_SEEDS (10) in both modes.
QUICK_SEEDS, FULL_SEEDS = 10, 20
FIRST_SEED = 1
#: Fig. 6: the second and third copies are submitted at offsets drawn uniformly in [0, this) s.
FIG6_JITTER_S = 1.0

NO_CALIBRATION = "no calibration: every time-sharing parameter at its documented default (docs/cosched.md)"


def seeds() -> int:
    """How many seeds each simulated experiment runs: QUICK_SEEDS under ``--quick``, else FULL_SEEDS."""
    return QUICK_SEEDS if quick() else FULL_SEEDS


def formula_mj(u_percent: float, t_s: float) -> float:
    """E = (B + X·U)·N·T in MJ."""
    return (B_W + X_W * u_percent / 100.0) * N_NODES * t_s / 1e6


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


# --- the simulated experiments (cached: several checks read each) -----------------------------


def _compare(label: str, n: int, **kwargs: Any) -> cosched.Comparison:
    return cosched.compare(progress=lambda d, t: report(d, t, label), seeds=n, first_seed=FIRST_SEED, **kwargs)


@functools.lru_cache(maxsize=None)
def _fig3(interarrival: float, n: int) -> cosched.Comparison:
    return _compare(f"100 jobs at {interarrival:g} s, {n} seeds", n, nas_jobs=100, interarrival=interarrival,
                    policies=("batch",) + TS, allocations=("packing", "random"))


def fig3(interarrival: float) -> cosched.Comparison:
    """100 NAS-like jobs (classes A, B), packing and random (the paper's NO PACKING)."""
    return _fig3(interarrival, seeds())


@functools.lru_cache(maxsize=None)
def _fig4(n: int) -> cosched.Comparison:
    return _compare(f"long-running mix, {n} seeds", n, nas_jobs=20, interarrival=500.0, mix="long",
                    classes=("B", "C"), policies=("batch", "gang", "sb", "cc", "hybrid"))


def fig4() -> cosched.Comparison:
    return _fig4(seeds())


@functools.lru_cache(maxsize=None)
def _fig5(cls: str, n: int) -> cosched.Comparison:
    return _compare(f"class {cls}, {n} seeds", n, nas_jobs=20, interarrival=100.0, classes=(cls,),
                    policies=("batch", "gang", "sb", "cc", "hybrid"))


def fig5(cls: str) -> cosched.Comparison:
    return _fig5(cls, seeds())


@functools.lru_cache(maxsize=None)
def _fig7(n: int) -> cosched.Comparison:
    return _compare(f"Table 2 mix, {n} seeds", n, nas_jobs=20, interarrival=100.0, mix="table2", classes=("C",),
                    policies=("batch",) + TS, allocations=("packing", "memory-aware"))


def fig7() -> cosched.Comparison:
    return _fig7(seeds())


FIG6_BENCHMARKS = ("CG", "IS", "MG", "SP", "BT", "LU")
#: Fig. 6 runs "the communication-driven coscheduling techniques and the gang scheduling" (§5.2): not NLS.
FIG6_POLICIES = ("gang", "dcs", "sb", "pb", "cc", "hybrid")


def fig6_offsets(seed: int) -> list[float]:
    """Submission times (s) of the three copies in Fig. 6's run of `seed`: the first at 0, the
    others uniform in [0, FIG6_JITTER_S)."""
    rng = random.Random(seed)
    return [0.0] + [rng.uniform(0.0, FIG6_JITTER_S) for _ in range(2)]


@functools.lru_cache(maxsize=None)
def _fig6(n: int) -> dict[str, dict[str, list[float]]]:
    w = json.loads(cosched.nas_workload(300, 1.0, 0, ["C"], "nas").to_json())
    pick: dict[str, dict[str, Any]] = {}
    for j in w["jobs"]:
        if j["procs"] == 16 and j["benchmark"] not in pick:
            pick[j["benchmark"]] = j
    seed_list = list(range(FIRST_SEED, FIRST_SEED + n))
    docs = {(b, s): {"jobs": [{**pick[b], "id": i, "submit_s": t} for i, t in enumerate(fig6_offsets(s))]}
            for b in FIG6_BENCHMARKS for s in seed_list}
    todo = [(b, p, s) for b in FIG6_BENCHMARKS for s in seed_list for p in FIG6_POLICIES]
    got: dict[tuple[str, str, int], float] = {}

    def one(key: tuple[str, str, int]) -> float:
        b, p, s = key
        return float(cosched.run(docs[(b, s)], p, 16, "packing").summary["avg_exec_s"])

    with thread_pool(os.cpu_count() or 1) as pool:  # the core releases the GIL
        futures = {pool.submit(one, k): k for k in todo}
        for done, fut in enumerate(as_completed(futures), 1):
            got[futures[fut]] = fut.result()
            report(done, len(todo), f"three identical class C programs, {n} seeds")
    return {b: {p: [got[(b, p, s)] for s in seed_list] for p in FIG6_POLICIES} for b in FIG6_BENCHMARKS}


def fig6() -> dict[str, dict[str, list[float]]]:
    """Three identical class C 16-process programs on 16 nodes: per benchmark and policy, the mean
    execution time of the three, one value per seed (the seed draws the submission offsets)."""
    return _fig6(seeds())


# --- judging claims --------------------------------------------------------------------------


def per_seed(c: cosched.Comparison, policy: str, allocation: str = "packing",
             metric: str = "avg_response_s") -> list[float]:
    return [float(v) for v in c.row(policy, allocation)[metric]["per_seed"]]


def below(a: list[float], b: list[float]) -> list[float]:
    """Per seed, how far `a` lies below `b`, in % of `b` (positive where a < b)."""
    return [100.0 * (y - x) / y if y else 0.0 for x, y in zip(a, b)]


def above(a: list[float], b: list[float]) -> list[float]:
    """Per seed, how far `a` lies above `b`, in % of `a` (positive where a > b)."""
    return [100.0 * (x - y) / x if x else 0.0 for x, y in zip(a, b)]


def _mean(v: list[float]) -> float:
    return sum(v) / len(v)


def _fmt(d: dict[str, float], digits: int = 1) -> str:
    return ", ".join(f"{k} {v:.{digits}f}" for k, v in d.items())


_RANK = {FAIL: 0, NOT_REPRODUCED: 1, PASS: 2}


def judge_links(links: dict[str, list[float]]) -> tuple[str, dict[str, Ordering], str]:
    """Each link judged by runner.ordering on simultaneous intervals (each at 1 − 0.05/m for m
    links, so the claim as a whole is held at 95 %); the row's status (fail if a link fails, pass
    if all pass, else not_reproduced) and the weakest link (lowest status, then lowest interval)."""
    judged = {label: ordering(d, comparisons=len(links)) for label, d in links.items()}
    weakest = min(judged, key=lambda k: (_RANK[judged[k].status], judged[k].low))
    return judged[weakest].status, judged, weakest


def claim(name: str, paper_value: str, links: dict[str, list[float]], setup: str, ours: str = "",
          unit: str = " %", why: Callable[[dict[str, Ordering]], str] | None = None) -> Check:
    """An ordering claim of the text, judged link by link over the seeds (module docstring).

    `links` maps each pairwise link to its per-seed differences (positive where it holds);
    `why(judged)` writes the analysis of a row that does not pass, from the run's numbers."""
    status, judged, weakest = judge_links(links)
    w = judged[weakest]
    verdict = {PASS: "every link's interval lies above 0",
               FAIL: "some link's interval lies below 0",
               NOT_REPRODUCED: "some link's interval contains 0 and none lies below"}[status]
    what = f"in{unit}" if unit.strip() else "as the row says"
    note = (f"{setup}. Judged link by link (runner.ordering on the per-seed differences, {what}; with "
            f"{len(judged)} links, simultaneous 95 % intervals): "
            + "; ".join(f"{k}: {o.describe(unit)} [{o.status}]" for k, o in judged.items())
            + f". {verdict}")
    if status != PASS:
        label = "FAIL" if status == FAIL else "NOT REPRODUCED"
        note += f". {label}: " + (why(judged) if why else "see the links above") + \
                f"; tried: {w.seeds} seeds, no parameter tuned"
    extra = {**w.extra(), "weakest_link": weakest, "unit": unit.strip(),
             "links": {k: {**o.extra(), "status": o.status} for k, o in judged.items()}}
    summary = ours or f"weakest link {weakest}: {w.describe(unit)}"
    return Check(PAPER, name, paper_value, summary, None, status == PASS, kind=REPRODUCTION, note=note,
                 status=status, extra=extra)


def prediction(values: list[float]) -> tuple[float, float]:
    """Our 95 % prediction interval for one more run, mean ± t(0.975, n − 1)·s·√(1 + 1/n): how
    far a single run like the paper's can stray in our model (context for a magnitude row). It is
    the confidence interval of the mean (runner.ordering) widened by √(n + 1)."""
    o = ordering(values)
    half = (o.high - o.mean) * math.sqrt(o.seeds + 1)
    return o.mean - half, o.mean + half


def magnitude(name: str, paper_pct: float, at_least: bool, values: list[float], setup: str, reading: str,
              why: Callable[[Ordering], str]) -> Check:
    """A size the text states (in %), against the 95 % confidence interval of our mean over the
    seeds (runner.ordering on ours − the paper's figure). "Over X %" (`at_least`) is an
    inequality, judged as an ordering: pass when the interval lies above X. "X %" is an equality:
    pass when X lies within the interval (the tolerance is its half-width, from the run).
    Otherwise not_reproduced, with `why(o)` (o: ours − X) as the analysis."""
    o = ordering([v - paper_pct for v in values])
    mean, low, high = o.mean + paper_pct, o.low + paper_pct, o.high + paper_pct
    ok = o.status == PASS if at_least else low <= paper_pct <= high
    rule = (f"“over {paper_pct:g} %” is an inequality, judged as an ordering: pass when the interval lies above "
            f"{paper_pct:g} %" if at_least else
            f"pass when {paper_pct:g} % lies within the interval (tolerance: its half-width, from the run)")
    pi_low, pi_high = prediction(values)
    note = (f"{setup}. Reading: {reading}. Ours: mean {mean:.1f} % (95 % CI {low:.1f} % to {high:.1f} %) over "
            f"{o.seeds} seeds; {rule}. For context, one run of our model (as the paper's figure is one run) would "
            f"land between {pi_low:.1f} % and {pi_high:.1f} % (95 % prediction interval)")
    if not ok:
        note += f". NOT REPRODUCED: {why(o)}; tried: {o.seeds} seeds, no parameter tuned"
    extra = {**o.extra(), "mean_pct": mean, "ci95_low_pct": low, "ci95_high_pct": high,
             "pi95_low_pct": pi_low, "pi95_high_pct": pi_high, "per_seed_pct": values}
    return Check(PAPER, name, paper_pct, round(mean, 2), round((high - low) / 2, 2), ok, kind=REPRODUCTION, note=note,
                 status=PASS if ok else NOT_REPRODUCED, extra=extra)


def _setup(what: str) -> str:
    n = seeds()
    return (f"{what}; seeds {FIRST_SEED}..{FIRST_SEED + n - 1} (`workload nas`, one workload per seed for every "
            f"policy); 16 nodes, MPL 3; {NO_CALIBRATION}")


def _blocking_mechanism() -> str:
    """How HYBRID, CC and SB differ in our model, with the parameters' values (default_params())."""
    d = cosched.default_params()
    return (f"In our model HYBRID blocks at once when its message is absent and is boosted (boost {d['boost']}) from "
            f"the entry of a collective to its exit; SB and CC spin spin_s = {1e6 * d['spin_s']:.0f} µs before "
            f"blocking, and CC's sender spins at most cc_send_spin_s = {1e6 * d['cc_send_spin_s']:.0f} µs "
            f"(default_params())")


def _links_not_passing(judged: dict[str, Ordering]) -> str:
    """The links that do not pass, by name, with their means (their intervals are in the note)."""
    return ", ".join(f"{k} (mean {o.mean:+.3g})" for k, o in judged.items() if o.status != PASS)


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


def _label(policy: str, allocation: str) -> str:
    name = {"batch": "PBS", "gang": "gang"}.get(policy, policy.upper())
    return name if policy in ("batch", "gang") else f"{name} {'no packing' if allocation == 'random' else allocation}"


def _pairs(c: cosched.Comparison) -> list[tuple[str, str]]:
    return [(r["policy"], r["allocation"]) for r in c.rows]


def _table3_ratio(num: str, den: str, alloc: str = "packing") -> float:
    return TABLE3[(alloc, num)][3] / TABLE3[(alloc, den)][3]


def _fig3_rows(c: cosched.Comparison, load: str) -> list[Check]:
    setup = _setup(f"Fig. 3 ({load}): 100 jobs, classes A and B, mean inter-arrival {c.setup['interarrival_s']:g} s, "
                   "packing and random (NO PACKING); mean response time per job")
    rows = []
    resp = {k: per_seed(c, *k) for k in _pairs(c)}
    h = ("hybrid", "packing")

    def why_lowest(j: dict[str, Ordering]) -> str:
        blocking = [k for k, o in j.items() if o.status != PASS and k.split(" < ")[1].split()[0] in ("SB", "CC")]
        out = "the links that do not hold: " + _links_not_passing(j)
        if blocking:
            out += (f". {_blocking_mechanism()}: these are all that separate HYBRID from SB and CC here, and the links' "
                    "means above are what they change on this workload; the paper's measured CC/SB costs (GM's blocking "
                    "mode, the spin lost per message on the real NIC) are not in our model")
        return out

    rows.append(claim(f"Fig. 3 ({load}): HYBRID has the lowest mean response time", "HYBRID lowest",
                      {f"HYBRID packing < {_label(*k)}": below(resp[h], v) for k, v in resp.items() if k != h}, setup,
                      why=why_lowest))
    for b in BLOCKING:
        name = "HYBRID" if b == "hybrid" else f"{b.upper()} (the paper's CC/SB)"
        links = {f"{_label(b, a)} < {_label(s, a)}": below(resp[(b, a)], resp[(s, a)])
                 for a in ("packing", "random") for s in SPINNING}
        rows.append(claim(f"Fig. 3 ({load}): {name} beats DCS, PB and NLS", "blocking < spin", links,
                          setup + "; in both allocations",
                          why=lambda j: "a spin scheme is not clearly slower: " + _links_not_passing(j)))
    gains = {p: below(resp[(p, "packing")], resp[(p, "random")]) for p in TS if p != "gang"}
    avg = [_mean([g[i] for g in gains.values()]) for i in range(len(resp[h]))]
    rows.append(claim(
        f"Fig. 3 ({load}): packing improves response time", "packing < no packing",
        {f"{p.upper()} packing < no packing": g for p, g in gains.items()},
        setup + f"; every time-sharing policy that runs both ways (gang and batch pack only); the gain averaged over "
                f"them is {_mean(avg):.1f} % over the seeds",
        why=lambda j: "some policy is not clearly faster with packing: " + _links_not_passing(j)))
    if load.startswith("a"):
        rows.append(magnitude(
            "Fig. 3 (a): average response-time gain of packing (%)", 25.0, False, avg, setup,
            "“the average performance gain with PACKING in Figure 3 (a) is about 25 % compared to the NO PACKING "
            "case” (§5.2): per seed, the mean over the six time-sharing policies that run both ways of "
            "1 − response(packing)/response(no packing)",
            lambda o: (f"ours − 25 %: {o.describe(' points')}; per policy "
                       + ", ".join(f"{p.upper()} {_mean(g):.1f} %" for p, g in gains.items())
                       + "; in our model the two allocations differ only in where the processes land (random nodes "
                         "below the MPL against the least-loaded contiguous window); our network has no switch "
                         "contention (docs/cosched.md), so locality itself costs nothing")))
    return rows


@check(PAPER, "Fig. 3 (a): heavy load, 100 jobs at 100 s")
def fig3a_checks() -> list[Check]:
    c = fig3(100.0)
    rows = _fig3_rows(c, "a, heavy")
    setup = _setup("Fig. 3 (a): 100 jobs, classes A and B, mean inter-arrival 100 s")
    pairs = _pairs(c)
    b = ("batch", "packing")
    wait = {k: per_seed(c, *k, metric="avg_wait_s") for k in pairs}
    rows.append(claim("Fig. 3 (a): batch (PBS) has the longest wait", "PBS longest wait",
                      {f"PBS > {_label(*k)}": above(wait[b], v) for k, v in wait.items() if k != b},
                      setup + "; mean wait per job",
                      why=lambda j: "a time-sharing policy waits as long: " + _links_not_passing(j)))
    resp = {k: per_seed(c, *k) for k in pairs}
    tot = {k: per_seed(c, *k, metric="total_time_s") for k in pairs}
    worst = [("nls", "random"), ("pb", "random"), b]
    links = {"NLS no packing > PB no packing": above(resp[worst[0]], resp[worst[1]]),
             "PB no packing > PBS": above(resp[worst[1]], resp[b])}
    links.update({f"PBS > {_label(*k)}": above(resp[b], v) for k, v in resp.items() if k not in worst})

    def why_worst(j: dict[str, Ordering]) -> str:
        m = {k: _mean(v) for k, v in resp.items()}
        order = sorted(m, key=m.__getitem__, reverse=True)[:3]
        ratio = _mean(tot[("nls", "packing")]) / _mean(tot[("hybrid", "packing")])
        return ("the links that do not hold: " + _links_not_passing(j) + ". Our three slowest (mean response) are "
                + ", ".join(f"{_label(*k)} {m[k]:.0f} s" for k in order)
                + f". Our NLS loses less to uncoordinated spinning than the paper's: our total running time of NLS "
                  f"over HYBRID (packing) is {ratio:.2f}, Table 3's is {_table3_ratio('NLS', 'HYBRID'):.2f} "
                  "(23,198 s / 16,083 s); our switch and spin costs are uncalibrated assumptions, and calibrating them "
                  "to that ratio (which the notes allow) was not attempted")

    rows.append(claim("Fig. 3 (a): worst NLS no packing, then PB no packing, then PBS", "NLS-np > PB-np > PBS > rest",
                      links, setup + "; mean response time", why=why_worst))
    hyb, gang = resp[("hybrid", "packing")], resp[("gang", "packing")]
    rows.append(claim("Fig. 3 (a): HYBRID below PBS ('300%') and below gang ('20%'), direction only",
                      "HYBRID < PBS, HYBRID < gang", {"HYBRID < PBS": below(hyb, resp[b]), "HYBRID < gang": below(hyb, gang)},
                      setup + f"; '300%' is undefined (notes): direction only; the sizes, for the reader: HYBRID below "
                              f"PBS by {_mean(below(hyb, resp[b])):.1f} % and below gang by "
                              f"{_mean(below(hyb, gang)):.1f} % of their response (paper: '20 %' for gang)",
                      why=lambda j: "HYBRID is not clearly below both: " + _links_not_passing(j)))
    exe = {k: per_seed(c, *k, metric="avg_exec_s") for k in pairs}
    rows.append(claim("Fig. 3 (a): batch has the lowest execution time", "PBS lowest execution",
                      {f"PBS < {_label(*k)}": below(exe[b], v) for k, v in exe.items() if k != b},
                      setup + "; mean execution time per job",
                      why=lambda j: "a time-sharing run is as short: " + _links_not_passing(j)))
    return rows


@check(PAPER, "Fig. 3 (b): light load, 100 jobs at 250 s")
def fig3b_checks() -> list[Check]:
    c = fig3(250.0)
    rows = _fig3_rows(c, "b, light")
    setup = _setup("Fig. 3 (b): 100 jobs, classes A and B, mean inter-arrival 250 s; mean response time")
    batch = per_seed(c, "batch")
    rows.append(claim("Fig. 3 (b): gang, CC and SB outperform PBS", "gang, CC, SB < PBS",
                      {f"{_label(p, 'packing')} < PBS": below(per_seed(c, p), batch) for p in ("gang", "cc", "sb")},
                      setup, why=lambda j: "one of them is not clearly faster than PBS: " + _links_not_passing(j)))
    return rows


# --- Fig. 4, 5, 6 ----------------------------------------------------------------------------


def _why_tie(what: str) -> Callable[[dict[str, Ordering]], str]:
    """The analysis of a HYBRID-against-CC/SB link that does not hold: its numbers, and what
    separates the three in our model."""

    def why(j: dict[str, Ordering]) -> str:
        out = f"{what}: " + _links_not_passing(j)
        if any(("CC" in k or "SB" in k) and "HYBRID" in k for k, o in j.items() if o.status != PASS):
            out += (f". {_blocking_mechanism()}: these are all that separate HYBRID from SB and CC here, and the "
                    "links' means are what they change on this workload; the paper's measured CC/SB costs (GM's "
                    "blocking mode, the spin lost per message on the real NIC) are not in our model")
        return out

    return why


@check(PAPER, "Fig. 4: long-running mix, 20 jobs at 500 s")
def fig4_checks() -> list[Check]:
    c = fig4()
    setup = _setup("Fig. 4: 20 jobs of the `long` mix (sPPM 2,726 s, BlockSolve95 941 s, LU classes B and C; "
                   "Table 1), mean inter-arrival 500 s")
    r = {p: per_seed(c, p) for p in ("hybrid", "cc", "sb", "gang", "batch")}
    links = {"HYBRID < CC": below(r["hybrid"], r["cc"]), "HYBRID < SB": below(r["hybrid"], r["sb"]),
             "CC < gang": below(r["cc"], r["gang"]), "SB < gang": below(r["sb"], r["gang"]),
             "gang < PBS": below(r["gang"], r["batch"])}
    rows = [claim("Fig. 4: HYBRID best, then CC/SB, gang, PBS", "HYBRID < CC/SB < gang < PBS", links,
                  setup + "; mean response time", why=_why_tie("the links that do not hold"))]
    wait = {p: per_seed(c, p, metric="avg_wait_s") for p in r}
    rows.append(claim("Fig. 4: batch suffers the largest wait", "PBS longest wait",
                      {f"PBS > {_label(p, 'packing')}": above(wait["batch"], v) for p, v in wait.items() if p != "batch"},
                      setup + "; mean wait per job",
                      why=lambda j: "a time-sharing policy waits as long: " + _links_not_passing(j)))
    return rows


def _wait_exec(c: cosched.Comparison, policies: tuple[str, ...]) -> str:
    """Mean wait and execution per job of `policies` (means over the seeds), for an analysis."""
    return "; ".join(f"{_label(p, 'packing')} wait {c.mean(p, 'avg_wait_s'):,.0f} s, execution "
                     f"{c.mean(p, 'avg_exec_s'):,.0f} s" for p in policies)


@check(PAPER, "Fig. 5: classes A, B, C, 20 jobs each")
def fig5_checks() -> list[Check]:
    rows = []
    five = ("batch", "gang", "sb", "cc", "hybrid")
    b = fig5("B")
    rb = {p: per_seed(b, p) for p in five}
    rows.append(claim("Fig. 5 class B: PBS has the worst response time", "PBS worst",
                      {f"PBS > {_label(p, 'packing')}": above(rb["batch"], v) for p, v in rb.items() if p != "batch"},
                      _setup("Fig. 5 class B: 20 jobs, mean inter-arrival 100 s (our assumption, notes)"),
                      why=lambda j: ("another policy is as slow: " + _links_not_passing(j) + ". Means over the seeds: "
                                     + _wait_exec(b, ("batch",) + tuple(k.split("> ")[1].split()[0].lower()
                                                                        for k, o in j.items() if o.status != PASS))
                                     + ": the time-sharing schemes wait less than PBS but run longer at MPL 3, and "
                                       "with 20 jobs the one cancels much of the other")))
    c = fig5("C")
    setup_c = _setup("Fig. 5 class C: 20 jobs, mean inter-arrival 100 s (our assumption, notes); memory ignored "
                     "(packing, as the figure's runs); mean response time")
    rc = {p: per_seed(c, p) for p in five}
    h = rc["hybrid"]
    rows.append(claim("Fig. 5 class C: HYBRID below SCore (paper 12%) and PBS ('65%', direction here)",
                      "HYBRID < gang, HYBRID < PBS", {"HYBRID < gang": below(h, rc["gang"]), "HYBRID < PBS": below(h, rc["batch"])},
                      setup_c + f"; sizes for the reader: HYBRID below gang by {_mean(below(h, rc['gang'])):.1f} % "
                                f"(paper about 12 %); the 65 % is checked in the next row",
                      why=lambda j: ("HYBRID is not clearly below both: " + _links_not_passing(j) + ". Means over the "
                                     "seeds: " + _wait_exec(c, ("batch", "hybrid", "gang"))
                                     + "; see the next row for the analysis")))
    w_b, w_h = per_seed(c, "batch", metric="avg_wait_s"), per_seed(c, "hybrid", metric="avg_wait_s")
    x_b, x_h = per_seed(c, "batch", metric="avg_exec_s"), per_seed(c, "hybrid", metric="avg_exec_s")
    rows.append(magnitude(
        "Fig. 5 class C: HYBRID's response-time improvement over PBS (%)", 65.0, False, below(h, rc["batch"]), setup_c,
        "“comparing the result of HYBRID with that of PBS, we get 65 % improvement” (§5.2), read as "
        "1 − response(HYBRID)/response(PBS), the reduction relative to PBS, as the same sentence's “10 % lower than "
        f"that of CC/SB” is stated; the other reading, response(PBS)/response(HYBRID) − 1, is "
        f"{_mean([100 * (x / y - 1) for x, y in zip(rc['batch'], h)]):.1f} % here",
        lambda o: (f"ours − 65 %: {o.describe(' points')}; per seed ours ranges from "
                   f"{min(below(h, rc['batch'])):.1f} % to {max(below(h, rc['batch'])):.1f} %. PBS's mean wait is "
                   f"{_mean(w_b):.0f} s and execution {_mean(x_b):.0f} s, HYBRID's {_mean(w_h):.0f} s and "
                   f"{_mean(x_h):.0f} s: HYBRID's jobs wait less but run longer, sharing each node with up to two "
                   f"other jobs. 65 % needs PBS's mean response at 1/0.35 = 2.9 times HYBRID's; ours is "
                   f"{_mean(rc['batch']) / _mean(h):.2f} times. Likely cause: our time sharing at MPL 3 stretches "
                   "a class C job by more than it saves in queueing on 20 jobs; the paper's execution times under "
                   "HYBRID are in its lost figure, so this cannot be checked against it")))
    rows.append(claim("Fig. 5 class C: HYBRID below CC/SB (paper 10%)", "HYBRID < CC, HYBRID < SB",
                      {"HYBRID < CC": below(h, rc["cc"]), "HYBRID < SB": below(h, rc["sb"])}, setup_c,
                      why=_why_tie("HYBRID is not clearly below CC and SB")))
    a = fig5("A")
    wa = {p: per_seed(a, p, metric="avg_wait_s") for p in five}
    rows.append(claim("Fig. 5 class A: PBS waits longest", "PBS higher waiting time",
                      {f"PBS > {_label(p, 'packing')}": above(wa["batch"], v) for p, v in wa.items() if p != "batch"},
                      _setup("Fig. 5 class A: 20 jobs, mean inter-arrival 100 s; mean wait per job"),
                      why=lambda j: "another policy waits as long: " + _links_not_passing(j)))
    return rows


@check(PAPER, "Fig. 6: three identical class C programs on 16 nodes")
def fig6_checks() -> list[Check]:
    data = fig6()
    n = len(next(iter(data.values()))["hybrid"])
    setup = (f"three copies of the generator's class C 16-process job of each benchmark, packing, MPL 3, the second "
             f"and third submitted at offsets uniform in [0, {FIG6_JITTER_S:g}) s drawn per seed (seeds "
             f"{FIRST_SEED}..{FIRST_SEED + n - 1}; our model has no other random input here); mean execution time of "
             f"the three; the communication-driven schemes and gang, as §5.2 (no NLS); {NO_CALIBRATION}")
    rows = []
    links = {f"{b}: HYBRID < {p.upper()}": below(d["hybrid"], d[p]) for b, d in data.items() for p in FIG6_POLICIES
             if p != "hybrid"}
    rows.append(claim("Fig. 6: HYBRID has the shortest execution time for every benchmark", "HYBRID shortest (all)",
                      links, setup, why=_why_tie("HYBRID is not clearly shortest")))

    def best(d: dict[str, list[float]], group: tuple[str, ...]) -> list[float]:
        return [min(d[p][i] for p in group) for i in range(n)]

    gap = {b: below(best(d, BLOCKING), best(d, ("dcs", "pb"))) for b, d in data.items()}
    rows.append(claim("Fig. 6: blocking schemes beat spin schemes (DCS, PB) on every benchmark", "blocking < spin",
                      {f"{b}: best blocking < best spin": g for b, g in gap.items()},
                      setup + "; per seed, the fastest of HYBRID, CC, SB against the faster of DCS and PB",
                      why=lambda j: "a spin scheme is as fast on some benchmark: " + _links_not_passing(j)))
    big = [b for b in FIG6_BENCHMARKS if b != "IS"]
    order_links = {f"{x} > {y}": [gx - gy for gx, gy in zip(gap[x], gap[y])]
                   for x, y in [("CG", o) for o in big if o != "CG"] + [(x, y) for x in ("MG", "SP") for y in ("BT", "LU")]}
    rows.append(claim("Fig. 6: CG shows the largest blocking/spin difference, BT and LU the smallest",
                      "CG largest; BT, LU smallest", order_links,
                      setup + "; the difference is the previous row's (best spin − best blocking)/best spin, and the "
                              "links compare it between benchmarks in percentage points; IS left out as the paper "
                              "does (its run is too short to show one); mean gaps "
                      + ", ".join(f"{b} {_mean(gap[b]):.1f} %" for b in big),
                      unit=" pp", why=lambda j: "the order of the gaps differs: " + _links_not_passing(j)))
    return rows


# --- Fig. 7, Fig. 8 and energy -----------------------------------------------------------------


@check(PAPER, "Fig. 7: memory-aware allocation, Table 2's configurations")
def fig7_checks() -> list[Check]:
    c = fig7()
    swap = cosched.default_params()["swap_slowdown"]
    setup = _setup("Fig. 7: 20 jobs of Table 2's ten class C configurations (memory from Table 2), mean "
                   "inter-arrival 100 s; no memory-aware = packing (swapping when a node's jobs exceed 900 MB, "
                   f"swap_slowdown {swap:g}, an assumption); mean response time")
    rows = []
    np_ = {p: per_seed(c, p, "packing") for p in TS}
    ma = {p: per_seed(c, p, "memory-aware") for p in TS}
    batch = per_seed(c, "batch")
    tot_nls, tot_batch = per_seed(c, "nls", metric="total_time_s"), per_seed(c, "batch", metric="total_time_s")
    t4 = TABLE4[("no memory-aware", "NLS")][3], TABLE4[("", "BATCH")][3]
    rows.append(claim(
        "Fig. 7 (a): PBS outperforms every scheme without memory-aware allocation", "PBS < all no-memory-aware",
        {f"PBS < {p.upper()} no memory-aware": below(batch, v) for p, v in np_.items()}, setup,
        why=lambda j: ("the links that do not hold: " + _links_not_passing(j) + f". Our swapping cost is an assumption "
                       f"(a node over 900 MB computes swap_slowdown = {swap:g} times slower); the paper's disk swapping "
                       f"was far costlier: Table 4's NLS without memory-aware allocation ran {t4[0]:,} s against PBS's "
                       f"{t4[1]:,} s ({t4[0] / t4[1]:.2f} times), ours {_mean(tot_nls):,.0f} s against "
                       f"{_mean(tot_batch):,.0f} s ({_mean(tot_nls) / _mean(tot_batch):.2f} times). Raising "
                       "swap_slowdown until PBS wins would be tuning the input to the outcome, so it was not done")))
    gains = {p: below(ma[p], np_[p]) for p in TS}
    avg = [_mean([g[i] for g in gains.values()]) for i in range(len(batch))]
    t4_gain = {s: 100 * (1 - TABLE4[("memory-aware", s)][3] / TABLE4[("no memory-aware", s)][3])
               for s in ("NLS", "CC/SB", "HYBRID", "GANG")}
    rows.append(magnitude(
        "Fig. 7 (a): average response-time gain of memory-aware allocation (%, paper: over 35)", 35.0, True, avg, setup,
        "“the average performance gain with the memory-aware allocation scheme is over 35 % compared to the no "
        "memory-aware allocation” (§5.3), as §5.2's “average performance gain with PACKING”: per seed, the mean over "
        "the seven time-sharing schemes of 1 − response(memory-aware)/response(not)",
        lambda o: (f"ours − 35 %: {o.describe(' points')}; per scheme "
                   + ", ".join(f"{p.upper()} {_mean(g):.1f} %" for p, g in gains.items())
                   + f". The gain is what swapping costs, and our swapping is an assumption (swap_slowdown = {swap:g} "
                     "while a node's jobs exceed 900 MB, no disk). The paper's only other numbers on it are Table 4's "
                     "total running times (makespans, not responses), which fall with memory-aware allocation by "
                   + ", ".join(f"{s} {g:.0f} %" for s, g in t4_gain.items())
                   + " (its PB and DCS rows are swapped, left out). Raising swap_slowdown towards 35 % would be "
                     "tuning the input to the outcome")))
    rows.append(claim(
        "Fig. 7 (a): with memory-aware allocation HYBRID is best and below PBS (paper: 20%)", "HYBRID best, < PBS",
        {**{f"HYBRID < {p.upper()} memory-aware": below(ma["hybrid"], v) for p, v in ma.items() if p != "hybrid"},
         "HYBRID memory-aware < PBS": below(ma["hybrid"], batch)},
        setup + f"; HYBRID below PBS by {_mean(below(ma['hybrid'], batch)):.1f} % (paper: 20 %)",
        why=_why_tie("HYBRID is not clearly best")))
    speed = {p: [x / y for x, y in zip(np_[p], ma[p])] for p in TS}
    others = [p for p in TS if p not in BLOCKING]
    rows.append(claim(
        "Fig. 7 (b): memory-aware allocation helps the blocking schemes (CC/SB, HYBRID) most",
        "speed-up of CC/SB, HYBRID highest",
        {f"{b.upper()} > {o.upper()}": [x - y for x, y in zip(speed[b], speed[o])] for b in BLOCKING for o in others},
        setup + "; speed-up = response without memory-aware / with, per seed; links in speed-up difference; mean "
                "speed-ups " + _fmt({p.upper(): _mean(v) for p, v in speed.items()}, 3),
        unit="", why=lambda j: (
            "the links that do not hold: " + _links_not_passing(j)
            + ". The paper's cause is that blocking processes are switched out before their quantum ends and so swap "
              f"more (§5.3); our swapping model is a uniform compute slowdown (swap_slowdown = {swap:g}) on an "
              "over-committed node, with no per-switch paging cost, so it has no way to favour blocking schemes")))
    return rows


@check(PAPER, "Fig. 8 and Table 3: energy on our simulation")
def energy_checks() -> list[Check]:
    rows = []
    heavy = fig3(100.0)
    setup = _setup("Table 3's workload (Fig. 3 (a): 100 jobs at 100 s); energy by §5.4's formula, " + X_NOTE)
    pairs = _pairs(heavy)
    e = {k: per_seed(heavy, *k, metric="energy_j") for k in pairs}
    resp = {k: per_seed(heavy, *k) for k in pairs}
    tot = {k: per_seed(heavy, *k, metric="total_time_s") for k in pairs}
    h, b = ("hybrid", "packing"), ("batch", "packing")
    rows.append(claim("Table 3: HYBRID's performance-energy ratio better than PBS's (paper '60%', direction only)",
                      "HYBRID better", {"HYBRID energy < PBS": below(e[h], e[b]), "HYBRID response < PBS": below(resp[h], resp[b])},
                      setup + "; 'performance-energy ratio' is undefined: we check that HYBRID is lower in both "
                              "energy and mean response time",
                      why=lambda j: "HYBRID is not clearly lower in both: " + _links_not_passing(j)))
    last = [max(j["submit_s"] for j in json.loads(cosched.nas_workload(100, 100.0, s, ["A", "B"]).to_json())["jobs"])
            for s in heavy.setup["seeds"]]
    rows.append(claim(
        "Table 3: PBS consumes the most energy", "PBS highest energy",
        {f"PBS > {_label(*k)}": above(e[b], v) for k, v in e.items() if k != b}, setup,
        why=lambda j: ("the links that do not hold: " + _links_not_passing(j) + ". Energy is (B + X·U)·N·T with T from "
                       f"the first arrival to the last completion: our T is {_mean(tot[b]):,.0f} s for PBS and "
                       + ", ".join(f"{_label(*k)} {_mean(v):,.0f} s" for k, v in tot.items() if k[0] in ('nls', 'pb'))
                       + f", against a last arrival at {_mean(last):,.0f} s on average, so T and hence the idle energy "
                         "differ little between policies and the spin schemes' busy power decides; the paper's PBS ran "
                         f"{TABLE3[('', 'BATCH')][3]:,} s against HYBRID's {TABLE3[('packing', 'HYBRID')][3]:,} s, a "
                         "backlog our mix of classes A and B (the notes') does not build")))
    by_class = {cl: fig5(cl) for cl in "ABC"}
    adv = {cl: below(per_seed(c, "hybrid", metric="energy_j"), per_seed(c, "batch", metric="energy_j"))
           for cl, c in by_class.items()}
    tot_c = {p: _mean(per_seed(by_class["C"], p, metric="total_time_s")) for p in ("batch", "hybrid")}
    t_h, t_b = TABLE4[("memory-aware", "HYBRID")][3], TABLE4[("", "BATCH")][3]
    rows.append(claim(
        "Fig. 8: the energy advantage of HYBRID over PBS grows from class A to C", "grows A → B → C",
        {"B > A": [y - x for x, y in zip(adv["A"], adv["B"])], "C > B": [y - x for x, y in zip(adv["B"], adv["C"])]},
        _setup("Fig. 8: the Fig. 5 runs (20 jobs per class at 100 s, our assumption)")
        + "; advantage = 1 − energy(HYBRID)/energy(PBS) per seed, mean " + _fmt({k: _mean(v) for k, v in adv.items()})
        + " %; links in percentage points", unit=" pp",
        why=lambda j: ("the links that do not hold: " + _links_not_passing(j)
                       + f". In class C our HYBRID runs finish the 20 jobs in T = {tot_c['hybrid']:,.0f} s against PBS's "
                         f"{tot_c['batch']:,.0f} s (mean over seeds, {tot_c['hybrid'] / tot_c['batch']:.2f} times): the "
                         "longer T costs idle energy at every node. The time-sharing run is longer because at MPL 3 "
                         "each job is stretched by its neighbours while PBS's jobs run alone at full speed; on the "
                         "paper's cluster it was shorter: Table 4 (20 class C jobs of Table 2's mix, memory-aware) "
                         f"has HYBRID's T at {t_h:,} s against PBS's {t_b:,} s ({t_h / t_b:.2f} times)")))
    cc = by_class["C"]
    ec = {p: per_seed(cc, p, metric="energy_j") for p in ("hybrid", "cc", "sb", "gang")}
    rows.append(claim("Fig. 8 class C: HYBRID lowest energy, then CC/SB, then gang", "HYBRID < CC/SB < gang",
                      {"HYBRID < CC": below(ec["hybrid"], ec["cc"]), "HYBRID < SB": below(ec["hybrid"], ec["sb"]),
                       "CC < gang": below(ec["cc"], ec["gang"]), "SB < gang": below(ec["sb"], ec["gang"])},
                      _setup("Fig. 8 class C: 20 jobs at 100 s; energy by §5.4's formula"),
                      why=_why_tie("the links that do not hold")))
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
        comp.plot(path, title=title + f" ({len(comp.setup['seeds'])} seeds)")
        out.append(path)
    return out
