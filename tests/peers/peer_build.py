"""Compile a peer program into a cache, once per source text, compiler and flags.

The one build helper of the SimGrid peers: :mod:`simgrid_peer` compiles ``simgrid_star.cpp``
with g++, :mod:`smpi_replay` compiles ``smpi_replay_main.cpp`` with smpicxx and MPI programs
with smpicc.

    build_peer(source, compiler, flags, error=..., hint=...) -> path of the compiled binary
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

#: Where compiled peers are cached (override with ``COMMAWARE_SG_CACHE``).
CACHE_DIR = Path(os.environ.get("COMMAWARE_SG_CACHE", "/tmp/commaware-sg"))


def binary_path(source: Path, compiler: str, flags: Sequence[str], libs: Sequence[str] = ()) -> Path:
    """Where ``source`` compiled by ``compiler`` with ``flags`` and ``libs`` is cached: the source's
    stem and a hash of its text and of the compiler's words, so a changed source or option never
    runs a stale binary."""
    words = " ".join([compiler, *flags, *libs])
    digest = hashlib.sha256(source.read_bytes() + words.encode()).hexdigest()[:16]
    return CACHE_DIR / f"{source.stem}-{digest}"


def build_peer(
    source: Path,
    compiler: str,
    flags: Sequence[str],
    *,
    libs: Sequence[str] = (),
    error: Callable[[str], Exception],
    hint: str,
    force: bool = False,
) -> Path:
    """Compile ``source`` (``compiler FLAGS SOURCE -o BINARY LIBS``) into :data:`CACHE_DIR` unless
    that exact build is there already (``force`` rebuilds it); return the binary's path.

    The binary is written under a temporary name and renamed, so concurrent callers never run a
    half-written file.  A missing source or compiler, or a failed compilation (its first error
    line), raises ``error(message)``; ``hint`` says what to install, e.g. ``install the Debian
    package simgrid``.
    """
    if not source.is_file():
        raise error(f"peer source missing: {source}")
    out = binary_path(source, compiler, flags, libs)
    if not force and out.is_file():
        return out
    compiler_path = shutil.which(compiler)
    if compiler_path is None:
        raise error(f"{compiler} not found ({hint})")
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=out.name + ".", dir=out.parent)
    os.close(fd)
    try:
        proc = subprocess.run([compiler_path, *flags, str(source), "-o", tmp, *libs], capture_output=True,
                              text=True, timeout=300)
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines() or ["no compiler output"]
            first_error = next((ln for ln in lines if "error" in ln), lines[-1])
            raise error(f"cannot compile {source.name} with {compiler} ({hint}): {first_error}")
        os.chmod(tmp, 0o755)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out
