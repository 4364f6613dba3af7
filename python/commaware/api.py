"""The Python API: load platforms and traces, replay, inspect results.

Files are read here (JSON, or TOML for hand-written platforms); parsing, validation
and simulation happen in the Rust core.
"""

from __future__ import annotations

import gc
import gzip
import json
import lzma
import math
import os
import re
import shutil
import time
from contextlib import contextmanager
from functools import cached_property
from os import PathLike
from pathlib import Path
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Union

from . import _core
from ._errors import E, find_unserialisable, input_error, option_error, with_source
from .output import on_delivery, partial_path, put_in_place

if TYPE_CHECKING:
    import numpy.typing as npt
    import pandas as pd

Source = Union[str, Path, dict]


#: The environment variables that bound a text input, and their defaults: the size of the
#: text once decompressed (a trace's files together) and the length of one line.
MAX_INPUT_ENV, MAX_INPUT_DEFAULT = "COMMAWARE_MAX_INPUT_BYTES", 1 << 30
MAX_LINE_ENV, MAX_LINE_DEFAULT = "COMMAWARE_MAX_LINE_BYTES", 1 << 24
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
#: Decompressed bytes read at a time.
_CHUNK = 1 << 20
#: A UTF-8 byte-order mark: accepted at the start of any text input, and dropped.
BOM = "\ufeff"


def input_limit(variable: str, default: int) -> int:
    """The byte count `variable` sets in the environment (a whole number, with an optional
    K, M, G or T suffix, powers of 1,024: `2G`), else `default`; another value is an
    OptionsError naming the variable."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    m = re.fullmatch(r"(\d{1,15})\s*([KMGT]?)(?:i?B)?", text, re.IGNORECASE)
    if m is None or int(m.group(1)) == 0:
        raise input_error(_core.OptionsError, variable, "",
                          f"expected a byte count > 0 such as 1073741824 or 1G, got {text[:100]!r}")
    return int(m.group(1)) * _SIZE_UNITS[m.group(2).upper()]


def fmt_bytes(n: int) -> str:
    """`512 B`, `16 MiB`, `1.5 GiB`: a limit as the messages show it."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n} B"


def read_text_file(path: Path, error: type[_core.InputError], *, decompress: bool, used: int = 0,
                   lenient: bool = False) -> str:
    """The UTF-8 text of the file at `path`, read in bounded chunks: a .gz or .xz file (when
    `decompress`) is decompressed as it is read, and reading stops with `error`, naming the file
    and the limit, as soon as the text exceeds COMMAWARE_MAX_INPUT_BYTES (with the `used`
    bytes of the trace's other files) or, unless the text is a JSON document
    (it starts with `{` or `[`), a line exceeds COMMAWARE_MAX_LINE_BYTES: a small archive
    holding gigabytes costs no more than the limits, and a NUL byte (a file of zeros, a binary
    file) stops it at once. A leading byte-order mark is dropped;
    `lenient` shows bytes that are not UTF-8 as U+FFFD instead of refusing them."""
    name = str(path)
    max_total = input_limit(MAX_INPUT_ENV, MAX_INPUT_DEFAULT)
    others = " with the trace's other files" if used else ""
    max_line = input_limit(MAX_LINE_ENV, MAX_LINE_DEFAULT)

    def bad(field: str, reason: str) -> _core.InputError:
        return input_error(error, name, field, reason)

    suffix = path.suffix.lower() if decompress else ""
    opener: Any = {".gz": gzip.open, ".xz": lzma.open}.get(suffix, open)
    buf = bytearray()
    try:
        with opener(path, "rb") as stream:
            if opener is open:
                size = os.fstat(stream.fileno()).st_size
                if used + size > max_total:
                    raise bad("", f"the text is more than {fmt_bytes(max_total)}{others} (the limit; "
                                  f"{MAX_INPUT_ENV} raises it)")
            lines_checked: bool | None = None  # None until the first byte that is not blank
            line, carry = 1, 0  # the current line's number and the bytes of it read so far
            step = min(_CHUNK, max_line)
            while chunk := stream.read(step):
                # No text holds a NUL byte: a file of zeros (the usual decompression bomb, or a
                # binary file) stops at its first chunk, whatever its format.
                nul = chunk.find(0)
                if nul >= 0:
                    raise bad("", f"byte {len(buf) + nul} is NUL: not a text file")
                buf += chunk
                if used + len(buf) > max_total:
                    what = "once decompressed " if opener is not open else ""
                    raise bad("", f"the text is {what}more than {fmt_bytes(max_total)}{others} (the limit; "
                                  f"{MAX_INPUT_ENV} raises it)")
                if lines_checked is None:
                    start = buf.lstrip(b" \t\r\n")
                    if start.startswith(BOM.encode()):
                        start = start[3:].lstrip(b" \t\r\n")
                    if start:  # a TOML file may start with `[table]`
                        lines_checked = start[:1] not in (b"{", b"[") or ".toml" in map(str.lower, path.suffixes)
                if lines_checked is False:
                    continue
                first = chunk.find(b"\n")
                if first < 0:
                    carry += len(chunk)
                else:
                    carry += first
                    # A chunk is no longer than the limit: only a line across chunks can exceed it.
                    if carry <= max_line:
                        line += chunk.count(b"\n")
                        carry = len(chunk) - chunk.rfind(b"\n") - 1
                if carry > max_line:
                    raise bad(f"line {line}", f"longer than {fmt_bytes(max_line)} (the limit; {MAX_LINE_ENV} "
                                              "raises it)")
    except OSError as exc:  # includes gzip.BadGzipFile
        raise bad("", f"cannot read: {exc.strerror or exc}") from None
    except (lzma.LZMAError, EOFError, ValueError) as exc:  # ValueError: e.g. a NUL character in the path
        raise bad("", f"cannot read: {exc}") from None
    try:
        text = buf.decode("utf-8", errors="replace" if lenient else "strict")
    except UnicodeDecodeError as exc:
        raise bad("", f"not UTF-8 text (byte {exc.start} is {buf[exc.start]:#04x})") from None
    del buf
    return text[1:] if text.startswith(BOM) else text


def parse_json(text: str, name: str, error: type[E]) -> Any:
    """The JSON value of `text` (read from `name`); malformed JSON, or JSON nested more
    deeply than the core's readers allow (`_core.MAX_NESTING`), raises `error`."""
    deep = _core.json_too_deep(text)
    if deep is not None:
        raise input_error(error, name, "", deep)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:  # positions as the core gives them
        raise input_error(error, name, "", f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except ValueError as exc:
        raise input_error(error, name, "", f"malformed JSON: {exc}") from None


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
    text = read_text_file(path, error, decompress=False)
    return text, str(path), "toml" if path.suffix.lower() == ".toml" else "json"


def read_json_object(source: Any, error: type[_core.InputError], expected: str) -> tuple[dict[str, Any], str]:
    """(the JSON object, name for error messages) of a path or dict, read by `read_input`;
    malformed JSON or another JSON value raises `error` (`expected` says what was wanted)."""
    text, name, _ = read_input(source, error)
    doc = parse_json(text, name, error)
    if not isinstance(doc, dict):
        raise input_error(error, name, "", f"expected a JSON object {expected}")
    return doc, name


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

    def route(self, src: str, dst: str) -> tuple[float, list[tuple[str, float, float, str]]]:
        """The route from host `src` to host `dst` over the platform's topology (its
        `network.topology`, or a SimGrid XML file's zones): its latency (s) and its links in the
        order a message crosses them, each (name, bandwidth B/s, latency s, sharing).
        PlatformError without a topology or for an unknown host."""
        return _core.platform_route(self._core, src, dst, self.source)

    def export(self, format: str = "simgrid") -> str:
        """The platform in another format: ``simgrid`` (a SimGrid 4.1 XML platform file that
        SimGrid loads with the same hosts, links and routes) or ``json`` (our JSON platform with
        a ``network.topology``, for a platform that is one SimGrid cluster). What a format
        cannot express is a PlatformError saying why (docs/topologies.md, "Exporting")."""
        return _core.platform_export(self._core, format, self.source)

    def links(self) -> list[tuple[str, float, float, str]]:
        """Every link of the platform's `network.topology`: (name, bandwidth B/s, latency s,
        sharing). PlatformError without a topology."""
        return _core.platform_links(self._core)

    def summary(self, ends: int = 3) -> dict[str, Any]:
        """What the platform is made of (`commaware platform show`): `kind` (`star` without a
        topology), `hosts` (count and the first and last `ends` names), `links` (count, SHARED,
        FATPIPE), `zones`, `parameters` and `simgrid` (the cluster's parameters and SimGrid's
        `topology`/`topo_parameters` they equal; None for graphs and stars),
        `total_bandwidth_bytes_per_s` (every link's bandwidth summed), `diameter_hops` (the most
        links on a route between two hosts) and `bisection_bandwidth_bytes_per_s`, each None
        where not given, with `diameter_how` / `bisection_how` saying how it was found or why
        not, and `simgrid_config`, each setting of a SimGrid file's `<config>` (`setting`,
        `value`, `applied_as`: the field it set, or why it changes nothing), and
        `simgrid_unmodelled`, what such a file holds that commaware accepts without modelling
        (`what`, `count`, `first_at`: energy and user `<prop>`s, power states after the first),
        and `routing`: its `name`, `seed`, `how` (SimGrid's routing, or commaware's own) and
        the routings `available` on this topology (docs/topologies.md, "platform show";
        docs/routing.md)."""
        return _core.platform_summary(self._core, ends)

    def __repr__(self) -> str:
        return f"Platform({self.source!r}, hosts={len(self)}, model={self.model!r})"


class Trace:
    """A validated trace (one op list per rank, collectives lowered to messages)."""

    def __init__(self, core: _core.Trace, source: str) -> None:
        self._core = core
        self.source = source
        #: For an OTF2 archive: events read, records skipped (other paradigms, non-rank
        #: locations) and alltoallv/w calls whose totals were spread evenly; else None.
        self.otf2_stats: dict[str, int] | None = None
        #: For a DUMPI trace: calls read, calls whose time counts as compute, calls with a null
        #: peer or on MPI_COMM_SELF, collectives read as in place; else None.
        self.dumpi_stats: dict[str, int] | None = None
        #: Wall-clock seconds `load_trace` took (reading, parsing, validating); 0 when unknown.
        self.load_seconds = 0.0

    @property
    def n_ranks(self) -> int:
        return self._core.n_ranks

    @property
    def n_ops(self) -> int:
        return self._core.n_ops

    @property
    def derived_datatype_ops(self) -> int:
        """Ops of a SimGrid TI trace sized by a derived datatype (id -1), which carry
        `derived_datatype_bytes` per element (0 unless `load_trace` was told otherwise, as in
        SimGrid's replay); 0 for other traces."""
        return self._core.derived_datatype_ops

    def summary(self) -> dict[str, Any]:
        """What `commaware trace show --json` prints: ranks, ops per kind, point-to-point bytes
        per rank, calls and bytes per collective kind as the trace states them (schema:
        `commaware schema trace-summary`). See `summarize_trace`."""
        return summarize_trace(self)[0]

    def comm_matrix(self) -> CommMatrix:
        """The rank-to-rank matrix of point-to-point bytes (sparse; see `summarize_trace`)."""
        matrix = summarize_trace(self, matrix=True)[1]
        assert matrix is not None
        return matrix

    def __repr__(self) -> str:
        return f"Trace({self.source!r}, ranks={self.n_ranks}, ops={self.n_ops})"


class CommMatrix:
    """Point-to-point bytes from rank to rank, as sparse triplets: `src[i]` sent `bytes[i]` bytes
    in all to `dst[i]` (world ranks; pairs that exchanged no message are left out), sorted by
    sender then receiver. Memory follows the pairs that talk, at most `n_ranks` squared."""

    def __init__(self, n_ranks: int, columns: dict[str, bytes]) -> None:
        import numpy as np

        self.n_ranks = n_ranks
        self.src = np.frombuffer(columns["src"], dtype="u4")
        self.dst = np.frombuffer(columns["dst"], dtype="u4")
        self.bytes = np.frombuffer(columns["bytes"], dtype="f8")

    def dense(self, per_cell: int = 1) -> Any:
        """A square numpy array of bytes, sender rows by receiver columns, with `per_cell`
        consecutive ranks summed into one cell per axis (ceil(n_ranks / per_cell) cells)."""
        import numpy as np

        if per_cell < 1:
            raise ValueError("per_cell must be at least 1")
        cells = -(-self.n_ranks // per_cell)
        flat = (self.src.astype(np.int64) // per_cell) * cells + self.dst.astype(np.int64) // per_cell
        return np.bincount(flat, weights=self.bytes, minlength=cells * cells).reshape(cells, cells)

    def __repr__(self) -> str:
        return f"CommMatrix(ranks={self.n_ranks}, pairs={len(self.src)})"


def summarize_trace(trace: Trace, matrix: bool = False) -> tuple[dict[str, Any], CommMatrix | None]:
    """One pass of the core over `trace`'s ops: the summary (`Trace.summary`) and, with `matrix`,
    the `CommMatrix` of point-to-point bytes.

    Collectives are counted as the trace states them, with MPI's count convention (the buffer
    of a bcast or allreduce, the block per destination of an alltoall), not as the messages a
    collective algorithm would make of them; they are not in the matrix."""
    text, columns = _core.trace_summary(trace._core, matrix)
    summary = json.loads(text)
    return summary, None if columns is None else CommMatrix(summary["ranks"], columns)


def load_platform(source: Source | Platform) -> Platform:
    """Load a platform from a JSON/TOML file path, a SimGrid XML platform file (``.xml``,
    version 4.1) or a dict; raises PlatformError."""
    if isinstance(source, Platform):
        return source
    text, name, fmt = read_input(source, _core.PlatformError)
    if not isinstance(source, dict) and Path(source).suffix.lower() == ".xml":
        return Platform(_core.platform_from_simgrid_xml(text, name), name)
    simgrid = None
    if "simgrid_platform" in text:
        simgrid = _simgrid_platform_file(source, text, name, fmt)
    return Platform(_core.load_platform(text, name, fmt, simgrid), name)


def _simgrid_platform_file(source: Source, text: str, name: str, fmt: str) -> tuple[str, str] | None:
    """(text, path) of the SimGrid file a platform's `simgrid_platform` names, relative to the
    platform file's folder (the working directory for a dict); None when the field is absent
    or not a string (the core then names what is wrong)."""
    if isinstance(source, dict):
        doc: Any = source
    elif fmt == "toml":
        import tomllib

        if _core.toml_too_deep(text) is not None:
            return None  # before tomllib recurses; the core reports it, with its position
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None  # the core reports it, with its position
    else:
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            return None
    field = doc.get("simgrid_platform") if isinstance(doc, dict) else None
    if not isinstance(field, str):
        return None
    base = Path.cwd() if isinstance(source, dict) else Path(source).parent
    path = base / field
    if not path.is_file():
        raise input_error(_core.PlatformError, name, "simgrid_platform",
                          f"no such file {str(path)!r} (a path relative to the platform file's folder)")
    return read_text_file(path, _core.PlatformError, decompress=False), str(path)


TRACE_FORMATS = ("auto", "json", "toml", "ti", "otf2", "dumpi", "goal")
#: Seconds per GOAL time unit unless told otherwise: LogGOPSim's nanosecond.
GOAL_UNIT = 1e-9
#: Where to find the OTF2 C library instead of looking for it (a path; tests set it).
OTF2_LIBRARY_ENV = "COMMAWARE_OTF2_LIBRARY"
OTF2_INSTALL = "pip install otf2 (its wheel ships the OTF2 library), or Debian's libopen-trace-format2-dev"


def otf2_library(source: str) -> str:
    """Path of the OTF2 C library the core loads: $COMMAWARE_OTF2_LIBRARY, else the `otf2`
    wheel's bundled one (its `_otf2` module exports OTF2's C functions), else the system's
    `libotf2.so`/`libopen-trace-format2.so`. OptionsError naming `source` if there is none."""
    import ctypes.util
    import importlib.util

    forced = os.environ.get(OTF2_LIBRARY_ENV)
    if forced:
        return forced
    spec = importlib.util.find_spec("_otf2")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            found = sorted(Path(folder).glob("_otf2*.so"))
            if found:
                return str(found[0])
    for name in ("otf2", "open-trace-format2"):
        lib = ctypes.util.find_library(name)
        if lib:
            return lib
    raise input_error(_core.OptionsError, source, "", f"reading or writing OTF2 needs the OTF2 library: {OTF2_INSTALL}")


def _load_otf2(path: Path, traced_speed: float | None, in_place: Sequence[str]) -> Trace:
    core, stats = _core.load_trace_otf2(str(path), otf2_library(str(path)), traced_speed, list(in_place))
    trace = Trace(core, str(path))
    trace.otf2_stats = stats
    return trace


def _load_dumpi(path: Path, traced_speed: float | None) -> Trace:
    core, stats = _core.load_trace_dumpi(str(path), traced_speed)
    trace = Trace(core, str(path))
    trace.dumpi_stats = stats
    return trace


def dumpi_meta(path: Path) -> Path | None:
    """The DUMPI `.meta` file `path` names: itself (a *.meta file with DUMPI's `numprocs=` and
    `fileprefix=` lines) or, for a folder, the one such file in it; else None."""
    if path.is_dir():
        found = [m for m in sorted(path.glob("*.meta")) if dumpi_meta(m)]
        return found[0] if len(found) == 1 else None
    if path.suffix.lower() != ".meta" or not path.is_file():
        return None
    with open(path, "rb") as f:
        head = f.read(4096)
    return path if b"numprocs=" in head and b"fileprefix=" in head else None


def _is_otf2_anchor(path: Path) -> bool:
    """An OTF2 anchor file: named *.otf2 with OTF2's magic in its header."""
    if path.suffix.lower() != ".otf2" or not path.is_file():
        return False
    with open(path, "rb") as f:
        return b"OTF2" in f.read(16)
#: A SimGrid time-independent line: a rank, then an action word.
_TI_LINE = re.compile(r"^\s*\d+\s+[A-Za-z_]\w*(\s|$)")


def _read_text(path: Path, error: type[_core.InputError], used: int = 0) -> str:
    """The UTF-8 text of `path`, decompressed when it ends in .gz or .xz (`read_text_file`)."""
    return read_text_file(path, error, decompress=True, used=used)


def _first_line(text: str) -> tuple[int, str] | None:
    """(1-based number, content) of the first line that is neither blank nor a # comment."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return number, stripped
    return None


def _is_index(text: str, base: Path) -> bool:
    first = _first_line(text)
    if first is None or _TI_LINE.match(first[1]) or first[1][0] in "{[":
        return False
    try:
        return (base / first[1]).is_file()
    except (OSError, ValueError):  # a name too long, a NUL: not a file
        return False


def _load_ti_ranks(files: list[tuple[int, Path]], name: str, derived_datatype_bytes: float | None) -> Trace:
    parts, used = [], 0
    for rank, path in files:  # within the size limit together
        text = _read_text(path, _core.TraceError, used)
        used += len(text)
        parts.append((rank, text, str(path)))
    return Trace(_core.load_trace_ti_ranks(parts, name, derived_datatype_bytes), name)


def _load_ti_index(text: str, path: Path, derived_datatype_bytes: float | None) -> Trace:
    """An index file: one per-rank trace file a line (rank = position), relative to it."""
    files: list[tuple[int, Path]] = []
    for number, line in enumerate(text.splitlines(), 1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        target = path.parent / entry
        try:
            found = target.is_file()
        except (OSError, ValueError):
            found = False
        if not found:
            raise input_error(_core.TraceError, str(path), f"line {number}", f"{entry}: no such trace file")
        files.append((len(files), target))
    if not files:
        raise input_error(_core.TraceError, str(path), "", "the index lists no trace files")
    return _load_ti_ranks(files, str(path), derived_datatype_bytes)


def _load_ti_dir(path: Path, derived_datatype_bytes: float | None) -> Trace:
    """A directory of per-rank *.txt files (also .txt.gz/.txt.xz); each file's rank is the
    rank its first action line starts with."""
    files: list[tuple[int, Path]] = []
    candidates = sorted(p for p in path.iterdir()
                        if p.is_file() and any(p.name.lower().endswith(s) for s in (".txt", ".txt.gz", ".txt.xz")))
    if not candidates:
        raise input_error(_core.TraceError, str(path), "", "the directory has no *.txt trace files")
    for f in candidates:
        first = _first_line(_read_text(f, _core.TraceError))
        if first is None or not _TI_LINE.match(first[1]):
            raise input_error(_core.TraceError, str(f), f"line {first[0]}" if first else "",
                              "expected a time-independent trace line (RANK ACTION ...)")
        files.append((int(first[1].split()[0]), f))
    return _load_ti_ranks(files, str(path), derived_datatype_bytes)


def is_goal_file(path: Path) -> bool:
    """Whether `path` looks like GOAL text: a *.goal file, or a file whose first line that is
    not blank or a `//` comment is `num_ranks N`."""
    if path.suffix.lower() == ".goal":
        return True
    try:
        with path.open("rb") as f:
            for raw in f:
                line = raw.strip()
                if line and not line.startswith(b"//"):
                    return line.split()[0] == b"num_ranks"
    except OSError:
        return False
    return False


def names_goal(source: object, format: str) -> bool:
    """Whether `source` is to be read as GOAL: a path with `format` "goal", or "auto" on an
    existing file that `is_goal_file`."""
    return isinstance(source, (str, PathLike)) and (format == "goal" or (
        format == "auto" and Path(source).is_file() and is_goal_file(Path(source))))


def read_goal(path: str | PathLike[str]) -> _core.GoalSchedule:
    """The core's schedule of the GOAL file at `path` (TraceError when there is none)."""
    if not Path(path).is_file():
        raise input_error(_core.TraceError, str(path), "", "no such GOAL file")
    return _core.load_goal(str(path), str(path))


def load_trace(source: Source | Trace, format: str = "auto", *, derived_datatype_bytes: float | None = None,
               traced_speed: float | None = None, in_place: Sequence[str] = (), goal_calc_unit: float = GOAL_UNIT) -> Trace:
    """Load a trace from a file path or a dict; raises TraceError.

    `format`: "json", "toml", "ti" (SimGrid time-independent: one shared file whose lines
    start with the rank, an index file listing one file per rank, or a directory of
    per-rank *.txt files; .gz and .xz are decompressed) or "auto" (TI when the first line
    is `RANK ACTION ...` or names an existing file, or for a directory; else TOML for a
    .toml file and JSON otherwise).

    `derived_datatype_bytes`: bytes per element of a TI trace's derived datatype (written as
    id -1 by `smpirun -trace-ti`; a whole number from 0 to 2^31 - 1, else OptionsError). By
    default 0, as SimGrid's replay reads it; `Trace.derived_datatype_ops` counts the ops it
    sized.

    "otf2" (or "auto" on an anchor file named *.otf2) reads an OTF2 archive (Score-P's
    format) through the OTF2 library (`otf2_library`): compute between MPI calls is kept as
    seconds, or as flops at `traced_speed` flops/s (> 0, else OptionsError); `in_place` names
    the collectives among "allreduce", "allgather", "alltoall" and "reduce_scatter_block" that
    the program called with MPI_IN_PLACE (Score-P's byte counts say so for the other
    collectives, not for these; an unknown name is an OptionsError); what it skipped or
    inferred is in `Trace.otf2_stats`.

    "dumpi" (or "auto" on a *.meta file of sst-dumpi, or a folder holding one) reads a DUMPI
    trace: the `.meta` file and the `PREFIX-NNNN.bin` file of each rank beside it, natively.
    Compute between MPI calls is kept as seconds, or as flops at `traced_speed`; calls that
    cannot be replayed (cancels, one-sided, intercommunicators, ...) are refused
    with their count (TraceError). What it counted is in `Trace.dumpi_stats`.

    "goal" (or "auto" on a *.goal file or one whose first line is `num_ranks N`) reads a GOAL
    schedule (LogGOPSim's text): each rank's `send`, `recv` and `calc` operations become
    isend, irecv and compute ops (`calc N` lasts N × `goal_calc_unit` seconds), which the
    replay starts once their `requires` ended and their `irequires` started
    (docs/traces.md, "GOAL")."""
    if isinstance(source, Trace):
        return source
    started = time.perf_counter()
    if names_goal(source, format):
        schedule = read_goal(source)  # type: ignore[arg-type]
        try:
            trace = Trace(_core.goal_trace(schedule, float(goal_calc_unit), str(source)), str(source))
        except _core.OptionsError as exc:
            raise input_error(_core.OptionsError, "--goal-calc-unit", "", exc.reason) from None
        trace.load_seconds = time.perf_counter() - started
        return trace
    trace = _load_trace(source, format, derived_datatype_bytes, traced_speed, in_place)
    trace.load_seconds = time.perf_counter() - started
    return trace


def _load_trace(source: Source, format: str, derived_datatype_bytes: float | None, traced_speed: float | None,
                in_place: Sequence[str] = ()) -> Trace:
    if format not in TRACE_FORMATS:
        raise input_error(_core.TraceError, str(source), "", f"unknown trace format {format!r} "
                          f"(known: {', '.join(TRACE_FORMATS)})")
    derived = derived_datatype_bytes
    if traced_speed is not None and not (math.isfinite(traced_speed) and traced_speed > 0):
        raise input_error(_core.OptionsError, "--traced-speed", "",
                          f"must be a positive number of flops per second, got {traced_speed}")
    try:
        if isinstance(source, (str, PathLike)) and (format == "otf2" or (format == "auto" and _is_otf2_anchor(Path(source)))):
            path = Path(source)
            if not path.is_file():
                raise input_error(_core.TraceError, str(path), "", "no such OTF2 anchor file")
            return _load_otf2(path, traced_speed, in_place)
        if isinstance(source, (str, PathLike)) and format in ("dumpi", "auto"):
            meta = dumpi_meta(Path(source))
            if meta is not None:
                return _load_dumpi(meta, traced_speed)
            if format == "dumpi":
                raise input_error(_core.TraceError, str(source), "", "not a DUMPI .meta file (numprocs= and fileprefix= "
                                  "lines), nor a folder holding one")
        if isinstance(source, (str, PathLike)) and format in ("auto", "ti"):
            path = Path(source)
            if path.is_dir():
                return _load_ti_dir(path, derived)
            text = _read_text(path, _core.TraceError)
            first = _first_line(text)
            if format == "ti" or (first is not None and _TI_LINE.match(first[1])) or _is_index(text, path.parent):
                if first is not None and not _TI_LINE.match(first[1]):
                    return _load_ti_index(text, path, derived)
                return Trace(_core.load_trace(text, str(path), "ti", derived), str(path))
            suffixes = [s.lower() for s in path.suffixes]
            fmt = "toml" if ".toml" in suffixes[-2:] else "json"
            return Trace(_core.load_trace(text, str(path), fmt, derived), str(path))
        text, name, fmt = read_input(source, _core.TraceError)
        if format in ("json", "toml") and fmt != "dict":
            fmt = format
        return Trace(_core.load_trace(text, name, fmt, derived), name)
    except _core.OptionsError as exc:
        raise option_error(exc) from None


#: numpy dtypes of the byte columns the core hands over.
MESSAGE_DTYPES = {"src_rank": "u4", "dst_rank": "u4", "src_host": "u4", "dst_host": "u4", "bytes": "f8",
                  "tag": "i8", "op": "u1", "start": "f8", "end": "f8", "penalty": "f8", "conflicts": "u1"}

#: Conflict classes of paper 004 §IV-A, by bit (the `conflicts` column's categories are
#: every combination, joined with "+", indexed by the bits; "" is no conflict).
CONFLICT_CLASSES = ("outgoing", "incoming", "in-out")
CONFLICT_SETS = ["+".join(c for k, c in enumerate(CONFLICT_CLASSES) if bits >> k & 1) for bits in range(8)]
TIMELINE_DTYPES = {"rank": "u4", "kind": "u1", "start": "f8", "end": "f8"}


def message_frame(columns: dict[str, bytes], host_names: list[str]) -> pd.DataFrame:
    """A DataFrame of messages from the core's byte columns (no per-message Python objects).

    Hosts and ops are categoricals; `tag` is a nullable integer, missing for collectives.
    Under a penalty model (paper 004 §VI-A), `penalty` is a message's effective penalty and
    `conflicts` the classes it was in ("outgoing+in-out"; "" none); both are missing
    under other models and for intra-node messages.
    """
    import numpy as np
    import numpy.typing as npt
    import pandas as pd

    col = {k: np.frombuffer(v, dtype=MESSAGE_DTYPES[k]) for k, v in columns.items()}
    tag = col["tag"]
    return pd.DataFrame({
        "src_rank": col["src_rank"].astype(np.int64),
        "dst_rank": col["dst_rank"].astype(np.int64),
        "src_host": pd.Categorical.from_codes(col["src_host"].astype(np.int64), categories=host_names),
        "dst_host": pd.Categorical.from_codes(col["dst_host"].astype(np.int64), categories=host_names),
        "bytes": col["bytes"],
        "tag": pd.arrays.IntegerArray(tag.copy(), tag < 0),
        "op": pd.Categorical.from_codes(col["op"].astype(np.int64), categories=list(_core.OP_NAMES)),
        "start": col["start"],
        "end": col["end"],
        "penalty": col["penalty"],
        # 255 (no conflict graph) is out of range: a missing value.
        "conflicts": pd.Categorical.from_codes(np.where(col["conflicts"] == 255, -1, col["conflicts"].astype(np.int64)),
                                               categories=CONFLICT_SETS),
    })


#: The formats of the per-message table (`MessageFile`).
MESSAGE_FORMATS = (".parquet", ".csv")


class MessageFile:
    """Writes message batches (DataFrames from `commaware.simulate(on_messages=...)`) to a
    .parquet or .csv file as they arrive. Call `close()` on success, `discard()` on failure:
    the file appears only when complete."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.format = self.path.suffix.lower()
        if self.format not in MESSAGE_FORMATS:
            raise ValueError(f"{path}: the message table must be .parquet or .csv")
        self.partial = partial_path(self.path)
        self._writer: Any = None
        self.closed = False
        self.rows = 0

    def _open(self, schema: Any) -> None:
        if self.format == ".parquet":
            import pyarrow.parquet as pq

            self._writer = pq.ParquetWriter(self.partial, schema)
        else:
            import pyarrow.csv as pacsv

            self._writer = pacsv.CSVWriter(self.partial, schema)

    def __call__(self, frame: pd.DataFrame) -> None:
        import pyarrow as pa

        # One thread: pyarrow's default converts a batch this long on a thread pool created for
        # each call, whose threads a Ctrl-C in the middle of it would leave to the interpreter's
        # exit; a batch's few numeric columns convert as fast on one.
        table = pa.Table.from_pandas(frame, preserve_index=False, nthreads=1)
        if self._writer is None:
            self._open(table.schema)
        self._writer.write_table(table)
        self.rows += len(frame)

    def close(self, host_names: list[str]) -> None:
        """Finish the file (an empty table with the columns when there were no messages)."""
        if self._writer is None:
            self(message_frame({k: b"" for k in MESSAGE_DTYPES}, host_names))
        self._writer.close()
        self._writer = None
        self.closed = True
        put_in_place(self.partial, self.path)

    def discard(self) -> None:
        """Drop the partial file, if any is left (after `close`, the command's delivery owns it)."""
        if self.closed or not self.partial.exists():
            return
        if self._writer is not None:
            try:
                self._writer.close()
            except Exception:  # noqa: BLE001 - the file is dropped anyway
                pass
        self.partial.unlink(missing_ok=True)


class Result:
    """Outcome of a replay: makespan, per-rank data, and the messages and timeline it kept."""

    def __init__(self, core: _core.SimResult) -> None:
        self._core = core

    @property
    def makespan(self) -> float:
        """Time the last rank finished (s)."""
        return self._core.makespan

    @property
    def model(self) -> str:
        return self._core.model

    @property
    def host_names(self) -> list[str]:
        """The platform's host names (the categories of `messages.src_host` and `dst_host`)."""
        return self._core.host_names

    @property
    def warnings(self) -> list[str]:
        """Inputs that were accepted but had no effect (e.g. `pair_bandwidth` under `maxmin`)."""
        return self._core.warnings

    @property
    def penalty_counts(self) -> dict[str, Any] | None:
        """Under `myrinet`: component counts made (`counts`), of those estimated (`estimated`),
        of the estimates those the work bound `steps` stopped before `tolerance` (`bounded`),
        and the largest relative 95 % error of an estimated penalty (`largest_error`; None when
        unbounded). None under other models. The same as `to_dict()["penalty_counts"]`."""
        return self._core.penalty_counts

    @property
    def derived_datatype_ops(self) -> int:
        """The replayed trace's `Trace.derived_datatype_ops`."""
        return self._core.derived_datatype_ops

    @property
    def actions(self) -> int:
        """The trace's ops (`Trace.n_ops`; a TI trace's actions)."""
        return self._core.actions

    @property
    def events(self) -> int:
        """Engine steps of the replay (each a simulated time at which activities completed)."""
        return self._core.events

    @property
    def replay_seconds(self) -> float:
        """Wall-clock seconds the replay took, in the core (not the trace's loading)."""
        return self._core.replay_seconds

    @property
    def message_stats(self) -> dict[str, float]:
        """count, bytes, mean_seconds and max_seconds over all messages (always available)."""
        return self._core.message_stats()

    @cached_property
    def messages(self) -> pd.DataFrame:
        """One row per message, in the order their last byte arrived: src_rank, dst_rank,
        src_host, dst_host, bytes, tag, op, start, end. Needs ``record_messages=True``."""
        return message_frame(self._core.message_columns(), self._core.host_names)

    @cached_property
    def rank_columns(self) -> dict[str, list[Any]]:
        """The per-rank data as plain lists (rank, host, end, compute_seconds, blocked_seconds)."""
        return self._core.rank_columns()

    @cached_property
    def ranks(self) -> pd.DataFrame:
        """One row per rank: rank, host, end, compute_seconds, blocked_seconds."""
        import pandas as pd

        return pd.DataFrame(self.rank_columns)

    @cached_property
    def timeline(self) -> pd.DataFrame:
        """Intervals per rank: kind is compute, sleep, overhead (message CPU time), wait or comm.
        Needs ``record_timeline=True``."""
        import numpy as np
        import pandas as pd

        col = {k: np.frombuffer(v, dtype=TIMELINE_DTYPES[k]) for k, v in self._core.timeline_columns().items()}
        return pd.DataFrame({
            "rank": col["rank"].astype(np.int64),
            "kind": pd.Categorical.from_codes(col["kind"].astype(np.int64), categories=list(_core.INTERVAL_KINDS)),
            "start": col["start"],
            "end": col["end"],
        })

    @cached_property
    def links(self) -> pd.DataFrame:
        """One row per link (issue 28, "which link is the bottleneck"): name, bandwidth (B/s),
        bytes carried, busy_time (s with at least one flow), mean_utilisation
        (bytes / (bandwidth × makespan)), peak_utilisation (largest sum of flow rates over the
        bandwidth) and peak_flows, in the platform's link order. Needs ``link_stats=True``."""
        import pandas as pd

        return pd.DataFrame(self._link_columns()[0])

    @cached_property
    def link_utilisation(self) -> tuple[float, npt.NDArray[Any]]:
        """(bin width in s, array links × bins): each link's mean utilisation in each time bin
        from 0, rows in the order of `links`. At most 256 bins. Needs ``link_stats=True``."""
        return self._link_columns()[1]

    def _link_columns(self) -> tuple[dict[str, Any], tuple[float, npt.NDArray[Any]]]:
        return link_tables(self._core.link_columns())

    def to_json(self, load_seconds: float | None = None) -> str:
        """The `--json` document: model, messages, makespan, message_stats, ranks; with
        `load_seconds` (the trace's `Trace.load_seconds`), also `"timing"` (see `simulate`)."""
        return self._core.to_json(load_seconds)

    def to_dict(self, load_seconds: float | None = None) -> dict[str, Any]:
        return json.loads(self.to_json(load_seconds))

    def __repr__(self) -> str:
        return f"Result(makespan={self.makespan!r}, messages={self.message_stats['count']})"


def link_tables(c: dict[str, Any]) -> tuple[dict[str, Any], tuple[float, npt.NDArray[Any]]]:
    """The core's per-link byte columns (``link_columns()`` of a run) as the link table's
    columns and (bin width in s, utilisation links × bins)."""
    import numpy as np

    table: dict[str, Any] = {"name": c["name"]}
    for k in ("bandwidth", "bytes", "busy_time", "mean_utilisation", "peak_utilisation"):
        table[k] = np.frombuffer(c[k], dtype="f8")
    table["peak_flows"] = np.frombuffer(c["peak_flows"], dtype="u4").astype(np.int64)
    hist = np.frombuffer(c["histogram"], dtype="f8").reshape(len(c["name"]), c["bins"])
    return table, (float(c["bin_seconds"]), hist)


SEED_LIMIT = 2**64


def check_seed(seed: Any, source: str = "seed") -> int:
    """Return `seed` as an int if 0 <= seed < 2^64, else raise OptionsError.

    The one check of every seed (``simulate``, the multicast functions and the CLI's ``--seed``);
    `source` names where the value came from (``seed`` in the API, ``--seed`` in the CLI)."""
    if isinstance(seed, bool) or not hasattr(seed, "__index__"):
        reason = f"must be an integer, got {type(seed).__name__} {_short(seed)}"
    else:
        seed = seed.__index__()
        if 0 <= seed < SEED_LIMIT:
            return seed
        reason = f"must be between 0 and 2^64 - 1, got {_short(seed)}"
    raise input_error(_core.OptionsError, source, "", reason)


def _short(value: Any) -> str:
    """`value` for an error message: a huge integer in scientific notation, not 300 digits."""
    if isinstance(value, int) and not isinstance(value, bool) and not -10**21 < value < 10**21:
        try:
            return f"{value:.3e}"
        except OverflowError:
            return f"{'-' if value < 0 else ''}about 2^{abs(value).bit_length() - 1}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


ProgressCallback = Callable[[float, int, int, int, int, float], None]


def simulate(
    platform: Source | Platform,
    trace: Source | Trace,
    model: str | None = None,
    placement: str = "explicit",
    seed: int = 0,
    *,
    record_messages: bool = True,
    record_timeline: bool = True,
    json_path: str | Path | None = None,
    on_messages: Callable[[pd.DataFrame], None] | None = None,
    batch_size: int = 65536,
    on_progress: ProgressCallback | None = None,
    progress_every: float = 0.25,
    params: Mapping[str, float] | Sequence[tuple[str, float]] | None = None,
    coll: str | None = None,
    smpi: str | None = None,
    timeline: str | Path | None = None,
    timeline_as: str | Path | None = None,
    link_stats: bool = False,
    hostfile: str | Path | None = None,
    timing: bool = False,
    routing: str | None = None,
    routing_seed: int | None = None,
) -> Result:
    """Replay `trace` on `platform`.

    model: sharing model (default: the platform's `network.model`).
    params: parameters of the sharing model, over its defaults and (for the platform's own
        model) the platform's `network.parameters`, e.g. {"beta": 0.8} for gige.
    coll: collective algorithms over the platform's `network.collectives`: a preset
        (`mpich`, `ompi`, `smpi`: SMPI 3.32's default selector) and/or `collective=algorithm` entries, e.g. "bcast=scatter_lr_allgather,allreduce=rab_rdb".
    smpi: SMPI's timing model over the platform's `network.smpi`: `simgrid-3.32` (smpirun's
        default configuration: SimGrid 3.32's factors and overheads, SMPI's protocol and
        default collectives, crosstraffic and weight-S on a topology), or `none` for none
        (docs/formats.md, "SMPI's timing model").
    placement: explicit (the trace's `placement`, else rank i on host i), rrn, rrp or random;
        rrn and rrp fill the hosts in the platform's order (SimGrid's host order for a SimGrid file).
    seed: seed of the random placement.
    routing: how flows pick their routes on the platform's topology, over its `network.routing`:
        `minimal` (SimGrid's), `valiant` (dragonfly, torus), `ugal-g`, `ugal-l` (dragonfly),
        `ecmp`, `adaptive` (fat tree); docs/routing.md. OptionsError for a routing of
        another topology.
    routing_seed: seed of the routing's draws and hashes, over `network.routing_seed`.
    hostfile: an SMPI hostfile (one host name a line, `name:slots` for several ranks, blank
        lines and `#` comments skipped): rank i runs on the i-th slot in file order. It is the
        explicit placement, over the trace's `placement` list; PlacementError naming the file
        and line for an unknown host, a bad slot count or too few slots.
    record_messages, record_timeline: keep every message / interval in memory for
        `Result.messages` / `Result.timeline` (turn off for big runs: memory then follows
        what is in flight only).
    json_path: write the `--json` document to this file while the replay runs.
    on_messages: called with a DataFrame of up to `batch_size` messages at a time, as they arrive.
    timeline: write the run's timeline (each rank's operations and every message) to this file
        while the replay runs, for timeline viewers: `.paje` or `.trace` is SimGrid's Paje
        (ViTE, pajeng), `.otf2` an OTF2 archive (Vampir; with NAME.def and the folder NAME beside
        it, through the OTF2 library as `otf2_library` finds it), `.perfetto-trace` or `.pftrace`
        a Perfetto trace (ui.perfetto.dev, in any browser); `timeline_extensions()` lists
        the formats (docs/formats.md, "Timelines").
        If the replay fails, the file is removed.
    timeline_as: the name whose extension picks the format and that errors show, when
        `timeline` is a temporary name (default: `timeline`).
    link_stats: keep per-link statistics for `Result.links` and `Result.link_utilisation`
        (memory proportional to the links; off by default, when it costs nothing).
    timing: the `json_path` document also gets `"timing"`: the trace's load and the replay's wall
        seconds, each as actions per second, and engine events per second (`Result.actions`,
        `Result.events`, `Result.replay_seconds`, `Trace.load_seconds`). Off by default: the
        rest of the document is the same bytes from run to run, and these are not.
    on_progress: called every `progress_every` wall seconds with (simulated time, engine steps,
        messages delivered, ranks finished, ranks, elapsed seconds); an exception it raises
        stops the replay and propagates.
    """
    seed = check_seed(seed)
    if routing_seed is not None:
        routing_seed = check_seed(routing_seed, source="routing_seed")
    p = load_platform(platform)
    t = load_trace(trace)
    hosts_text = None
    if hostfile is not None:
        hosts_text = (read_text_file(Path(hostfile), _core.PlacementError, decompress=False), str(hostfile))
    batches = None
    if on_messages is not None:
        hosts = p.host_names

        def batches(columns: dict[str, bytes]) -> None:
            on_messages(message_frame(columns, hosts))

    shown = timeline_as or timeline
    if shown is not None and _is_otf2(shown):
        _core.otf2_use_library(otf2_library(str(shown)), str(shown))
    try:
        core = _core.simulate(p._core, t._core, model=model, placement=placement, seed=seed,
                              record_messages=record_messages, record_timeline=record_timeline,
                              json_path=None if json_path is None else str(json_path), on_messages=batches,
                              batch_size=batch_size, on_progress=on_progress, progress_every=progress_every,
                              params=param_list(params), coll=coll, smpi=smpi,
                              timeline_path=None if timeline is None else str(timeline),
                              timeline_as=None if timeline_as is None else str(timeline_as),
                              link_stats=link_stats, hostfile=hosts_text,
                              timing=t.load_seconds if timing else None, routing=routing,
                              routing_seed=routing_seed)
    except _core.InputError as exc:
        drop_timeline(timeline, timeline_as)
        raise name_source(exc, p, t) from None
    except BaseException:
        drop_timeline(timeline, timeline_as)
        raise
    return Result(core)


@dataclass(frozen=True)
class JobTimes:
    """When a job of `simulate_jobs` ran: its start, its end (its last rank's) and each rank's
    end, in simulated seconds."""

    start: float
    end: float
    rank_ends: list[float]

    @property
    def runtime(self) -> float:
        return self.end - self.start


def simulate_jobs(
    platform: Platform | str | Path | Mapping[str, Any],
    jobs: Sequence[tuple[Trace | str | Path | Mapping[str, Any], float, Sequence[int | str]]],
    *,
    model: str | None = None,
    params: Mapping[str, float] | Sequence[tuple[str, float]] | None = None,
    coll: str | None = None,
    smpi: str | None = None,
    routing: str | None = None,
    routing_seed: int | None = None,
) -> list[JobTimes]:
    """Replay several jobs together on one platform, so that their messages share its links:
    each job is (trace, start in seconds, the host of each rank by name or index), and its
    ranks start at its start. Each job keeps its own communicators. `model`, `params`, `coll`,
    `smpi`, `routing` and `routing_seed` are `simulate`'s. Returns each job's times, in the order given (an example:
    docs/cosched.md, "Jobs that share a fabric").
    """
    p = load_platform(platform)
    index = {name: i for i, name in enumerate(p.host_names)}
    traces, starts, hosts = [], [], []
    for j, (trace, start, job_hosts) in enumerate(jobs):
        traces.append(load_trace(trace)._core)
        starts.append(float(start))
        row = []
        for k, h in enumerate(job_hosts):
            if isinstance(h, str):
                if h not in index:
                    raise input_error(_core.PlacementError, "", f"jobs[{j}].hosts[{k}]",
                                      f"unknown host {h!r} (the platform has {len(index)} hosts)")
                row.append(index[h])
            else:
                row.append(int(h))
        hosts.append(row)
    if routing_seed is not None:
        routing_seed = check_seed(routing_seed, source="routing_seed")
    ends, _ = _core.simulate_jobs(p._core, traces, starts, hosts, model=model, params=param_list(params), coll=coll,
                                  smpi=smpi, routing=routing, routing_seed=routing_seed)
    return [JobTimes(start, end, list(rank_ends)) for start, end, rank_ends in ends]


def timeline_extensions() -> list[str]:
    """The file extensions `simulate(timeline=...)` writes (`.paje`, ...), each picking a format."""
    return _core.timeline_extensions()


def _is_otf2(timeline: str | Path) -> bool:
    return Path(timeline).suffix.lower() == ".otf2"


def timeline_entries(path: str | Path, otf2: bool) -> list[Path]:
    """The files of a timeline written at `path`: the file itself, or for an OTF2 archive
    its anchor `NAME.otf2`, `NAME.def` and the folder `NAME` (NAME: the stem of a *.otf2
    path, else the whole file name, as the core's writer names it)."""
    path = Path(path)
    if not otf2:
        return [path]
    name = path.stem if _is_otf2(path) else path.name
    return [path.with_name(f"{name}.otf2"), path.with_name(f"{name}.def"), path.with_name(name)]


def drop_timeline(timeline: str | Path | None, timeline_as: str | Path | None = None) -> None:
    """Remove what a failed replay wrote of its timeline (nothing when it had none);
    `timeline_as` is the name that picked its format (default: `timeline`)."""
    if timeline is not None:
        for entry in timeline_entries(timeline, _is_otf2(timeline_as or timeline)):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


def keep_timeline(partial: str | Path, timeline: str | Path) -> None:
    """Move a complete timeline written at `partial` to `timeline`, replacing what was
    there (each file of an OTF2 archive): now, or at the command's delivery
    (`output.on_delivery`; the partial is dropped if that never comes)."""
    otf2 = _is_otf2(timeline)

    def commit() -> None:
        if otf2:
            drop_timeline(timeline)
        for source, target in zip(timeline_entries(partial, otf2), timeline_entries(timeline, otf2)):
            os.replace(source, target)

    on_delivery(commit, lambda: drop_timeline(partial, timeline))


@contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cycle collector paused while the block runs (restored after, as it was).

    For blocks that create hundreds of thousands of containers holding no cycles (the core's
    per-communication columns of a large scheme, the report built from them): the collector
    would re-scan everything alive each few hundred allocations, a third of the time spent
    there. Nothing the block creates is garbage that only the collector could free."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def param_list(params: Mapping[str, float] | Sequence[tuple[str, float]] | None) -> list[tuple[str, float]]:
    """Model parameters as the core takes them: (name, value) pairs."""
    if params is None:
        return []
    items = params.items() if isinstance(params, Mapping) else params
    return [(str(k), float(v)) for k, v in items]


def name_source(exc: _core.InputError, platform: Platform, trace: Trace) -> _core.InputError:
    """A replay error names what it is about: the option for an OptionsError, the trace
    for a deadlock or a placement (the trace's ranks and `placement` list), the platform
    for a PlatformError."""
    if isinstance(exc, _core.OptionsError):
        return option_error(exc)
    if isinstance(exc, _core.PlatformError):
        return with_source(exc, platform.source)
    return with_source(exc, trace.source)
