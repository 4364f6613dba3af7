#!/usr/bin/env python3
"""Benchmark of the tiling simulation (paper 001), two runs the issue names:

* one simulation of 16 ranks × 4,096 tiles (16×16×4096 on 4×4, z = 1) under GigE
  (the paper 004 penalty model, 1 Gb/s) with interference on every host (paper 000's
  Java rates), both programs;
* the full tile-height sweep of 32×32×4096 on 4×4 with both programs simulated at every z
  (target: under 10 s, as `commaware tiling --sweep-z` runs it).

Best of ``--repeat``; each time includes the Python call. Nothing is asserted: targets are
marked ``ok`` or ``MISSED``.

Usage::

    .venv/bin/python benches/bench_tiling.py
    .venv/bin/python benches/bench_tiling.py --json
"""

from __future__ import annotations

import argparse
import json
import platform

from common import best

from commaware import tiling as tl

SWEEP_TARGET_S = 10.0
GIGE_INTERFERENCE = {"cluster": {"count": 16, "speed": 1e9, "interference": {"recv": 0.052, "send": 0.034}},
                     "network": {"model": "gige", "bandwidth": 125e6, "latency": 50e-6}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    single_s, row = best(lambda: tl.analyze([16, 16, 4096], [4, 4], 1, platform=GIGE_INTERFERENCE), a.repeat)
    sweep_s, doc = best(lambda: tl.sweep([32, 32, 4096], [4, 4]), a.repeat)
    tiles = sum(2 ** 12 // r["tile_height"] for r in doc["rows"]) * 16 * 2
    out = {"machine": platform.machine(), "python": platform.python_version(),
           "gige_interference_16x4096": {"seconds": single_s, "sim_block": row["sim_block"], "sim_overlap": row["sim_overlap"],
                                         "tiles_simulated": 2 * 16 * 4096},
           "sweep_32x32x4096": {"seconds": sweep_s, "heights": len(doc["rows"]), "tiles_simulated": tiles,
                                "target_s": SWEEP_TARGET_S, "ok": sweep_s < SWEEP_TARGET_S}}
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


if __name__ == "__main__":
    main()
