"""`commaware taskfarm` (paper 000 §4); see `commaware.taskfarm`."""

from __future__ import annotations

import json
from typing import Optional

import click

from .common import Table, fail, failing, out

# commaware.taskfarm.ALGORITHMS (not imported here: it loads numpy).
_ALGORITHMS = ["ia-multi", "ia-single", "fcfs", "comprate", "bwc", "root-computes"]


@click.command("taskfarm")
@click.argument("tree", metavar="TREE.json", required=False, type=click.Path(dir_okay=False))
@click.option("--testbed", type=click.Choice(["table4"]), default=None,
              help="Use the §4 fork graph of Table 4 (reconstructed as docs/interference.md says) instead of TREE.json.")
@click.option("--algorithm", type=click.Choice(_ALGORITHMS), default="ia-multi", show_default=True,
              help="Which requesting child a parent serves (§4.1).")
@click.option("--tasks", type=int, default=1000, show_default=True, help="Number of tasks N (all at the root).")
@click.option("--send-mb", type=float, default=2.0, show_default=True, help="--testbed: task size in MB.")
@click.option("--diagonals", type=float, default=5.0, show_default=True, help="--testbed: task compute size in diagonals.")
@click.option("--cutoff", is_flag=True, help="Never send to a child with IR_s·Z·C_parent >= 1 (the §3-informed variant).")
@click.option("--hold", type=int, default=2, show_default=True,
              help="Most tasks a child holds (queued + computing + in transit).")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: makespan, throughput, tasks_per_node, bound (the §3.2 multi-port bound), gap, ...")
def taskfarm_cmd(tree: Optional[str], testbed: Optional[str], algorithm: str, tasks: int, send_mb: float,
                 diagonals: float, cutoff: bool, hold: int, as_json: bool) -> None:
    """Autonomous task farming on a tree overlay (paper 000 §4).

    A request-driven simulation: the root holds all tasks and computes continuously;
    every other node asks for tasks while it holds fewer than --hold; a parent sends only
    to children that ask, picking by the algorithm. Compute rates are degraded by
    interference at every moment. TREE.json is the format of `commaware interference
    throughput`; the report includes that command's multi-port bound for the same tree
    (the farm never exceeds it).

    \b
    Examples:
      commaware taskfarm --testbed table4 --algorithm ia-multi --send-mb 2 --diagonals 5
      commaware taskfarm examples/interference/tree_small.json --algorithm fcfs --tasks 500 --json
    """
    from ..taskfarm import taskfarm, testbed_table4

    if (tree is None) == (testbed is None):
        fail("give either TREE.json or --testbed table4 (exactly one)")
    with failing():
        source = testbed_table4(send_mb, diagonals) if testbed else tree
        report = taskfarm(source, algorithm, tasks=tasks, hold=hold, cutoff=cutoff)  # type: ignore[arg-type]
    doc = report.to_dict()
    if as_json:
        click.echo(json.dumps(doc))
        return
    name = f"testbed table4 ({send_mb:g} MB, {diagonals:g} diagonals)" if testbed else tree
    out.print(f"[bold]{name}[/], {algorithm}{' with cutoff' if cutoff else ''}: {tasks} tasks in "
              f"{report.makespan:.6g} s, throughput {report.throughput:.6g} tasks/s "
              f"(multi-port bound {report.bound:.6g}, gap {report.gap:.3g})", highlight=False, soft_wrap=True)
    if report.testbed:
        out.print(report.testbed, highlight=False, soft_wrap=True)
    table = Table(title="tasks computed per node", title_justify="left", header_style="bold")
    table.add_column("node")
    table.add_column("tasks", justify="right")
    items = list(report.tasks_per_node.items())
    for node, count in items[:60]:
        table.add_row(str(node), str(count))
    out.print(table)
    if len(items) > 60:
        out.print(f"... {len(items) - 60} more nodes (all of them with --json)", highlight=False)
