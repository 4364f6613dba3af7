"""Input errors raised in Python carry what the core's do: `.source` (the file, `<dict>`
or the option), `.field` (the deepest field path) and `.reason`; `str(exc)` is
"source: field: reason" with the empty parts left out."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, TypeVar

from . import _core

E = TypeVar("E", bound=_core.InputError)

#: What the core says about a NaN or an infinity.
NON_FINITE = "non-finite number (NaN/inf) is not allowed"

#: Deeper than this, a Python value is reported as nested too deeply (or circular).
MAX_DEPTH = 1000


def input_error(cls: type[E], source: str, field: str, reason: str) -> E:
    """An exception of `cls` (one of the `_core` InputError classes) with its attributes set;
    values echoed in `field` and `reason` are cut as the core cuts them (`_core.cut_long_values`)."""
    field, reason = _core.cut_long_values(field), _core.cut_long_values(reason)
    head = ": ".join(part for part in (source, field) if part)
    exc = cls(f"{head}: {reason}" if head else reason)
    exc.source, exc.field, exc.reason = source, field, reason
    return exc


def check_output_dir(path: str | Path) -> None:
    """OptionsError (`--output`) unless the folder `path` goes into exists."""
    target = Path(path)
    if not target.parent.is_dir():
        raise input_error(_core.OptionsError, "--output", "", f"{target}: the directory {target.parent} does not exist")


def with_source(exc: E, source: str, field: str | None = None) -> E:
    """`exc` if it names its source; else the same error naming `source` (and `field`)."""
    if getattr(exc, "source", ""):
        return exc
    return input_error(type(exc), source, exc.field if field is None else field, exc.reason)


def option_error(exc: E) -> E:
    """An OptionsError from the core names the option (`--model`) as its source."""
    if exc.field.startswith("param."):  # a model parameter: --param NAME=VALUE
        return with_source(exc, "--param", exc.field.removeprefix("param."))
    name = exc.field.rsplit(".", 1)[-1].replace("_", "-")
    return with_source(exc, f"--{name}" if name else "<options>", "")


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def find_unserialisable(value: Any) -> tuple[str, str] | None:
    """(field path, reason) of the first value, in document order, that JSON cannot carry
    as the core needs it: NaN or inf, a non-JSON type, a non-string key, deep nesting."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        obj, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            return path, f"nested more than {MAX_DEPTH} levels deep (a circular reference?)"
        if isinstance(obj, float):
            if not math.isfinite(obj):
                return path, f"{NON_FINITE}, got {'NaN' if math.isnan(obj) else 'inf' if obj > 0 else '-inf'}"
        elif obj is None or isinstance(obj, (str, int)):
            continue
        elif isinstance(obj, dict):
            children = []
            for key, item in obj.items():
                if not (key is None or isinstance(key, (str, int, float))):
                    return path, f"key {key!r} is not a string"
                children.append((item, _join(path, key), depth + 1))
            stack.extend(reversed(children))
        elif isinstance(obj, (list, tuple)):
            stack.extend(reversed([(item, _join(path, i), depth + 1) for i, item in enumerate(obj)]))
        else:
            return path, f"a {type(obj).__name__} is not a JSON value"
    return None
