"""The Python API: load platforms and traces, replay, inspect results.

Files are read here (JSON, or TOML for hand-written platforms); parsing, validation
and simulation happen in the Rust core.
"""

from __future__ import annotations

import json
import tomllib
from functools import cached_property
from pathlib import Path
from typing import Any, Union

import pandas as pd

from . import _core

Source = Union[str, Path, dict]


def read_input(source: Source, error: type[Exception]) -> tuple[str, str]:
    """Return (JSON text, name for error messages) for a path or an in-memory dict."""
    if isinstance(source, dict):
        return json.dumps(source), "<dict>"
    path = Path(source)
    try:
        raw = path.read_text()
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    if path.suffix.lower() == ".toml":
        try:
            return json.dumps(tomllib.loads(raw)), str(path)
        except tomllib.TOMLDecodeError as exc:
            raise error(f"{path}: malformed TOML: {exc}") from None
    return raw, str(path)


class Platform:
    """A validated platform (hosts and network)."""

    def __init__(self, core: _core.Platform, source: str) -> None:
        self._core = core
        self.source = source

    @property
    def host_names(self) -> list[str]:
        return self._core.host_names

    @property
    def model(self) -> str:
        return self._core.model

    def __len__(self) -> int:
        return len(self._core)

    def __repr__(self) -> str:
        return f"Platform({self.source!r}, hosts={len(self)}, model={self.model!r})"


class Trace:
    """A validated trace (one op list per rank, collectives lowered to messages)."""

    def __init__(self, core: _core.Trace, source: str) -> None:
        self._core = core
        self.source = source

    @property
    def n_ranks(self) -> int:
        return self._core.n_ranks

    @property
    def n_ops(self) -> int:
        return self._core.n_ops

    def __repr__(self) -> str:
        return f"Trace({self.source!r}, ranks={self.n_ranks}, ops={self.n_ops})"


def load_platform(source: Source | Platform) -> Platform:
    """Load a platform from a JSON/TOML file path or a dict; raises PlatformError."""
    if isinstance(source, Platform):
        return source
    text, name = read_input(source, _core.PlatformError)
    return Platform(_core.load_platform(text, name), name)


def load_trace(source: Source | Trace) -> Trace:
    """Load a trace from a JSON file path or a dict; raises TraceError."""
    if isinstance(source, Trace):
        return source
    text, name = read_input(source, _core.TraceError)
    return Trace(_core.load_trace(text, name), name)


class Result:
    """Outcome of a replay: makespan, per-rank and per-message data."""

    def __init__(self, core: _core.SimResult) -> None:
        self._core = core

    @property
    def makespan(self) -> float:
        """Time the last rank finished (s)."""
        return self._core.makespan

    @property
    def model(self) -> str:
        return self._core.model

    @cached_property
    def messages(self) -> pd.DataFrame:
        """One row per message: src_rank, dst_rank, src_host, dst_host, bytes, tag, op, start, end."""
        return pd.DataFrame(self._core.message_columns())

    @cached_property
    def ranks(self) -> pd.DataFrame:
        """One row per rank: rank, host, end, compute_seconds, blocked_seconds."""
        return pd.DataFrame(self._core.rank_columns())

    @cached_property
    def timeline(self) -> pd.DataFrame:
        """Intervals per rank: kind is compute, sleep, overhead (message CPU time), wait or comm."""
        return pd.DataFrame(self._core.timeline_columns())

    def to_json(self) -> str:
        """The `--json` document: makespan, model, ranks, messages."""
        return self._core.to_json()

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self.to_json())

    def __repr__(self) -> str:
        return f"Result(makespan={self.makespan!r}, messages={len(self.messages)})"


def simulate(
    platform: Source | Platform,
    trace: Source | Trace,
    model: str | None = None,
    placement: str = "explicit",
    seed: int = 0,
) -> Result:
    """Replay `trace` on `platform`.

    model: sharing model (default: the platform's `network.model`).
    placement: explicit (the trace's `placement`, else rank i on host i), rrn, rrp or random.
    seed: seed of the random placement.
    """
    p = load_platform(platform)
    t = load_trace(trace)
    return Result(_core.simulate(p._core, t._core, model=model, placement=placement, seed=seed))
