"""`commaware multicast` (paper 003): schedule the multicasts of an instance (the default
subcommand), or generate a random instance."""

from __future__ import annotations

from pathlib import Path

import click

from .. import _core
from .common import Progress, Table, err, fail, failing, out, seed_option


class _DefaultCommandGroup(click.Group):
    """A group whose first argument, when it names no subcommand, goes to `default_command`."""

    default_command = "schedule"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@click.group("multicast", cls=_DefaultCommandGroup)
def multicast_group() -> None:
    """Multiple multicast on heterogeneous networks (paper 003).

    \b
      commaware multicast INSTANCE.json --algorithm ecfp [--json] [--gantt FILE]
      commaware multicast generate --nodes 16 --pattern all_to_all > inst.json
    """


@multicast_group.command("schedule")
@click.argument("instance", type=click.Path(dir_okay=False))
@click.option("--algorithm", "-a", type=click.Choice(_core.multicast_algorithms()), default="ecf", show_default=True)
@seed_option("Seed of RRS and RRSP.")
@click.option("--json", "as_json", is_flag=True, help="Print the schedule as JSON.")
@click.option("--summary", is_flag=True, help="Only algorithm, completion time, lower bound and scheduling time "
              "(a table; JSON with --json).")
@click.option("--execute", "model", default=None, help="Also replay the schedule on the engine with this sharing model "
              "(contention_free reproduces the scheduler; maxmin shows contention).")
@click.option("--gantt", type=click.Path(dir_okay=False), default=None,
              help="Draw the engine's replay (contention-free) to FILE.svg or FILE.png.")
def multicast_schedule_cmd(instance: str, algorithm: str, seed: int, as_json: bool, summary: bool,
                           model: str | None, gantt: str | None) -> None:
    """Schedule the multicasts of INSTANCE and print the schedule and its lower bound."""
    from .. import multicast

    if gantt and Path(gantt).suffix.lower() not in (".svg", ".png"):
        fail(f"{gantt}: --gantt needs a .svg or .png file")
    with failing(), Progress("multicast schedule", plain=as_json, delay=1.0) as progress:
        progress.stage(f"loading {instance}")
        inst = multicast.load_instance(instance)
        progress.stage(f"scheduling with {algorithm}")
        sched = multicast.schedule(inst, algorithm, seed=seed)
        if model or gantt:
            progress.stage("replaying the schedule on the engine")
        replay = multicast.execute(inst, sched, model) if model else None
        drawn = multicast.execute(inst, sched) if gantt else None
    if drawn is not None:
        from ..gantt import write_gantt

        with failing(writing=gantt):
            write_gantt(drawn, gantt, title=f"{algorithm} on {Path(instance).name}: {sched.completion_time:.6g} s")
    if as_json:
        from ..output import deliver

        execution = (model, replay.makespan) if replay is not None else None
        try:
            deliver(lambda path: sched.write_json(path, summary=summary, execution=execution), None)
        except (_core.OutputError, OSError) as exc:
            fail(str(exc))
        return
    if summary:
        table = Table(header_style="bold")
        for col in ("algorithm", "completion (s)", "lower bound (s)", "ratio", "scheduling (ms)"):
            table.add_column(col, justify="right")
        ratio = f"{sched.completion_time / sched.lower_bound:.3f}" if sched.lower_bound > 0 else "-"
        row = [sched.algorithm, f"{sched.completion_time:.6g}", f"{sched.lower_bound:.6g}", ratio,
               f"{1e3 * sched.scheduling_seconds:.3g}"]
        if replay is not None:
            table.add_column(f"{model} makespan (s)", justify="right")
            row.append(f"{replay.makespan:.6g}")
        table.add_row(*row)
        out.print(table)
        return
    out.print(f"[bold]{algorithm}[/] on {instance}: completion [bold]{sched.completion_time:.6g} s[/], "
              f"lower bound {sched.lower_bound:.6g} s (ratio {sched.completion_time / sched.lower_bound:.3f}), "
              f"scheduled in {1e3 * sched.scheduling_seconds:.3g} ms" if sched.lower_bound > 0 else
              f"[bold]{algorithm}[/]: completion {sched.completion_time:.6g} s")
    table = Table(header_style="bold")
    for col in ("step", "sender", "receiver", "source", "complete (s)"):
        table.add_column(col, justify="right")
    for k, (sender, receiver, source, complete) in enumerate(sched.head(40)):
        table.add_row(str(k), str(sender), str(receiver), str(source), f"{complete:.6g}")
    out.print(table)
    if sched.n_selections > 40:
        out.print(f"(first 40 of {sched.n_selections} selections; --json prints all)")
    if replay is not None:
        out.print(f"replayed on the engine with {model}: makespan {replay.makespan:.6g} s")


@multicast_group.command("generate")
@click.option("--nodes", type=int, default=16, show_default=True)
@click.option("--pattern", type=click.Choice(["broadcast", "all_to_all", "random"]), default="all_to_all", show_default=True)
@click.option("--sizes", type=click.Choice(["small", "large", "mixed"]), default="small", show_default=True,
              help="small = 1 KiB, large = 1 or 1.5 MiB, mixed = either (paper 003 §7).")
@click.option("--network", type=click.Choice(["fast", "slow", "mixed"]), default="fast", show_default=True,
              help="fast = 1 Gb/s, slow = 155 Mb/s on every link; mixed = each pair's link one or the other "
                   "at random.")
@click.option("--sources", type=int, default=None, help="random pattern: number of sources (default nodes/4).")
@click.option("--destinations", type=int, default=None, help="random pattern: destinations per source (default random).")
@click.option("--source", type=int, default=None, help="broadcast pattern: the source (default random).")
@seed_option("Seed of the random draws.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None, help="Write to FILE instead of stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line on stderr.")
def multicast_generate_cmd(nodes: int, pattern: str, sizes: str, network: str, sources: int | None,
                           destinations: int | None, source: int | None, seed: int, output: str | None,
                           quiet: bool) -> None:
    """Make a random instance with the distributions of paper 003 §7 (seeded)."""
    from contextlib import nullcontext

    from .. import multicast
    from ..output import deliver

    # Thousands of nodes take seconds (mostly the JSON text): say so on a terminal.
    status = err.real().status(f"generating {nodes} nodes ({pattern})") if err.is_terminal and not quiet else nullcontext()
    with failing(writing=str(output)), status:  # stdout (no --output) is named None, as it always was
        inst = multicast.generate(nodes, pattern, sizes, network, sources=sources, destinations=destinations,
                                  source=source, seed=seed)
        deliver(inst.write_json, output)
