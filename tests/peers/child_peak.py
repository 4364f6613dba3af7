"""A command's exit code, wall seconds and own peak RSS, for the tests (``conftest.run_measured``)
and the benchmarks (``benches/common.measure_process``).

The command runs as the only child of a fresh, small interpreter, which reports its
``RUSAGE_CHILDREN``. Measured from the caller instead (``os.wait4``), the peak would hold the
caller's own size: a child forked from a process keeps that process's high-water mark through
exec in ``ru_maxrss`` (the full suite's pytest, about 260 MB, failed a 250 MB bound that way).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

_MEASURE = """
import resource, subprocess, sys, time
limit, out, err, *cmd = sys.argv[1:]
def cap():
    if int(limit):
        resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
start = time.perf_counter()
with open(out, "wb") as o, open(err, "wb") as e:
    code = subprocess.run(cmd, stdout=o, stderr=e, preexec_fn=cap).returncode
print(code, time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def measure(cmd: Sequence[object], stdout: str | Path = os.devnull, stderr: str | Path = os.devnull, *,
            limit_bytes: int = 0, env: Mapping[str, str] | None = None,
            timeout: float | None = None) -> tuple[int, float, int]:
    """Run `cmd` (its stdout and stderr to those files; under an address-space limit of
    `limit_bytes`, if given; `env`, if given, is its whole environment): its exit code, wall
    seconds and own peak RSS in bytes."""
    proc = subprocess.run([sys.executable, "-c", _MEASURE, str(limit_bytes), str(stdout), str(stderr), *map(str, cmd)],
                          capture_output=True, text=True, env=env, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"the measuring interpreter failed: {proc.stderr}")
    code, seconds, rss_kib = proc.stdout.split()
    return int(code), float(seconds), int(rss_kib) * 1024
