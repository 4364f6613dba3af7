"""The `commaware` command line."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from . import _core
from .api import TRACE_FORMATS, Result, check_seed, load_platform, load_trace, simulate
from .cli_cosched import cosched_group, workload_group
from .cli_interference import interference
from .cli_measure import measure
from .cli_sharing import calibrate, param_option, penalties_cmd
from .cli_sweep import results_group, sweep_cmd
from .cli_taskfarm import taskfarm_cmd
from .cli_tiling import tiling_cmd
from .cli_trace import trace_group

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

    def __enter__(self) -> Console:  # rich's Live uses `with console:`
        return self.real().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self.real().__exit__(*exc)


def Table(*args: Any, **kwargs: Any) -> Any:  # noqa: N802 (rich's Table, imported on first use)
    from rich.table import Table as RichTable

    return RichTable(*args, **kwargs)


out = _LazyConsole(min_width=120)
err = _LazyConsole(stderr=True)

EXIT_BAD_INPUT = 2


def fail(message: str) -> None:
    """Print a bad-input error and exit with code 2 (nothing on stdout). The message is text:
    rich markup (`[tag]`) and emoji codes (`:x:`) in it are shown as written."""
    from rich.markup import escape

    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True, emoji=False)
    sys.exit(EXIT_BAD_INPUT)


def _seed_callback(ctx: click.Context, param: click.Parameter, value: int) -> int:
    """--seed: the API's check (0 <= seed < 2^64); a bad seed is one error line and exit 2."""
    try:
        return check_seed(value, source="--seed")
    except _core.OptionsError as exc:
        fail(str(exc))
        raise  # not reached: fail exits


def seed_option(help: str) -> Any:
    """The --seed option of every command (checked like the API's `seed`)."""
    return click.option("--seed", type=int, default=0, show_default=True, callback=_seed_callback,
                        help=f"{help} 0 to 2^64 - 1.".strip())


def print_result(result: Result, title: str) -> None:
    ranks = result.rank_columns  # plain lists: a summary needs no pandas
    n = len(ranks["rank"])
    out.print(f"[bold]{title}[/]  model={result.model}  makespan=[bold]{result.makespan:.6g} s[/]")
    table = Table(show_header=True, header_style="bold")
    # Under a penalty model (paper 004 §VI-A): each rank's mean penalty of the messages it sent.
    penalties = ranks.get("mean_penalty", [])
    with_penalty = any(p == p for p in penalties)
    for col in ("rank", "host", "end (s)", "compute (s)", "blocked (s)", *(["mean penalty"] if with_penalty else [])):
        table.add_column(col, justify="right")
    # Above 32 ranks, the 16 that finish last (first ones on ties), in rank order.
    shown = range(n) if n <= 32 else sorted(sorted(range(n), key=lambda i: -ranks["end"][i])[:16])
    for i in shown:
        extra = [f"{penalties[i]:.4g}" if penalties[i] == penalties[i] else "-"] if with_penalty else []
        table.add_row(str(ranks["rank"][i]), ranks["host"][i], f"{ranks['end'][i]:.6g}",
                      f"{ranks['compute_seconds'][i]:.6g}", f"{ranks['blocked_seconds'][i]:.6g}", *extra)
    out.print(table)
    if n > 32:
        out.print(f"({n} ranks; the 16 that finish last are shown)")
    stats = result.message_stats
    if stats["count"]:
        out.print(
            f"{stats['count']} messages, {stats['bytes']:.6g} bytes; "
            f"duration mean {stats['mean_seconds']:.6g} s, max {stats['max_seconds']:.6g} s"
        )


class ProgressLine:
    """Progress of a long replay on stderr: simulated time, events per second, elapsed time.

    Shown only on a terminal, and only once the replay has run for `delay` seconds. Called
    by the core a few times per second (which also lets Ctrl-C stop the replay).
    """

    def __init__(self, enabled: bool, delay: float = 1.0) -> None:
        self.enabled = enabled and err.is_terminal
        self.delay = delay
        self._progress: Any = None
        self._task: Any = None

    def __call__(self, now: float, events: int, messages: int, ranks_done: int, ranks: int, elapsed: float) -> None:
        if not self.enabled or elapsed < self.delay:
            return
        if self._progress is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("simulating"), BarColumn(), MofNCompleteColumn(), TextColumn("ranks done"),
                                      TextColumn("{task.description}"), TimeElapsedColumn(), console=err.real(), transient=True)
            self._progress.start()
            self._task = self._progress.add_task("", total=ranks)
        rate = events / elapsed if elapsed > 0 else 0.0
        self._progress.update(self._task, completed=ranks_done,
                              description=f"t={now:.6g} s  {rate:,.0f} events/s  {messages:,} messages")

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


class _Main(click.Group):
    """The top-level group: a caught Rust panic (InternalError) is one line and exit 1, not a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _core.InternalError as exc:
            from rich.markup import escape

            err.print(f"[bold red]internal error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True, emoji=False)
            sys.exit(1)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_core.__version__, prog_name="commaware")
def main() -> None:
    """Predict how long communicating work takes on a cluster, and which schedule is best."""


@main.command("simulate")
@click.argument("platform", type=click.Path(dir_okay=False))
@click.argument("trace", type=click.Path())
@click.option("--format", "trace_format", type=click.Choice(TRACE_FORMATS), default="auto", show_default=True,
              help="Trace format: our JSON/TOML, or ti (SimGrid time-independent: a shared file, an index of "
              "per-rank files, or a directory; .gz/.xz read). auto: ti for a directory or a RANK ACTION first line.")
@click.option("--model", default=None, help=f"Sharing model (default: the platform's). Known: {', '.join(_core.sharing_models())}.")
@click.option("--placement", type=click.Choice(_core.placements()), default="explicit", show_default=True,
              help="Ranks onto hosts: the trace's list (else rank i on host i), round-robin per node, fill nodes first, or random.")
@seed_option("Seed of the random placement.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (model, messages, makespan, message_stats, "
              "ranks), streamed: messages in the order their last byte arrived.")
@click.option("--messages", "messages_file", type=click.Path(dir_okay=False), default=None,
              help="Write the per-message table to FILE.parquet or FILE.csv while the replay runs.")
@click.option("--gantt", type=click.Path(dir_okay=False), default=None, help="Draw ranks against time to FILE.svg or FILE.png.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line on stderr.")
@param_option("Sharing-model parameter over the platform's and the model's defaults (repeatable), e.g. beta=0.8.")
@click.option("--calibration", type=click.Path(dir_okay=False), default=None,
              help="The JSON of `commaware calibrate penalty --json`: its family is the model (unless --model) "
              "and its parameters come before any --param.")
@click.option("--measured", type=click.Path(dir_okay=False), default=None,
              help="CSV of measured message times (measured_s, and message or src,dst,seq): add the accuracy of "
              "paper 004 §VI-B (E_rel per message, E_abs of the graph and per task).")
@click.option("--coll", default=None, metavar="SPEC",
              help="Collective algorithms over the platform's network.collectives: a preset (mpich, ompi) and/or "
              "collective=algorithm entries, e.g. 'bcast=scatter_lr_allgather,allreduce=rab_rdb' (docs/formats.md lists them).")
def simulate_cmd(platform: str, trace: str, trace_format: str, model: str | None, placement: str, seed: int, as_json: bool,
                 messages_file: str | None, gantt: str | None, quiet: bool, params: list[tuple[str, float]],
                 calibration: str | None, measured: str | None, coll: str | None) -> None:
    """Replay TRACE (MPI-style ops per rank) on PLATFORM (hosts and network).

    Without --json, --messages or --gantt nothing per message is kept: memory follows the
    messages in flight, not the messages sent.

    \b
    Examples:
      commaware simulate examples/cluster16.json examples/ring.json
      commaware simulate examples/cluster16.json examples/ring.json --json
      commaware simulate examples/cluster16.json examples/alltoall.json --messages msgs.parquet
      commaware simulate examples/cluster16.json examples/master_worker.json --model gige --param beta=0.8
      commaware simulate examples/cluster16.json examples/master_worker.json --calibration fit.json
      commaware simulate examples/cluster16.json run.ti --format ti
      commaware simulate examples/cluster16.json examples/alltoall.json --coll mpich
    """
    from .output import MESSAGE_FORMATS, MessageFile, deliver

    if gantt and Path(gantt).suffix.lower() not in (".svg", ".png"):
        fail(f"{gantt}: --gantt needs a .svg or .png file")
    if messages_file and Path(messages_file).suffix.lower() not in MESSAGE_FORMATS:
        fail(f"{messages_file}: --messages needs a .parquet or .csv file")
    if calibration:
        from .sharing import read_calibration

        try:
            family, fitted = read_calibration(calibration)
        except _core.InputError as exc:
            fail(str(exc))
        model = model or family
        params = [*fitted, *params]
    table = MessageFile(messages_file) if messages_file else None
    progress = ProgressLine(enabled=not quiet)
    results: list[Result] = []

    def run(json_path: Path | None) -> None:
        """The replay and every file it writes; `deliver` shows the JSON only if all succeeded."""
        try:
            result = simulate(load_platform(platform), load_trace(trace, format=trace_format), model=model, placement=placement, seed=seed,
                              record_messages=measured is not None, record_timeline=bool(gantt),
                              json_path=None if measured else json_path, on_messages=table,
                              on_progress=progress, params=params, coll=coll)
        finally:
            progress.close()
        if table is not None:
            table.close(result.host_names)
        if gantt:
            from .gantt import write_gantt

            write_gantt(result, gantt, title=f"{Path(trace).name} on {Path(platform).name}")
        results.append(result)

    measured_times = None
    try:
        if measured:
            from .sharing import read_measured_csv

            measured_times = read_measured_csv(measured)
        if as_json and not measured:
            deliver(run, None)
        else:
            run(None)
        if measured_times is not None:
            from .sharing import accuracy

            report = accuracy(results[0].messages, measured_times, str(measured))
    except _core.InputError as exc:
        fail(str(exc))
    except (_core.OutputError, OSError) as exc:
        fail(str(exc) if isinstance(exc, _core.OutputError) else f"{exc.filename or ''}: cannot write: {exc.strerror or exc}")
    finally:
        if table is not None:
            table.discard()
    for warning in results[0].warnings:
        err.print(f"[bold yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)
    if measured_times is not None and as_json:
        # The user asked for every measured message: the document is built in memory.
        click.echo(json.dumps({**results[0].to_dict(), "accuracy": report}))
        return
    if not as_json:
        print_result(results[0], f"{trace} on {platform}")
    if measured_times is not None:
        print_accuracy(report)


def print_accuracy(report: dict[str, Any]) -> None:
    """The §VI-B accuracy: E_rel per message, E_abs of the graph and per task."""
    table = Table(title="accuracy against measured times (paper 004 §VI-B)", title_justify="left", header_style="bold")
    for col in ("src→dst #", "measured (s)", "predicted (s)", "E_rel (%)", "penalty", "conflicts"):
        table.add_column(col, justify="left" if col in ("src→dst #", "conflicts") else "right")
    for m in report["messages"]:
        penalty = "-" if m["penalty"] is None else f"{m['penalty']:.3g}"
        table.add_row(f"{m['src']}→{m['dst']} #{m['seq']}", f"{m['measured_s']:.6g}", f"{m['predicted_s']:.6g}",
                      f"{m['e_rel_pct']:+.1f}", penalty, ", ".join(m["conflicts"] or []) or "-")
    out.print(table)
    tasks = ", ".join(f"{r}: {e:.1f}" for r, e in report["tasks"].items())
    out.print(f"E_abs = {report['e_abs_pct']:.2f} % over {len(report['messages'])} messages; per task (rank: %): {tasks}",
              highlight=False, soft_wrap=True)


def examples_dir() -> Path:
    """The repository's examples/ (the package is installed in development mode)."""
    for base in (Path(__file__).resolve().parents[2], Path.cwd()):
        if (base / "examples" / "cluster16.json").exists():
            return base / "examples"
    fail("cannot find the examples/ directory; pass --examples DIR")
    raise AssertionError("not reached")


DEMO_TRACES = [
    ("ring.json", "ring exchange, 16 ranks, 3 iterations"),
    ("alltoall.json", "all-to-all then allreduce, 16 ranks"),
    ("master_worker.json", "master-worker, 1 master + 15 workers"),
    ("bcast_barrier.json", "binomial bcast and barrier, 16 ranks"),
]


@main.command("demo")
@click.option("--examples", "examples", type=click.Path(file_okay=False, exists=True), default=None,
              help="Directory with cluster16.json and the example traces.")
@click.option("--json", "as_json", is_flag=True, help="Print the summaries as JSON.")
def demo_cmd(examples: str | None, as_json: bool) -> None:
    """Simulate the built-in examples on a 16-node cluster and summarise them."""
    folder = Path(examples) if examples else examples_dir()
    needed = ["cluster16.json", *(name for name, _ in DEMO_TRACES)]
    missing = [name for name in needed if not (folder / name).is_file()]
    if missing:
        fail(f"{folder}: missing {', '.join(missing)} (--examples DIR needs {', '.join(needed)})")
    rows = []
    try:
        platform = load_platform(folder / "cluster16.json")
        for name, what in DEMO_TRACES:
            for placement in ("explicit", "rrn", "rrp"):
                res = simulate(platform, folder / name, placement=placement, record_messages=False,
                               record_timeline=False)
                stats = res.message_stats
                rows.append({
                    "trace": name, "what": what, "placement": placement, "makespan": res.makespan,
                    "messages": int(stats["count"]), "bytes": float(stats["bytes"]),
                    "mean_message_seconds": float(stats["mean_seconds"]) if stats["count"] else 0.0,
                })
    except _core.InputError as exc:
        fail(str(exc))
    if as_json:
        click.echo(json.dumps({"platform": str(folder / "cluster16.json"), "runs": rows}, indent=2))
        return
    out.print(f"[bold]commaware demo[/]: the examples on {folder / 'cluster16.json'} "
              f"(16 dual-core nodes, 1 Gb/s NICs, max-min sharing)")
    for name, what in DEMO_TRACES:
        out.print(f"  {name}: {what}")
    table = Table(header_style="bold")
    for col in ("trace", "placement", "makespan s", "msgs", "MiB", "mean msg ms"):
        table.add_column(col, no_wrap=True)
    for r in rows:
        table.add_row(r["trace"], r["placement"], f"{r['makespan']:.6g}", str(r["messages"]),
                      f"{r['bytes'] / 2**20:.2f}", f"{1e3 * r['mean_message_seconds']:.4g}")
    out.print(table)
    out.print("rrn deals one rank per node here (as explicit); rrp fills both cores of a node first, so "
              "neighbouring ranks share a node and part of the traffic uses memory bandwidth, not the NIC.")


class ReproduceProgress:
    """`reproduce`'s progress on stderr: which check runs (k of n) and how far it is.

    rich, transient; made only on a terminal and without --quiet. reproduce.run calls `start`
    for each check, and a long check reports its own work through `advance`."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(TextColumn("{task.fields[check]}"), BarColumn(bar_width=16), MofNCompleteColumn(),
                                  TextColumn("{task.description}"), TimeElapsedColumn(),
                                  console=err.real(), transient=True)
        self._task: Any = None

    def __enter__(self) -> ReproduceProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._progress.stop()

    def start(self, index: int, count: int, job: Any) -> None:
        if self._task is not None:
            self._progress.remove_task(self._task)
        self._task = self._progress.add_task("", total=None, check=f"[{index + 1}/{count}] {job.paper} {job.label}")

    def advance(self, done: int, total: int, detail: str) -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=done, total=total, description=detail)


STATUS_STYLE = {"pass": "[green]pass[/]", "fail": "[red]FAIL[/]", "not_reproduced": "[yellow]not reproduced[/]"}


@main.command("reproduce")
@click.argument("paper")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Write DIR/report.html (self-contained: every figure and table), checks.json and figures/.")
@click.option("--quick", is_flag=True, help="Smaller samples where a check samples (paper 003: 20 random "
              "configurations per point instead of 100); the same statuses, about a minute for all.")
@click.option("--force", is_flag=True, help="Replace --out DIR if it exists and is not empty.")
@click.option("--json", "as_json", is_flag=True, help='Print {"checks": [...]}, each with its status and note.')
@click.option("--plots", type=click.Path(file_okay=False), default=None,
              help="Also write the papers' figures into DIR (without the report).")
@click.option("--quiet", "-q", is_flag=True, help="No progress display on stderr.")
def reproduce_cmd(paper: str, out_dir: str | None, quick: bool, force: bool, as_json: bool, plots: str | None,
                  quiet: bool) -> None:
    """Run the reproduction checks of PAPER (000-004) or all.

    Each check's status is pass, fail (ours disagrees and our code is suspect) or
    not_reproduced (a faithful implementation does not give the paper's claim; the note says
    what was assumed, what was tried and the likely cause). Exit 1 only if a check fails.

    \b
      commaware reproduce all --quick --out report    # report/report.html, about a minute
      commaware reproduce 004 --json
    """
    from .reproduce import html_report as report
    from .reproduce import runner as reproduce

    if paper != "all" and paper not in reproduce.PAPERS:
        fail(f"unknown paper `{paper}` (known: {', '.join(reproduce.PAPERS)}, all)")
    papers = list(reproduce.PAPERS) if paper == "all" else [paper]
    if out_dir is not None:
        try:
            report.check_out_dir(Path(out_dir), force)
        except report.ReportError as exc:
            fail(str(exc))

    show = not quiet and err.is_terminal
    written: Path | None = None
    try:
        with ReproduceProgress() if show else contextlib.nullcontext() as progress:
            checks = reproduce.run(papers, progress=progress, quick=quick)
            if plots:
                figures = reproduce.plot(papers, Path(plots), progress=progress, quick=quick)
                err.print(f"wrote {len(figures)} plot(s) into {plots}")
            if out_dir is not None:
                written = report.write(papers, checks, out_dir, force=force, quick=quick, progress=progress)
    except _core.InputError as exc:
        fail(str(exc))
    except (report.ReportError, OSError) as exc:
        fail(f"{out_dir or plots}: cannot write the report: {exc}")
    counts = reproduce.counts(checks)
    if as_json:
        click.echo(json.dumps({"checks": [c.to_dict() for c in checks]}, indent=2))
    elif not checks:
        out.print(f"no reproduction checks are registered yet for: {', '.join(papers)}")
    else:
        table = Table(header_style="bold")
        for col, width in (("paper", 5), ("figure or table", 24), ("claim", 38), ("paper value", 20),
                           ("ours", 20), ("tol", 6), ("status", 16)):
            table.add_column(col, max_width=width, overflow="ellipsis", no_wrap=True)
        for c in checks:
            table.add_row(c.paper, c.figure, c.name, str(c.paper_value), str(c.ours), str(c.tolerance),
                          STATUS_STYLE[c.status])
        out.print(table)
        out.print(f"{len(checks)} checks: {counts['pass']} pass, {counts['fail']} fail, "
                  f"{counts['not_reproduced']} not reproduced; --json shows each check's note.")
    if written is not None:
        err.print(f"report: {written} (open it in a browser; self-contained)", highlight=False)
    sys.exit(reproduce.exit_code(checks))


class _DefaultCommandGroup(click.Group):
    """A group whose first argument, when it names no subcommand, goes to `default_command`."""

    default_command = "schedule"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@main.group("multicast", cls=_DefaultCommandGroup)
def multicast_group() -> None:
    """Multiple multicast on heterogeneous networks (paper 003).

    \b
      commaware multicast INSTANCE.json --algorithm ecfp [--json] [--gantt FILE]
      commaware multicast generate --nodes 16 --pattern all_to_all > inst.json
    """


@multicast_group.command("schedule")
@click.argument("instance", type=click.Path(dir_okay=False))
@click.option("--algorithm", "-a", type=click.Choice(_core.multicast_algorithms()), default="ecf", show_default=True)
@seed_option("Seed of RRS and RRSP.")
@click.option("--json", "as_json", is_flag=True, help="Print the schedule as JSON.")
@click.option("--summary", is_flag=True, help="Only algorithm, completion time, lower bound and scheduling time "
              "(a table; JSON with --json).")
@click.option("--execute", "model", default=None, help="Also replay the schedule on the engine with this sharing model "
              "(contention_free reproduces the scheduler; maxmin shows contention).")
@click.option("--gantt", type=click.Path(dir_okay=False), default=None,
              help="Draw the engine's replay (contention-free) to FILE.svg or FILE.png.")
def multicast_schedule_cmd(instance: str, algorithm: str, seed: int, as_json: bool, summary: bool,
                           model: str | None, gantt: str | None) -> None:
    """Schedule the multicasts of INSTANCE and print the schedule and its lower bound."""
    from . import multicast

    if gantt and Path(gantt).suffix.lower() not in (".svg", ".png"):
        fail(f"{gantt}: --gantt needs a .svg or .png file")
    try:
        inst = multicast.load_instance(instance)
        sched = multicast.schedule(inst, algorithm, seed=seed)
        replay = multicast.execute(inst, sched, model) if model else None
        drawn = multicast.execute(inst, sched) if gantt else None
    except _core.InputError as exc:
        fail(str(exc))
    if drawn is not None:
        from .gantt import write_gantt

        try:
            write_gantt(drawn, gantt, title=f"{algorithm} on {Path(instance).name}: {sched.completion_time:.6g} s")
        except OSError as exc:
            fail(f"{gantt}: cannot write: {exc.strerror or exc}")
    if as_json:
        from .output import deliver

        execution = (model, replay.makespan) if replay is not None else None
        try:
            deliver(lambda path: sched.write_json(path, summary=summary, execution=execution), None)
        except (_core.OutputError, OSError) as exc:
            fail(str(exc))
        return
    if summary:
        table = Table(header_style="bold")
        for col in ("algorithm", "completion (s)", "lower bound (s)", "ratio", "scheduling (ms)"):
            table.add_column(col, justify="right")
        ratio = f"{sched.completion_time / sched.lower_bound:.3f}" if sched.lower_bound > 0 else "-"
        row = [sched.algorithm, f"{sched.completion_time:.6g}", f"{sched.lower_bound:.6g}", ratio,
               f"{1e3 * sched.scheduling_seconds:.3g}"]
        if replay is not None:
            table.add_column(f"{model} makespan (s)", justify="right")
            row.append(f"{replay.makespan:.6g}")
        table.add_row(*row)
        out.print(table)
        return
    out.print(f"[bold]{algorithm}[/] on {instance}: completion [bold]{sched.completion_time:.6g} s[/], "
              f"lower bound {sched.lower_bound:.6g} s (ratio {sched.completion_time / sched.lower_bound:.3f}), "
              f"scheduled in {1e3 * sched.scheduling_seconds:.3g} ms" if sched.lower_bound > 0 else
              f"[bold]{algorithm}[/]: completion {sched.completion_time:.6g} s")
    table = Table(header_style="bold")
    for col in ("step", "sender", "receiver", "source", "complete (s)"):
        table.add_column(col, justify="right")
    for k, (sender, receiver, source, complete) in enumerate(sched.head(40)):
        table.add_row(str(k), str(sender), str(receiver), str(source), f"{complete:.6g}")
    out.print(table)
    if sched.n_selections > 40:
        out.print(f"(first 40 of {sched.n_selections} selections; --json prints all)")
    if replay is not None:
        out.print(f"replayed on the engine with {model}: makespan {replay.makespan:.6g} s")


@multicast_group.command("generate")
@click.option("--nodes", type=int, default=16, show_default=True)
@click.option("--pattern", type=click.Choice(["broadcast", "all_to_all", "random"]), default="all_to_all", show_default=True)
@click.option("--sizes", type=click.Choice(["small", "large", "mixed"]), default="small", show_default=True,
              help="small = 1 KiB, large = 1 or 1.5 MiB, mixed = either (paper 003 §7).")
@click.option("--network", type=click.Choice(["fast", "slow", "mixed"]), default="fast", show_default=True,
              help="fast = 1 Gb/s, slow = 155 Mb/s on every link; mixed = each pair's link one or the other "
                   "at random.")
@click.option("--sources", type=int, default=None, help="random pattern: number of sources (default nodes/4).")
@click.option("--destinations", type=int, default=None, help="random pattern: destinations per source (default random).")
@click.option("--source", type=int, default=None, help="broadcast pattern: the source (default random).")
@seed_option("Seed of the random draws.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None, help="Write to FILE instead of stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line on stderr.")
def multicast_generate_cmd(nodes: int, pattern: str, sizes: str, network: str, sources: int | None,
                           destinations: int | None, source: int | None, seed: int, output: str | None,
                           quiet: bool) -> None:
    """Make a random instance with the distributions of paper 003 §7 (seeded)."""
    from contextlib import nullcontext

    from . import multicast
    from .output import deliver

    # Thousands of nodes take seconds (mostly the JSON text): say so on a terminal.
    status = err.real().status(f"generating {nodes} nodes ({pattern})") if err.is_terminal and not quiet else nullcontext()
    try:
        with status:
            inst = multicast.generate(nodes, pattern, sizes, network, sources=sources, destinations=destinations,
                                      source=source, seed=seed)
            deliver(inst.write_json, output)
    except _core.InputError as exc:
        fail(str(exc))
    except (_core.OutputError, OSError) as exc:
        fail(str(exc) if isinstance(exc, _core.OutputError) else f"{output}: cannot write: {exc.strerror or exc}")


@main.command("schema")
@click.argument("what", type=click.Choice(["platform", "trace", "multicast", "scheme", "workload", "sweep"]))
def schema_cmd(what: str) -> None:
    """Print the JSON Schema of the platform, trace, multicast instance, communication scheme, job workload or
    sweep spec format."""
    if what == "sweep":
        from .experiments.sweep import spec_schema

        click.echo(json.dumps(spec_schema(), indent=2, ensure_ascii=False))
        return
    schemas = {"platform": _core.platform_schema, "trace": _core.trace_schema, "multicast": _core.multicast_schema,
               "scheme": _core.scheme_schema, "workload": _core.workload_schema}
    click.echo(schemas[what]())


# Paper 004: penalties of schemes, calibration, real measurement.
main.add_command(penalties_cmd)
main.add_command(calibrate)
main.add_command(measure)
# Paper 000: interference fits and models, task farming.
main.add_command(interference)
main.add_command(taskfarm_cmd)
main.add_command(tiling_cmd)
# Paper 002: cluster job scheduling.
main.add_command(workload_group)
main.add_command(cosched_group)
main.add_command(trace_group)
# Experiments at scale: parameter sweeps and their results store.
main.add_command(sweep_cmd)
main.add_command(results_group)


if __name__ == "__main__":
    main()
