"""`commaware sweep` and `commaware results` (parameter sweeps on Dask, the results store); see
`commaware.experiments`. Dask, DuckDB, pandas and pyarrow are imported only when a command runs.
"""

from __future__ import annotations

import itertools
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Optional

import click

from .common import Progress, Table, err, fail, failing, out

if TYPE_CHECKING:
    from ..experiments.results import QueryRows

#: Rows shown in the terminal table of `sweep`, and printed by `results query` unless --limit or --all.
SHOWN_ROWS = 20
#: Rows `results query --all` reads from DuckDB at a time (and prints per terminal table).
BATCH_ROWS = 1000
#: Columns of the terminal table of `sweep`: the parameters that vary, then the first outputs.
MAX_COLUMNS = 9


class SweepProgress(Progress):
    """The sweep's progress on stderr (the commands' `Progress`): runs done of the spec's runs."""

    def __call__(self, done: int, total: int) -> None:
        self.update(done, total)


def _cell(value: Any) -> str:
    """A value in a terminal table: "-" when missing, floats to 5 significant digits."""
    return "-" if value is None else f"{value:.5g}" if isinstance(value, float) else str(value)


def _print_table(title: str | None, columns: list[str], numeric: list[bool], rows: list[tuple[Any, ...]]) -> None:
    """`rows` as a rich table on stdout, numeric columns right-aligned."""
    table = Table(title=title, title_justify="left", header_style="bold")
    for col, number in zip(columns, numeric):
        table.add_column(str(col), justify="right" if number else "left")
    for values in rows:
        table.add_row(*(_cell(v) for v in values))
    out.print(table)


def _show(frame: Any, title: str, columns: list[str] | None = None) -> None:
    """The first SHOWN_ROWS rows of `frame` as a rich table on stdout."""
    columns = columns or list(frame.columns)
    shown = frame.head(SHOWN_ROWS)[columns]
    missing = shown.isna().to_numpy()
    rows = [tuple(None if gap else v for v, gap in zip(values, gaps))
            for values, gaps in zip(shown.itertuples(index=False), missing)]
    _print_table(title, columns, [frame[col].dtype.kind in "iuf" for col in columns], rows)
    if len(frame) > SHOWN_ROWS:
        out.print(f"(first {SHOWN_ROWS} of {len(frame)} rows; --json prints all)")


def _echo_json(frame: Any) -> None:
    """`frame` as a JSON array of rows (numbers exactly as stored, missing values null)."""
    rows = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    click.echo(json.dumps(rows, indent=1, allow_nan=False,
                          default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v)))  # numpy arrays, timestamps


def _json_value(value: Any) -> Any:
    """A value of a query's row as JSON carries it: NaN and infinities null, decimals as numbers,
    lists and structs recursively, anything else (dates, times, UUIDs) as its text."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Decimal):
        return _json_value(float(value))
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    return str(value)


@click.command("sweep")
@click.argument("spec", metavar="SPEC.toml", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Results directory (created if missing; default: SPEC-results in the current directory).")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT", help="Run on an existing Dask cluster.")
@click.option("--jobqueue", type=click.Choice(["slurm", "pbs"]), default=None,
              help="Run on a dask-jobqueue cluster (workers are batch jobs; see docs/sweeps.md).")
@click.option("--jobqueue-option", "jobqueue_options", multiple=True, metavar="KEY=VALUE",
              help="Option of SLURMCluster/PBSCluster (repeatable), e.g. cores=8 memory=16GB queue=normal "
                   "walltime=01:00:00; a VALUE that parses as JSON is taken as such.")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="With --jobqueue: batch jobs to start (default 1).")
@click.option("--jobqueue-timeout", "jobqueue_timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="SECONDS",
              help="With --jobqueue: the longest wait for the jobs to be submitted and a first worker to start, and for "
                   "new workers once all have gone; past it the sweep stops with exit 2, its jobs cancelled "
                   "[default: 300].")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Worker processes of the local Dask cluster (default: the machine's cores).")
@click.option("--serial", is_flag=True, help="Run in this process, without Dask (the reference).")
@click.option("--no-compact", "no_compact", is_flag=True, help="Keep one Parquet file per run (no merge at the end).")
@click.option("--max-runs", "max_runs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Refuse a spec of more than N runs, counted before any is built [default: 1,000,000].")
@click.option("--json", "as_json", is_flag=True, help="Print the spec's rows as a JSON array.")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr (a bar on a terminal, else a line every 10 s).")
def sweep_cmd(spec: str, out_dir: Optional[str], scheduler: Optional[str], jobqueue: Optional[str],
              jobqueue_options: tuple[str, ...], jobs: Optional[int], jobqueue_timeout: Optional[float],
              workers: Optional[int], serial: bool, no_compact: bool, max_runs: Optional[int], as_json: bool,
              quiet: bool) -> None:
    """Run every run of SPEC.toml (a command, fixed parameters, a grid or a list of runs) and
    store each row in the results directory as soon as it finishes.

    A run already stored (same command, parameters and input file contents) is skipped: an
    interrupted sweep resumes where it stopped. docs/sweeps.md describes the spec.

    \b
    Examples:
      commaware sweep examples/sweeps/cosched.toml --out cosched-results
      commaware sweep spec.toml --scheduler tcp://10.0.0.5:8786
      commaware sweep spec.toml --jobqueue slurm --jobs 4 --jobqueue-option cores=8 --jobqueue-option memory=16GB
      commaware results query cosched-results "SELECT policy, avg(avg_response_s) FROM runs GROUP BY policy"
    """
    places = [name for name, given in (("--serial", serial), ("--scheduler", scheduler), ("--jobqueue", jobqueue)) if given]
    if len(places) > 1:
        fail(f"{' and '.join(places)}: give one place to run")
    if workers is not None and (scheduler or jobqueue):
        fail(f"--workers: sizes the local cluster only, not {places[0]}")
    alone = [name for name, given in (("--jobs", jobs is not None), ("--jobqueue-option", bool(jobqueue_options)),
                                      ("--jobqueue-timeout", jobqueue_timeout is not None)) if given]
    if alone and not jobqueue:
        fail(f"{alone[0]}: goes with --jobqueue")
    from ..experiments import sweep

    try:
        with failing():
            options = dict(sweep.parse_option(item) for item in jobqueue_options)
            kwargs: dict[str, Any] = dict(scheduler=scheduler, jobqueue=jobqueue, jobqueue_options=options, jobs=jobs,
                                          workers=workers, serial=serial, compact=not no_compact,
                                          jobqueue_timeout=jobqueue_timeout or sweep.JOBQUEUE_TIMEOUT_S,
                                          max_runs=max_runs or sweep.MAX_RUNS)
            with SweepProgress("sweep", quiet=quiet, plain=as_json, unit="runs") as progress:
                frame = sweep.run(spec, out_dir, progress=progress, **kwargs)
    except (OSError, TimeoutError) as exc:  # a file of the results directory, or the Dask cluster
        if getattr(exc, "filename", None):
            fail(f"{exc.filename}: cannot write: {exc.strerror or exc}")
        where = f"--scheduler {scheduler}" if scheduler else f"--jobqueue {jobqueue}" if jobqueue else "local Dask cluster"
        fail(f"{where}: {exc}")
    if as_json:
        _echo_json(frame)
        return
    from ..experiments.sweepable import commands

    command = commands()[frame["command"].iloc[0]] if len(frame) else None
    varying = [p.name for p in command.params if frame[p.name].nunique(dropna=False) > 1] if command else []
    outputs = list(command.outputs)[:max(3, MAX_COLUMNS - len(varying))] if command else []
    _show(frame, f"{spec}: {len(frame)} runs ({frame.attrs['ran']} run now, {frame.attrs['stored']} already stored)",
          varying + outputs)
    err.print(f"results in {out_dir or Path(Path(spec).stem + '-results')}; "
              f"query with `commaware results query DIR \"SELECT ... FROM runs\"`", highlight=False)


@click.group("results")
def results_group() -> None:
    """Query, plot and compact a results directory written by `commaware sweep`.

    \b
      commaware results query DIR "SELECT policy, avg(avg_response_s) FROM runs GROUP BY policy"
      commaware results plot DIR --x interarrival_s --y avg_response_s --hue policy -o resp.svg
      commaware results compact DIR
    """


@results_group.command("query")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False))
@click.argument("sql")
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N",
              help=f"Print at most N rows; the query stops there [default: {SHOWN_ROWS}].")
@click.option("--all", "all_rows", is_flag=True, help="Print every row, streamed a batch at a time.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as a JSON array.")
def results_query_cmd(directory: str, sql: str, limit: Optional[int], all_rows: bool, as_json: bool) -> None:
    """Run one SQL SELECT statement (DuckDB) over DIR's rows: the view `runs` has one row per
    run (run_id, command, the parameters, params_json, inputs_hash, code_version, seed, the
    outputs, wall_s, host, finished_at).

    The query only reads the store: anything but one SELECT (COPY, ATTACH, INSTALL, CREATE,
    DROP, INSERT, SET, several statements) and any file outside the store is refused (exit 2).
    The result is streamed, never held whole: the first --limit N rows (20 by default; the
    query stops there), or --all of them. docs/sweeps.md has the details.
    """
    from ..experiments.results import QueryRows

    if limit is not None and all_rows:
        fail("--limit and --all: give one")
    wanted = None if all_rows else limit or SHOWN_ROWS
    with failing():
        rows = QueryRows(directory, sql)
    with rows:
        if as_json:
            _stream_json(rows, wanted)
        else:
            _stream_table(rows, wanted)


def _first_rows(rows: QueryRows, wanted: int | None) -> tuple[list[tuple[Any, ...]], bool]:
    """The first batch (all `wanted` rows, or BATCH_ROWS with --all) and whether more follow; read
    before anything is printed, so an error of the query leaves stdout empty."""
    with failing():
        first = rows.fetch(BATCH_ROWS if wanted is None else wanted + 1)
    if wanted is not None:
        return first[:wanted], len(first) > wanted
    return first, len(first) == BATCH_ROWS


def _more_rows(rows: QueryRows) -> Iterator[list[tuple[Any, ...]]]:
    while True:
        with failing():
            batch = rows.fetch(BATCH_ROWS)
        if not batch:
            return
        yield batch


def _cut_note(wanted: int) -> str:
    return f"first {wanted} rows shown; --limit N or --all for more"


def _stream_table(rows: QueryRows, wanted: int | None) -> None:
    """Rich tables on stdout (one per BATCH_ROWS rows with --all), then the count of rows."""
    first, more = _first_rows(rows, wanted)
    _print_table(None, rows.columns, rows.numeric(), first)
    shown = len(first)
    if wanted is None and more:
        for batch in _more_rows(rows):
            _print_table(None, rows.columns, rows.numeric(), batch)
            shown += len(batch)
    out.print(f"({_cut_note(shown)})" if wanted is not None and more else f"{shown} row(s)", highlight=False)


def _stream_json(rows: QueryRows, wanted: int | None) -> None:
    """A JSON array, one row per line, written a batch at a time."""
    first, more = _first_rows(rows, wanted)
    batches = itertools.chain([first], _more_rows(rows) if wanted is None and more else [])
    encode = json.JSONEncoder(allow_nan=False).encode
    sep = "[\n"
    for batch in batches:
        text = ",\n".join(encode({c: _json_value(v) for c, v in zip(rows.columns, values)}) for values in batch)
        if text:
            click.echo(sep + text, nl=False)
            sep = ",\n"
    click.echo("[]" if sep == "[\n" else "\n]")
    if wanted is not None and more:
        err.print(f"note: {_cut_note(wanted)}", highlight=False)


@results_group.command("plot")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--x", "x", required=True, help="Column on the x axis (numbers: lines; otherwise: bars).")
@click.option("--y", "y", required=True, help="Numeric column on the y axis (mean ± sd over rows with the same x and hue).")
@click.option("--hue", default=None, help="Column whose values get one line or bar each.")
@click.option("--where", default=None, metavar="SQL", help="Only the rows meeting this SQL condition, e.g. \"jobs = 20\".")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default="plot.svg", show_default=True,
              help="FILE.svg or FILE.png.")
def results_plot_cmd(directory: str, x: str, y: str, hue: Optional[str], where: Optional[str], output: str) -> None:
    """Draw one column of DIR's rows against another."""
    from ..experiments.results import plot

    with failing(writing=output):
        plot(directory, x, y, hue=hue, output=output, where=where)
    err.print(f"wrote {output}", highlight=False)


@results_group.command("compact")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help='Print {"merged": N}.')
def results_compact_cmd(directory: str, as_json: bool) -> None:
    """Merge DIR's per-run Parquet files into one (atomically; no row is lost or doubled)."""
    from ..experiments.results import open_store

    with failing():
        store = open_store(directory)
        store.remove_stale_partials()
        merged = store.compact()
    if as_json:
        click.echo(json.dumps({"merged": merged}))
    else:
        out.print(f"merged {merged} per-run file(s) of {directory}")
