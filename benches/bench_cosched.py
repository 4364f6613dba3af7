#!/usr/bin/env python3
"""Benchmark of the batch policies (paper 002) on a real log: the UniLu Gaia 2014 log of the
Parallel Workloads Archive (51,987 jobs, 2,004 processors; fetched from the `evalys` 4.0.7
sdist on PyPI into .cache/, see tests/gaia_data.py), under FCFS, EASY and conservative
backfilling, and AccaSim 1.1.3 (PyPI) on the same file in the same run through the project's
harness (benches/peers/accasim_run.py), with the ratio printed; then the 100-job NAS mix
(`commaware workload nas --jobs 100 --interarrival 100 --seed 1`, classes A and B) under each
time-sharing policy (nls, gang, dcs, sb, pb, cc, hybrid; packing, MPL 3), timed in process and as
a whole CLI run (target: each under 2 s).

commaware is timed twice: the whole CLI (`commaware cosched run LOG --policy P --json`, a fresh
process: start-up, reading, scheduling, writing the JSON of every job), and in process (read
once, then scheduling alone, best of ``--repeat``). AccaSim's time is its simulator's own
(constructor, which reads the log, and simulation), without its interpreter's start-up. AccaSim
runs in its own venv (.cache/accasim/venv, made with pip on first use); its EASY does not
protect the head job's reservation, so the speed ratio is taken on FCFS. Targets: Gaia under
EASY in under 2 s of CLI wall time, and at least 50x faster than AccaSim. Nothing is asserted:
each target is marked ``ok`` or ``MISSED``.

Usage::

    .venv/bin/python benches/bench_cosched.py
    .venv/bin/python benches/bench_cosched.py --no-accasim          # commaware only
    .venv/bin/python benches/bench_cosched.py --accasim-policies fifo easy --json
    .venv/bin/python benches/bench_cosched.py --only-nas                 # the time-sharing runs only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from gaia_data import PROCESSORS, fetch_gaia  # noqa: E402

from commaware import cosched  # noqa: E402

CLI_TARGET_S = 2.0
#: Each 100-job time-sharing run of the NAS mix, s.
TS_TARGET_S = 2.0
RATIO_TARGET = 50.0
ACCASIM_VENV = ROOT / ".cache" / "accasim" / "venv"
ACCASIM_RUN = ROOT / "benches" / "peers" / "accasim_run.py"


def accasim_python() -> Path:
    """The Python of a venv with AccaSim 1.1.3, made (pip install accasim==1.1.3) if missing."""
    python = ACCASIM_VENV / "bin" / "python"
    probe = [str(python), "-c", "import importlib.metadata as m; print(m.version('accasim'))"]
    if python.exists() and subprocess.run(probe, capture_output=True, text=True).stdout.strip() == "1.1.3":
        return python
    print("installing AccaSim 1.1.3 into .cache/accasim/venv ...", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(ACCASIM_VENV)], check=True, stdout=sys.stderr)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "accasim==1.1.3"], check=True, stdout=sys.stderr)
    return python


def cli_wall(log: Path, policy: str, repeat: int) -> float:
    """Best wall time of the whole CLI, a fresh process each time (JSON of every job to a pipe)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "commaware.cli", "cosched", "run", str(log), "--policy", policy,
                               "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        best = min(best, time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(proc.stderr.decode())
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-accasim", action="store_true", help="Time commaware only.")
    ap.add_argument("--accasim-policies", nargs="+", choices=["fifo", "easy"], default=["fifo"])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only-nas", action="store_true", help="Only the 100-job NAS mix under the time-sharing policies.")
    a = ap.parse_args()
    nas = nas_time_sharing(a.repeat)
    if a.only_nas:
        if a.json:
            print(json.dumps({"nas_time_sharing": nas, "nas_run_s_range": nas_range(nas)}))
        else:
            print_nas(nas)
        return

    log = fetch_gaia()
    t0 = time.perf_counter()
    w = cosched.load_workload(log)
    load_s = time.perf_counter() - t0
    rows: list[dict[str, Any]] = []
    for policy in cosched.BATCH_POLICIES:
        best = float("inf")
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            run = cosched.run(w, policy, PROCESSORS)
            best = min(best, time.perf_counter() - t0)
        s = run.summary
        rows.append({"sim": "commaware", "policy": policy, "jobs": s["jobs"], "schedule_s": best,
                     "cli_wall_s": cli_wall(log, policy, a.repeat), "avg_wait_s": s["avg_wait_s"],
                     "avg_response_s": s["avg_response_s"], "avg_bounded_slowdown": s["avg_bounded_slowdown"],
                     "utilization": s["utilization"]})
    peers: list[dict[str, Any]] = []
    if not a.no_accasim:
        python = accasim_python()
        for policy in a.accasim_policies:
            proc = subprocess.run([str(python), str(ACCASIM_RUN), "--swf", str(log), "--processors", str(PROCESSORS),
                                   "--policy", policy], capture_output=True, text=True)
            lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
            if proc.returncode != 0 or not lines:
                raise SystemExit(f"AccaSim failed ({proc.returncode}): {proc.stderr[-2000:]}")
            peers.append(json.loads(lines[-1]))
    ours = {r["policy"]: r for r in rows}
    ratios = []
    for p in peers:
        mine = ours["batch" if p["policy"] == "fifo" else "batch-easy"]
        ratios.append({"accasim_policy": p["policy"], "commaware_policy": mine["policy"],
                       "ratio_vs_cli": p["wall_s"] / mine["cli_wall_s"],
                       "ratio_vs_in_process": p["wall_s"] / (load_s + mine["schedule_s"])})
    doc = {"log": log.name, "processors": PROCESSORS, "jobs": len(w), "skipped": w.skipped, "load_s": load_s,
           "commaware": rows, "accasim": peers, "ratios": ratios, "nas_time_sharing": nas, "nas_run_s_range": nas_range(nas),
           "machine": platform.machine(),
           "python": platform.python_version(), "cpus": os.cpu_count(),
           "loadavg": Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else None}
    if a.json:
        print(json.dumps(doc))
        return
    print(f"{log.name}: {len(w):,} jobs on {PROCESSORS:,} processors "
          f"({w.skipped['negative_runtime']} skipped: negative runtime); read in {load_s:.3f} s")
    for r in rows:
        mark = "" if r["policy"] != "batch-easy" else (
            f" (target < {CLI_TARGET_S:g} s: {'ok' if r['cli_wall_s'] < CLI_TARGET_S else 'MISSED'})")
        print(f"  commaware {r['policy']:>18}: schedule {r['schedule_s']:.3f} s, CLI {r['cli_wall_s']:.3f} s{mark}; "
              f"mean wait {r['avg_wait_s']:.1f} s, bounded slowdown {r['avg_bounded_slowdown']:.3f}, "
              f"utilization {r['utilization']:.4f}")
    for p in peers:
        print(f"  AccaSim 1.1.3 {p['policy']:>14}: {p['wall_s']:.2f} s for {p['jobs_done']:,} jobs; "
              f"mean wait {p['avg_wait_s']:.1f} s, bounded slowdown {p['avg_bounded_slowdown']:.3f}")
    for r in ratios:
        mark = "ok" if r["ratio_vs_cli"] >= RATIO_TARGET else "MISSED"
        print(f"  ratio AccaSim {r['accasim_policy']} / commaware {r['commaware_policy']}: "
              f"{r['ratio_vs_cli']:.0f}x against the whole CLI (target >= {RATIO_TARGET:g}x: {mark}), "
              f"{r['ratio_vs_in_process']:.0f}x against reading + scheduling in process")
    if any(p["policy"] == "easy" for p in peers):
        print("  (AccaSim's EASY does not protect the head's reservation: its numbers are not EASY's)")
    print_nas(nas)
    print(f"  load average: {' '.join(doc['loadavg'] or [])}")


def nas_range(nas: list[dict[str, Any]]) -> list[float]:
    """The fastest and the slowest policy's run time on the NAS mix, seconds."""
    return [min(r["run_s"] for r in nas), max(r["run_s"] for r in nas)]


def nas_time_sharing(repeat: int) -> list[dict[str, Any]]:
    """The 100-job NAS mix (heavy load, seed 1) under each time-sharing policy: best in-process
    run time and best whole-CLI wall time (a fresh process: reading the JSON workload, running,
    writing the JSON of every job)."""
    import tempfile

    w = cosched.nas_workload(jobs=100, interarrival=100, seed=1)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "nas100.json"
        path.write_text(w.to_json())
        for policy in cosched.TIME_SHARING_POLICIES:
            best = float("inf")
            for _ in range(repeat):
                t0 = time.perf_counter()
                run = cosched.run(w, policy, processors=16)
                best = min(best, time.perf_counter() - t0)
            cli = float("inf")
            for _ in range(repeat):
                t0 = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "commaware.cli", "cosched", "run", str(path), "--policy",
                                       policy, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                cli = min(cli, time.perf_counter() - t0)
                if proc.returncode != 0:
                    raise SystemExit(proc.stderr.decode())
            d = run.to_dict()
            out.append({"policy": policy, "run_s": best, "cli_wall_s": cli, "events": d["events"],
                        "avg_response_s": d["avg_response_s"], "avg_wait_s": d["avg_wait_s"],
                        "avg_exec_s": d["avg_exec_s"], "utilization": d["utilization"], "energy_j": d["energy_j"]})
    return out


def print_nas(nas: list[dict[str, Any]]) -> None:
    print("100-job NAS mix (workload nas --jobs 100 --interarrival 100 --seed 1; packing, MPL 3, 16 nodes):")
    for r in nas:
        mark = "ok" if r["cli_wall_s"] < TS_TARGET_S else "MISSED"
        print(f"  {r['policy']:>7}: run {r['run_s']:.3f} s, CLI {r['cli_wall_s']:.3f} s (target < {TS_TARGET_S:g} s: "
              f"{mark}), {r['events']:,} events; mean response {r['avg_response_s']:.1f} s, "
              f"execution {r['avg_exec_s']:.1f} s, utilization {r['utilization']:.3f}, "
              f"energy {r['energy_j'] / 1e6:.2f} MJ")


if __name__ == "__main__":
    main()
