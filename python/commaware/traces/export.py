"""Export a trace to SimGrid's time-independent (TI) format, or to commaware's JSON trace
(`commaware trace export`): any trace the loader reads (TI, OTF2, DUMPI, JSON) converts.

The conversion runs in the core (`commaware_core::mpi::ti_export`); this module picks the flop rate
and puts the files in place: an index file ``index.txt`` listing ``rank-R.txt``, one file per
rank, written into a scratch directory beside the target and renamed onto it only when every
file is complete, so that an error leaves nothing behind.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

from .. import _core
from .._errors import check_output_dir, input_error
from ..api import Platform, Source, Trace, load_platform, load_trace
from ..output import on_delivery, partial_path, remove_path, write_delivered

#: Flop rate used for `compute {seconds}` when neither a rate nor a platform is given.
DEFAULT_FLOPS_PER_SECOND = 1e9
INDEX_NAME = "index.txt"


def first_host_speed(platform: Platform) -> float:
    """The speed (flop/s) of the platform's first host."""
    return float(json.loads(platform._core.to_json())["hosts"][0]["speed"])


def export_ti(trace: Source | Trace, directory: str | Path, *, flops_per_second: float | None = None,
              platform: Source | Platform | None = None, trace_format: str = "auto",
              derived_datatype_bytes: float | None = None) -> Path:
    """Write `trace` as a SimGrid TI trace into `directory` (created; it must not exist or be
    empty); returns the index file. `compute {seconds}` becomes flops at `flops_per_second`,
    else at the speed of `platform`'s first host, else 1e9 (written in a comment line of every
    rank file). `trace_format` and `derived_datatype_bytes` are `load_trace`'s. Raises
    `TraceError` naming the op TI cannot express, `OptionsError` for a bad rate or directory."""
    target = Path(directory)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise input_error(_core.OptionsError, "--output", "", f"{target} exists and is not an empty directory")
    check_output_dir(target)
    loaded = load_trace(trace, trace_format, derived_datatype_bytes=derived_datatype_bytes)
    if flops_per_second is None:
        flops_per_second = first_host_speed(load_platform(platform)) if platform is not None else DEFAULT_FLOPS_PER_SECOND
        origin = "the first host of the platform" if platform is not None else "the default"
    else:
        origin = "--flops-per-second"
    if not (isinstance(flops_per_second, (int, float)) and math.isfinite(flops_per_second) and flops_per_second > 0):
        raise input_error(_core.OptionsError, "--flops-per-second", "", f"must be a finite number > 0, got {flops_per_second}")
    header = (f"commaware trace export of {loaded.source}\n"
              f"flops_per_second {flops_per_second!r} ({origin}): compute seconds x this rate = flops")
    texts = _core.export_ti(loaded._core, float(flops_per_second), header, loaded.source)
    scratch = partial_path(target)
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        scratch.mkdir()
        names = [f"rank-{r}.txt" for r in range(len(texts))]
        for name, text in zip(names, texts):
            (scratch / name).write_text(text)
        (scratch / INDEX_NAME).write_text("".join(f"{name}\n" for name in names))
    except OSError as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        raise input_error(_core.OptionsError, "--output", "", f"{target}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise

    def commit() -> None:
        if target.is_dir():
            target.rmdir()  # empty: checked above
        os.rename(scratch, target)

    on_delivery(commit, lambda: remove_path(scratch))
    return target / INDEX_NAME


def export_json(trace: Source | Trace, path: str | Path, *, trace_format: str = "auto",
                derived_datatype_bytes: float | None = None, traced_speed: float | None = None) -> Path:
    """Write `trace` as a commaware JSON trace file at `path` (streamed by the core, one op per
    line; written beside it and renamed when complete). `trace_format`, `derived_datatype_bytes`
    and `traced_speed` are `load_trace`'s. Returns the path."""
    check_output_dir(path)
    loaded = load_trace(trace, trace_format, derived_datatype_bytes=derived_datatype_bytes, traced_speed=traced_speed)
    return write_delivered(path, lambda scratch: _core.export_json(loaded._core, scratch))
