"""The `commaware` command line: the top-level group `main`, assembled from one module per
command group; what the groups share is in `common`."""

from __future__ import annotations

import errno
import importlib
import sys
from typing import Any

import click

from .. import _core
from .common import EXIT_FAILED, EXIT_INTERRUPTED, err, fail, failing

#: Every command: its name, then the module of this package that defines it and the object's
#: name there. A module is imported when one of its commands runs (or help lists them all), so
#: `commaware simulate` loads the engine's front-end and not the sweeps, the schedulers or the
#: report (issue 29: a start-up that imports nothing the command does not use).
COMMANDS: dict[str, tuple[str, str]] = {
    # The engine: replay traces on platforms, the examples, the input formats.
    "simulate": ("simulate", "simulate_cmd"), "demo": ("simulate", "demo_cmd"), "schema": ("schema", "schema_cmd"),
    # Platforms: the routes of a network topology.
    "platform": ("platform", "platform_group"),
    # The papers' reproduction checks and their report.
    "reproduce": ("reproduce", "reproduce_cmd"),
    # Paper 003: multiple multicast.
    "multicast": ("multicast", "multicast_group"),
    # Paper 004: penalties of schemes, calibration, real measurement.
    "penalties": ("sharing", "penalties_cmd"), "calibrate": ("sharing", "calibrate"), "measure": ("measure", "measure"),
    # Paper 000: interference fits and models (with `throughput`, §3.2), task farming.
    "interference": ("interference", "interference"), "taskfarm": ("taskfarm", "taskfarm_cmd"),
    # Paper 001: tiled loops.
    "tiling": ("tiling", "tiling_cmd"),
    # Paper 002: cluster job scheduling.
    "workload": ("cosched", "workload_group"), "cosched": ("cosched", "cosched_group"),
    # Real MPI runs as traces, and traces for SimGrid.
    "trace": ("trace", "trace_group"),
    # Experiments at scale: parameter sweeps and their results store.
    "sweep": ("sweep", "sweep_cmd"), "results": ("sweep", "results_group"),
}


def _load(name: str) -> click.Command:
    module, attribute = COMMANDS[name]
    command: click.Command = getattr(importlib.import_module(f".{module}", __name__), attribute)
    if name == "interference" and "throughput" not in command.commands:  # type: ignore[attr-defined]
        from .throughput import throughput_cmd

        command.add_command(throughput_cmd)  # type: ignore[attr-defined]
    return command


class _Main(click.Group):
    """The top-level group: its commands are imported when used (`COMMANDS`); a caught Rust
    panic (InternalError) is one line and exit 1, not a traceback.

    Every command runs inside an `output.Delivery`: its files and what it prints on stdout are
    held back, complete, until it ends, then delivered in one step that Ctrl-C cannot split
    (issue 45). A Ctrl-C before that step is one line and exit 130, with every output dropped;
    one during or after it is ignored, and the command ends as it would have (exit 0 when it
    succeeded). A command that ends with bad input (exit 2) delivers nothing either; exit 1 (the
    run failed, e.g. a reproduction row fails) delivers what it wrote, as exit 0 does."""

    #: Whether this group runs as the process (`commaware ...`, `python -m commaware.cli`), not
    #: called in-process (click's CliRunner): then a Ctrl-C after delivery stays ignored until
    #: the process exits.
    owns_process = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.owns_process = True
        return super().__call__(*args, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        if cmd_name not in self.commands:
            self.commands[cmd_name] = _load(cmd_name)
        return self.commands[cmd_name]

    def invoke(self, ctx: click.Context) -> Any:
        from ..output import Delivery

        delivery = Delivery()
        try:
            delivery.begin()
            try:
                value = super().invoke(ctx)
                ending: BaseException | None = None
            except (SystemExit, click.exceptions.Exit) as exc:
                code = exc.code if isinstance(exc, SystemExit) else exc.exit_code
                if code not in (None, 0, EXIT_FAILED):
                    raise
                ending = exc
            if delivery.interrupted:  # a Ctrl-C came before the delivery, and something swallowed it
                raise KeyboardInterrupt
            try:
                delivery.commit(ignore_ctrl_c_after=self.owns_process)
            except OSError as exc:
                if exc.errno == errno.EPIPE:
                    raise  # the reader went away: click ends quietly, as before
                with failing(writing="", named_by_error=True):
                    raise
            if ending is not None:
                raise ending
            return value
        except BaseException as exc:
            # A Ctrl-C, or what a library made of it (an error a C extension raised instead, one
            # it swallowed: see `Delivery`): exit 130; `end` below discards every output.
            if isinstance(exc, KeyboardInterrupt) or (delivery.interrupted and isinstance(exc, Exception)):
                fail("interrupted (Ctrl-C)", EXIT_INTERRUPTED)
            if not isinstance(exc, _core.InternalError):
                raise
            from rich.markup import escape

            err.print(f"[bold red]internal error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True, emoji=False)
            sys.exit(1)
        finally:
            delivery.end()


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_core.__version__, prog_name="commaware")
def main() -> None:
    """Predict how long communicating work takes on a cluster, and which schedule is best.

    Exit codes: 0 done, 1 the run failed, 2 bad input (one error line), 130 stopped by
    Ctrl-C (within about a second, leaving no output at all).

    A command's outputs (its files, and what it prints on stdout) appear together once it
    has finished, or not at all: a Ctrl-C that comes once they have begun to appear waits
    until all are out, and the command then exits as it would have (0 when it succeeded).

    Long commands show their progress on stderr: a bar on a terminal; when stderr is not a
    terminal, or with --json, a line every 10 s ($COMMAWARE_PROGRESS_SECONDS); none with --quiet.
    """
