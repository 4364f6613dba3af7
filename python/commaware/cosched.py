"""Cluster job scheduling (paper 002): workloads and the space-sharing batch policies.

Quick use::

    from commaware import cosched
    w = cosched.nas_workload(jobs=100, interarrival=100, seed=1)        # NAS-like mix (Tables 1-2)
    run = cosched.run(w, "batch-easy", processors=16)
    run.summary["avg_response_s"]
    run.jobs                                                            # pandas DataFrame, one row per job

    log = cosched.load_workload("examples/cosched/easy_guarantee.swf")  # Standard Workload Format
    cosched.run(log, "batch-easy", processors=4).write_jobs("jobs.parquet")

    run = cosched.run(w, "hybrid", processors=16, allocation="packing", mpl=3)   # time-sharing
    run.summary["energy_j"]
    run.write_jobs_csv("jobs.csv")                                      # Batsim's jobs.csv

Policies: ``batch`` (FCFS at MPL 1, the paper's PBS), ``batch-easy`` (EASY backfilling),
``batch-conservative`` (conservative backfilling), and the time-sharing ones ``nls``, ``gang``,
``dcs``, ``sb``, ``pb``, ``cc``, ``hybrid`` (every process of every job runs its phase program on
the Linux 2.4 epoch scheduler of its node). See docs/cosched.md for the semantics, every
parameter's default and source, and where every number of the generator comes from. The
per-job results stay in Rust until asked for, and come as numpy columns (no Python object per
job).
"""

from __future__ import annotations

import json
from functools import cached_property
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence, Union

from . import _core
from ._errors import find_unserialisable, input_error, option_error
from .api import read_text_file

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

POLICIES: tuple[str, ...] = tuple(_core.COSCHED_POLICIES)
BATCH_POLICIES: tuple[str, ...] = ("batch", "batch-easy", "batch-conservative")
TIME_SHARING_POLICIES: tuple[str, ...] = tuple(p for p in POLICIES if p not in BATCH_POLICIES)
ALLOCATIONS: tuple[str, ...] = tuple(_core.COSCHED_ALLOCATIONS)
#: How a job gets a platform's cores (`run(..., platform=...)`; docs/cosched.md says exactly).
PLATFORM_ALLOCATIONS: tuple[str, ...] = tuple(_core.FABRIC_ALLOCATIONS)
#: Policies on a platform: the batch ones, and `explicit` (each job's `start_s` and `hosts`).
PLATFORM_POLICIES: tuple[str, ...] = (*BATCH_POLICIES, "explicit")
MIXES: tuple[str, ...] = tuple(_core.NAS_MIXES)
CLASSES = ("A", "B", "C")
#: Formats of the per-job table (`CoschedRun.write_jobs`).
JOB_FORMATS = (".parquet", ".csv")
#: τ of the bounded slowdown max(1, response / max(runtime, τ)), s.
BSLD_TAU_S = 10.0

WorkloadLike = Union[str, PathLike, dict, _core.Workload]


def nas_workload(jobs: int = 100, interarrival: float = 100.0, seed: int = 0,
                 classes: Iterable[str] = ("A", "B"), mix: str = "nas") -> _core.Workload:
    """A seeded NAS-like workload: `jobs` jobs with exponential inter-arrival times of mean
    `interarrival` s (100 heavy, 250 light, 500 long-running in the paper), benchmarks drawn
    from `mix` (`nas`: the seven NAS benchmarks; `long`: sPPM, BlockSolve95, LU; `table2`:
    Table 2's ten class C configurations), classes from `classes`."""
    return _core.nas_workload(jobs, float(interarrival), seed, list(classes), mix)


def load_workload(source: WorkloadLike, format: str | None = None) -> _core.Workload:
    """A workload from a JSON file (`{"jobs": [...]}`, `commaware schema workload`), an SWF
    log (`.swf`, or `format="swf"`), or a dict. Bad input raises WorkloadError naming the file,
    the line or field, and the reason."""
    if isinstance(source, _core.Workload):
        return source
    if isinstance(source, dict):
        try:
            text = json.dumps(source, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            field, reason = find_unserialisable(source) or ("", "cannot be written as JSON")
            raise input_error(_core.WorkloadError, "<dict>", field, reason) from None
        return _core.load_workload(text, "<dict>", "dict")
    if not isinstance(source, (str, PathLike)):
        raise input_error(_core.WorkloadError, f"<{type(source).__name__}>", "",
                          f"expected a file path, a dict or a Workload, got {type(source).__name__}")
    path = Path(source)
    fmt = format or ("swf" if path.suffix.lower() == ".swf" else "json")
    if fmt not in ("json", "swf"):
        raise input_error(_core.OptionsError, "format", "", f"unknown workload format `{fmt}` (known: json, swf)")
    # The numbers of an SWF log are ASCII; archive headers are sometimes Latin-1: keep them readable.
    text = read_text_file(path, _core.WorkloadError, decompress=False, lenient=fmt == "swf")
    return _core.load_workload(text, str(path), fmt)


def default_params() -> dict[str, Any]:
    """Every time-sharing parameter with its default (docs/cosched.md gives each one's source)."""
    out: dict[str, Any] = json.loads(_core.cosched_default_params())
    return out


def run(workload: WorkloadLike, policy: str = "batch", processors: int = 16, allocation: str = "packing",
        mpl: int | None = None, seed: int = 0, params: dict[str, Any] | None = None, *,
        platform: Any = None, pattern: str | None = None, model: str | None = None, coll: str | None = None,
        smpi: str | None = None, link_stats: bool = False, interference: bool = False) -> CoschedRun:
    """Schedule `workload` on a cluster of `processors` single-CPU nodes under `policy`.

    Batch policies run at MPL 1 with packing. Time-sharing policies take `allocation`
    (packing, random, memory-aware), `mpl` (default 3), `seed` (random allocation) and
    `params`, overrides of any parameter of `default_params()`. Jobs larger than the cluster
    are skipped and counted in `.skipped`.

    With `platform` (a path, dict or Platform), every job runs its program or trace on the
    platform's cores, all in one engine, so that jobs share the network (see `run_on_platform`,
    which also says what `link_stats` and `interference` keep); `processors`, `mpl` and `params`
    do not apply then."""
    if platform is not None:
        if mpl is not None or params:
            raise input_error(_core.OptionsError, "mpl" if mpl is not None else "params", "",
                              "time-sharing settings do not apply on a platform")
        return run_on_platform(workload, platform, policy, "contiguous" if allocation == "packing" else allocation,
                               seed, pattern=pattern, model=model, coll=coll, smpi=smpi, link_stats=link_stats,
                               interference=interference)
    if pattern is not None or model is not None or coll is not None or smpi is not None or link_stats or interference:
        raise input_error(_core.OptionsError, "platform", "",
                          "pattern, model, coll, smpi, link_stats and interference need a platform")
    if policy not in POLICIES:
        raise input_error(_core.OptionsError, "policy", "", f"unknown policy `{policy}` (known: {', '.join(POLICIES)})")
    if allocation not in ALLOCATIONS:
        raise input_error(_core.OptionsError, "allocation", "",
                          f"unknown allocation `{allocation}` (known: {', '.join(ALLOCATIONS)})")
    if not isinstance(processors, int) or isinstance(processors, bool) or not 1 <= processors <= 2**24:
        raise input_error(_core.OptionsError, "processors", "", f"must be an integer in 1..2^24, got {processors!r}")
    if mpl is not None and (not isinstance(mpl, int) or isinstance(mpl, bool) or not 1 <= mpl <= 64):
        raise input_error(_core.OptionsError, "mpl", "", f"must be an integer in 1..64, got {mpl!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64:
        raise input_error(_core.OptionsError, "seed", "", f"must be an integer in 0..2^64 - 1, got {seed!r}")
    params_json = None
    if params:
        try:
            params_json = json.dumps(params, allow_nan=False)
        except (TypeError, ValueError):
            raise input_error(_core.OptionsError, "params", "", "must be a JSON object of finite numbers") from None
    result = _core.cosched_run(load_workload(workload), policy, processors, allocation, mpl, seed, params_json)
    return CoschedRun(result)


def job_trace(workload: WorkloadLike, index: int, pattern: str | None = None) -> Any:
    """The trace (a `commaware.Trace`) job `index` of `workload` runs on a platform: its program
    (else `pattern`'s, else the workload's default program) lowered to MPI operations, else a
    compute of its logged runtime; e.g. to export it (`trace export`) for another simulator."""
    from .api import Trace

    w = load_workload(workload)
    if pattern is not None:
        w = w.with_pattern(pattern)
    return Trace(w.job_trace(index), f"jobs[{index}]")


def run_on_platform(workload: WorkloadLike, platform: Any, policy: str = "batch-easy", allocation: str = "contiguous",
                    seed: int = 0, *, pattern: str | None = None, model: str | None = None, coll: str | None = None,
                    smpi: str | None = None, trace_dir: str | PathLike | None = None, alone: bool = True,
                    link_stats: bool = False, interference: bool = False, routing: str | None = None,
                    routing_seed: int | None = None) -> CoschedRun:
    """Run `workload` on `platform` (a path, dict or Platform; any topology or a SimGrid file),
    one process a core, every running job's program or trace in one engine, so that jobs share
    its links: a job ends when its last rank ends and the batch `policy` reacts to that end;
    `explicit` starts each job at its `start_s` on its `hosts` instead.

    `allocation` (with `seed` for `random`): one of PLATFORM_ALLOCATIONS (docs/cosched.md).
    `pattern` (`halo2d:bytes=65536,iterations=100,compute=0.01`; names halo2d, halo3d, alltoall,
    allreduce, pairs) is the program of every job with neither a program nor a trace (an SWF
    log's), else the workload's `default_program`, else such a job computes for its logged
    runtime. A job's `trace` (any format `load_trace` reads) is relative to `trace_dir`
    (default: the workload file's folder, or the current one). `model`, `coll`, `smpi`,
    `routing` and `routing_seed` as in `simulate` (under a routing other than `minimal` every job's
    time alone is run, none taken from another job's). With `alone`, each job also runs alone on its hosts: the per-job columns get
    `alone` (s) and `slowdown` (runtime / alone) beside `bytes` (what its messages moved).
    `link_stats` keeps per-link statistics (`.links`, `.link_utilisation`, as `simulate`'s);
    `interference` the interference table (`.interference`): each pair of jobs that ran at the
    same time on links both used, with the bytes each moved over those links."""
    from .api import load_platform, load_trace

    if policy not in PLATFORM_POLICIES:
        raise input_error(_core.OptionsError, "policy", "",
                          f"`{policy}` does not run on a platform (known there: {', '.join(PLATFORM_POLICIES)}): the "
                          "time-sharing policies' node model (Linux 2.4 epochs, spinning, MPL) is not lowered onto the "
                          "engine")
    if allocation not in PLATFORM_ALLOCATIONS:
        raise input_error(_core.OptionsError, "allocation", "",
                          f"unknown allocation `{allocation}` on a platform (known: {', '.join(PLATFORM_ALLOCATIONS)})")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64:
        raise input_error(_core.OptionsError, "seed", "", f"must be an integer in 0..2^64 - 1, got {seed!r}")
    if routing_seed is not None:
        from .api import check_seed

        routing_seed = check_seed(routing_seed, source="routing_seed")
    w = load_workload(workload)
    if pattern is not None:
        w = w.with_pattern(pattern)
    if trace_dir is not None:
        base = Path(trace_dir)
    else:
        base = Path(workload).parent if isinstance(workload, (str, PathLike)) else Path(".")
    traces = {path: load_trace(base / path)._core for path in w.trace_paths()}
    p = load_platform(platform)
    try:
        result, events = _core.cosched_run_fabric(w, policy, p._core, allocation, seed, model=model, coll=coll,
                                                  smpi=smpi, traces=traces, alone=alone, link_stats=link_stats,
                                                  interference=interference, routing=routing,
                                                  routing_seed=routing_seed)
    except _core.OptionsError as exc:  # an option the core refused names it, as simulate's do
        raise option_error(exc) from None
    run = CoschedRun(result)
    run.engine_events = events
    return run


class CoschedRun:
    """One scheduling run: `.summary`, `.skipped`, `.columns` (numpy), `.jobs` (pandas),
    `.to_json()` and `.write_jobs(path)`."""

    def __init__(self, result: _core.CoschedResult) -> None:
        self._r = result
        self._columns: dict[str, np.ndarray] | None = None
        #: On a platform, the engine's steps (events) of the run; None otherwise.
        self.engine_events: int | None = None

    @property
    def policy(self) -> str:
        return self._r.policy

    @property
    def processors(self) -> int:
        return self._r.processors

    @property
    def summary(self) -> dict[str, float]:
        """jobs, avg_wait_s, avg_response_s, avg_exec_s, avg_bounded_slowdown (τ = 10 s),
        max_wait_s, total_time_s (first arrival to last completion), utilization (spinning and
        switching count as busy), energy_busy_j, energy_idle_j, energy_j (§5.4)."""
        return self._r.summary()

    @property
    def skipped(self) -> dict[str, int]:
        """Jobs left out: negative_runtime, no_procs, no_submit (SWF), too_large, total."""
        return self._r.skipped

    def __len__(self) -> int:
        return len(self._r)

    @property
    def columns(self) -> dict[str, np.ndarray]:
        """Per-job numpy columns in queue order: id, procs, submit, runtime, requested, start,
        end, reserved (NaN if never reserved), wait, response, bounded_slowdown (times in s); on
        a platform also alone (s, NaN when not computed), slowdown and bytes."""
        if self._columns is None:
            import numpy as np

            raw = self._r.job_columns()
            cols: dict[str, np.ndarray] = {}
            for name, data in raw.items():
                cols[name] = np.frombuffer(data, dtype=np.uint64 if name in ("id", "procs") else np.float64)
            cols["wait"] = cols["start"] - cols["submit"]
            cols["response"] = cols["end"] - cols["submit"]
            run_s = cols["end"] - cols["start"]
            cols["bounded_slowdown"] = np.maximum(1.0, cols["response"] / np.maximum(run_s, BSLD_TAU_S))
            if "alone" in cols:  # on a platform: runtime over time alone (1 for a job of no time alone)
                with np.errstate(divide="ignore", invalid="ignore"):
                    cols["slowdown"] = np.where(cols["alone"] == 0.0, 1.0, cols["runtime"] / cols["alone"])
            self._columns = cols
        return self._columns

    @property
    def jobs(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.columns)

    @property
    def makespan(self) -> float:
        """The last job's end (s)."""
        end = self.columns["end"]
        return float(end.max()) if len(end) else 0.0

    @cached_property
    def _link_tables(self) -> tuple[dict[str, Any], tuple[float, np.ndarray]]:
        from .api import link_tables

        return link_tables(self._r.link_columns())

    @property
    def links(self) -> pd.DataFrame:
        """On a platform run with ``link_stats=True``: one row per link, as `Result.links`
        (name, bandwidth, bytes, busy_time, mean_utilisation, peak_utilisation, peak_flows)."""
        import pandas as pd

        return pd.DataFrame(self._link_tables[0])

    @property
    def link_utilisation(self) -> tuple[float, np.ndarray]:
        """On a platform run with ``link_stats=True``: (bin width in s, links × bins), as
        `Result.link_utilisation`."""
        return self._link_tables[1]

    @property
    def interference(self) -> pd.DataFrame:
        """On a platform run with ``interference=True``: one row per pair of jobs that ran at
        the same time and whose messages crossed the same links: job_a (the one that ended
        first) and job_b (ids), links (how many both used), bytes_a and bytes_b (the payload
        bytes each job's messages carried over those links in its whole run; a message counts
        on every link of its route)."""
        import numpy as np
        import pandas as pd

        c = self._r.interference_columns()
        return pd.DataFrame({k: np.frombuffer(v, dtype=np.uint64 if k in ("job_a", "job_b", "links") else np.float64)
                             for k, v in c.items()})

    def to_json(self) -> str:
        """The `--json` document: policy, processors, the summary, skipped, every job."""
        return self._r.to_json()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = json.loads(self.to_json())
        return out

    def jobs_csv(self, workload_name: str = "commaware") -> str:
        """Batsim's jobs.csv text (job_id, workload_name, profile, submission_time,
        requested_number_of_resources, requested_time, success, final_state, starting_time,
        execution_time, finish_time, waiting_time, turnaround_time, stretch,
        allocated_resources, consumed_energy, metadata), which evalys reads."""
        return self._r.jobs_csv(workload_name)

    def write_jobs_csv(self, path: str | PathLike, workload_name: str = "commaware") -> None:
        """Write Batsim's jobs.csv to `path`; the file appears only once complete."""
        from .output import deliver

        text = self.jobs_csv(workload_name)

        def write(target: Path) -> None:
            target.write_text(text)

        try:
            deliver(write, str(path))
        except OSError as exc:
            raise _core.OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None

    def write_interference(self, path: str | PathLike) -> None:
        """Write `interference` to a .parquet or .csv file; it appears only once complete."""
        _write_table(self.interference, path, "the interference table")

    def write_timeline(self, path: str | PathLike, host_names: Sequence[str] = ()) -> None:
        """Write the run as a Perfetto trace (`.perfetto-trace` or `.pftrace`, for ui.perfetto.dev):
        a track per host that ran jobs (on a platform: `host_names` are the platform's), per node
        (time-sharing policies) or one for the cluster (batch), with lanes under it (`slot N`)
        as many as jobs or processors overlap there, and a slice per job on each of its lanes
        (`id`, `procs`, `submit_s`, `wait_s`). Written beside `path` and renamed once complete."""
        from .output import deliver

        if Path(path).suffix.lower() not in (".perfetto-trace", ".pftrace"):
            raise input_error(_core.OptionsError, str(path), "", "a schedule timeline is a .perfetto-trace or .pftrace file")
        deliver(lambda partial: self._r.write_timeline(str(partial), str(path), list(host_names)), path)

    def write_jobs(self, path: str | PathLike) -> None:
        """Write the per-job table to a .parquet or .csv file (columnar, via pyarrow); the file
        appears only once complete."""
        _write_table(self.columns, path, "the job table")


def _write_table(columns: Any, path: str | PathLike, what: str) -> None:
    """Write `columns` (a dict of numpy columns or a DataFrame) to a .parquet or .csv file,
    which appears only once complete."""
    import pyarrow as pa

    from .output import deliver

    fmt = Path(path).suffix.lower()
    if fmt not in JOB_FORMATS:
        raise input_error(_core.OptionsError, str(path), "", f"{what} must be .parquet or .csv")
    table = pa.table(columns) if isinstance(columns, dict) else pa.Table.from_pandas(columns, preserve_index=False)

    def write(partial: Path) -> None:
        if fmt == ".parquet":
            import pyarrow.parquet as pq

            pq.write_table(table, partial)
        else:
            import pyarrow.csv as pacsv

            pacsv.write_csv(table, partial)

    try:
        deliver(write, path)
    except OSError as exc:
        raise _core.OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None


def workload_schema() -> str:
    """The JSON Schema of workload files."""
    return _core.workload_schema()


# --- compare: policies over seeds (Fig. 3-style) ----------------------------------------------

#: The metrics `compare` aggregates over seeds (each a run's summary field).
COMPARE_METRICS: tuple[str, ...] = ("avg_response_s", "avg_wait_s", "avg_exec_s", "avg_bounded_slowdown",
                                    "total_time_s", "utilization", "energy_j")


def _compare_pairs(policies: Iterable[str], allocations: Iterable[str]) -> list[tuple[str, str]]:
    """(policy, allocation) rows: batch policies run with packing only and gang never random
    (§5.1), so those get packing (gang: every requested non-random allocation) once."""
    allocs = list(dict.fromkeys(allocations))
    pairs: list[tuple[str, str]] = []
    for p in policies:
        if p in BATCH_POLICIES:
            mine = ["packing"]
        elif p == "gang":
            mine = [a for a in allocs if a != "random"] or ["packing"]
        else:
            mine = allocs
        pairs.extend((p, a) for a in mine if (p, a) not in pairs)
    return pairs


def compare(workload: WorkloadLike | None = None, *, nas_jobs: int | None = None, interarrival: float = 100.0,
            classes: Iterable[str] = ("A", "B"), mix: str = "nas", policies: str | Iterable[str] = "all",
            allocations: str | Iterable[str] = ("packing",), seeds: int = 10, first_seed: int = 0,
            processors: int = 16, mpl: int | None = None, params: dict[str, Any] | None = None,
            workers: int | None = None, progress: Any = None, platform: Any = None, pattern: str | None = None,
            model: str | None = None, coll: str | None = None, smpi: str | None = None) -> Comparison:
    """Run every policy (and allocation) over `seeds` seeds and aggregate (the shape of Fig. 3).

    Either `workload` (fixed: the seed then only drives random allocation) or `nas_jobs` (a
    fresh `nas_workload(nas_jobs, interarrival, seed, classes, mix)` per seed, seeds
    `first_seed` .. `first_seed + seeds - 1`). Batch policies use packing, gang never random
    (§5.1). Runs go to a thread pool of `workers` threads (default: the CPU count; the core
    releases the GIL); results are placed by index, so they do not depend on the order runs
    finish: the comparison is deterministic given the seeds. `progress(done, total)` is
    called after each run, from the calling thread.

    With `platform`, every run is `run_on_platform` (batch policies; allocations among
    PLATFORM_ALLOCATIONS, every pair of a policy and an allocation; `pattern`, `model`, `coll`,
    `smpi` passed on), and each row also has `avg_slowdown` (mean runtime over time alone)."""
    import os
    from concurrent.futures import as_completed

    from ._pool import thread_pool

    if (workload is None) == (nas_jobs is None):
        raise input_error(_core.OptionsError, "workload", "", "give either a workload or nas_jobs, not both")
    if nas_jobs is not None and (not isinstance(nas_jobs, int) or isinstance(nas_jobs, bool) or nas_jobs < 1):
        raise input_error(_core.OptionsError, "nas_jobs", "", f"must be a positive integer, got {nas_jobs!r}")
    if not isinstance(seeds, int) or isinstance(seeds, bool) or not 1 <= seeds <= 10_000:
        raise input_error(_core.OptionsError, "seeds", "", f"must be an integer in 1..10000, got {seeds!r}")
    if not isinstance(first_seed, int) or isinstance(first_seed, bool) or not 0 <= first_seed <= 2**64 - seeds:
        raise input_error(_core.OptionsError, "first_seed", "", f"must be in 0..2^64 - seeds, got {first_seed!r}")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool) or workers < 1):
        raise input_error(_core.OptionsError, "workers", "", f"must be a positive integer, got {workers!r}")
    known_policies = BATCH_POLICIES if platform is not None else POLICIES
    known_allocations = PLATFORM_ALLOCATIONS if platform is not None else ALLOCATIONS
    pols = list(known_policies) if policies == "all" else \
        [p.strip() for p in (policies.split(",") if isinstance(policies, str) else policies) if p.strip()]
    if not pols:
        raise input_error(_core.OptionsError, "policies", "", "no policy given")
    for p in pols:
        if p not in known_policies:
            where = " on a platform" if platform is not None else ""
            raise input_error(_core.OptionsError, "policies", "",
                              f"unknown policy `{p}`{where} (known: {', '.join(known_policies)}, all)")
    allocs = [a.strip() for a in (allocations.split(",") if isinstance(allocations, str) else allocations) if a.strip()]
    if platform is not None:
        allocs = ["contiguous" if a == "packing" else a for a in allocs]
    if not allocs:
        raise input_error(_core.OptionsError, "allocation", "", "no allocation given")
    for a in allocs:
        if a not in known_allocations:
            raise input_error(_core.OptionsError, "allocation", "",
                              f"unknown allocation `{a}` (known: {', '.join(known_allocations)})")
    if platform is None:
        pairs = _compare_pairs(pols, allocs)
        metrics = COMPARE_METRICS
    else:
        from .api import load_platform

        platform = load_platform(platform)
        pairs = [(p, a) for p in pols for a in dict.fromkeys(allocs)]
        metrics = (*COMPARE_METRICS, "avg_slowdown")
    seed_list = list(range(first_seed, first_seed + seeds))
    if nas_jobs is not None:
        loads = {s: nas_workload(nas_jobs, interarrival, s, classes, mix) for s in seed_list}
    else:
        fixed = load_workload(workload)  # type: ignore[arg-type]
        loads = {s: fixed for s in seed_list}
    # A fixed workload under a non-random allocation gives the same run for every seed: run it once.
    keys: dict[tuple[str, str, int], tuple[str, str, int]] = {}
    for p, a in pairs:
        for s in seed_list:
            varies = nas_jobs is not None or (a == "random" and (platform is not None or p not in BATCH_POLICIES))
            keys[(p, a, s)] = (p, a, s if varies else seed_list[0])
    unique = list(dict.fromkeys(keys.values()))
    results: dict[tuple[str, str, int], dict[str, Any]] = {}
    n_workers = workers or os.cpu_count() or 1

    def one(key: tuple[str, str, int]) -> dict[str, Any]:
        p, a, s = key
        if platform is not None:
            r = run_on_platform(loads[s], platform, p, a, s, pattern=pattern, model=model, coll=coll, smpi=smpi)
            return {**r.summary, "avg_slowdown": float(r.columns["slowdown"].mean()), "processors": r.processors}
        r = run(loads[s], p, processors=processors, allocation=a, mpl=None if p in BATCH_POLICIES else mpl,
                seed=s, params=None if p in BATCH_POLICIES else params)
        return dict(r.summary)

    with thread_pool(n_workers) as pool:
        futures = {pool.submit(one, k): k for k in unique}
        done = 0
        for fut in as_completed(futures):
            results[futures[fut]] = fut.result()
            done += 1
            if progress is not None:
                progress(done, len(unique))
    rows = []
    for p, a in pairs:
        per_seed = [results[keys[(p, a, s)]] for s in seed_list]
        row: dict[str, Any] = {"policy": p, "allocation": a, "seeds": len(seed_list)}
        for m in metrics:
            vals = [float(r[m]) for r in per_seed]
            mean = sum(vals) / len(vals)
            std = (sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)) ** 0.5 if len(vals) > 1 else 0.0
            row[m] = {"mean": mean, "std": std, "min": min(vals), "max": max(vals), "per_seed": vals}
        rows.append(row)
    setup = {"workload": None if workload is None or not isinstance(workload, (str, PathLike)) else str(workload),
             "nas_jobs": nas_jobs, "interarrival_s": interarrival if nas_jobs is not None else None,
             "classes": list(classes) if nas_jobs is not None else None, "mix": mix if nas_jobs is not None else None,
             "seeds": seed_list, "processors": processors, "mpl": mpl or 3, "params": params or {}}
    if platform is not None:
        setup.update(processors=next(iter(results.values()))["processors"], platform=platform.source, pattern=pattern,
                     mpl=1)
    return Comparison(setup, rows, list(metrics))


class Comparison:
    """The result of :func:`compare`: `.rows` (one per policy and allocation, each metric as
    mean, std (sample, over seeds), min, max, per_seed), `.setup`, `.row(policy, allocation)`,
    `.to_dict()`, `.plot(path)`."""

    def __init__(self, setup: dict[str, Any], rows: list[dict[str, Any]], metrics: list[str] | None = None) -> None:
        self.setup = setup
        self.rows = rows
        self.metrics = metrics or list(COMPARE_METRICS)

    def row(self, policy: str, allocation: str = "packing") -> dict[str, Any]:
        for r in self.rows:
            if r["policy"] == policy and r["allocation"] == allocation:
                return r
        raise KeyError(f"{policy}/{allocation}")

    def mean(self, policy: str, metric: str = "avg_response_s", allocation: str = "packing") -> float:
        return float(self.row(policy, allocation)[metric]["mean"])

    def to_dict(self) -> dict[str, Any]:
        return {"setup": self.setup, "metrics": self.metrics, "rows": self.rows}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), allow_nan=False)

    def plot(self, path: str | PathLike, title: str | None = None, format: str | None = None) -> None:
        """Bars of mean response time per policy (wait and execution stacked, as Fig. 3), with
        the spread over seeds (sample std of the response) as error bars; on a platform, bars of
        the mean slowdown per policy and allocation; format from the suffix."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        labels = [r["policy"] if len({x["allocation"] for x in self.rows}) == 1 else f"{r['policy']}\n{r['allocation']}"
                  for r in self.rows]
        x = list(range(len(self.rows)))
        fig, ax = plt.subplots(figsize=(max(6.0, 0.7 * len(x) + 2), 4.2))
        seeds = self.setup["seeds"]
        over = f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''}"
        if "avg_slowdown" in self.metrics:
            ax.bar(x, [r["avg_slowdown"]["mean"] for r in self.rows], color="C2",
                   yerr=[r["avg_slowdown"]["std"] for r in self.rows], capsize=3)
            ax.axhline(1.0, color="k", lw=0.8, ls="--", label="as alone")
            ax.set_ylabel("mean slowdown (runtime / alone)")
            where = Path(str(self.setup.get("platform"))).name
            default = f"mean slowdown{'' if where.startswith('<') else ' on ' + where}, {over}"
        else:
            wait = [r["avg_wait_s"]["mean"] for r in self.rows]
            exe = [r["avg_exec_s"]["mean"] for r in self.rows]
            err = [r["avg_response_s"]["std"] for r in self.rows]
            ax.bar(x, exe, color="C0", label="execution")
            ax.bar(x, wait, bottom=exe, color="C1", label="wait")
            ax.errorbar(x, [w + e for w, e in zip(wait, exe)], yerr=err, fmt="none", ecolor="k", capsize=3,
                        label="response: ± std over seeds")
            ax.set_ylabel("mean time per job (s)")
            default = f"mean response time, {over}"
        ax.set_xticks(x)
        ax.set_xticklabels(labels, fontsize=8, rotation=30, ha="right")
        ax.set_title(title or default)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        try:
            fig.savefig(str(path), format=format or (Path(path).suffix.lstrip(".").lower() or "png"))
        finally:
            plt.close(fig)
