#!/usr/bin/env python3
"""Benchmark of a cluster whose jobs share the network (issue 41, item 6): the UniLu Gaia 2014
log (51,987 jobs, 2,004 processors; tests/gaia_data.py fetches it) under EASY on a 1,024-host
fat tree and a 1,024-host dragonfly (2 cores a host), every job running a halo pattern in one
engine, for each allocation policy: wall time, engine events per second, messages, peak memory,
mean wait and mean slowdown (runtime over the job alone on its hosts). Beside it, in the same
run: the same log scheduled without a network (`cosched run LOG --policy batch-easy`), and
SimGrid 3.32 (SMPI, our peer tests/peers/smpi_replay_jobs.cpp) on a slice: the first jobs of
the log that fit the fat tree together (a rank a host), started a second apart on disjoint
hosts (`--policy explicit`), the same programs exported as TI traces, with the wall-time ratio
and the largest difference of a job's end.

Targets (issue 41): the whole log in under 10 minutes and 4 GB per policy, with patterns that
move at least 10^8 messages. Nothing is asserted: each target is marked ``ok`` or ``MISSED``.

Usage::

    .venv/bin/python benches/bench_fabric.py                         # everything (hours)
    .venv/bin/python benches/bench_fabric.py --jobs 5000 --platforms fat_tree --allocations compact spread
    .venv/bin/python benches/bench_fabric.py --no-alone --simgrid-jobs 0 --json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "peers"))
sys.path.insert(0, str(ROOT / "benches"))

from common import measure_process  # noqa: E402
from gaia_data import fetch_gaia  # noqa: E402

TARGET_S = 600.0
TARGET_BYTES = 4 * 2**30
TARGET_MESSAGES = 1e8
#: Each job's program: a 2-D halo of 64 KiB messages, 51 iterations, each after a compute of
#: the job's logged runtime over the iterations (so the log's runtimes stay, and the network
#: adds to them).
PATTERN = "halo2d:bytes=65536,iterations=51,compute=auto"
#: The SimGrid slice's program (a fixed compute: the slice's jobs run for seconds, not hours).
SLICE_PATTERN = "halo2d:bytes=65536,iterations=20,compute=0.01"
NETWORK = {"bandwidth": 1.25e9, "latency": 1e-6}
#: Each host's link to itself (the ranks of one host talk through memory). SimGrid without a
#: loopback sends a host's messages to itself out over its NIC and back; commaware then uses
#: the host's memory link (docs/topologies.md): with a loopback both agree.
LOOPBACK = {"bandwidth": 1e10, "latency": 1e-7}
PLATFORMS: dict[str, dict[str, Any]] = {
    # 64 leaves of 16 hosts, 16 top switches (each leaf one up-link to each): full bisection.
    "fat_tree": {"cluster": {"count": 1024, "speed": 1e9, "cores": 2},
                 "network": {**NETWORK, "topology": {"kind": "fat_tree", "down": [16, 64], "up": [1, 16],
                                                     "parallel": [1, 1], "loopback": LOOPBACK}}},
    # 8 groups of 4 chassis of 8 routers of 4 hosts.
    "dragonfly": {"cluster": {"count": 1024, "speed": 1e9, "cores": 2},
                  "network": {**NETWORK, "topology": {"kind": "dragonfly", "groups": [8, 1], "chassis": [4, 1],
                                                      "routers": [8, 1], "nodes": 4, "loopback": LOOPBACK}}},
}
ALLOCATIONS = ["contiguous", "random", "compact", "spread"]
#: Ranks a host in the SimGrid slice, as in the full runs (2 cores a host).
RANKS_A_HOST = 2


def cli(*args: Any) -> list[str]:
    return [sys.executable, "-m", "commaware.cli", *map(str, args)]


def slice_log(log: Path, jobs: int | None, out: Path) -> Path:
    """The log's header and its first `jobs` job lines (the whole log for None)."""
    if jobs is None:
        return log
    lines = log.read_text(errors="replace").splitlines(keepends=True)
    header = [line for line in lines if line.startswith(";")]
    body = [line for line in lines if line.strip() and not line.startswith(";")][:jobs]
    out.write_text("".join(header + body))
    return out


def fabric_run(log: Path, platform: Path, allocation: str, alone: bool, tmp: Path) -> dict[str, Any]:
    out = tmp / "run.json"
    cmd = cli("cosched", "run", log, "--platform", platform, "--policy", "batch-easy", "--allocation", allocation,
              "--seed", 1, "--pattern", PATTERN, "--json", *([] if alone else ["--no-alone"]))
    m = measure_process(cmd, stdout=out)
    if m["code"] != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({m['code']}): {m['stderr'][-2000:]}")
    doc = json.loads(out.read_text())
    return {"allocation": allocation, "wall_s": m["wall_s"], "peak_rss_bytes": m["peak_rss_bytes"],
            "engine_events": doc["engine_events"], "events_per_s": doc["engine_events"] / m["wall_s"],
            "messages": doc["messages"], "bytes": doc["bytes"], "jobs": len(doc["jobs"]),
            "avg_wait_s": doc["avg_wait_s"], "avg_slowdown": doc["avg_slowdown"],
            "max_slowdown": max((j["slowdown"] for j in doc["jobs"] if j["slowdown"] is not None), default=None)}


def simgrid_slice(log: Path, count: int, tmp: Path) -> dict[str, Any]:
    """The first `count` jobs of the log that fit the fat tree together, each on hosts of its own
    (RANKS_A_HOST ranks a host, in host order), job i started at i seconds, under commaware's
    explicit policy and under SMPI; wall times and the largest end difference."""
    from commaware import cosched, load_platform
    from commaware.traces.export import export_ti
    from smpi_replay_jobs import PeerJob, run_smpi_jobs

    spec = PLATFORMS["fat_tree"]
    platform = load_platform(spec)
    xml = tmp / "fat_tree.xml"
    xml.write_text(platform.export("simgrid"))
    log_jobs = cosched.load_workload(log)
    columns = json.loads(log_jobs.to_json())["jobs"]
    jobs, core = [], 0
    for j in columns:
        if len(jobs) == count or core + j["procs"] > 1024 * RANKS_A_HOST:
            break
        hosts = [(core + r) // RANKS_A_HOST for r in range(j["procs"])]
        core += j["procs"] + j["procs"] % RANKS_A_HOST  # each job on hosts of its own
        jobs.append({"id": j["id"], "submit_s": 0, "procs": j["procs"], "runtime_s": 1, "start_s": len(jobs),
                     "hosts": hosts})
    workload = {"jobs": jobs}
    path = tmp / "slice.json"
    path.write_text(json.dumps(workload))
    out = tmp / "slice-out.json"
    cmd = cli("cosched", "run", path, "--platform", xml, "--policy", "explicit", "--pattern", SLICE_PATTERN,
              "--smpi", "simgrid-3.32", "--no-alone", "--json")
    ours = measure_process(cmd, stdout=out)
    if ours["code"] != 0:
        raise SystemExit(f"commaware explicit slice failed: {ours['stderr'][-2000:]}")
    ends = {j["id"]: j["end_s"] for j in json.loads(out.read_text())["jobs"]}
    by_name = sorted(platform.host_names)
    peer = []
    for i, j in enumerate(jobs):
        trace = cosched.job_trace(path, i, pattern=SLICE_PATTERN)
        index = export_ti(trace, tmp / f"job{j['id']}", platform=spec)
        peer.append(PeerJob(f"job{j['id']}", index, j["start_s"], [by_name.index(platform.host_names[h]) for h in j["hosts"]]))
    t0 = time.perf_counter()
    theirs = run_smpi_jobs(spec, xml, peer, smpi_timing=["network/crosstraffic:1"], timeout=3600)
    simgrid_s = time.perf_counter() - t0
    diff = max(abs(max(theirs[f"job{j['id']}"]) - ends[j["id"]]) for j in jobs)
    return {"jobs": len(jobs), "ranks": sum(j["procs"] for j in jobs), "commaware_wall_s": ours["wall_s"],
            "simgrid_wall_s": simgrid_s, "ratio": simgrid_s / ours["wall_s"], "max_end_diff_s": diff}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=None, help="Only the log's first JOBS jobs (default: all).")
    ap.add_argument("--platforms", nargs="+", choices=sorted(PLATFORMS), default=sorted(PLATFORMS))
    ap.add_argument("--allocations", nargs="+", choices=ALLOCATIONS, default=ALLOCATIONS)
    ap.add_argument("--no-alone", action="store_true", help="Skip the runs of each job alone (no slowdown).")
    ap.add_argument("--simgrid-jobs", type=int, default=40, help="Jobs of the SimGrid slice (0: none).")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="commaware-bench-fabric-") as tmp_name:
        tmp = Path(tmp_name)
        log = slice_log(fetch_gaia(), a.jobs, tmp / "slice.swf")
        without = measure_process(cli("cosched", "run", log, "--policy", "batch-easy", "--json"))
        rows = []
        for name in a.platforms:
            platform = tmp / f"{name}.json"
            platform.write_text(json.dumps(PLATFORMS[name]))
            for allocation in a.allocations:
                print(f"{name} {allocation} ...", file=sys.stderr, flush=True)
                rows.append({"platform": name, **fabric_run(log, platform, allocation, not a.no_alone, tmp)})
        peer = simgrid_slice(log, a.simgrid_jobs, tmp) if a.simgrid_jobs > 0 else None
    doc = {"log": "UniLu-Gaia-2014-2.swf", "jobs": a.jobs or "all", "pattern": PATTERN, "alone": not a.no_alone,
           "without_network_wall_s": without["wall_s"], "runs": rows, "simgrid_slice": peer,
           "cpus": os.cpu_count()}
    if a.json:
        print(json.dumps(doc))
        return
    print(f"Gaia log ({doc['jobs']} jobs), EASY, pattern {PATTERN}, alone runs {'on' if doc['alone'] else 'off'}; "
          f"without a network: {without['wall_s']:.2f} s")
    for r in rows:
        marks = [("time", r["wall_s"] < TARGET_S), ("memory", r["peak_rss_bytes"] < TARGET_BYTES),
                 ("messages", r["messages"] >= TARGET_MESSAGES)]
        print(f"  {r['platform']:>9} {r['allocation']:>10}: {r['wall_s']:8.1f} s ({r['wall_s'] / without['wall_s']:.0f}x "
              f"without a network), {r['peak_rss_bytes'] / 2**30:.2f} GiB, {r['messages']:.3g} messages, "
              f"{r['events_per_s'] / 1e6:.2f} M events/s; mean wait {r['avg_wait_s']:.1f} s, mean slowdown "
              f"{r['avg_slowdown'] if r['avg_slowdown'] is None else round(r['avg_slowdown'], 6)}; targets "
              + ", ".join(f"{n} {'ok' if ok else 'MISSED'}" for n, ok in marks))
    if peer:
        print(f"  SimGrid 3.32 slice ({peer['jobs']} jobs, {peer['ranks']} ranks, explicit starts): SMPI "
              f"{peer['simgrid_wall_s']:.2f} s, commaware {peer['commaware_wall_s']:.2f} s, ratio {peer['ratio']:.1f}x; "
              f"largest end difference {peer['max_end_diff_s']:.3g} s")


if __name__ == "__main__":
    main()
