#!/usr/bin/env python3
"""The project's harness for AccaSim (PyPI `accasim` 1.1.3): run one of its batch
dispatchers on an SWF log and print one JSON line.

Run with a Python that has AccaSim installed (benches/bench_cosched.py makes one in
.cache/accasim/venv), not the project's venv:

    .cache/accasim/venv/bin/python benches/peers/accasim_run.py --swf LOG.swf --processors 2004 --policy fifo

The cluster is `--processors` nodes of one core each (and memory that never binds: AccaSim
needs a `mem` resource when the log reports memory). Jobs with a negative runtime are left
out first (commaware skips them too), so both simulators schedule the same jobs. The JSON
line: `wall_s` (AccaSim's constructor, which reads the log, and its whole simulation),
`jobs_done`, and wait, response and bounded slowdown (τ = 10 s) recomputed here from each
finished job's (submit, start, end), so they compare with commaware's.

AccaSim 1.1.3 imports `collections.Mapping`, gone since Python 3.10: aliased here before
the import. Its `EASYBackfilling` (`--policy easy`) does not protect the head job's
reservation (see examples/cosched/easy_guarantee.swf), so compare speed on FIFO.
"""

from __future__ import annotations

import argparse
import collections
import collections.abc
import json
import os
import sys
import tempfile
import time

TAU_S = 10.0


def filtered_copy(swf: str, out_dir: str) -> tuple[str, int, bool]:
    """A copy of the log without negative-runtime jobs; (path, jobs kept, has memory)."""
    path = os.path.join(out_dir, os.path.basename(swf))
    kept, memory = 0, False
    with open(swf, errors="replace") as src, open(path, "w") as dst:
        for line in src:
            fields = line.split()
            if not fields or line.lstrip().startswith(";"):
                dst.write(line)
                continue
            if float(fields[3]) < 0:
                continue
            memory = memory or float(fields[6]) > 0 or float(fields[9]) > 0
            dst.write(line)
            kept += 1
    return path, kept, memory


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--swf", required=True)
    ap.add_argument("--processors", type=int, required=True)
    ap.add_argument("--policy", choices=["fifo", "easy"], default="fifo")
    a = ap.parse_args()

    if not hasattr(collections, "Mapping"):
        collections.Mapping = collections.abc.Mapping  # type: ignore[attr-defined]
    from accasim.base import event_class
    from accasim.base.allocator_class import FirstFit
    from accasim.base.scheduler_class import EASYBackfilling, FirstInFirstOut
    from accasim.base.simulator_class import Simulator

    finished: list[tuple[float, float, float]] = []
    original = event_class.EventManager.finish_event

    def finish_event(self, job):  # type: ignore[no-untyped-def]
        original(self, job)
        finished.append((job.queued_time, job.start_time, job.end_time))

    event_class.EventManager.finish_event = finish_event  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory(prefix="accasim-") as tmp:
        swf, kept, memory = filtered_copy(a.swf, tmp)
        group = {"core": 1, **({"mem": 2**40} if memory else {})}
        config = {"system_name": f"cluster-{a.processors}", "start_time": 0,
                  "equivalence": {"processor": {"core": 1}}, "groups": {"node": group},
                  "resources": {"node": a.processors}}
        sys_config = os.path.join(tmp, "system.json")
        with open(sys_config, "w") as f:
            json.dump(config, f)
        dispatcher = (FirstInFirstOut if a.policy == "fifo" else EASYBackfilling)(FirstFit())
        t0 = time.perf_counter()
        sim = Simulator(swf, sys_config, dispatcher, RESULTS_FOLDER_PATH=os.path.join(tmp, "results"),
                        scheduling_output=False, statistics_output=False, show_statistics=False)
        sim.start_simulation(system_status=False)
        wall = time.perf_counter() - t0
    n = len(finished)
    waits = [s - q for q, s, _ in finished]
    responses = [e - q for q, _, e in finished]
    bsld = [max(1.0, (e - q) / max(e - s, TAU_S)) for q, s, e in finished]
    print(json.dumps({
        "sim": "accasim", "version": "1.1.3", "policy": a.policy, "processors": a.processors, "jobs_in_log": kept,
        "jobs_done": n, "wall_s": wall,
        "avg_wait_s": sum(waits) / n if n else None, "avg_response_s": sum(responses) / n if n else None,
        "avg_bounded_slowdown": sum(bsld) / n if n else None,
        "python": sys.version.split()[0],
    }))


if __name__ == "__main__":
    main()
