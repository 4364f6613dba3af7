#!/usr/bin/env python3
"""Scale: one collective on a million ranks, and Open MPI's basic_linear alltoall (issue 29
items 4 and 5). Each case runs in a fresh child process (``common.run_child``) that loads the
platform and the trace and replays them through ``commaware.simulate`` with nothing per message
kept, as ``commaware simulate`` does without ``--json``.

Cases (``--quick``: the same with 2^16 ranks, and the alltoall on 512):

* ``allreduce-1M``: a 1,048,576-rank ``allreduce`` (recursive doubling, 8 bytes) on a 2^20-host
  star under ``maxmin``; targets 60 s and 8 GiB;
* ``bcast-1M``: a 1,048,576-rank binomial ``bcast`` (8 bytes) on the same star and model;
  targets 60 s and 8 GiB;
* ``bcast-4M``: a 4,194,304-rank binomial ``bcast`` under ``contention_free``, on 4,096 hosts of
  1,024 cores placed round-robin by node (``contention_free`` keeps a bandwidth per host pair,
  so it takes at most 4,096 hosts: ranks 2^12 apart and more share a host); target 60 s;
* ``alltoall-bl-4096``: a 4,096-rank ``basic_linear`` alltoall (Open MPI's: every rank posts
  4,095 receives and 4,095 sends, then waits for all) of 1 KiB blocks under ``maxmin`` on a
  4,096-host star; target 1 GiB.

The trace is one op per rank, written by repeating that op's text (no per-rank Python loop);
the platform is a ``cluster`` of ``count`` hosts. Printed per case: the child's wall time (its
whole process: Python's start, imports, load, replay; the target's measure) and its CPU time
(user + system, which other work on a shared machine inflates less), its peak RSS (``VmHWM``), the bytes per
rank (peak RSS less the RSS after the imports, over the ranks), the load and replay times, and
events per second of the replay. An event here is a send or a receive (two per message), as
LogGOPSim counts its operations. LogGOPSim's figure (a single collective of up to 10 million
processes on one CPU at over 1 million events a second, LogGP without contention; Hoefler,
Schneider, Lumsdaine, HPDC 2010) is a published figure for another simulator on another machine,
printed beside ours for scale, not a same-run comparison.

Usage::

    .venv/bin/python benches/bench_scale.py --quick        # ~10 s
    .venv/bin/python benches/bench_scale.py                # a few minutes, up to ~9 GB
    .venv/bin/python benches/bench_scale.py --cases bcast-1M,alltoall-bl-4096
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import proc_status_kb, run_child  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
GIB = 1 << 30
#: Published, not measured here (LogGOPSim, HPDC 2010): events a second on one CPU.
LOGGOPSIM_EVENTS_PER_S = 1e6
BANDWIDTH = 1.25e9  # bytes/s, each NIC direction
LATENCY = 1e-6  # s


@dataclass(frozen=True)
class Case:
    name: str
    op: str  # the op's JSON text, repeated on every rank
    ranks: int
    quick_ranks: int
    hosts: int | None  # None: one host per rank
    model: str
    placement: str = "explicit"
    coll: str | None = None
    max_wall_s: float | None = None
    max_rss_bytes: float | None = None

    def size(self, quick: bool) -> tuple[int, int]:
        """(ranks, hosts) of the run."""
        ranks = self.quick_ranks if quick else self.ranks
        hosts = self.hosts if self.hosts is not None else ranks
        return ranks, min(hosts, ranks)


CASES = [
    Case("allreduce-1M", '{"op":"allreduce","bytes":8}', 1 << 20, 1 << 16, None, "maxmin",
         max_wall_s=60.0, max_rss_bytes=8 * GIB),
    Case("bcast-1M", '{"op":"bcast","root":0,"bytes":8}', 1 << 20, 1 << 16, None, "maxmin",
         max_wall_s=60.0, max_rss_bytes=8 * GIB),
    Case("bcast-4M", '{"op":"bcast","root":0,"bytes":8}', 1 << 22, 1 << 16, 4096, "contention_free",
         placement="rrn", max_wall_s=60.0),
    Case("alltoall-bl-4096", '{"op":"alltoall","bytes":1024}', 4096, 512, None, "maxmin",
         coll="alltoall=basic_linear", max_rss_bytes=1 * GIB),
]


def write_inputs(case: Case, quick: bool, folder: Path) -> tuple[Path, Path]:
    """The case's platform and trace files in `folder`."""
    ranks, hosts = case.size(quick)
    platform = folder / f"{case.name}-platform.json"
    platform.write_text(json.dumps({
        "cluster": {"count": hosts, "speed": 1e9, "cores": -(-ranks // hosts), "prefix": "n"},
        "network": {"model": case.model, "bandwidth": BANDWIDTH, "latency": LATENCY},
    }))
    trace = folder / f"{case.name}-trace.json"
    with trace.open("w") as f:
        f.write('{"ranks":[')
        f.write(",".join([f"[{case.op}]"] * ranks))
        f.write("]}")
    return platform, trace


def child_main(platform_path: str, trace_path: str, case_name: str) -> dict[str, Any]:
    """One replay in this (fresh) process, measured."""
    import resource

    case = next(c for c in CASES if c.name == case_name)
    import commaware

    rss_imported_kb = proc_status_kb("VmRSS") or 0
    t0 = time.perf_counter()
    platform = commaware.load_platform(platform_path)
    trace = commaware.load_trace(trace_path)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = commaware.simulate(platform, trace, model=case.model, placement=case.placement, coll=case.coll,
                             record_messages=False, record_timeline=False)
    replay_s = time.perf_counter() - t0
    return {"status": "ok", "load_s": load_s, "replay_s": replay_s, "makespan_s": res.makespan,
            "messages": int(res.message_stats["count"]), "rss_imported_kb": rss_imported_kb,
            "peak_rss_kb": proc_status_kb("VmHWM"), "cpu_s": sum(resource.getrusage(resource.RUSAGE_SELF)[:2])}


def run_case(case: Case, quick: bool, timeout: float) -> dict[str, Any]:
    ranks, hosts = case.size(quick)
    row: dict[str, Any] = {"case": case.name, "ranks": ranks, "hosts": hosts, "model": case.model,
                           "placement": case.placement, "coll": case.coll}
    with tempfile.TemporaryDirectory(prefix="commaware-scale-") as tmp:
        platform, trace = write_inputs(case, quick, Path(tmp))
        t0 = time.perf_counter()
        out = run_child(__file__, [str(platform), str(trace), case.name], REPO, timeout)
        row["wall_s"] = time.perf_counter() - t0
    row.update(out)
    if out.get("status") != "ok":
        return row
    peak = out["peak_rss_kb"] * 1024.0
    row["peak_rss_bytes"] = peak
    row["bytes_per_rank"] = (out["peak_rss_kb"] - out["rss_imported_kb"]) * 1024.0 / ranks
    row["events"] = 2 * out["messages"]
    row["events_per_s"] = row["events"] / out["replay_s"] if out["replay_s"] > 0 else float("inf")
    checks = []
    if case.max_wall_s is not None and not quick:
        checks.append(row["wall_s"] < case.max_wall_s)
    if case.max_rss_bytes is not None and not quick:
        checks.append(peak < case.max_rss_bytes)
    row["targets_met"] = all(checks) if checks else None
    return row


def target_text(case: Case) -> str:
    parts = []
    if case.max_wall_s is not None:
        parts.append(f"<{case.max_wall_s:g} s")
    if case.max_rss_bytes is not None:
        parts.append(f"<{case.max_rss_bytes / GIB:g} GiB")
    return " ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2^16 ranks (alltoall: 512): a fast check, no targets")
    ap.add_argument("--cases", help="comma-separated case names (default all: "
                    + ", ".join(c.name for c in CASES) + ")")
    ap.add_argument("--timeout", type=float, default=600.0, help="per case, seconds (default 600)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print("CHILD " + json.dumps(child_main(*args.child)), flush=True)
        return 0
    names = args.cases.split(",") if args.cases else [c.name for c in CASES]
    unknown = [n for n in names if n not in {c.name for c in CASES}]
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(c.name for c in CASES)}")
    rows = []
    for case in (c for c in CASES if c.name in names):
        print(f"{case.name}: {case.size(args.quick)[0]:,} ranks ...", file=sys.stderr, flush=True)
        rows.append((case, run_case(case, args.quick, args.timeout)))
    if args.json:
        print(json.dumps([r for _, r in rows], indent=2))
        return 0 if all(r.get("status") == "ok" for _, r in rows) else 1
    hdr = (f"{'case':17} {'ranks':>9} {'wall s':>7} {'cpu s':>6} {'load s':>7} {'replay s':>8} {'peak RSS':>9} "
           f"{'B/rank':>7} {'events/s':>9}  {'target':14} verdict")
    print(hdr)
    print("-" * len(hdr))
    failed = False
    for case, r in rows:
        if r.get("status") != "ok":
            print(f"{case.name:17} {r['ranks']:>9,}  {r['status']}")
            failed = True
            continue
        verdict = "-" if r["targets_met"] is None else ("ok" if r["targets_met"] else "MISSED")
        failed |= r["targets_met"] is False
        print(f"{case.name:17} {r['ranks']:>9,} {r['wall_s']:7.1f} {r['cpu_s']:6.1f} {r['load_s']:7.1f} {r['replay_s']:8.1f} "
              f"{r['peak_rss_bytes'] / GIB:7.2f} G {r['bytes_per_rank']:7.0f} {r['events_per_s']:9.3g}  "
              f"{target_text(case) if not args.quick else '(quick)':14} {verdict}")
    print(f"events: a send or a receive, two per message. LogGOPSim's published figure: over "
          f"{LOGGOPSIM_EVENTS_PER_S:.0e} events/s on one CPU for a single collective of up to 10 million "
          "processes (LogGP, no contention; HPDC 2010) - another simulator on another machine, not measured "
          "in this run.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
