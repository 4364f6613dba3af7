"""Parameter sweeps (`commaware sweep`): every run of a spec, on Dask or in-process, each
finished row stored at once in a results directory (`commaware.experiments.results`).

A spec (TOML, or a dict) names a command of `commaware.experiments.sweepable` and its parameters::

    command = "cosched.run"
    [fixed]
    jobs = 20
    [grid]                      # the cartesian product of the lists (or [[runs]]: one table per run)
    policy = ["nls", "hybrid", "batch-easy"]
    seed = [1, 2, 3]

Each run has a deterministic `run_id` (hash of the command, the canonical JSON of its
parameters and the content of its input files); a run whose id is stored already is skipped,
so an interrupted sweep resumes where it stopped. docs/sweeps.md has the details.

Quick use::

    from commaware.experiments import sweep
    table = sweep.run("examples/sweeps/cosched.toml", out="cosched-results")   # pandas DataFrame
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import re
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from .. import _core
from .._errors import input_error
from ..api import read_text_file
from .sweepable import JSON_TYPES, REQUIRED, Command, Param, commands, resolve

if TYPE_CHECKING:
    import pandas as pd

SPEC_KEYS = ("command", "description", "fixed", "grid", "runs")
JOBQUEUES = ("slurm", "pbs")
#: Largest number of runs one Dask task executes (small runs go in chunks: less scheduling per run).
MAX_CHUNK = 64
#: How long to try reaching a Dask scheduler.
CONNECT_TIMEOUT = "20s"
#: Most runs a spec may give (its grid's product, or its list of runs), counted before any is
#: built: a run costs about 1.5 kB here, so a million runs about 1.5 GB (`max_runs` raises it).
MAX_RUNS = 1_000_000
#: Deepest nesting of a spec: keys, tables and arrays on the way from the top to a value
#: (`[grid]` `seed = [1]` is 3). A spec needs 3; deeper is refused before it is parsed.
MAX_SPEC_DEPTH = 32
#: Default bound, in seconds, on submitting the batch jobs of --jobqueue and seeing a worker start
#: (and on a sweep left without any worker): past it the sweep stops instead of waiting forever.
JOBQUEUE_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class RunSpec:
    """One run: its id, command, parameters (defaults filled, files as written in the spec),
    the function's keyword arguments (files resolved) and the hash of its input files."""

    run_id: str
    command: str
    params: dict[str, Any]
    kwargs: dict[str, Any]
    inputs_hash: str


@dataclass(frozen=True)
class Spec:
    source: str
    command: Command
    runs: list[RunSpec]


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def _file_digest(path: Path) -> str:
    """sha256 of a file, or of a directory's files (relative names and contents, sorted)."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            digest.update(file.relative_to(path).as_posix().encode() + b"\0")
        with open(file, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _check_value(param: Param, value: Any, source: str, field: str, base: Path) -> Any:
    """`value` as the parameter's kind (ints become floats for a float parameter), or InputError."""

    def bad(reason: str) -> _core.InputError:
        return input_error(_core.InputError, source, field, reason)

    if value is None:
        if param.default is None:
            return None
        raise bad("must have a value")
    kind = param.kind
    if kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
        raise bad(f"must be an integer, got {type(value).__name__} {value!r}")
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad(f"must be a number, got {type(value).__name__} {value!r}")
        if not math.isfinite(value):
            raise bad(f"must be a finite number, got {value!r}")
        value = float(value)
    if kind == "bool" and not isinstance(value, bool):
        raise bad(f"must be true or false, got {type(value).__name__} {value!r}")
    if kind in ("str", "file") and not isinstance(value, str):
        raise bad(f"must be a string, got {type(value).__name__} {value!r}")
    if param.choices is not None and value not in param.choices:
        raise bad(f"unknown value {value!r} (known: {', '.join(map(str, param.choices))})")
    if param.minimum is not None and value < param.minimum:
        raise bad(f"must be >= {param.minimum}, got {value!r}")
    if param.maximum is not None and value > param.maximum:
        raise bad(f"must be <= {param.maximum}, got {value!r}")
    if kind == "file" and not (base / value).exists():
        raise bad(f"no such file: {base / value}")
    return value


#: One token of a TOML document, as far as its nesting goes: strings (whose brackets, dots and
#: `#` are text), comments, line ends, brackets, `=`, `,`, `.`, and the rest.
_TOML_TOKEN = re.compile(r"""
    (?P<string>\"\"\"(?:\\[\s\S]|[^\\])*?\"\"\""{0,2} | '''[\s\S]*?''''{0,2}
               | "(?:\\.|[^"\\\n])*" | '[^'\n]*')
  | (?P<comment>\#[^\n]*)
  | (?P<newline>\n)
  | (?P<space>[ \t\r]+)
  | (?P<punct>[][{}=,.])
  | (?P<other>[^][{}=,.\s"'\#]+ | .)
""", re.VERBOSE)


def _toml_too_deep(text: str, limit: int) -> int | None:
    """The line where `text` (TOML) nests deeper than `limit` levels, or None. A level is a key of
    a dotted key or of a [table] header, or an array or inline table; the scan stops at the
    first line too deep, so a document nested 10^5 levels costs no more than its first lines
    (Python's tomllib recurses once per bracket and takes quadratic time over dotted keys)."""
    stack: list[tuple[str, int]] = []  # the open arrays and inline tables, with their levels
    header = 0  # levels of the current [table] or [[array of tables]]
    mode, base, parts, depth = "start", 0, 0, 0
    for match in _TOML_TOKEN.finditer(text):
        kind, token = match.lastgroup, match.group()
        if kind in ("space", "comment"):
            continue
        if kind == "newline":
            if not stack:
                mode = "start"
            continue
        if mode == "start":  # a line of the document: a [header] or a key
            if token == "[":
                mode, parts, depth = "header", 0, 1
            else:
                mode, base, parts = "key", header, 1
                depth = base + parts
        elif mode == "header":
            if token == "[" and parts == 0:
                depth += 1  # [[array of tables]]: the array and its table
            elif token == "]":
                header, mode = depth, "rest"
            elif token == ".":
                depth += 1
            elif parts == 0:
                parts = 1
        elif kind == "punct" and token in "]}":
            if stack:
                stack.pop()
            if stack:
                mode, depth = "value", stack[-1][1]
            else:
                mode = "rest"
        elif kind == "punct" and token == "," and stack:
            opener, level = stack[-1]
            mode, base, parts, depth = ("key", level, 1, level + 1) if opener == "{" else ("value", level, 0, level)
        elif mode == "key":
            if token == ".":
                parts += 1
                depth = base + parts
            elif token == "=":
                mode = "value"
        elif mode == "value" and token in ("[", "{"):
            depth += 1
            stack.append((token, depth))
            if token == "{":
                mode, base, parts = "key", depth, 1
                depth += 1
        if depth > limit:
            return text.count("\n", 0, match.start()) + 1
    return None


def _nested_over(value: Any, limit: int) -> str | None:
    """The path of the first value of a spec dict nested deeper than `limit` levels, or None."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        obj, path, depth = stack.pop()
        if depth > limit:
            return path
        if isinstance(obj, Mapping):
            stack.extend((item, f"{path}.{key}" if path else str(key), depth + 1) for key, item in obj.items())
        elif isinstance(obj, (list, tuple)):
            stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(obj))
    return None


def _read_spec(spec: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[dict[str, Any], str, Path]:
    """The spec document, its name for messages, and the folder its file paths start from."""
    import tomllib

    deep = f"nested more than {MAX_SPEC_DEPTH} levels deep (a sweep spec needs 3)"
    if isinstance(spec, Mapping):
        field = _nested_over(spec, MAX_SPEC_DEPTH)
        if field is not None:
            raise input_error(_core.InputError, "<dict>", field, deep)
        return dict(spec), "<dict>", Path.cwd()
    path = Path(spec)
    try:
        text = read_text_file(path, _core.InputError, decompress=False)  # bounded; a BOM is dropped
        line = _toml_too_deep(text, MAX_SPEC_DEPTH)
        if line is not None:
            raise input_error(_core.InputError, str(path), f"line {line}", deep)
        return tomllib.loads(text), str(path), path.resolve().parent
    except tomllib.TOMLDecodeError as exc:
        raise input_error(_core.InputError, str(path), "", f"not valid TOML: {exc}") from None


def load_spec(spec: str | os.PathLike[str] | Mapping[str, Any], max_runs: int = MAX_RUNS) -> Spec:
    """Read and check a spec (TOML file or dict): every run with its parameters and run_id.
    Raises InputError naming the spec, the field and the reason. Identical runs are run once.
    A spec of more than `max_runs` runs is refused before any run is built."""
    doc, source, base = _read_spec(spec)

    def bad(field: str, reason: str) -> _core.InputError:
        return input_error(_core.InputError, source, field, reason)

    for key in doc:
        if key not in SPEC_KEYS:
            raise bad(key, f"unknown key (known: {', '.join(SPEC_KEYS)})")
    known = commands()
    name = doc.get("command")
    if name is None:
        raise bad("command", f"missing (one of: {', '.join(known)})")
    if name not in known:
        raise bad("command", f"unknown command {name!r} (known: {', '.join(known)})")
    command = known[name]

    def table(key: str) -> dict[str, Any]:
        value = doc.get(key, {})
        if not isinstance(value, dict):
            raise bad(key, f"must be a table, got {type(value).__name__}")
        return value

    def param_of(key: str, field: str) -> Param:
        param = command.param(key)
        if param is None:
            raise bad(field, f"unknown parameter of {name} (known: {', '.join(p.name for p in command.params)})")
        return param

    def checked(entries: dict[str, Any], prefix: str) -> dict[str, Any]:
        return {key: _check_value(param_of(key, prefix + key), value, source, prefix + key, base)
                for key, value in entries.items()}

    fixed = checked(table("fixed"), "fixed.")
    grid = table("grid")
    if grid and "runs" in doc:
        raise bad("grid", "give a grid or a list of runs, not both")
    axes: list[list[tuple[str, Any]]] = []
    for key, values in grid.items():
        param = param_of(key, f"grid.{key}")
        if key in fixed:
            raise bad(f"grid.{key}", "also given in fixed")
        if not isinstance(values, list):
            raise bad(f"grid.{key}", f"must be a list of values, got {type(values).__name__}")
        if not values:
            raise bad(f"grid.{key}", "empty list (a grid axis needs at least one value)")
        axes.append([(key, _check_value(param, v, source, f"grid.{key}[{i}]", base)) for i, v in enumerate(values)])
    count = len(doc["runs"]) if "runs" in doc and isinstance(doc["runs"], list) else math.prod(len(a) for a in axes)
    if count > max_runs:
        what = "list of runs" if "runs" in doc else " × ".join(f"{len(a):,}" for a in axes) + " grid"
        raise bad("runs" if "runs" in doc else "grid",
                  f"{count:,} runs (a {what}) is more than the limit of {max_runs:,} runs "
                  f"(split the sweep, or raise the limit with --max-runs)")
    if "runs" in doc:
        runs = doc["runs"]
        if not isinstance(runs, list) or not runs:
            raise bad("runs", "must be a non-empty list of tables")
        combos = []
        for i, entry in enumerate(runs):
            if not isinstance(entry, dict):
                raise bad(f"runs[{i}]", f"must be a table, got {type(entry).__name__}")
            combos.append((f"runs[{i}].", checked(entry, f"runs[{i}].")))
    else:
        combos = [("", dict(combo)) for combo in itertools.product(*axes)]
    digests: dict[Path, str] = {}
    runs_out: dict[str, RunSpec] = {}
    for prefix, values in combos:
        params = {}
        for param in command.params:
            value = values.get(param.name, fixed.get(param.name, param.default))
            if value is REQUIRED:
                raise bad(f"{prefix or 'fixed.'}{param.name}", f"required by {name}: give it in fixed, grid or runs")
            params[param.name] = value
        inputs = {}
        for param in command.params:
            if param.kind == "file" and params[param.name] is not None:
                path = (base / params[param.name]).resolve()
                if path not in digests:
                    try:
                        digests[path] = _file_digest(path)
                    except OSError as exc:
                        raise bad(f"{prefix or 'fixed.'}{param.name}", f"cannot read {path}: {exc.strerror or exc}") from None
                inputs[param.name] = digests[path]
        inputs_hash = hashlib.sha256(canonical_json(inputs).encode()).hexdigest()
        run_id = hashlib.sha256(f"{name}\n{canonical_json(params)}\n{inputs_hash}".encode()).hexdigest()[:32]
        runs_out.setdefault(run_id, RunSpec(run_id, name, params, resolve(command, params, base), inputs_hash))
    return Spec(source, command, list(runs_out.values()))


# -- running ---------------------------------------------------------------------------------


def execute_chunk(runs: list[RunSpec], store_path: str, code_version: str) -> tuple[int, str | None]:
    """Run each of `runs` and store its row as soon as it finishes (the task of a Dask worker,
    and the serial loop). Returns (rows written, None) or, at the first failing run, the rows
    written before it and the error's text."""
    from .results import Store, row_schema

    store = Store(store_path)
    host = os.uname().nodename
    done = 0
    for run in runs:
        command = commands()[run.command]
        started = time.perf_counter()
        try:
            outputs = command.function(**run.kwargs)
        except _core.InputError as exc:
            shown = ", ".join(f"{k}={v}" for k, v in run.params.items() if v is not None)
            return done, f"run {run.run_id} ({shown}): {exc}"
        wall = time.perf_counter() - started
        row = {"run_id": run.run_id, "command": run.command, "params_json": canonical_json(run.params),
               "inputs_hash": run.inputs_hash, "code_version": code_version, "seed": run.params.get("seed"),
               **run.params, **{k: outputs.get(k) for k in command.outputs},
               "wall_s": wall, "host": host, "finished_at": datetime.now(timezone.utc).isoformat(timespec="milliseconds")}
        store.write_row(row, row_schema(command))
        done += 1
    return done, None


def _chunks(runs: list[RunSpec], workers: int) -> Iterator[list[RunSpec]]:
    """Runs in chunks of about 1/8 of a worker's share (at most MAX_CHUNK): few tasks, a fair end."""
    size = max(1, min(MAX_CHUNK, math.ceil(len(runs) / (8 * max(workers, 1)))))
    for start in range(0, len(runs), size):
        yield runs[start:start + size]


def parse_option(item: str) -> tuple[str, Any]:
    """`KEY=VALUE` of --jobqueue-option: VALUE as JSON when it parses (numbers, lists), else text."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise input_error(_core.InputError, "--jobqueue-option", "", f"expected KEY=VALUE, got {item!r}")
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), value


def jobqueue_class(jobqueue: str) -> Any:
    """dask_jobqueue's cluster class for `jobqueue`, once its submit command (sbatch, qsub) is
    found on PATH: without it the cluster would wait for workers that never start."""
    import shutil

    if jobqueue not in JOBQUEUES:
        raise input_error(_core.InputError, "--jobqueue", "", f"unknown job queue {jobqueue!r} (known: {', '.join(JOBQUEUES)})")
    import dask_jobqueue

    cls = {"slurm": dask_jobqueue.SLURMCluster, "pbs": dask_jobqueue.PBSCluster}[jobqueue]
    submit: str = getattr(cls, "job_cls").submit_command  # noqa: B009 (a class attribute stubs call instance-only)
    if shutil.which(submit) is None:
        raise input_error(_core.InputError, "--jobqueue", "",
                          f"{jobqueue}: `{submit}` is not on PATH (run the sweep where batch jobs can be submitted)")
    return cls


def _last_line(text: str) -> str:
    """The last non-empty line of `text` (a command's error output), cut to 300 characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = lines[-1] if lines else "(no output)"
    return line if len(line) <= 300 else f"{line[:300]}... ({len(line):,} characters)"


#: The loggers of Dask and of the event loop it runs on.
DASK_LOGGERS = ("distributed", "dask_jobqueue", "tornado", "asyncio")


def _silence(*names: str) -> list[tuple[Any, int]]:
    """The loggers `names` silenced; returns each with the level it had."""
    import logging

    loggers = [logging.getLogger(name) for name in names]
    levels = [(logger, logger.level) for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    return levels


@contextlib.contextmanager
def _quiet_logs(*names: str) -> Iterator[None]:
    """The loggers `names` silenced (their errors are reported as one line by the caller)."""
    levels = _silence(*names)
    try:
        yield
    finally:
        for logger, level in levels:
            logger.setLevel(level)


def _quiet_while_failing(stack: contextlib.ExitStack) -> Callable[..., None]:
    """An exit callback for `stack`'s inner contexts: when an error (Ctrl-C included) unwinds
    through it, Dask's loggers are silenced until `stack` closes (their levels restored then).
    A cluster shut down on the way out logs its cancelled handlers with their tracebacks, which
    are not the user's error (that one is reported in one line)."""
    def on_exit(kind: type[BaseException] | None, *_: Any) -> None:
        if kind is not None and not quieted:
            quieted.append(stack.enter_context(_quiet_logs(*DASK_LOGGERS)))
    quieted: list[None] = []
    return on_exit


def start_jobqueue(jobqueue: str, options: Mapping[str, Any] | None = None, jobs: int = 1,
                   timeout: float = JOBQUEUE_TIMEOUT_S) -> Any:
    """dask_jobqueue's SLURMCluster or PBSCluster made with `options`, its `jobs` batch jobs
    submitted and at least one of their workers connected, all within `timeout` seconds.
    Otherwise the cluster is closed (its submitted jobs cancelled) and InputError names the
    cause in one line: the submit command is missing or failed (its last line of error: an
    unreachable controller, a refused option), or no worker started in time (the jobs wait in
    the queue, or die at start)."""
    import asyncio

    cls = jobqueue_class(jobqueue)
    submit: str = getattr(cls, "job_cls").submit_command  # noqa: B009

    def bad(reason: str) -> _core.InputError:
        return input_error(_core.InputError, "--jobqueue", "", f"{jobqueue}: {reason}")

    deadline = time.monotonic() + timeout
    with _quiet_logs(*DASK_LOGGERS):
        kwargs = dict(options or {})
        # The scheduler's web server on a free port (not 8787, maybe taken, with a warning).
        kwargs.setdefault("scheduler_options", {"dashboard_address": ":0"})
        try:
            cluster = cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise input_error(_core.InputError, "--jobqueue-option", "", " ".join(str(exc).split())) from None
        try:
            # scale() would submit in a background callback that logs a failure and retries;
            # here the submission is awaited, so a failure ends the sweep with its reason.
            for _ in range(jobs):
                cluster.worker_spec.update(cluster.new_worker_spec())
            cluster.sync(_submit, cluster, timeout)
            cluster.wait_for_workers(1, timeout=max(deadline - time.monotonic(), 0.001))
            return cluster
        except RuntimeError as exc:  # dask_jobqueue: "Command exited with non-zero exit code ... stderr: ..."
            text = str(exc)
            failed = "non-zero exit code" in text
            reason = f"`{submit}` failed: {_last_line(text.partition('stderr:')[2] if failed else text)}"
        except (TimeoutError, asyncio.TimeoutError):
            ids = [str(job.job_id) for job in list(cluster.workers.values()) if getattr(job, "job_id", None)]
            if ids:
                reason = (f"no worker started within {timeout:g} s (--jobqueue-timeout): batch job{'s' * (len(ids) > 1)} "
                          f"{', '.join(ids)} submitted but not running (still queued, or failing at start: see "
                          f"`{'squeue' if jobqueue == 'slurm' else 'qstat'}` and the jobs' output)")
            else:
                reason = f"`{submit}` did not answer within {timeout:g} s (--jobqueue-timeout)"
        except OSError as exc:
            reason = f"cannot run `{submit}`: {exc.strerror or exc}"
        except ValueError as exc:  # no job id in the submit command's output
            reason = f"`{submit}` printed no job id: {_last_line(str(exc))}"
        raise bad(reason + _abandon(cluster))


def _children() -> set[int]:
    """The process ids of this process's children."""
    import psutil  # type: ignore[import-untyped]  # a dependency of distributed

    return {child.pid for child in psutil.Process().children()}


def _kill_children(keep: set[int]) -> None:
    """Kill this process's children but `keep` (those it had before submitting), and theirs: a
    submit command that hangs, left alone, could still submit a job after the sweep gave up."""
    import psutil  # type: ignore[import-untyped]

    for child in psutil.Process().children():
        if child.pid not in keep:
            with contextlib.suppress(psutil.Error):
                for process in [*child.children(recursive=True), child]:
                    with contextlib.suppress(psutil.Error):
                        process.kill()


async def _submit(cluster: Any, timeout: float) -> None:
    """Submit the batch jobs of `cluster`'s worker specs (on its event loop), and wait for the
    submit commands; past `timeout` seconds, kill them (TimeoutError). Raises their errors."""
    import asyncio

    before = _children()
    task = asyncio.ensure_future(cluster._correct_state())
    done, _ = await asyncio.wait([task], timeout=timeout)
    if not done:
        _kill_children(before)
        with contextlib.suppress(Exception):  # the killed commands' errors, collected (no "never retrieved")
            await asyncio.wait_for(task, 10)
        raise TimeoutError(f"no answer in {timeout:g} s")
    task.result()


def _abandon(cluster: Any) -> str:
    """Cancel the batch jobs `cluster` submitted (its cancel command, bounded in time) and close
    it at once, quietly; returns what to add to the error ("; job 12 cancelled", or why not)."""
    import subprocess

    from distributed.core import Status

    jobs = [job for job in list(cluster.workers.values()) if getattr(job, "job_id", None)]
    said = ""
    if jobs:
        command = [*jobs[0].cancel_command.split(), *(str(job.job_id) for job in jobs)]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=30)
            said = f"; cancelled with `{command[0]}`" if proc.returncode == 0 else \
                f"; `{command[0]}` failed, cancel the jobs yourself: {_last_line(proc.stderr or proc.stdout)}"
        except (OSError, subprocess.TimeoutExpired) as exc:
            said = f"; could not run `{command[0]}` ({getattr(exc, 'strerror', None) or exc}): cancel the jobs yourself"
    # Closing the cluster would cancel the jobs again (and stall on a job that never ran, whose
    # worker never connected): they are done with, or their submission failed.
    for job in list(getattr(cluster, "_created", ())):
        job.job_id = None
        job.status = Status.failed if job.status == Status.created else Status.closed
    with contextlib.suppress(Exception):
        cluster.close(timeout=10)
    return said


def make_cluster(jobqueue: str | None, options: Mapping[str, Any] | None = None, jobs: int | None = None,
                 workers: int | None = None, jobqueue_timeout: float = JOBQUEUE_TIMEOUT_S) -> Any:
    """A Dask cluster: dask_jobqueue's SLURMCluster or PBSCluster with `options`, `jobs` jobs
    submitted and a worker started within `jobqueue_timeout` s (`start_jobqueue`); else a
    LocalCluster of `workers` processes (default: the machine's cores)."""
    import logging

    if jobqueue is not None:
        return start_jobqueue(jobqueue, options, jobs or 1, jobqueue_timeout)
    from distributed import LocalCluster

    from distributed.core import Status
    from distributed.deploy.spec import SpecCluster

    before, clusters = _children(), set(SpecCluster._instances)
    # The driver's own distributed loggers too: on Ctrl-C the client's batched comm logs a
    # closed connection at INFO with its traceback, which is not the user's error.
    logging.getLogger("distributed").setLevel(logging.ERROR)
    try:
        return LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                            dashboard_address=None, silence_logs=logging.ERROR)
    except BaseException:  # Ctrl-C while the workers start: none is left behind, none is waited for
        # The scheduler logs its handlers cancelled below, with tracebacks: Dask's loggers stay
        # silent from here on (the half-made cluster's loop may still be closing after this).
        _silence(*DASK_LOGGERS)
        from multiprocessing import resource_tracker

        # multiprocessing's resource tracker stays: it cleans up after the killed workers.
        _kill_children(before | {getattr(resource_tracker._resource_tracker, "_pid", None) or 0})
        for cluster in set(SpecCluster._instances) - clusters:  # half made: not closed again at exit
            with contextlib.suppress(Exception):  # its loop thread is a daemon: not waited for (10 s by default)
                cluster._loop_runner.stop(timeout=0.1)
            cluster.status = Status.closed
            for server in [getattr(cluster, "scheduler", None), *getattr(cluster, "_created", ())]:
                with contextlib.suppress(Exception):  # their scratch folders, now (not at exit)
                    server._workdir.release()
        raise


def _kill_workers(cluster: Any) -> None:
    """Kill the worker processes of a LocalCluster (and theirs) at once, so that closing it waits
    for no run inside a core call (a graceful close would, for seconds); their nannies are told
    first not to start them again."""
    import psutil  # type: ignore[import-untyped]
    from distributed.core import Status

    for nanny in {*getattr(cluster, "workers", {}).values(), *getattr(cluster, "_created", ())}:  # started or starting
        pid = getattr(nanny, "pid", None)
        if getattr(nanny, "status", None) in (Status.running, Status.starting, Status.init):
            nanny.status = Status.closing_gracefully  # as close_gracefully() does, without its log line
        if pid:
            with contextlib.suppress(psutil.Error):
                worker = psutil.Process(pid)
                for process in [*worker.children(recursive=True), worker]:
                    with contextlib.suppress(psutil.Error):
                        process.kill()


def _run_dask(client: Any, runs: list[RunSpec], store_path: str, code_version: str, workers: int,
              progress: Callable[[int], None], idle_timeout: float | None = None) -> None:
    """Submit the chunks, keeping about 4 per worker in flight; stop at the first failing run.
    With `idle_timeout`, a cluster left without any worker that long (its batch jobs ended)
    stops the sweep (TimeoutError) instead of waiting for workers that will not come."""
    from distributed import wait

    chunks = _chunks(runs, workers)
    window = 4 * max(workers, 1)
    submit = lambda chunk: client.submit(execute_chunk, chunk, store_path, code_version, pure=False)  # noqa: E731
    pending = {submit(c) for c in itertools.islice(chunks, window)}
    idle_since: float | None = None
    while pending:
        try:
            finished, pending = wait(pending, timeout=None if idle_timeout is None else 2.0, return_when="FIRST_COMPLETED")
        except TimeoutError:  # only with idle_timeout: is any worker left?
            if client.scheduler_info().get("workers"):
                idle_since = None
            elif idle_since is None:
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since > (idle_timeout or 0):
                client.cancel(list(pending))
                raise TimeoutError(f"no worker left for {idle_timeout:g} s (--jobqueue-timeout): the batch jobs ended "
                                   f"(wall time?); the runs stored so far stay, run the same command to resume")
            continue
        for future in finished:
            done, error = future.result()
            progress(done)
            if error is not None:
                client.cancel(list(pending))
                raise input_error(_core.InputError, "", "", error)
            following = next(chunks, None)
            if following is not None:
                pending.add(submit(following))


def run(spec: str | os.PathLike[str] | Mapping[str, Any], out: str | os.PathLike[str] | None = None, *,
        scheduler: str | None = None, jobqueue: str | None = None, jobqueue_options: Mapping[str, Any] | None = None,
        jobs: int | None = None, workers: int | None = None, serial: bool = False, compact: bool = True,
        progress: Callable[[int, int], None] | None = None, jobqueue_timeout: float = JOBQUEUE_TIMEOUT_S,
        max_runs: int = MAX_RUNS) -> pd.DataFrame:
    """Run every run of `spec` not yet in the results directory `out`, and return the spec's rows
    (in spec order) from the store.

    Where: `serial` in this process; `scheduler` (tcp://HOST:PORT) an existing Dask cluster;
    `jobqueue` ("slurm" or "pbs") a dask_jobqueue cluster made with `jobqueue_options` and
    `jobs` jobs, which must submit and start a worker within `jobqueue_timeout` seconds (and
    a sweep left that long without workers stops); by default a LocalCluster of `workers`
    processes. `progress(done, total)` is called as runs finish. With `compact`, the per-run
    files are merged at the end. A spec of more than `max_runs` runs is refused.
    The DataFrame's `.attrs` has `ran` (runs done now) and `stored` (found already stored)."""
    from .results import code_version, open_store

    if not (jobqueue_timeout > 0 and math.isfinite(jobqueue_timeout)):
        raise input_error(_core.InputError, "--jobqueue-timeout", "", f"must be a positive number of seconds, got {jobqueue_timeout!r}")
    parsed = load_spec(spec, max_runs)
    if jobqueue is not None:
        jobqueue_class(jobqueue)  # before the results directory is made
    if out is None:
        if isinstance(spec, Mapping):
            raise input_error(_core.InputError, "out", "", "a dict spec needs an output directory")
        out = Path(Path(spec).stem + "-results")
    # A directory that is there is checked first; it is made only once the runs can start.
    existing = Path(out).exists() and any(Path(out).iterdir())
    stored = open_store(out).run_ids() if existing else set()
    todo = [r for r in parsed.runs if r.run_id not in stored]
    total = len(parsed.runs)
    done = total - len(todo)

    def advance(count: int) -> None:
        nonlocal done
        done += count
        if progress is not None:
            progress(done, total)

    advance(0)
    version = code_version()
    made = not Path(out).exists()
    new_store: list[Any] = []  # the store, if made by this sweep
    with contextlib.ExitStack() as stack:
        # Unwound last, once the workers are gone: a store made now and left without a row is
        # removed (no partial output); one with rows stays (resumable).
        stack.push(lambda kind, *_: _remove_if_empty(new_store[0], made) if kind is not None and new_store else None)
        # Dask's loggers quiet while an error unwinds, their levels back once the cluster is gone.
        quiet_on_error = _quiet_while_failing(stack.enter_context(contextlib.ExitStack()))
        client = None
        if todo and not serial:
            from distributed import Client

            # The local cluster's scratch files (Dask's locks, its workers' folders) in a folder
            # of this sweep, removed after the cluster.
            scratch = None if scheduler or jobqueue else stack.enter_context(
                tempfile.TemporaryDirectory(prefix="commaware-dask-", ignore_cleanup_errors=True))
            if scratch is not None:
                import dask

                stack.enter_context(dask.config.set({"temporary-directory": scratch}))
            cluster = None if scheduler else stack.enter_context(
                make_cluster(jobqueue, jobqueue_options, jobs, workers, jobqueue_timeout))
            if cluster is not None and jobqueue is None:
                # On Ctrl-C (or any error) the local workers are killed, then the cluster closed.
                stack.push(lambda kind, *_: _kill_workers(cluster) if kind is not None else None)
                stack.push(quiet_on_error)
            client = stack.enter_context(Client(scheduler if scheduler else cluster, timeout=CONNECT_TIMEOUT))
            stack.push(quiet_on_error)  # once the client is up, the first thing done on the way out
        store = open_store(out, create=True)
        if not existing:
            new_store.append(store)
        store.remove_stale_partials()
        if client is not None:
            n_workers = max(len(client.scheduler_info().get("workers", {})), workers or jobs or 1)
            _run_dask(client, todo, str(store.path.resolve()), version, n_workers, advance,
                      jobqueue_timeout if jobqueue else None)
        for chunk in _chunks(todo, 1) if client is None else ():
            count, error = execute_chunk(chunk, str(store.path), version)
            advance(count)
            if error is not None:
                raise input_error(_core.InputError, "", "", error)
    if compact:
        store.compact()
    return rows_of(store.path, parsed, ran=len(todo), stored=total - len(todo))


def _remove_if_empty(store: Any, made: bool) -> None:
    """Remove the results store that this sweep made, if it holds no row: the directory when the
    sweep made it (`made`), else only what it put in it. A store with rows stays (resumable)."""
    import shutil

    store.remove_stale_partials()  # those of killed workers
    if any(store.rows.glob("*.parquet")) or any(store.rows.glob(".*.partial")):
        return
    if made:
        shutil.rmtree(store.path, ignore_errors=True)
        return
    for entry in list(store.path.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def rows_of(path: str | os.PathLike[str], spec: Spec, ran: int = 0, stored: int = 0) -> pd.DataFrame:
    """The stored rows of `spec`'s runs, in spec order."""
    import pandas as pd

    import pyarrow as pa

    from .results import connect

    order = [r.run_id for r in spec.runs]
    con = connect(path)
    try:
        con.register("wanted", pd.DataFrame({"run_id": order, "position": range(len(order))}))
        frame = con.execute("SELECT runs.* FROM runs JOIN wanted USING (run_id) ORDER BY wanted.position").df()
    finally:
        con.close()
    from .results import EXECUTION_COLUMNS, META_COLUMNS, row_schema

    schema = row_schema(spec.command)
    columns = [c for c in schema.names if c in frame.columns]
    frame = frame[columns]
    # A float column is float64 even when every value is missing (NaN, not None).
    for field in schema:
        if field.name in frame.columns and pa.types.is_floating(field.type):
            frame[field.name] = frame[field.name].astype("float64")
    frame.attrs.update(ran=ran, stored=stored, meta=list(META_COLUMNS), execution=list(EXECUTION_COLUMNS))
    return frame


# -- the spec's JSON Schema ------------------------------------------------------------------


def _param_schema(param: Param) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": JSON_TYPES[param.kind]}
    if param.help:
        schema["description"] = param.help + (" A path relative to the spec file." if param.kind == "file" else "")
    if param.choices is not None:
        schema["enum"] = list(param.choices)
    if param.minimum is not None:
        schema["minimum"] = param.minimum
    if param.maximum is not None:
        schema["maximum"] = param.maximum
    if param.default is not REQUIRED and param.default is not None:
        schema["default"] = param.default
    return schema


def spec_schema() -> dict[str, Any]:
    """The JSON Schema of a sweep spec (docs/sweep.schema.json), from the command registry."""
    variants = []
    defs: dict[str, Any] = {}
    for name, command in commands().items():
        params = {p.name: _param_schema(p) for p in command.params}
        defs[name] = {"type": "object", "properties": params, "additionalProperties": False}
        table = {"$ref": f"#/$defs/{name}"}
        # A required parameter is in fixed, in the grid, or in every run.
        required = [{"anyOf": [{"required": ["fixed"], "properties": {"fixed": {"required": [p.name]}}},
                               {"required": ["grid"], "properties": {"grid": {"required": [p.name]}}},
                               {"required": ["runs"], "properties": {"runs": {"items": {"required": [p.name]}}}}]}
                    for p in command.params if p.default is REQUIRED]
        variants.append({
            "if": {"properties": {"command": {"const": name}}},
            "then": {"properties": {
                "fixed": table,
                "grid": {"type": "object", "additionalProperties": False, "properties": {
                    k: {"type": "array", "minItems": 1, "items": {"$ref": f"#/$defs/{name}/properties/{k}"}}
                    for k in params}},
                "runs": {"type": "array", "minItems": 1, "items": table},
            }, **({"allOf": required} if required else {})},
        })
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "commaware sweep spec",
        "description": "A parameter sweep: a command of the Python API, fixed parameters, and a grid (cartesian "
                       "product) or a list of runs. File parameters are paths relative to the spec file.",
        "type": "object",
        "required": ["command"],
        "additionalProperties": False,
        "properties": {
            "command": {"enum": list(commands()), "description": "The command each run calls."},
            "description": {"type": "string"},
            "fixed": {"type": "object", "description": "Parameters shared by every run."},
            "grid": {"type": "object", "description": "Lists of values; the runs are their cartesian product."},
            "runs": {"type": "array", "minItems": 1, "items": {"type": "object"},
                     "description": "One table per run (instead of a grid); its values win over fixed."},
        },
        "not": {"required": ["grid", "runs"]},
        "allOf": variants,
        "$defs": defs,
    }
