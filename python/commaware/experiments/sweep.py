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
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from .. import _core
from .._errors import input_error
from .sweepable import JSON_TYPES, REQUIRED, Command, Param, commands, resolve

if TYPE_CHECKING:
    import pandas as pd

SPEC_KEYS = ("command", "description", "fixed", "grid", "runs")
JOBQUEUES = ("slurm", "pbs")
#: Largest number of runs one Dask task executes (small runs go in chunks: less scheduling per run).
MAX_CHUNK = 64
#: How long to try reaching a Dask scheduler.
CONNECT_TIMEOUT = "20s"


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


def _read_spec(spec: str | os.PathLike[str] | Mapping[str, Any]) -> tuple[dict[str, Any], str, Path]:
    """The spec document, its name for messages, and the folder its file paths start from."""
    import tomllib

    if isinstance(spec, Mapping):
        return dict(spec), "<dict>", Path.cwd()
    path = Path(spec)
    try:
        return tomllib.loads(path.read_text(encoding="utf-8-sig")), str(path), path.resolve().parent  # a BOM is dropped
    except OSError as exc:
        raise input_error(_core.InputError, str(path), "", f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise input_error(_core.InputError, str(path), "", f"not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise input_error(_core.InputError, str(path), "", f"not valid TOML: {exc}") from None


def load_spec(spec: str | os.PathLike[str] | Mapping[str, Any]) -> Spec:
    """Read and check a spec (TOML file or dict): every run with its parameters and run_id.
    Raises InputError naming the spec, the field and the reason. Identical runs are run once."""
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


def make_cluster(jobqueue: str | None, options: Mapping[str, Any] | None = None, jobs: int | None = None,
                 workers: int | None = None) -> Any:
    """A Dask cluster: dask_jobqueue's SLURMCluster or PBSCluster with `options`, scaled to
    `jobs` jobs; else a LocalCluster of `workers` processes (default: the machine's cores)."""
    import logging

    if jobqueue is not None:
        cls = jobqueue_class(jobqueue)
        try:
            cluster = cls(**dict(options or {}))
        except (TypeError, ValueError) as exc:
            raise input_error(_core.InputError, "--jobqueue-option", "", str(exc)) from None
        cluster.scale(jobs=jobs or 1)
        return cluster
    from distributed import LocalCluster

    return LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                        dashboard_address=None, silence_logs=logging.ERROR)


def _run_dask(client: Any, runs: list[RunSpec], store_path: str, code_version: str, workers: int,
              progress: Callable[[int], None]) -> None:
    """Submit the chunks, keeping about 4 per worker in flight; stop at the first failing run."""
    from distributed import as_completed

    chunks = _chunks(runs, workers)
    window = 4 * max(workers, 1)
    submit = lambda chunk: client.submit(execute_chunk, chunk, store_path, code_version, pure=False)  # noqa: E731
    pending = as_completed([submit(c) for c in itertools.islice(chunks, window)])
    for future in pending:
        done, error = future.result()
        progress(done)
        if error is not None:
            client.cancel(list(pending.futures))
            raise input_error(_core.InputError, "", "", error)
        following = next(chunks, None)
        if following is not None:
            pending.add(submit(following))


def run(spec: str | os.PathLike[str] | Mapping[str, Any], out: str | os.PathLike[str] | None = None, *,
        scheduler: str | None = None, jobqueue: str | None = None, jobqueue_options: Mapping[str, Any] | None = None,
        jobs: int | None = None, workers: int | None = None, serial: bool = False, compact: bool = True,
        progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """Run every run of `spec` not yet in the results directory `out`, and return the spec's rows
    (in spec order) from the store.

    Where: `serial` in this process; `scheduler` (tcp://HOST:PORT) an existing Dask cluster;
    `jobqueue` ("slurm" or "pbs") a dask_jobqueue cluster made with `jobqueue_options` and
    `jobs` jobs; by default a LocalCluster of `workers` processes. `progress(done, total)` is
    called as runs finish. With `compact`, the per-run files are merged at the end.
    The DataFrame's `.attrs` has `ran` (runs done now) and `stored` (found already stored)."""
    from .results import code_version, open_store

    parsed = load_spec(spec)
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
    with contextlib.ExitStack() as stack:
        client = None
        if todo and not serial:
            from distributed import Client

            cluster = None if scheduler else stack.enter_context(make_cluster(jobqueue, jobqueue_options, jobs, workers))
            client = stack.enter_context(Client(scheduler if scheduler else cluster, timeout=CONNECT_TIMEOUT))
        store = open_store(out, create=True)
        store.remove_stale_partials()
        if client is not None:
            n_workers = len(client.scheduler_info().get("workers", {})) or workers or jobs or 1
            _run_dask(client, todo, str(store.path.resolve()), version, n_workers, advance)
        for chunk in _chunks(todo, 1) if client is None else ():
            count, error = execute_chunk(chunk, str(store.path), version)
            advance(count)
            if error is not None:
                raise input_error(_core.InputError, "", "", error)
    if compact:
        store.compact()
    return rows_of(store.path, parsed, ran=len(todo), stored=total - len(todo))


def rows_of(path: str | os.PathLike[str], spec: Spec, ran: int = 0, stored: int = 0) -> pd.DataFrame:
    """The stored rows of `spec`'s runs, in spec order."""
    import pandas as pd

    from .results import connect

    order = [r.run_id for r in spec.runs]
    con = connect(path)
    try:
        con.register("wanted", pd.DataFrame({"run_id": order, "position": range(len(order))}))
        frame = con.execute("SELECT runs.* FROM runs JOIN wanted USING (run_id) ORDER BY wanted.position").df()
    finally:
        con.close()
    from .results import EXECUTION_COLUMNS, META_COLUMNS, row_schema

    columns = [c for c in row_schema(spec.command).names if c in frame.columns]
    frame = frame[columns]
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
