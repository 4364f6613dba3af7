#!/usr/bin/env python3
"""Reading a DUMPI trace of ten million MPI calls, against reading the same trace as SimGrid
TI text, in the same run.

The trace is recorded (once: it is kept in ``--work``) from a real run: benches/dumpi_calls.c,
built with the dev extras' ``mpicc`` (Open MPI, beside this Python), run on ``--ranks`` ranks
(4) with sst-dumpi's ``libdumpi.so`` preloaded (``--dumpi-prefix``, an installed sst-dumpi:
``tests/peers/dumpi_record.py`` builds one). Each iteration, on every rank, an 8-byte ring
exchange both ways (2 MPI_Irecv, 2 MPI_Isend, MPI_Waitall), an 8-byte shift by MPI_Send and
MPI_Recv, and every 16th iteration an MPI_Allreduce of one double: 7 1/16 calls an iteration
and rank; ``--iterations`` (354,000) makes 10,000,524 calls on 4 ranks. The recording is
redone when the program's source changed, or with ``--rerecord``.

Then, each run: the trace is read by ``commaware.load_trace(META, format="dumpi")`` and
written as TI text by ``commaware.traces.export.export_ti`` (compute at
``--flops-per-second``; not timed against anything, its time is printed); the DUMPI trace and
the TI trace are read in process ``--repeat`` times each, alternately (best and median wall
seconds of ``load_trace``, and the reader's own ``Trace.load_seconds`` of the best), and once
each in a child process (``python -c 'import commaware; commaware.load_trace(...)'``) for its
wall time and peak RSS (``common.measure_process``; the peak of a child that only imports
commaware is printed beside them). Printed: calls (DUMPI's records, ``Trace.dumpi_stats``),
ops, seconds, calls per second, file bytes and peak RSS for each reader, and the ratio
DUMPI / TI of the read times (below 1: DUMPI reads faster) and of the file sizes. No target;
nothing is asserted. Progress goes to stderr.

Usage::

    .venv/bin/python benches/bench_dumpi_read.py                           # 4 ranks, ~10.0 M calls
    .venv/bin/python benches/bench_dumpi_read.py --iterations 10000 --json  # ~283 k calls
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import commaware
from commaware.traces.export import export_ti

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "peers"))
from dumpi_record import MPIRUN_FLAGS, ompi5  # noqa: E402  (the dev extras' Open MPI)
from common import measure_process  # noqa: E402

SOURCE = ROOT / "benches" / "dumpi_calls.c"
#: MPI calls of one rank around the loop of dumpi_calls.c (7 1/16 an iteration in it).
CALLS_OUTSIDE_LOOP = 6
#: A child that reads a trace, and one that only imports commaware (the base of the peak RSS).
READ_CHILD = "import sys, commaware; commaware.load_trace(sys.argv[1], format=sys.argv[2])"
IMPORT_CHILD = "import commaware"


def say(message: str) -> None:
    print(f"bench_dumpi_read: {message}", file=sys.stderr, flush=True)


def expected_calls(ranks: int, iterations: int) -> int:
    """The MPI calls of dumpi_calls.c on `ranks` ranks (as it counts them)."""
    return ranks * (7 * iterations + iterations // 16 + CALLS_OUTSIDE_LOOP)


def folder_bytes(folder: Path, pattern: str = "*") -> tuple[int, int]:
    """Total bytes and number of the files of `folder` matching `pattern`."""
    files = [f for f in folder.glob(pattern) if f.is_file()]
    return sum(f.stat().st_size for f in files), len(files)


def record(work: Path, prefix: Path, ranks: int, iterations: int, rerecord: bool, timeout: float) -> dict[str, Any]:
    """The DUMPI trace of dumpi_calls.c (`ranks`, `iterations`) in work/run-RANKS-ITERATIONS/dumpi:
    recorded unless already there from the same source; its description (recorded.json)."""
    libdumpi = prefix / "lib" / "libdumpi.so"
    source_sha = hashlib.sha256(SOURCE.read_bytes()).hexdigest()
    folder = work / f"run-{ranks}-{iterations}"
    described = folder / "recorded.json"
    dumpi_dir = folder / "dumpi"
    if not rerecord and described.is_file():
        info = json.loads(described.read_text())
        metas = list(dumpi_dir.glob("*.meta"))
        if info.get("source_sha256") == source_sha and len(metas) == 1 and len(list(dumpi_dir.glob("*.bin"))) == ranks:
            say(f"recorded trace found in {folder} (recorded {info['recorded_at']} in {info['record_s']:.1f} s; "
                "--rerecord to redo)")
            return {**info, "cached": True}
        say(f"the trace in {folder} is stale or incomplete: recording again")
    if not libdumpi.is_file():
        raise SystemExit(f"bench_dumpi_read: {libdumpi} not found: build sst-dumpi (tests/peers/dumpi_record.py "
                         "builds and installs one; its prefix is --dumpi-prefix)")
    tc = ompi5()
    shutil.rmtree(folder, ignore_errors=True)
    dumpi_dir.mkdir(parents=True)
    binary = folder / "dumpi_calls"
    say(f"building {binary} with {tc.mpicc}")
    subprocess.run([tc.mpicc, "-O2", str(SOURCE), "-o", str(binary)], check=True)
    argv = [tc.mpirun, *MPIRUN_FLAGS, "-np", str(ranks), "-x", f"LD_PRELOAD={libdumpi}", str(binary), str(iterations)]
    env = {k: v for k, v in os.environ.items() if k not in ("DUMPI_CONF", "LD_PRELOAD")}  # DUMPI's defaults
    say(f"recording {expected_calls(ranks, iterations):,} calls: (cd {dumpi_dir} && {' '.join(argv)})")
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=dumpi_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    record_s = time.perf_counter() - t0
    (folder / "stdout.txt").write_text(proc.stdout)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("dumpi_calls:")), None)
    if proc.returncode != 0 or line is None:
        tail = "\n".join(proc.stdout.strip().splitlines()[-10:])
        raise SystemExit(f"bench_dumpi_read: the recording failed (exit {proc.returncode}):\n{tail}")
    metas = list(dumpi_dir.glob("*.meta"))
    if len(metas) != 1 or len(list(dumpi_dir.glob("*.bin"))) != ranks:
        raise SystemExit(f"bench_dumpi_read: DUMPI wrote {len(metas)} .meta and {len(list(dumpi_dir.glob('*.bin')))} "
                         f".bin files in {dumpi_dir}, expected 1 and {ranks}")
    info = {"ranks": ranks, "iterations": iterations, "program_calls": int(line.split(" iterations, ")[1].split()[0]),
            "program_output": line, "record_s": record_s, "recorded_at": time.strftime("%Y-%m-%d %H:%M:%S"),
            "meta": metas[0].name, "command": f"(cd {dumpi_dir} && {' '.join(argv)})", "mpi": tc.version(),
            "dumpi_prefix": str(prefix), "source_sha256": source_sha}
    described.write_text(json.dumps(info, indent=1) + "\n")
    say(f"recorded in {record_s:.1f} s: {line}")
    return {**info, "cached": False}


def timed_load(path: Path, fmt: str) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    trace = commaware.load_trace(path, format=fmt)
    return time.perf_counter() - t0, trace


def child(path: Path | None, fmt: str = "") -> dict[str, Any]:
    """Wall seconds and peak RSS of a fresh interpreter reading `path` as `fmt` (or, without a
    path, only importing commaware)."""
    cmd = [sys.executable, "-c", READ_CHILD, str(path), fmt] if path else [sys.executable, "-c", IMPORT_CHILD]
    m = measure_process(cmd)
    if m["code"] != 0:
        raise SystemExit(f"bench_dumpi_read: {' '.join(cmd)} failed ({m['code']}): {m['stderr'][-2000:]}")
    return {"wall_s": m["wall_s"], "peak_rss_bytes": m["peak_rss_bytes"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=354_000,
                    help="dumpi_calls.c's iterations (default 354,000: 10,000,524 MPI calls on 4 ranks)")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--work", type=Path, default=Path("/tmp/commaware-bench-dumpi-read"),
                    help="where the program, its DUMPI trace (kept between runs) and the TI export go")
    ap.add_argument("--dumpi-prefix", type=Path, default=Path("/work/peers/dumpi"),
                    help="an installed sst-dumpi (PREFIX/lib/libdumpi.so)")
    ap.add_argument("--rerecord", action="store_true", help="record the trace again even when kept")
    ap.add_argument("--record-timeout", type=float, default=3600.0, help="seconds the recording may take")
    ap.add_argument("--repeat", type=int, default=5, help="reads of each trace in process")
    ap.add_argument("--flops-per-second", type=float, default=1e9, help="the TI export's rate for compute")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args()
    work = a.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    rec = record(work, a.dumpi_prefix.resolve(), a.ranks, a.iterations, a.rerecord, a.record_timeout)
    dumpi_dir = work / f"run-{a.ranks}-{a.iterations}" / "dumpi"
    meta = dumpi_dir / rec["meta"]

    say(f"reading {meta} and writing it as TI text")
    first_s, trace = timed_load(meta, "dumpi")
    calls = trace.dumpi_stats["calls"]
    if calls != rec["program_calls"]:
        say(f"warning: DUMPI's reader read {calls:,} calls, the program made {rec['program_calls']:,}")
    ti_dir = work / f"run-{a.ranks}-{a.iterations}" / "ti"
    shutil.rmtree(ti_dir, ignore_errors=True)
    t0 = time.perf_counter()
    index = export_ti(trace, ti_dir, flops_per_second=a.flops_per_second)
    export_s = time.perf_counter() - t0
    del trace
    say(f"  first read {first_s:.2f} s, TI export {export_s:.2f} s ({index})")

    readers = {"dumpi": (meta, "dumpi"), "ti": (index, "ti")}
    times: dict[str, list[float]] = {name: [] for name in readers}
    inside: dict[str, dict[str, Any]] = {}
    for i in range(a.repeat):  # alternately, so that a drift of the machine falls on both
        for name, (path, fmt) in readers.items():
            seconds, trace = timed_load(path, fmt)
            times[name].append(seconds)
            if seconds == min(times[name]):
                inside[name] = {"ops": trace.n_ops, "load_seconds": trace.load_seconds}
            del trace
            say(f"  read {i + 1}/{a.repeat} {name}: {seconds:.3f} s")
    say("reading each in a child process (wall time, peak RSS)")
    children = {name: child(path, fmt) for name, (path, fmt) in readers.items()}
    base = child(None)

    sizes = {"dumpi": folder_bytes(dumpi_dir), "ti": folder_bytes(ti_dir)}
    rows: dict[str, Any] = {}
    for name in readers:
        best_s, median_s = min(times[name]), statistics.median(times[name])
        rows[name] = {"ops": inside[name]["ops"], "best_s": best_s, "median_s": median_s, "times_s": times[name],
                      "reader_load_s": inside[name]["load_seconds"], "calls_per_s": calls / best_s,
                      "calls_per_s_median": calls / median_s, "bytes": sizes[name][0], "files": sizes[name][1],
                      "child_wall_s": children[name]["wall_s"], "child_peak_rss_bytes": children[name]["peak_rss_bytes"]}
    d, t = rows["dumpi"], rows["ti"]
    result: dict[str, Any] = {
        "ranks": a.ranks, "iterations": a.iterations, "calls": calls, "program_calls": rec["program_calls"],
        "record_s": rec["record_s"], "record_cached": rec["cached"], "recorded_at": rec["recorded_at"],
        "record_command": rec["command"], "mpi": rec["mpi"], "export_ti_s": export_s,
        "flops_per_second": a.flops_per_second, "repeat": a.repeat, "dumpi": d, "ti": t,
        "import_peak_rss_bytes": base["peak_rss_bytes"],
        "dumpi_over_ti": d["best_s"] / t["best_s"], "dumpi_over_ti_median": d["median_s"] / t["median_s"],
        "dumpi_bytes_over_ti_bytes": d["bytes"] / t["bytes"],
        "dumpi_peak_over_ti_peak": d["child_peak_rss_bytes"] / t["child_peak_rss_bytes"],
    }
    if a.json:
        print(json.dumps(result))
        return
    cached = f"recorded {rec['recorded_at']}, kept" if rec["cached"] else "recorded now"
    print(f"dumpi_calls.c, {a.ranks} ranks, {a.iterations:,} iterations: {calls:,} MPI calls in the DUMPI trace "
          f"({cached}: {rec['record_s']:.1f} s under libdumpi); TI export {export_s:.2f} s")
    print(f"{'reader':<7} {'ops':>11} {'best s':>8} {'median s':>9} {'reader s':>9} {'M calls/s':>10} "
          f"{'size MB':>8} {'child s':>8} {'peak RSS MB':>12}")
    for name, r in rows.items():
        print(f"{name:<7} {r['ops']:>11,} {r['best_s']:>8.3f} {r['median_s']:>9.3f} {r['reader_load_s']:>9.3f} "
              f"{r['calls_per_s'] / 1e6:>10.2f} {r['bytes'] / 2**20:>8.1f} {r['child_wall_s']:>8.2f} "
              f"{r['child_peak_rss_bytes'] / 2**20:>12.0f}")
    print(f"best of {a.repeat} in process, alternately; reader s: Trace.load_seconds of the best; child: a fresh "
          f"interpreter reading once (importing commaware alone peaks at {base['peak_rss_bytes'] / 2**20:.0f} MB)")
    print(f"DUMPI / TI: read time {result['dumpi_over_ti']:.2f}x (median {result['dumpi_over_ti_median']:.2f}x), "
          f"file size {result['dumpi_bytes_over_ti_bytes']:.2f}x, child peak RSS {result['dumpi_peak_over_ti_peak']:.2f}x")


if __name__ == "__main__":
    main()
