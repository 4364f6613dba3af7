"""Paper 003 (Wu, Yeh, Liu, "Efficient Multiple Multicast on Heterogeneous Network of Workstations").

* §6, Figs. 4 and 5: the worked example. Every printed selection sequence is compared with ours
  (exact), with ECF's printed completion times, with WR's virtual times of the text and with the
  ECFP preemption the text describes; each schedule is also replayed on the engine
  (contention-free), which must give the scheduler's completion time.
* §7, Figs. 6-12: the drawn curves are lost, so we simulate what §7 describes (mean completion
  time and competitive ratio = completion / lower bound over ``runs`` random configurations per
  point) and check the claims the text makes, as orderings or as the numbers the text prints
  (the 2x and 2.5x bounds).  ``runs`` is 100 by default; set ``COMMAWARE_003_RUNS`` or pass
  ``runs=`` to :func:`section7_checks`, :func:`table` or :func:`plot`.

Inputs we assume (the paper does not print them; each check's ``note`` repeats what it uses):

* the generator of §7 (``commaware.multicast.generate``): S_c, R_c uniform in 80-400 us, S_m, R_m
  uniform in 0.0001-0.01 us/byte, one homogeneous network per instance (fast = 1 Gbps, slow =
  155 Mbps) or, for Fig. 6, each pair's link drawn from the two (mixed), small = 1 KB = 1,024 B, large drawn from {1, 1.5} MB (MB = 2^20 B), mixed = each
  message small or large with probability 1/2;
* Fig. 6 (single broadcast; its caption names neither network nor sizes): §7's general setting,
  each pair's link 1 Gbps or 155 Mbps at random (the notes make only Figs. 7-10 homogeneous),
  with 1 KB messages and with 1-1.5 MB ones, 8-64 nodes, each configuration broadcast from every
  node in turn (as §7.1 says) and averaged;
* Figs. 7-8 (all-to-all broadcast): 8-80 nodes in steps of 8 (Table 1's node counts);
* Figs. 9-12 (multiple multicast, 64 nodes): the number of sources of Table 2 (4-64) on the x
  axis, sources drawn at random, each with a uniformly random number (1-63) of random
  destinations;
* the lower bound is the corrected one of the issue notes (relays only through the multicast's
  own nodes, receives in release order), a valid bound (never above the optimum).  It equals
  eq. (4)'s bound for 1 KB all-to-all broadcast (equal sizes, every node in every multicast);
  with the {1, 1.5} MB draw, mixed sizes or multicasts to subsets of the nodes it can differ
  from eq. (4)'s (which is not a valid bound with unequal sizes), and so can our competitive
  ratios from the paper's.

Runtime: the full grid (12 settings, 92 points, 100 runs each) takes about 75 s on this 2-core
machine with both cores free (113 s while another build was running), so the node-count grid
was not reduced; the analysis of the Figs. 9(c), 10(c) rows re-runs those two settings with tied
overheads, a few seconds more. The configurations run on a thread pool (the schedulers release
the GIL).

A claim the paper's own model contradicts (``paper_inconsistent``): RRS worse than EAF and RR
for a single broadcast (Fig. 6). Every waiting receiver of a broadcast is available at time 0, so
EAF and RR take the receivers in index order and RRS in a uniformly random one; with nodes drawn
independently from one distribution, RRS on a configuration is EAF on the same configuration with
its nodes renumbered, so the three have one distribution of completion times. The row asserts
that identity, schedule by schedule.

Claims our simulation contradicts are labelled ``not_reproduced``: the Rust schedulers and bound
agree with an independent naive re-implementation (218 random §7 instances), the generator draws
what §7 states, and each row's note says what we assumed, what we tried and the likely cause
(``extra["not_reproduced"]`` holds the three parts): the ten non-FEF algorithms similar for a
broadcast (Fig. 6: with per-pair link speeds and 1-1.5 MiB messages EAF and RR trail ECF by up to
1.30x; on a homogeneous network the claim holds); RRS worse than ECF and WR for a broadcast (Fig.
6: at about half the points RRS is up to 2% below the larger of the two; in a broadcast RRS is
EAF renumbered); RRS worse than ECF, WR, EAF, RR for small all-to-all (Fig. 7(a): ours is the
best non-preemptive, on the slow network too); all eight of ECF, WR, EAF, RR and their preemptive
versions within twice the bound (Fig. 7(a),(b): EAF at 2.1 at 8 nodes only, robust over seeds; it
waits for busy senders); ECF or WR best non-preemptive for large multiple multicast (Figs. 9(c),
10(c): RRS or EAF, by up to 7%, at 4-24 sources; with each node's receive overheads equal to its
send overheads, computed in the row, ECF is best everywhere); the five preemptive algorithms
comparable in Figs. 9-10 (ECFP up to 1.34x behind with 1 KB messages and few sources, inherited
from ECF's earliest-completion rule, which defers the nodes with the most receives).
"""

from __future__ import annotations

import math
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commaware import multicast as m
from commaware.reproduce.runner import FAIL, NOT_REPRODUCED, PASS, Check, check, quick, report

PAPER = "003"
RUNS_ENV = "COMMAWARE_003_RUNS"
DEFAULT_RUNS = 100
QUICK_RUNS = 20

NON_PREEMPTIVE = ["fef", "ecf", "wr", "eaf", "rr", "rrs"]
PREEMPTIVE = ["ecfp", "wrp", "eafp", "rrp", "rrsp"]
ALGS = NON_PREEMPTIVE + PREEMPTIVE
PREEMPTIVE_OF = {"ecf": "ecfp", "wr": "wrp", "eaf": "eafp", "rr": "rrp", "rrs": "rrsp"}
LABEL = {a: a.upper() for a in ALGS}

# ---------------------------------------------------------------------------------------------
# §6: the worked example of Figs. 4 and 5
# ---------------------------------------------------------------------------------------------

#: Fig. 4 / Fig. 5 instance: (S_c, R_c) = (1,3),(1,3),(2,6),(2,6), no per-byte cost, no
#: transmission time, multicasts 0->{1,2}, 1->{2,3}, 2->{0,1,3} (inferred from the figure text).
FIG4_INSTANCE: dict[str, Any] = {
    "nodes": [
        {"send_const": s, "send_per_byte": 0.0, "recv_const": r, "recv_per_byte": 0.0}
        for s, r in [(1, 3), (1, 3), (2, 6), (2, 6)]
    ],
    "transmission": {"default": 0.0},
    "multicasts": [
        {"source": 0, "destinations": [1, 2], "bytes": 1},
        {"source": 1, "destinations": [2, 3], "bytes": 1},
        {"source": 2, "destinations": [0, 1, 3], "bytes": 1},
    ],
}

#: The receiver order of the printed RRS / RRSP sequences (their random draws).
RRS_RECEIVERS = [1, 1, 0, 3, 2, 3, 2]

#: Sequences (sender, receiver, source) printed in §6.
FIG4 = {
    "fef": ("4(a)", [(0, 1, 0), (2, 0, 2), (0, 1, 2), (0, 2, 0), (1, 2, 1), (0, 3, 2), (1, 3, 1)]),
    "ecf": ("4(b)", [(0, 1, 0), (2, 0, 2), (2, 1, 2), (0, 2, 0), (0, 3, 2), (1, 2, 1), (1, 3, 1)]),
    "wr": ("4(c)", [(2, 0, 2), (2, 1, 2), (0, 2, 0), (0, 3, 2), (0, 1, 0), (1, 2, 1), (1, 3, 1)]),
    "eaf": ("4(d)", [(2, 0, 2), (2, 1, 2), (2, 3, 2), (0, 2, 0), (0, 1, 0), (1, 2, 1), (1, 3, 1)]),
    "rr": ("4(e)", [(2, 0, 2), (2, 1, 2), (0, 2, 0), (0, 3, 2), (0, 1, 0), (1, 2, 1), (1, 3, 1)]),
    "rrs": ("4(f)", [(0, 1, 0), (2, 1, 2), (2, 0, 2), (2, 3, 2), (0, 2, 0), (1, 3, 1), (1, 2, 1)]),
}
FIG5 = {
    "ecfp": ("5(a)", [(0, 1, 0), (2, 0, 2), (2, 1, 2), (1, 3, 1), (0, 2, 0), (0, 3, 2), (1, 2, 1)]),
    "wrp": ("5(b)", [(2, 0, 2), (0, 1, 0), (0, 2, 0), (1, 3, 1), (0, 1, 2), (1, 2, 1), (0, 3, 2)]),
    "eafp": ("5(c)", [(2, 0, 2), (0, 1, 0), (1, 3, 1), (0, 2, 0), (0, 1, 2), (0, 3, 2), (1, 2, 1)]),
    "rrp": ("5(d)", [(2, 0, 2), (0, 1, 0), (0, 2, 0), (1, 3, 1), (0, 1, 2), (1, 2, 1), (0, 3, 2)]),
    "rrsp": ("5(e)", [(0, 1, 0), (2, 1, 2), (2, 0, 2), (1, 3, 1), (0, 2, 0), (0, 3, 2), (1, 2, 1)]),
}
#: ECF's completion times printed in §6 for the Fig. 4(b) sequence.
ECF_COMPLETIONS = [4, 5, 7, 12, 13, 18, 19]


def fig4_instance() -> m.Instance:
    return m.load_instance(FIG4_INSTANCE)


def fig4_schedule(algorithm: str) -> m.Schedule:
    """Our schedule of the worked example (RRS / RRSP with the printed receiver order)."""
    receivers = RRS_RECEIVERS if algorithm in ("rrs", "rrsp") else None
    return m.schedule(fig4_instance(), algorithm, receivers=receivers)


def _seq(triples: list[tuple[int, int, int]]) -> str:
    return ", ".join(f"({i}, {j}, {k})" for i, j, k in triples)


def _sequence_checks(printed: dict[str, tuple[str, list[tuple[int, int, int]]]]) -> list[Check]:
    inst = fig4_instance()
    rows = []
    for alg, (panel, expected) in printed.items():
        s = fig4_schedule(alg)
        ours = [tuple(t) for t in s.triples()]
        forced = " (receiver order 1,1,0,3,2,3,2 forced: the paper's random draws)" if alg in ("rrs", "rrsp") else ""
        rows.append(Check(PAPER, f"Fig. {panel} {LABEL[alg]} sequence", _seq(expected), _seq(ours), 0,
                          ours == expected, note=f"(sender, receiver, source) in selection order{forced}"))
        err = m.check(inst, s)
        makespan = m.execute(inst, s, model="contention_free").makespan
        rows.append(Check(PAPER, f"Fig. {panel} {LABEL[alg]} engine replay = completion", s.completion_time,
                          makespan, 1e-9, err is None and abs(makespan - s.completion_time) <= 1e-9 * max(1.0, s.completion_time),
                          note="paper_value is our scheduler's completion time (the paper prints none for this "
                               "algorithm); ours is the engine's contention-free makespan"
                               + ("" if err is None else f"; validator: {err}")))
    return rows


@check(PAPER, "§6 Fig. 4, worked example")
def fig4_checks() -> list[Check]:
    rows = _sequence_checks(FIG4)
    s = fig4_schedule("ecf")
    ours = [e["complete"] for e in s.to_dict()["sequence"]]
    rows.append(Check(PAPER, "Fig. 4(b) ECF completion times", ", ".join(map(str, ECF_COMPLETIONS)),
                      ", ".join(f"{c:g}" for c in ours), 0, ours == ECF_COMPLETIONS,
                      note="completion time of each selected task, eq. (6)"))
    # WR's virtual times quoted in §6: W_{0,1} = 5 and W_{3,1} = 12.  The core does not expose
    # W, so recompute eqs. (8)-(9) along our WR sequence (a check of the sequence and of the
    # paper's arithmetic together).
    w = _wr_virtual_times(FIG4_INSTANCE, fig4_schedule("wr").triples())
    ours_w = (w[(0, 2)], w[(3, 2)])
    rows.append(Check(PAPER, "Fig. 4(c) WR virtual times W(0,1), W(3,1)", "5, 12", f"{ours_w[0]:g}, {ours_w[1]:g}", 0,
                      ours_w == (5.0, 12.0),
                      note="eqs. (8)-(9) recomputed along our WR sequence (the core keeps W internal)"))
    return rows


def _wr_virtual_times(inst: dict[str, Any], triples: list[tuple[int, int, int]]) -> dict[tuple[int, int], float]:
    """W of each receive (receiver, source) by eqs. (8)-(9), following a WR selection sequence."""
    nodes = inst["nodes"]
    x = inst["transmission"]["default"]
    size = {mc["source"]: mc["bytes"] for mc in inst["multicasts"]}
    at: dict[tuple[int, int], float] = {}  # (node, source) -> W when node received source's message
    last: dict[int, float] = {}
    for i, j, k in triples:
        lk = size[k]
        send = nodes[i]["send_const"] + nodes[i]["send_per_byte"] * lk
        recv = nodes[j]["recv_const"] + nodes[j]["recv_per_byte"] * lk
        arrival = (0.0 if i == k else at[(i, k)]) + send + x * lk  # eq. (9)
        w = max(last.get(j, 0.0), arrival) + recv  # eq. (8)
        at[(j, k)] = w
        last[j] = w
    return at


@check(PAPER, "§6 Fig. 5, preemptive example")
def fig5_checks() -> list[Check]:
    rows = _sequence_checks(FIG5)
    # §6: "the ECFP scheme preempts the receive task (0, 1, 0) and utilizes the waiting time to
    # schedule the send task (1, 3, 1)": in P1's task list the send precedes that receive.
    tasks = fig4_schedule("ecfp").to_dict()["tasks"]["1"]
    order = [(t["kind"], t["peer"], t["source"]) for t in tasks]
    ok = ("send", 3, 1) in order and ("recv", 0, 0) in order and order.index(("send", 3, 1)) < order.index(("recv", 0, 0))
    rows.append(Check(PAPER, "Fig. 5(a) ECFP: send (1,3,1) preempts recv (0,1,0) in P1", "send 1->3 [m1] before recv 0->1 [m0]",
                      " < ".join(f"{k} {p}[m{s}]" for k, p, s in order), None, ok,
                      note="P1's task list in order (kind, peer, message source)"))
    return rows


# ---------------------------------------------------------------------------------------------
# §7: Figs. 6-12
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One figure setting: a family of curves over `points` (node counts or source counts)."""

    key: str
    figures: str
    title: str
    pattern: str  # broadcast | all_to_all | random
    network: str  # fast | slow | mixed (each pair's link drawn)
    sizes: str  # small | large | mixed
    points: tuple[int, ...]
    nodes: int | None = None  # fixed node count (multiple multicast); None: points are nodes

    @property
    def xlabel(self) -> str:
        return "number of sources (64 nodes)" if self.nodes else "number of nodes"


ALL_TO_ALL_NODES = (8, 16, 24, 32, 40, 48, 56, 64, 72, 80)
BROADCAST_NODES = (8, 16, 32, 64)
MM_NODES = 64
MM_SOURCES = (4, 8, 16, 24, 32, 48, 56, 64)

SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in [
        Setting("fig6-small", "Fig. 6", "single broadcast, links 1 Gbps or 155 Mbps per pair, 1 KB (assumed)",
                "broadcast", "mixed", "small", BROADCAST_NODES),
        Setting("fig6-large", "Fig. 6", "single broadcast, links 1 Gbps or 155 Mbps per pair, 1-1.5 MB (assumed)",
                "broadcast", "mixed", "large", BROADCAST_NODES),
        Setting("fig7-small", "Fig. 7(a),(b)", "all-to-all broadcast, fast network (1 Gbps), 1 KB", "all_to_all", "fast",
                "small", ALL_TO_ALL_NODES),
        Setting("fig7-large", "Fig. 7(c),(d)", "all-to-all broadcast, fast network (1 Gbps), 1-1.5 MB", "all_to_all",
                "fast", "large", ALL_TO_ALL_NODES),
        Setting("fig8-small", "Fig. 8(a),(b)", "all-to-all broadcast, slow network (155 Mbps), 1 KB", "all_to_all", "slow",
                "small", ALL_TO_ALL_NODES),
        Setting("fig8-large", "Fig. 8(c),(d)", "all-to-all broadcast, slow network (155 Mbps), 1-1.5 MB", "all_to_all",
                "slow", "large", ALL_TO_ALL_NODES),
        Setting("fig9-small", "Figs. 9(a),(b), 11(a),(b)", "multiple multicast, 64 nodes, fast network, 1 KB", "random",
                "fast", "small", MM_SOURCES, MM_NODES),
        Setting("fig9-large", "Figs. 9(c),(d), 11(c),(d)", "multiple multicast, 64 nodes, fast network, 1-1.5 MB",
                "random", "fast", "large", MM_SOURCES, MM_NODES),
        Setting("fig9-mixed", "Figs. 9(e),(f), 11(e),(f)", "multiple multicast, 64 nodes, fast network, mixed sizes",
                "random", "fast", "mixed", MM_SOURCES, MM_NODES),
        Setting("fig10-small", "Figs. 10(a),(b), 12(a),(b)", "multiple multicast, 64 nodes, slow network, 1 KB",
                "random", "slow", "small", MM_SOURCES, MM_NODES),
        Setting("fig10-large", "Figs. 10(c),(d), 12(c),(d)", "multiple multicast, 64 nodes, slow network, 1-1.5 MB",
                "random", "slow", "large", MM_SOURCES, MM_NODES),
        Setting("fig10-mixed", "Figs. 10(e),(f), 12(e),(f)", "multiple multicast, 64 nodes, slow network, mixed sizes",
                "random", "slow", "mixed", MM_SOURCES, MM_NODES),
    ]
}


def default_runs() -> int:
    """Random configurations per point: $COMMAWARE_003_RUNS, else 100 (20 under ``--quick``,
    which gives every §7 claim the same status as 100 runs do)."""
    value = os.environ.get(RUNS_ENV, "").strip()
    if not value:
        return QUICK_RUNS if quick() else DEFAULT_RUNS
    try:
        runs = int(value)
    except ValueError:
        runs = 0
    if runs < 1:
        from commaware import _core
        from commaware._errors import input_error

        raise input_error(_core.OptionsError, RUNS_ENV, "", f"must be a positive integer, got {value[:40]!r}")
    return runs


def _seed(base: int, x: int, run: int) -> int:
    return base * 1_000_003 + x * 10_007 + run


def _run_point(setting: Setting, x: int, run: int, seed: int) -> tuple[dict[str, float], dict[str, float], float]:
    """One random configuration: completion and completion/bound per algorithm, and the bound.

    For a single broadcast (§7.1) the configuration is broadcast from every node in turn and the
    three quantities are averaged over the N broadcasts."""
    s = _seed(seed, x, run)
    if setting.pattern == "broadcast":
        instances = [m.generate(x, "broadcast", setting.sizes, setting.network, source=src, seed=s) for src in range(x)]
    elif setting.pattern == "all_to_all":
        instances = [m.generate(x, "all_to_all", setting.sizes, setting.network, seed=s)]
    else:
        instances = [m.generate(setting.nodes or x, "random", setting.sizes, setting.network, sources=x, seed=s)]
    comp = dict.fromkeys(ALGS, 0.0)
    ratio = dict.fromkeys(ALGS, 0.0)
    bound = 0.0
    for inst in instances:
        lb = inst.lower_bound()
        bound += lb
        for alg in ALGS:
            c = m.schedule(inst, alg, seed=s).completion_time
            comp[alg] += c
            ratio[alg] += c / lb
    k = len(instances)
    return {a: v / k for a, v in comp.items()}, {a: v / k for a, v in ratio.items()}, bound / k


_CACHE: dict[tuple[str, int, int], dict[str, Any]] = {}


def _cost(setting: Setting, x: int) -> float:
    n = setting.nodes or x
    if setting.pattern == "broadcast":
        return float(n) ** 3
    if setting.pattern == "all_to_all":
        return float(n) ** 3.3
    return float(n) ** 2.3 * x


def compute(keys: list[str] | None = None, runs: int | None = None, seed: int = 0,
            workers: int | None = None) -> dict[str, dict[str, Any]]:
    """Simulate the settings `keys` (all by default); results are cached per (key, runs, seed).

    The schedulers release the GIL, so configurations run on `workers` threads (all cores)."""
    runs = default_runs() if runs is None else int(runs)
    if runs < 1:
        raise ValueError("runs must be >= 1")
    keys = list(SETTINGS) if keys is None else list(keys)
    todo = [k for k in keys if (k, runs, seed) not in _CACHE]
    if todo:
        jobs = [(SETTINGS[k], x, r) for k in todo for x in SETTINGS[k].points for r in range(runs)]
        jobs.sort(key=lambda j: -_cost(j[0], j[1]))  # largest first: better load balance
        started = time.perf_counter()
        detail = "configurations"
        report(0, len(jobs), detail)
        with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
            futures = [pool.submit(_run_point, st, x, r, seed) for st, x, r in jobs]
            for done, _ in enumerate(as_completed(futures), 1):
                report(done, len(jobs), detail)  # in this thread: the caller's progress display
            results = [f.result() for f in futures]
        elapsed = time.perf_counter() - started
        per: dict[tuple[str, int], list] = {}
        for (st, x, _), res in zip(jobs, results):
            per.setdefault((st.key, x), []).append(res)
        for k in todo:
            st = SETTINGS[k]
            tab: dict[str, Any] = {
                "setting": k, "figures": st.figures, "title": st.title, "xlabel": st.xlabel,
                "x": list(st.points), "runs": runs, "seed": seed, "pattern": st.pattern, "network": st.network,
                "sizes": st.sizes, "nodes": st.nodes,
                "mean_completion_s": {a: [] for a in ALGS}, "mean_ratio": {a: [] for a in ALGS},
                "max_ratio": {a: [] for a in ALGS}, "mean_lower_bound_s": [],
                "compute_seconds_all_settings": elapsed,
            }
            for x in st.points:
                rs = per[(k, x)]
                for a in ALGS:
                    tab["mean_completion_s"][a].append(statistics.fmean(r[0][a] for r in rs))
                    tab["mean_ratio"][a].append(statistics.fmean(r[1][a] for r in rs))
                    tab["max_ratio"][a].append(max(r[1][a] for r in rs))
                tab["mean_lower_bound_s"].append(statistics.fmean(r[2] for r in rs))
            _CACHE[(k, runs, seed)] = tab
    return {k: _CACHE[(k, runs, seed)] for k in keys}


def table(key: str, runs: int | None = None, seed: int = 0) -> dict[str, Any]:
    """The data of one figure setting (what :func:`plot` draws).

    ``x``: node counts (or source counts on 64 nodes); per algorithm ``mean_completion_s`` (mean
    completion time, seconds), ``mean_ratio`` (mean of completion / lower bound), ``max_ratio``
    (largest ratio among the runs); ``mean_lower_bound_s``; ``runs`` configurations per point."""
    if key not in SETTINGS:
        raise KeyError(f"unknown setting {key!r} (known: {', '.join(SETTINGS)})")
    return compute([key], runs=runs, seed=seed)[key]


def plot(outdir: str | Path, runs: int | None = None, seed: int = 0, keys: list[str] | None = None) -> list[Path]:
    """Write one PNG per figure setting (mean completion time and competitive ratio vs x for
    every algorithm, non-preemptive solid, preemptive dashed in the same colour, with the lower
    bound); returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tables = compute(keys, runs=runs, seed=seed)
    paths = []
    for key, tab in tables.items():
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.6))
        x = tab["x"]
        for a in ALGS:
            style = "-" if a in NON_PREEMPTIVE else "--"
            base = a if a in NON_PREEMPTIVE else a[:-1]  # a preemptive version shares its base's colour
            color = f"C{NON_PREEMPTIVE.index(base)}"
            ax1.plot(x, [1e3 * v for v in tab["mean_completion_s"][a]], style, marker=".", color=color, label=LABEL[a])
            ax2.plot(x, tab["mean_ratio"][a], style, marker=".", color=color, label=LABEL[a])
        ax1.plot(x, [1e3 * v for v in tab["mean_lower_bound_s"]], ":", color="black", lw=2, label="lower bound")
        ax2.axhline(1.0, color="black", ls=":", lw=1)
        ax1.set_yscale("log")
        ax2.set_yscale("log")
        ax1.set_xlabel(tab["xlabel"])
        ax2.set_xlabel(tab["xlabel"])
        ax1.set_ylabel("mean completion time (ms)")
        ax2.set_ylabel("mean competitive ratio (completion / lower bound)")
        ax1.legend(fontsize=7, ncol=2)
        fig.suptitle(f"paper 003 {tab['figures']}: {tab['title']} ({tab['runs']} runs per point)", fontsize=10)
        fig.tight_layout()
        path = outdir / f"paper003-{key}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    if keys is None:
        paths.extend(plot_fig4_gantts(outdir))
    return paths


def plot_fig4_gantts(outdir: str | Path) -> list[Path]:
    """Gantt charts of the §6 worked example's ECF and WR schedules, replayed on the engine
    (each node's send and receive overheads against time)."""
    from commaware.gantt import write_gantt

    paths = []
    for alg in ("ecf", "wr"):
        sched = fig4_schedule(alg)
        path = Path(outdir) / f"paper003-fig4-{alg}-gantt.svg"
        write_gantt(m.execute(fig4_instance(), sched), path,
                    title=f"paper 003 Fig. 4: {LABEL[alg]} schedule of the worked example, "
                          f"completion {sched.completion_time:g} time units")
        paths.append(path)
    return paths


# ---------------------------------------------------------------------------------------------
# §7 claims
# ---------------------------------------------------------------------------------------------

#: Our reading of "comparable" / "similar" (the paper gives no number): the largest mean
#: completion of the group is within this factor of the smallest, at every point.
COMPARABLE = 1.25

_GENERATOR = ("generator of §7: S_c, R_c ~ U(80, 400) us, S_m, R_m ~ U(0.0001, 0.01) us/B, one homogeneous "
              "network per instance (fast 1 Gbps, slow 155 Mbps) or each pair's link 1 Gbps or 155 Mbps with "
              "p = 1/2 (mixed), small = 1,024 B, large from {1, 1.5} MiB, "
              "mixed = each message small or large with p = 1/2")


def _inputs(keys: list[str], runs: int) -> str:
    parts = []
    for k in keys:
        st = SETTINGS[k]
        xs = f"{st.points[0]}-{st.points[-1]} " + ("sources on 64 nodes" if st.nodes else "nodes")
        parts.append(f"{k}: {st.pattern}, {st.network}, {st.sizes}, {xs} ({', '.join(map(str, st.points))})")
    return f"{runs} random configurations per point; " + "; ".join(parts) + "; " + _GENERATOR


def _comp(tab: dict[str, Any], alg: str) -> list[float]:
    return tab["mean_completion_s"][alg]


def _pt(tab: dict[str, Any], i: int) -> str:
    return f"{tab['setting']}@{tab['x'][i]}"


def _fmt(v: float) -> str:
    return f"{v:.3g}"


@dataclass(frozen=True)
class Unreproduced:
    """Why a claim that our simulation does not give is labelled ``not_reproduced``, not ``fail``:
    what we assumed, what we tried (never tuning inputs to the outcome) and the likely cause."""

    assumed: str
    tried: str
    cause: str

    def text(self) -> str:
        return f"Not reproduced. Assumed: {self.assumed} Tried: {self.tried} Likely cause: {self.cause}"


def _row(name: str, claim: str, ours: str, passed: bool, note: str, *, paper_value: Any = None,
         tolerance: float | None = None, extra: dict | None = None, paper_inconsistent: bool = False,
         unreproduced: Unreproduced | None = None) -> Check:
    """A §7 row: ``pass`` when the claim holds; when it does not, ``not_reproduced`` if the
    row carries the analysis (`unreproduced`, added to the note), else ``fail``."""
    extra = dict(extra or {})
    if passed:
        status = PASS
    elif unreproduced is not None:
        status = NOT_REPRODUCED
        note = f"{note} {unreproduced.text()}"
        extra["not_reproduced"] = {"assumed": unreproduced.assumed, "tried": unreproduced.tried,
                                   "likely_cause": unreproduced.cause}
    else:
        status = FAIL
    return Check(PAPER, name, claim if paper_value is None else paper_value, ours, tolerance, bool(passed),
                 note=note, paper_inconsistent=paper_inconsistent, extra=extra, status=status)


def _fef_worst(fig: str, keys: list[str], tabs: dict[str, dict], runs: int, text: str) -> Check:
    fails, factors = [], []
    for k in keys:
        t = tabs[k]
        for i in range(len(t["x"])):
            fef = _comp(t, "fef")[i]
            other = max(_comp(t, a)[i] for a in ALGS if a != "fef")
            factors.append((fef / other, _pt(t, i)))
            if not fef > other:
                fails.append(_pt(t, i))
    lo = min(factors)
    n = len(factors)
    ours = (f"FEF largest at {n - len(fails)}/{n} points; FEF / next-worst mean completion >= {lo[0]:.2f} "
            f"(at {lo[1]})" + (f"; not largest at {', '.join(fails)}" if fails else ""))
    return _row(f"{fig} FEF worst", text, ours, not fails,
                "claim read as: FEF's mean completion time is the largest of the eleven algorithms at every point. "
                + _inputs(keys, runs))


def _ordering(keys: list[str], tabs: dict[str, dict], worse: list[str], better: list[str]) -> tuple[list[str], float]:
    """Points where min(worse) is not above max(better); the smallest min(worse)/max(better)."""
    fails, lo = [], float("inf")
    for k in keys:
        t = tabs[k]
        for i in range(len(t["x"])):
            w = min(_comp(t, a)[i] for a in worse)
            b = max(_comp(t, a)[i] for a in better)
            lo = min(lo, w / b)
            if not w > b:
                fails.append(_pt(t, i))
    return fails, lo


def _spread(keys: list[str], tabs: dict[str, dict], algs: list[str]) -> tuple[float, str]:
    """The largest (max / min mean completion) among `algs` over the points, and where."""
    worst = (0.0, "")
    for k in keys:
        t = tabs[k]
        for i in range(len(t["x"])):
            hi = max(algs, key=lambda a: _comp(t, a)[i])
            lo = min(algs, key=lambda a: _comp(t, a)[i])
            worst = max(worst, (_comp(t, hi)[i] / _comp(t, lo)[i], f"{_pt(t, i)}: {hi.upper()} vs {lo.upper()}"))
    return worst


def _max_ratio(keys: list[str], tabs: dict[str, dict], algs: list[str]) -> tuple[float, str, str]:
    best = (0.0, "", "")
    for k in keys:
        t = tabs[k]
        for a in algs:
            for i, v in enumerate(t["mean_ratio"][a]):
                best = max(best, (v, _pt(t, i), a))
    return best


def _gain(t: dict[str, Any], alg: str) -> float:
    """Mean over the points of (non-preemptive / preemptive mean completion)."""
    p = PREEMPTIVE_OF[alg]
    return statistics.fmean(a / b for a, b in zip(_comp(t, alg), _comp(t, p)))


def _preemptive_beats(keys: list[str], tabs: dict[str, dict]) -> tuple[str, bool]:
    """Each preemptive algorithm below its counterpart at every point: (our summary, passed)."""
    fails, lo, n = [], float("inf"), 0
    for k in keys:
        t = tabs[k]
        for a, p in PREEMPTIVE_OF.items():
            for i in range(len(t["x"])):
                n += 1
                f = _comp(t, a)[i] / _comp(t, p)[i]
                lo = min(lo, f)
                if not f > 1.0:
                    fails.append(f"{p.upper()}>={a.upper()} at {_pt(t, i)}")
    ours = (f"preemptive faster at {n - len(fails)}/{n} (pair, point); smallest gain {lo:.3f}x"
            + (f"; not at {', '.join(fails)}" if fails else ""))
    return ours, not fails


def _wrp_within(name: str, keys: list[str], tabs: dict[str, dict], runs: int, at: str, reading: str) -> Check:
    """WRP's largest mean competitive ratio over the points of `keys` against the paper's 2.5."""
    v, where, _ = _max_ratio(keys, tabs, ["wrp"])
    at64 = max(tabs[k]["mean_ratio"]["wrp"][tabs[k]["x"].index(64)] for k in keys)
    return _row(name, None, f"{v:.3f} (max over points, at {where}); {at64:.3f} {at}", v <= 2.5,
                reading + " Per-run maxima are in extra. " + _inputs(keys, runs), paper_value=2.5, tolerance=0.0,
                extra={"wrp_max_ratio_any_run": {k: dict(zip(tabs[k]["x"], tabs[k]["max_ratio"]["wrp"])) for k in keys}})


def _tied_overheads(inst: m.Instance) -> m.Instance:
    """`inst` with each node's receive overheads set to its send overheads (R_c = S_c, R_m = S_m).

    One reading of §7's 'the send/receive overheads of each processor are chosen randomly' (one
    draw per node for both, as in Fig. 4's example, where a node's send and receive costs go
    together); our generator draws the four independently. Used only to report how a claim
    depends on that unstated input, never as a row's input."""
    spec = inst.to_dict()
    for node in spec["nodes"]:
        node["recv_const"], node["recv_per_byte"] = node["send_const"], node["send_per_byte"]
    return m.load_instance(spec)


_TIED_CACHE: dict[tuple[str, int, int], dict[str, list[float]]] = {}


def _tied_means(key: str, runs: int, seed: int, algs: list[str]) -> dict[str, list[float]]:
    """Mean completion per point of `algs` on the configurations of setting `key` (the same
    seeds as :func:`compute`) with the overheads tied by :func:`_tied_overheads`."""
    st = SETTINGS[key]
    assert st.pattern == "random", "only the multiple multicast settings are re-run tied"
    cached = _TIED_CACHE.get((key, runs, seed))
    if cached is not None and all(a in cached for a in algs):
        return cached

    def one(x: int, run: int) -> dict[str, float]:
        s = _seed(seed, x, run)
        inst = _tied_overheads(m.generate(st.nodes or x, "random", st.sizes, st.network, sources=x, seed=s))
        return {a: m.schedule(inst, a, seed=s).completion_time for a in algs}

    jobs = [(x, r) for x in st.points for r in range(runs)]
    detail = f"{key} with R = S per node"
    report(0, len(jobs), detail)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        futures = [pool.submit(one, x, r) for x, r in jobs]
        for done, _ in enumerate(as_completed(futures), 1):
            report(done, len(jobs), detail)
        results = [f.result() for f in futures]
    per: dict[int, list[dict[str, float]]] = {}
    for (x, _), res in zip(jobs, results):
        per.setdefault(x, []).append(res)
    means = {a: [statistics.fmean(r[a] for r in per[x]) for x in st.points] for a in algs}
    _TIED_CACHE[(key, runs, seed)] = means
    return means


#: Our independent check of the Rust schedulers (not re-run by the checks): a naive Python
#: re-implementation of the eleven schedulers and of the corrected bound, written from the paper
#: and the issue notes, on random §7 instances.
_REFERENCE_CHECK = ("An independent naive Python re-implementation of the eleven schedulers and of the corrected "
                    "bound, written from the paper and the issue notes, gives the same selection sequences, "
                    "completion times and bounds on 218 random §7 instances (8-64 nodes, every size and network, "
                    "2,398 schedules; RRS and RRSP with our receiver draws; run once, not re-run here).")


def _relabelled(spec: dict[str, Any], order: list[int]) -> dict[str, Any]:
    """The instance `spec` with node order[k] renumbered k."""
    new = {old: k for k, old in enumerate(order)}
    tr = spec["transmission"]
    if "matrix" in tr:
        x = tr["matrix"]
        tr = {"matrix": [[x[a][b] for b in order] for a in order]}
    return {"nodes": [spec["nodes"][old] for old in order], "transmission": tr,
            "multicasts": [{"source": new[mc["source"]], "destinations": sorted(new[d] for d in mc["destinations"]),
                            "bytes": mc["bytes"]} for mc in spec["multicasts"]]}


def _fig6_rrs_is_relabelled_eaf(keys: list[str], tabs: dict[str, dict], runs: int, seed: int) -> Check:
    """§7.1's 'RRS does not perform as well as' EAF and RR, against what the model gives.

    In a broadcast every waiting receiver is available at 0, so EAF and RR take the receivers in
    index order, RRS in a random order; renumbering the nodes in RRS's order turns RRS's schedule
    into EAF's. Checked schedule by schedule on the first configurations of each point."""
    sample = min(runs, 5)
    total, same, eaf_is_rr = 0, 0, True
    expected = sample * sum(sum(SETTINGS[k].points) for k in keys)
    for k in keys:
        st = SETTINGS[k]
        for x in st.points:
            for run in range(sample):
                s = _seed(seed, x, run)
                for src in range(x):
                    inst = m.generate(x, "broadcast", st.sizes, st.network, source=src, seed=s)
                    rrs = m.schedule(inst, "rrs", seed=s)
                    order = [src] + [r for _, r, _ in rrs.triples()]
                    eaf = m.schedule(_relabelled(inst.to_dict(), order), "eaf")
                    mapped = [(order[i], order[j], order[mm]) for i, j, mm in eaf.triples()]
                    total += 1
                    report(total, expected, "Fig. 6 broadcasts renumbered")
                    # the same arithmetic in another node order: equal up to rounding
                    same += mapped == rrs.triples() and math.isclose(eaf.completion_time, rrs.completion_time,
                                                                     rel_tol=1e-12)
                    eaf_is_rr &= m.schedule(inst, "eaf").triples() == m.schedule(inst, "rr").triples()
    ratios = [f"{_pt(tabs[k], i)} {_comp(tabs[k], 'rrs')[i] / _comp(tabs[k], 'eaf')[i]:.3f}"
              for k in keys for i in range(len(tabs[k]["x"]))]
    return _row("Fig. 6 RRS worse than EAF and RR (model: same distribution)",
                "§7.1: 'Randomized selection (the RRS algorithm) does not perform as well as others'",
                f"RRS's schedule = EAF's on the nodes renumbered in RRS's receiver order, same completion time (to 1e-12): "
                f"{same}/{total} broadcasts; EAF = RR: {eaf_is_rr}; mean RRS / mean EAF: {', '.join(ratios)}",
                same == total and eaf_is_rr,
                "The paper's model gives no difference in distribution: in a single broadcast every waiting receiver "
                "is available at 0, so EAF and RR take the receivers in index order and RRS in a uniformly random "
                "one, and with every node drawn from the same distribution a random order is an index order after "
                "renumbering. So RRS cannot be worse than EAF and RR on average; the printed claim (its figure is "
                "lost) contradicts the model. Passes when RRS's schedule equals EAF's on the renumbered nodes in "
                f"every sampled broadcast ({sample} configurations per point, every source) and EAF = RR; the mean "
                "ratios show the remaining sampling noise. " + _inputs(keys, runs),
                paper_inconsistent=True, extra={"broadcasts_checked": total})


def _behind(t: dict[str, Any], alg: str, group: list[str]) -> list[float]:
    """Per point: `alg`'s mean completion / the smallest of `group`'s."""
    return [_comp(t, alg)[i] / min(_comp(t, a)[i] for a in group) for i in range(len(t["x"]))]


def _mm_preemptive_unreproduced(keys: list[str], tabs: dict[str, dict]) -> Unreproduced:
    """The analysis of 'the preemptive algorithms all have comparable performances' (Figs. 9-10)."""
    four = [a for a in PREEMPTIVE if a != "ecfp"]
    receiver_first = [a for a in NON_PREEMPTIVE if a not in ("fef", "ecf")]
    spread4, where4 = _spread(keys, tabs, four)
    small = [k for k in keys if SETTINGS[k].sizes == "small"]
    other = [k for k in keys if SETTINGS[k].sizes != "small"]
    big = max((r, _pt(tabs[k], i)) for k in other for i, r in enumerate(_behind(tabs[k], "ecfp", four)))

    def per_source(k: str, alg: str, group: list[str]) -> str:
        return ", ".join(f"{x}: {r:.2f}" for x, r in zip(tabs[k]["x"], _behind(tabs[k], alg, group)))

    lags = "; ".join(f"{k} ({SETTINGS[k].network}) ECFP / best of the four {per_source(k, 'ecfp', four)}, and ECF / "
                     f"best of WR, EAF, RR, RRS {per_source(k, 'ecf', receiver_first)}" for k in small)
    return Unreproduced(
        assumed=f"'comparable' = the largest mean completion of ECFP, WRP, EAFP, RRP, RRSP within {COMPARABLE}x of the "
                "smallest at every point (our threshold; the paper gives none); Figs. 9-10's inputs as this note lists "
                "them: 64 nodes, 4-64 sources (Table 2's counts), each source with a uniformly random number (1-63) of "
                "distinct random destinations (§7.3 says only 'we randomly choose the destination nodes'), 1 KB, "
                "1-1.5 MiB or mixed messages, every link 1 Gbps or every link 155 Mbps, S_c, R_c, S_m, R_m drawn "
                "independently and uniformly per node in §7's ranges.",
        tried=f"computed in this run: without ECFP the four others are within {spread4:.3f} of each other at every "
              f"point ({where4}); with 1 KB messages, per number of sources: {lags}; with large or mixed messages "
              f"ECFP is at most {big[0]:.2f}x behind the four ({big[1]}). Measured once, not re-run here: the largest "
              "spread of the five with seeds 0, 1, 2 is 1.336, 1.316, 1.306 (100 configurations) and 1.316 with 1,000 "
              "configurations (seed 0), each time ECFP with 1 KB messages and 8 sources; with other unstated inputs "
              "(300 configurations, seed 0): each other node a destination with probability 1/2, 1.339; every node a "
              "destination, 1.452; each node's receive overheads equal to its send overheads (R_c = S_c, "
              "R_m = S_m), 1.265 (then RRSP behind ECFP, mixed sizes, 4 sources). Our ECFP gives Fig. 5(a)'s printed "
              "sequence and preemption (the Fig. 5(a) rows). " + _REFERENCE_CHECK,
        cause="ECF's rule, the globally earliest completion, serves the receivers that finish soonest, the fast ones, "
              "first and leaves the nodes with the most receive work for later, when their receives queue up: with "
              "1 KB messages, 8 sources, 1 Gbps (200 configurations, seed 0; measured, not re-run) the node that "
              "finishes last is idle for 52% of the completion time under ECFP against 33% under RRP and 32% under "
              "WRP, and the node with the most receive work ends its first receive at 2.04 ms under ECFP against "
              "1.04 ms under RRP. A 1 KB transfer (8 us at 1 Gbps, against 80-400 us overheads) leaves almost no wait "
              "to preempt, so ECFP keeps ECF's lag (ECF trails the receiver-first algorithms by nearly as much, "
              "above). In an all-to-all broadcast every node has the same N-1 receives and the five stay within "
              "1.19x (the Fig. 7(b),(d) row passes); with many sources or large messages the lag shrinks below "
              f"{COMPARABLE}x.")


def _mm_best_unreproduced(key: str, tabs: dict[str, dict], runs: int, seed: int) -> Unreproduced:
    """The analysis of 'ECF and WR perform the best among all non-preemptive algorithms,
    especially for large messages' (Figs. 9(c), 10(c)); re-runs the setting with tied overheads."""
    t = tabs[key]
    st = SETTINGS[key]
    gaps = []
    for i, x in enumerate(t["x"]):
        best = min(NON_PREEMPTIVE, key=lambda a: _comp(t, a)[i])
        if best not in ("ecf", "wr"):
            gaps.append(f"{best.upper()}@{x} {min(_comp(t, 'ecf')[i], _comp(t, 'wr')[i]) / _comp(t, best)[i]:.3f}")
    tied = _tied_means(key, runs, seed, NON_PREEMPTIVE)
    tied_best = [min(NON_PREEMPTIVE, key=lambda a: tied[a][i]) for i in range(len(t["x"]))]
    n_ok = sum(b in ("ecf", "wr") for b in tied_best)
    fast = st.network == "fast"
    measured = (
        "with seeds 0, 1, 2, RRS is best at 16 and 24 sources each time, min(ECF, WR) 2.1-3.1% and 0.9-1.2% above it "
        "(paired standard error about 0.3%), and at 4, 8 and 32 sources the better of ECF and WR is within 0.4% of "
        "the best (a tie within the noise); with seed 0 and other unstated inputs: RRS seeded independently of the "
        "generator, WR best at 4 sources, RRS at 8-32; each other node a destination with probability 1/2, EAF at 4, "
        "RRS at 8-32; every node a destination, ECF or WR at every count but 16 (RRS 0.3% below ECF)"
        if fast else
        "with seeds 0, 1, 2, RRS is best at 4, 8, 16 and 24 sources each time, min(ECF, WR) 1.4-2.0%, 5.4-6.4%, "
        "6.1-7.2% and 2.5-2.6% above it (paired z from 2.3 to 30); with seed 0 and other unstated inputs: RRS seeded "
        "independently of the generator, RRS best at 4-24; each other node a destination with probability 1/2, EAF "
        "at 4 (RRS within 0.01%), RRS at 8-24; every node a destination, ECF or WR at every count")
    return Unreproduced(
        assumed="'ECF and WR perform the best among all non-preemptive algorithms, especially for large messages' = "
                "at every number of sources the smallest mean completion of FEF, ECF, WR, EAF, RR and RRS is ECF's or "
                f"WR's; 64 nodes, 4-64 sources (Table 2's counts), each source with a uniformly random number (1-63) "
                f"of distinct random destinations (§7.3 says only 'we randomly choose the destination nodes'), "
                f"messages of 1 or 1.5 MiB, every link {'1 Gbps' if fast else '155 Mbps'}; S_c, R_c, S_m, R_m drawn "
                "independently and uniformly per node in §7's ranges (§7 gives only the ranges).",
        tried=f"computed in this run: min(ECF, WR) / best where another is best: {', '.join(gaps) or 'none'}; the same "
              "configurations with each node's receive overheads set to its send overheads (R_c = S_c, R_m = S_m: one "
              "draw per node, a reading of 'the send/receive overheads of each processor' that Fig. 4's example, "
              "where a node's send and receive costs go together, suggests): best per number of sources "
              f"{', '.join(f'{x}: {b.upper()}' for x, b in zip(t['x'], tied_best))} (ECF or WR best at "
              f"{n_ok}/{len(tied_best)}). Measured once, not re-run here, with 1,000 configurations: {measured}. With R_c = S_c, R_m = S_m for the whole §7 run (100 configurations, seed 0) both Fig. 9(c) "
              "and Fig. 10(c) rows pass, but 'Fig. 6 FEF worst' and 'Fig. 8 WR competitive with ECF' then fail, so "
              "that reading is not evidently the paper's either. " + _REFERENCE_CHECK,
        cause="ECF's earliest-completion rule takes the fast receivers first, which pays only when they are also fast "
              "relays; with S and R drawn independently they are not, and the slow receivers, deferred, queue their "
              "receives at the end. At 155 Mbps with 8 sources (200 configurations, seed 0; measured, not re-run) the "
              "first quarter of ECF's receivers have a mean R of 3.6 ms against 6.0-6.4 ms under WR, EAF and RRS, "
              "but about the same mean S (6.2-6.4 ms) as theirs (at 1 Gbps with 16 sources: R 3.4 ms against "
              "5.4-6.1 ms, S 6.3 ms against 6.0-6.2 ms). RRS's random receiver order "
              "avoids both effects and wins by a few percent while there are few sources; from 32 sources on ECF "
              "or WR is best. With S and R equal per node ECF's early receivers are fast senders too (its relayed "
              "sends cost 0.9 ms on average against 4.5 ms) and ECF is best at every count: the claim turns on how "
              "S and R were drawn, which §7 does not state.")


def section7_checks(runs: int | None = None, seed: int = 0) -> list[Check]:
    """The claims of §7 on our simulation of Figs. 6-12 (`runs` configurations per point)."""
    runs = default_runs() if runs is None else int(runs)
    tabs = compute(runs=runs, seed=seed)
    rows: list[Check] = []
    f6 = ["fig6-small", "fig6-large"]
    f7, f8 = ["fig7-small", "fig7-large"], ["fig8-small", "fig8-large"]
    f9 = ["fig9-small", "fig9-large", "fig9-mixed"]
    f10 = ["fig10-small", "fig10-large", "fig10-mixed"]
    others = ["ecf", "wr", "eaf", "rr"]

    # --- FEF worst -----------------------------------------------------------------------------
    rows.append(_fef_worst("Fig. 6", f6, tabs, runs,
                           "§7.1: 'the completion time of the FEF algorithm is significantly higher than those of the others'"))
    rows.append(_fef_worst("Fig. 7", f7, tabs, runs,
                           "§7.2: RRS 'still acceptable compared to the FEF algorithm' (FEF worst of Fig. 7)"))
    rows.append(_fef_worst("Fig. 8", f8, tabs, runs, "§7.2, Fig. 8: FEF worst as in Fig. 7"))
    rows.append(_fef_worst("Figs. 9, 11", f9, tabs, runs, "§7.3, Figs. 9, 11: FEF worst as for all-to-all broadcast"))
    rows.append(_fef_worst("Figs. 10, 12", f10, tabs, runs, "§7.3, Figs. 10, 12: FEF worst as for all-to-all broadcast"))

    # --- Fig. 6: single broadcast ----------------------------------------------------------------
    non_fef = [a for a in ALGS if a != "fef"]
    spread, where = _spread(f6, tabs, non_fef)
    per_size = {k: _spread([k], tabs, non_fef)[0] for k in f6}
    same = all(_comp(tabs[k], a) == _comp(tabs[k], p) for k in f6 for a, p in PREEMPTIVE_OF.items())
    rows.append(_row("Fig. 6 all but FEF similar", "§7.1: 'all the algorithms generate almost identical schedules, "
                     "resulting in similar completion time'",
                     f"largest / smallest mean completion among the ten non-FEF algorithms <= {spread:.3f} (at {where}); "
                     + ", ".join(f"{k} {v:.3f}" for k, v in per_size.items())
                     + f"; preemptive = non-preemptive exactly: {same}",
                     spread <= COMPARABLE,
                     f"'similar' read as: within {COMPARABLE}x of each other at every point (our threshold; the paper "
                     "gives none). With per-pair link speeds the receiver order matters: ECF picks the fast links and "
                     "WR the fast receivers, while EAF and RR take receivers in index order. " + _inputs(f6, runs),
                     unreproduced=Unreproduced(
                         assumed=f"'similar' = within {COMPARABLE}x at every point (our threshold); Fig. 6's network is "
                                 "§7's general setting, each pair's link 1 Gbps or 155 Mbps at random (its caption names "
                                 "neither network nor message size), with 1 KB and with 1-1.5 MiB messages, each "
                                 "configuration broadcast from every node in turn.",
                         tried="the homogeneous readings of Fig. 6's network, every link 1 Gbps or every link 155 Mbps, "
                               "each with 1 KB and with 1-1.5 MiB messages (this row used 1 Gbps with 1 KB and "
                               "155 Mbps with 1-1.5 MiB before §7's per-pair draw was adopted): there the ten non-FEF "
                               "algorithms are within 1.09x of each other at every point and the claim holds (measured "
                               "once, 100 configurations per point, seed 0; not re-run here). With per-pair links and "
                               f"1 KB messages it holds too ({f6[0]} above).",
                         cause="with per-pair link speeds a 1-1.5 MiB transfer takes 6.5x longer on a 155 Mbps link than "
                               "on a 1 Gbps one, so which sender serves which receiver dominates the completion time. "
                               "ECF chooses among (sender, receiver) pairs and takes the fast links; WR, EAF, RR and RRS "
                               "choose the receiver first (WR by virtual time, EAF and RR by index, RRS at random) and "
                               "only then its best sender, so they use slow links that ECF avoids. The paper's 'almost "
                               "identical schedules' matches a homogeneous network, which Fig. 6 may have used without "
                               "saying so.")))
    rows.append(_fig6_rrs_is_relabelled_eaf(f6, tabs, runs, seed))
    fails, lo = _ordering(f6, tabs, ["rrs"], ["ecf", "wr"])
    n = sum(len(tabs[k]["x"]) for k in f6)
    rows.append(_row("Fig. 6 RRS worse than ECF and WR",
                     "§7.1: 'Randomized selection (the RRS algorithm) does not perform as well as others, but still "
                     "outperforms the FEF algorithm'",
                     f"RRS above both ECF and WR at {n - len(fails)}/{n} points (min RRS / max(ECF, WR) = {lo:.3f})"
                     + (f"; not at {', '.join(fails)}" if fails else ""),
                     not fails,
                     "read as: RRS's mean completion is above ECF's and WR's at every point (for EAF and RR see the "
                     "paper-inconsistent row; RRS below FEF is the FEF-worst row). Where it fails, RRS is a few percent "
                     "below the larger of ECF's (greedy over links) and WR's (fastest receivers first) completion, "
                     "neither of which is optimal for a broadcast. " + _inputs(f6, runs),
                     unreproduced=Unreproduced(
                         assumed="'does not perform as well as others' = RRS's mean completion above both ECF's and "
                                 "WR's at every point; Fig. 6's network and sizes as in the row 'Fig. 6 all but FEF "
                                 "similar' (per-pair links 1 Gbps or 155 Mbps, 1 KB and 1-1.5 MiB).",
                         tried="the four homogeneous readings of Fig. 6 (every link 1 Gbps or 155 Mbps, 1 KB or "
                               "1-1.5 MiB): RRS is not above both ECF and WR at 8 nodes in any of them, nor at 16 and "
                               "64 nodes with 1-1.5 MiB, by at most 3.2% (measured once, 100 configurations per point, "
                               "seed 0; not re-run here). Our RRS gives Fig. 4(f)'s printed sequence exactly with the "
                               "paper's receiver draws forced (the Fig. 4(f) rows).",
                         cause="in a single broadcast RRS has EAF's distribution (the paper-inconsistent row checks, "
                               "schedule by schedule, that RRS is EAF on renumbered nodes), so the claim amounts to "
                               "'a random receiver order is worse than ECF's and WR's greedy ones'. Neither greedy rule "
                               "is optimal for a broadcast: on few nodes an index or random receiver order finishes as "
                               "early or a little earlier, and on per-pair links WR's fastest-receiver-first order gains "
                               "nothing over a random one. The differences are a few percent either way (min RRS / "
                               "max(ECF, WR) above).")))

    # --- Fig. 7: all-to-all, fast network ------------------------------------------------------------
    algs2 = others + [PREEMPTIVE_OF[a] for a in others]
    v, where, alg = _max_ratio(["fig7-small"], tabs, algs2)
    t = tabs["fig7-small"]
    over = [f"{a.upper()}@{t['x'][i]} {r:.3f}" for a in algs2 for i, r in enumerate(t["mean_ratio"][a]) if r > 2.0]
    # What Fig. 7's bars compare: mean completion against the mean bound.
    rom = max((_comp(t, a)[i] / t["mean_lower_bound_s"][i], _pt(t, i), a) for a in algs2 for i in range(len(t["x"])))
    wi = t["x"].index(int(where.rsplit("@", 1)[1]))
    rest = max((r, _pt(t, i), a) for a in algs2 for i, r in enumerate(t["mean_ratio"][a]) if t["x"][i] != t["x"][wi])
    seven = max((t["mean_ratio"][a][wi], a) for a in algs2 if a != alg)
    rows.append(_row("Fig. 7(a),(b) ECF/WR/EAF/RR and -P within 2x of the bound (small, fast)",
                     None, f"{v:.3f} ({alg.upper()} at {where})" + (f"; above 2 at {', '.join(over)}" if over else ""),
                     v <= 2.0,
                     "§7.2: 'for short messages ... the completion times of the non-preemptive and preemptive versions "
                     "of ECF, WR, EAF, and RR ... are all within twice the lower bound'. Ours: the largest mean "
                     "competitive ratio (completion / corrected lower bound, equal to eq. (4)'s bound here since all "
                     "sizes are equal) of those eight algorithms over the points; passes if <= 2. " + _inputs(["fig7-small"], runs),
                     paper_value=2.0, tolerance=0.0,
                     unreproduced=Unreproduced(
                         assumed="'within twice the lower bound' = the mean competitive ratio (completion / bound, "
                                 "averaged over the configurations) of each of ECF, WR, EAF, RR, ECFP, WRP, EAFP, RRP "
                                 "at most 2 at every node count; node counts 8-80 in steps of 8 (Table 1's; the lost "
                                 "Fig. 7 does not show where its axis starts); 1 KB (1,024 B) messages, every link "
                                 "1 Gbps; S_c, R_c, S_m, R_m drawn independently and uniformly per node in §7's ranges "
                                 "(§7 gives only the ranges). Here the corrected bound is eq. (4)'s (equal sizes, every "
                                 "node in every multicast).",
                         tried=f"computed in this run: the ratio of the mean completion to the mean bound (what "
                               f"Fig. 7's bars compare) is at most {rom[0]:.3f} ({rom[2].upper()} at {rom[1]}); "
                               f"{alg.upper()}'s mean ratio by node count "
                               f"{', '.join(f'{x}: {r:.2f}' for x, r in zip(t['x'], t['mean_ratio'][alg]))}; at the "
                               f"other node counts the eight are within {rest[0]:.3f} ({rest[2].upper()} at {rest[1]}), "
                               f"and at {where} the seven others within {seven[0]:.3f} ({seven[1].upper()}). Measured "
                               "once, not re-run here: EAF's mean ratio at 8 nodes with seeds 0, 1, 2 is 2.115, 2.127, "
                               "2.110 (100 configurations) and 2.101, 2.121, 2.117 (300; standard error 0.013-0.015, "
                               "7-8 standard errors above 2); with each node's receive overheads equal to its send "
                               "overheads (R_c = S_c, R_m = S_m) 2.056 and 2.096 (300 configurations, seeds 0, 1). "
                               "Our EAF gives Fig. 4(d)'s printed sequence (the Fig. 4(d) rows). " + _REFERENCE_CHECK,
                         cause="EAF takes the waiting receiver that is available first and only then its best sender, "
                               "so the receiver often waits for a sender busy with its own sends (without preemption a "
                               "node's sends and receives are serialized): at 8 nodes the node that finishes last "
                               "under EAF is idle for about 35% of the completion time (100 and 300 configurations, "
                               "seeds 0-2; measured, not re-run). With 8 nodes the bound is essentially the slowest "
                               "receiver's 7 receive overheads, so that idle time weighs most at the smallest node "
                               "count, and EAF's ratio falls below 2 from 16 nodes on. The excess is about 5% (2.10-2.13 "
                               "measured above), at one point of a lost bar chart whose smallest node count the paper "
                               "does not give.")))
    fails, lo = _ordering(["fig7-small"], tabs, ["rrs"], others)
    n = len(tabs["fig7-small"]["x"])
    def rank(key: str, alg: str, group: list[str]) -> list[int]:
        t = tabs[key]
        return [sorted(group, key=lambda a: _comp(t, a)[i]).index(alg) + 1 for i in range(len(t["x"]))]

    rrs_rank = rank("fig7-small", "rrs", NON_PREEMPTIVE)
    rows.append(_row("Fig. 7(a) RRS worse than ECF, WR, EAF, RR (small, fast)",
                     "§7.2: 'although the performance of the Receiver Random Selection (RRS) algorithm is not as good as "
                     "the others, its completion times are still acceptable compared to the FEF algorithm'",
                     f"RRS above all of ECF, WR, EAF, RR at {n - len(fails)}/{n} points; RRS's rank among the six "
                     f"non-preemptive (1 = best): {rrs_rank}",
                     not fails,
                     "read as: RRS's mean completion is above each of ECF, WR, EAF and RR at every point. Ours is the "
                     "opposite: with 1 KB messages completion is set by the receive overheads of the slow nodes, and a "
                     "random receiver order keeps them busy earlier than ECF's greedy choice (which serves fast "
                     "receivers first) or RR's fixed cycle; our RRS is the paper's rule (uniform receiver, then the "
                     "earliest-completing sender/message) and reproduces Fig. 4(f). " + _inputs(["fig7-small"], runs),
                     unreproduced=Unreproduced(
                         assumed="'not as good as the others' = RRS's mean completion above each of ECF's, WR's, EAF's "
                                 "and RR's at every node count; 1 KB (1,024 B) messages on a 1 Gbps network with the "
                                 "§7 generator (the inputs listed in this note).",
                         tried="the same 1 KB all-to-all broadcast on the 155 Mbps network (fig8-small, computed in "
                               f"this run): RRS's rank among the six non-preemptive {rank('fig8-small', 'rrs', NON_PREEMPTIVE)}; "
                               "the preemptive RRSP's rank among the five preemptive, 1 Gbps "
                               f"{rank('fig7-small', 'rrsp', PREEMPTIVE)}, 155 Mbps {rank('fig8-small', 'rrsp', PREEMPTIVE)}. "
                               "Our RRS (a uniformly random waiting receiver, then the earliest-completing sender and "
                               "message) gives Fig. 4(f)'s printed sequence exactly with the paper's receiver draws "
                               "forced (the Fig. 4(f) rows).",
                         cause="with 1 KB messages the completion time is set by the per-message overheads (R_c of "
                               "80-400 us against about 8 us to move 1 KB at 1 Gbps), mostly the receive overheads of "
                               "the slow nodes; a random receiver order gets every receiver, slow ones included, busy "
                               "early, while ECF's greedy choice serves fast receivers first and RR's fixed cycle "
                               "follows the node numbering.")))
    fails, lo = _ordering(["fig7-large"], tabs, ["eaf", "rr"], ["ecf", "wr", "rrs"])
    n = len(tabs["fig7-large"]["x"])
    rows.append(_row("Fig. 7(c) EAF and RR worse than ECF, WR, RRS (large, fast)",
                     "§7.2: 'For large messages, as shown in Figure 7(c), the EAF and RR algorithms perform much worse "
                     "than the ECF, WR and RRS algorithms'",
                     f"holds at {n - len(fails)}/{n} points; min(EAF, RR) / max(ECF, WR, RRS) >= {lo:.3f}"
                     + (f"; not at {', '.join(fails)}" if fails else ""),
                     not fails,
                     "read as: both EAF's and RR's mean completion above each of ECF's, WR's and RRS's at every point "
                     "(ours gives the factor; the paper's 'much' has no number). " + _inputs(["fig7-large"], runs)))
    for keys, fig in ((f7, "Fig. 7(b),(d)"), (f9 + f10, "Figs. 9-10 (b),(d),(f)")):
        spread, where = _spread(keys, tabs, PREEMPTIVE)
        text = ("§7.2: 'the completion times of all the five [preemptive] algorithms are comparable with each other'"
                if fig.startswith("Fig. 7") else "§7.3: 'The preemptive algorithms all have comparable performances'")
        rows.append(_row(f"{fig} preemptive algorithms comparable", text,
                         f"largest / smallest mean completion of the five <= {spread:.3f} (at {where})",
                         spread <= COMPARABLE,
                         f"'comparable' read as: within {COMPARABLE}x of each other at every point (our threshold; "
                         "the paper gives none). " + _inputs(keys, runs),
                         unreproduced=None if fig.startswith("Fig. 7") else _mm_preemptive_unreproduced(keys, tabs)))
    t = tabs["fig7-large"]
    fails = [f"{PREEMPTIVE_OF[a].upper()}>={a.upper()} at {_pt(t, i)}" for a in ("eaf", "rr")
             for i in range(len(t["x"])) if not _comp(t, PREEMPTIVE_OF[a])[i] < _comp(t, a)[i]]
    gains = {a: _gain(t, a) for a in PREEMPTIVE_OF}
    especially = min(gains["eaf"], gains["rr"]) > max(gains["ecf"], gains["wr"], gains["rrs"])
    rows.append(_row("Fig. 7(d) preemption helps EAF and RR most (large, fast)",
                     "§7.2: 'Especially for the EAFP and RRP algorithms with large messages, the preemption optimization "
                     "provides great improvement over their unoptimized counterparts'",
                     "mean gain (non-preemptive / preemptive completion) " + ", ".join(f"{a.upper()} {g:.2f}x" for a, g in gains.items())
                     + (f"; EAFP/RRP not better at {', '.join(fails)}" if fails else "; EAFP < EAF and RRP < RR at every point"),
                     not fails and especially,
                     "read as: EAFP < EAF and RRP < RR at every point, and their gains exceed those of ECF, WR and RRS. "
                     + _inputs(["fig7-large"], runs)))

    # --- Fig. 8: all-to-all, slow network -----------------------------------------------------------
    for size in ("large", "small"):
        fast, slow = tabs[f"fig7-{size}"], tabs[f"fig8-{size}"]
        g_fast = {a: _gain(fast, a) for a in PREEMPTIVE_OF}
        g_slow = {a: _gain(slow, a) for a in PREEMPTIVE_OF}
        bad = [a.upper() for a in PREEMPTIVE_OF if not g_slow[a] > g_fast[a]]
        rows.append(_row(f"Fig. 8 vs 7 preemption gains more in the slow network ({size})",
                         "§7.2: 'In a slow network, as shown in Figure 8, the performance advantage of the preemptive "
                         "algorithm is more significant'",
                         "mean gain slow / fast: " + ", ".join(f"{a.upper()} {g_slow[a]:.3f}/{g_fast[a]:.3f}" for a in PREEMPTIVE_OF)
                         + (f"; not larger for {', '.join(bad)}" if bad else ""),
                         not bad,
                         "read as: for each of the five pairs, the mean over the points of (non-preemptive / preemptive "
                         "mean completion) is larger in Fig. 8 than in Fig. 7. "
                         + _inputs([f"fig7-{size}", f"fig8-{size}"], runs)))
    for keys, fig in ((["fig8-large"], "Fig. 8(c),(d)"), (["fig10-large"], "Fig. 10(c),(d)")):
        ours, passed = _preemptive_beats(keys, tabs)
        rows.append(_row(f"{fig} preemptive beat non-preemptive (large, slow)",
                         "§7.2/§7.3: the preemptive versions beat their non-preemptive counterparts, most in a slow "
                         "network with large messages", ours, passed,
                         "read as: for each pair (ECF/ECFP, WR/WRP, EAF/EAFP, RR/RRP, RRS/RRSP) the preemptive mean "
                         "completion is lower at every point. " + _inputs(keys, runs)))
    worse = []
    for a in ("eaf", "rr"):
        for i in range(len(ALL_TO_ALL_NODES)):
            if not tabs["fig8-large"]["mean_ratio"][a][i] > tabs["fig7-large"]["mean_ratio"][a][i]:
                worse.append(f"{a.upper()}@{ALL_TO_ALL_NODES[i]}")
    rows.append(_row("Fig. 8(c) EAF and RR worse with large messages in the slow network",
                     "§7.2: 'the EAF and RR schemes perform more worse with large messages in a slow network'",
                     "mean competitive ratio at 80 nodes slow / fast: " + ", ".join(
                         f"{a.upper()} {tabs['fig8-large']['mean_ratio'][a][-1]:.2f}/{tabs['fig7-large']['mean_ratio'][a][-1]:.2f}"
                         for a in ("eaf", "rr")) + (f"; not worse at {', '.join(worse)}" if worse else "; worse at every point"),
                     not worse,
                     "read as: EAF's and RR's mean competitive ratio is higher in Fig. 8(c) than in Fig. 7(c) at every "
                     "node count. " + _inputs(["fig7-large", "fig8-large"], runs)))
    rows.append(_wrp_within("Fig. 8 WRP within 2.5x of the lower bound", f8, tabs, runs, "at 64 nodes",
                            "§7.2: 'The completion time of the WRP algorithm is within 2.5 times of the lower bound'. "
                            "Ours: the largest mean competitive ratio of WRP over Fig. 8's points (small and large); "
                            "passes if <= 2.5."))
    wins, total, worst = [], 0, 0.0
    for k in f8:
        t = tabs[k]
        for i in range(len(t["x"])):
            total += 1
            r = _comp(t, "wr")[i] / _comp(t, "ecf")[i]
            worst = max(worst, r)
            if r < 1.0:
                wins.append(_pt(t, i))
    rows.append(_row("Fig. 8 WR competitive with ECF, better in many cases",
                     "§7.2: 'The WR algorithm is competitive to the ECF algorithm and outperforms ECF in many cases'",
                     f"WR below ECF at {len(wins)}/{total} points ({', '.join(wins) or 'none'}); WR / ECF mean completion <= {worst:.3f}",
                     len(wins) >= total / 4 and worst <= 1.1,
                     "read as: WR's mean completion below ECF's at >= 1/4 of Fig. 8's points ('many cases') and never "
                     "more than 1.1x ECF's ('competitive'); both thresholds are ours. " + _inputs(f8, runs)))

    # --- Figs. 9-12: multiple multicast on 64 nodes --------------------------------------------------------
    for keys, fig in ((["fig9-large"], "Fig. 9(c)"), (["fig10-large"], "Fig. 10(c)")):
        fails = []
        n = 0
        for k in keys:
            t = tabs[k]
            for i in range(len(t["x"])):
                n += 1
                best = min(NON_PREEMPTIVE, key=lambda a: _comp(t, a)[i])
                if best not in ("ecf", "wr"):
                    fails.append(f"{best.upper()}@{t['x'][i]}")
        rows.append(_row(f"{fig} ECF or WR best non-preemptive (large)",
                         "§7.3: 'the ECF and the WR algorithms perform the best among all non-preemptive algorithms, "
                         "especially for large messages (Figure 9(c) and Figure 10(c))'",
                         f"ECF or WR best at {n - len(fails)}/{n} source counts"
                         + (f"; best is another at {', '.join(fails)} (algorithm@sources)" if fails else ""),
                         not fails,
                         "read as: the smallest mean completion among FEF, ECF, WR, EAF, RR, RRS is ECF's or WR's at "
                         "every number of sources. " + _inputs(keys, runs),
                         # the analysis re-runs the setting with tied overheads: only when it is needed
                         unreproduced=_mm_best_unreproduced(keys[0], tabs, runs, seed) if fails else None))
    ours, passed = _preemptive_beats(f9 + f10, tabs)
    rows.append(_row("Figs. 9-10 preemptive beat non-preemptive (all sizes, both networks)",
                     "§7.3: 'The preemptive algorithms all have ... significant improvement over the non-preemptive ones'",
                     ours, passed,
                     "read as: each preemptive algorithm's mean completion below its counterpart's at every point "
                     "('significant' has no number; ours gives the smallest gain). " + _inputs(f9 + f10, runs)))
    rows.append(_wrp_within("Figs. 11-12 WRP within 2.5x of the lower bound (64 nodes)", f9 + f10, tabs, runs,
                            "with 64 sources",
                            "§7.3: 'the completion times of the WRP algorithm are within 2.5 times of the lower bounds "
                            "in large systems'. Ours: the largest mean competitive ratio of WRP over every source count, "
                            "size and network at 64 nodes (corrected lower bound, which for mixed sizes can be above "
                            "eq. (4)'s); passes if <= 2.5."))
    return rows


@check(PAPER, "§7 Figs. 6-12, claims")
def _section7() -> list[Check]:
    return section7_checks()
