"""Interference of communication on computation (paper 000): `commaware.interference`,
`commaware interference fit|model` (the rows of `commaware reproduce 000` are tested in
tests/reproduce/test_paper000.py).

Expected values are worked out by hand from the paper's definitions (§2.2: IR is the negative
slope of the least-squares line through the compute rate normalised to its maximum; §3.1 and
the notes: IR_r = ((C − C_r)/C)/MR, IR_s(i) = (1 − RR(i)·(C − C_r)/(MR·C) − C_sr(i)/C)/SR(i)),
or from seeded synthetic samples whose law we chose; never from the code under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commaware import _core
from commaware.interference import fit, interference_rate, normalised_rate, priority, three_point
from conftest import EXAMPLES

EX = EXAMPLES / "interference"
RUN_GROUP = "import sys; from commaware.cli.interference import interference; interference(prog_name='interference')"


def run_group(*args: str) -> subprocess.CompletedProcess:
    """`commaware interference ARGS` through the click group itself (cli.py registers it)."""
    return subprocess.run([sys.executable, "-c", RUN_GROUP, *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def write_csv(path: Path, columns: dict[str, np.ndarray | list[float]]) -> Path:
    pd.DataFrame(columns).to_csv(path, index=False)
    return path


# -- fits (§2.2-§2.5) -------------------------------------------------------------------------


def test_linear_fit_exact_without_noise():
    # y = 1 − 0.05·x with x = 0 among the samples: the maximum compute rate is at x = 0, so the
    # normalised rate is exactly the law; IR = 0.05, const = 1, no residual.
    x = np.linspace(0, 10, 11)
    r = fit({"compute_rate": 7.0 * (1 - 0.05 * x), "recv:Lab1": x})
    f = r.columns["recv:Lab1"]
    assert f.ir == pytest.approx(0.05, abs=1e-12)
    assert f.linear.const == pytest.approx(1.0, abs=1e-12)
    assert f.linear.errors.max_error < 1e-12 and f.linear.errors.stdev < 1e-12
    assert (f.direction, f.peer, f.samples, f.max_rate) == ("recv", "Lab1", 11, 10.0)
    assert r.max_compute_rate == pytest.approx(7.0)
    # the quadratic fit of a line has no x² term
    assert f.quadratic is not None and f.quadratic.quadratic == pytest.approx(0, abs=1e-12)
    assert f.quadratic.linear == pytest.approx(-0.05, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("column,ir", [("recv:A", 0.0502), ("send:B", 0.0327), ("recv:Tenn", 0.0743)])
def test_linear_fit_recovers_slope_from_noisy_samples(seed, column, ir):
    # Uniform noise ±0.005 on the normalised rate, 200 samples over [0, 11] MB/s. Normalising to
    # the maximum sample divides the slope by a factor within 1 ± 0.005; the slope's standard
    # error is 0.0029/(3.2·√200) ≈ 6.4e-5 (≈ 0.1-0.2 % of IR). 1.5 % relative covers both.
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 11, 200)
    y = 1 - ir * x + rng.uniform(-0.005, 0.005, 200)
    r = fit({"compute_rate": 9.057 * y, column: x})
    f = r.columns[column]
    assert f.ir == pytest.approx(ir, rel=0.015)
    assert f.linear.const == pytest.approx(1.0, abs=0.012)
    assert f.linear.errors.max_error <= 0.012  # noise bound 0.005 + normalisation offset ≤ 0.005
    assert f.linear.errors.stdev == pytest.approx(0.01 / np.sqrt(12), rel=0.2)
    assert r.ir == {column: f.ir}


def test_quadratic_fit_recovers_curvature():
    # y = 0.99 − 0.02·x − 0.003·x² on x in [0, 10]: the maximum is 0.99 at x = 0, so the normalised
    # curve is (0.99 − 0.02x − 0.003x²)/0.99 exactly.
    x = np.linspace(0, 10, 21)
    r = fit({"compute_rate": 0.99 - 0.02 * x - 0.003 * x * x, "send:B": x})
    q = r.columns["send:B"].quadratic
    assert q is not None
    assert (q.const, q.linear, q.quadratic) == pytest.approx((1.0, -0.02 / 0.99, -0.003 / 0.99), abs=1e-12)
    assert q.errors.max_error < 1e-12
    assert r.columns["send:B"].linear.errors.max_error > 0.01  # the line cannot follow the curve


def test_quadratic_omitted_with_two_distinct_rates():
    r = fit({"compute_rate": [1.0, 1.0, 0.5, 0.5], "recv:A": [0.0, 0.0, 10.0, 10.0]})
    f = r.columns["recv:A"]
    assert f.ir == pytest.approx(0.05) and f.quadratic is None
    assert r.to_dict()["columns"]["recv:A"]["quadratic"] is None


def synergy(noise: float, seed: int = 0, n: int = 60) -> dict[str, np.ndarray]:
    """Receive-only samples from 1 − .0502A, send-only from 1 − .0327B, concurrent from
    .9542 − .0427A − .0265B (§2.5), one compute-alone sample at the maximum rate 1."""
    rng = np.random.default_rng(seed)
    a = np.concatenate([[0.0], rng.uniform(0, 11, n), np.zeros(n), rng.uniform(0.5, 8, 2 * n)])
    b = np.concatenate([[0.0], np.zeros(n), rng.uniform(0, 10.7, n), rng.uniform(0.5, 10, 2 * n)])
    y = np.where(a * b > 0, 0.9542 - 0.0427 * a - 0.0265 * b, 1 - 0.0502 * a - 0.0327 * b)
    y[1:] += rng.uniform(-noise, noise, len(y) - 1)
    y[0] = 1 + noise  # the maximum stays this sample: the law is the normalised rate times 1/(1 + noise)
    return {"compute_rate": 9.057 * y, "recv:A": a, "send:B": b}


def test_planar_fit_exact_and_separate_prediction_by_hand():
    s = synergy(0.0)
    r = fit(s)
    assert r.columns["recv:A"].ir == pytest.approx(0.0502, abs=1e-12)
    assert r.columns["send:B"].ir == pytest.approx(0.0327, abs=1e-12)
    # The receive-only fit uses the samples with send:B = 0 (its phase and the alone sample).
    assert r.columns["recv:A"].samples == 61 and r.columns["send:B"].samples == 61
    p = r.planar
    assert p is not None and p.samples == 120
    assert (p.const, p.ir_r, p.ir_s) == pytest.approx((0.9542, 0.0427, 0.0265), abs=1e-12)
    assert p.errors.max_error < 1e-12
    # Separate prediction minus truth on the concurrent samples: (1 − .0502A − .0327B) −
    # (.9542 − .0427A − .0265B) = .0458 − .0075A − .0062B.
    conc = s["recv:A"] * s["send:B"] > 0
    diff = 0.0458 - 0.0075 * s["recv:A"][conc] - 0.0062 * s["send:B"][conc]
    assert p.separate is not None
    assert p.separate.mean_error == pytest.approx(np.abs(diff).mean(), abs=1e-12)
    assert p.separate.max_error == pytest.approx(np.abs(diff).max(), abs=1e-12)
    # the general prediction on the same samples is the same formula
    assert r.prediction is not None and r.prediction.columns == ["recv:A", "send:B"]
    assert r.prediction.errors.mean_error == pytest.approx(p.separate.mean_error, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_planar_fit_recovers_coefficients_from_noisy_samples(seed):
    # noise ±0.01; normalisation by exactly 1.01 (the alone sample); standard errors ~0.4 % of
    # the planar slopes with 120 concurrent samples: 3 % relative covers 1 % + 3 SE.
    r = fit(synergy(0.01, seed))
    p = r.planar
    assert p is not None
    assert (p.const, p.ir_r, p.ir_s) == pytest.approx((0.9542 / 1.01, 0.0427 / 1.01, 0.0265 / 1.01), rel=0.03)
    assert r.columns["recv:A"].ir == pytest.approx(0.0502 / 1.01, rel=0.03)
    assert r.columns["send:B"].ir == pytest.approx(0.0327 / 1.01, rel=0.03)
    assert p.separate is not None and p.errors.mean_error < p.separate.mean_error  # §2.5's synergy


def test_multi_peer_prediction():
    # Three receive peers, each measured alone, then all at once following the additive law
    # 1 − Σ IR(i)·TR(i) (§2.3) with noise ±0.005: the prediction errs by the noise only; if the
    # concurrent samples follow halved rates, the prediction is off by Σ IR(i)·TR(i)/2.
    rng = np.random.default_rng(7)
    irs = {"recv:Lab1": 0.0458, "recv:Campus4": 0.0474, "recv:Tenn": 0.0743}
    n = 50
    cols = {c: np.zeros(4 * n) for c in irs}
    for k, c in enumerate(irs):
        cols[c][k * n:(k + 1) * n] = rng.uniform(0, 6, n)
    for c in irs:
        cols[c][3 * n:] = rng.uniform(0.2, 3, n)
    load = sum(irs[c] * cols[c] for c in irs)
    y = 1 - load + rng.uniform(-0.005, 0.005, 4 * n)
    y[0] = 1.005  # the maximum (normalisation by 1.005)
    cols[next(iter(irs))][0] = 0.0
    r = fit({"compute_rate": y, **cols})
    assert set(r.columns) == set(irs)
    for c, ir in irs.items():
        assert r.columns[c].ir == pytest.approx(ir / 1.005, rel=0.03)
    assert r.prediction is not None and r.prediction.samples == n
    assert r.prediction.errors.mean_error < 0.01
    assert r.planar is None  # three receive columns: no planar fit

    halved = np.concatenate([y[:3 * n], 1 - load[3 * n:] / 2])
    r2 = fit({"compute_rate": halved, **cols})
    expected = np.abs(load[3 * n:] / 2).mean()
    assert r2.prediction is not None
    assert r2.prediction.errors.mean_error == pytest.approx(expected, rel=0.05)


def test_no_separate_samples_gives_planar_only_with_a_note():
    s = synergy(0.0)
    conc = s["recv:A"] * s["send:B"] > 0
    r = fit({k: v[conc] for k, v in s.items()})
    assert r.columns == {} and r.planar is not None and r.prediction is None
    assert any("no separate fit" in n for n in r.notes)
    assert r.planar.separate is None
    # normalised to the concurrent maximum: coefficients scale by 1/max
    top = (0.9542 - 0.0427 * s["recv:A"][conc] - 0.0265 * s["send:B"][conc]).max()
    assert r.planar.ir_r == pytest.approx(0.0427 / top, abs=1e-12)


def test_interval_averaging():
    # 16 samples every 0.5 s; intervals of 2 s hold 4 samples each. Within each interval the
    # rates alternate, so the averages are known: compute (1 + 0.8)/2·…; we compare with the
    # fit of the averages made by hand.
    t = np.arange(16) * 0.5
    recv = np.array([0, 2, 0, 2, 4, 6, 4, 6, 8, 10, 8, 10, 1, 3, 1, 3], dtype=float)
    compute = 1 - 0.05 * recv + np.tile([0.01, -0.01], 8)
    r = fit({"time": t, "compute_rate": compute, "recv:A": recv}, interval=2.0)
    assert (r.raw_samples, r.samples, r.interval) == (16, 4, 2.0)
    avg_recv = np.array([1.0, 5.0, 9.0, 2.0])
    avg_compute = 1 - 0.05 * avg_recv  # the ±0.01 noise cancels within each interval
    hand = fit({"compute_rate": avg_compute, "recv:A": avg_recv})
    assert r.columns["recv:A"].ir == pytest.approx(hand.columns["recv:A"].ir, abs=1e-12)
    assert r.columns["recv:A"].ir == pytest.approx(0.05 / 0.95, abs=1e-12)  # max average is 0.95 (recv 1)
    assert r.columns["recv:A"].linear.errors.max_error < 1e-12
    # the sample order does not matter
    perm = np.random.default_rng(3).permutation(16)
    shuffled = fit({"time": t[perm], "compute_rate": compute[perm], "recv:A": recv[perm]}, interval=2.0)
    assert shuffled.columns["recv:A"].ir == pytest.approx(r.columns["recv:A"].ir, abs=1e-12)
    # without --interval the time column is ignored
    assert fit({"time": t, "compute_rate": compute, "recv:A": recv}).samples == 16


def test_csv_dataframe_and_dict_agree(tmp_path):
    rng = np.random.default_rng(11)
    x = rng.uniform(0, 10, 30)
    cols = {"compute_rate": 5 * (1 - 0.03 * x + rng.uniform(-0.01, 0.01, 30)), "send:Lab4": x}
    path = write_csv(tmp_path / "s.csv", cols)
    a, b, c = fit(cols), fit(pd.DataFrame(cols)), fit(path)
    assert a.columns["send:Lab4"].ir == pytest.approx(b.columns["send:Lab4"].ir, abs=1e-12)
    assert a.columns["send:Lab4"].ir == pytest.approx(c.columns["send:Lab4"].ir, abs=1e-9)
    assert (a.source, b.source, c.source) == ("<dict>", "<DataFrame>", str(path))


def test_csv_comments_and_blank_lines_are_skipped(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("# provenance\n\ncompute_rate, recv:A\n1.0,0\n# mid comment\n0.9,2\n\n0.8,4\n")
    r = fit(path)
    assert r.samples == 3 and r.columns["recv:A"].ir == pytest.approx(0.05)


# -- bad samples ------------------------------------------------------------------------------


BAD_CSV = [
    ("compute_rate,recv:A\n1,0\n-1,2\n3,4\n", "row 3, compute_rate", "must be > 0"),
    ("compute_rate,recv:A\n1,0\n0,2\n3,4\n", "row 3, compute_rate", "must be > 0"),
    ("compute_rate,recv:A\n1,0\n0.9,-2\n0.8,4\n", "row 3, recv:A", "must be >= 0"),
    ("compute_rate,recv:A\n1,0\n0.9,nan\n0.8,4\n", "row 3, recv:A", "non-finite"),
    ("compute_rate,recv:A\n1,0\n0.9,2\n", "recv:A", "fewer than the 3 parameters"),
    ("compute_rate,recv:A\n1,3\n0.9,3\n0.8,3\n", "recv:A", "constant transfer rate"),
    ("compute_rate,recv:A\n1,0\n0.9\n", "row 3", "expected 2 fields"),
    ("compute_rate,recv:A\n1,0\n0.9,x\n", "row 3, recv:A", "not a number"),
    ("compute_rate,foo\n1,3\n", "foo", "unknown column"),
    ("compute_rate,recv:A,recv:A\n1,3,3\n", "recv:A", "duplicate column"),
    ("recv:A\n1\n", "compute_rate", "missing column"),
    ("compute_rate\n1\n", "", "no transfer-rate column"),
    ("", "", "empty file"),
    ("compute_rate,recv:A\n", "", "no samples"),
    ('compute_rate,recv:A\n1,"3\n', "row", "malformed CSV"),
]


@pytest.mark.parametrize("text,field,reason", BAD_CSV)
def test_bad_samples_name_file_field_and_reason(tmp_path, text, field, reason):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(_core.TraceError) as info:
        fit(path)
    exc = info.value
    assert exc.source == str(path)
    assert exc.field.startswith(field) if field else exc.field == ""
    assert reason in exc.reason
    proc = run_group("fit", path)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and reason in lines[0]
    assert field in lines[0]


def test_bad_in_memory_samples():
    with pytest.raises(_core.TraceError, match=r"recv:A\[2\]"):
        fit({"compute_rate": [1, 1, 1], "recv:A": [0, 1, -1]})
    with pytest.raises(_core.TraceError, match="different lengths"):
        fit({"compute_rate": [1, 1, 1], "recv:A": [0, 1]})
    with pytest.raises(_core.TraceError, match="expected a CSV file path"):
        fit(42)  # type: ignore[arg-type]
    # planar singular: the concurrent samples have a constant send rate
    with pytest.raises(_core.TraceError, match="send:B.*constant transfer rate"):
        fit({"compute_rate": [1, 0.9, 0.8, 0.7, 0.6], "recv:A": [1, 2, 3, 4, 5], "send:B": [2, 2, 2, 2, 2]})
    # planar singular: proportional rates
    with pytest.raises(_core.TraceError, match="proportional"):
        fit({"compute_rate": [1, 0.9, 0.8, 0.7], "recv:A": [1, 2, 3, 4], "send:B": [2, 4, 6, 8]})


@pytest.mark.parametrize("interval", [0, -1, float("nan"), float("inf")])
def test_bad_interval(interval):
    with pytest.raises(_core.OptionsError) as info:
        fit({"time": [0, 1, 2], "compute_rate": [1, 0.9, 0.8], "recv:A": [0, 1, 2]}, interval=interval)
    assert info.value.source == "--interval"


def test_interval_needs_time(tmp_path):
    with pytest.raises(_core.OptionsError, match="needs a `time` column"):
        fit({"compute_rate": [1, 0.9, 0.8], "recv:A": [0, 1, 2]}, interval=1)
    proc = run_group("fit", EX / "samples_synergy.csv", "--interval", "2")
    assert proc.returncode == 2 and proc.stdout == "" and "--interval" in proc.stderr


# -- the three-point model (§3.1) -------------------------------------------------------------


NOTES = {"C": 10, "MR": 10, "C_r": 5, "children": [{"id": "a", "SR": 10, "RR": 5, "C_sr": 5}]}


def test_notes_example_by_hand():
    # IR_r = ((10 − 5)/10)/10 = 0.05; IR_s = (1 − 5·(10 − 5)/(10·10) − 5/10)/10 = (1 − 0.25 − 0.5)/10 = 0.025.
    m = three_point(NOTES)
    assert m == {"ir_r": pytest.approx(0.05), "ir_s": {"a": pytest.approx(0.025)}}
    # 1 − 0.05·5 − 0.025·10 = 0.5 = C_sr/C
    assert normalised_rate(m, 5, {"a": 10}) == pytest.approx(0.5, abs=1e-15)
    assert normalised_rate(m) == 1.0
    assert three_point(EX / "node.json") == m


def test_second_example_by_hand():
    # C = 8, MR = 4, C_r = 6: IR_r = (2/8)/4 = 0.0625. Child x: RR 2, SR 5, C_sr 4:
    # IR_s = (1 − 2·2/(4·8) − 4/8)/5 = (1 − 0.125 − 0.5)/5 = 0.075. Child y: RR 0, SR 2, C_sr 8: 0.
    m = three_point({"C": 8, "MR": 4, "C_r": 6, "children": [{"id": "x", "SR": 5, "RR": 2, "C_sr": 4},
                                                             {"id": "y", "SR": 2, "RR": 0, "C_sr": 8}]})
    assert m["ir_r"] == pytest.approx(0.0625)
    assert m["ir_s"] == {"x": pytest.approx(0.075), "y": pytest.approx(0.0, abs=1e-15)}
    assert list(m["ir_s"]) == ["x", "y"]
    # receiving at 2 and sending to both: 1 − 0.125 − 0.075·1 − 0·3
    assert normalised_rate(m, 2, {"x": 1, "y": 3}) == pytest.approx(0.8)


pos = st.floats(0.05, 50, allow_nan=False)


@st.composite
def nodes(draw):
    c = draw(pos)
    c_r = c * draw(st.floats(0.01, 1.0))
    k = draw(st.integers(0, 6))
    children = [{"id": f"n{i}", "SR": draw(pos), "RR": draw(st.floats(0, 50)), "C_sr": c * draw(st.floats(0, 1.5))}
                for i in range(k)]
    return {"C": c, "MR": draw(pos), "C_r": c_r, "children": children}


@settings(max_examples=200, deadline=None)
@given(nodes())
def test_model_returns_its_k_plus_2_points(node):
    m = three_point(node)
    c = node["C"]
    assert normalised_rate(m, 0.0) == 1.0
    assert normalised_rate(m, node["MR"]) == pytest.approx(node["C_r"] / c, abs=1e-9)
    for ch in node["children"]:
        assert normalised_rate(m, ch["RR"], {ch["id"]: ch["SR"]}) == pytest.approx(ch["C_sr"] / c, abs=1e-9)


BAD_NODES = [
    ({"MR": 10, "C_r": 5, "children": []}, "C", "missing field"),
    ({"C": 0, "MR": 10, "C_r": 5, "children": []}, "C", "must be > 0"),
    ({"C": 10, "MR": -1, "C_r": 5, "children": []}, "MR", "must be > 0"),
    ({"C": 10, "MR": 10, "C_r": 0, "children": []}, "C_r", "must be > 0 and <= C"),
    ({"C": 10, "MR": 10, "C_r": 11, "children": []}, "C_r", "must be > 0 and <= C"),
    ({"C": 10, "MR": 10, "C_r": 5}, "children", "missing field"),
    ({"C": 10, "MR": 10, "C_r": 5, "children": {}}, "children", "expected a list"),
    ({"C": "10", "MR": 10, "C_r": 5, "children": []}, "C", "expected a number"),
    ({"C": True, "MR": 10, "C_r": 5, "children": []}, "C", "expected a number"),
    ({"C": 10, "MR": 10, "C_r": 5, "Cr": 1, "children": []}, "Cr", "unknown field"),
    ({**NOTES, "children": [*NOTES["children"], {"id": "b", "RR": 1, "C_sr": 1}, {"id": "c"}]}, "children[1].SR",
     "missing field"),
    ({**NOTES, "children": [*NOTES["children"], {"id": "b", "SR": 0, "RR": 1, "C_sr": 1}]}, "children[1].SR",
     "must be > 0"),
    ({**NOTES, "children": [{"id": "b", "SR": 1, "RR": -1, "C_sr": 1}]}, "children[0].RR", "must be >= 0"),
    ({**NOTES, "children": [{"id": "b", "SR": 1, "RR": 1, "C_sr": -1}]}, "children[0].C_sr", "must be >= 0"),
    ({**NOTES, "children": [*NOTES["children"], {"id": "a", "SR": 1, "RR": 1, "C_sr": 1}]}, "children[1].id",
     "duplicate id"),
    ({**NOTES, "children": [{"SR": 1, "RR": 1, "C_sr": 1}]}, "children[0].id", "missing field"),
    ({**NOTES, "children": [{"id": 3, "SR": 1, "RR": 1, "C_sr": 1}]}, "children[0].id", "non-empty string"),
    ({**NOTES, "children": [3]}, "children[0]", "expected an object"),
    ([1, 2], "", "expected a JSON object"),
]


@pytest.mark.parametrize("doc,field,reason", BAD_NODES)
def test_bad_nodes_name_file_field_and_reason(write_json, doc, field, reason):
    path = write_json("node.json", doc)
    with pytest.raises(_core.PlatformError) as info:
        three_point(path)
    assert (info.value.source, info.value.field) == (str(path), field)
    assert reason in info.value.reason
    proc = run_group("model", path, "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and field in lines[0] and reason in lines[0]


def test_malformed_and_missing_node_files(write_json, tmp_path):
    path = write_json("node.json", '{"C": 10, "MR": ')
    with pytest.raises(_core.PlatformError, match="malformed JSON"):
        three_point(path)
    proc = run_group("model", path)
    assert proc.returncode == 2 and proc.stdout == "" and "malformed JSON" in proc.stderr
    proc = run_group("model", tmp_path / "absent.json")
    assert proc.returncode == 2 and proc.stdout == "" and "cannot read" in proc.stderr
    with pytest.raises(_core.PlatformError, match="non-finite"):
        three_point({"C": float("nan"), "MR": 1, "C_r": 1, "children": []})


def test_normalised_rate_rejects_bad_rates():
    m = three_point(NOTES)
    with pytest.raises(_core.OptionsError, match="unknown child"):
        normalised_rate(m, 0, {"b": 1})
    with pytest.raises(_core.OptionsError, match=">= 0"):
        normalised_rate(m, -1)
    with pytest.raises(_core.OptionsError, match=">= 0"):
        normalised_rate(m, 0, {"a": float("inf")})


def test_interference_rate_and_priority():
    # Table 4, Lab3: (1 − 5.8/9.057)/10.8 = 0.03330 (line 8 prints 0.0333)
    assert interference_rate(9.057, 5.8, 10.8) == pytest.approx(0.0333, rel=1e-3)
    assert priority({"a": 2, "b": 1, "c": 2}) == ["b", "a", "c"]
    assert priority({"a": 2, "b": 1, "c": 2}, descending=True) == ["a", "c", "b"]


# -- the CLI ----------------------------------------------------------------------------------


def test_cli_fit_json_shape():
    proc = run_group("fit", EX / "samples_recv.csv", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == {"source", "raw_samples", "samples", "interval", "max_compute_rate", "columns", "planar",
                        "prediction", "notes"}
    col = doc["columns"]["recv:Lab1"]
    assert set(col) == {"column", "direction", "peer", "samples", "max_rate", "linear", "quadratic"}
    assert set(col["linear"]) == {"ir", "const", "mean_error", "max_error", "stdev"}
    assert set(col["quadratic"]) == {"const", "linear", "quadratic", "mean_error", "max_error", "stdev"}
    assert col["linear"]["ir"] == pytest.approx(0.0463, rel=0.03)  # the example's law (see its header)
    assert doc["planar"] is None and doc["prediction"] is None

    proc = run_group("fit", EX / "samples_recv.csv", "--interval", "2", "--json")
    doc = json.loads(proc.stdout)
    assert (doc["raw_samples"], doc["samples"], doc["interval"]) == (48, 12, 2.0)

    doc = json.loads(run_group("fit", EX / "samples_synergy.csv", "--json").stdout)
    assert set(doc["planar"]) == {"recv", "send", "samples", "const", "ir_r", "ir_s", "mean_error", "max_error",
                                  "stdev", "separate"}
    assert set(doc["planar"]["separate"]) == {"mean_error", "max_error", "stdev"}
    assert doc["planar"]["mean_error"] < doc["planar"]["separate"]["mean_error"]
    assert doc["prediction"]["columns"] == ["recv:A", "send:B"]


def test_cli_fit_table():
    proc = run_group("fit", EX / "samples_synergy.csv")
    assert proc.returncode == 0 and proc.stderr == ""
    assert "recv:A" in proc.stdout and "planar fit" in proc.stdout and "separate rates" in proc.stdout


def test_cli_model_json_shape():
    proc = run_group("model", EX / "node.json", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"ir_r": pytest.approx(0.05), "ir_s": {"a": pytest.approx(0.025)}}
    doc = json.loads(run_group("model", EX / "node.json", "--recv", "5", "--send", "a=10", "--json").stdout)
    assert doc == {"ir_r": pytest.approx(0.05), "ir_s": {"a": pytest.approx(0.025)}, "rate": pytest.approx(0.5)}
    doc = json.loads(run_group("model", EX / "node.json", "--send", "a=4", "--json").stdout)
    assert doc["rate"] == pytest.approx(0.9)  # 1 − 0.025·4
    proc = run_group("model", EX / "node.json", "--recv", "5", "--send", "a=10")
    assert proc.returncode == 0 and "0.5" in proc.stdout and "IR_s(a)" in proc.stdout


@pytest.mark.parametrize("args,needle", [
    (["--send", "b=1"], "unknown child 'b'"),
    (["--send", "a=-1"], ">= 0"),
    (["--send", "a"], "expected ID=RATE"),
    (["--send", "a=x"], "expected ID=RATE"),
    (["--send", "a=1", "--send", "a=2"], "given twice"),
    (["--recv", "-1"], "--recv"),
    (["--recv", "inf"], "--recv"),
])
def test_cli_model_bad_rates(args, needle):
    proc = run_group("model", EX / "node.json", *args, "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr


def test_cli_registered_in_main():
    from commaware import cli
    from conftest import run_cli

    assert "interference" in cli.main.list_commands(None)  # type: ignore[arg-type]

    proc = run_cli("interference", "model", EX / "node.json", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["ir_s"] == {"a": pytest.approx(0.025)}
