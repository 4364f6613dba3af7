"""`commaware platform`: what a platform's fabric is made of (issue 28)."""

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
