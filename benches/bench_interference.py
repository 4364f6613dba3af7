#!/usr/bin/env python3
"""Cost of interference (paper 000) in the engine: a 1,024-rank replay with it on and off.

Every rank overlaps a ring exchange with computation, ``--iters`` times: isend 1 MiB to
rank + 1, irecv from rank - 1, compute, waitall. The same trace runs on a 1,024-host cluster
without interference, and with every host's rates set to the paper's averages (IR_r 0.052,
IR_s 0.034 per MB/s, §2.3-2.4) plus the §2.5 synergy form. Target: interference on within
1.5x the time of interference off (best of ``--repeat`` each, same run). The makespans must
differ (the interference slows the overlapped computation), which is checked too.

Usage::

    .venv/bin/python benches/bench_interference.py [--ranks 1024] [--iters 20] [--json]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from common import best

import commaware

TARGET_X = 1.5
INTERFERENCE = {"recv": 0.052, "send": 0.034, "synergy": {"constant": 0.9542, "recv": 0.0427, "send": 0.0265}}


def platform(ranks: int, interference: bool) -> dict[str, Any]:
    cluster: dict[str, Any] = {"count": ranks, "speed": 1e9}
    if interference:
        cluster["interference"] = INTERFERENCE
    return {"cluster": cluster, "network": {"bandwidth": 1.25e8, "latency": 5e-5}}


def trace(ranks: int, iters: int, size: int, flops: float) -> dict[str, Any]:
    ops: list[list[dict[str, Any]]] = []
    for r in range(ranks):
        mine: list[dict[str, Any]] = []
        for i in range(iters):
            mine += [{"op": "isend", "dst": (r + 1) % ranks, "bytes": size, "tag": i},
                     {"op": "irecv", "src": (r - 1) % ranks, "tag": i},
                     {"op": "compute", "flops": flops}, {"op": "waitall"}]
        ops.append(mine)
    return {"ranks": ops}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tr = commaware.load_trace(trace(args.ranks, args.iters, 2**20, 1e7))
    runs = {}
    for on in (False, True):
        p = commaware.load_platform(platform(args.ranks, on))
        wall, res = best(lambda p=p: commaware.simulate(p, tr, record_messages=False, record_timeline=False), args.repeat)
        runs["on" if on else "off"] = {"wall_s": wall, "makespan_s": res.makespan}
    ratio = runs["on"]["wall_s"] / runs["off"]["wall_s"]
    slowed = runs["on"]["makespan_s"] > runs["off"]["makespan_s"]
    report = {"ranks": args.ranks, "iters": args.iters, "messages": args.ranks * args.iters, **runs,
              "ratio": ratio, "target_x": TARGET_X, "ok": ratio <= TARGET_X and slowed, "makespan_slowed": slowed}
    if args.json:
        print(json.dumps(report))
        return
    print(f"{args.ranks}-rank ring with overlapped compute, {args.iters} iterations ({report['messages']:,} messages)")
    for k in ("off", "on"):
        print(f"  interference {k:3}  wall {runs[k]['wall_s']:.4f} s  makespan {runs[k]['makespan_s']:.6f} s")
    print(f"  on / off = {ratio:.2f}x (target <= {TARGET_X}x): {'ok' if ratio <= TARGET_X else 'MISSED'}; "
          f"makespan slowed by interference: {'yes' if slowed else 'NO'}")


if __name__ == "__main__":
    main()
