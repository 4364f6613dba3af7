#!/usr/bin/env python3
"""Benchmarks of the paper-004 sharing models: static penalties, exact Myrinet, and the engine.

Four benchmarks, each printing its wall times beside its target, all measured in one run:

1. **static GigE**: ``commaware.sharing.penalties(scheme, "gige")`` on 10,000 random
   communications between 1,000 nodes (seeded).  The core (``commaware._core.scheme_penalties``
   on JSON text serialised beforehand) is timed apart from the whole call, whose difference is
   the Python side (``json.dumps`` of the dict, building the report).  Best of ``--repeat``.
   Target: the whole call under 50 ms.
2. **exact Myrinet** on 30-communication components (the largest counted exactly, the core's
   ``EXACT_LIMIT``): complete bipartite 5x6, the complete digraph on 6 nodes (30 arcs), and the
   slowest of ``--myrinet-seeds`` seeded random 30-arc schemes forming one component, from 6x6 to
   15x16 sending x receiving nodes.  Target: under 1 s each.
3. **engine, flows**: the ``randsize`` scenario of ``bench_flows.py`` (``--flows`` random pairs of
   1e5..1e7 bytes among 1,024 hosts, all started at t = 0, ``simgrid_peer.make_flows``) through
   ``commaware.simulate`` under ``gige`` and ``ib-simgrid``, each beside ``maxmin`` on the same
   trace in the same run (target: within 2x of maxmin's wall time), and ``ib-simgrid`` beside
   SimGrid 3.32's IB model (``tests/peers/simgrid_star.cpp`` with ``simgrid_peer.IB_FLAGS``,
   ``optim:Full``) on the same flow list: ratio = SimGrid ``run_s`` / ours, held to
   ``bench_flows.TARGET_RATIO`` (the maxmin-vs-SimGrid target, applied here to ib-simgrid); and
   ``ib-simgrid`` on the same flows with a backbone of ``--backbone-x`` NIC bandwidths, beside
   ``ib-simgrid`` without one (target: within 2x of its wall time).  Also
   the largest per-flow completion-time difference from SimGrid; SimGrid leaves some IB penalties
   stale by design (``simgrid_peer.ib_stale_flows``, checked when ``--flows`` <= ``--stale-max``).
   A run past ``--engine-timeout`` is stopped (through ``on_progress``, which the engine calls
   between steps only, so one long step can overrun the limit: myrinet's estimator on a
   component of thousands of flows does) and reported as such; slow runs print a "still running"
   line every 30 s.
4. **engine, ring**: 1,024 ranks, each sending ``--ring-bytes`` to rank + 1 mod P and receiving
   from rank - 1, ``--ring-iters`` times (the paper's HPL pattern), under maxmin, gige, myrinet,
   infiniband and ib-simgrid: wall time (best of ``--repeat``) and makespan.  Target: within 2x of
   maxmin's wall time (as in 3).  No node sends or receives twice, so every penalty is 1 and
   every makespan must equal iters x (latency + bytes / bandwidth): checked too.

Nothing is asserted (this is not a test): each target is marked ``ok`` or ``MISSED``.

Usage::

    .venv/bin/python benches/bench_penalties.py --quick        # seconds (1,024 flows)
    .venv/bin/python benches/bench_penalties.py                # 16,384 flows (SimGrid IB ~2 min)
    .venv/bin/python benches/bench_penalties.py --flows 1024,4096,16384 --no-simgrid   # scaling
    .venv/bin/python benches/bench_penalties.py --json > penalties.json
"""

from __future__ import annotations

import argparse
import datetime
import functools
import gc
import json
import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "peers"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import simgrid_peer as sgp  # noqa: E402
from bench_flows import TARGET_RATIO as SG_TARGET_RATIO  # noqa: E402
from bench_flows import Scenario  # noqa: E402

import commaware  # noqa: E402
from commaware import _core, sharing  # noqa: E402

STATIC_TARGET_S = 0.050
MYRINET_TARGET_S = 1.0
ENGINE_TARGET_X = 2.0
FLOW_HOSTS = 1024
ENGINE_MODELS = ("gige", "ib-simgrid")
BACKBONE_TARGET_X = 2.0
RING_MODELS = ("maxmin", "gige", "myrinet", "infiniband", "ib-simgrid")
MiB = 1 << 20


def ok(flag: bool | None) -> str:
    return "n/a" if flag is None else ("ok" if flag else "MISSED")


def timed(fn: Callable[[], Any], repeat: int) -> tuple[list[float], Any]:
    """Wall times of ``repeat`` calls of ``fn`` and the last result."""
    times, out = [], None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times, out


# ---------------------------------------------------------------------------------------------
# 1. static GigE penalties
# ---------------------------------------------------------------------------------------------

def random_scheme(n_comms: int, nodes: int, seed: int) -> dict[str, Any]:
    """``n_comms`` communications between random distinct nodes (parallel arcs allowed)."""
    rng = random.Random(seed)
    comms = []
    for i in range(n_comms):
        s = rng.randrange(nodes)
        d = rng.randrange(nodes - 1)
        comms.append({"id": f"c{i}", "src": s, "dst": d + 1 if d >= s else d})
    return {"comms": comms}


def bench_static(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    print(f"[1] static gige penalties: {args.comms:,} random comms on {args.nodes:,} nodes ...", file=log, flush=True)
    scheme = random_scheme(args.comms, args.nodes, args.seed)
    ser_times, core_times, full_times = [], [], []
    gc.collect()
    gc.disable()  # a collection landing in one of the three timings would skew the Python-side figure
    for _ in range(max(1, args.repeat)):  # interleaved, so that drifts hit the three alike
        t, text = timed(lambda: json.dumps(scheme, allow_nan=False), 1)
        ser_times += t
        t, core_out = timed(lambda: _core.scheme_penalties(text, "<bench>", "dict", "gige", []), 1)
        core_times += t
        t, report = timed(lambda: sharing.penalties(scheme, "gige"), 1)
        full_times += t
    gc.enable()
    full, core = min(full_times), min(core_times)
    others = {}
    for model in ("infiniband", "ib-simgrid", "maxmin"):  # same scheme, for scale (no target)
        others[model] = min(timed(functools.partial(sharing.penalties, scheme, model), args.repeat)[0])
    return {
        "comms": args.comms, "nodes": args.nodes, "seed": args.seed, "repeat": args.repeat,
        "full_s": full, "full_median_s": statistics.median(full_times),
        "core_s": core, "core_median_s": statistics.median(core_times),
        "json_dumps_s": min(ser_times), "python_overhead_s": full - core,
        "same_penalties": core_out["penalties"] == report.penalties,
        "max_penalty": max(report.penalties), "mean_penalty": statistics.fmean(report.penalties),
        "other_models_full_s": others,
        "target_s": STATIC_TARGET_S, "ok": full < STATIC_TARGET_S,
    }


def print_static(r: dict[str, Any]) -> None:
    print(f"\n[1] static gige penalties, {r['comms']:,} random comms on {r['nodes']:,} nodes "
          f"(seed {r['seed']}, best of {r['repeat']})")
    print(f"    penalties() whole call   {r['full_s'] * 1e3:8.2f} ms  (median {r['full_median_s'] * 1e3:.2f} ms)")
    print(f"    _core.scheme_penalties   {r['core_s'] * 1e3:8.2f} ms  (median {r['core_median_s'] * 1e3:.2f} ms; "
          "JSON text -> dict of lists)")
    print(f"    Python side              {r['python_overhead_s'] * 1e3:8.2f} ms  (whole - core, best of each; "
          f"json.dumps of the dict alone {r['json_dumps_s'] * 1e3:.2f} ms)")
    print(f"    penalties: max {r['max_penalty']:.3f}, mean {r['mean_penalty']:.3f}")
    print("    same scheme, whole call: " + ", ".join(f"{m} {t * 1e3:.1f} ms" for m, t in r["other_models_full_s"].items()))
    print(f"    target: whole call < {r['target_s'] * 1e3:.0f} ms: {ok(r['ok'])}")


# ---------------------------------------------------------------------------------------------
# 2. exact Myrinet on 30-communication components
# ---------------------------------------------------------------------------------------------

def connected_bipartite(senders: int, receivers: int, n_arcs: int, rng: random.Random) -> list[tuple[int, int]]:
    """``n_arcs`` distinct arcs from nodes ``0..senders-1`` to nodes ``0..receivers-1`` (no self-loop)
    forming one Myrinet component: their bipartite graph (sending sides, receiving sides) is connected.

    A random spanning tree of the ``senders + receivers`` sides (at most ``n_arcs + 1`` of them),
    then random arcs up to ``n_arcs``.
    """
    if senders + receivers - 1 > n_arcs or n_arcs > senders * receivers - min(senders, receivers):
        raise ValueError(f"no connected {senders}x{receivers} scheme with {n_arcs} arcs")
    while True:
        sides = [("s", i) for i in range(senders)] + [("r", j) for j in range(receivers)]
        rng.shuffle(sides)
        arcs: set[tuple[int, int]] = set()
        placed = [sides[0]]
        for side in sides[1:]:
            options = [o for o in placed if o[0] != side[0] and o[1] != side[1]]
            if not options:
                break
            other = rng.choice(options)
            arcs.add((side[1], other[1]) if side[0] == "s" else (other[1], side[1]))
            placed.append(side)
        else:
            while len(arcs) < n_arcs:
                s, d = rng.randrange(senders), rng.randrange(receivers)
                if s != d:
                    arcs.add((s, d))
            return sorted(arcs)


def arcs_scheme(arcs: list[tuple[int, int]]) -> dict[str, Any]:
    return {"comms": [{"id": f"a{k}", "src": s, "dst": d} for k, (s, d) in enumerate(arcs)]}


def myrinet_case(name: str, scheme: dict[str, Any], repeat: int) -> dict[str, Any]:
    times, rep = timed(lambda: sharing.penalties(scheme, "myrinet"), repeat)
    return {"case": name, "comms": len(scheme["comms"]), "components": len(rep.components),
            "largest_component": max(len(c["comms"]) for c in rep.components),
            "exact": not rep.state_sets_estimated, "state_sets": rep.state_sets,
            "max_penalty": max(rep.penalties), "best_s": min(times), "worst_s": max(times),
            "ok": max(times) < MYRINET_TARGET_S and not rep.state_sets_estimated}


def bench_myrinet(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    print("[2] exact myrinet on 30-comm components ...", file=log, flush=True)
    cases = [
        myrinet_case("complete bipartite 5x6", arcs_scheme([(i, 5 + j) for i in range(5) for j in range(6)]), args.repeat),
        myrinet_case("complete digraph K6", arcs_scheme([(i, j) for i in range(6) for j in range(6) if i != j]), args.repeat),
    ]
    searched = 0
    for senders, receivers in ((6, 6), (8, 8), (10, 10), (12, 12), (15, 16)):
        worst: tuple[float, int, dict[str, Any]] | None = None
        for seed in range(args.myrinet_seeds):
            rng = random.Random(args.seed * 1_000_003 + senders * 1009 + receivers * 17 + seed)
            scheme = arcs_scheme(connected_bipartite(senders, receivers, 30, rng))
            t0 = time.perf_counter()
            rep = sharing.penalties(scheme, "myrinet")
            dt = time.perf_counter() - t0
            searched += 1
            if len(rep.components) == 1 and (worst is None or dt > worst[0]):
                worst = (dt, seed, scheme)
        if worst is not None:
            case = myrinet_case(f"random connected {senders}x{receivers}, slowest of {args.myrinet_seeds}",
                                worst[2], args.repeat)
            case["seed"] = worst[1]
            cases.append(case)
    return {"cases": cases, "random_schemes_searched": searched, "target_s": MYRINET_TARGET_S,
            "worst_s": max((c["worst_s"] for c in cases), default=None), "ok": all(c["ok"] for c in cases)}


def print_myrinet(r: dict[str, Any]) -> None:
    print(f"\n[2] exact myrinet penalties on 30-communication components "
          f"({r['random_schemes_searched']} random schemes searched for the slowest)")
    print(f"    {'case':46} {'comms':>5} {'comp':>4} {'exact':>5} {'state sets':>10} {'max pen':>8} "
          f"{'best':>9} {'worst':>9}  target")
    for c in r["cases"]:
        print(f"    {c['case']:46} {c['comms']:5d} {c['components']:4d} {str(c['exact']):>5} {c['state_sets']:>10} "
              f"{c['max_penalty']:8.2f} {c['best_s'] * 1e3:7.3f}ms {c['worst_s'] * 1e3:7.3f}ms  {ok(c['ok'])}")
    print(f"    target: each exact count < {r['target_s']:g} s: {ok(r['ok'])}")


# ---------------------------------------------------------------------------------------------
# engine runs with a time limit
# ---------------------------------------------------------------------------------------------

class _Overtime(Exception):
    """Raised from ``on_progress`` to stop a run past its time limit."""


def run_engine(platform: Any, trace: Any, model: str, limit: float | None, log: Any, label: str,
               record_messages: bool = False) -> dict[str, Any]:
    """One ``commaware.simulate`` under ``model``: wall time and makespan, or a timeout."""
    last = [0.0]

    def progress(now: float, steps: int, delivered: int, finished: int, ranks: int, elapsed: float) -> None:
        if elapsed - last[0] >= 30.0:
            last[0] = elapsed
            print(f"    {label}: still running after {elapsed:.0f} s (simulated t = {now:.4g} s, "
                  f"{delivered:,} messages delivered, {steps:,} engine steps)", file=log, flush=True)
        if limit is not None and elapsed > limit:
            raise _Overtime

    t0 = time.perf_counter()
    try:
        res = commaware.simulate(platform, trace, model=model, record_messages=record_messages,
                                 record_timeline=False, on_progress=progress, progress_every=1.0)
    except _Overtime:
        return {"status": f"stopped after {limit:g} s", "wall_s": time.perf_counter() - t0}
    wall = time.perf_counter() - t0
    out: dict[str, Any] = {"status": "ok", "wall_s": wall, "makespan_s": float(res.makespan)}
    if record_messages:
        out["_messages"] = res.messages
    return out


# ---------------------------------------------------------------------------------------------
# 3. engine on the randsize flows, beside maxmin and SimGrid's IB
# ---------------------------------------------------------------------------------------------

def bench_flows_one(n_flows: int, args: argparse.Namespace, log: Any, sg_ok: bool) -> dict[str, Any]:
    sc = Scenario("randsize", FLOW_HOSTS, n_flows)
    print(f"[3] {sc.name}: {'SimGrid IB, then ' if sg_ok else ''}commaware maxmin, "
          f"{', '.join(ENGINE_MODELS + tuple(args.extra_models))} ...",
          file=log, flush=True)
    flows = sgp.make_flows(sc.pattern, sc.hosts, sc.flows, args.size, args.seed)
    row: dict[str, Any] = {"scenario": sc.name, "flows": len(flows), "hosts": sc.hosts, "size": args.size,
                           "seed": args.seed, "lat_us": args.lat_us}
    sg_run = None
    if sg_ok:
        try:
            sg_run = sgp.run_simgrid_flows_cfg(sc.hosts, flows, sgp.IB_FLAGS, lat_us=args.lat_us, optim="Full",
                                               timeout=args.sg_timeout)
            r = sg_run.result
            row["simgrid_ib"] = {"status": "ok", "run_s": r["run_s"], "cpu_s": r["cpu_s"], "makespan_s": r["makespan_s"],
                                 "time_advances": r["time_advances"], "maxrss_MB": r["maxrss_MB"],
                                 "version": f"simgrid-{r['simgrid']}-cpp", "flags": list(sgp.IB_FLAGS)}
        except sgp.SimGridTimeout:
            row["simgrid_ib"] = {"status": f"timeout>{args.sg_timeout:g}s", "timeout_s": args.sg_timeout}
        except sgp.SimGridError as exc:
            row["simgrid_ib"] = {"status": str(exc)[:300]}
    else:
        row["simgrid_ib"] = {"status": "not run"}

    t0 = time.perf_counter()
    platform = commaware.load_platform(sgp.platform_dict(sc.hosts, sgp.route_latency_s(args.lat_us)))
    trace = commaware.load_trace(sgp.flows_to_trace(sc.hosts, flows))
    row["prep_s"] = time.perf_counter() - t0
    runs: dict[str, dict[str, Any]] = {}
    for model in ("maxmin", *ENGINE_MODELS, *args.extra_models):
        print(f"    {model} ...", file=log, flush=True)
        runs[model] = run_engine(platform, trace, model, args.engine_timeout, log, f"{sc.name} {model}",
                                 record_messages=True)  # every model alike, as bench_flows.py does
        if model != "ib-simgrid" or sg_run is None:
            runs[model].pop("_messages", None)
    # ib-simgrid with a backbone (every inter-node flow crosses it) against ib-simgrid without
    # one, on the same flows: the incremental capped max-min is meant for both.
    bb_capacity = args.backbone_x * sgp.LINK_BANDWIDTH
    bb_doc = sgp.platform_dict(sc.hosts, sgp.route_latency_s(args.lat_us))
    bb_doc["network"]["backbone"] = bb_capacity
    print(f"    ib-simgrid with a {args.backbone_x:g}-NIC backbone ...", file=log, flush=True)
    bb = run_engine(commaware.load_platform(bb_doc), trace, "ib-simgrid", args.engine_timeout, log,
                    f"{sc.name} ib-simgrid+backbone", record_messages=True)
    bb.pop("_messages", None)
    # Context: max-min alone on the same backbone (no caps), against max-min without one.
    print(f"    maxmin with a {args.backbone_x:g}-NIC backbone ...", file=log, flush=True)
    bb_mm = run_engine(commaware.load_platform(bb_doc), trace, "maxmin", args.engine_timeout, log,
                       f"{sc.name} maxmin+backbone")
    if bb_mm["status"] == "ok" and runs["maxmin"]["status"] == "ok":
        bb["maxmin_wall_s"] = bb_mm["wall_s"]
        bb["maxmin_x_no_backbone"] = bb_mm["wall_s"] / runs["maxmin"]["wall_s"]
    bb["backbone_Bps"] = bb_capacity
    if bb["status"] == "ok" and runs["ib-simgrid"]["status"] == "ok":
        bb["x_no_backbone"] = bb["wall_s"] / runs["ib-simgrid"]["wall_s"]
    bb["ok"] = bb.get("x_no_backbone") is not None and bb["x_no_backbone"] <= BACKBONE_TARGET_X
    row["ib_simgrid_backbone"] = bb
    row["commaware"] = runs
    base = runs["maxmin"]
    for model in (*ENGINE_MODELS, *args.extra_models):
        cw = runs[model]
        if cw["status"] == "ok" and base["status"] == "ok":
            cw["x_maxmin"] = cw["wall_s"] / base["wall_s"]
        elif base["status"] == "ok":  # stopped: a lower bound
            cw["x_maxmin_at_least"] = cw["wall_s"] / base["wall_s"]
        if model in ENGINE_MODELS:
            cw["ok"] = cw.get("x_maxmin") is not None and cw["x_maxmin"] <= ENGINE_TARGET_X
    ib = runs["ib-simgrid"]
    msgs = ib.pop("_messages", None)
    sg = row["simgrid_ib"]
    row["sg_ratio"], row["sg_ratio_is_lower_bound"], row["sg_ok"] = None, False, None
    if ib["status"] == "ok" and sg["status"] == "ok":
        row["sg_ratio"] = sg["run_s"] / ib["wall_s"]
        row["sg_ok"] = row["sg_ratio"] >= SG_TARGET_RATIO
    elif ib["status"] == "ok" and "timeout_s" in sg:
        row["sg_ratio"], row["sg_ratio_is_lower_bound"] = sg["timeout_s"] / ib["wall_s"], True
        row["sg_ok"] = row["sg_ratio"] >= SG_TARGET_RATIO
    if msgs is not None and sg_run is not None:
        ours = sgp.ours_finish_by_flow(flows, msgs)
        theirs = [f.finish for f in sg_run.flows]
        rel = sgp.relative_errors(theirs, ours)
        over = {i for i, e in enumerate(rel) if e > 1e-6}
        agree: dict[str, Any] = {"max_rel_diff": max(rel), "flows_over_1e-6": len(over)}
        if len(flows) <= args.stale_max:
            t0 = time.perf_counter()
            stale = sgp.ib_stale_flows(sg_run.flows)
            agree.update({"stale_flows": len(stale), "over_1e-6_not_stale": len(over - stale),
                          "stale_analysis_s": time.perf_counter() - t0})
        row["agreement"] = agree
    return row


def print_flows(rows: list[dict[str, Any]]) -> None:
    print(f"\n[3] engine on randsize flows ({FLOW_HOSTS} hosts, all at t = 0), same trace for every model")
    hdr = (f"    {'scenario':22} {'model':11} {'wall_s':>9} {'makespan_s':>10} {'peer':>14} {'peer_s':>9} "
           f"{'ratio':>9}  target")
    print(hdr)
    for row in rows:
        runs, sg = row["commaware"], row["simgrid_ib"]
        base = runs["maxmin"]

        def cell(r: dict[str, Any], key: str, fmt: str) -> str:
            return format(r[key], fmt) if r.get("status") == "ok" else r.get("status", "-")[:9]

        print(f"    {row['scenario']:22} {'maxmin':11} {cell(base, 'wall_s', '9.3f'):>9} "
              f"{cell(base, 'makespan_s', '10.4f'):>10} {'':>14} {'':>9} {'':>9}  (baseline)")
        for model, cw in runs.items():
            if model == "maxmin":
                continue
            if "x_maxmin" in cw:
                ratio = f"{cw['x_maxmin']:.2f}x"
            elif "x_maxmin_at_least" in cw:
                ratio = f">{cw['x_maxmin_at_least']:.1f}x"
            else:
                ratio = "-"
            wall = f"{cw['wall_s']:9.3f}" if cw["status"] == "ok" else f">{cw['wall_s']:.0f}s"
            tgt = (f"<= {ENGINE_TARGET_X:g}x maxmin: {ok(cw['ok'])}" if "ok" in cw else "(no target)")
            print(f"    {'':22} {model:11} {wall:>9} {cell(cw, 'makespan_s', '10.4f'):>10} {'ours/maxmin':>14} "
                  f"{base.get('wall_s', float('nan')):9.3f} {ratio:>9}  {tgt}")
        ib = runs["ib-simgrid"]
        if sg["status"] == "ok":
            sg_s = f"{sg['run_s']:9.3f}"
        else:
            sg_s = f">{sg['timeout_s']:g}" if "timeout_s" in sg else "-"
        ratio = (f"{'>' if row['sg_ratio_is_lower_bound'] else ''}{row['sg_ratio']:.2f}x"
                 if row["sg_ratio"] is not None else "-")
        print(f"    {'':22} {'ib-simgrid':11} {cell(ib, 'wall_s', '9.3f'):>9} {cell(ib, 'makespan_s', '10.4f'):>10} "
              f"{'SimGrid IB/ours':>14} {sg_s:>9} {ratio:>9}  >= {SG_TARGET_RATIO:g}x faster than SimGrid: "
              f"{ok(row['sg_ok'])}")
        if sg["status"] == "ok":
            print(f"    {'':22} SimGrid IB makespan {sg['makespan_s']:.4f} s, {sg['time_advances']:,} time advances, "
                  f"{sg['maxrss_MB']:.0f} MB")
        elif sg["status"] != "not run":
            print(f"    {'':22} SimGrid IB: {sg['status']}")
        ag = row.get("agreement")
        if ag:
            line = (f"    {'':22} per-flow vs SimGrid IB: max rel diff {ag['max_rel_diff']:.2e}, "
                    f"{ag['flows_over_1e-6']:,} flows over 1e-6")
            if "stale_flows" in ag:
                line += (f"; SimGrid-stale flows {ag['stale_flows']:,}, differing flows not stale "
                         f"{ag['over_1e-6_not_stale']:,}")
            else:
                line += " (stale-penalty analysis skipped: --flows > --stale-max)"
            print(line)
        bb = row["ib_simgrid_backbone"]
        if bb["status"] == "ok":
            print(f"    {'':22} ib-simgrid with a backbone of {bb['backbone_Bps']:.4g} B/s: {bb['wall_s']:.3f} s, "
                  f"makespan {bb['makespan_s']:.4f} s: {bb['x_no_backbone']:.2f}x ib-simgrid without a backbone "
                  f"(target <= {BACKBONE_TARGET_X:g}x: {ok(bb['ok'])})")
        else:
            print(f"    {'':22} ib-simgrid with a backbone: {bb['status']} (target <= {BACKBONE_TARGET_X:g}x "
                  f"ib-simgrid without: {ok(False)})")
        print(f"    {'':22} trace build + load {row['prep_s']:.3f} s (not timed)")
    print("    ratio vs SimGrid = SimGrid's Engine.run() time / our simulate() time; "
          "SimGrid leaves some IB penalties stale, so per-flow differences are expected there")


# ---------------------------------------------------------------------------------------------
# 4. ring under every model
# ---------------------------------------------------------------------------------------------

def ring_trace(ranks: int, iters: int, nbytes: int) -> dict[str, Any]:
    """Rank r sends ``nbytes`` to r + 1 mod P and receives from r - 1, ``iters`` times."""
    out = []
    for r in range(ranks):
        ops: list[dict[str, Any]] = []
        for k in range(iters):
            ops += [{"op": "isend", "dst": (r + 1) % ranks, "bytes": nbytes, "tag": k},
                    {"op": "irecv", "src": (r - 1) % ranks, "tag": k}, {"op": "waitall"}]
        out.append(ops)
    return {"ranks": out}


def bench_ring(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    p, iters, nbytes = args.ring_ranks, args.ring_iters, args.ring_bytes
    print(f"[4] ring of {p} ranks x {iters} iterations of {nbytes:,} B under {', '.join(RING_MODELS)} ...",
          file=log, flush=True)
    latency = sgp.route_latency_s(args.lat_us)
    platform = commaware.load_platform(sgp.platform_dict(p, latency))
    trace = commaware.load_trace(ring_trace(p, iters, nbytes))
    expected = iters * (latency + nbytes / sgp.LINK_BANDWIDTH)
    models: dict[str, dict[str, Any]] = {}
    for model in RING_MODELS:
        runs = [run_engine(platform, trace, model, args.engine_timeout, log, f"ring {model}")
                for _ in range(max(1, args.repeat))]
        done = [r for r in runs if r["status"] == "ok"]
        if len(done) < len(runs):
            models[model] = runs[-1]
            continue
        models[model] = {"status": "ok", "wall_s": min(r["wall_s"] for r in done),
                         "wall_median_s": statistics.median(r["wall_s"] for r in done),
                         "makespan_s": done[-1]["makespan_s"],
                         "makespan_ok": math.isclose(done[-1]["makespan_s"], expected, rel_tol=1e-9)}
    base = models["maxmin"]
    for model, m in models.items():
        if model != "maxmin" and m["status"] == "ok" and base["status"] == "ok":
            m["x_maxmin"] = m["wall_s"] / base["wall_s"]
            m["ok"] = m["x_maxmin"] <= ENGINE_TARGET_X
    return {"ranks": p, "iters": iters, "bytes": nbytes, "messages": p * iters, "expected_makespan_s": expected,
            "repeat": args.repeat, "models": models}


def print_ring(r: dict[str, Any]) -> None:
    print(f"\n[4] ring: {r['ranks']} ranks, rank n -> n+1 mod P, {r['iters']} iterations of {r['bytes']:,} B "
          f"({r['messages']:,} messages; best of {r['repeat']})")
    print(f"    {'model':11} {'wall_s':>9} {'x maxmin':>9} {'makespan_s':>12}  {'= expected':>10}  target")
    for model, m in r["models"].items():
        if m["status"] != "ok":
            print(f"    {model:11} {m['status']}")
            continue
        x = f"{m['x_maxmin']:.2f}x" if "x_maxmin" in m else "-"
        tgt = f"<= {ENGINE_TARGET_X:g}x maxmin: {ok(m['ok'])}" if "ok" in m else "(baseline)"
        print(f"    {model:11} {m['wall_s']:9.4f} {x:>9} {m['makespan_s']:12.6f}  {ok(m['makespan_ok']):>10}  {tgt}")
    print(f"    expected makespan (no contention, every penalty 1): {r['expected_makespan_s']:.6f} s")


# ---------------------------------------------------------------------------------------------
# summary
# ---------------------------------------------------------------------------------------------

def summary_rows(report: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    rows = []
    s = report.get("static")
    if s:
        rows.append((f"1 static gige {s['comms']:,} comms/{s['nodes']:,} nodes",
                     f"{s['full_s'] * 1e3:.1f} ms (core {s['core_s'] * 1e3:.1f} ms)",
                     f"< {s['target_s'] * 1e3:.0f} ms", ok(s["ok"])))
    m = report.get("myrinet")
    if m:
        worst = max(m["cases"], key=lambda c: c["worst_s"])
        rows.append(("2 exact myrinet, 30-comm components", f"worst {worst['worst_s'] * 1e3:.2f} ms ({worst['case']})",
                     f"< {m['target_s']:g} s", ok(m["ok"])))
    for row in report.get("flows", []):
        runs = row["commaware"]
        for model in ENGINE_MODELS:
            cw = runs[model]
            val = (f"{cw['wall_s']:.3g} s vs maxmin {runs['maxmin'].get('wall_s', float('nan')):.3g} s"
                   + (f" = {cw['x_maxmin']:.2f}x" if "x_maxmin" in cw else f" ({cw['status']})"))
            rows.append((f"3 {row['scenario']} {model}", val, f"<= {ENGINE_TARGET_X:g}x maxmin", ok(cw.get("ok"))))
        sg = row["simgrid_ib"]
        if row["sg_ratio"] is not None:
            val = (f"SimGrid {sg['run_s']:.3g} s / ours {runs['ib-simgrid']['wall_s']:.3g} s = {row['sg_ratio']:.2f}x"
                   if sg["status"] == "ok" else f"> {row['sg_ratio']:.2f}x (SimGrid {sg['status']})")
        else:
            val = f"SimGrid {sg['status']}, ours {runs['ib-simgrid']['status']}"
        rows.append((f"3 {row['scenario']} ib-simgrid vs SimGrid IB", val, f">= {SG_TARGET_RATIO:g}x", ok(row["sg_ok"])))
        bb = row.get("ib_simgrid_backbone")
        if bb:
            val = (f"{bb['wall_s']:.3g} s vs {runs['ib-simgrid']['wall_s']:.3g} s without = {bb['x_no_backbone']:.2f}x"
                   if "x_no_backbone" in bb else bb["status"])
            if "maxmin_x_no_backbone" in bb:
                val += f" (maxmin: {bb['maxmin_x_no_backbone']:.2f}x)"
            rows.append((f"3 {row['scenario']} ib-simgrid with a backbone", val,
                         f"<= {BACKBONE_TARGET_X:g}x without", ok(bb.get("ok"))))
    rg = report.get("ring")
    if rg:
        for model, mm in rg["models"].items():
            if model == "maxmin":
                rows.append((f"4 ring {rg['ranks']} maxmin", f"{mm.get('wall_s', float('nan')) * 1e3:.1f} ms, "
                             f"makespan {mm.get('makespan_s', float('nan')):.6f} s", "(baseline)", ok(mm.get("makespan_ok"))))
                continue
            val = (f"{mm['wall_s'] * 1e3:.1f} ms = {mm['x_maxmin']:.2f}x, makespan {mm['makespan_s']:.6f} s"
                   if "x_maxmin" in mm else mm["status"])
            rows.append((f"4 ring {rg['ranks']} {model}", val, f"<= {ENGINE_TARGET_X:g}x maxmin",
                         ok(mm.get("ok") and mm.get("makespan_ok")) if "ok" in mm else ok(None)))
    return rows


def print_summary(report: dict[str, Any]) -> None:
    rows = summary_rows(report)
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    w2 = max(len(r[2]) for r in rows)
    print("\nsummary")
    print(f"    {'benchmark':{w0}}  {'measured':{w1}}  {'target':{w2}}  verdict")
    for a, b, c, d in rows:
        print(f"    {a:{w0}}  {b:{w1}}  {c:{w2}}  {d}")
    missed = sum(r[3] == "MISSED" for r in rows)
    print(f"result: {'every target met' if not missed else f'{missed} target(s) MISSED'} "
          f"(total wall time {report['wall_s']:.1f} s)")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--quick", action="store_true", help="--flows 1024, --ring-iters 5, fewer repeats and seeds")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the tables (progress on stderr)")
    ap.add_argument("--only", default="1,2,3,4", help="comma-separated benchmarks to run (default 1,2,3,4)")
    ap.add_argument("--seed", type=int, default=1, help="seed of every random scheme and flow list (default 1)")
    ap.add_argument("--repeat", type=int, help="timing repeats, best kept (default 5; --quick 2)")
    ap.add_argument("--comms", type=int, default=10_000, help="[1] communications (default 10000)")
    ap.add_argument("--nodes", type=int, default=1_000, help="[1] nodes (default 1000)")
    ap.add_argument("--myrinet-seeds", type=int, help="[2] random schemes tried per node count (default 50; --quick 10)")
    ap.add_argument("--flows", type=lambda s: [int(x) for x in s.split(",") if x.strip()],
                    help="[3] flow counts, comma-separated (default 16384; --quick 1024)")
    ap.add_argument("--extra-models", type=lambda s: [x for x in s.split(",") if x.strip()], default=[],
                    help="[3] more models to run on the flows, no target (e.g. infiniband,myrinet)")
    ap.add_argument("--size", type=float, default=1e6, help="[3] flow size S in bytes; randsize draws S/10..10S")
    ap.add_argument("--lat-us", type=float, default=sgp.DEFAULT_LAT_US,
                    help="link latency in us; commaware latency = 2x this (default 50)")
    ap.add_argument("--no-simgrid", action="store_true", help="[3] skip SimGrid's IB")
    ap.add_argument("--backbone-x", type=float, default=128.0,
                    help="[3] backbone of the ib-simgrid backbone run, in NIC bandwidths (default 128)")
    ap.add_argument("--sg-timeout", type=float, default=1800.0, help="[3] SimGrid time limit, s (default 1800)")
    ap.add_argument("--engine-timeout", type=float, default=1800.0,
                    help="[3, 4] stop a commaware run after this many s (default 1800)")
    ap.add_argument("--stale-max", type=int, default=1024,
                    help="[3] run simgrid_peer.ib_stale_flows (pure Python, quadratic) up to this many flows")
    ap.add_argument("--ring-ranks", type=int, default=1024, help="[4] ranks (default 1024)")
    ap.add_argument("--ring-iters", type=int, help="[4] iterations (default 20; --quick 5)")
    ap.add_argument("--ring-bytes", type=int, default=MiB, help="[4] message size (default 1 MiB)")
    args = ap.parse_args(argv)
    args.repeat = args.repeat or (2 if args.quick else 5)
    args.myrinet_seeds = args.myrinet_seeds or (10 if args.quick else 50)
    args.flows = args.flows or ([1024] if args.quick else [16384])
    args.ring_iters = args.ring_iters or (5 if args.quick else 20)
    args.only = {x.strip() for x in args.only.split(",")}
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; exit 0 whether or not the targets are met (1 on a failed run)."""
    args = parse_args(argv)
    log = sys.stderr if args.json else sys.stdout
    started = datetime.datetime.now()
    t_start = time.perf_counter()
    sg_ok, sg_why = (False, "--no-simgrid") if args.no_simgrid or "3" not in args.only else sgp.simgrid_available()
    print(f"commaware {commaware.__version__}, interpreter {sys.executable}; SimGrid IB peer: "
          f"{sg_why if not sg_ok else f'{sgp.binary_path()} ' + ' '.join(sgp.IB_FLAGS) + ' --cfg=network/optim:Full'}",
          file=log, flush=True)
    report: dict[str, Any] = {"started": started.isoformat(timespec="seconds"), "host": os.uname().nodename,
                              "cpus": os.cpu_count(), "commaware": commaware.__version__, "simgrid": sg_why,
                              "options": {k: (sorted(v) if isinstance(v, set) else v) for k, v in vars(args).items()}}
    benches: list[tuple[str, str, Callable[[], Any], Callable[[Any], None]]] = [
        ("1", "static", lambda: bench_static(args, log), print_static),
        ("2", "myrinet", lambda: bench_myrinet(args, log), print_myrinet),
        ("3", "flows", lambda: [bench_flows_one(n, args, log, sg_ok) for n in args.flows], print_flows),
        ("4", "ring", lambda: bench_ring(args, log), print_ring),
    ]
    for number, key, run, show in benches:
        if number in args.only:
            report[key] = run()
            if not args.json:
                show(report[key])
    report["wall_s"] = time.perf_counter() - t_start
    report["summary"] = [dict(zip(("benchmark", "measured", "target", "verdict"), r)) for r in summary_rows(report)]
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print_summary(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
