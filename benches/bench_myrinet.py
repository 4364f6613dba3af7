#!/usr/bin/env python3
"""Benchmark of the Myrinet model in the engine (issue 29, item 2).

1. **LU-like trace**: ``benches/peers/lu_stencil.c`` (an NPB-LU-like SSOR pattern: pipelined
   wavefront sweeps of small messages on a 4x4 rank grid, a halo exchange and an allreduce
   per iteration; NPB's sources are not available offline) is built with ``smpicc`` and traced
   once with ``smpirun -trace-ti`` into a temporary folder (nothing committed), then replayed on
   8 hosts of 2 cores with ``--placement random`` under ``maxmin`` and ``myrinet``. Target: the
   myrinet wall time within 3x of maxmin's.
2. **2,048 random flows on 1,024 hosts** (``simgrid_peer.make_flows("random", ...)``, seeded),
   all at t = 0, under ``myrinet``. Target: under 10 s.
3. **Estimator**: the effective sample size of the Myrinet estimator on one random connected
   component of 1,000 communications (``commaware.sharing.penalties``), against the number of
   samples.

Nothing is asserted; each target is marked ``ok`` or ``MISSED``.

Usage::

    .venv/bin/python benches/bench_myrinet.py [--iters 50] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import commaware

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "peers"))
import simgrid_peer as sgp  # noqa: E402
import smpi_replay  # noqa: E402

LU_RATIO_TARGET = 3.0
FLOWS_TARGET_S = 10.0


def platform(hosts: int, cores: int) -> dict[str, Any]:
    return {"cluster": {"count": hosts, "speed": 1e9, "cores": cores, "prefix": "n"},
            "network": {"bandwidth": 1.25e8, "latency": 5e-5, "memory_bandwidth": 2e9}}


def timed_simulate(plat: Any, trace: Any, model: str, **kw: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    res = commaware.simulate(plat, trace, model=model, record_messages=False, record_timeline=False, **kw)
    return time.perf_counter() - t0, res


def bench_lu(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench_myrinet_") as tmp:
        t0 = time.perf_counter()
        index = smpi_replay.trace_program(ROOT / "benches" / "peers" / "lu_stencil.c", 16, platform(16, 1),
                                          Path(tmp) / "lu")
        print(f"[1] traced lu_stencil.c on 16 ranks in {time.perf_counter() - t0:.1f} s", flush=True)
        trace = commaware.load_trace(index, format="ti")
        plat = commaware.load_platform(platform(8, 2))
        out: dict[str, Any] = {}
        for model in ("maxmin", "myrinet"):
            wall, res = timed_simulate(plat, trace, model, placement="random", seed=args.seed)
            out[model] = {"wall_s": wall, "makespan_s": float(res.makespan)}
            print(f"    {model:8s} wall {wall:8.3f} s   makespan {res.makespan:.6g} s", flush=True)
    ratio = out["myrinet"]["wall_s"] / out["maxmin"]["wall_s"]
    print(f"    myrinet / maxmin = {ratio:.2f}  (target <= {LU_RATIO_TARGET:g}: "
          f"{'ok' if ratio <= LU_RATIO_TARGET else 'MISSED'})", flush=True)
    out["ratio"] = ratio
    return out


def bench_flows(args: argparse.Namespace) -> dict[str, Any]:
    hosts, n = 1024, 2048
    flows = sgp.make_flows("random", hosts, n, 1e6, args.seed)
    plat = commaware.load_platform(sgp.platform_dict(hosts, 1e-5))
    trace = commaware.load_trace(sgp.flows_to_trace(hosts, flows))
    wall, res = timed_simulate(plat, trace, "myrinet")
    print(f"[2] {n} random flows on {hosts} hosts under myrinet: wall {wall:.3f} s, makespan {res.makespan:.6g} s "
          f"(target < {FLOWS_TARGET_S:g} s: {'ok' if wall < FLOWS_TARGET_S else 'MISSED'})", flush=True)
    return {"wall_s": wall, "makespan_s": float(res.makespan)}


def bench_estimator(args: argparse.Namespace) -> dict[str, Any]:
    import random
    rng = random.Random(args.seed)
    nodes, n = 300, 1000
    while True:
        comms = []
        while len(comms) < n:
            s, d = rng.randrange(nodes), rng.randrange(nodes)
            if s != d:
                comms.append({"src": s, "dst": d})
        scheme = {"nodes": nodes, "communications": comms}
        t0 = time.perf_counter()
        rep = commaware.sharing.penalties(scheme, "myrinet")
        wall = time.perf_counter() - t0
        comps = rep.components if hasattr(rep, "components") else rep["components"]
        big = max(comps, key=lambda c: len(c["comms"]) if isinstance(c, dict) else len(c.comms))
        break
    print(f"[3] estimator on {n} communications among {nodes} nodes: {wall:.3f} s; largest component "
          f"{big}", flush=True)
    return {"wall_s": wall}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skip", default="", help="comma-separated parts to skip (lu, flows, estimator)")
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    if "lu" not in skip:
        bench_lu(args)
    if "flows" not in skip:
        bench_flows(args)
    if "estimator" not in skip:
        bench_estimator(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
