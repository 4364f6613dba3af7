"""`commaware simulate` (replay a trace on a platform) and `commaware demo` (the examples)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from .. import _core
from ..api import (MESSAGE_FORMATS, TRACE_FORMATS, MessageFile, Result, drop_timeline, keep_timeline, load_platform,
                   load_trace, simulate)
from .common import (Progress, Table, derived_datatype_option, err, fail, failing, goal_calc_unit_option, out, param_option, plain_lines,
                     print_busiest_links, routing_options, seed_option, traced_speed_option, in_place_option, warn_derived_datatypes,
                     warn_reading)


def print_result(result: Result, title: str) -> None:
    ranks = result.rank_columns  # plain lists: a summary needs no pandas
    n = len(ranks["rank"])
    header = f"{title}  model={result.model}  makespan={result.makespan:.6g} s"
    # Under a penalty model (paper 004 §VI-A): each rank's mean penalty of the messages it sent.
    penalties = ranks.get("mean_penalty", [])
    with_penalty = any(p == p for p in penalties)
    columns = ["rank", "host", "end (s)", "compute (s)", "blocked (s)", *(["mean penalty"] if with_penalty else [])]
    # Above 32 ranks, the 16 that finish last (first ones on ties), in rank order.
    shown = range(n) if n <= 32 else sorted(sorted(range(n), key=lambda i: -ranks["end"][i])[:16])
    rows = []
    for i in shown:
        extra = [f"{penalties[i]:.4g}" if penalties[i] == penalties[i] else "-"] if with_penalty else []
        rows.append([str(ranks["rank"][i]), ranks["host"][i], f"{ranks['end'][i]:.6g}",
                     f"{ranks['compute_seconds'][i]:.6g}", f"{ranks['blocked_seconds'][i]:.6g}", *extra])
    footer = [f"({n} ranks; the 16 that finish last are shown)"] if n > 32 else []
    stats = result.message_stats
    if stats["count"]:
        footer.append(f"{stats['count']} messages, {stats['bytes']:.6g} bytes; "
                      f"duration mean {stats['mean_seconds']:.6g} s, max {stats['max_seconds']:.6g} s")
    plain = plain_lines(header, columns, rows, footer)
    if plain is not None:  # the same bytes as below, without importing rich
        sys.stdout.write("".join(line + "\n" for line in plain))
        return
    out.print(f"[bold]{title}[/]  model={result.model}  makespan=[bold]{result.makespan:.6g} s[/]")
    table = Table(show_header=True, header_style="bold")
    for col in columns:
        table.add_column(col, justify="right")
    for row in rows:
        table.add_row(*row)
    out.print(table)
    for line in footer:
        out.print(line)


class ProgressLine(Progress):
    """Progress of a long replay on stderr (the commands' `Progress`): ranks done, simulated time,
    events per second. The bar shows once the replay has run for its `delay`. Called by the core
    a few times per second (which also lets Ctrl-C stop the replay)."""

    def __call__(self, now: float, events: int, messages: int, ranks_done: int, ranks: int, elapsed: float) -> None:
        rate = events / elapsed if elapsed > 0 else 0.0
        self.update(ranks_done, ranks, f"t={now:.6g} s  {rate:,.0f} events/s  {messages:,} messages")


@click.command("simulate")
@click.argument("platform", type=click.Path(dir_okay=False))
@click.argument("trace", type=click.Path())
@click.option("--format", "trace_format", type=click.Choice(TRACE_FORMATS), default="auto", show_default=True,
              help="Trace format: our JSON/TOML, or ti (SimGrid time-independent: a shared file, an index of "
              "per-rank files, or a directory; .gz/.xz read), otf2 (Score-P's OTF2: the anchor file), dumpi (sst-dumpi: "
              "the .meta file, or its folder), or goal (LogGOPSim's GOAL text: a graph per rank, each op started once "
              "its dependencies are met). auto: dumpi for a DUMPI "
              ".meta or a folder with one, ti for another directory or a RANK ACTION first line, otf2 for a *.otf2 anchor, "
              "goal for a *.goal file or a num_ranks first line.")
@goal_calc_unit_option
@derived_datatype_option
@traced_speed_option
@in_place_option
@click.option("--model", default=None, help=f"Sharing model (default: the platform's). Known: {', '.join(_core.sharing_models())}; "
              "or loggp: LogGOPSim's LogGP model, each rank its own host, its parameters (L, o, g, G, O in seconds, "
              "S in bytes) by --param over LogGOPSim's defaults (docs/traces.md, \"GOAL\").")
@click.option("--placement", type=click.Choice(_core.placements()), default="explicit", show_default=True,
              help="Ranks onto hosts: the trace's list (else rank i on host i), round-robin per node, fill nodes first, or random.")
@click.option("--hostfile", type=click.Path(dir_okay=False), default=None,
              help="SMPI's hostfile: one host name a line, NAME:SLOTS for several ranks (1 by default), blank lines "
              "and # comments skipped; rank i runs on the i-th slot in file order (instead of --placement).")
@seed_option("Seed of the random placement.")
@routing_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (model, messages, makespan, message_stats, "
              "ranks), streamed: messages in the order their last byte arrived.")
@click.option("--messages", "messages_file", type=click.Path(dir_okay=False), default=None,
              help="Write the per-message table to FILE.parquet or FILE.csv while the replay runs.")
@click.option("--gantt", type=click.Path(dir_okay=False), default=None, help="Draw ranks against time to FILE.svg or FILE.png.")
@click.option("--links", "links_file", type=click.Path(dir_okay=False), default=None,
              help="Write one row per link (name, bandwidth, bytes, busy_time, mean_utilisation, peak_utilisation, "
              "peak_flows) to FILE.parquet or FILE.csv; with --json, the document then lists the ten most utilised "
              "links (docs/topologies.md, \"Which link is the bottleneck\").")
@click.option("--link-plot", type=click.Path(dir_okay=False), default=None,
              help="Draw the utilisation against time of the most loaded links to FILE.svg or FILE.png (a line per "
              "link up to 8 links that carried traffic, else a heat map); with --json, as --links.")
@click.option("--timeline", type=click.Path(dir_okay=False), default=None,
              help="Write the run's timeline (each rank's MPI operations and every message) for timeline viewers, "
              "streamed: .paje or .trace is SimGrid's Paje (ViTE, pajeng), .otf2 an OTF2 archive (Vampir; also "
              "FILE.def and the folder FILE beside it), .perfetto-trace or .pftrace a Perfetto trace "
              "(ui.perfetto.dev, in a browser); docs/formats.md.")
@click.option("--timing", is_flag=True,
              help="Also report wall-clock speed: the trace's load and the replay's seconds, actions per second of "
              "each, and engine events per second (with --json, as \"timing\"; off by default so that the same "
              "inputs give the same bytes).")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr (a bar on a terminal after 1 s, else a line every 10 s).")
@param_option("Sharing-model parameter over the platform's and the model's defaults (repeatable), e.g. beta=0.8; "
              "maxmin on a topology takes cm02_weighting, tcp_gamma, weight_s, crosstraffic, and so do the "
              "penalty models there for the fabric (docs/sharing.md).")
@click.option("--calibration", type=click.Path(dir_okay=False), default=None,
              help="The JSON of `commaware calibrate penalty --json`: its family is the model (unless --model) "
              "and its parameters come before any --param.")
@click.option("--measured", type=click.Path(dir_okay=False), default=None,
              help="CSV of measured message times (measured_s, and message or src,dst,seq): add the accuracy of "
              "paper 004 §VI-B (E_rel per message, E_abs of the graph and per task).")
@click.option("--coll", default=None, metavar="SPEC",
              help="Collective algorithms over the platform's network.collectives: a preset (mpich, ompi, smpi: what smpirun runs with no collective option) and/or "
              "collective=algorithm entries, e.g. 'bcast=scatter_lr_allgather,allreduce=rab_rdb' or Open MPI's segmented 'bcast=ompi_pipeline,reduce=ompi_binary' (docs/formats.md lists them).")
@click.option("--smpi", default=None, metavar="PRESET",
              help="SMPI's timing model over the platform's network.smpi: simgrid-3.32 (smpirun's default "
              "configuration: SimGrid 3.32's factors and overheads, SMPI's protocol and default collectives, "
              "crosstraffic and weight-S on a topology), or none (docs/formats.md).")
def simulate_cmd(platform: str, trace: str, trace_format: str, goal_calc_unit: float, derived_datatype_bytes: float | None,
                 traced_speed: float | None, in_place: tuple[str, ...], model: str | None,
                 placement: str, hostfile: str | None, seed: int, as_json: bool, messages_file: str | None,
                 gantt: str | None, links_file: str | None, link_plot: str | None, timeline: str | None, timing: bool,
                 quiet: bool,
                 params: list[tuple[str, float]], calibration: str | None, measured: str | None, coll: str | None,
                 smpi: str | None, routing: str | None, routing_seed: int | None) -> None:
    """Replay TRACE (MPI-style ops per rank) on PLATFORM (hosts and network): a JSON or TOML
    platform, or a SimGrid platform file (.xml, version 4.1; docs/howto-simgrid.md).

    Without --json, --messages or --gantt nothing per message is kept: memory follows the
    messages in flight, not the messages sent.

    Inputs are read within limits: COMMAWARE_MAX_INPUT_BYTES (default 1G, once decompressed),
    COMMAWARE_MAX_LINE_BYTES (16M a line), 80 levels of nesting (docs/formats.md).

    \b
    Examples:
      commaware simulate examples/cluster16.json examples/ring.json
      commaware simulate examples/cluster16.json examples/ring.json --json
      commaware simulate fattree.xml run.ti --format ti --hostfile hosts.txt
      commaware simulate examples/cluster16.json examples/alltoall.json --messages msgs.parquet
      commaware simulate examples/cluster16.json examples/alltoall.json --timeline run.paje
      commaware simulate examples/cluster16.json examples/alltoall.json --links links.csv --link-plot links.svg
      commaware simulate examples/cluster16.json examples/master_worker.json --model gige --param beta=0.8
      commaware simulate examples/cluster16.json examples/master_worker.json --calibration fit.json
      commaware simulate examples/cluster16.json run.ti --format ti
      commaware simulate examples/cluster16.json examples/alltoall.json --coll mpich
      commaware simulate examples/cluster16.json run.ti --format ti --smpi simgrid-3.32
      commaware simulate examples/routing/dragonfly50.json examples/routing/shift.json --routing ugal-g
    """
    from ..links import check_plot_path, check_table_path
    from ..output import deliver, partial_path

    if model == "loggp":
        given = {"--messages": messages_file, "--gantt": gantt, "--links": links_file, "--link-plot": link_plot,
                 "--timeline": timeline, "--measured": measured, "--calibration": calibration, "--timing": timing,
                 "--routing": routing, "--routing-seed": routing_seed is not None}
        unsupported = [name for name, value in given.items() if value]
        if unsupported:
            fail(f"--model loggp: {', '.join(unsupported)} not available (it gives each rank's end time)")
        return simulate_loggp_cmd(platform, trace, trace_format, goal_calc_unit, params, placement,
                                  hostfile, seed, coll, smpi, traced_speed, as_json)

    if gantt and Path(gantt).suffix.lower() not in (".svg", ".png"):
        fail(f"{gantt}: --gantt needs a .svg or .png file")
    if messages_file and Path(messages_file).suffix.lower() not in MESSAGE_FORMATS:
        fail(f"{messages_file}: --messages needs a .parquet or .csv file")
    for reason in (links_file and check_table_path(links_file), link_plot and check_plot_path(link_plot)):
        if reason:
            fail(reason)
    if timeline and Path(timeline).suffix.lower() not in _core.timeline_extensions():
        fail(f"{timeline}: --timeline needs a {' or '.join(_core.timeline_extensions())} file")
    if calibration:
        from ..sharing import read_calibration

        with failing():
            family, fitted = read_calibration(calibration)
        model = model or family
        params = [*fitted, *params]
    table = MessageFile(messages_file) if messages_file else None
    results: list[Result] = []

    def run(json_path: Path | None) -> None:
        """The replay and every file it writes; `deliver` shows the JSON only if all succeeded."""
        with ProgressLine("simulate", quiet=quiet, plain=as_json, unit="ranks done", delay=1.0) as progress:
            hosts = load_platform(platform)  # the platform's errors first
            loaded = load_trace(trace, format=trace_format, derived_datatype_bytes=derived_datatype_bytes,
                                traced_speed=traced_speed, in_place=in_place, goal_calc_unit=goal_calc_unit)
            loaded_traces.append(loaded)
            result = simulate(hosts, loaded, model=model, placement=placement, seed=seed,
                              record_messages=measured is not None, record_timeline=bool(gantt),
                              json_path=None if measured else json_path, on_messages=table,
                              on_progress=progress, params=params, coll=coll, smpi=smpi,
                              timeline=partial_path(Path(timeline)) if timeline else None, timeline_as=timeline,
                              link_stats=bool(links_file or link_plot), hostfile=hostfile, timing=timing,
                              routing=routing, routing_seed=routing_seed)
            load_seconds.append(loaded.load_seconds)
        if measured_times is not None:  # before any output is kept: a bad measurement leaves none
            from ..sharing import accuracy

            reports.append(accuracy(result.messages, measured_times, str(measured)))
        if table is not None:
            table.close(result.host_names)
        if timeline:
            keep_timeline(partial_path(Path(timeline)), timeline)  # the command's delivery owns it now
            kept_timeline.append(True)
        if gantt:
            from ..gantt import write_gantt

            write_gantt(result, gantt, title=f"{Path(trace).name} on {Path(platform).name}")
        if link_plot:
            from ..links import write_link_plot

            write_link_plot(result, link_plot, title=f"{Path(trace).name} on {Path(platform).name}")
        if links_file:
            from ..links import write_link_table

            write_link_table(result, links_file)
        results.append(result)

    measured_times = None
    reports: list[dict[str, Any]] = []
    loaded_traces: list[Any] = []
    load_seconds: list[float] = []
    kept_timeline: list[bool] = []
    try:
        with failing(writing="", named_by_error=True):
            if measured:
                from ..sharing import read_measured_csv

                measured_times = read_measured_csv(measured)
            if as_json and not measured:
                deliver(run, None)
            else:
                run(None)
    finally:
        if table is not None:
            table.discard()
        if timeline and not kept_timeline:
            drop_timeline(partial_path(Path(timeline)), timeline)
    for warning in results[0].warnings:
        err.print(f"[bold yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)
    warn_derived_datatypes(results[0].derived_datatype_ops, derived_datatype_bytes)
    if loaded_traces:
        warn_reading(loaded_traces[0])
    if reports and as_json:
        # The user asked for every measured message: the document is built in memory.
        document = results[0].to_dict(load_seconds[0] if timing else None)
        click.echo(json.dumps({**document, "accuracy": reports[0]}))
        return
    if not as_json:
        print_result(results[0], f"{trace} on {platform}")
        if links_file or link_plot:
            print_busiest_links(results[0])
        if timing:
            print_timing(results[0], load_seconds[0])
    if reports:
        print_accuracy(reports[0])


def simulate_loggp_cmd(platform: str, trace: str, trace_format: str, unit: float, params: list[tuple[str, float]],
                       placement: str, hostfile: str | None, seed: int, coll: str | None, smpi: str | None,
                       traced_speed: float | None, as_json: bool) -> None:
    """`simulate --model loggp`: a GOAL schedule as it is, another trace made one as a replay on
    PLATFORM would run it (docs/traces.md, "GOAL")."""
    from ..goal import simulate_loggp

    with failing():
        hosts = load_platform(platform)  # its errors first, as for the other models
        result = simulate_loggp(trace, params=params, unit=unit, trace_format=trace_format, platform=hosts,
                                placement=placement, hostfile=hostfile, seed=seed, coll=coll, smpi=smpi,
                                traced_speed=traced_speed)
    if as_json:
        click.echo(json.dumps(result.to_dict()))
        return
    p = result.params_units
    out.print(f"[bold]{trace}[/]  model=loggp  makespan=[bold]{result.makespan:.6g} s[/]  "
              f"(L={p['L']} o={p['o']} g={p['g']} G={p['G']} O={p['O']} units of {unit:g} s, S={p['S']} B; "
              f"{result.events:,} events)", highlight=False, soft_wrap=True)
    ends = result.ends_units
    shown = range(len(ends)) if len(ends) <= 32 else sorted(sorted(range(len(ends)), key=lambda i: -ends[i])[:16])
    table = Table(show_header=True, header_style="bold")
    for col in ("rank", "end (s)", "end (units)"):
        table.add_column(col, justify="right")
    for i in shown:
        table.add_row(str(i), f"{ends[i] * unit:.6g}", str(ends[i]))
    out.print(table)
    if len(ends) > 32:
        out.print(f"({len(ends)} ranks; the 16 that finish last are shown)")


def print_timing(result: Result, load_seconds: float) -> None:
    """One line: the load and the replay, in wall seconds and actions (or events) per second."""
    def rate(count: int, seconds: float) -> str:
        return f"{count / seconds:,.0f}" if seconds > 0 else "-"

    out.print(f"timing: loaded {result.actions:,} actions in {load_seconds:.3f} s ({rate(result.actions, load_seconds)} "
              f"actions/s); replayed in {result.replay_seconds:.3f} s ({rate(result.actions, result.replay_seconds)} "
              f"actions/s, {rate(result.events, result.replay_seconds)} events/s)", highlight=False, soft_wrap=True)


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
    for base in (Path(__file__).resolve().parents[3], Path.cwd()):
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


@click.command("demo")
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
    with failing():
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
    if as_json:
        click.echo(json.dumps({"platform": str(folder / "cluster16.json"), "runs": rows}, indent=2))
        return
    out.print(f"[bold]commaware demo[/]: the examples on {folder / 'cluster16.json'} "
              f"(16 dual-core nodes, 1 Gb/s NICs, max-min sharing)")
    for name, what in DEMO_TRACES:
        out.print(f"  {name}: {what}")
    table = Table(header_style="bold")
    for col in ("trace", "placement", "makespan s", "msgs", "MiB", "mean msg ms"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["trace"], r["placement"], f"{r['makespan']:.6g}", str(r["messages"]),
                      f"{r['bytes'] / 2**20:.2f}", f"{1e3 * r['mean_message_seconds']:.4g}")
    out.print(table)
    out.print("rrn deals one rank per node here (as explicit); rrp fills both cores of a node first, so "
              "neighbouring ranks share a node and part of the traffic uses memory bandwidth, not the NIC.")
