"""The UniLu Gaia 2014 log (Parallel Workloads Archive, 51,987 jobs, 2,004 processors) for
tests and benchmarks: the source distribution of `evalys` 4.0.7 on PyPI ships it as
`examples/UniLu-Gaia-2014-2.swf`. Fetched with pip into `.cache/` (ignored by git) on first
use; never committed."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "gaia"
GAIA = CACHE / "UniLu-Gaia-2014-2.swf"
MEMBER = "evalys-4.0.7/examples/UniLu-Gaia-2014-2.swf"
#: What the log holds: records, and those with a negative run time.
RECORDS = 51_987
NEGATIVE_RUNTIME = 28
PROCESSORS = 2_004


def fetch_gaia(timeout: float = 300.0) -> Path:
    """The path of the Gaia log, downloading the evalys sdist with pip if it is not cached.
    Raises RuntimeError (with pip's message) when it cannot be had."""
    if GAIA.exists():
        return GAIA
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "-q", "evalys==4.0.7", "--no-deps", "--no-binary", ":all:",
               "-d", tmp]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"pip download evalys==4.0.7 took more than {timeout:g} s") from None
        sdists = list(Path(tmp).glob("evalys-4.0.7.tar.gz"))
        if proc.returncode != 0 or not sdists:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no sdist downloaded"]
            raise RuntimeError(f"pip download evalys==4.0.7 failed: {tail[0]}")
        with tarfile.open(sdists[0]) as tar:
            member = tar.extractfile(MEMBER)
            if member is None:
                raise RuntimeError(f"{sdists[0].name} has no {MEMBER}")
            partial = GAIA.with_suffix(".partial")
            partial.write_bytes(member.read())
            partial.replace(GAIA)
    return GAIA
