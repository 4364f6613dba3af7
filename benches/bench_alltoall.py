#!/usr/bin/env python3
"""A big alltoall, commaware against SimGrid in one run: wall time and peak memory.

Each rank of a P-rank pairwise alltoall (MPICH's algorithm, P-1 rounds) sends a block of
``--bytes`` to every other rank: P·(P-1) messages, 16.8 M for 4,096 ranks. commaware runs as
a user would, ``commaware simulate PLATFORM TRACE`` in a child process (no --json: nothing per
message is kept), and again with ``--json`` and with ``--messages FILE.parquet`` (streamed
outputs); peak RSS is the child's own (``common.measure_process``). SimGrid 3.32 runs the same alltoall through
its own engine (``tests/peers/simgrid_star.cpp``, ``network/optim:Full``, the same star of
1 Gbps links), when it is installed.

Targets (issue 13): the 4,096-rank 1 KiB alltoall under 300 MB peak RSS without --json, and at
least 3x faster than before this work and than SimGrid measured here. "Before" is a stored
figure, not measured in this run: 87 s and 13.0 GB on commit d272797 (the issue's figures, put
here by commit 8d9c340); it is printed as such. A SimGrid target whose SimGrid did not run (not
installed, ``--no-simgrid``) is "not measured", never met.

Usage::

    .venv/bin/python benches/bench_alltoall.py                 # 4,096 ranks (SimGrid: minutes)
    .venv/bin/python benches/bench_alltoall.py --ranks 256,1024 --quick
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "peers"))
import simgrid_peer as sgp  # noqa: E402
from common import measure_process  # noqa: E402

TARGET_RSS_MB = 300.0
TARGET_SPEEDUP = 3.0
#: Stored, not measured here: issue 13's measurement of the (ranks, bytes) = (4,096, 1 KiB)
#: alltoall before the lazy engine, on commit d272797 (brought into this file by 8d9c340).
BEFORE = {(4096, 1024): {"wall_s": 87.0, "rss_MB": 13000.0, "commit": "d272797"}}
LAT_US = 50.0


def run_child(args: list[str]) -> dict[str, Any]:
    """Run a command; its wall time and peak RSS (MB); an error if it failed."""
    run = measure_process(args)
    if run["code"] != 0:
        raise RuntimeError(f"{' '.join(args)} exited with {run['code']}: {run['stderr'][-500:]}")
    return {"wall_s": run["wall_s"], "rss_MB": run["peak_rss_bytes"] / (1 << 20)}


def commaware_runs(ranks: int, nbytes: int, tmp: Path, quick: bool) -> dict[str, dict[str, Any]]:
    platform, trace = tmp / f"platform{ranks}.json", tmp / f"alltoall{ranks}.json"
    platform.write_text(json.dumps(sgp.platform_dict(ranks, 2 * LAT_US * 1e-6)))
    trace.write_text(json.dumps(sgp.alltoall_trace(ranks, nbytes)))
    cli = [sys.executable, "-m", "commaware.cli", "simulate", str(platform), str(trace), "--quiet"]
    runs = {"summary": run_child(cli)}
    if not quick:
        runs["--json"] = run_child([*cli, "--json"])
        table = tmp / f"messages{ranks}.parquet"
        runs["--messages"] = run_child([*cli, "--messages", str(table)])
        table.unlink()
    import commaware

    runs["summary"]["makespan_s"] = commaware.simulate(platform, trace, record_messages=False,
                                                       record_timeline=False).makespan
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="4096", help="comma-separated rank counts (default 4096)")
    ap.add_argument("--bytes", type=int, default=1024, help="block per destination (default 1024)")
    ap.add_argument("--quick", action="store_true", help="summary run only (no --json / --messages runs)")
    ap.add_argument("--no-simgrid", action="store_true", help="skip SimGrid")
    ap.add_argument("--sg-timeout", type=float, default=1800.0, help="SimGrid time limit per run (s)")
    ap.add_argument("--json", dest="as_json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()
    sizes = [int(x) for x in args.ranks.split(",")]
    ok, why = (False, "--no-simgrid") if args.no_simgrid else sgp.simgrid_available()
    rows = []
    with tempfile.TemporaryDirectory(prefix="commaware-a2a-") as tmpdir:
        for p in sizes:
            print(f"alltoall of {args.bytes} B on {p} ranks ({p * (p - 1):,} messages) ...", file=sys.stderr, flush=True)
            row: dict[str, Any] = {"ranks": p, "bytes": args.bytes, "messages": p * (p - 1)}
            row["commaware"] = commaware_runs(p, args.bytes, Path(tmpdir), args.quick)
            if ok:
                try:
                    sg = sgp.run_simgrid_alltoall(p, args.bytes, lat_us=LAT_US, timeout=args.sg_timeout)
                    row["simgrid"] = {"run_s": sg["run_s"], "wall_s": sg["wall_s"], "makespan_s": sg["makespan_s"],
                                      "rss_MB": sg.get("maxrss_MB")}
                except sgp.SimGridTimeout:
                    row["simgrid"] = {"timeout_s": args.sg_timeout}
            rows.append(row)
    if args.as_json:
        print(json.dumps({"rows": rows, "simgrid": why}, indent=2))
        return 0
    print(f"SimGrid: {why}")
    print(f"{'ranks':>6} {'run':>20} {'wall s':>8} {'peak MB':>8} {'makespan s':>12} {'vs SimGrid':>11} {'vs before*':>10}")
    failed = False
    for row in rows:
        sg = row.get("simgrid", {})
        before = BEFORE.get((row["ranks"], row["bytes"]))
        for name, r in row["commaware"].items():
            vs_sg = f"{sg['wall_s'] / r['wall_s']:.1f}x" if "wall_s" in sg else ("> " + f"{sg['timeout_s'] / r['wall_s']:.1f}x" if sg else "-")
            vs_before = f"{before['wall_s'] / r['wall_s']:.1f}x" if before else "-"
            print(f"{row['ranks']:>6} {'commaware ' + name:>20} {r['wall_s']:>8.2f} {r['rss_MB']:>8.0f} "
                  f"{r['makespan_s'] if 'makespan_s' in r else '':>12.6} {vs_sg:>11} {vs_before:>10}")
        if "wall_s" in sg:
            print(f"{row['ranks']:>6} {'SimGrid':>20} {sg['wall_s']:>8.2f} {sg['rss_MB'] or float('nan'):>8.0f} "
                  f"{sg['makespan_s']:>12.6g}   (engine run {sg['run_s']:.2f} s)")
        summary = row["commaware"]["summary"]
        if before:
            print(f"{'':>6} * before: stored figure from commit {before['commit']} (issue 13), {before['wall_s']:g} s and "
                  f"{before['rss_MB'] / 1000:.1f} GB, not measured in this run")
            rss_ok = summary["rss_MB"] < TARGET_RSS_MB
            speed_ok = before["wall_s"] / summary["wall_s"] >= TARGET_SPEEDUP
            sg_verdict = simgrid_verdict(sg, summary["wall_s"])
            failed |= not (rss_ok and speed_ok) or sg_verdict == "MISSED"
            print(f"targets: peak RSS < {TARGET_RSS_MB:.0f} MB: {'met' if rss_ok else 'MISSED'}; "
                  f">= {TARGET_SPEEDUP:.0f}x faster than before (stored, {before['commit']}): {'met' if speed_ok else 'MISSED'}; "
                  f">= {TARGET_SPEEDUP:.0f}x faster than SimGrid: {sg_verdict}")
    return 1 if failed else 0


def simgrid_verdict(sg: dict[str, Any], ours_s: float) -> str:
    """The SimGrid ratio target: ``met`` or ``MISSED`` only when SimGrid ran; a timeout is met
    when even the time limit is 3x ours; otherwise ``not measured``, never met."""
    if "wall_s" in sg:
        return "met" if sg["wall_s"] / ours_s >= TARGET_SPEEDUP else "MISSED"
    if "timeout_s" in sg and sg["timeout_s"] / ours_s >= TARGET_SPEEDUP:
        return f"met (SimGrid still running at its {sg['timeout_s']:g} s limit)"
    if "timeout_s" in sg:
        return f"not measured (SimGrid timed out at {sg['timeout_s']:g} s)"
    return "not measured (SimGrid did not run)"


if __name__ == "__main__":
    sys.exit(main())
