#!/usr/bin/env python3
"""Benchmark of autonomous task farming (paper 000 §4): ``--tasks`` tasks (100,000 by
default) on a seeded random tree of ``--nodes`` nodes (1,000: node k's parent drawn
uniformly among nodes 0..k-1; compute rates, links, interference rates and send limits
drawn at random), every algorithm, best of ``--repeat``. The event loop is in the Rust
core; the time includes the Python call (the tree is validated once, apart). Target:
under 10 s per run. Nothing is asserted: the target is marked ``ok`` or ``MISSED``.

Usage::

    .venv/bin/python benches/bench_taskfarm.py
    .venv/bin/python benches/bench_taskfarm.py --json
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from typing import Any

from common import best, random_tree

from commaware.taskfarm import ALGORITHMS, taskfarm
from commaware.throughput import load_tree

TARGET_S = 10.0


def draw_node(g: random.Random, k: int) -> dict[str, Any]:
    """Node k's fields of the random tree (:func:`common.random_tree`) but its id and parent."""
    d: dict[str, Any] = {"compute_rate": g.uniform(0.5, 5.0), "send_limit_mb_s": g.uniform(5.0, 15.0)}
    if k:
        d.update(link_mb_s=g.uniform(1.0, 12.0), ir_r=g.uniform(0.0, 0.05), ir_s=g.uniform(0.0, 0.05))
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--tasks", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    t0 = time.perf_counter()
    tree = load_tree(random_tree(a.seed, a.nodes, draw_node))
    load_s = time.perf_counter() - t0
    rows = []
    for alg in ALGORITHMS:
        seconds, r = best(lambda alg=alg: taskfarm(tree, alg, tasks=a.tasks, with_bound=False), a.repeat)
        rows.append({"algorithm": alg, "seconds": seconds, "makespan": r.makespan, "throughput": r.throughput,
                     "transfers": r.transfers, "target_s": TARGET_S, "ok": seconds < TARGET_S})
    doc = {"nodes": a.nodes, "tasks": a.tasks, "load_s": load_s, "machine": platform.machine(),
           "python": platform.python_version(), "runs": rows}
    if a.json:
        print(json.dumps(doc))
        return
    print(f"taskfarm: {a.tasks:,} tasks on a {a.nodes:,}-node random tree (tree read in {load_s:.3f} s)")
    for r in rows:
        mark = "ok" if r["ok"] else "MISSED"
        print(f"  {r['algorithm']:>13}: {r['seconds']:.3f} s (target < {TARGET_S:g} s: {mark}); "
              f"makespan {r['makespan']:.1f} s, {r['transfers']:,} transfers")


if __name__ == "__main__":
    main()
