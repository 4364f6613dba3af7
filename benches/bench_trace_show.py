#!/usr/bin/env python3
"""Benchmark of `commaware trace show` (issue 27, item 7): a SimGrid TI trace of about a
million actions, made by repeating the body of a TI test trace (tests/data/ti_colls: every
collective, sendRecv, irecv and send on 4 ranks) in each rank's file, is loaded and summarised
in process, with and without the communication matrix; and the whole command is timed as a
process. Reports actions per second. Target: the million-action trace in about a second
(loading included). Nothing is asserted: the target is marked ``ok`` or ``MISSED``.

Usage::

    .venv/bin/python benches/bench_trace_show.py             # about 1,000,000 actions
    .venv/bin/python benches/bench_trace_show.py --actions 200000 --json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import best

import commaware

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "data" / "ti_colls"
#: Seconds for the whole show of about a million actions (load and summary, in process).
TARGET_S = 1.5


def write_trace(directory: Path, actions: int) -> tuple[Path, int]:
    """An index and per-rank files: each rank's body (its lines between init and finalize)
    repeated until the trace has about `actions` actions; returns the index and the actions."""
    bodies = []
    for name in (SOURCE / "index.txt").read_text().split():
        lines = [ln for ln in (SOURCE / name).read_text().splitlines() if ln.strip()]
        rank = lines[0].split()[0]
        bodies.append((name, rank, [ln for ln in lines if ln.split()[1] not in ("init", "finalize")]))
    per_round = sum(len(body) for _, _, body in bodies)
    repeats = max(1, round(actions / per_round))
    total = 0
    for name, rank, body in bodies:
        text = f"{rank} init\n" + ("\n".join(body) + "\n") * repeats + f"{rank} finalize\n"
        (directory / name).write_text(text)
        total += len(body) * repeats + 2
    index = directory / "index.txt"
    index.write_text("".join(name + "\n" for name, _, _ in bodies))
    return index, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--actions", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="commaware-bench-show-") as tmp:
        index, total = write_trace(Path(tmp), a.actions)
        load_s, trace = best(lambda: commaware.load_trace(index), a.repeat)
        summary_s, (summary, _) = best(lambda: commaware.summarize_trace(trace), a.repeat)
        matrix_s, _ = best(lambda: commaware.summarize_trace(trace, matrix=True), a.repeat)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "commaware.cli", "trace", "show", str(index), "--json"],
                       capture_output=True, check=True)
        process_s = time.perf_counter() - t0
    show_s = load_s + summary_s
    out: dict[str, Any] = {
        "actions": total, "ops": summary["ops"], "ranks": summary["ranks"], "load_s": load_s, "summary_s": summary_s,
        "summary_with_matrix_s": matrix_s, "show_s": show_s, "process_s": process_s,
        "actions_per_s": total / show_s, "summary_actions_per_s": total / summary_s,
        "target_s": TARGET_S, "ok": show_s <= TARGET_S,
    }
    if a.json:
        print(json.dumps(out))
        return
    print(f"trace show, TI, {total:,} actions ({out['ops']:,} ops, {out['ranks']} ranks): load {load_s:.3f} s + summary "
          f"{summary_s:.3f} s ({matrix_s:.3f} s with the matrix) = {show_s:.3f} s in process, "
          f"{out['actions_per_s']:,.0f} actions/s (the summary alone {out['summary_actions_per_s']:,.0f}/s); "
          f"whole process {process_s:.2f} s (target <= {TARGET_S:g} s in process: {'ok' if out['ok'] else 'MISSED'})")


if __name__ == "__main__":
    main()
