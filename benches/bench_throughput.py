#!/usr/bin/env python3
"""Benchmark of the steady-state throughput bound on trees (paper 000 §3.2).

The multi-port greedy bound (``commaware.throughput.bound(tree, "multi")``) on a seeded
random tree of ``--nodes`` nodes (100,000 by default: node k's parent drawn uniformly
among nodes 0..k-1, compute rates, links, interference rates and half the nodes with a
send limit drawn at random). The tree is read and validated once (``load_tree``, timed
apart); the bound is timed alone, best of ``--repeat``. Target: under 1 s. Also shown,
without a target: the single-port bound, a 100,000-deep chain (the worst case for depth)
and, with ``--lp``, the LP optimum through scipy (the check that the greedy equals it).

Nothing is asserted (this is not a test): the target is marked ``ok`` or ``MISSED``.

Usage::

    .venv/bin/python benches/bench_throughput.py
    .venv/bin/python benches/bench_throughput.py --lp --json > throughput.json
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from typing import Any

from common import best, random_tree

from commaware.throughput import bound, load_tree, lp_bound

TARGET_S = 1.0


def draw_node(g: random.Random, k: int) -> dict[str, Any]:
    """Node k's fields of the random tree (:func:`common.random_tree`) but its id and parent."""
    d: dict[str, Any] = {"compute_rate": g.uniform(0.1, 10)}
    if k:
        d.update(link_mb_s=g.uniform(0.1, 20), ir_r=g.uniform(0, 0.1), ir_s=g.uniform(0, 0.1) * g.choice([0.1, 1, 3]))
    if g.random() < 0.5:
        d["send_limit_mb_s"] = g.uniform(0.5, 30)
    return d


def chain(n: int) -> dict[str, Any]:
    nodes = [{"id": "n0", "parent": None, "compute_rate": 1.0}]
    nodes += [{"id": f"n{k}", "parent": f"n{k - 1}", "compute_rate": 1.0, "link_mb_s": 1e9, "ir_r": 0.0, "ir_s": 0.0}
              for k in range(1, n)]
    return {"task_mb": 1.0, "nodes": nodes}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--lp", action="store_true", help="also solve the LP (scipy HiGHS) and compare")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()

    doc = random_tree(args.seed, args.nodes, draw_node)
    t0 = time.perf_counter()
    tree = load_tree(doc)
    load_s = time.perf_counter() - t0
    multi_s, multi = best(lambda: bound(tree, "multi"), args.repeat)
    single_s, single = best(lambda: bound(tree, "single"), args.repeat)
    deep = load_tree(chain(args.nodes))
    chain_s, deep_r = best(lambda: bound(deep, "multi"), args.repeat)
    result: dict[str, Any] = {
        "nodes": args.nodes, "seed": args.seed, "repeat": args.repeat, "python": platform.python_version(),
        "load_s": load_s,
        "multi": {"seconds": multi_s, "throughput": multi.throughput, "target_s": TARGET_S,
                  "ok": multi_s < TARGET_S},
        "single": {"seconds": single_s, "throughput": single.throughput},
        "chain": {"seconds": chain_s, "throughput": deep_r.throughput},
    }
    if args.lp:
        lp_s, lp = best(lambda: lp_bound(tree, "multi"), 1)
        result["lp"] = {"seconds": lp_s, "throughput": lp.throughput,
                        "rel_diff": abs(lp.throughput - multi.throughput) / max(abs(lp.throughput), 1e-300)}
    if args.json:
        print(json.dumps(result))
        return 0
    mark = "ok" if result["multi"]["ok"] else "MISSED"
    print(f"random tree, {args.nodes:,} nodes (seed {args.seed}), best of {args.repeat}; load+validate {load_s:.3f} s")
    print(f"  multi-port greedy bound : {multi_s:.3f} s  (target < {TARGET_S:g} s: {mark})  "
          f"throughput {multi.throughput:.6g} tasks/s")
    print(f"  single-port greedy bound: {single_s:.3f} s  throughput {single.throughput:.6g} tasks/s")
    print(f"  {args.nodes:,}-deep chain, multi: {chain_s:.3f} s  throughput {deep_r.throughput:.6g} tasks/s")
    if args.lp:
        lp_r = result["lp"]
        print(f"  LP (scipy HiGHS), multi : {lp_r['seconds']:.3f} s  optimum {lp_r['throughput']:.6g}  "
              f"relative difference {lp_r['rel_diff']:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
