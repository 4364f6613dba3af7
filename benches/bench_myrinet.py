#!/usr/bin/env python3
"""Benchmark of the Myrinet model in the engine (issue 29, item 2), before and after in one run.

1. **LU-like trace**: ``benches/peers/lu_stencil.c`` (an NPB-LU-like SSOR pattern: pipelined
   wavefront sweeps of small messages on a 4x4 rank grid, a halo exchange and an allreduce
   per iteration; NPB's sources are not available offline) is built with ``smpicc`` and traced
   once with ``smpirun -trace-ti`` into a temporary folder (nothing committed), then replayed on
   8 hosts of 2 cores with ``--placement random`` under ``maxmin`` and ``myrinet``. Target: the
   myrinet wall time within 3x of maxmin's.
2. **2,048 random flows on 1,024 hosts** (``simgrid_peer.make_flows("random", ...)``, seeded),
   all at t = 0, under ``myrinet``. Target: under 10 s.
3. **Estimator**: ``commaware.sharing.penalties`` on 1,000 random communications among 300
   nodes (seeded; one large component): wall time, effective sample size, the count's log10 and
   whether the estimate was used (``estimator_failed`` otherwise).

Each part runs in a fresh interpreter per build: ``--before DIR`` names the ``python/`` folder of
another build (a checkout of main with its ``_core.abi3.so``), put first on ``PYTHONPATH`` for the
"before" column; "after" is this checkout's ``python/``. Both columns are measured in the same
run, one after the other. Nothing is asserted; each target is marked ``ok`` or ``MISSED``.

Usage::

    .venv/bin/python benches/bench_myrinet.py --before /path/to/main/python
    .venv/bin/python benches/bench_myrinet.py --skip lu          # no SMPI needed
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "peers"))
from common import run_child  # noqa: E402

LU_RATIO_TARGET = 3.0
FLOWS_TARGET_S = 10.0
PARTS = ("lu", "flows", "estimator")


def platform(hosts: int, cores: int) -> dict[str, Any]:
    return {"cluster": {"count": hosts, "speed": 1e9, "cores": cores, "prefix": "n"},
            "network": {"bandwidth": 1.25e8, "latency": 5e-5, "memory_bandwidth": 2e9}}


# ----------------------------------------------------------------------------------------
# Child side: one part, with whichever commaware PYTHONPATH gives; prints `CHILD {json}`.

def timed_simulate(plat: Any, trace: Any, model: str, **kw: Any) -> tuple[float, Any]:
    import commaware
    t0 = time.perf_counter()
    res = commaware.simulate(plat, trace, model=model, record_messages=False, record_timeline=False, **kw)
    return time.perf_counter() - t0, res


def child_lu(index: str, seed: int) -> dict[str, Any]:
    import commaware
    trace = commaware.load_trace(index, format="ti")
    plat = commaware.load_platform(platform(8, 2))
    out: dict[str, Any] = {}
    for model in ("maxmin", "myrinet"):
        wall, res = timed_simulate(plat, trace, model, placement="random", seed=seed)
        out[model] = {"wall_s": wall, "makespan_s": float(res.makespan)}
    out["ratio"] = out["myrinet"]["wall_s"] / out["maxmin"]["wall_s"]
    return out


def child_flows(seed: int) -> dict[str, Any]:
    import commaware
    import simgrid_peer as sgp
    hosts, n = 1024, 2048
    flows = sgp.make_flows("random", hosts, n, 1e6, seed)
    plat = commaware.load_platform(sgp.platform_dict(hosts, 1e-5))
    trace = commaware.load_trace(sgp.flows_to_trace(hosts, flows))
    wall, res = timed_simulate(plat, trace, "myrinet")
    return {"wall_s": wall, "makespan_s": float(res.makespan)}


def child_estimator(seed: int) -> dict[str, Any]:
    from commaware import sharing
    rng = random.Random(seed)
    nodes, n = 300, 1000
    comms = []
    while len(comms) < n:
        s, d = rng.randrange(nodes), rng.randrange(nodes)
        if s != d:
            comms.append({"id": f"c{len(comms)}", "src": s, "dst": d})
    t0 = time.perf_counter()
    doc = sharing.penalties({"comms": comms}, "myrinet").to_dict()
    wall = time.perf_counter() - t0
    big = max(doc["components"], key=lambda c: len(c["comms"]))
    return {"wall_s": wall, "comms": len(big["comms"]), "effective_samples": big.get("effective_samples"),
            "log10_sets": big.get("state_sets_log10"), "estimator_failed": bool(doc.get("estimator_failed"))}


def child(part: str, args: argparse.Namespace) -> None:
    import commaware
    t0 = time.perf_counter()
    if part == "lu":
        out = child_lu(args.trace, args.seed)
    elif part == "flows":
        out = child_flows(args.seed)
    else:
        out = child_estimator(args.seed)
    out["commaware"] = str(Path(commaware.__file__).parent)
    out["child_s"] = time.perf_counter() - t0
    print("CHILD " + json.dumps(out), flush=True)


# ----------------------------------------------------------------------------------------
# Parent side.

def run(part: str, pythonpath: Path, args: argparse.Namespace, extra: list[str]) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    return run_child(__file__, [part, "--seed", str(args.seed), *extra], ROOT, args.timeout, env=env)


def show(label: str, r: dict[str, Any], part: str) -> str:
    if "status" in r:
        return f"    {label:6s} {r['status']}"
    if part == "lu":
        return (f"    {label:6s} maxmin {r['maxmin']['wall_s']:.3f} s, myrinet {r['myrinet']['wall_s']:.3f} s: "
                f"{r['ratio']:.2f}x (target <= {LU_RATIO_TARGET:g}: "
                f"{'ok' if r['ratio'] <= LU_RATIO_TARGET else 'MISSED'}); makespans {r['maxmin']['makespan_s']:.6g} / "
                f"{r['myrinet']['makespan_s']:.6g} s")
    if part == "flows":
        return (f"    {label:6s} {r['wall_s']:.3f} s, makespan {r['makespan_s']:.6g} s "
                f"(target < {FLOWS_TARGET_S:g} s: {'ok' if r['wall_s'] < FLOWS_TARGET_S else 'MISSED'})")
    return (f"    {label:6s} {r['wall_s']:.3f} s on a {r['comms']}-communication component: effective sample size "
            f"{r['effective_samples']}, log10 count {r['log10_sets']}, estimator_failed {r['estimator_failed']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--before", type=Path, help="python/ folder of the build to compare with (e.g. main's)")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip (lu, flows, estimator)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per part and build")
    ap.add_argument("--child", choices=PARTS, help=argparse.SUPPRESS)
    ap.add_argument("--trace", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args)
        return 0
    skip = set(filter(None, args.skip.split(",")))
    builds = [("before", args.before.resolve())] if args.before else []
    builds.append(("after", ROOT / "python"))
    with tempfile.TemporaryDirectory(prefix="bench_myrinet_") as tmp:
        for k, part in enumerate(PARTS, 1):
            if part in skip:
                continue
            extra: list[str] = []
            if part == "lu":
                import smpi_replay
                t0 = time.perf_counter()
                index = smpi_replay.trace_program(ROOT / "benches" / "peers" / "lu_stencil.c", 16, platform(16, 1),
                                                  Path(tmp) / "lu")
                print(f"[1] lu_stencil.c traced on 16 ranks in {time.perf_counter() - t0:.1f} s; replayed on 8 hosts "
                      f"x 2 cores, --placement random, seed {args.seed}", flush=True)
                extra = ["--trace", str(index)]
            elif part == "flows":
                print(f"[2] 2,048 random flows on 1,024 hosts under myrinet (seed {args.seed})", flush=True)
            else:
                print(f"[3] estimator on 1,000 random communications among 300 nodes (seed {args.seed})", flush=True)
            for label, path in builds:
                print(show(label, run(part, path, args, extra), part), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
