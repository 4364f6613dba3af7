"""Interference of communication on computation (paper 000, Kreaseck et al.).

While a host sends or receives, its computation slows down roughly linearly with the
transfer rate. This module turns measurements into interference rates and evaluates the
paper's models:

* :func:`fit` (§2.2-§2.5): from samples of the compute rate and of the transfer rate per
  peer and direction, averaged over regular intervals and normalised to the maximum compute
  rate, the linear least-squares fit of each transfer column alone (IR = −slope, constant,
  standard deviation and maximum error of the residuals, §2.3-§2.4), the quadratic fit for
  comparison, the planar fit ``const − a·recv − b·send`` of concurrent sending and receiving
  beside the separate-rate prediction ``1 − IR_r·recv − IR_s·send`` (the synergy of §2.5),
  and the additive prediction ``1 − Σ IR(i)·TR(i)`` for several concurrent peers (§2.3-§2.4).
* :func:`three_point` (§3.1): the three-point model of a node from its k+2 measured compute
  rates, with the corrected IR_s of the notes (the printed formula has a units slip), and
  :func:`normalised_rate`, the model's normalised compute rate
  ``1 − IR_r·TR(n) − Σ IR_s(i)·TR(i)``.

Units: transfer rates in MB/s with MB = 2^20 bytes, interference rates per MB/s (a fraction,
not a percentage: 0.052 means 5.2 % of the compute rate per MB/s). Compute rates are in any
unit (tasks/s, diagonals/s); only their ratio to the maximum matters.

Errors name their source (the file, ``<DataFrame>``, ``<dict>``), the field (a column, a
``row N`` of a CSV file, where the header is row 1, or a JSON path such as
``children[2].SR``) and the reason: :class:`commaware.TraceError` for samples (they are
measurement traces), :class:`commaware.PlatformError` for a node description and
:class:`commaware.OptionsError` for bad options and rates.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import numpy as np
import numpy.typing as npt

from . import _core
from ._errors import input_error
from .api import read_input, read_json_object

FloatArray = npt.NDArray[np.float64]

#: The samples `fit` takes: a CSV file, a pandas DataFrame (typed Any: pandas ships no
#: stubs) or a mapping of column -> values.
Samples = Union[str, Path, Mapping[str, Any], Any]

TIME, COMPUTE = "time", "compute_rate"
DIRECTIONS = ("recv", "send")

#: Fields of a node description for `three_point` (§3.1) and of each of its children.
NODE_FIELDS = ("C", "MR", "C_r", "children")
CHILD_FIELDS = ("id", "SR", "RR", "C_sr")


# -- reports ---------------------------------------------------------------------------------


@dataclass
class Errors:
    """Residuals of a formula on samples (in units of the normalised compute rate: 0.022 is
    the paper's "2.2 %"): mean and maximum absolute error, standard deviation."""

    mean_error: float
    max_error: float
    stdev: float

    @classmethod
    def of(cls, residuals: FloatArray) -> Errors:
        r = np.abs(residuals)
        return cls(float(r.mean()), float(r.max()), float(np.std(residuals)))

    def to_dict(self) -> dict[str, float]:
        return {"mean_error": self.mean_error, "max_error": self.max_error, "stdev": self.stdev}


@dataclass
class LinearFit:
    """Normalised compute rate ≈ const − ir·TR (§2.2: IR is the negative slope)."""

    ir: float
    const: float
    errors: Errors

    def to_dict(self) -> dict[str, float]:
        return {"ir": self.ir, "const": self.const, **self.errors.to_dict()}


@dataclass
class QuadraticFit:
    """Normalised compute rate ≈ const + linear·TR + quadratic·TR² (§2.3's comparison)."""

    const: float
    linear: float
    quadratic: float
    errors: Errors

    def to_dict(self) -> dict[str, float]:
        return {"const": self.const, "linear": self.linear, "quadratic": self.quadratic, **self.errors.to_dict()}


@dataclass
class ColumnFit:
    """The fits of one transfer column on the samples where no other column transfers."""

    column: str
    direction: str
    peer: str
    samples: int
    max_rate: float
    linear: LinearFit
    quadratic: QuadraticFit | None

    @property
    def ir(self) -> float:
        return self.linear.ir

    def to_dict(self) -> dict[str, Any]:
        return {"column": self.column, "direction": self.direction, "peer": self.peer, "samples": self.samples,
                "max_rate": self.max_rate, "linear": self.linear.to_dict(),
                "quadratic": None if self.quadratic is None else self.quadratic.to_dict()}


@dataclass
class PlanarFit:
    """§2.5: normalised compute rate ≈ const − ir_r·recv − ir_s·send on the samples that both
    receive and send, beside the separate-rate prediction 1 − IR_r·recv − IR_s·send on the
    same samples (``separate``; None when a column has no separate fit)."""

    recv: str
    send: str
    samples: int
    const: float
    ir_r: float
    ir_s: float
    errors: Errors
    separate: Errors | None

    def to_dict(self) -> dict[str, Any]:
        return {"recv": self.recv, "send": self.send, "samples": self.samples, "const": self.const,
                "ir_r": self.ir_r, "ir_s": self.ir_s, **self.errors.to_dict(),
                "separate": None if self.separate is None else self.separate.to_dict()}


@dataclass
class Prediction:
    """§2.3-§2.4: the additive prediction 1 − Σ IR(i)·TR(i) from the separate fits, on the
    samples where two or more columns transfer at once."""

    columns: list[str]
    samples: int
    errors: Errors

    def to_dict(self) -> dict[str, Any]:
        return {"columns": self.columns, "samples": self.samples, **self.errors.to_dict()}


@dataclass
class FitReport:
    """What :func:`fit` finds (paper 000 §2)."""

    source: str
    raw_samples: int
    samples: int
    interval: float | None
    max_compute_rate: float
    columns: dict[str, ColumnFit]
    planar: PlanarFit | None = None
    prediction: Prediction | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ir(self) -> dict[str, float]:
        """IR of each column that has a separate fit."""
        return {c: f.ir for c, f in self.columns.items()}

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "raw_samples": self.raw_samples, "samples": self.samples,
                "interval": self.interval, "max_compute_rate": self.max_compute_rate,
                "columns": {c: f.to_dict() for c, f in self.columns.items()},
                "planar": None if self.planar is None else self.planar.to_dict(),
                "prediction": None if self.prediction is None else self.prediction.to_dict(),
                "notes": self.notes}


# -- reading samples -------------------------------------------------------------------------


def _trace_error(source: str, where: str, reason: str) -> _core.TraceError:
    return input_error(_core.TraceError, source, where, reason)


def _check_header(source: str, names: Sequence[str]) -> None:
    """Every column is `time`, `compute_rate`, `recv:<peer>` or `send:<peer>`, once."""
    seen: set[str] = set()
    for k, name in enumerate(names):
        if not name:
            raise _trace_error(source, f"column {k + 1}", "empty column name")
        if name in seen:
            raise _trace_error(source, name, "duplicate column")
        seen.add(name)
        direction, sep, peer = name.partition(":")
        if name in (TIME, COMPUTE) or (sep and direction in DIRECTIONS and peer.strip()):
            continue
        raise _trace_error(source, name, "unknown column: expected `time`, `compute_rate`, `recv:<peer>` or "
                                         "`send:<peer>`")
    if COMPUTE not in seen:
        raise _trace_error(source, COMPUTE, "missing column")
    if not any(n.partition(":")[0] in DIRECTIONS for n in names):
        raise _trace_error(source, "", "no transfer-rate column (`recv:<peer>` or `send:<peer>`)")


def _read_csv(path: str | Path) -> tuple[str, list[str], FloatArray, list[str]]:
    """(source, column names, values [row, column], row labels) of a CSV file; blank lines and
    lines starting with `#` are skipped; rows are named by their line in the file."""
    text, source, _ = read_input(path, _core.TraceError)
    reader = csv.reader(io.StringIO(text), strict=True)
    header: list[str] | None = None
    rows: list[list[str]] = []
    labels: list[str] = []
    try:
        for record in reader:
            if not record or not "".join(record).strip() or record[0].lstrip().startswith("#"):
                continue
            if header is None:
                header = [name.strip() for name in record]
                _check_header(source, header)
                continue
            if len(record) != len(header):
                raise _trace_error(source, f"row {reader.line_num}",
                                   f"expected {len(header)} fields ({', '.join(header)}), got {len(record)}")
            rows.append(record)
            labels.append(f"row {reader.line_num}")
    except csv.Error as exc:
        raise _trace_error(source, f"row {reader.line_num}", f"malformed CSV: {exc}") from None
    if header is None:
        raise _trace_error(source, "", "empty file: expected a header line (compute_rate, recv:<peer>, ...)")
    if not rows:
        raise _trace_error(source, "", "no samples after the header")
    try:
        values = np.array(rows, dtype=np.float64)
    except ValueError:
        for label, record in zip(labels, rows):  # only to name the bad cell
            for name, cell in zip(header, record):
                try:
                    float(cell)
                except ValueError:
                    raise _trace_error(source, f"{label}, {name}", f"not a number: {cell.strip()!r}") from None
        raise
    return source, header, values.reshape(len(rows), len(header)), labels


def _read_table(samples: Any) -> tuple[str, list[str], FloatArray, list[str] | None]:
    """(source, names, values, row labels or None for positional `column[i]`) of samples."""
    if isinstance(samples, (str, Path)):
        return _read_csv(samples)
    if type(samples).__name__ == "DataFrame" and hasattr(samples, "columns"):  # pandas, without importing it
        source, columns = "<DataFrame>", {str(c): samples[c] for c in samples.columns}
        if len(columns) != len(samples.columns):
            raise _trace_error(source, "", "duplicate column names")
    elif isinstance(samples, Mapping):
        source, columns = "<dict>", dict(samples)
        for key in columns:
            if not isinstance(key, str):
                raise _trace_error(source, repr(key), "column names must be strings")
    else:
        raise _trace_error(f"<{type(samples).__name__}>", "",
                           "expected a CSV file path, a pandas DataFrame or a mapping of column -> values")
    names = [n.strip() for n in columns]
    _check_header(source, names)
    arrays = []
    for name, raw in columns.items():
        try:
            a = np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise _trace_error(source, name.strip(), f"not numbers: {exc}") from None
        if a.ndim != 1:
            raise _trace_error(source, name.strip(), f"expected a 1-D sequence of numbers, got shape {a.shape}")
        arrays.append(a)
    lengths = {len(a) for a in arrays}
    if len(lengths) != 1:
        raise _trace_error(source, "", f"columns have different lengths: {sorted(lengths)}")
    if not lengths.pop():
        raise _trace_error(source, "", "no samples")
    return source, names, np.column_stack(arrays), None


def _validate(source: str, names: list[str], values: FloatArray, labels: list[str] | None) -> None:
    """Finite numbers everywhere, compute rates > 0, transfer rates >= 0."""

    def where(row: int, name: str) -> str:
        return f"{labels[row]}, {name}" if labels is not None else f"{name}[{row}]"

    for j, name in enumerate(names):
        col = values[:, j]
        bad = np.flatnonzero(~np.isfinite(col))
        if bad.size:
            raise _trace_error(source, where(int(bad[0]), name), f"non-finite number (NaN/inf), got {col[bad[0]]}")
        if name == COMPUTE:
            bad, what = np.flatnonzero(col <= 0), "a compute rate must be > 0"
        elif name == TIME:
            continue
        else:
            bad, what = np.flatnonzero(col < 0), "a transfer rate must be >= 0 (MB/s)"
        if bad.size:
            raise _trace_error(source, where(int(bad[0]), name), f"{what}, got {col[bad[0]]:g}")


def _average(source: str, names: list[str], values: FloatArray, interval: float) -> FloatArray:
    """§2.2: average every rate over regular intervals of `interval` seconds of `time`
    (intervals without samples are dropped); the `time` column becomes each interval's start."""
    if TIME not in names:
        raise input_error(_core.OptionsError, "--interval", "", f"needs a `{TIME}` column, which {source} lacks")
    t = values[:, names.index(TIME)]
    t0 = float(t.min())
    bins = np.floor((t - t0) / interval)
    keys, inverse = np.unique(bins, return_inverse=True)
    counts = np.bincount(inverse).astype(np.float64)
    out = np.empty((len(keys), len(names)), dtype=np.float64)
    for j in range(len(names)):  # per column, not per sample
        out[:, j] = np.bincount(inverse, weights=values[:, j]) / counts
    out[:, names.index(TIME)] = t0 + keys * interval
    return out


# -- fits ------------------------------------------------------------------------------------


def _lstsq(design: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray, int]:
    coef, _, rank, _ = np.linalg.lstsq(design, y, rcond=None)
    c = np.asarray(coef, dtype=np.float64)
    return c, y - design @ c, int(rank)


def _column_fit(source: str, column: str, x: FloatArray, y: FloatArray) -> ColumnFit:
    n = len(x)
    if n < 3:
        raise _trace_error(source, column, f"{n} sample(s) to fit, fewer than the 3 parameters of the quadratic "
                                           "fit (the linear fit has 2); counted after interval averaging")
    if float(np.ptp(x)) == 0.0:
        raise _trace_error(source, column, f"constant transfer rate ({x[0]:g} MB/s in all {n} samples): the "
                                           "least-squares fit is singular")
    ones = np.ones_like(x)
    coef, res, _ = _lstsq(np.column_stack([ones, x]), y)
    linear = LinearFit(ir=float(-coef[1]), const=float(coef[0]), errors=Errors.of(res))
    quadratic = None
    if np.unique(x).size >= 3:
        qc, qres, _ = _lstsq(np.column_stack([ones, x, x * x]), y)
        quadratic = QuadraticFit(float(qc[0]), float(qc[1]), float(qc[2]), Errors.of(qres))
    direction, _, peer = column.partition(":")
    return ColumnFit(column, direction, peer.strip(), n, float(x.max()), linear, quadratic)


def fit(samples: Samples, *, interval: float | None = None) -> FitReport:
    """Interference rates from measured samples (paper 000 §2).

    `samples` is a CSV file (header line, blank and `#` lines skipped), a pandas DataFrame
    or a mapping of column -> values, with the columns ``compute_rate`` (any unit, > 0),
    one or more transfer rates ``recv:<peer>`` / ``send:<peer>`` (MB/s, MB = 2^20 bytes,
    >= 0; 0 when not transferring) and optionally ``time`` (s). With `interval`, the rates
    are first averaged over regular intervals of that many seconds of ``time`` (§2.2). The
    compute rate is then normalised to its maximum (§2.2).

    * Each transfer column is fitted on the samples where no other column transfers (all
      samples when it is the only one): linear least squares (IR = −slope, §2.2) and, for
      comparison, quadratic (§2.3); residual standard deviation and maximum error.
    * With exactly one ``recv:`` and one ``send:`` column, the samples where both transfer
      get the planar fit ``const − ir_r·recv − ir_s·send`` beside the separate prediction
      ``1 − IR_r·recv − IR_s·send`` (§2.5).
    * The samples where two or more columns transfer get the prediction
      ``1 − Σ IR(i)·TR(i)`` of the separate fits and its errors (§2.3-§2.4).

    Raises TraceError (naming the file, the column or ``row N``, and the reason) for bad
    samples, too few samples (3 per fit: the quadratic and planar fits have 3 parameters),
    or a constant transfer rate (a singular fit); OptionsError for a bad `interval`.
    """
    if interval is not None:
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not (0 < interval < math.inf):
            raise input_error(_core.OptionsError, "--interval", "", f"must be a number of seconds > 0, got {interval!r}")
        interval = float(interval)
    source, names, values, labels = _read_table(samples)
    _validate(source, names, values, labels)
    raw_samples = len(values)
    if interval is not None:
        values = _average(source, names, values, interval)
    compute = values[:, names.index(COMPUTE)]
    top = float(compute.max())
    y = compute / top
    transfer = [n for n in names if n.partition(":")[0] in DIRECTIONS]
    rates = values[:, [names.index(n) for n in transfer]]
    active = rates > 0
    busy = active.sum(axis=1)
    report = FitReport(source, raw_samples, len(values), interval, top, {})

    for j, column in enumerate(transfer):
        alone = busy - active[:, j] == 0  # no other column transfers
        if len(transfer) > 1 and not active[alone, j].any():
            report.notes.append(f"{column}: no samples where it transfers alone, so no separate fit")
            continue
        report.columns[column] = _column_fit(source, column, rates[alone, j], y[alone])

    together = busy >= 2
    recvs = [c for c in transfer if c.startswith("recv:")]
    sends = [c for c in transfer if c.startswith("send:")]
    if len(recvs) == 1 and len(sends) == 1 and together.any():
        a, b = rates[together, transfer.index(recvs[0])], rates[together, transfer.index(sends[0])]
        report.planar = _planar(source, recvs[0], sends[0], a, b, y[together], report.columns)
    if together.any():
        if all(c in report.columns for c in transfer):
            ir = np.array([report.columns[c].ir for c in transfer])
            predicted = 1.0 - rates[together] @ ir
            report.prediction = Prediction(list(transfer), int(together.sum()), Errors.of(y[together] - predicted))
        else:
            report.notes.append("no prediction 1 − Σ IR(i)·TR(i): some column has no separate fit")
    if not report.columns and report.planar is None:
        raise _trace_error(source, "", "nothing to fit: no column transfers alone, and the concurrent samples are "
                                       "not one `recv:` with one `send:` column")
    return report


def _planar(source: str, recv: str, send: str, a: FloatArray, b: FloatArray, y: FloatArray,
            separate: Mapping[str, ColumnFit]) -> PlanarFit:
    """§2.5: least squares of y ≈ const − ir_r·a − ir_s·b on the samples that both receive
    (`a`, column `recv`) and send (`b`, column `send`)."""
    n = len(y)
    if n < 3:
        raise _trace_error(source, f"{recv}, {send}", f"{n} sample(s) that both receive and send: the planar "
                                                      "fit needs at least 3")
    for name, col in ((recv, a), (send, b)):
        if float(np.ptp(col)) == 0.0:
            raise _trace_error(source, name, f"constant transfer rate ({col[0]:g} MB/s) over the {n} samples that "
                                             "both receive and send: the planar fit is singular")
    coef, res, rank = _lstsq(np.column_stack([np.ones(n), a, b]), y)
    if rank < 3:
        raise _trace_error(source, f"{recv}, {send}", "the two transfer rates are proportional over the samples "
                                                      "that both receive and send: the planar fit is singular")
    sep = None
    if recv in separate and send in separate:
        sep = Errors.of(y - (1.0 - separate[recv].ir * a - separate[send].ir * b))
    return PlanarFit(recv, send, n, float(coef[0]), float(-coef[1]), float(-coef[2]), Errors.of(res), sep)


# -- the three-point model (§3.1) ------------------------------------------------------------


def interference_rate(free_rate: float, loaded_rate: float, transfer_rate: float) -> float:
    """The two-point interference rate (1 − loaded/free) / transfer (§3.1's IR_r; Table 4's
    lines 8 and 9 from lines 1-6): the fraction of the compute rate lost per MB/s."""
    return (1.0 - loaded_rate / free_rate) / transfer_rate


def _number(source: str, obj: Mapping[str, Any], key: str, where: str) -> float:
    path = f"{where}.{key}" if where else key
    if key not in obj:
        raise input_error(_core.PlatformError, source, path, "missing field")
    value = obj[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise input_error(_core.PlatformError, source, path, f"expected a number, got {json.dumps(value)}")
    if not math.isfinite(value):
        raise input_error(_core.PlatformError, source, path, "non-finite number (NaN/inf) is not allowed")
    return float(value)


def _no_unknown(source: str, obj: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    for key in obj:
        if key not in known:
            path = f"{where}.{key}" if where else str(key)
            raise input_error(_core.PlatformError, source, path, f"unknown field (expected {', '.join(known)})")


def three_point(node: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """The three-point model of a node (paper 000 §3.1) from its k+2 measured compute rates.

    `node` (a JSON file or a dict) is ``{"C", "MR", "C_r", "children": [{"id", "SR", "RR",
    "C_sr"}, ...]}``: C the compute rate when not communicating, C_r the compute rate while
    receiving from the parent at its maximum rate MR (MB/s), and for each child i, C_sr the
    compute rate while sending to i at SR and receiving at RR. Returns
    ``{"ir_r": float, "ir_s": {id: float}}`` with

        IR_r    = ((C − C_r)/C) / MR
        IR_s(i) = (1 − RR(i)·(C − C_r)/(MR·C) − C_sr(i)/C) / SR(i)

    the corrected IR_s of the notes (the printed one has a units slip), the only form with
    which :func:`normalised_rate` gives the k+2 measured points back exactly: 1 at no
    transfer, C_r/C at (MR, none) and C_sr(i)/C at (RR(i), {i: SR(i)}).

    Raises PlatformError naming the field (``children[2].SR``) for missing fields and for
    C, MR, SR not > 0, C_r outside (0, C], C_sr or RR < 0, or duplicate ids.
    """
    doc, source = read_json_object(node if isinstance(node, (str, Path)) else dict(node), _core.PlatformError,
                                   "{C, MR, C_r, children}")
    _no_unknown(source, doc, NODE_FIELDS, "")
    c, mr, c_r = (_number(source, doc, k, "") for k in ("C", "MR", "C_r"))
    for key, value in (("C", c), ("MR", mr)):
        if value <= 0:
            raise input_error(_core.PlatformError, source, key, f"must be > 0, got {value:g}")
    if not 0 < c_r <= c:
        raise input_error(_core.PlatformError, source, "C_r", f"must be > 0 and <= C ({c:g}), got {c_r:g}")
    if "children" not in doc:
        raise input_error(_core.PlatformError, source, "children", "missing field (a list, possibly empty)")
    children = doc["children"]
    if not isinstance(children, list):
        raise input_error(_core.PlatformError, source, "children", "expected a list of {id, SR, RR, C_sr}")
    ir_r = interference_rate(c, c_r, mr)
    loss_per_mb = (c - c_r) / (mr * c)
    ir_s: dict[str, float] = {}
    for k, child in enumerate(children):
        where = f"children[{k}]"
        if not isinstance(child, dict):
            raise input_error(_core.PlatformError, source, where, "expected an object {id, SR, RR, C_sr}")
        _no_unknown(source, child, CHILD_FIELDS, where)
        if "id" not in child:
            raise input_error(_core.PlatformError, source, f"{where}.id", "missing field")
        cid = child["id"]
        if not isinstance(cid, str) or not cid:
            raise input_error(_core.PlatformError, source, f"{where}.id", f"expected a non-empty string, got {json.dumps(cid)}")
        if cid in ir_s:
            raise input_error(_core.PlatformError, source, f"{where}.id", f"duplicate id {cid!r}")
        sr, rr, c_sr = (_number(source, child, key, where) for key in ("SR", "RR", "C_sr"))
        if sr <= 0:
            raise input_error(_core.PlatformError, source, f"{where}.SR", f"must be > 0, got {sr:g}")
        if rr < 0:
            raise input_error(_core.PlatformError, source, f"{where}.RR", f"must be >= 0, got {rr:g}")
        if c_sr < 0:
            raise input_error(_core.PlatformError, source, f"{where}.C_sr", f"must be >= 0, got {c_sr:g}")
        ir_s[cid] = (1.0 - rr * loss_per_mb - c_sr / c) / sr
    return {"ir_r": ir_r, "ir_s": ir_s}


def _rate(source: str, field_: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 <= value < math.inf):
        raise input_error(_core.OptionsError, source, field_, f"a transfer rate must be a finite number >= 0 (MB/s), "
                                                              f"got {value!r}")
    return float(value)


def normalised_rate(model: Mapping[str, Any], recv_rate: float = 0.0,
                    send_rates: Mapping[str, float] | None = None) -> float:
    """The model's normalised compute rate 1 − IR_r·TR(n) − Σ IR_s(i)·TR(i) (paper 000 §3.1)
    while receiving at `recv_rate` from the parent and sending at `send_rates[id]` to the
    children (MB/s). `model` is what :func:`three_point` returns. The linear value is
    returned as is (it may be negative far outside the measured points; a compute rate would
    use max(0, ·)). Raises OptionsError (source ``recv_rate`` / ``send_rates``) for negative
    or non-finite rates and unknown children."""
    ir_r, ir_s = float(model["ir_r"]), model["ir_s"]
    rate = 1.0 - ir_r * _rate("recv_rate", "", recv_rate)
    for cid, tr in (send_rates or {}).items():
        if cid not in ir_s:
            raise input_error(_core.OptionsError, "send_rates", str(cid),
                              f"unknown child (the model has: {', '.join(ir_s) or 'none'})")
        rate -= float(ir_s[cid]) * _rate("send_rates", str(cid), tr)
    return rate


def priority(values: Mapping[str, float], *, descending: bool = False) -> list[str]:
    """Keys ordered by value (ties keep the mapping's order): increasing IR_s is the
    interference-aware order of §3.2.1 and Fig. 2; decreasing compute rate (Fig. 3) and
    decreasing link rate (Fig. 4, bandwidth-centric) use ``descending=True``."""
    keys = list(values)
    v = np.array([values[k] for k in keys], dtype=np.float64)
    order = np.argsort(-v if descending else v, kind="stable")
    return [keys[i] for i in order]
