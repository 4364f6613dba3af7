#!/usr/bin/env python3
"""Benchmark of trace replay against SimGrid's SMPI (issue 17): a time-independent trace of
at least a million actions replayed by SMPI 3.32's offline replay and by commaware, each as a
whole process (`smpirun -replay …` against `commaware simulate … --format ti`), in the same
run, with the ratio printed; and the load time of a 1.8-million-action trace in process.
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

    .venv/bin/python benches/bench_ti_replay.py                  # 64 ranks × 16,384 actions
    .venv/bin/python benches/bench_ti_replay.py --actions 4096 --json
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import commaware

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "peers"))
import smpi_replay  # noqa: E402

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


def run_commaware(plat: Path, index: Path) -> tuple[float, float]:
    """Wall time of `commaware simulate --format ti` as a whole process (its summary output, as
    SMPI prints its own), and the makespan from the API (all digits)."""
    t0 = time.perf_counter()
    subprocess.run([str(Path(sys.executable).parent / "commaware"), "simulate", str(plat), str(index), "--format", "ti", "-q"],
                   capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - t0
    result = commaware.simulate(plat, commaware.load_trace(index), record_messages=False, record_timeline=False)
    return seconds, result.makespan


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--actions", type=int, default=16384, help="actions per rank (default: 64 × 16,384 ≈ 1.05 M in all)")
    ap.add_argument("--load-actions", type=int, default=1_800_000, help="actions of the load-time trace")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="commaware-bench-ti-") as tmp:
        d = Path(tmp)
        index, total = write_trace(d, a.ranks, a.actions, a.seed)
        plat_doc = platform(a.ranks)
        plat = d / "platform.json"
        plat.write_text(json.dumps(plat_doc))
        ours_s, ours_makespan = run_commaware(plat, index)
        # Compile the replay program first (a cold cache would otherwise time smpicxx too);
        # run_smpi_replay then finds it in the cache.
        b0 = time.perf_counter()
        smpi_replay.build_replay()
        build_s = time.perf_counter() - b0
        t0 = time.perf_counter()
        smpi = smpi_replay.run_smpi_replay(plat_doc, index, collectives={"allreduce": "rdb"}, timeout=3600)
        smpi_s = time.perf_counter() - t0
        ratio = smpi_s / ours_s
        out["replay"] = {"ranks": a.ranks, "actions": total, "commaware_s": ours_s, "smpi_s": smpi_s, "smpi_build_s": build_s, "speedup": ratio,
                         "target": SPEEDUP_TARGET, "ok": ratio >= SPEEDUP_TARGET, "makespan_commaware": ours_makespan,
                         "makespan_smpi": smpi.makespan, "rel_diff": abs(ours_makespan - smpi.makespan) / smpi.makespan}
    with tempfile.TemporaryDirectory(prefix="commaware-bench-ti-load-") as tmp:
        index, total = write_trace(Path(tmp), a.ranks, a.load_actions // a.ranks, a.seed)
        t0 = time.perf_counter()
        trace = commaware.load_trace(index)
        load_s = time.perf_counter() - t0
        out["load"] = {"actions": total, "ops": trace.n_ops, "seconds": load_s, "target_s": LOAD_TARGET_S, "ok": load_s < LOAD_TARGET_S}
    if a.json:
        print(json.dumps(out))
        return
    r = out["replay"]
    print(f"TI replay, {r['ranks']} ranks, {r['actions']:,} actions: commaware {r['commaware_s']:.2f} s, SMPI {r['smpi_s']:.2f} s "
          f"(whole processes; SMPI's replay program built beforehand, untimed: {r['smpi_build_s']:.2f} s): {r['speedup']:.1f}x (target >= {SPEEDUP_TARGET:g}x: {'ok' if r['ok'] else 'MISSED'}); "
          f"makespans {r['makespan_commaware']:.9g} / {r['makespan_smpi']:.9g} s, relative difference {r['rel_diff']:.1e}")
    ld = out["load"]
    print(f"TI load, {ld['actions']:,} actions ({ld['ops']:,} ops): {ld['seconds']:.3f} s "
          f"(target < {LOAD_TARGET_S:g} s: {'ok' if ld['ok'] else 'MISSED'})")


if __name__ == "__main__":
    main()
