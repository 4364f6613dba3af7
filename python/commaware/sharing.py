"""Bandwidth-sharing penalties of communication schemes (paper 004).

A *scheme* is a set of concurrent communications between nodes (``{"comms": [{"id": "a",
"src": 0, "dst": 1}, ...]}``). Under a sharing model each communication gets a *penalty*:
it takes that many times as long as it would alone (§IV-B, P_i = T_i / T_ref). The
formulas live in the Rust core; this module reads files, assembles reports, calibrates
the GigE family on measurements (§V-A) and computes the accuracy measures of §VI-B.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _core
from ._errors import input_error, option_error
from .api import Source, param_list, parse_json, paused_gc, read_input, read_json_object

if TYPE_CHECKING:
    import pandas as pd

#: Models `penalties` takes (contention_free would give every communication penalty 1).
SCHEME_MODELS = ("gige", "myrinet", "infiniband", "ib-simgrid", "maxmin")


@dataclass
class PenaltyReport:
    """Penalties of one scheme under one model, with its conflict analysis (§IV-A)."""

    model: str
    parameters: dict[str, float]
    ids: list[str]
    src: list[int]
    dst: list[int]
    bytes: list[float | None]
    delta_out: list[int]
    delta_in: list[int]
    conflicts: list[list[str]]
    penalties: list[float]
    side_out: list[tuple[int, float]]
    side_in: list[tuple[int, float]]
    components: list[dict[str, Any]] = field(default_factory=list)
    #: Myrinet: the state-set count over all components (exact digits, float, log10, flags).
    state_set_count: dict[str, Any] | None = None
    #: The `--json` document, as the core writes it (see :meth:`to_dict`).
    report_json: str = "{}"

    @property
    def by_id(self) -> dict[str, float]:
        return dict(zip(self.ids, self.penalties))

    @property
    def state_sets(self) -> int | float | None:
        """Myrinet: the number of state sets, the product over the connected components;
        an exact integer, or a float when some component was estimated, None when the count
        is beyond a float's range (about 10^308, exact or estimated) or the estimator failed
        (see `state_sets_log10`)."""
        c = self.state_set_count
        if c is None:
            return None
        return int(c["exact"]) if c["exact"] is not None else c["value"]

    @property
    def state_sets_log10(self) -> float | None:
        """log10 of the number of state sets (also when it overflows a float)."""
        return None if self.state_set_count is None else self.state_set_count["log10"]

    @property
    def state_sets_estimated(self) -> bool:
        return self.state_set_count is not None and self.state_set_count["estimated"]

    @property
    def estimator_failed(self) -> bool:
        """Some component was too tangled for the estimator: its penalties are a stand-in."""
        return self.state_set_count is not None and self.state_set_count["estimator_failed"]

    def static_times(self, bytes: float | None = None, bandwidth: float = 1.0, latency: float = 0.0) -> dict[str, float]:
        """The paper's static prediction (Fig. 4): latency + penalty × bytes / bandwidth,
        with each communication's own `bytes` where the scheme gives it."""
        out = {}
        for cid, b, p in zip(self.ids, self.bytes, self.penalties):
            size = b if b is not None else bytes
            if size is None:
                raise input_error(_core.OptionsError, "--bytes", "", f"communication {cid!r} has no bytes: give --bytes")
            out[cid] = latency + p * size / bandwidth
        return out

    def to_dict(self) -> dict[str, Any]:
        """The `commaware penalties --json` document: model, parameters, per communication its
        penalty, conflicts and degrees; for Myrinet the state sets and each component."""
        with paused_gc():  # a dict per communication (10^5 of them), and no cycle
            doc: dict[str, Any] = json.loads(self.report_json)
        return doc


def penalties(scheme: Source, model: str = "gige",
              params: Mapping[str, float] | Sequence[tuple[str, float]] | None = None) -> PenaltyReport:
    """Penalties of a scheme (file path or dict) under `model` (one of SCHEME_MODELS) with
    `params` overriding the model's defaults. Raises SchemeError or OptionsError."""
    with paused_gc():  # 10^5 communications are 10^5 lists and 2·10^5 tuples, and no cycle
        return PenaltyReport(**_scheme_penalties(scheme, model, params, json_only=False))


def penalties_json(scheme: Source, model: str = "gige",
                   params: Mapping[str, float] | Sequence[tuple[str, float]] | None = None) -> str:
    """The `commaware penalties --json` document of :func:`penalties`, as the core writes it,
    without building the report's columns in Python (a second less at 10^5 communications)."""
    doc: str = _scheme_penalties(scheme, model, params, json_only=True)["report_json"]
    return doc


def _scheme_penalties(scheme: Source, model: str, params: Mapping[str, float] | Sequence[tuple[str, float]] | None,
                      json_only: bool) -> dict[str, Any]:
    text, name, fmt = read_input(scheme, _core.SchemeError)
    try:
        return _core.scheme_penalties(text, name, fmt, model, param_list(params), json_only)
    except _core.OptionsError as exc:
        raise option_error(exc) from None


# -- scheme lists: schemes to measure, and measured ones ----------------------------------


def read_schemes(source: Source, *, measured: bool = False,
                 check_comms: Callable[[Any, str, str], list[dict[str, Any]]] | None = None,
                 ) -> tuple[list[dict[str, Any]], str]:
    """The schemes of a scheme-list file, and its name for error messages: one scheme
    ``{"comms": [...]}`` or a list ``{"schemes": [{"name", "comms": [...]}, ...]}``. Raises
    SchemeError naming the file and the field.

    Schemes to measure (`commaware measure penalties`' input): exactly one of `comms` and
    `schemes`; a scheme has only `name`, `description` and `comms`, and a unique name (by
    default the file's stem, or ``scheme<i>`` in a list); each comes as ``{"name", "comms"}``,
    its comms as ``check_comms(comms, source, field)`` returns them.

    With `measured` (MEASURED.json, what that command writes; a dict too): every comm carries its
    measured `penalty`, or `time_s` with `t_ref_s` (of the comm or of its scheme); each scheme
    comes as ``{"name", "scheme", "measured", "report"}``: its comms, their measured penalties
    and their `penalties` report under gige (for the conflicts)."""
    if measured:
        doc, name = read_json_object(source, _core.SchemeError, "with `schemes` or `comms`")
        listed = doc.get("schemes", [doc] if "comms" in doc else None)
        not_a_list = "expected a non-empty list of schemes"
    else:
        doc, name = _read_scheme_file(source)
        if ("comms" in doc) == ("schemes" in doc):
            raise input_error(_core.SchemeError, name, "",
                              'needs exactly one of "comms" (one scheme) or "schemes" (a list of schemes)')
        listed = [doc] if "comms" in doc else doc["schemes"]
        not_a_list = "must be a non-empty list of schemes"
    if not isinstance(listed, list) or not listed:
        raise input_error(_core.SchemeError, name, "schemes", not_a_list)
    schemes: list[dict[str, Any]] = []
    for k, scheme in enumerate(listed):
        where = f"schemes[{k}]" if "schemes" in doc else ""
        if measured:
            schemes.append(_measured_scheme(scheme, k, where, name))
        else:
            assert check_comms is not None, "schemes to measure need check_comms"
            default_name = f"scheme{k}" if where else Path(name).stem
            schemes.append(_scheme_to_measure(scheme, where, name, default_name, schemes, check_comms))
    return schemes, name


def _read_scheme_file(path: Any) -> tuple[dict[str, Any], str]:
    """The JSON object of a file (path) of schemes to measure, and its name for error messages."""
    text, source, _ = read_input(str(path), _core.SchemeError)
    doc = parse_json(text, source, _core.SchemeError)
    if not isinstance(doc, dict):
        raise input_error(_core.SchemeError, source, "", 'must be an object {"comms": [...]} or {"schemes": [...]}')
    return doc, source


#: The fields of a scheme to measure.
_SCHEME_KEYS = {"name", "description", "comms"}


def _scheme_to_measure(scheme: Any, where: str, source: str, default_name: str, before: list[dict[str, Any]],
                       check_comms: Callable[[Any, str, str], list[dict[str, Any]]]) -> dict[str, Any]:
    """``{"name", "comms"}`` of a scheme to measure, found at `where` (after the schemes `before` it)."""
    if not isinstance(scheme, dict):
        raise input_error(_core.SchemeError, source, where, f"must be an object {{name, comms}}, got {type(scheme).__name__}")
    allowed = _SCHEME_KEYS if where else _SCHEME_KEYS | {"schemes"}
    unknown = sorted(set(scheme) - allowed)
    if unknown:
        raise input_error(_core.SchemeError, source, where,
                          f"unknown field `{unknown[0]}` (allowed: {', '.join(sorted(allowed))})")
    name = scheme.get("name", default_name)
    name_field = f"{where}.name" if where else "name"
    if not isinstance(name, str) or not name:
        raise input_error(_core.SchemeError, source, name_field, f"must be a non-empty string, got {json.dumps(name)}")
    if any(s["name"] == name for s in before):
        raise input_error(_core.SchemeError, source, name_field, f"duplicate scheme name {name!r}")
    if "comms" not in scheme:
        raise input_error(_core.SchemeError, source, where, "missing field `comms`")
    return {"name": name, "comms": check_comms(scheme["comms"], source, f"{where}.comms" if where else "comms")}


def _measured_scheme(s: Any, k: int, where: str, name: str) -> dict[str, Any]:
    """``{"name", "scheme", "measured", "report"}`` of measured scheme `k`, found at `where`."""
    if not isinstance(s, dict) or not isinstance(s.get("comms"), list):
        raise input_error(_core.SchemeError, name, where, "a scheme is an object with a `comms` list")
    measured = []
    for j, c in enumerate(s["comms"]):
        cf = f"{where}.comms[{j}]".lstrip(".")
        if not isinstance(c, dict):
            raise input_error(_core.SchemeError, name, cf, "a communication is an object")
        p = c.get("penalty")
        if p is None and c.get("time_s") is not None:
            t_ref = c.get("t_ref_s", s.get("t_ref_s"))
            if not _positive(t_ref):
                raise input_error(_core.SchemeError, name, f"{cf}.time_s", "a measured time needs t_ref_s (of the comm or its scheme)")
            p = c["time_s"] / t_ref
        if not _positive(p):
            raise input_error(_core.SchemeError, name, f"{cf}.penalty", f"a measured penalty (> 0) is required, got {p!r}")
        measured.append(float(p))  # type: ignore[arg-type]  # _positive checked it
    scheme = {"comms": [{k: c[k] for k in ("id", "src", "dst") if k in c} for c in s["comms"]]}
    try:
        report = penalties(scheme, "gige")
    except _core.SchemeError as exc:
        raise input_error(_core.SchemeError, name, f"{where}.{exc.field}".lstrip("."), exc.reason) from None
    return {"name": s.get("name", f"scheme{k}"), "scheme": scheme, "measured": measured, "report": report}


def measured_schemes(source: Source) -> tuple[list[dict[str, Any]], str]:
    """The schemes of a MEASURED.json document (what `commaware measure penalties` writes:
    `{"schemes": [{"name", "t_ref_s", "comms": [{"id", "src", "dst", "penalty" | "time_s"}]}]}`,
    or a single scheme), each comm with its measured penalty: `read_schemes` with `measured`."""
    return read_schemes(source, measured=True)


# -- calibration (§V-A) ------------------------------------------------------------------


def _positive(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def calibrate_penalty(source: Source, family: str = "gige") -> dict[str, Any]:
    """Calibrate the GigE family (gige or infiniband) on measured penalties, as §V-A does.

    β from the star rows: communications whose only conflict is outgoing and whose γ term
    vanishes (card = Δ), P = Δ·β, least squares β = ΣΔ·P / ΣΔ². Then each γ from the
    closed forms on the communications that carry it alone (the other side without
    conflict): P = Δ·β·(1 + γ·k), so γ = (P/(Δβ) − 1)/k, averaged by least squares.
    A parameter no communication carries is reported as undetermined (and keeps the
    family's default)."""
    if family not in ("gige", "infiniband"):
        raise input_error(_core.OptionsError, "--family", "", f"unknown family {family!r}: gige or infiniband")
    schemes, name = read_schemes(source, measured=True)
    beta_rows: list[tuple[float, float]] = []
    gamma_rows: dict[str, list[tuple[float, float, float]]] = {"gamma_o": [], "gamma_i": []}
    for s in schemes:
        r: PenaltyReport = s["report"]
        for k, p in enumerate(s["measured"]):
            (d_o, k_o), (d_i, k_i) = r.side_out[k], r.side_in[k]
            # Only a communication in conflict on one side alone carries that side's terms.
            for g, d, kg, other in (("gamma_o", d_o, k_o, d_i), ("gamma_i", d_i, k_i, d_o)):
                if d > 1 and other <= 1:
                    if kg == 0:
                        beta_rows.append((d, p))
                    else:
                        gamma_rows[g].append((d, kg, p))
    defaults = penalties({"comms": [{"id": "x", "src": 0, "dst": 1}]}, family).parameters
    params = dict(defaults)
    undetermined = []
    if beta_rows:
        params["beta"] = sum(d * p for d, p in beta_rows) / sum(d * d for d, _ in beta_rows)
    else:
        undetermined.append("beta")
    for g, rows in gamma_rows.items():
        if not rows or "beta" in undetermined:
            undetermined.append(g)
            continue
        # P = Δβ + Δβ·k·γ: least squares in γ.
        a = [d * params["beta"] * k for d, k, _ in rows]
        b = [p - d * params["beta"] for d, _, p in rows]
        params[g] = sum(x * y for x, y in zip(a, b)) / sum(x * x for x in a)
    out_of_range = [g for g in ("gamma_o", "gamma_i") if g not in undetermined and not 0 <= params[g] < 1]
    fit_params = {k: (min(max(v, 0.0), 0.999999) if k in out_of_range else v) for k, v in params.items()}
    errors = []
    for s in schemes:
        pred = penalties(s["scheme"], family, fit_params).penalties
        for c, m, p in zip(s["scheme"]["comms"], s["measured"], pred):
            errors.append({"scheme": s["name"], "id": c["id"], "measured": m, "predicted": p,
                           "error_rel_pct": (p - m) / m * 100})
    return {
        "family": family,
        "source": name,
        # Usable as they are (`simulate --calibration`): a γ fitted outside [0, 1) is
        # clamped into it, and its fitted value kept under `unclamped`.
        "parameters": fit_params,
        "unclamped": {g: params[g] for g in out_of_range},
        "undetermined": undetermined,
        "out_of_range": out_of_range,
        "rows": {"beta": len(beta_rows), "gamma_o": len(gamma_rows["gamma_o"]), "gamma_i": len(gamma_rows["gamma_i"])},
        "fit": errors,
        "e_abs_pct": sum(abs(e["error_rel_pct"]) for e in errors) / len(errors),
    }


def read_calibration(path: str) -> tuple[str, list[tuple[str, float]]]:
    """(model, parameters) from the JSON `commaware calibrate penalty --json` writes, so that
    measure → calibrate → simulate chains without editing a file."""
    doc, name = read_json_object(path, _core.OptionsError, "from `commaware calibrate penalty --json`")
    family, params = doc.get("family"), doc.get("parameters")
    if family not in ("gige", "infiniband") or not isinstance(params, dict):
        raise input_error(_core.OptionsError, name, "", "not the output of `commaware calibrate penalty --json` "
                          "(needs `family` gige or infiniband and `parameters`)")
    for k, v in params.items():
        if not _positive(v) and v != 0:
            raise input_error(_core.OptionsError, name, f"parameters.{k}", f"must be a finite number, got {v!r}")
    return family, [(str(k), float(v)) for k, v in params.items()]


# -- accuracy (§VI-B) --------------------------------------------------------------------


def e_rel(predicted: float, measured: float) -> float:
    """E_rel = (T_p − T_m) / T_m × 100 (§VI-B)."""
    return (predicted - measured) / measured * 100


def e_abs(predicted: Sequence[float], measured: Sequence[float]) -> float:
    """E_abs of a graph: the mean of |E_rel| over its communications (§VI-B)."""
    return sum(abs(e_rel(p, m)) for p, m in zip(predicted, measured)) / len(measured)


def e_abs_task(predicted: Sequence[float], measured: Sequence[float]) -> float:
    """E_abs of a task: |S_p − S_m| / S_m × 100 over the sums of its communications (§VI-B)."""
    sp, sm = sum(predicted), sum(measured)
    return abs((sp - sm) / sm * 100)


def read_measured_csv(path: str) -> pd.DataFrame:
    """Measured message times: a CSV with `measured_s` and either `message` (the index of the
    message in the `--json` list) or `src`, `dst`, `seq` (ranks, and the message's rank among
    those from src to dst, 0-based, in order of start). Raises TraceError naming the row."""
    import numpy as np
    import pandas as pd

    def bad(field: str, reason: str) -> _core.TraceError:
        return input_error(_core.TraceError, path, field, reason)

    text, _, _ = read_input(path, _core.TraceError)
    # Every row has the header's fields (pandas would take a longer row's first field as
    # an index, or stop at the first longer row with its own words).
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    try:
        for record in reader:
            if not record:
                continue
            if header is None:
                header = [name.strip() for name in record]
            elif len(record) != len(header):
                raise bad(f"row {reader.line_num}", f"expected {len(header)} fields ({', '.join(header)}), got {len(record)}")
    except csv.Error as exc:
        raise bad(f"row {reader.line_num}", f"malformed CSV: {exc}") from None
    try:
        frame = pd.read_csv(io.StringIO(text))
    except ValueError as exc:
        raise bad("", f"malformed CSV: {str(exc).splitlines()[0]}") from None
    keys = ["message"] if "message" in frame.columns else ["src", "dst", "seq"]
    for col in [*keys, "measured_s"]:
        if col not in frame.columns:
            raise bad(col, "missing column: the CSV needs measured_s and either message or src, dst, seq")
        values = pd.to_numeric(frame[col], errors="coerce")
        wrong = ~np.isfinite(values) | (values <= 0 if col == "measured_s" else values < 0)
        if col != "measured_s":
            wrong |= values != values.round()
        if wrong.any():
            row = int(wrong.idxmax())
            need = "a number > 0 (seconds)" if col == "measured_s" else "an integer >= 0"
            raise bad(f"row {row + 2}.{col}", f"must be {need}, got {frame[col].iloc[row]}")
        frame[col] = values
    dup = frame.duplicated(keys)
    if dup.any():
        raise bad(f"row {int(dup.idxmax()) + 2}", f"the same message ({', '.join(keys)}) is measured twice")
    return frame[[*keys, "measured_s"]]


def accuracy(messages: pd.DataFrame, measured: pd.DataFrame, source: str = "<measured>") -> dict[str, Any]:
    """§VI-B accuracy of a replay's messages against measured times: E_rel per message,
    E_abs of the graph and E_abs per task (the messages a rank sends, timed at the source
    as §IV-B measures them), with each message's penalty and conflict classes."""
    import numpy as np

    ours = messages.reset_index(drop=True).assign(message=np.arange(len(messages)))
    ours = ours.sort_values(["src_rank", "dst_rank", "start", "end"], kind="stable")
    ours["seq"] = ours.groupby(["src_rank", "dst_rank"]).cumcount()
    ours = ours.rename(columns={"src_rank": "src", "dst_rank": "dst"})
    keys = ["message"] if "message" in measured.columns else ["src", "dst", "seq"]
    joined = measured.merge(ours, on=keys, how="left", validate="one_to_one", indicator=True)
    missing = joined["_merge"] != "both"
    if missing.any():
        row = joined[missing].iloc[0]
        what = ", ".join(f"{k}={int(row[k])}" for k in keys)
        raise input_error(_core.TraceError, source, f"row {int(missing.idxmax()) + 2}", f"no such message in the replay ({what})")
    joined["predicted_s"] = joined["end"] - joined["start"]
    joined["e_rel_pct"] = (joined["predicted_s"] - joined["measured_s"]) / joined["measured_s"] * 100
    tasks = joined.groupby("src").agg(sp=("predicted_s", "sum"), sm=("measured_s", "sum"))
    per_task = ((tasks["sp"] - tasks["sm"]) / tasks["sm"] * 100).abs()
    cols = ["message", "src", "dst", "seq", "measured_s", "predicted_s", "e_rel_pct", "penalty", "conflicts"]
    rows = joined[cols].astype({"message": int, "src": int, "dst": int, "seq": int})
    records = [
        {**r, "penalty": None if r["penalty"] != r["penalty"] else r["penalty"],
         "conflicts": None if not isinstance(r["conflicts"], str) else [c for c in r["conflicts"].split("+") if c]}
        for r in rows.to_dict("records")
    ]
    return {
        "messages": records,
        "e_abs_pct": float(joined["e_rel_pct"].abs().mean()),
        "tasks": {int(rank): float(e) for rank, e in per_task.items()},
    }
