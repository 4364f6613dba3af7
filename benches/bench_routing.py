#!/usr/bin/env python3
"""Routing benchmark (issue 44, item 4): what choosing each flow's route costs, against the same
replay under ``minimal`` (SimGrid's static routes), measured in the same run.

On the 1,024-host topologies of ``bench_topology.py`` (fat tree ``2;32,32;1,32;1,1``, dragonfly
``8,1;4,1;8,1;4``, torus ``16,8,8``) it replays the same 16,384 flows (random pairs, S/10..10S
bytes, all posted at t = 0, seeded, drawn by ``tests/peers/simgrid_peer.py``'s ``make_flows``) under
``maxmin`` with each routing the topology takes, in process, the trace loaded once. Reported per
row: the replay's wall seconds (best of ``--repeat``), its ratio to ``minimal``'s on the same
topology (target: at most 2), the makespan and the engine's events. The process exits 1 when a
ratio is above 2.

Usage::

    .venv/bin/python benches/bench_routing.py                # 1,024 hosts, 16,384 flows
    .venv/bin/python benches/bench_routing.py --flows 2048 --repeat 1
    .venv/bin/python benches/record.py routing bench_routing.py   # kept for the docs
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "peers"))
import simgrid_peer as sgp  # noqa: E402
from common import best  # noqa: E402

import commaware  # noqa: E402

#: (name, JSON topology, routings): the topologies of bench_topology.py's full run.
TOPOLOGIES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("fat_tree", {"kind": "fat_tree", "down": [32, 32], "up": [1, 32]}, ["minimal", "ecmp", "adaptive"]),
    ("dragonfly", {"kind": "dragonfly", "groups": [8, 1], "chassis": [4, 1], "routers": [8, 1], "nodes": 4,
                   "routing": "minimal"}, ["minimal", "valiant", "ugal-g", "ugal-l"]),
    ("torus", {"kind": "torus", "dims": [16, 8, 8]}, ["minimal", "valiant"]),
]
HOSTS = 1024
TARGET = 2.0


def flows_trace(flows: list[tuple[int, int, int]]) -> dict[str, Any]:
    """One isend and one irecv per flow, all posted at t = 0, then a waitall per rank."""
    ranks: list[list[dict[str, Any]]] = [[] for _ in range(HOSTS)]
    for i, (s, d, nbytes) in enumerate(flows):
        ranks[d].append({"op": "irecv", "src": s, "tag": i})
    for i, (s, d, nbytes) in enumerate(flows):
        ranks[s].append({"op": "isend", "dst": d, "bytes": nbytes, "tag": i})
    for r in ranks:
        r.append({"op": "waitall"})
    return {"ranks": ranks}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, default=16384, help="number of flows (default 16,384)")
    ap.add_argument("--seed", type=int, default=1, help="flow generator seed (default 1)")
    ap.add_argument("--size", type=float, default=1e6, help="flow size S in bytes; sizes are drawn in S/10..10S")
    ap.add_argument("--repeat", type=int, default=3, help="replays per row, the fastest kept (default 3)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = ap.parse_args()

    trace = commaware.load_trace(flows_trace(sgp.make_flows("randsize", HOSTS, args.flows, args.size, args.seed)))
    rows = []
    for name, topology, routings in TOPOLOGIES:
        platform = commaware.load_platform({"cluster": {"count": HOSTS, "speed": 1e9},
                                            "network": {"bandwidth": 1.25e9, "latency": 1e-6, "topology": topology}})
        base = None
        for routing in routings:
            print(f"bench_routing: {name} {routing}", file=sys.stderr)
            seconds, result = best(lambda: commaware.simulate(platform, trace, routing=routing, record_messages=False,
                                                              record_timeline=False), args.repeat)
            replay = result.replay_seconds
            base = replay if routing == "minimal" else base
            rows.append({"topology": name, "routing": routing, "replay_s": replay, "call_s": seconds,
                         "x_minimal": replay / base, "makespan_s": result.makespan, "events": result.events})
    worst = max(r["x_minimal"] for r in rows)
    summary = {"hosts": HOSTS, "flows": args.flows, "seed": args.seed, "size": args.size, "target_x_minimal": TARGET,
               "worst_x_minimal": worst, "rows": rows}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{HOSTS} hosts, {args.flows:,} flows (randsize, seed {args.seed}), maxmin; replay seconds, best of {args.repeat}")
        print(f"{'topology':<10} {'routing':<9} {'replay s':>9} {'x minimal':>10} {'makespan s':>11} {'events':>9}")
        for r in rows:
            print(f"{r['topology']:<10} {r['routing']:<9} {r['replay_s']:>9.3f} {r['x_minimal']:>10.2f} "
                  f"{r['makespan_s']:>11.5f} {r['events']:>9,}")
        print(f"worst ratio to minimal: {worst:.2f} (target <= {TARGET})")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
