"""`commaware tiling` (paper 001); see `commaware.tiling`."""

from __future__ import annotations

import json
from typing import Any, Optional

import click

from .common import Progress, Table, fail, failing, out, param_option

#: How often (s) a simulated program updates the progress detail (the progress itself prints
#: on its own schedule: a bar on a terminal, else a line every 10 s).
PROGRESS_EVERY_S = 1.0


#: The options geometry mode (--deps, --h, --tile) does not read: given there, they are an error.
GEOMETRY_UNUSED = ("procs", "tile_height", "sweep_z", "platform", "model", "params", "t_c", "sci", "t_start_dma",
                   "t_sci_interrupt", "no_simulate", "plot")


def _given(ctx: click.Context, names: tuple[str, ...]) -> list[str]:
    """The options among `names` given on the command line (not left at their defaults), as
    spelt there (`--t-c`), in the command's order."""
    from click.core import ParameterSource

    return [p.opts[0] for p in ctx.command.params
            if p.name in names and ctx.get_parameter_source(p.name) not in (None, ParameterSource.DEFAULT)]


@click.command("tiling")
@click.option("--space", required=True, metavar="DIMS", help="Iteration space, e.g. 16x16x16384 (K = 2^10, M = 2^20: 12x12x512K).")
@click.option("--procs", metavar="DIMS", help="Processor grid over the dimensions other than the mapping one, e.g. 4x4.")
@click.option("--tile-height", type=int, default=None, help="Tile height z along the mapping dimension (must divide it).")
@click.option("--sweep-z", is_flag=True, help="Every z dividing the mapping dimension up to DIMZ / max p, with the best z per column.")
@click.option("--mapping", type=int, default=None, help="Mapping dimension, 1-based (default: the largest).")
@click.option("--platform", type=click.Path(dir_okay=False), default=None,
              help="Platform for the simulation and the network of the formulas (default: 100 Mb/s FastEthernet, 100 µs latency, one host per processor).")
@click.option("--model", default=None, help="Sharing model for the simulation (default: the platform's).")
@param_option("Sharing-model parameter NAME=VALUE (repeatable), as for `commaware simulate`.")
@click.option("--t-c", "t_c", type=float, default=None, help="Computation time of one iteration point in s (default 0.3e-6, or 150 cycles at 800 MHz with --sci).")
@click.option("--sci", is_flag=True, help="Also eq. (7), the SCI model of §6.2 (T_sci; with --sweep-z, z_opt_sci and T_min_sci).")
@click.option("--t-start-dma", type=float, default=49.2e-6, show_default=True, help="SCI: DMA start time in s.")
@click.option("--t-sci-interrupt", type=float, default=18.8e-6, show_default=True, help="SCI: interrupt time in s (t_sync = 4x).")
@click.option("--no-simulate", is_flag=True, help="Formulas only (no engine run).")
@click.option("--deps", default=None, metavar="ROWS", help="Geometry only: dependence vectors, one per ';', e.g. '1,0;0,1' (default: unit).")
@click.option("--h", "h_matrix", default=None, metavar="ROWS", help="Geometry only: the tiling matrix H, rows separated by ';'.")
@click.option("--tile", default=None, metavar="DIMS", help="Geometry only: rectangular tile sides, e.g. 4x4x64.")
@click.option("--plot", type=click.Path(dir_okay=False), default=None, help="With --sweep-z: write time against z (SVG/PNG/PDF).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def tiling_cmd(space: str, procs: Optional[str], tile_height: Optional[int], sweep_z: bool, mapping: Optional[int],
               platform: Optional[str], model: Optional[str], params: list[tuple[str, float]], t_c: Optional[float], sci: bool,
               t_start_dma: float, t_sci_interrupt: float, no_simulate: bool, deps: Optional[str], h_matrix: Optional[str],
               tile: Optional[str], plot: Optional[str], as_json: bool) -> None:
    """Tiled loops with overlapped communication (paper 001).

    For a tile height: the step counts P (Π = [1 … 1]) and P' (Π' = [2 … 2 1]), t_comp,
    t_comm, eqs. (3) and (4), and the simulated blocking and non-blocking programs of §5.3.
    With --sweep-z, one row per tile height and the best z of each column. With --deps,
    --h or --tile, the §2 geometry of any tiling instead (legality, det P, eqs. 1–2,
    tile-space bounds); it takes --space, --mapping and --json, no other option.

    \b
    Examples:
      commaware tiling --space 16x16x16384 --procs 4x4 --tile-height 64
      commaware tiling --space 32x32x4096 --procs 4x4 --sweep-z --plot z.svg
      commaware tiling --space 12x12x512K --procs 3x3 --sweep-z --sci --no-simulate --json
      commaware tiling --space 8x8 --deps '0,1;1,1' --h '0.25,0;-0.125,0.25' --mapping 2
    """
    from .. import tiling as tl

    with failing():
        dims = tl.parse_dims(space, "--space")
        m = None
        if mapping is not None:
            if not 1 <= mapping <= len(dims):
                fail(f"--mapping: dimension {mapping} does not exist in a {len(dims)}-dimensional space")
            m = mapping - 1
        if deps is not None or h_matrix is not None or tile is not None:
            unused = _given(click.get_current_context(), GEOMETRY_UNUSED)
            if unused:
                fail(f"--deps/--h/--tile ask for the geometry alone, which does not use {', '.join(unused)}: "
                     f"leave {'it' if len(unused) == 1 else 'them'} out")
            if (h_matrix is None) == (tile is None):
                fail("geometry: give exactly one of --h and --tile")
            doc = tl.geometry(dims, tl.parse_matrix(deps, "--deps", True) if deps else None,
                              sides=tl.parse_dims(tile, "--tile") if tile else None,
                              h=tl.parse_matrix(h_matrix, "--h", False) if h_matrix else None, mapping=m)
            _print_geometry(doc, as_json, out)
            return
        if procs is None:
            fail("--procs is required (e.g. --procs 4x4)")
        grid = tl.parse_dims(procs, "--procs")
        if (tile_height is None) == (not sweep_z):
            fail("give exactly one of --tile-height Z and --sweep-z")
        if plot and not sweep_z:
            fail("--plot draws a sweep: add --sweep-z")
        kwargs: dict[str, Any] = dict(t_c=t_c if t_c is not None else (tl.T_C_SCI if sci else tl.T_C_FAST_ETHERNET),
                                      platform=platform, model=model, params=params, simulate=not no_simulate, mapping=m,
                                      sci=(t_start_dma, t_sci_interrupt) if sci else None)
        # One Progress for the whole command: within one tile height the simulated program
        # reports where it is (z = 1 of a deep space runs for minutes); a sweep reports each
        # height as it starts (the small heights take longest: z = 1 simulates DIMZ tiles per rank).
        with Progress("tiling", plain=as_json, unit="tile heights") as progress:
            current = [tile_height]

            def running(schedule: str, now: float, messages: int, done: int, ranks: int, elapsed: float) -> None:
                progress.update(detail=f"z = {current[0]}: {schedule} program at simulated {now:.6g} s, "
                                       f"{messages:,} messages, {done}/{ranks} ranks done")

            if not no_simulate:
                kwargs.update(on_progress=running, progress_every=PROGRESS_EVERY_S)
            if tile_height is not None:
                doc = tl.analyze(dims, grid, tile_height, **kwargs)
            else:

                def height(done: int, n: int, z: int | None) -> None:
                    if z is None:
                        progress.update(done, n)
                        return
                    current[0] = z
                    tiles = dims[m if m is not None else dims.index(max(dims))] // z
                    what = "formulas" if no_simulate else f"simulating {tiles:,} tiles per rank"
                    progress.update(done, n, f"z = {z}: {what}")

                doc = tl.sweep(dims, grid, progress=height, **kwargs)
            if plot:
                tl.plot_sweep(doc, plot)
    if as_json:
        click.echo(json.dumps(doc))
        return
    rows = doc["rows"] if sweep_z else [doc]
    cols = [c for c in ("P_block", "P_overlap", "t_comp", "t_comm", "T_block", "T_overlap", "sim_block", "sim_overlap", "T_sci") if c in rows[0]]
    table = Table(title=f"{space} on {procs} processors", title_justify="left", header_style="bold")
    table.add_column("z", justify="right")
    for c in cols:
        table.add_column(c + ("" if c.startswith("P_") else " (s)"), justify="right")
    for r in rows:
        table.add_row(str(r["tile_height"]), *[f"{r[c]:.6g}" for c in cols])
    out.print(table)
    if sweep_z:
        for col, best in doc["best"].items():
            out.print(f"best {col}: z = {best['tile_height']}, {best['time']:.6g} s", highlight=False)
        if "z_opt_sci" in doc:
            out.print(f"eq. (7) closed form: z_opt = {doc['z_opt_sci']:.6g}, T_min = {doc['T_min_sci']:.6g} s", highlight=False)
        if plot:
            out.print(f"plot: {plot}", highlight=False)


def _print_geometry(doc: dict[str, Any], as_json: bool, out: Any) -> None:
    if as_json:
        click.echo(json.dumps(doc))
        return
    out.print(f"legal tiling (0 ≤ HD ≤ 1); tile volume det(P) = {doc['tile_volume']:.6g} points", highlight=False)
    out.print(f"communication volume: eq. (1) {doc['v_comm_eq1']:.6g}, eq. (2) {doc['v_comm_eq2']:.6g} points "
              f"(mapping dimension {doc['mapping'] + 1})", highlight=False)
    out.print(f"tile space: {doc['tile_lower']} .. {doc['tile_upper']} ({' x '.join(map(str, doc['tiles']))} tiles)", highlight=False)
    out.print(f"time steps: P = {doc['P_block']} (non-overlapping), P' = {doc['P_overlap']} (overlapping)", highlight=False)
