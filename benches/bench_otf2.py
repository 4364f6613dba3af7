#!/usr/bin/env python3
"""Reading and replaying an OTF2 archive of a million events (issue 27, "OTF2 at scale").

The archive is written first (not timed) with the `otf2` package's writer, as Score-P writes
one: ``--ranks`` ranks (64) on a ring, each iteration a compute gap, an MPI_Isend to the
right, an MPI_Irecv from the left and an MPI_Waitall completing both (10 records a rank and
iteration: the MPI regions' Enter/Leave and the MPI records), an MPI_Allreduce every 64
iterations; gaps and sizes drawn per iteration with ``--seed``. Then, each as a whole process
as a user runs it: ``commaware trace show ARCHIVE`` (reading the archive through the OTF2
library in the core, and a summary) and ``commaware simulate PLATFORM ARCHIVE`` (reading and
replaying, on examples/cluster16.json's cluster with a host per rank). Printed: wall time, events per second and peak RSS (the child's own, ``common.measure_process``).
Target: a million events read in a few seconds (``READ_TARGET_S``). Nothing is asserted.

Usage::

    .venv/bin/python benches/bench_otf2.py                      # 64 ranks, ~1.0 M events
    .venv/bin/python benches/bench_otf2.py --events 100000 --json
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from traces.otf2_archives import Program  # noqa: E402
from common import measure_process  # noqa: E402

from otf2.enums import CollectiveOp  # noqa: E402

READ_TARGET_S = 5.0
EVENTS_PER_ITERATION = 10


def write_archive(directory: Path, ranks: int, events: int, seed: int) -> tuple[Path, int]:
    """The ring archive; returns its anchor and the number of events written."""
    rng = random.Random(seed)
    iterations = max(1, events // (ranks * EVENTS_PER_ITERATION))
    plan = [(rng.uniform(1e-4, 1e-3), rng.choice((64, 1024, 8192, 65536, 262144))) for _ in range(iterations)]
    p = Program(directory / "ring", ranks)
    for i, (gap, size) in enumerate(plan):
        for rank in p.ranks:
            right, left = (rank.r + 1) % ranks, (rank.r - 1) % ranks
            rank.compute(gap, op=False)
            reqs = [rank.isend(right, size, tag=1), rank.irecv(left, size, tag=1)]
            rank.waitall(reqs)
            if i % 64 == 63:
                rank.collective("MPI_Allreduce", CollectiveOp.ALLREDUCE, 2**32 - 1, 8 * ranks, 8 * ranks, {})
            rank.ops.clear()  # the JSON twin is not needed here
    anchor, _ = p.close()
    n_events = ranks * (iterations * EVENTS_PER_ITERATION + (iterations // 64) * 4 + 4)  # + Init/Finalize
    return anchor, n_events


def run(args: list[str]) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall seconds and peak RSS (MB) of `commaware ARGS` in a child process, and its output
    (read after it ended: keep it small)."""
    with tempfile.NamedTemporaryFile(prefix="commaware-bench-otf2-out-") as out:
        measured = measure_process([sys.executable, "-m", "commaware.cli", *args], stdout=out.name)
        text = Path(out.name).read_text()
    done = subprocess.CompletedProcess(args, measured["code"], text, measured["stderr"])
    if done.returncode != 0:
        raise SystemExit(f"commaware {' '.join(args)} failed: {done.stderr}")
    return measured["wall_s"], measured["peak_rss_bytes"] / (1 << 20), done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        anchor, n_events = write_archive(Path(tmp), a.ranks, a.events, a.seed)
        written_s = time.perf_counter() - t0
        show_s, show_mb, shown = run(["trace", "show", str(anchor), "--json"])
        ops = json.loads(shown.stdout)["ops"]
        platform = json.loads((ROOT / "examples" / "cluster16.json").read_text())
        platform["cluster"]["count"] = a.ranks  # a host per rank
        (Path(tmp) / "platform.json").write_text(json.dumps(platform))
        # No --json: its messages would fill the pipe, read only once the child ended.
        sim_s, sim_mb, simulated = run(["simulate", str(Path(tmp) / "platform.json"), str(anchor), "--quiet"])
        makespan = float(simulated.stdout.split("makespan=", 1)[1].split()[0])
    result: dict[str, Any] = {
        "ranks": a.ranks, "events": n_events, "ops": ops, "archive_written_s": round(written_s, 2),
        "read_s": round(show_s, 3), "read_events_per_s": round(n_events / show_s), "read_peak_rss_mb": round(show_mb, 1),
        "replay_s": round(sim_s, 3), "replay_peak_rss_mb": round(sim_mb, 1), "makespan_s": makespan,
        "read_target_s": READ_TARGET_S, "read_target_met": show_s <= READ_TARGET_S,
    }
    if a.json:
        print(json.dumps(result))
        return
    print(f"archive: {a.ranks} ranks, {n_events:,} events, {ops:,} ops (written in {written_s:.1f} s, not timed)")
    print(f"read (trace show):  {show_s:.2f} s, {n_events / show_s:,.0f} events/s, peak RSS {show_mb:.0f} MB "
          f"[{'ok' if show_s <= READ_TARGET_S else 'MISSED'}: target {READ_TARGET_S:.0f} s]")
    print(f"read + replay:      {sim_s:.2f} s, peak RSS {sim_mb:.0f} MB, makespan {makespan:.6f} s")


if __name__ == "__main__":
    main()
