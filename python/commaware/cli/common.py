"""What the command groups share: the console (`out`, `err`, `Table`), the error tail (`fail`,
`failing`, the exit codes) and the common options (`param_option`, `seed_option`).

Importing it loads neither rich nor anything heavy: `commaware --help` stays quick.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any, Iterator, NoReturn, Self, TypedDict

import click

from .. import _core
from ..api import check_seed

if TYPE_CHECKING:
    from rich.console import Console


class _LazyConsole:
    """A rich Console made on first use: `commaware --help` and option errors do not pay for
    importing rich. Attribute access goes to the console."""

    def __init__(self, stderr: bool = False, min_width: int | None = None) -> None:
        self._stderr = stderr
        self._min_width = min_width
        self._console: Console | None = None

    def real(self) -> Console:
        if self._console is None:
            from rich.console import Console

            console = Console(stderr=self._stderr)
            if self._min_width is not None:
                console = Console(stderr=self._stderr, width=max(console.width, self._min_width))
            self._console = console
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)

    @property
    def is_terminal(self) -> bool:
        """rich's `Console.is_terminal`, answered without importing rich while no console exists."""
        if self._console is not None:
            return self._console.is_terminal
        return _is_terminal(sys.stderr if self._stderr else sys.stdout)


def _is_terminal(stream: Any) -> bool:
    """Whether rich would treat `stream` as a terminal (rich 13-15's rule outside Jupyter): the
    TTY_COMPATIBLE environment variable (0 or 1) decides, else FORCE_COLOR (set and not empty),
    else `isatty()`."""
    import os

    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False

    def __enter__(self) -> Console:  # rich's Live uses `with console:`
        return self.real().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self.real().__exit__(*exc)


_TABLE_CLASS: Any = None


def Table(*args: Any, **kwargs: Any) -> Any:  # noqa: N802 (rich's Table, imported on first use)
    """rich's Table, whose columns wrap what does not fit (a word longer than the column folds
    over lines) instead of cutting it to "…": every command's tables show every character."""
    global _TABLE_CLASS
    if _TABLE_CLASS is None:
        from rich.table import Table as RichTable

        class FoldingTable(RichTable):
            def add_column(self, *a: Any, overflow: Any = "fold", **kw: Any) -> None:
                super().add_column(*a, overflow=overflow, **kw)

        _TABLE_CLASS = FoldingTable
    return _TABLE_CLASS(*args, **kwargs)


out = _LazyConsole(min_width=120)
err = _LazyConsole(stderr=True)

#: `out`'s narrowest width (its `min_width`): a line no wider than this prints the same at any width.
OUT_WIDTH = 120
_PLAIN_CHARS = frozenset(chr(c) for c in range(32, 127)) - set("[]:\\")


def plain_lines(header: str, columns: list[str], rows: list[list[str]], footer: list[str]) -> list[str] | None:
    """The lines `out` prints for `header` (a line without markup), a `Table()` of right-justified
    `columns` holding `rows`, and the `footer` lines, built without importing rich, or None when
    rich might print them differently: stdout a terminal (`_is_terminal`), a line wider than OUT_WIDTH, or a character that is not printable ASCII or
    that rich reads as markup or an emoji code (`[`, `]`, `:`, a backslash). The caller then
    prints through rich; either way the bytes are the same (a command's summary in a pipe or a
    file, the common case of a script, costs no rich import: issue 29)."""
    if out.is_terminal:
        return None
    cells = [columns, *rows]
    if any(not _PLAIN_CHARS.issuperset(text) for text in (header, *footer, *(c for row in cells for c in row))):
        return None
    widths = [max(len(row[i]) for row in cells) + 2 for i in range(len(columns))]

    def rule(left: str, fill: str, mid: str, right: str) -> str:
        return left + mid.join(fill * w for w in widths) + right

    def line(edge: str, row: list[str]) -> str:
        return edge + edge.join(" " + c.rjust(w - 2) + " " for c, w in zip(row, widths)) + edge

    lines = [header, rule("┏", "━", "┳", "┓"), line("┃", columns), rule("┡", "━", "╇", "┩"),
             *(line("│", r) for r in rows), rule("└", "─", "┴", "┘"), *footer]
    if any(len(text) > OUT_WIDTH for text in lines):
        return None
    return lines

#: Seconds between two plain progress lines (stderr not a terminal, or --json); the environment
#: variable of that name overrides it.
PROGRESS_SECONDS = 10.0
PROGRESS_ENV = "COMMAWARE_PROGRESS_SECONDS"


class Progress:
    """A long command's progress on stderr, the one way every command shows it.

    On a terminal (and without --json) a rich bar, transient: `what`, the current `stage`, done
    of total `unit`, a detail and the elapsed time, shown once the run has lasted `delay`
    seconds. Otherwise (stderr piped or to a file, or `plain`, which the commands set with
    --json) plain lines, ``what: stage: done/total unit, detail (elapsed)``, one every
    PROGRESS_SECONDS ($COMMAWARE_PROGRESS_SECONDS) while the run lasts, written by a
    background thread, so a long step that reports nothing still shows that the command runs; a
    run shorter than that prints none. With `quiet`, nothing.

    The command calls `stage` when a new step begins and `update` as work gets done (from any
    thread); use it as a context manager around the work."""

    def __init__(self, what: str, *, quiet: bool = False, plain: bool = False, unit: str = "",
                 delay: float = 0.0) -> None:
        import threading

        self.what, self.unit, self.delay = what, unit, delay
        self.mode = "off" if quiet else "plain" if plain or not err.is_terminal else "bar"
        self.every = PROGRESS_SECONDS
        if self.mode == "plain":
            import os

            value = os.environ.get(PROGRESS_ENV, "")
            try:
                self.every = float(value) if value else PROGRESS_SECONDS
            except ValueError:
                self.every = PROGRESS_SECONDS
            if not self.every > 0:
                self.every = PROGRESS_SECONDS
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._stage, self._detail = "", ""
        self._done: int | None = None
        self._total: int | None = None
        self._bar: Any = None
        self._task: Any = None
        self._steps = self._drawn = 0
        self._started = 0.0

    def __enter__(self) -> Self:
        import threading
        import time

        self._started = time.monotonic()
        if self.mode == "plain":
            self._thread = threading.Thread(target=self._heartbeat, name="commaware-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self._bar is not None:
                self._bar.stop()
                self._bar = None

    def stage(self, text: str) -> None:
        """A new step begins (its counts start over)."""
        with self._lock:
            self._stage, self._done, self._total, self._detail = text, None, None, ""
            self._steps += 1
        self._draw()

    def update(self, done: int | None = None, total: int | None = None, detail: str | None = None) -> None:
        """`done` of `total` units of the current step, with an optional `detail`."""
        with self._lock:
            if done is not None:
                self._done = done
            if total is not None:
                self._total = total
            if detail is not None:
                self._detail = detail
        self._draw()

    def line(self) -> str:
        """The plain line of the current state."""
        import time

        with self._lock:
            stage, done, total, detail = self._stage, self._done, self._total, self._detail
        parts = [self.what] + ([stage] if stage else [])
        counts = ""
        if done is not None:
            counts = f"{done}/{total if total is not None else '?'}" + (f" {self.unit}" if self.unit else "")
        tail = ", ".join(filter(None, [counts, detail])) or ("" if stage else "starting")
        elapsed = int(time.monotonic() - self._started)
        return ": ".join(parts + ([tail] if tail else [])) + f" ({elapsed // 60}m{elapsed % 60:02d}s elapsed)"

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.every):
            sys.stderr.write(self.line() + "\n")
            sys.stderr.flush()

    def _draw(self) -> None:
        if self.mode != "bar":
            return
        import time

        if time.monotonic() - self._started < self.delay:
            return
        with self._lock:
            if self._bar is None and not self._stop.is_set():
                from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
                from rich.progress import Progress as RichProgress

                self._bar = RichProgress(TextColumn("{task.fields[stage]}"), BarColumn(bar_width=16),
                                         MofNCompleteColumn(), TextColumn("{task.fields[unit]}"),
                                         TextColumn("{task.description}"), TimeElapsedColumn(),
                                         console=err.real(), transient=True)
                self._bar.start()
            if self._bar is None:
                return
            stage = self._stage or self.what
            if self._task is None or self._drawn != self._steps:  # a new step: its own bar
                if self._task is not None:
                    self._bar.remove_task(self._task)
                self._task = self._bar.add_task("", total=self._total, stage=stage, unit=self.unit)
                self._drawn = self._steps
            self._bar.update(self._task, completed=self._done or 0, total=self._total, description=self._detail)


#: The run failed: MPI or the recorded program failed, or a measurement could not be written.
EXIT_FAILED = 1
#: Bad input: nothing was done.
EXIT_BAD_INPUT = 2
#: Stopped by Ctrl-C (SIGINT), as a shell reports a process that a SIGINT ended: 128 + 2.
EXIT_INTERRUPTED = 130


class Style(TypedDict, total=False):
    """How `fail` prints a message: with its rich `markup` applied, its `emoji` codes expanded."""

    markup: bool
    emoji: bool


def fail(message: str, code: int = EXIT_BAD_INPUT, *, markup: bool = False, emoji: bool = False) -> NoReturn:
    """Print `error: MESSAGE` on stderr (nothing on stdout) and exit with `code` (2: bad input).

    The message is text: rich markup (`[tag]`) and emoji codes (`:x:`) in it are shown as
    written, unless `markup` or `emoji` ask otherwise (`measure` and `trace` print their
    messages so, as they always have). A value longer than about 100 characters echoed in it is
    cut, with its length (`_core.cut_long_values`, as the core's own messages); the file the
    message starts with is not (a path is named whole, however deep)."""
    import os

    from rich.markup import escape

    head, sep, rest = message.partition(": ")
    named_file = bool(sep) and len(head) < 4096 and os.path.exists(head)
    message = head + sep + _core.cut_long_values(rest) if named_file else _core.cut_long_values(message)
    err.print(f"[bold red]error:[/] {message if markup else escape(message)}", highlight=False, soft_wrap=True,
              emoji=emoji)
    sys.exit(code)


@contextlib.contextmanager
def failing(writing: str | None = None, *, named_by_error: bool = False, code: int = EXIT_BAD_INPUT,
            **style: bool) -> Iterator[None]:
    """The error tail of a command, around its work: bad input (InputError) raised in the block
    is one error line and exit 2 (`fail`, with `style`: its `markup` and `emoji`).

    With `writing` (the file the block writes) or `named_by_error`, a failed write is one error
    line too, and exit `code`: the core's OutputError as it says, an OSError as `FILE: cannot
    write: REASON`, FILE being `writing`, or with `named_by_error` the file the OSError names
    (`writing` when it names none). A file written under a partial name (`output.partial_path`)
    is named as the user asked for it."""
    try:
        yield
    except _core.InputError as exc:
        fail(str(exc), **style)
    except (_core.OutputError, OSError) as exc:
        if writing is None and not named_by_error:
            raise
        from ..output import requested_names

        if isinstance(exc, _core.OutputError):
            fail(requested_names(str(exc)), code, **style)
        target = requested_names(str((exc.filename or writing) if named_by_error else writing))
        reason = requested_names(str(exc.strerror or exc))
        fail(f"{target}: cannot write: {reason}" if target else f"cannot write: {reason}", code, **style)


def parse_params(ctx: click.Context | None, param: click.Parameter | None, values: tuple[str, ...]) -> list[tuple[str, float]]:
    """`--param NAME=VALUE` (repeatable) as (name, value) pairs; a malformed one is exit 2."""
    pairs = []
    for text in values:
        name, sep, value = text.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = None
        if not sep or not name.strip() or number is None:
            fail(f"--param: expected NAME=VALUE with a number, got {text!r}")
        pairs.append((name.strip(), number))
    return pairs  # type: ignore[return-value]


def param_option(help: str) -> Any:
    """The --param NAME=VALUE option (repeatable) of the commands that take model parameters."""
    return click.option("--param", "params", multiple=True, metavar="NAME=VALUE", callback=parse_params, help=help)


def _seed_callback(source: str) -> Any:
    """The callback of a seed option named `source`: the API's check (0 <= seed < 2^64); a bad
    seed is one error line and exit 2; an option left unset stays None."""
    def check(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
        try:
            return None if value is None else check_seed(value, source=source)
        except _core.OptionsError as exc:
            fail(str(exc))
    return check


def seed_option(help: str) -> Any:
    """The --seed option of every command (checked like the API's `seed`)."""
    return click.option("--seed", type=int, default=0, show_default=True, callback=_seed_callback("--seed"),
                        help=f"{help} 0 to 2^64 - 1.".strip())


def routing_options(command: Any) -> Any:
    """The --routing and --routing-seed options of the commands that replay on a platform."""
    command = click.option("--routing-seed", type=int, default=None, callback=_seed_callback("--routing-seed"),
                           help="Seed of the routing's draws (valiant, ugal) and hashes (ecmp), 0 to 2^64 - 1 "
                                "[default: the platform's network.routing_seed, else 0].")(command)
    return click.option("--routing", default=None, metavar="NAME",
                        help="How each flow picks its route on the topology when it starts, over the platform's "
                             "network.routing: minimal (SimGrid's, the default), valiant (dragonfly, torus), "
                             "ugal-g, ugal-l (dragonfly), ecmp, adaptive (fat tree); docs/routing.md.")(command)


#: `--derived-datatype-bytes N` of the commands that read SimGrid TI traces.
derived_datatype_option = click.option(
    "--derived-datatype-bytes", type=float, default=None, metavar="N",
    help="Bytes per element of a derived datatype (an MPI_Type_vector, MPI_Type_create_struct, ...), which "
         "smpirun -trace-ti writes as datatype -1 [default: 0, as SimGrid's replay reads it].")


#: `--traced-speed FLOPS` of the commands that read OTF2 archives.
goal_calc_unit_option = click.option(
    "--goal-calc-unit", type=float, default=1e-9, show_default=True, metavar="SECONDS",
    help="GOAL: seconds per time unit (a `calc N` lasts N units; LogGOPSim's unit is the nanosecond); "
         "--model loggp's parameters are whole numbers of it.")

traced_speed_option = click.option(
    "--traced-speed", type=float, default=None, metavar="FLOPS",
    help="OTF2 and DUMPI: the traced machine's speed in flops/s; compute between MPI calls becomes flops at it "
         "[default: kept as seconds at full host speed].")


def _in_place_names(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...]:
    from .._core import otf2_ambiguous_in_place

    names = tuple(v.strip() for v in (value or "").split(",") if v.strip())
    known = otf2_ambiguous_in_place()
    for name in names:
        if name not in known:
            raise click.BadParameter(f"{name!r} is not one of {', '.join(known)}")
    return names


#: `--in-place NAMES` of the commands that read OTF2 archives.
in_place_option = click.option(
    "--in-place", "in_place", default=None, metavar="NAMES", callback=_in_place_names,
    help="OTF2: the collectives (comma-separated: allreduce, allgather, alltoall, reduce_scatter_block) the program "
         "calls with MPI_IN_PLACE. Score-P's counts say so for the others, not for these [default: none].")


def warn_reading(trace: Any) -> None:
    """On stderr, once per trace: what reading an OTF2 archive or a DUMPI trace approximated."""
    warn_otf2(trace.otf2_stats)
    stats = trace.dumpi_stats
    if stats and stats.get("in_place_collectives"):
        err.print(f"[bold yellow]warning:[/] {stats['in_place_collectives']:,} DUMPI collective records with a zero "
                  "send size beside a receive block: DUMPI does not record MPI_IN_PLACE; read as in place",
                  highlight=False, soft_wrap=True)


def warn_otf2(stats: dict[str, int] | None) -> None:
    """On stderr, once per OTF2 archive: the records skipped and the v-collectives spread evenly."""
    if not stats:
        return
    if stats.get("skipped_records"):
        err.print(f"[bold yellow]warning:[/] {stats['skipped_records']:,} OTF2 records of other paradigms or of "
                  "non-MPI locations (OpenMP, CUDA, threads) were skipped; their time counts as compute",
                  highlight=False, soft_wrap=True)
    if stats.get("even_split_collectives"):
        err.print(f"[bold yellow]warning:[/] {stats['even_split_collectives']:,} alltoallv/alltoallw calls: OTF2 "
                  "records only each rank's total, spread evenly over its peers", highlight=False, soft_wrap=True)
    if stats.get("ambiguous_in_place"):
        err.print(f"[bold yellow]warning:[/] {stats['ambiguous_in_place']:,} allreduce/allgather/alltoall/"
                  "reduce_scatter_block records: Score-P's counts do not say whether they were MPI_IN_PLACE; read as "
                  "--in-place says (default: not in place, the block is the count over N; in place it is over N - 1)",
                  highlight=False, soft_wrap=True)
    if stats.get("wildcard_mrecv"):
        err.print(f"[bold yellow]warning:[/] {stats['wildcard_mrecv']:,} MPI_Mrecv calls: Score-P records no "
                  "message for them; read as receives from any rank with any tag on MPI_COMM_WORLD",
                  highlight=False, soft_wrap=True)


def warn_derived_datatypes(ops: int, derived_datatype_bytes: float | None) -> None:
    """Once per trace, on stderr: how many ops a derived datatype sized at 0 bytes (SimGrid's
    reading), unless --derived-datatype-bytes gave them a size."""
    if ops and derived_datatype_bytes is None:
        err.print(f"[bold yellow]warning:[/] {ops} {'message' if ops == 1 else 'messages'} of the trace (sends and "
                  "collective calls) have a derived datatype (id -1) and carry 0 bytes, as in SimGrid's replay; "
                  "--derived-datatype-bytes N gives them N bytes per element", highlight=False, soft_wrap=True)


def print_busiest_links(result: Any, count: int = 3) -> None:
    """One line: the most utilised links of a run kept with link statistics (a simulation's
    `Result` or a cluster run's `CoschedRun`), as `--json` lists them."""
    from ..links import loaded_links

    links = result.links
    shown = [f"{links['name'][i]} (mean {links['mean_utilisation'][i]:.1%}, peak {links['peak_utilisation'][i]:.1%}, "
             f"{links['peak_flows'][i]} flows)" for i in loaded_links(result, count)]
    out.print(f"busiest links: {', '.join(shown) or 'none carried traffic'}", highlight=False, soft_wrap=True)
