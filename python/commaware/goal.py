"""GOAL schedules (LogGOPSim's and schedgen's format) and the `loggp` model.

A GOAL schedule is, per rank, a graph of `send`, `recv` and `calc` operations with `requires`
and `irequires` dependencies. `load_goal` reads one; `goal_of` turns any trace into one (each
rank's sequence a chain, collectives lowered by the algorithms a replay would run);
`export_goal` writes one; `simulate_loggp` runs a schedule or a trace under LogGOPSim's LogGP
model, event for event as LogGOPSim does (docs/traces.md, "GOAL").

Units: GOAL's times are integers. `unit` (the CLI's `--goal-calc-unit`) is the seconds of one:
1e-9 by default, LogGOPSim's nanosecond. A `calc N` lasts N units. LogGP's parameters are
given in seconds (G and O in seconds per byte, S in bytes) and must be whole numbers of units:
LogGOPSim's `-L 2500 -o 1500 -g 1000 -G 6 -O 0 -S 65535` (its defaults) are L=2.5e-6, o=1.5e-6,
g=1e-6, G=6e-9, O=0 and S=65535 here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _core
from ._errors import check_output_dir, input_error
from .api import GOAL_UNIT, Platform, Source, Trace, load_platform, load_trace, names_goal, read_goal
from .output import write_delivered

#: LogGP's parameter names (LogGOPSim's flags).
LOGGP_PARAMETERS = ("L", "o", "g", "G", "O", "S")
#: An end time this large can only come from LogGOPSim's wrap-around of a 0-byte message.
WRAPPED = 1 << 63


class GoalSchedule:
    """A GOAL schedule: per rank, operations and their dependencies."""

    def __init__(self, core: _core.GoalSchedule, source: str) -> None:
        self._core = core
        self.source = source
        #: For a schedule made from a trace: what GOAL could not say exactly (MPI_Test calls,
        #: which order nothing; MPI_Waitany calls, made to wait for all their requests;
        #: synchronous sends, whose protocol GOAL leaves to the size); else None.
        self.conversion: dict[str, int] | None = None

    @property
    def n_ranks(self) -> int:
        return self._core.n_ranks

    @property
    def n_ops(self) -> int:
        return self._core.n_ops

    @property
    def n_deps(self) -> int:
        return self._core.n_deps

    def write(self, path: str | Path) -> Path:
        """Write the schedule as GOAL text at `path` (beside it first, renamed when complete).
        The file is what LogGOPSim's txt2bin reads: no indentation, ops labelled l1, l2, ..."""
        check_output_dir(path)
        return write_delivered(path, lambda scratch: _core.write_goal(self._core, scratch))


def load_goal(path: str | Path) -> GoalSchedule:
    """Read the GOAL text file at `path` (LogGOPSim's txt2bin grammar; indented lines and
    comments after an item are read too). TraceError naming the line for anything txt2bin
    would read wrongly or not at all."""
    return GoalSchedule(read_goal(path), str(path))


def goal_of(trace: Source | Trace | GoalSchedule, *, unit: float = GOAL_UNIT, platform: Source | Platform | None = None,
            flops_per_second: float | None = None, placement: str = "explicit", seed: int = 0, coll: str | None = None,
            smpi: str | None = None, hostfile: str | Path | None = None, trace_format: str = "auto",
            traced_speed: float | None = None) -> GoalSchedule:
    """`trace` as a GOAL schedule. A rank's blocking step is a node the next one `requires`, a
    posted send or receive one the next `irequires`, and a wait makes the next node require
    what it waited for; collectives become the messages of the algorithms a replay runs. With
    `platform`, as a replay there would run it (placement, hostfile, each host's flop rate,
    its collectives and `smpi`'s); else computes in flops run at `flops_per_second` (1e9 by
    default). A GOAL file or schedule is returned as it is."""
    if isinstance(trace, GoalSchedule):
        return trace
    if names_goal(trace, trace_format):
        return load_goal(trace)  # type: ignore[arg-type]
    loaded = load_trace(trace, trace_format, traced_speed=traced_speed, goal_calc_unit=unit)
    hf = None
    if hostfile is not None:
        hf = (Path(hostfile).read_text(), str(hostfile))
    hosts = None if platform is None else load_platform(platform)._core
    try:
        core, stats = _core.goal_from_trace(loaded._core, float(unit), hosts, 1e9 if flops_per_second is None else float(flops_per_second),
                                            placement, seed, coll, smpi, hf)
    except _core.OptionsError as exc:
        raise _named_option(exc) from None
    schedule = GoalSchedule(core, loaded.source)
    schedule.conversion = dict(stats)
    return schedule


def _named_option(exc: _core.OptionsError) -> _core.OptionsError:
    """The core's OptionsError naming the CLI option it is about (`--param NAME`, `--goal-calc-unit`, ...)."""
    if exc.field in LOGGP_PARAMETERS or exc.reason.startswith("unknown loggp parameter"):
        return input_error(_core.OptionsError, "--param", exc.field, exc.reason)
    option = {"goal_calc_unit": "--goal-calc-unit", "speed": "--flops-per-second"}.get(exc.field)
    return input_error(_core.OptionsError, option, "", exc.reason) if option else exc


def export_goal(trace: Source | Trace, path: str | Path, **options: Any) -> Path:
    """Write `trace` as a GOAL text file at `path`; `options` are `goal_of`'s. Returns the path."""
    return goal_of(trace, **options).write(path)


@dataclass
class LoggpResult:
    """A run under the loggp model. Times are in seconds; `*_units` in GOAL's integer units."""

    unit: float
    #: LogGP's parameters in seconds (G and O per byte; S in bytes), and in units.
    params: dict[str, float]
    params_units: dict[str, int]
    #: Per rank: when its CPU is last busy (LogGOPSim's `Host i: T`).
    ends_units: list[int]
    #: LogGOPSim's event counter.
    events: int
    #: (rank, receives never matched, messages never received) of each rank left with any.
    unmatched: list[tuple[int, int, int]] = field(default_factory=list)
    #: Operations that never ran (a dependency never completed).
    not_run: int = 0

    @property
    def ends(self) -> list[float]:
        return [t * self.unit for t in self.ends_units]

    @property
    def makespan(self) -> float:
        return max(self.ends_units, default=0) * self.unit

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of `commaware simulate --model loggp --json`."""
        return {
            "model": "loggp",
            "unit_s": self.unit,
            "parameters": self.params,
            "parameters_units": self.params_units,
            "makespan": self.makespan,
            "events": self.events,
            "ranks": [{"rank": r, "end": e * self.unit, "end_units": e} for r, e in enumerate(self.ends_units)],
            "unmatched": [{"rank": r, "receives": q, "messages": m} for r, q, m in self.unmatched],
            "not_run": self.not_run,
        }


def simulate_loggp(trace: Source | Trace | GoalSchedule, *, params: Mapping[str, float] | Sequence[tuple[str, float]] | None = None,
                   unit: float = GOAL_UNIT, check: bool = True, **convert: Any) -> LoggpResult:
    """Run `trace` (a GOAL schedule or file, or any trace, made a GOAL schedule by `goal_of`
    with `unit` and `convert`) under LogGOPSim's LogGP model with `params` over LogGOPSim's
    defaults (module docs for the units). Each rank is a host with its own CPU and NIC.

    With `check`, a run that ends with receives or messages unmatched, or operations that never
    ran, raises DeadlockError naming the ranks (LogGOPSim prints no times then)."""
    schedule = goal_of(trace, unit=unit, **convert)
    pairs = list(params.items()) if isinstance(params, Mapping) else list(params or [])
    try:
        ends, events, unmatched, not_run, in_units = _core.simulate_loggp(schedule._core, [(k, float(v)) for k, v in pairs], float(unit))
    except _core.OptionsError as exc:
        raise _named_option(exc) from None
    units = dict(in_units)
    result = LoggpResult(unit=unit, params={k: (float(v) if k == "S" else v * unit) for k, v in units.items()},
                         params_units=units, ends_units=list(ends), events=events,
                         unmatched=[tuple(u) for u in unmatched], not_run=not_run)  # type: ignore[misc]
    if check and max(result.ends_units, default=0) >= WRAPPED:
        raise input_error(_core.TraceError, schedule.source, "", "an end time passed 2^63 units: LogGOPSim's unsigned "
                          "arithmetic wrapped around on a 0-byte message (its s - 1 is 2^64 - 1, SEMANTICS.md 2.9) "
                          "with o below G or O; give o >= G and o >= O, or messages of at least 1 byte")
    if check and (result.unmatched or result.not_run):
        shown = ", ".join(f"rank {r}: {q} receives and {m} messages unmatched" for r, q, m in result.unmatched[:10])
        more = f" (and {len(result.unmatched) - 10} more ranks)" if len(result.unmatched) > 10 else ""
        never = f"{result.not_run} operations never ran" if result.not_run else ""
        raise input_error(_core.DeadlockError, schedule.source, "", "; ".join(x for x in (shown + more, never) if x)
                          + " (under LogGP, as LogGOPSim would run it)")
    return result
