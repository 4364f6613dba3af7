#!/usr/bin/env python3
"""Benchmark of the Myrinet model in the engine (issues 29 and 40), before and after in one run.

1. **LU-like trace**: ``benches/peers/lu_stencil.c`` (an NPB-LU-like SSOR pattern: pipelined
   wavefront sweeps of small messages on a 4x4 rank grid, a halo exchange and an allreduce
   per iteration) is built with ``smpicc`` and traced once with ``smpirun -trace-ti`` into a
   temporary folder (nothing committed), then replayed on 8 hosts of 2 cores with
   ``--placement random`` under ``maxmin`` and ``myrinet``. Target: the myrinet wall time
   within 3x of maxmin's.
2. **NPB LU class W on 16 ranks** (with ``--npb DIR``, NPB 3.4 MPI's public sources): built
   with ``smpiff`` and traced with ``smpirun -trace-ti`` (into ``--work``, reused), replayed as
   part 1. Target: as part 1.
3. **2,048 random flows on 1,024 hosts** (``simgrid_peer.make_flows("random", ...)``, seeded),
   all at t = 0, under ``myrinet``. Target: under 10 s.
4. **Estimator**: ``commaware.sharing.penalties`` on 1,000 random communications among 300
   nodes (seeded; one large component): wall time, the count's log10, and the largest error
   of a penalty (relative, 95 %) with whether the chains met the tolerance.

Parts 1-3 replay under ``myrinet`` twice, with the work bound ``steps`` given by ``--steps`` and
with twice that (and another seed): a model that converged gives the same makespan within its
``tolerance``; each run prints its estimates stopped by the bound and their largest error.
``--save`` writes the results, with the commit, to ``benches/results/myrinet-<time>.json``.

Each part runs in a fresh interpreter per build: ``--before DIR`` names the ``python/`` folder of
another build (a checkout of main with its ``_core.abi3.so``), put first on ``PYTHONPATH`` for the
"before" column; "after" is this checkout's ``python/``. Both columns are measured in the same
run, one after the other. Nothing is asserted; each target is marked ``ok`` or ``MISSED``.

Usage::

    .venv/bin/python benches/bench_myrinet.py --before /path/to/main/python
    .venv/bin/python benches/bench_myrinet.py --skip lu          # no SMPI needed
    .venv/bin/python benches/bench_myrinet.py --npb ~/NPB3.4-MPI --work /tmp/bm --save
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "peers"))
from common import run_child, save_results  # noqa: E402

LU_RATIO_TARGET = 3.0
FLOWS_TARGET_S = 10.0
PARTS = ("lu", "npb-lu", "flows", "estimator")


def platform(hosts: int, cores: int) -> dict[str, Any]:
    return {"cluster": {"count": hosts, "speed": 1e9, "cores": cores, "prefix": "n"},
            "network": {"bandwidth": 1.25e8, "latency": 5e-5, "memory_bandwidth": 2e9}}


# ----------------------------------------------------------------------------------------
# Child side: one part, with whichever commaware PYTHONPATH gives; prints `CHILD {json}`.

def timed_simulate(plat: Any, trace: Any, model: str, **kw: Any) -> dict[str, Any]:
    """Wall time, makespan and (myrinet) the estimates' counts of one replay."""
    import commaware
    t0 = time.perf_counter()
    res = commaware.simulate(plat, trace, model=model, record_messages=False, record_timeline=False, **kw)
    out = {"wall_s": time.perf_counter() - t0, "makespan_s": float(res.makespan)}
    counts = getattr(res, "penalty_counts", None)  # (older builds have none)
    if counts:
        out["penalty_counts"] = counts
    return out


def myrinet_twice(plat: Any, trace: Any, steps: int, **kw: Any) -> dict[str, Any]:
    """`myrinet` with the work bound `steps`, and with twice that and another seed."""
    one = timed_simulate(plat, trace, "myrinet", params={"steps": steps}, **kw)
    two = timed_simulate(plat, trace, "myrinet", params={"steps": 2 * steps, "seed": 1}, **kw)
    return {"myrinet": one, "myrinet_doubled": two,
            "doubled_relative_change": abs(two["makespan_s"] / one["makespan_s"] - 1.0)}


def child_lu(index: str, seed: int, steps: int) -> dict[str, Any]:
    import commaware
    trace = commaware.load_trace(index, format="ti")
    plat = commaware.load_platform(platform(8, 2))
    out: dict[str, Any] = {"maxmin": timed_simulate(plat, trace, "maxmin", placement="random", seed=seed)}
    out.update(myrinet_twice(plat, trace, steps, placement="random", seed=seed))
    out["ratio"] = out["myrinet"]["wall_s"] / out["maxmin"]["wall_s"]
    return out


def child_flows(seed: int, steps: int) -> dict[str, Any]:
    import commaware
    import simgrid_peer as sgp
    hosts, n = 1024, 2048
    flows = sgp.make_flows("random", hosts, n, 1e6, seed)
    plat = commaware.load_platform(sgp.platform_dict(hosts, 1e-5))
    trace = commaware.load_trace(sgp.flows_to_trace(hosts, flows))
    return myrinet_twice(plat, trace, steps)


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
    return {"wall_s": wall, "comms": len(big["comms"]), "log10_sets": big.get("state_sets_log10"),
            "penalty_error": big.get("penalty_error"), "converged": big.get("converged")}


def child(part: str, args: argparse.Namespace) -> None:
    import commaware
    t0 = time.perf_counter()
    if part in ("lu", "npb-lu"):
        out = child_lu(args.trace, args.seed, args.steps)
    elif part == "flows":
        out = child_flows(args.seed, args.steps)
    else:
        out = child_estimator(args.seed)
    out["commaware"] = str(Path(commaware.__file__).parent)
    out["child_s"] = time.perf_counter() - t0
    print("CHILD " + json.dumps(out), flush=True)


# ----------------------------------------------------------------------------------------
# Parent side.

def run(part: str, pythonpath: Path, args: argparse.Namespace, extra: list[str]) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    return run_child(__file__, [part, "--seed", str(args.seed), "--steps", str(args.steps), *extra], ROOT,
                     args.timeout, env=env)


def estimates(r: dict[str, Any]) -> str:
    c = r.get("penalty_counts")
    if c is None or "bounded" not in c:
        return "this build does not report its estimates"
    error = "unbounded" if c["largest_error"] is None else f"±{100 * c['largest_error']:.1f} %"
    return f"{c['estimated']} of {c['counts']} counts estimated, {c['bounded']} stopped by steps, largest error {error}"


def myrinet_lines(r: dict[str, Any], steps: int) -> str:
    one, two = r["myrinet"], r["myrinet_doubled"]
    return (f"\n           steps {steps}: makespan {one['makespan_s']:.6g} s ({estimates(one)})"
            f"\n           steps {2 * steps}, seed 1: makespan {two['makespan_s']:.6g} s, {two['wall_s']:.2f} s wall "
            f"({estimates(two)}); makespan moved {r['doubled_relative_change']:.2%}")


def show(label: str, r: dict[str, Any], part: str, steps: int) -> str:
    if "status" in r:
        return f"    {label:6s} {r['status']}"
    if part in ("lu", "npb-lu"):
        return (f"    {label:6s} maxmin {r['maxmin']['wall_s']:.3f} s, myrinet {r['myrinet']['wall_s']:.3f} s: "
                f"{r['ratio']:.2f}x (target <= {LU_RATIO_TARGET:g}: "
                f"{'ok' if r['ratio'] <= LU_RATIO_TARGET else 'MISSED'}); maxmin makespan "
                f"{r['maxmin']['makespan_s']:.6g} s" + myrinet_lines(r, steps))
    if part == "flows":
        wall = r["myrinet"]["wall_s"]
        return (f"    {label:6s} {wall:.3f} s (target < {FLOWS_TARGET_S:g} s: "
                f"{'ok' if wall < FLOWS_TARGET_S else 'MISSED'})" + myrinet_lines(r, steps))
    return (f"    {label:6s} {r['wall_s']:.3f} s on a {r['comms']}-communication component: log10 count "
            f"{r['log10_sets']}, largest penalty error {r.get('penalty_error')}, converged {r.get('converged')}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--before", type=Path, help="python/ folder of the build to compare with (e.g. main's)")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip (lu, npb-lu, flows, estimator)")
    ap.add_argument("--steps", type=int, default=1 << 16,
                    help="myrinet's work bound per estimate (65,536; also run at twice that)")
    ap.add_argument("--npb", type=Path, help="NPB 3.4 MPI sources, for part 2 (skipped without)")
    ap.add_argument("--work", type=Path, help="folder to build and trace NPB in (kept; a temporary one by default)")
    ap.add_argument("--save", action="store_true", help="also write benches/results/myrinet-<time>.json")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per part and build")
    ap.add_argument("--child", choices=PARTS, help=argparse.SUPPRESS)
    ap.add_argument("--trace", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args)
        return 0
    skip = set(filter(None, args.skip.split(",")))
    if not args.npb:
        skip.add("npb-lu")
    builds = [("before", args.before.resolve())] if args.before else []
    builds.append(("after", ROOT / "python"))
    started = datetime.now(timezone.utc)
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_myrinet_") as tmp:
        work = (args.work or Path(tmp)).resolve()
        for k, part in enumerate(PARTS, 1):
            if part in skip:
                continue
            extra: list[str] = []
            if part == "lu":
                import smpi_replay
                t0 = time.perf_counter()
                index = smpi_replay.trace_program(ROOT / "benches" / "peers" / "lu_stencil.c", 16, platform(16, 1),
                                                  work / "lu")
                print(f"[{k}] lu_stencil.c traced on 16 ranks in {time.perf_counter() - t0:.1f} s; replayed on 8 hosts "
                      f"x 2 cores, --placement random, seed {args.seed}", flush=True)
                extra = ["--trace", str(index)]
            elif part == "npb-lu":
                import smpi_replay
                from bench_smpi_defaults import build_npb
                t0 = time.perf_counter()
                binary = build_npb(args.npb.resolve(), work, ["lu"], "W")["lu"]
                index = smpi_replay.trace_binary(binary, 16, platform(16, 1), work / "npb-lu-W-16", timeout=1800)
                print(f"[{k}] NPB LU class W built and traced on 16 ranks in {time.perf_counter() - t0:.1f} s; "
                      f"replayed on 8 hosts x 2 cores, --placement random, seed {args.seed}", flush=True)
                extra = ["--trace", str(index)]
            elif part == "flows":
                print(f"[{k}] 2,048 random flows on 1,024 hosts under myrinet (seed {args.seed})", flush=True)
            else:
                print(f"[{k}] estimator on 1,000 random communications among 300 nodes (seed {args.seed})", flush=True)
            for label, path in builds:
                r = run(part, path, args, extra)
                results.setdefault(part, {})[label] = r
                print(show(label, r, part, args.steps), flush=True)
    if args.save:
        out = save_results("myrinet", started, {"seed": args.seed, "steps": args.steps, "parts": results})
        print(f"wrote {out.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
