"""`commaware interference throughput` (paper 000 §3.2); see `commaware.throughput`. The
`interference` group gets it in `commaware.cli`."""

from __future__ import annotations

import json

import click

from .common import Table, failing, out

#: Rows of the human-readable table before the rest is summarised (--json has them all).
MAX_ROWS = 60


@click.command("throughput")
@click.argument("tree", metavar="TREE.json", type=click.Path(dir_okay=False))
# The port models of commaware.throughput.PORTS (not imported here: it loads numpy).
@click.option("--ports", type=click.Choice(["multi", "single"]), default="multi", show_default=True,
              help="multi: a node sends to several children at once under its B_s (§3.2.1); "
                   "single: to one child at a time (§3.2.2).")
@click.option("--lp/--no-lp", default=True, show_default=True,
              help="Also solve the same model as a linear program (scipy) and report the gap to the greedy bound.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: ports, throughput, lp_throughput, gap, nodes [{id, T, S, T_hat, priority, excluded}].")
def throughput_cmd(tree: str, ports: str, lp: bool, as_json: bool) -> None:
    """Steady-state throughput bound of independent tasks on a tree overlay (paper 000 §3.2).

    TREE.json is {"task_mb": Z, "nodes": [{"id", "parent" (null for the root),
    "compute_rate" (tasks/s), "link_mb_s" (MB/s from the parent), "ir_r", "ir_s"
    (per MB/s; ir_s is the interference on the parent of sending to this node),
    "send_limit_mb_s" (B_s, optional)}]}; MB = 2^20 bytes.

    The greedy bound prioritises children by increasing IR_s (multi-port) or by
    decreasing B_r·(1 − IR_s·Z·C) (single-port) and never sends to a child with
    IR_s·Z·C >= 1. Multi-port it equals the LP optimum; single-port it can fall short
    of it (the gap is reported).

    \b
    Examples:
      commaware interference throughput examples/interference/tree_small.json
      commaware interference throughput examples/interference/tree_single_gap.json --ports single --json
    """
    from ..throughput import bound

    with failing():
        report = bound(tree, ports, lp=lp)
    doc = report.to_dict()
    if as_json:
        click.echo(json.dumps(doc))
        return
    out.print(f"[bold]{tree}[/] ({ports}-port): throughput bound {report.throughput:.6g} tasks/s at the root",
              highlight=False, soft_wrap=True)
    if report.lp_throughput is not None:
        gap = report.gap or 0.0
        note = "" if abs(gap) <= 1e-9 * max(1.0, report.lp_throughput) else \
            " (the single-port priority order is not optimal here)" if ports == "single" else ""
        out.print(f"LP optimum {report.lp_throughput:.6g} tasks/s, gap {gap:.3g}{note}", highlight=False)
    table = Table(title="per node (tasks/s)", title_justify="left", header_style="bold")
    for col in ("node", "T", "S", "T̂", "priority", "excluded"):
        table.add_column(col, justify="right" if col in ("T", "S", "T̂") else "left")
    nodes = doc["nodes"]
    for e in nodes[:MAX_ROWS]:
        table.add_row(str(e["id"]), f"{e['T']:.6g}", f"{e['S']:.6g}", f"{e['T_hat']:.6g}",
                      ", ".join(map(str, e["priority"])) or "-", ", ".join(map(str, e["excluded"])) or "-")
    out.print(table)
    if len(nodes) > MAX_ROWS:
        out.print(f"... {len(nodes) - MAX_ROWS} more nodes (all of them with --json)", highlight=False)
