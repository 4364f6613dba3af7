"""Cluster job scheduling (paper 002): workloads and the space-sharing batch policies.

Quick use::

    from commaware import cosched
    w = cosched.nas_workload(jobs=100, interarrival=100, seed=1)        # NAS-like mix (Tables 1-2)
    run = cosched.run(w, "batch-easy", processors=16)
    run.summary["avg_response_s"]
    run.jobs                                                            # pandas DataFrame, one row per job

    gaia = cosched.load_workload("UniLu-Gaia-2014-2.swf")               # Standard Workload Format
    cosched.run(gaia, "batch-easy", processors=2004).write_jobs("jobs.parquet")

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
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Union

from . import _core
from ._errors import find_unserialisable, input_error

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

POLICIES: tuple[str, ...] = tuple(_core.COSCHED_POLICIES)
BATCH_POLICIES: tuple[str, ...] = ("batch", "batch-easy", "batch-conservative")
TIME_SHARING_POLICIES: tuple[str, ...] = tuple(p for p in POLICIES if p not in BATCH_POLICIES)
ALLOCATIONS: tuple[str, ...] = tuple(_core.COSCHED_ALLOCATIONS)
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
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise input_error(_core.WorkloadError, str(path), "", f"cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # e.g. a NUL character in the path
        raise input_error(_core.WorkloadError, str(path), "", f"cannot read: {exc}") from None
    if fmt == "swf":
        # The numbers are ASCII; archive headers are sometimes Latin-1: keep them readable.
        text = raw.decode("utf-8", errors="replace")
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise input_error(_core.WorkloadError, str(path), "",
                              f"not UTF-8 text (byte {exc.start} is {raw[exc.start]:#04x})") from None
    return _core.load_workload(text, str(path), fmt)


def default_params() -> dict[str, Any]:
    """Every time-sharing parameter with its default (docs/cosched.md gives each one's source)."""
    out: dict[str, Any] = json.loads(_core.cosched_default_params())
    return out


def run(workload: WorkloadLike, policy: str = "batch", processors: int = 16, allocation: str = "packing",
        mpl: int | None = None, seed: int = 0, params: dict[str, Any] | None = None) -> CoschedRun:
    """Schedule `workload` on a cluster of `processors` single-CPU nodes under `policy`.

    Batch policies run at MPL 1 with packing. Time-sharing policies take `allocation`
    (packing, random, memory-aware), `mpl` (default 3), `seed` (random allocation) and
    `params`, overrides of any parameter of `default_params()`. Jobs larger than the cluster
    are skipped and counted in `.skipped`."""
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


class CoschedRun:
    """One scheduling run: `.summary`, `.skipped`, `.columns` (numpy), `.jobs` (pandas),
    `.to_json()` and `.write_jobs(path)`."""

    def __init__(self, result: _core.CoschedResult) -> None:
        self._r = result
        self._columns: dict[str, np.ndarray] | None = None

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
        end, reserved (NaN if never reserved), wait, response, bounded_slowdown (times in s)."""
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
            self._columns = cols
        return self._columns

    @property
    def jobs(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.columns)

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

    def write_jobs(self, path: str | PathLike) -> None:
        """Write the per-job table to a .parquet or .csv file (columnar, via pyarrow); the file
        appears only once complete."""
        import os

        import pyarrow as pa

        from .output import partial_path

        target = Path(path)
        fmt = target.suffix.lower()
        if fmt not in JOB_FORMATS:
            raise input_error(_core.OptionsError, str(path), "", "the job table must be .parquet or .csv")
        table = pa.table(self.columns)
        partial = partial_path(target)
        try:
            if fmt == ".parquet":
                import pyarrow.parquet as pq

                pq.write_table(table, partial)
            else:
                import pyarrow.csv as pacsv

                pacsv.write_csv(table, partial)
            os.replace(partial, target)
        except OSError as exc:
            raise _core.OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
        finally:
            partial.unlink(missing_ok=True)


def workload_schema() -> str:
    """The JSON Schema of workload files."""
    return _core.workload_schema()
