"""How long `commaware sweep --workers 2` takes to stop after SIGINT sent at given delays (the
harness behind issue 45's Dask-starting figures). Each run that takes more than 0.7 s gets
a SIGUSR1 at that point, and faulthandler then dumps every thread's stack on stderr:

    python tests/cli/stop_latency.py WORKDIR 0.6 0.8 1.0 ...   # delays in seconds

Load it yourself (e.g. a busy loop on the other core). Prints one line per run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

BOOT = ("import faulthandler, signal, sys, runpy; faulthandler.register(signal.SIGUSR1, all_threads=True); "
        "sys.argv[0] = 'commaware'; runpy.run_module('commaware.cli', run_name='__main__')")


def main(work: Path, delays: list[float]) -> None:
    work.mkdir(parents=True, exist_ok=True)
    (work / "c64.json").write_text(json.dumps({
        "cluster": {"count": 64, "speed": 1e9, "cores": 2, "memory": 2**32},
        "network": {"model": "maxmin", "bandwidth": 1.25e8, "latency": 5e-5, "eager_threshold": 65536}}))
    ops = [op for _ in range(3000) for op in ({"op": "compute", "flops": 1e6}, {"op": "alltoall", "bytes": 4096})]
    (work / "a2a.json").write_text(json.dumps({"ranks": [ops] * 64}))
    (work / "sweep.toml").write_text(f'command = "simulate"\n[fixed]\nplatform = "{work / "c64.json"}"\n'
                                     f'trace = "{work / "a2a.json"}"\n[grid]\nplacement = ["rrn", "rrp"]\n')
    for delay in delays:
        out = work / "out"
        subprocess.run(["rm", "-rf", str(out)], check=True)
        out.mkdir()
        proc = subprocess.Popen([sys.executable, "-c", BOOT, "sweep", str(work / "sweep.toml"), "--workers", "2",
                                 "--out", "results", "--json"], cwd=out, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                                env={**os.environ, "COMMAWARE_PROGRESS_SECONDS": "0.1"})
        time.sleep(delay)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        while proc.poll() is None and time.monotonic() - sent < 0.7:
            time.sleep(0.01)
        if proc.poll() is None:
            proc.send_signal(signal.SIGUSR1)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
        print(f"delay {delay}: exit {proc.returncode}, stopped in {took:.2f} s", flush=True)
        if took > 0.7:
            print(err[-6000:], flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), [float(d) for d in sys.argv[2:]])
