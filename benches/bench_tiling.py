#!/usr/bin/env python3
"""Benchmark of the tiling simulation (paper 001), two runs the issue names:

* one simulation of 16 ranks × 4,096 tiles (16×16×4096 on 4×4, z = 1) under GigE
  (the paper 004 penalty model, 1 Gb/s) with interference on every host (paper 000's
  Java rates), both programs;
* the full tile-height sweep of 32×32×4096 on 4×4 with both programs simulated at every z
  (target: under 10 s, as `commaware tiling --sweep-z` runs it);
* the SCI sweeps (issue 43, item 5): ``commaware tiling --sweep-z --sci`` beside the same
  sweep without ``--sci``, as whole processes, on 12×12×65,536 (4×4 and 3×3) and 24×24×262,144
  (3×3, the largest grid within the trace limit at z = 1); target: within 2×. ``--sci`` also
  sets t_c to 150 cycles at 800 MHz, which makes the overlapped program network-bound: each
  sender then keeps thousands of messages in flight to its few neighbours. ``--before DIR``
  runs them also with another build's ``python/`` folder first on ``PYTHONPATH`` (a checkout
  with its ``_core.abi3.so``), in the same run.

Best of ``--repeat`` for the first two (each time includes the Python call); the SCI sweeps
run once per build. Nothing is asserted: targets are marked ``ok`` or ``MISSED``.

Usage::

    .venv/bin/python benches/bench_tiling.py
    .venv/bin/python benches/bench_tiling.py --json --before /path/to/old/python
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path
from typing import Any

from common import best, measure_process

from commaware import tiling as tl

SWEEP_TARGET_S = 10.0
SCI_TARGET_X = 2.0
SCI_CASES = [("12x12x65536", "4x4"), ("12x12x65536", "3x3"), ("24x24x262144", "3x3")]
ROOT = Path(__file__).resolve().parents[1]


def sci_sweeps(python_dir: Path, log: Any) -> list[dict[str, Any]]:
    """Each SCI case with and without ``--sci``, through the CLI of the build in `python_dir`."""
    rows = []
    for space, procs in SCI_CASES:
        row: dict[str, Any] = {"space": space, "procs": procs}
        for key, extra in (("plain", []), ("sci", ["--sci"])):
            cmd = ["env", f"PYTHONPATH={python_dir}", sys.executable, "-c", "from commaware.cli import main; main()",
                   "tiling", "--space", space, "--procs", procs, "--sweep-z", *extra, "--json"]
            print(f"    {python_dir}: tiling --space {space} --procs {procs} --sweep-z {' '.join(extra)}", file=log, flush=True)
            r = measure_process(cmd, timeout=3600)
            row[key] = {"wall_s": r["wall_s"], "peak_rss_bytes": r["peak_rss_bytes"], "code": r["code"]}
        row["sci_x_plain"] = row["sci"]["wall_s"] / row["plain"]["wall_s"]
        row["ok"] = row["sci"]["code"] == 0 and row["plain"]["code"] == 0 and row["sci_x_plain"] <= SCI_TARGET_X
        rows.append(row)
    return rows
GIGE_INTERFERENCE = {"cluster": {"count": 16, "speed": 1e9, "interference": {"recv": 0.052, "send": 0.034}},
                     "network": {"model": "gige", "bandwidth": 125e6, "latency": 50e-6}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--before", type=Path, help="python/ folder of another build, for the SCI sweeps' before column")
    ap.add_argument("--skip-sci", action="store_true", help="leave out the SCI sweeps (minutes)")
    a = ap.parse_args()
    single_s, row = best(lambda: tl.analyze([16, 16, 4096], [4, 4], 1, platform=GIGE_INTERFERENCE), a.repeat)
    sweep_s, doc = best(lambda: tl.sweep([32, 32, 4096], [4, 4]), a.repeat)
    tiles = sum(2 ** 12 // r["tile_height"] for r in doc["rows"]) * 16 * 2
    out = {"machine": platform.machine(), "python": platform.python_version(),
           "gige_interference_16x4096": {"seconds": single_s, "sim_block": row["sim_block"], "sim_overlap": row["sim_overlap"],
                                         "tiles_simulated": 2 * 16 * 4096},
           "sweep_32x32x4096": {"seconds": sweep_s, "heights": len(doc["rows"]), "tiles_simulated": tiles,
                                "target_s": SWEEP_TARGET_S, "ok": sweep_s < SWEEP_TARGET_S}}
    if not a.skip_sci:
        builds = {"after": ROOT / "python"}
        if a.before:
            builds = {"before": a.before.resolve(), **builds}
        out["sci_sweeps"] = {"target_x": SCI_TARGET_X,
                             **{label: sci_sweeps(path, sys.stderr) for label, path in builds.items()}}
    if a.json:
        print(json.dumps(out))
        return
    g = out["gige_interference_16x4096"]
    print(f"tiling: 16 ranks x 4,096 tiles, GigE + interference, both programs: {single_s:.3f} s "
          f"({g['tiles_simulated'] / single_s:,.0f} tiles/s); sim_block {g['sim_block']:.4f} s, sim_overlap {g['sim_overlap']:.4f} s")
    s = out["sweep_32x32x4096"]
    mark = "ok" if s["ok"] else "MISSED"
    print(f"tiling: z sweep of 32x32x4096 on 4x4 ({s['heights']} heights, {tiles:,} tiles simulated): {sweep_s:.3f} s "
          f"(target < {SWEEP_TARGET_S:g} s: {mark})")
    for label, rows in out.get("sci_sweeps", {}).items():
        if label == "target_x":
            continue
        for r in rows:
            mark = "ok" if r["ok"] else "MISSED"
            print(f"tiling --sweep-z --sci, {r['space']} on {r['procs']} ({label}): {r['sci']['wall_s']:.2f} s, "
                  f"without --sci {r['plain']['wall_s']:.2f} s: {r['sci_x_plain']:.2f}x (target <= {SCI_TARGET_X:g}x: {mark})")


if __name__ == "__main__":
    main()
