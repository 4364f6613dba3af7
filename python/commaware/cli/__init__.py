"""The `commaware` command line: the top-level group `main`, assembled from one module per
command group; what the groups share is in `common`."""

from __future__ import annotations

import sys
from typing import Any

import click

from .. import _core
from . import (cosched, interference, measure, multicast, platform, reproduce, schema, sharing, simulate, sweep,
               taskfarm, throughput, tiling, trace)
from .common import EXIT_INTERRUPTED, err, fail


class _Main(click.Group):
    """The top-level group: a caught Rust panic (InternalError) is one line and exit 1, not a
    traceback; Ctrl-C is one line and exit 130, once the command's partial outputs are removed
    (each writer removes its own on the way out: `output.deliver`, `MessageFile.discard`, ...)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            fail("interrupted (Ctrl-C)", EXIT_INTERRUPTED)
        except _core.InternalError as exc:
            from rich.markup import escape

            err.print(f"[bold red]internal error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True, emoji=False)
            sys.exit(1)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_core.__version__, prog_name="commaware")
def main() -> None:
    """Predict how long communicating work takes on a cluster, and which schedule is best.

    Exit codes: 0 done, 1 the run failed, 2 bad input (one error line), 130 stopped by
    Ctrl-C (within about a second, leaving no partial output).

    Long commands show their progress on stderr: a bar on a terminal; when stderr is not a
    terminal, or with --json, a line every 10 s ($COMMAWARE_PROGRESS_SECONDS); none with --quiet.
    """


for command in (
    # The engine: replay traces on platforms, the examples, the input formats.
    simulate.simulate_cmd, simulate.demo_cmd, schema.schema_cmd,
    # Platforms: the routes of a network topology.
    platform.platform_group,
    # The papers' reproduction checks and their report.
    reproduce.reproduce_cmd,
    # Paper 003: multiple multicast.
    multicast.multicast_group,
    # Paper 004: penalties of schemes, calibration, real measurement.
    sharing.penalties_cmd, sharing.calibrate, measure.measure,
    # Paper 000: interference fits and models, steady-state throughput, task farming.
    interference.interference, taskfarm.taskfarm_cmd,
    # Paper 001: tiled loops.
    tiling.tiling_cmd,
    # Paper 002: cluster job scheduling.
    cosched.workload_group, cosched.cosched_group,
    # Real MPI runs as traces, and traces for SimGrid.
    trace.trace_group,
    # Experiments at scale: parameter sweeps and their results store.
    sweep.sweep_cmd, sweep.results_group,
):
    main.add_command(command)
# Paper 000 §3.2: steady-state throughput bounds on trees, `commaware interference throughput`.
interference.interference.add_command(throughput.throughput_cmd)
