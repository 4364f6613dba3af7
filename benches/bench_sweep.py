#!/usr/bin/env python3
"""Benchmark of `commaware sweep`: throughput of many runs, and the cost of the results store.

The same runs (a grid over seeds of one sweepable command) are done five ways, each timed
wall clock from start to the last row:

1. **plain loop**: the command's function called in a Python loop (no store): the reference.
2. **ProcessPoolExecutor**: `executor.map` over the cores with a chunk size like our sweep's
   (no store).
3. **sweep --serial**: `commaware.experiments.sweep.run(serial=True)`: the loop plus one Parquet file per
   run, written atomically, and the compaction at the end.
4. **sweep on Dask**: `commaware.experiments.sweep.run()` on a new LocalCluster of one process per core,
   its start and stop included (also shown alone); and `sweep.run(scheduler=...)` on a running
   LocalCluster whose workers have done one small sweep already (a long-lived cluster).
5. **store only**: `Store.write_row` of a typical row, N times: the store's cost per run.

Two kinds of runs: *tiny* (cosched.run, batch-easy on 20 jobs: well under a millisecond) and
*small* (cosched.run, nls on 10 jobs: tens of milliseconds), where parallel work pays.

Usage::

    .venv/bin/python benches/bench_sweep.py            # 2,000 tiny and 200 small runs
    .venv/bin/python benches/bench_sweep.py --quick    # 300 tiny and 40 small runs
    .venv/bin/python benches/bench_sweep.py --json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from commaware.experiments import sweep  # noqa: E402
from commaware.experiments.results import Store, open_store, row_schema  # noqa: E402
from commaware.experiments.sweepable import commands  # noqa: E402

KINDS = {
    "tiny": {"command": "cosched.run", "fixed": {"jobs": 20, "policy": "batch-easy"}},
    "small": {"command": "cosched.run", "fixed": {"jobs": 10, "policy": "nls"}},
}


def call(kwargs: dict[str, Any]) -> dict[str, Any]:
    """One run through the registry's function (what every method computes)."""
    return commands()["cosched.run"].function(**kwargs)


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_kind(kind: str, runs: int, workers: int, folder: Path) -> dict[str, Any]:
    spec = {**KINDS[kind], "grid": {"seed": list(range(1, runs + 1))}}
    parsed = sweep.load_spec(spec)
    kwargs = [r.kwargs for r in parsed.runs]
    chunk = max(1, min(sweep.MAX_CHUNK, math.ceil(runs / (8 * workers))))
    out: dict[str, Any] = {"kind": kind, "runs": runs, "workers": workers}
    out["loop_s"] = timed(lambda: [call(k) for k in kwargs])
    with ProcessPoolExecutor(max_workers=workers) as pool:
        list(pool.map(call, kwargs[:workers]))  # start the processes outside the timing
        out["process_pool_s"] = timed(lambda: list(pool.map(call, kwargs, chunksize=chunk)))
    out["sweep_serial_s"] = timed(lambda: sweep.run(spec, folder / f"{kind}-serial", serial=True))
    out["sweep_dask_s"] = timed(lambda: sweep.run(spec, folder / f"{kind}-dask", workers=workers))
    out["dask_start_stop_s"] = timed(lambda: sweep.make_cluster(None, workers=workers).close())
    cluster = sweep.make_cluster(None, workers=workers)
    try:  # a running cluster whose workers have imported commaware (one small sweep first)
        warm = {**KINDS[kind], "fixed": {**KINDS[kind]["fixed"], "jobs": 2}, "grid": {"seed": list(range(1, 4 * workers + 1))}}
        sweep.run(warm, folder / f"{kind}-warm", scheduler=cluster.scheduler_address)
        out["sweep_running_dask_s"] = timed(lambda: sweep.run(spec, folder / f"{kind}-running",
                                                              scheduler=cluster.scheduler_address))
    finally:
        cluster.close()
    for name in ("loop", "process_pool", "sweep_serial", "sweep_dask", "sweep_running_dask"):
        out[f"{name}_runs_per_s"] = runs / out[f"{name}_s"]
    out["loop_ms_per_run"] = 1e3 * out["loop_s"] / runs
    out["loop_x_sweep_serial"] = out["loop_runs_per_s"] / out["sweep_serial_runs_per_s"]
    return out


def bench_store(rows: int, folder: Path) -> dict[str, Any]:
    """Store.write_row of one cosched row, `rows` times (distinct run_ids)."""
    command = commands()["cosched.run"]
    run = sweep.load_spec({"command": "cosched.run", "fixed": {"jobs": 20}}).runs[0]
    base = {"command": run.command, "params_json": sweep.canonical_json(run.params), "inputs_hash": run.inputs_hash,
            "code_version": "bench", "seed": 0, **run.params, **call(run.kwargs), "wall_s": 0.0, "host": "bench",
            "finished_at": "now"}
    store = Store(open_store(folder / "store", create=True).path)
    schema = row_schema(command)
    write_s = timed(lambda: [store.write_row({**base, "run_id": f"{i:032x}"}, schema) for i in range(rows)])
    compact_s = timed(store.compact)
    return {"rows": rows, "write_ms_per_row": 1e3 * write_s / rows, "compact_ms_per_row": 1e3 * compact_s / rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="Fewer runs (seconds).")
    ap.add_argument("--tiny", type=int, default=None, help="Tiny runs (default 2000; --quick 300).")
    ap.add_argument("--small", type=int, default=None, help="Small runs (default 200; --quick 40).")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="Processes of the pool and the cluster.")
    ap.add_argument("--json", action="store_true", help="Print the measures as JSON.")
    args = ap.parse_args()
    counts = {"tiny": args.tiny or (300 if args.quick else 2000), "small": args.small or (40 if args.quick else 200)}
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        folder = Path(tmp)
        kinds = [bench_kind(kind, n, args.workers, folder) for kind, n in counts.items()]
        store = bench_store(counts["tiny"], folder)
    report = {"machine": f"{platform.machine()}, {os.cpu_count()} cores", "kinds": kinds, "store": store}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"commaware sweep benchmark ({report['machine']}, {args.workers} workers)")
    for k in kinds:
        per_run_ms = k["loop_ms_per_run"]
        print(f"\n{k['kind']} runs: {k['runs']} x cosched.run ({KINDS[k['kind']]['fixed']}), {per_run_ms:.3g} ms each alone")
        for name, label in (("loop", "plain loop"), ("process_pool", "ProcessPoolExecutor"),
                            ("sweep_serial", "sweep --serial (store)"), ("sweep_dask", "sweep, new LocalCluster"),
                            ("sweep_running_dask", "sweep, running cluster")):
            print(f"  {label:<26} {k[name + '_s']:8.3f} s  {k[name + '_runs_per_s']:10.1f} runs/s")
        print(f"  Dask LocalCluster start+stop alone: {k['dask_start_stop_s']:.2f} s")
        for name, label in (("sweep_dask", "dask (new cluster)"), ("sweep_running_dask", "dask (running cluster)"),
                            ("sweep_serial", "serial sweep")):
            print(f"  {label} runs/s: {k[name + '_runs_per_s'] / k['loop_runs_per_s']:.3g} x the loop's, "
                  f"{k[name + '_runs_per_s'] / k['process_pool_runs_per_s']:.3g} x the pool's")
    print(f"\nresults store: {store['write_ms_per_row']:.3f} ms per row written (atomic Parquet file), "
          f"{store['compact_ms_per_row']:.3f} ms per row compacted ({store['rows']} rows)")


if __name__ == "__main__":
    main()
