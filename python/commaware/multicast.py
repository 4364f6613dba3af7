"""Multiple multicast on heterogeneous networks (paper 003): instances, the eleven
schedulers, the corrected lower bound, and execution of a schedule on the engine.

    from commaware import multicast
    inst = multicast.generate(16, pattern="all_to_all", sizes="large", network="slow", seed=1)
    sched = multicast.schedule(inst, "ecfp")
    sched.completion_time, sched.lower_bound, sched.triples()
    multicast.execute(inst, sched, model="maxmin").makespan   # with contention
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import _core
from ._errors import input_error, option_error, with_source
from .api import Result, Source, check_seed, read_input

ALGORITHMS: list[str] = _core.multicast_algorithms()
PATTERNS = ("broadcast", "all_to_all", "random")
SIZES = ("small", "large", "mixed")
NETWORKS = ("fast", "slow", "mixed")


class Instance:
    """A validated multiple multicast instance (nodes, transmission times, multicasts)."""

    def __init__(self, core: _core.MulticastInstance, source: str) -> None:
        self._core = core
        self.source = source

    @property
    def n_nodes(self) -> int:
        return self._core.n_nodes

    @property
    def n_multicasts(self) -> int:
        return self._core.n_multicasts

    def lower_bound(self) -> float:
        """The lower bound of §3.2 (corrected: relays only through the multicast's own nodes)."""
        return self._core.lower_bound()

    def to_json(self) -> str:
        return self._core.to_json()

    def write_json(self, path: str | Path) -> None:
        """Write the instance's JSON to `path` as it is serialised (no copy in memory)."""
        self._core.write_json(str(path))

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self.to_json())

    def __repr__(self) -> str:
        return f"Instance({self.source!r}, nodes={self.n_nodes}, multicasts={self.n_multicasts})"


class Schedule:
    """A schedule: selection sequence, per-node task lists, completion time and bound."""

    def __init__(self, core: _core.MulticastReport) -> None:
        self._core = core

    @property
    def algorithm(self) -> str:
        return self._core.algorithm

    @property
    def completion_time(self) -> float:
        return self._core.completion_time

    @property
    def lower_bound(self) -> float:
        return self._core.lower_bound

    @property
    def scheduling_seconds(self) -> float:
        """Wall time of the scheduler alone (no I/O, no lower bound)."""
        return self._core.scheduling_seconds

    def triples(self) -> list[tuple[int, int, int]]:
        """The sequence as (sender, receiver, source), as the paper prints it."""
        return self._core.triples()

    @property
    def n_selections(self) -> int:
        """Length of the selection sequence (one per delivery)."""
        return self._core.n_selections

    def head(self, n: int) -> list[tuple[int, int, int, float]]:
        """The first `n` selections as (sender, receiver, source, complete)."""
        return self._core.head(n)

    def to_json(self, summary: bool = False) -> str:
        return self._core.to_json(summary)

    def write_json(self, path: str | Path, summary: bool = False, execution: tuple[str, float] | None = None) -> None:
        """Write the `--json` document to `path` as it is serialised; `execution` = (model, makespan)
        of a replay on the engine adds an `execution` entry."""
        self._core.write_json(str(path), summary, execution)

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self.to_json())

    def __repr__(self) -> str:
        return f"Schedule({self.algorithm!r}, completion_time={self.completion_time!r})"


def load_instance(source: Source | Instance) -> Instance:
    """Load an instance from a JSON file path or a dict; raises MulticastError."""
    if isinstance(source, Instance):
        return source
    text, name, fmt = read_input(source, _core.MulticastError)
    return Instance(_core.multicast_load(text, name, fmt), name)


def schedule(instance: Source | Instance, algorithm: str, seed: int = 0, receivers: list[int] | None = None) -> Schedule:
    """Schedule with one of ALGORITHMS; `seed` drives RRS and RRSP. `receivers` forces the
    receiver order of a receiver-first algorithm (one node per delivery). Raises OptionsError
    unless 0 <= seed < 2^64."""
    seed = check_seed(seed)
    inst = load_instance(instance)
    try:
        return Schedule(_core.multicast_schedule(inst._core, algorithm, seed, receivers))
    except _core.OptionsError as exc:
        raise option_error(exc) from None
    except _core.InputError as exc:
        raise with_source(exc, inst.source) from None


def check(instance: Instance, sched: Schedule) -> str | None:
    """Check a schedule against every rule of the model; None when it is valid."""
    return _core.multicast_check(instance._core, sched._core)


def execute(instance: Instance, sched: Schedule, model: str = "contention_free") -> Result:
    """Replay the schedule on the engine (per-message overheads S and R, transmission X)."""
    try:
        return Result(_core.multicast_execute(instance._core, sched._core, model))
    except _core.OptionsError as exc:
        raise with_source(exc, "--execute", "") from None
    except _core.InputError as exc:
        raise with_source(exc, instance.source) from None


def generate(
    nodes: int,
    pattern: str = "all_to_all",
    sizes: str = "small",
    network: str = "fast",
    sources: int | None = None,
    destinations: int | None = None,
    source: int | None = None,
    seed: int = 0,
) -> Instance:
    """A random instance with the settings of §7 (seeded).

    `network`: "fast" (1 Gbps on every link), "slow" (155 Mbps) or "mixed" (each pair's link 1 Gbps
    or 155 Mbps with probability 1/2; the nodes and multicasts are those of "fast" with that seed).
    Raises OptionsError unless 0 <= seed < 2^64."""
    seed = check_seed(seed)
    if pattern == "broadcast":
        pat: Any = {"broadcast": {"source": source}}
    elif pattern == "all_to_all":
        pat = "all_to_all"
    elif pattern == "random":
        pat = {"random": {"sources": sources if sources is not None else max(1, nodes // 4), "destinations": destinations}}
    else:
        raise input_error(_core.OptionsError, "--pattern", "", f"unknown pattern `{pattern}` (known: {', '.join(PATTERNS)})")
    params = {"nodes": nodes, "pattern": pat, "sizes": sizes, "network": network}
    try:
        return Instance(_core.multicast_generate(json.dumps(params), seed), f"<generated seed={seed}>")
    except _core.OptionsError as exc:
        raise option_error(exc) from None
