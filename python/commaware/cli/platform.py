"""`commaware platform`: what a platform's fabric is made of (issue 28): `show`, `routes`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..api import load_platform
from .common import Table, failing, out


@click.group("platform")
def platform_group() -> None:
    """Inspect a platform's network topology (`network.topology`, docs/topologies.md)."""


@platform_group.command("routes")
@click.argument("platform", type=click.Path(path_type=Path))
@click.argument("src")
@click.argument("dst")
@click.option("--json", "as_json", is_flag=True, help="Print the route as JSON.")
def routes_cmd(platform: Path, src: str, dst: str, as_json: bool) -> None:
    """The route from host SRC to host DST: its links in the order a message crosses them,
    with their bandwidth, latency and sharing, and the route's latency (SimGrid's routing).

    Example: commaware platform routes fat_tree.json h0 h15 --json
    """
    with failing():
        plat = load_platform(platform)
        latency, links = plat.route(src, dst)
    if as_json:
        click.echo(json.dumps({"src": src, "dst": dst, "latency_s": latency,
                               "links": [{"name": n, "bandwidth_bytes_per_s": b, "latency_s": lat, "sharing": s}
                                         for n, b, lat, s in links]}, indent=2))
        return
    table = Table(title=f"{src} -> {dst}: {len(links)} links, latency {latency:.6g} s")
    for column in ("link", "bandwidth (B/s)", "latency (s)", "sharing"):
        table.add_column(column)
    for n, b, lat, s in links:
        table.add_row(n, f"{b:.6g}", f"{lat:.6g}", s)
    out.print(table)


@platform_group.command("export")
@click.argument("platform", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["simgrid", "json"]), required=True,
              help="simgrid: a SimGrid 4.1 XML platform file; json: our JSON platform (one SimGrid cluster only).")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Write to this file (only once complete) instead of stdout.")
def export_cmd(platform: Path, fmt: str, output: Path | None) -> None:
    """Write PLATFORM (JSON, TOML or SimGrid XML) in another format: `simgrid` gives a SimGrid
    platform file with the same hosts, links and routes (clusters as <cluster>, graphs and nested
    zones as one Full zone listing every route); `json` turns a SimGrid cluster file into our
    JSON `network.topology`. What a format cannot express is an error (or, for MPI-level settings,
    an XML comment): see docs/topologies.md, "Exporting a platform".

    Example: commaware platform export fat_tree.json --format simgrid -o fat_tree.xml
    """
    from ..output import deliver

    with failing():
        text = load_platform(platform).export(fmt)

    def write(path: Path) -> None:
        path.write_text(text)

    with failing(writing=str(output) if output is not None else None):
        deliver(write, output)


def _bandwidth(value: float | None, how: str) -> str:
    return f"{value:.6g} B/s ({how})" if value is not None else how


@platform_group.command("show")
@click.argument("platform", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def show_cmd(platform: Path, as_json: bool) -> None:
    """What PLATFORM is made of: its hosts (count, first and last names), links (count, by
    sharing policy), zones, topology kind and parameters with the SimGrid string they equal,
    diameter (the most links on a route between two hosts), total bandwidth (every link's
    bandwidth summed) and bisection bandwidth (the smallest cut between two halves of the
    hosts, one direction) where a closed form is known (star, FLAT, TORUS, FAT_TREE,
    DRAGONFLY), the routing (SimGrid's or commaware's own, and the routings available), and each
    setting of a SimGrid file's <config> with what it became;
    docs/topologies.md.

    Example: commaware platform show fat_tree.json --json
    """
    with failing():
        plat = load_platform(platform)
        doc = plat.summary()
    if as_json:
        click.echo(json.dumps({"platform": str(platform), **doc}, indent=2))
        return
    hosts, links = doc["hosts"], doc["links"]
    names = ", ".join(hosts["first"]) + (f" ... {', '.join(hosts['last'])}" if hosts["last"] else "")
    table = Table(title=f"{platform.name}: {doc['kind']}", show_header=False)
    table.add_column("what")
    table.add_column("value")
    table.add_row("hosts", f"{hosts['count']}: {names}")
    table.add_row("links", f"{links['count']} ({links['SHARED']} SHARED, {links['FATPIPE']} FATPIPE)")
    table.add_row("zones", str(doc["zones"]))
    if doc["simgrid"]:
        sg = doc["simgrid"]
        params = ", ".join(f"{k}={v}" for k, v in doc["parameters"].items() if v is not None)
        table.add_row("parameters", params)
        table.add_row("SimGrid", f'topology="{sg["topology"]}" topo_parameters="{sg["topo_parameters"]}"')
    table.add_row("diameter", f"{doc['diameter_hops']} hops ({doc['diameter_how']})" if doc["diameter_hops"] is not None
                  else doc["diameter_how"])
    table.add_row("total bandwidth", f"{doc['total_bandwidth_bytes_per_s']:.6g} B/s")
    table.add_row("bisection bandwidth", _bandwidth(doc["bisection_bandwidth_bytes_per_s"], doc["bisection_how"]))
    routing = doc["routing"]
    seeded = f", seed {routing['seed']}" if routing["name"] != "minimal" else ""
    table.add_row("routing", f"{routing['name']}{seeded}: {routing['how']} (available: {', '.join(routing['available'])})")
    for c in doc["simgrid_config"]:
        table.add_row(f"<config> {c['setting']}", f"{c['value']}: {c['applied_as']}")
    for u in doc["simgrid_unmodelled"]:
        table.add_row("not modelled", f"{u['what']}: {u['count']:,} (first at {u['first_at']})")
    out.print(table)
