"""The Python API: load platforms and traces, replay, inspect results.

Files are read here (JSON, or TOML for hand-written platforms); parsing, validation
and simulation happen in the Rust core.
"""

from __future__ import annotations

import json
from functools import cached_property
from os import PathLike
from pathlib import Path
from typing import Any, Union

import pandas as pd

from . import _core
from ._errors import find_unserialisable, input_error, option_error, with_source

Source = Union[str, Path, dict]


def read_input(source: Any, error: type[_core.InputError]) -> tuple[str, str, str]:
    """(text, name for error messages, format) of a path or an in-memory dict.

    The format is "toml" for a .toml file, "json" for any other file, and "dict" for a
    dict (JSON text made here, whose positions mean nothing to the user). Anything that
    cannot be read raises `error` with .source, .field and .reason set."""
    if isinstance(source, dict):
        try:
            return json.dumps(source, allow_nan=False), "<dict>", "dict"
        except (TypeError, ValueError, RecursionError):
            field, reason = find_unserialisable(source) or ("", "cannot be written as JSON")
            raise input_error(error, "<dict>", field, reason) from None
    if not isinstance(source, (str, PathLike)):
        raise input_error(error, f"<{type(source).__name__}>", "",
                          f"expected a file path or a dict, got {type(source).__name__}")
    path = Path(source)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise input_error(error, str(path), "", f"cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # e.g. a NUL character in the path
        raise input_error(error, str(path), "", f"cannot read: {exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise input_error(error, str(path), "", f"not UTF-8 text (byte {exc.start} is {raw[exc.start]:#04x})") from None
    return text, str(path), "toml" if path.suffix.lower() == ".toml" else "json"


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
    text, name, fmt = read_input(source, _core.PlatformError)
    return Platform(_core.load_platform(text, name, fmt), name)


def load_trace(source: Source | Trace) -> Trace:
    """Load a trace from a JSON file path or a dict; raises TraceError."""
    if isinstance(source, Trace):
        return source
    text, name, fmt = read_input(source, _core.TraceError)
    return Trace(_core.load_trace(text, name, fmt), name)


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
    try:
        if model is not None:
            _core.check_model(p._core, model)
        core = _core.simulate(p._core, t._core, model=model, placement=placement, seed=seed)
    except _core.InputError as exc:
        raise name_source(exc, p, t) from None
    return Result(core)


def name_source(exc: _core.InputError, platform: Platform, trace: Trace) -> _core.InputError:
    """A replay error names what it is about: the option for an OptionsError, the trace
    for a deadlock or a placement (the trace's ranks and `placement` list), the platform
    for a PlatformError."""
    if isinstance(exc, _core.OptionsError):
        return option_error(exc)
    if isinstance(exc, _core.PlatformError):
        return with_source(exc, platform.source)
    return with_source(exc, trace.source)
