"""The results store of `commaware sweep`: a directory of Parquet rows, one per run, queried
with DuckDB and drawn with matplotlib.

Layout::

    DIR/commaware-results.json     {"format": "commaware-results", "version": 1}
    DIR/rows/<run_id>.parquet      one finished run (written atomically by the task that ran it)
    DIR/rows/part-<hash>.parquet   many runs, merged by `compact`
    DIR/.compact.lock              held while compacting

Every file appears complete or not at all (a partial file beside it, then `os.replace`).
A run_id stored twice (a crash between a compaction's rename and its deletions) is read
once, and the next compaction removes the extra file.

Quick use::

    from commaware.experiments import results
    results.load("sweep-out")                                   # pandas DataFrame, one row per run
    results.query("sweep-out", "SELECT policy, avg(avg_response_s) FROM runs GROUP BY policy")
    results.plot("sweep-out", x="interarrival_s", y="avg_response_s", hue="policy", output="resp.svg")
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeVar

from .. import _core
from .._errors import input_error

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from .sweepable import Command

MARKER = "commaware-results.json"
FORMAT = "commaware-results"
FORMAT_VERSION = 1
ROWS = "rows"
PART_PREFIX = "part-"
#: Taken (flock) while compacting.
LOCK = ".compact.lock"
#: Columns of every row before the parameters (name -> kind); `seed` is the run's seed parameter, if any.
META_COLUMNS = {"run_id": "str", "command": "str", "params_json": "str", "inputs_hash": "str", "code_version": "str",
                "seed": "int"}
#: Columns that differ between two executions of the same run (after the outputs).
EXECUTION_COLUMNS = {"wall_s": "float", "host": "str", "finished_at": "str"}


def _error(source: str | os.PathLike[str], field: str, reason: str) -> _core.InputError:
    return input_error(_core.InputError, str(source), field, reason)


def _arrow_type(kind: str) -> pa.DataType:
    import pyarrow as pa

    return {"int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}.get(kind, pa.string())


def row_schema(command: Command) -> pa.Schema:
    """The Parquet schema of `command`'s rows: meta, parameters, outputs, execution columns."""
    import pyarrow as pa

    columns = {**META_COLUMNS, **{p.name: p.kind for p in command.params}, **command.outputs, **EXECUTION_COLUMNS}
    return pa.schema([(name, _arrow_type(kind)) for name, kind in columns.items()])


def code_version() -> str:
    """`commaware.__version__` plus a hash of the `_core` binary and the package's Python sources
    (every module of `commaware`, its subpackages included)."""
    digest = hashlib.sha256(Path(_core.__file__).read_bytes())
    package = Path(__file__).resolve().parent.parent
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode() + b"\0" + source.read_bytes())
    return f"{_core.__version__}+{digest.hexdigest()[:12]}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Store:
    """A results directory: `open_store` checks it, `Store(path)` alone does not (tasks on workers)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.rows = self.path / ROWS

    # -- writing -----------------------------------------------------------------------------

    def _partial(self, final: Path) -> Path:
        """A hidden file beside `final` naming this host and process (so a crash's leftover can be
        recognised and removed), renamed over `final` when complete."""
        return final.with_name(f".{final.name}.{socket.gethostname()}.{os.getpid()}.partial")

    def write_row(self, row: dict[str, Any], schema: pa.Schema) -> Path:
        """Write one run's row as `rows/<run_id>.parquet`, atomically."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        final = self.rows / f"{row['run_id']}.parquet"
        partial = self._partial(final)
        try:
            # One row: no compression, statistics or dictionaries (each costs more than it saves here).
            pq.write_table(pa.Table.from_pylist([row], schema=schema), partial, compression="none",
                           write_statistics=False, use_dictionary=False)
            os.replace(partial, final)
        finally:
            partial.unlink(missing_ok=True)
        return final

    def remove_stale_partials(self) -> int:
        """Remove partial files left by processes of this host that are gone (a killed sweep)."""
        host = socket.gethostname()
        removed = 0
        for partial in self.rows.glob(".*.partial"):
            *_, file_host, pid = partial.name[: -len(".partial")].rsplit(".", 2)
            if file_host == host and pid.isdigit() and not _pid_alive(int(pid)):
                partial.unlink(missing_ok=True)
                removed += 1
        return removed

    # -- reading -----------------------------------------------------------------------------

    def files(self) -> list[Path]:
        return sorted(self.rows.glob("*.parquet"))

    def _part_ids(self, parts: Iterable[Path]) -> set[str]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        ids: set[str] = set()
        for part in parts:
            try:
                ids.update(pq.read_table(part, columns=["run_id"]).column("run_id").to_pylist())
            except pa.ArrowException as exc:  # not Parquet, truncated, or without run_id
                raise _error(part, "", f"not a readable Parquet file of rows ({_first_line(exc)})") from None
        return ids

    def run_ids(self) -> set[str]:
        """Every stored run_id (the per-run files by name, the merged files by their run_id column)."""
        files = self.files()
        singles = {f.stem for f in files if not f.name.startswith(PART_PREFIX)}
        return singles | self._part_ids(f for f in files if f.name.startswith(PART_PREFIX))

    # -- compaction --------------------------------------------------------------------------

    def compact(self) -> int:
        """Merge the per-run files into one `part-<hash>.parquet` (DuckDB, written atomically),
        then delete them; returns the rows merged. A row already in a merged file is not copied again."""
        import fcntl

        with open(self.path / LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one compaction at a time (two would merge the same files twice)
            return self._compact_locked()

    def _compact_locked(self) -> int:
        import duckdb

        files = self.files()
        parts = [f for f in files if f.name.startswith(PART_PREFIX)]
        merged = self._part_ids(parts)
        take = [f for f in files if not f.name.startswith(PART_PREFIX) and f.stem not in merged]
        leftovers = [f for f in files if not f.name.startswith(PART_PREFIX) and f.stem in merged]
        if take:
            name = hashlib.sha256("\n".join(f.stem for f in take).encode()).hexdigest()[:16]
            final = self.rows / f"{PART_PREFIX}{name}.parquet"
            partial = self._partial(final)
            con = duckdb.connect(":memory:")
            try:
                try:
                    con.execute(f"COPY (SELECT * FROM read_parquet({_sql_list(take)}, union_by_name = true) ORDER BY run_id) "
                                f"TO {_sql_string(str(partial))} (FORMAT parquet, COMPRESSION zstd)")
                except duckdb.Error:
                    bad = unreadable_file(take)  # a corrupt row file, named; else the write failed
                    if bad is not None:
                        raise bad from None
                    raise
                os.replace(partial, final)
            finally:
                con.close()
                partial.unlink(missing_ok=True)
        for f in take + leftovers:
            f.unlink(missing_ok=True)
        return len(take)


def open_store(path: str | os.PathLike[str], create: bool = False) -> Store:
    """The results directory at `path`, checked: ours (the marker file) and of a format we read.
    With `create`, a missing or empty directory becomes a new store. Raises InputError."""
    path = Path(path)
    marker = path / MARKER
    if path.exists() and not path.is_dir():
        raise _error(path, "", "is a file, not a results directory")
    if not marker.exists():
        if not path.exists() and not create:
            raise _error(path, "", "no such results directory")
        if path.exists() and any(path.iterdir()):
            raise _error(path, "", f"exists and is not a commaware results directory (no {MARKER})")
        if not create:
            raise _error(path, "", f"not a commaware results directory (no {MARKER})")
        from ..output import at_once, deliver

        (path / ROWS).mkdir(parents=True, exist_ok=True)
        doc = json.dumps({"format": FORMAT, "version": FORMAT_VERSION}) + "\n"
        with at_once():  # a store fills run by run (resumable), not at the command's end
            deliver(lambda partial: partial.write_text(doc), marker)
        return Store(path)
    try:
        doc = json.loads(marker.read_text())
    except (OSError, ValueError) as exc:
        raise _error(marker, "", f"cannot read: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise _error(marker, "format", f"expected {FORMAT!r}, got {doc.get('format') if isinstance(doc, dict) else doc!r}")
    if doc.get("version") != FORMAT_VERSION:
        raise _error(marker, "version", f"this commaware reads version {FORMAT_VERSION}, got {doc.get('version')!r}")
    (path / ROWS).mkdir(exist_ok=True)
    return Store(path)


# -- queries ---------------------------------------------------------------------------------


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _sql_list(files: list[Path]) -> str:
    return "[" + ", ".join(_sql_string(str(f)) for f in files) + "]"


#: DuckDB's numeric column types, by name (a list of numbers, INTEGER[], is not one).
_NUMERIC_TYPE = re.compile(r"U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)|FLOAT|DOUBLE|DECIMAL\(\d+, ?\d+\)")
_DENIED = re.compile(r'Cannot access (?:file|directory) "(?P<path>[^"]*)"')


def is_numeric(type_name: str) -> bool:
    """Whether DuckDB's type `type_name` (as DESCRIBE and a result's description give it) is a number."""
    return _NUMERIC_TYPE.fullmatch(type_name) is not None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def unreadable_file(files: Iterable[Path]) -> _core.InputError | None:
    """An error naming the first of `files` that DuckDB cannot read whole (a corrupt or truncated
    Parquet file), or None when every one reads."""
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        for f in files:
            try:  # every column of every row, hashed: all pages are decoded, nothing is kept
                con.execute("SELECT sum(hash(t)) FROM read_parquet(?) t", [str(f)]).fetchall()
            except duckdb.Error as exc:
                reason = _first_line(exc).replace(f" '{f}'", "").replace(f" \"{f}\"", "")
                return _error(f, "", f"not a readable Parquet file ({reason})")
        return None
    finally:
        con.close()


def _sql_error(path: str | os.PathLike[str], field: str, exc: Exception, files: list[Path]) -> _core.InputError:
    """The InputError of a DuckDB error met while running a query: a file outside the store
    refused, an unreadable file of the store by its path, or the SQL's own error."""
    import duckdb

    denied = _DENIED.search(str(exc))
    if denied:
        return _error(path, field, f"access to {denied['path']!r} is refused: a query reads the view `runs` "
                                   "of the store and nothing else")
    # Errors of the SQL itself, met before a row is read, need no look at the files.
    sql_own = (duckdb.ParserException, duckdb.BinderException, duckdb.CatalogException, duckdb.PermissionException,
               duckdb.InterruptException, duckdb.OutOfMemoryException)
    if not isinstance(exc, sql_own):
        bad = unreadable_file(files)
        if bad is not None:
            return bad
    return _error(path, field, _first_line(exc))


def connect(path: str | os.PathLike[str]) -> Any:
    """An in-memory DuckDB connection with the view `runs`: every stored row, each run_id once.

    It reads the store's row files and nothing else: once the view is made, external access is
    disabled (no file, directory, database or extension outside them) and the configuration is
    locked. A Parquet file of the store that cannot be read is an InputError naming it."""
    return _connect(path)[0]


def _connect(path: str | os.PathLike[str]) -> tuple[Any, list[Path]]:
    """`connect`'s connection and the row files its view reads."""
    import duckdb

    store = open_store(path)
    files = store.files()
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        con.execute("SET enable_progress_bar = false")  # DuckDB's own bar on stderr, on long queries
        if files:
            try:
                con.execute(f"CREATE VIEW runs AS SELECT * EXCLUDE (filename) FROM read_parquet({_sql_list(files)}, "
                            "union_by_name = true, filename = true) "
                            "QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY filename) = 1")
            except duckdb.Error as exc:
                raise unreadable_file(files) or _error(path, "", f"cannot read the stored rows: {_first_line(exc)}") from None
        else:
            types = {"str": "VARCHAR", "int": "BIGINT", "float": "DOUBLE"}
            columns = ", ".join(f"NULL::{types[kind]} AS {name}" for name, kind in {**META_COLUMNS, **EXECUTION_COLUMNS}.items())
            con.execute(f"CREATE VIEW runs AS SELECT {columns} WHERE false")
        con.execute("SET allowed_paths = ?", [[str(f) for f in files]])
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con, files


def select_statement(con: Any, path: str | os.PathLike[str], sql: str, field: str = "SQL") -> Any:
    """The one SELECT statement of `sql` (WITH, FROM-first, DESCRIBE, SHOW and SUMMARIZE are
    SELECTs), parsed by `con`. Anything else is an InputError naming it: no statement, several,
    or one that would do more than read (COPY, ATTACH, INSTALL, LOAD, CREATE, DROP, INSERT, SET...)."""
    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise _error(path, field, _first_line(exc)) from None
    if not statements:
        raise _error(path, field, "empty: give one SELECT statement")
    if len(statements) > 1:
        raise _error(path, field, f"{len(statements)} statements: give one SELECT statement")
    statement = statements[0]
    if statement.type != duckdb.StatementType.SELECT:
        words = re.sub(r"--[^\n]*|/\*.*?\*/", " ", statement.query, flags=re.S).split()
        keyword = words[0].upper() if words and words[0].isalpha() else statement.type.name
        raise _error(path, field, f"{keyword} is refused: a query only reads the store (one SELECT statement)")
    return statement


T = TypeVar("T")


class _Interrupter:
    """While open, Ctrl-C stops a DuckDB call on `con` at once: the signal reaches Python's
    handler only when the main thread is back in Python (DuckDB looks now and then, or never),
    so the Ctrl-C watcher (`_signals.Watch`, woken by the signal in whichever thread) calls
    `con.interrupt()`, and the call (`run`) ends with KeyboardInterrupt. One watch for all the
    calls of a query, however many batches it is read in; off the main thread, nothing to
    watch (signals only reach the main thread)."""

    def __init__(self, con: Any) -> None:
        from .._signals import Watch

        self._con = con
        self._watch = Watch(con.interrupt)

    def run(self, call: Callable[[], T]) -> T:
        import duckdb

        try:
            return call()
        except duckdb.InterruptException:
            raise KeyboardInterrupt from None
        except RuntimeError as exc:  # DuckDB's own look at the signal, when it comes first
            if "interrupted" in str(exc):
                raise KeyboardInterrupt from None
            raise

    def close(self) -> None:
        self._watch.close()


class QueryRows:
    """The rows of one query, read a batch at a time (never the whole result at once).

    `columns` and `types` (DuckDB's type names) describe them; `fetch(n)` returns up to `n`
    rows as tuples, an empty list at the end. Use it as a context manager (it closes the
    connection). Errors met while reading are InputErrors, as `query`'s."""

    def __init__(self, path: str | os.PathLike[str], sql: str) -> None:
        import duckdb

        self._path = path
        self._con, self._files = _connect(path)
        self._interrupter = _Interrupter(self._con)
        try:
            statement = select_statement(self._con, path, sql)
            try:
                self._interrupter.run(lambda: self._con.execute(statement))
            except duckdb.Error as exc:
                raise _sql_error(path, "SQL", exc, self._files) from None
            description = self._con.description or []
        except BaseException:
            self.close()
            raise
        self.columns: list[str] = [d[0] for d in description]
        self.types: list[str] = [str(d[1]) for d in description]

    def numeric(self) -> list[bool]:
        """Which columns hold numbers."""
        return [is_numeric(t) for t in self.types]

    def fetch(self, n: int) -> list[tuple[Any, ...]]:
        import duckdb

        try:
            return self._interrupter.run(lambda: self._con.fetchmany(n))
        except duckdb.Error as exc:
            raise _sql_error(self._path, "SQL", exc, self._files) from None

    def frame(self) -> pd.DataFrame:
        """Every row not fetched yet, as a pandas DataFrame."""
        import duckdb

        try:
            return self._interrupter.run(lambda: self._con.fetch_df())
        except duckdb.Error as exc:
            raise _sql_error(self._path, "SQL", exc, self._files) from None

    def close(self) -> None:
        self._interrupter.close()
        self._con.close()

    def __enter__(self) -> QueryRows:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def query(path: str | os.PathLike[str], sql: str) -> pd.DataFrame:
    """Run `sql`, one SELECT statement, over the view `runs` of the results directory, and return
    every row it gives; raises InputError on an SQL error or a statement that is not a SELECT.
    `QueryRows(path, sql)` reads a big result in batches instead."""
    with QueryRows(path, sql) as rows:
        return rows.frame()


def load(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Every stored row (each run_id once), ordered by command and run_id."""
    return query(path, "SELECT * FROM runs ORDER BY command, run_id")


def plot(path: str | os.PathLike[str], x: str, y: str, hue: str | None = None, output: str | Path = "plot.svg",
         where: str | None = None, title: str | None = None) -> Path:
    """Draw `y` against `x` (one line or bar group per value of `hue`) to an .svg or .png file:
    the mean over the rows that share x and hue, with ± one standard deviation. A numeric `x`
    gives lines, any other bars. `where` is an SQL condition on the rows."""
    import duckdb
    import numpy as np

    output = Path(output)
    if output.suffix.lower() not in (".svg", ".png"):
        raise _error(output, "", "the chart must be .svg or .png")
    con, files = _connect(path)
    try:
        types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE runs)").fetchall())
        for field, column in (("x", x), ("y", y), ("hue", hue)):
            if column is not None and column not in types:
                raise _error(path, field, f"unknown column `{column}` (columns: {', '.join(types)})")
        if not is_numeric(types[y]):
            raise _error(path, "y", f"column `{y}` is {types[y]}, not a number")
        selected = ", ".join(f'"{c}"' for c in dict.fromkeys(c for c in (x, y, hue) if c is not None))
        statement = select_statement(con, path, f"SELECT {selected} FROM runs" + (f" WHERE {where}" if where else ""),
                                     field="where")
        try:
            frame = con.execute(statement).fetch_df()
        except duckdb.Error as exc:
            raise _sql_error(path, "where", exc, files) from None
    finally:
        con.close()
    frame = frame.dropna(subset=[y])
    if frame.empty:
        raise _error(path, "y", f"no row has a value of `{y}`")
    groups = [x] if hue is None else [hue, x]
    stats = frame.groupby(groups, dropna=False)[y].agg(["mean", "std", "count"]).reset_index()
    stats["std"] = stats["std"].fillna(0.0)
    line = is_numeric(types[x])

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..gantt import save_atomically

    fig, ax = plt.subplots(figsize=(7, 4.2))
    series = [(None, stats)] if hue is None else list(stats.groupby(hue, dropna=False, sort=True))
    categories = sorted(stats[x].astype(str).unique()) if not line else []
    width = 0.8 / max(len(series), 1)
    for k, (label, part) in enumerate(series):
        name = None if hue is None else f"{hue}={label[0] if isinstance(label, tuple) else label}"
        if line:
            part = part.sort_values(x)
            ax.plot(part[x], part["mean"], marker="o", label=name)
            ax.fill_between(part[x], part["mean"] - part["std"], part["mean"] + part["std"], alpha=0.2)
        else:
            where_x = np.array([categories.index(str(v)) for v in part[x]], dtype=float)
            ax.bar(where_x - 0.4 + width * (k + 0.5), part["mean"], width, yerr=part["std"], capsize=3, label=name)
    if not line:
        ax.set_xticks(range(len(categories)), categories, rotation=30 if len(categories) > 6 else 0)
    ax.set_xlabel(x)
    ax.set_ylabel(f"{y} (mean ± sd of up to {int(stats['count'].max())} runs)" if stats["count"].max() > 1 else y)
    if hue is not None:
        ax.legend(fontsize="small")
    ax.set_title(title or f"{y} against {x}", fontsize="medium")
    fig.tight_layout()
    try:
        save_atomically(fig, output)
    finally:
        plt.close(fig)
    return output
