#!/usr/bin/env python3
"""Timelines of a million-message run (issue 42, item 3): the size and the time of writing each
timeline format of the same run, side by side.

The run: ``--ranks`` ranks (64), a host each on examples/cluster16.json's cluster, each iteration
a 100 µs compute then a shift round the ring (an MPI_Sendrecv of 4 KiB to the right, from the
left: ``--ranks`` messages); enough iterations for ``--messages`` messages (a million).
Point-to-point messages, so that every format records each of them (an OTF2 archive, as
Score-P writes one, has no record of a collective's own messages). Each as a whole process as a user runs
it: ``commaware simulate PLATFORM TRACE --quiet`` without a timeline, then with ``--timeline``
``run.paje`` (SimGrid's Paje), ``run.otf2`` (OTF2, the archive's files and folder together) and
``run.perfetto-trace``. Printed: wall time, its ratio to the run without a timeline, peak RSS,
the file's size and the Perfetto file's size against the Paje and OTF2 ones.

Target: the Perfetto trace of a million messages stays openable in ui.perfetto.dev, whose
in-browser trace processor holds the whole trace in WebAssembly memory: under
``PERFETTO_TARGET_BYTES`` (1 GiB, our threshold). Nothing is asserted.

Usage::

    .venv/bin/python benches/bench_timeline.py                 # 64 ranks, ~1.0 M messages
    .venv/bin/python benches/bench_timeline.py --messages 100000 --json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benches"))
from common import measure_process  # noqa: E402

PERFETTO_TARGET_BYTES = 1 << 30
FORMATS = {"none": None, "paje": "run.paje", "otf2": "run.otf2", "perfetto": "run.perfetto-trace"}


def size_of(path: Path) -> int:
    """Bytes of `path` and, for an OTF2 anchor, of its `.def` file and its folder."""
    total = path.stat().st_size
    if path.suffix == ".otf2":
        total += path.with_suffix(".def").stat().st_size
        total += sum(f.stat().st_size for f in path.with_suffix("").rglob("*") if f.is_file())
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args()
    per_iteration = a.ranks
    iterations = max(1, round(a.messages / per_iteration))

    def ring(r: int) -> list[dict[str, Any]]:
        shift = {"op": "sendrecv", "dst": (r + 1) % a.ranks, "src": (r - 1) % a.ranks, "bytes": 4096, "tag": 1,
                 "recvtag": 1}
        return [{"op": "compute", "seconds": 1e-4}, shift] * iterations
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="commaware-bench-timeline-") as tmp:
        folder = Path(tmp)
        (folder / "trace.json").write_text(json.dumps({"ranks": [ring(r) for r in range(a.ranks)]}))
        platform = json.loads((ROOT / "examples" / "cluster16.json").read_text())
        platform["cluster"]["count"] = a.ranks  # a host per rank
        (folder / "platform.json").write_text(json.dumps(platform))
        for fmt, name in FORMATS.items():
            print(f"{fmt} ...", file=sys.stderr, flush=True)
            cmd = [sys.executable, "-m", "commaware.cli", "simulate", str(folder / "platform.json"),
                   str(folder / "trace.json"), "--quiet"]
            if name:
                cmd += ["--timeline", str(folder / name)]
            m = measure_process(cmd)
            if m["code"] != 0:
                raise SystemExit(f"{' '.join(cmd)} failed ({m['code']}): {m['stderr'][-2000:]}")
            rows.append({"format": fmt, "wall_s": round(m["wall_s"], 3), "peak_rss_bytes": m["peak_rss_bytes"],
                         "bytes": size_of(folder / name) if name else 0})
    base = rows[0]["wall_s"]
    by = {r["format"]: r for r in rows}
    for r in rows:
        r["wall_over_no_timeline"] = round(r["wall_s"] / base, 3)
    perfetto = by["perfetto"]["bytes"]
    result: dict[str, Any] = {
        "ranks": a.ranks, "messages": iterations * per_iteration, "rows": rows,
        "perfetto_over_paje": round(perfetto / by["paje"]["bytes"], 4),
        "perfetto_over_otf2": round(perfetto / by["otf2"]["bytes"], 4),
        "perfetto_target_bytes": PERFETTO_TARGET_BYTES, "perfetto_target_met": perfetto <= PERFETTO_TARGET_BYTES,
    }
    if a.json:
        print(json.dumps(result))
        return
    print(f"{a.ranks} ranks, {result['messages']:,} messages (shifts of 4 KiB round a ring)")
    print(f"{'timeline':<10} {'wall s':>8} {'× none':>7} {'peak RSS MB':>12} {'size MB':>9}")
    for r in rows:
        print(f"{r['format']:<10} {r['wall_s']:>8.2f} {r['wall_over_no_timeline']:>7.2f} "
              f"{r['peak_rss_bytes'] / 2**20:>12.0f} {r['bytes'] / 2**20:>9.1f}")
    ok = "ok" if result["perfetto_target_met"] else "MISSED"
    print(f"Perfetto file: {result['perfetto_over_paje']:.2f} × the Paje file, {result['perfetto_over_otf2']:.2f} × the "
          f"OTF2 archive [{ok}: target under {PERFETTO_TARGET_BYTES / 2**30:.0f} GiB]")


if __name__ == "__main__":
    main()
