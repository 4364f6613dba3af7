#!/usr/bin/env python3
"""Benchmark of trace replay against SimGrid's SMPI (issue 17): a time-independent trace of
at least a million actions replayed by SMPI 3.32's offline replay and by commaware, each as a
whole process (`smpirun -replay …` against `commaware simulate … --format ti`), in the same
run, with the ratio printed, at two sizes (1.05 M and 10.5 M actions by default); in process,
the load (read, parse, validate) and the replay each in actions per second (`Trace.load_seconds`,
`Result.replay_seconds`, as `simulate --timing` prints them); commaware's peak RSS and its
bytes per action (the peak less that of the same command on a trace of one iteration, over the
actions); and the load time of a 1.8-million-action trace in process.

With ``--npb DIR`` (an NPB3.4-MPI source tree, see ``bench_smpi_defaults.py`` for where to get
one), also real traces (issue 43, item 1): NPB LU, SP and BT class W on 16 ranks, built with
SMPI's compilers and traced with ``smpirun -trace-ti`` in ``--work`` (the traces are made here,
never kept in the repository), then replayed the same way, SMPI with its default collective
selector and commaware with ``--coll smpi``, its model of that selector.
SMPI's replay program is compiled (or found in the peer cache) before its timer starts: only
the replay is timed.

The trace is synthetic and seeded: ``--ranks`` ranks (64) on a ring, each iteration a
compute, an isend to the right, an irecv from the left and the two waits, with an allreduce
every 64 iterations; compute and message sizes drawn per iteration. Both simulators model
the same thing (the SMPI settings of tests/peers/smpi_replay.py, allreduce `rdb`, a 16-byte
envelope); their makespans are printed with the relative difference. Target: at least 10×
faster than SMPI; the load in well under a second. Nothing is asserted: targets are marked
``ok`` or ``MISSED``.

Usage::

    .venv/bin/python benches/bench_ti_replay.py                  # 64 ranks × 16,384 and × 163,840 actions
    .venv/bin/python benches/bench_ti_replay.py --actions 4096 --json
    .venv/bin/python benches/bench_ti_replay.py --npb ~/NPB3.4-MPI --work /tmp/npb-ti
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import commaware

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "peers"))
import smpi_replay  # noqa: E402
from common import measure_process  # noqa: E402

SPEEDUP_TARGET = 10.0
LOAD_TARGET_S = 1.0


def write_trace(directory: Path, ranks: int, actions: int, seed: int) -> tuple[Path, int]:
    """A ring trace of about `actions` actions per rank as an index plus one file per rank."""
    rng = random.Random(seed)
    iterations = max(1, actions // 5)
    # The same sizes for every rank in an iteration, so that the ring stays in step.
    plan = [(rng.uniform(1e5, 1e6), rng.choice((64, 1024, 8192, 65536, 262144))) for _ in range(iterations)]
    total = 0
    names = []
    for r in range(ranks):
        right, left = (r + 1) % ranks, (r - 1) % ranks
        lines = [f"{r} init"]
        for i, (flops, count) in enumerate(plan):
            lines += [f"{r} compute {flops:.0f}", f"{r} isend {right} 1 {count}", f"{r} irecv {left} 1 {count}",
                      f"{r} wait {r} {right} 1", f"{r} wait {left} {r} 1"]
            if i % 64 == 63:
                lines.append(f"{r} allreduce 8 0")
        lines.append(f"{r} finalize")
        total += len(lines)
        name = f"rank-{r}.txt"
        (directory / name).write_text("\n".join(lines) + "\n")
        names.append(name)
    index = directory / "index.txt"
    index.write_text("".join(n + "\n" for n in names))
    return index, total


def platform(ranks: int) -> dict[str, Any]:
    return {"cluster": {"count": ranks, "speed": 1e9, "prefix": "n"},
            "network": {"model": "maxmin", "bandwidth": 1.25e8, "latency": 1e-5, "eager_threshold": 65536,
                        "envelope_bytes": smpi_replay.SMPI_ENVELOPE_BYTES}}


def run_cli(plat: Path, index: Path, coll: str | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of `commaware simulate --format ti` as a whole process
    (its summary output to a file, as SMPI prints its own)."""
    cmd = [str(Path(sys.executable).parent / "commaware"), "simulate", str(plat), str(index), "--format", "ti", "-q",
           *(["--coll", coll] if coll else [])]
    with tempfile.NamedTemporaryFile(prefix="commaware-bench-ti-out-") as out:
        run = measure_process(cmd, stdout=out.name)
    if run["code"]:
        raise SystemExit(f"{' '.join(cmd)} failed ({run['code']}): {run['stderr']}")
    return run["wall_s"], run["peak_rss_bytes"]


def run_commaware(plat: Path, index: Path, coll: str | None = None) -> tuple[float, dict[str, float]]:
    """Wall time and peak RSS of the whole process (`run_cli`); then, in process, the makespan
    (all digits) and the load and replay rates."""
    seconds, peak = run_cli(plat, index, coll)
    trace = commaware.load_trace(index)
    result = commaware.simulate(plat, trace, coll=coll, record_messages=False, record_timeline=False)
    inside = {"makespan": result.makespan, "ops": trace.n_ops, "load_s": trace.load_seconds, "replay_s": result.replay_seconds,
              "load_actions_per_s": result.actions / trace.load_seconds,
              "replay_actions_per_s": result.actions / result.replay_seconds,
              "events_per_s": result.events / result.replay_seconds, "peak_rss_bytes": peak}
    del trace, result
    return seconds, inside


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--actions", default="16384,163840",
                    help="actions per rank, comma-separated sizes (default: 64 × 16,384 ≈ 1.05 M and 64 × 163,840 ≈ 10.5 M in all)")
    ap.add_argument("--load-actions", type=int, default=1_800_000, help="actions of the load-time trace")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--npb", type=Path, help="an NPB3.4-MPI source tree: also NPB LU, SP and BT traced by SMPI")
    ap.add_argument("--npb-programs", default="lu,sp,bt", help="NPB programs (lu,sp,bt)")
    ap.add_argument("--npb-class", default="W", help="NPB problem class (W)")
    ap.add_argument("--npb-ranks", type=int, default=16, help="ranks of the NPB runs (16; SP and BT want a square)")
    ap.add_argument("--work", type=Path, help="folder to build and trace NPB in (kept; a temporary one by default)")
    a = ap.parse_args()
    out: dict[str, Any] = {"replay": []}
    # Compile the replay program first (a cold cache would otherwise time smpicxx too);
    # run_smpi_replay then finds it in the cache.
    b0 = time.perf_counter()
    smpi_replay.build_replay()
    build_s = time.perf_counter() - b0
    with tempfile.TemporaryDirectory(prefix="commaware-bench-ti-base-") as tmp:  # the fixed part of the peak RSS
        index, base_actions = write_trace(Path(tmp), a.ranks, 1, a.seed)
        (Path(tmp) / "platform.json").write_text(json.dumps(platform(a.ranks)))
        base_rss = run_cli(Path(tmp) / "platform.json", index)[1]
    for per_rank in (int(x) for x in a.actions.split(",")):
        with tempfile.TemporaryDirectory(prefix="commaware-bench-ti-") as tmp:
            d = Path(tmp)
            index, total = write_trace(d, a.ranks, per_rank, a.seed)
            plat_doc = platform(a.ranks)
            plat = d / "platform.json"
            plat.write_text(json.dumps(plat_doc))
            ours_s, inside = run_commaware(plat, index)
            t0 = time.perf_counter()
            smpi = smpi_replay.run_smpi_replay(plat_doc, index, collectives={"allreduce": "rdb"}, timeout=3600)
            smpi_s = time.perf_counter() - t0
            ratio = smpi_s / ours_s
            out["replay"].append({
                "ranks": a.ranks, "actions": total, "commaware_s": ours_s, "smpi_s": smpi_s, "smpi_build_s": build_s,
                "speedup": ratio, "target": SPEEDUP_TARGET, "ok": ratio >= SPEEDUP_TARGET,
                "makespan_commaware": inside["makespan"], "makespan_smpi": smpi.makespan,
                "rel_diff": abs(inside["makespan"] - smpi.makespan) / smpi.makespan,
                "smpi_us_per_action": 1e6 * smpi_s / total, "in_process": inside,
                "peak_rss_bytes": inside["peak_rss_bytes"], "base_rss_bytes": base_rss,
                "bytes_per_action": (inside["peak_rss_bytes"] - base_rss) / (total - base_actions)})
    if a.npb:
        out["npb"] = npb_rows(a)
    with tempfile.TemporaryDirectory(prefix="commaware-bench-ti-load-") as tmp:
        index, total = write_trace(Path(tmp), a.ranks, a.load_actions // a.ranks, a.seed)
        t0 = time.perf_counter()
        trace = commaware.load_trace(index)
        load_s = time.perf_counter() - t0
        out["load"] = {"actions": total, "ops": trace.n_ops, "seconds": load_s, "target_s": LOAD_TARGET_S, "ok": load_s < LOAD_TARGET_S}
    if a.json:
        print(json.dumps(out))
        return
    for r in out["replay"]:
        i = r["in_process"]
        print(f"TI replay, {r['ranks']} ranks, {r['actions']:,} actions: commaware {r['commaware_s']:.2f} s, SMPI {r['smpi_s']:.2f} s "
              f"(whole processes; SMPI's replay program built beforehand, untimed: {r['smpi_build_s']:.2f} s): {r['speedup']:.1f}x (target >= {SPEEDUP_TARGET:g}x: {'ok' if r['ok'] else 'MISSED'}); "
              f"makespans {r['makespan_commaware']:.9g} / {r['makespan_smpi']:.9g} s, relative difference {r['rel_diff']:.1e}")
        print(f"  in process: load {i['load_s']:.3f} s ({i['load_actions_per_s']:,.0f} actions/s), replay {i['replay_s']:.3f} s "
              f"({i['replay_actions_per_s']:,.0f} actions/s, {i['events_per_s']:,.0f} events/s); "
              f"SMPI {r['smpi_us_per_action']:.2f} us an action (whole process)")
        print(f"  commaware peak RSS {r['peak_rss_bytes'] / 2**20:,.0f} MiB ({r['base_rss_bytes'] / 2**20:,.0f} MiB on a "
              f"{a.ranks}-rank trace of one iteration): {r['bytes_per_action']:.0f} B an action")
    for r in out.get("npb", []):
        print(f"{r['program'].upper()} class {r['class']}, {r['ranks']} ranks, {r['ops']:,} ops (traced by SMPI in "
              f"{r['trace_s']:.1f} s): commaware {r['commaware_s']:.2f} s, SMPI {r['smpi_s']:.2f} s: {r['speedup']:.1f}x "
              f"(target >= {SPEEDUP_TARGET:g}x: {'ok' if r['ok'] else 'MISSED'}); makespans {r['makespan_commaware']:.9g} / "
              f"{r['makespan_smpi']:.9g} s ({r['rel_diff']:.1e}); in process: load {r['in_process']['load_actions_per_s']:,.0f} "
              f"actions/s, replay {r['in_process']['replay_actions_per_s']:,.0f} actions/s")
    ld = out["load"]
    print(f"TI load, {ld['actions']:,} actions ({ld['ops']:,} ops): {ld['seconds']:.3f} s "
          f"(target < {LOAD_TARGET_S:g} s: {'ok' if ld['ok'] else 'MISSED'})")


def npb_rows(a: argparse.Namespace) -> list[dict[str, Any]]:
    """NPB programs built, traced by SMPI and replayed by both, whole process against whole process."""
    from bench_smpi_defaults import build_npb

    rows = []
    with tempfile.TemporaryDirectory(prefix="commaware-bench-ti-npb-") as tmp:
        work = (a.work or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        programs = a.npb_programs.split(",")
        binaries = build_npb(a.npb.resolve(), work, programs, a.npb_class)
        plat_doc = platform(a.npb_ranks)
        plat = work / "platform.json"
        plat.write_text(json.dumps(plat_doc))
        for program in programs:
            print(f"tracing NPB {program.upper()} class {a.npb_class} on {a.npb_ranks} ranks with smpirun -trace-ti",
                  file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            index = smpi_replay.trace_binary(binaries[program], a.npb_ranks, plat_doc,
                                             work / f"trace-{program}-{a.npb_class}-{a.npb_ranks}", timeout=3600)
            trace_s = time.perf_counter() - t0
            ours_s, inside = run_commaware(plat, index, coll="smpi")
            t0 = time.perf_counter()
            smpi = smpi_replay.run_smpi_replay(plat_doc, index, timeout=3600)
            smpi_s = time.perf_counter() - t0
            rows.append({"program": program, "class": a.npb_class, "ranks": a.npb_ranks, "ops": int(inside["ops"]),
                         "trace_s": trace_s, "commaware_s": ours_s, "smpi_s": smpi_s, "speedup": smpi_s / ours_s,
                         "target": SPEEDUP_TARGET, "ok": smpi_s / ours_s >= SPEEDUP_TARGET,
                         "makespan_commaware": inside["makespan"], "makespan_smpi": smpi.makespan,
                         "rel_diff": abs(inside["makespan"] - smpi.makespan) / smpi.makespan, "in_process": inside})
    return rows


if __name__ == "__main__":
    main()
