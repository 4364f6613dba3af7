"""Bandwidth-sharing penalties (paper 004): `commaware.sharing`, `commaware penalties`,
`commaware calibrate penalty` and the penalty models in the engine.

Every expected number below is worked out by hand from the paper's formulas (§IV-A conflict
classes, §V-A GigE, §V-B Myrinet, Fig. 2/4/6), never taken from the code under test.

Notation (§V-A): Δo / Δi are the out-degree of a communication's source and the in-degree
of its destination; C_o^m holds the communications of the source whose destination has the
largest in-degree, C_i^m those into the destination whose source has the largest out-degree.
    p_o = 1                                  if Δo = 1
        = Δo·β·(1 + γo·(Δo − card C_o^m))    if c ∈ C_o^m
        = Δo·β·(1 − γo / card C_o^m)         otherwise         (p_i alike with γi)
    p   = max(p_o, p_i)
"""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import commaware
from commaware import _core
from commaware.sharing import SCHEME_MODELS, calibrate_penalty, penalties
from conftest import EXAMPLES, run_cli

FIG4 = EXAMPLES / "schemes" / "fig4.json"
FIG6 = EXAMPLES / "schemes" / "fig6.json"
MB4 = 4 * 2**20  # Fig. 4's 4 MB messages, as examples/schemes/fig4.json gives them

# §V-A defaults: β = 0.75 (Fig. 2 stars), γo = 0.115, γi = 0.036 (Fig. 4).
BETA, GO, GI = 0.75, 0.115, 0.036
# InfiniBand (Fig. 2 third column): least squares of P_k = k·β on P_2 = 1.725, P_3 = 2.61:
# β = Σ k·P_k / Σ k² = (2·1.725 + 3·2.61) / (4 + 9) = (3.45 + 7.83) / 13 = 11.28 / 13.
BETA_IB = 11.28 / 13


def scheme(*arcs: tuple[int, int], ids: str | None = None) -> dict:
    names = ids if ids is not None else [f"c{k}" for k in range(len(arcs))]
    return {"comms": [{"id": n, "src": s, "dst": d} for n, (s, d) in zip(names, arcs)]}


def star(k: int, src: int = 0) -> dict:
    return scheme(*[(src, src + j) for j in range(1, k + 1)])


def approx_list(values, rel=1e-12, abs=1e-12):
    return pytest.approx(values, rel=rel, abs=abs)


# -- 1. Fig. 2 star rows ----------------------------------------------------------------


@pytest.mark.parametrize("k, expected", [(1, 1.0), (2, 1.5), (3, 2.25)])
def test_fig2_star_gige(k, expected):
    # One node sending to k peers: Δo = k, every comm in C_o^m (all destinations have
    # Δi = 1), card = k, so p_o = k·β·(1 + γo·0) = k·0.75; p_i = 1. k = 1: no conflict, 1.
    r = penalties(star(k), "gige")
    assert r.penalties == approx_list([expected] * k)
    assert r.delta_out == [k] * k and r.delta_in == [1] * k


def test_fig2_star_infiniband():
    assert penalties(star(1), "infiniband").penalties == [1.0]
    p2 = penalties(star(2), "infiniband").penalties
    p3 = penalties(star(3), "infiniband").penalties
    assert p2 == approx_list([2 * BETA_IB] * 2)
    assert p3 == approx_list([3 * BETA_IB] * 3)
    # Residuals of the fit against the measured Fig. 2 values: 2·0.86769 = 1.73538 (vs
    # 1.725: 0.0104) and 3·0.86769 = 2.60308 (vs 2.61: 0.0069).
    assert abs(p2[0] - 1.725) < 0.011
    assert abs(p3[0] - 2.61) < 0.011
    assert penalties(star(1), "infiniband").parameters["beta"] == pytest.approx(BETA_IB, rel=1e-15)


@pytest.mark.parametrize("k", range(1, 7))
def test_myrinet_star(k):
    # Star of k outgoing: all k arcs share the source, so the state sets are the k
    # singletons; each comm sends in exactly one set (coefficient 1), penalty k / 1 = k.
    r = penalties(star(k), "myrinet")
    assert r.penalties == approx_list([float(k)] * k)
    assert r.state_sets == k and isinstance(r.state_sets, int)
    assert r.state_sets_estimated is False
    # The same holds for k senders into one node (all share the destination).
    r_in = penalties(scheme(*[(j, 0) for j in range(1, k + 1)]), "myrinet")
    assert r_in.penalties == approx_list([float(k)] * k)
    assert r_in.state_sets == k


# -- 2. GigE by hand --------------------------------------------------------------------


def test_fig4_gige_by_hand():
    # a 0→1, b 0→2, c 0→3, d 1→2, e 1→3, f 2→3.  out: 0:3, 1:2, 2:1; in: 1:1, 2:2, 3:3.
    # a: C_o = {a,b,c} with Δi 1,2,3 → C_o^m = {c}, card 1, a ∉: p_o = 3β(1 − γo);
    #    Δi = 1 → p_i = 1.
    a = 3 * BETA * (1 - GO)
    # b: p_o = 3β(1 − γo) as a; C_i = {b (Δo 3), d (Δo 2)} → C_i^m = {b}, card 1, b ∈:
    #    p_i = 2β(1 + γi·(2 − 1)).
    b = max(3 * BETA * (1 - GO), 2 * BETA * (1 + GI))
    # c: c ∈ C_o^m = {c}: p_o = 3β(1 + γo·2); C_i = {c (3), e (2), f (1)} → {c}, c ∈:
    #    p_i = 3β(1 + γi·2).
    c = max(3 * BETA * (1 + 2 * GO), 3 * BETA * (1 + 2 * GI))
    # d: C_o = {d (Δi 2), e (Δi 3)} → {e}, d ∉: p_o = 2β(1 − γo); C_i = {b, d} → {b}, d ∉:
    #    p_i = 2β(1 − γi).
    d = max(2 * BETA * (1 - GO), 2 * BETA * (1 - GI))
    # e: e ∈ {e}: p_o = 2β(1 + γo·1); C_i^m = {c}, e ∉: p_i = 3β(1 − γi).
    e = max(2 * BETA * (1 + GO), 3 * BETA * (1 - GI))
    # f: Δo = 1 → p_o = 1; f ∉ {c}: p_i = 3β(1 − γi).
    f = 3 * BETA * (1 - GI)
    expected = {"a": a, "b": b, "c": c, "d": d, "e": e, "f": f}
    # Numerically: 1.99125, 1.99125, 2.7675, 1.446, 2.169, 2.169.
    assert expected == pytest.approx({"a": 1.99125, "b": 1.99125, "c": 2.7675, "d": 1.446, "e": 2.169, "f": 2.169})
    r = penalties(FIG4, "gige")
    assert r.by_id == pytest.approx(expected, rel=1e-12)
    # The paper's predicted times (Fig. 4, t_ref = 0.047603 s for 4 MB) follow: a → 0.095, f → 0.103.
    assert round(r.by_id["a"] * 0.047603, 3) == 0.095
    assert round(r.by_id["f"] * 0.047603, 3) == 0.103
    # §IV-A classes: a's source sends others (outgoing), its destination 1 also sends (in-out).
    assert r.conflicts[0] == ["outgoing", "in-out"]
    assert r.conflicts[5] == ["incoming", "in-out"]  # f: 2 receives b, d; 3 receives c, e
    assert r.delta_out == [3, 3, 3, 2, 2, 1] and r.delta_in == [1, 2, 3, 2, 3, 3]


# Two sources 0, 1 both send to the same two destinations 2, 3 (a K2,2), each source also
# sends to a private leaf (e 0→4, f 1→5) and each destination also receives from a private
# leaf (g 6→2, h 7→3).  out: 0:3, 1:3, 6:1, 7:1; in: 2:3, 3:3, 4:1, 5:1.
K22 = scheme((0, 2), (0, 3), (1, 2), (1, 3), (0, 4), (1, 5), (6, 2), (7, 3), ids="abcdefgh")


def k22_expected(beta: float, go: float, gi: float) -> dict[str, float]:
    # a: C_o = {a (Δi 3), b (3), e (1)} → C_o^m = {a, b}, card 2, a ∈: p_o = 3β(1 + γo·(3 − 2));
    #    C_i = {a (Δo 3), c (3), g (1)} → C_i^m = {a, c}, card 2, a ∈: p_i = 3β(1 + γi·(3 − 2)).
    #    b, c, d alike by symmetry.
    core = max(3 * beta * (1 + go), 3 * beta * (1 + gi))
    # e: e ∉ C_o^m = {a, b}: p_o = 3β(1 − γo/2); Δi = 1. f alike.
    leaf_out = 3 * beta * (1 - go / 2)
    # g: Δo = 1; g ∉ C_i^m = {a, c}: p_i = 3β(1 − γi/2). h alike.
    leaf_in = 3 * beta * (1 - gi / 2)
    return {"a": core, "b": core, "c": core, "d": core, "e": leaf_out, "f": leaf_out, "g": leaf_in, "h": leaf_in}


def test_gige_card_above_one_on_both_sides():
    r = penalties(K22, "gige")
    exp = k22_expected(BETA, GO, GI)
    # 2.25·1.115 = 2.50875, 2.25·(1 − 0.0575) = 2.120625, 2.25·(1 − 0.018) = 2.2095.
    assert exp == pytest.approx({**dict.fromkeys("abcd", 2.50875), "e": 2.120625, "f": 2.120625,
                                 "g": 2.2095, "h": 2.2095})
    assert r.by_id == pytest.approx(exp, rel=1e-12)
    # The calibration sides: a is strongly slowed with card 2 on both sides: γ factor Δ − card = 1.
    assert r.side_out[0] == (3, 1.0) and r.side_in[0] == (3, 1.0)
    assert r.side_out[4] == (3, -0.5) and r.side_in[6] == (3, -0.5)


def test_gige_custom_params_max_takes_the_reception_side():
    # With γi > γo the reception side wins for a..d: 3·0.8·(1 + 0.3) = 3.12 > 3·0.8·1.1 = 2.64;
    # e: 2.4·(1 − 0.05) = 2.28; g: 2.4·(1 − 0.15) = 2.04.
    params = {"beta": 0.8, "gamma_o": 0.1, "gamma_i": 0.3}
    r = penalties(K22, "gige", params)
    exp = k22_expected(0.8, 0.1, 0.3)
    assert exp == pytest.approx({**dict.fromkeys("abcd", 3.12), "e": 2.28, "f": 2.28, "g": 2.04, "h": 2.04})
    assert r.by_id == pytest.approx(exp, rel=1e-12)
    assert r.parameters == params
    # Parameters as (name, value) pairs too; a later pair overrides an earlier one.
    r2 = penalties(K22, "gige", [("beta", 0.5), ("gamma_o", 0.1), ("gamma_i", 0.3), ("beta", 0.8)])
    assert r2.penalties == r.penalties
    # The same params under infiniband give the same numbers (same §V-A family).
    assert penalties(K22, "infiniband", params).by_id == pytest.approx(exp, rel=1e-12)
    # infiniband's defaults: β = 11.28/13, γ = 0 → a: 3β; e: 3β; g: 3β.
    assert penalties(K22, "infiniband").penalties == approx_list([3 * BETA_IB] * 8)


def test_gige_mixed_strong_and_weak_sides():
    # a 0→2, b 0→3; c 1→2, d 1→4, e 1→5; f 8→2, g 8→6, h 8→7; i 9→3.
    # out: 0:2, 1:3, 8:3, 9:1; in: 2:3, 3:2, others 1.
    s = scheme((0, 2), (0, 3), (1, 2), (1, 4), (1, 5), (8, 2), (8, 6), (8, 7), (9, 3), ids="abcdefghi")
    # a: C_o = {a (Δi 3), b (2)} → {a}, card 1, a ∈: p_o = 2β(1 + γo·1);
    #    C_i = {a (Δo 2), c (3), f (3)} → {c, f}, card 2, a ∉: p_i = 3β(1 − γi/2).
    a = max(2 * BETA * (1 + GO), 3 * BETA * (1 - GI / 2))
    # b: b ∉ {a}: p_o = 2β(1 − γo); C_i = {b (2), i (1)} → {b}, b ∈: p_i = 2β(1 + γi·1).
    b = max(2 * BETA * (1 - GO), 2 * BETA * (1 + GI))
    # c: C_o = {c (3), d (1), e (1)} → {c}, c ∈: p_o = 3β(1 + γo·2); c ∈ {c, f}: p_i = 3β(1 + γi·1).
    c = max(3 * BETA * (1 + 2 * GO), 3 * BETA * (1 + GI))
    # d: d ∉ {c}: p_o = 3β(1 − γo); Δi = 1.  e, g, h alike; f as c.
    d = 3 * BETA * (1 - GO)
    # i: Δo = 1; i ∉ {b}: p_i = 2β(1 − γi).
    i = 2 * BETA * (1 - GI)
    exp = {"a": a, "b": b, "c": c, "d": d, "e": d, "f": c, "g": d, "h": d, "i": i}
    assert exp == pytest.approx({"a": 2.2095, "b": 1.554, "c": 2.7675, "d": 1.99125, "e": 1.99125, "f": 2.7675,
                                 "g": 1.99125, "h": 1.99125, "i": 1.446})
    assert penalties(s, "gige").by_id == pytest.approx(exp, rel=1e-12)


def test_large_star_beside_a_small_hand_case():
    # The per-node sides are computed once per node (a star of Δ arcs used to cost Δ² and took
    # a minute at 10^5): the penalties must be those of the formulas, whatever the star's size.
    # Small case: a 0→1, b 0→2, c 0→3, d 4→3, f 5→3.  out: 0:3, 4:1, 5:1; in: 3:3, 1:1, 2:1.
    # Big star: node 100 sends to 101..100+n, each destination receiving once.
    n = 50_000
    small = [(0, 1), (0, 2), (0, 3), (4, 3), (5, 3)]
    s = scheme(*small, *[(100, 100 + j) for j in range(1, n + 1)], ids=[*"abcdf", *(f"s{j}" for j in range(n))])
    # GigE.  C_o^m of 0: destinations' in-degrees 1, 1, 3 → {c}, card 1.
    #   a, b ∉: p_o = 3β(1 − γo) = 1.99125; Δi = 1.
    #   c ∈: p_o = 3β(1 + γo·2) = 2.7675; C_i^m of 3: sources' out-degrees 3, 1, 1 → {c}, card 1,
    #        c ∈: p_i = 3β(1 + γi·2) = 2.412; p = 2.7675.
    #   d, f: Δo = 1; ∉ C_i^m: p_i = 3β(1 − γi) = 2.169.
    #   Star: every destination has in-degree 1, so C_o^m is the whole star (card n): nβ(1 + γo·0).
    gige = {"a": 3 * BETA * (1 - GO), "b": 3 * BETA * (1 - GO), "c": 3 * BETA * (1 + 2 * GO),
            "d": 3 * BETA * (1 - GI), "f": 3 * BETA * (1 - GI)}
    assert gige == pytest.approx({"a": 1.99125, "b": 1.99125, "c": 2.7675, "d": 2.169, "f": 2.169})
    r = penalties(s, "gige")
    assert r.penalties[:5] == approx_list(list(gige.values()))
    assert r.penalties[5:] == approx_list([n * BETA] * n)
    assert r.side_out[2] == (3, 2.0) and r.side_in[2] == (3, 2.0) and r.side_in[3] == (3, -1.0)
    assert r.side_out[5] == (n, 0.0) and r.side_in[5] == (1, 0.0)
    # SimGrid's IB (βe 0.965, βs 0.925, γs 1.35).  Node 0 sends to 3 (in-degree 3 > 2) and to
    # 1, 2 (in-degree 1): its largest outgoing weight is 3·βs·γs = 3.74625.  Into 3: three
    # distinct senders, one comm from each: 1·βe·3 = 2.895.
    #   a, b, c: max(3.74625, 1 or 2.895) = 3.74625; d, f: Δo = 1 → max(1, 2.895) = 2.895.
    #   Star: no destination receives more than two: n·βs; Δi = 1.
    ib = [3 * 0.925 * 1.35] * 3 + [0.965 * 3] * 2
    assert ib == pytest.approx([3.74625] * 3 + [2.895] * 2)
    r = penalties(s, "ib-simgrid")
    assert r.penalties[:5] == approx_list(ib)
    assert r.penalties[5:] == approx_list([n * 0.925] * n)


def test_ib_simgrid_parallel_arcs_count_per_sender():
    # Into node 9: two parallel arcs from 0 (a, b), one from 1 (c), one from 2 (d).  Distinct
    # senders 3; from 0: 2 comms → 2·βe·3 = 5.79; from 1 or 2: 1·βe·3 = 2.895.  Node 0 sends
    # twice, both to 9 (in-degree 4 > 2): 2·βs·γs = 2.4975 < 5.79.
    s = scheme((0, 9), (0, 9), (1, 9), (2, 9), ids="abcd")
    r = penalties(s, "ib-simgrid")
    assert r.by_id == pytest.approx({"a": 2 * 0.965 * 3, "b": 2 * 0.965 * 3, "c": 0.965 * 3, "d": 0.965 * 3}, rel=1e-12)
    assert r.by_id == pytest.approx({"a": 5.79, "b": 5.79, "c": 2.895, "d": 2.895}, rel=1e-12)


# -- 3. Myrinet --------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_myrinet_parallel_arcs(k):
    # k parallel arcs 0→1 all conflict pairwise: k singleton state sets, penalty k.
    r = penalties(scheme(*[(0, 1)] * k), "myrinet")
    assert r.penalties == approx_list([float(k)] * k)
    assert r.state_sets == k


def test_myrinet_fig6():
    # a 0→1, b 0→2, c 0→3, d 2→1, e 3→1, f 3→0.  Conflicts (shared source or destination):
    # a–b, a–c, b–c, e–f (sources 0, 3); a–d, a–e, d–e (destination 1).  The maximal sets of
    # communications sending together: {a,f}, {b,d,f}, {b,e}, {c,d,f}, {c,e}: 5 sets.
    # Emission coefficients (Fig. 6 "Sum"): a 1, b 2, c 2, d 2, e 2, f 3; minimum per source
    # node: node 0 → 1, node 2 → 2, node 3 → min(2, 3) = 2.  Penalty = 5 / minimum.
    r = penalties(FIG6, "myrinet")
    assert r.by_id == pytest.approx({"a": 5, "b": 5, "c": 5, "d": 2.5, "e": 2.5, "f": 2.5}, rel=1e-12)
    assert r.state_sets == 5 and isinstance(r.state_sets, int)
    assert r.state_sets_estimated is False
    assert len(r.components) == 1 and r.components[0]["exact"]


def test_myrinet_disjoint_components_multiply():
    # A star of 3 (3 sets) and a disjoint star of 4 (4 sets): every combination is a state
    # set, 3·4 = 12; the coefficients scale with the other component's count, so the
    # penalties stay 3 and 4.
    s = scheme(*[(0, j) for j in (1, 2, 3)], *[(10, j) for j in (11, 12, 13, 14)])
    r = penalties(s, "myrinet")
    assert r.state_sets == 12 and isinstance(r.state_sets, int)
    assert r.penalties == approx_list([3.0] * 3 + [4.0] * 4)
    assert sorted(int(c["sets_exact"]) for c in r.components) == [3, 4]
    assert sorted(len(c["comms"]) for c in r.components) == [3, 4]
    d = r.to_dict()
    assert d["state_sets"] == 12 and d["state_sets_estimated"] is False


def random_scheme(seed: int, n: int, nodes: int) -> dict:
    rng = random.Random(seed)
    arcs = []
    while len(arcs) < n:
        s, d = rng.randrange(nodes), rng.randrange(nodes)
        if s != d:
            arcs.append((s, d))
    return scheme(*arcs)


def check_within_ci(exact, estimated):
    assert len(exact.components) == len(estimated.components)
    inside = []
    for ce, cs in zip(exact.components, estimated.components):
        assert ce["comms"] == cs["comms"]
        lo, hi = cs["ci95"]
        inside.append(lo - 1e-9 <= int(ce["sets_exact"]) <= hi + 1e-9)
    return all(inside)


def test_myrinet_estimate_covers_exact_count():
    s = random_scheme(0, 12, 6)
    exact = penalties(s, "myrinet")
    est = penalties(s, "myrinet", {"exact_limit": 0, "exact_states": 0})
    assert exact.state_sets_estimated is False and isinstance(exact.state_sets, int)
    assert est.state_sets_estimated is True
    assert all(not c["exact"] for c in est.components)
    assert isinstance(est.state_sets, float)
    assert check_within_ci(exact, est)
    # The estimated penalties are within twice the tolerance (0.05) of the exact ones, and each
    # component says how close it got.
    assert est.penalties == pytest.approx(exact.penalties, rel=0.1)
    assert all(c["converged"] and c["penalty_error"] <= 0.05 for c in est.to_dict()["components"])
    d = est.to_dict()
    assert d["state_sets_estimated"] is True and all(c["estimated"] for c in d["components"])
    # Deterministic for a seed.
    assert penalties(s, "myrinet", {"exact_limit": 0, "exact_states": 0}).penalties == est.penalties


def test_myrinet_ci_coverage_over_seeds():
    # A 95% interval should hold the exact count for most schemes (expected 19 of 20).
    hits = sum(check_within_ci(penalties(s, "myrinet"), penalties(s, "myrinet", {"exact_limit": 0, "exact_states": 0}))
               for s in (random_scheme(seed, 12, 6) for seed in range(20)))
    assert hits >= 16


def test_myrinet_large_component_is_estimated():
    # 40 comms over 10 nodes: one component above the default exact limit (30).
    s = random_scheme(1, 40, 10)
    r = penalties(s, "myrinet", {"exact_states": 0})
    assert r.state_sets_estimated is True
    assert any(not c["exact"] and len(c["comms"]) > 30 for c in r.components)
    for c in r.components:
        lo, hi = c["ci95"]
        assert 1 <= lo <= c["sets"] <= hi
    assert all(p >= 1 for p in r.penalties)


# -- 4. properties -----------------------------------------------------------------------

ARCS = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)).filter(lambda a: a[0] != a[1]), min_size=2, max_size=12)
PROPS = settings(max_examples=50, deadline=None, derandomize=True)


@PROPS
@given(ARCS)
def test_penalties_at_least_one(arcs):
    s = scheme(*arcs)
    for model in SCHEME_MODELS:
        r = penalties(s, model)
        assert len(r.penalties) == len(arcs)
        assert all(p >= 1 - 1e-12 and math.isfinite(p) for p in r.penalties), (model, r.penalties)


@PROPS
@given(ARCS, st.lists(st.integers(10**6, 2**32 - 1), min_size=6, max_size=6, unique=True))
def test_relabelling_nodes_changes_nothing(arcs, labels):
    s = scheme(*arcs)
    t = scheme(*[(labels[a], labels[b]) for a, b in arcs])
    for model in SCHEME_MODELS:
        r, q = penalties(s, model), penalties(t, model)
        assert q.penalties == pytest.approx(r.penalties, rel=1e-12), model
        assert q.conflicts == r.conflicts and q.delta_out == r.delta_out and q.delta_in == r.delta_in
        assert q.src == [labels[a] for a, _ in arcs]
        if model == "myrinet":
            assert q.state_sets == r.state_sets


@PROPS
@given(ARCS)
def test_isolated_communication_has_penalty_one(arcs):
    # Comm "z" 100→101: no other comm touches nodes 100 or 101.
    s = scheme(*arcs, (100, 101))
    for model in SCHEME_MODELS:
        r = penalties(s, model)
        assert r.penalties[-1] == pytest.approx(1.0, abs=1e-12), model
        assert r.conflicts[-1] == []


@PROPS
@given(ARCS, st.integers(0, 5), st.integers(0, 5), st.sampled_from(["src_receives", "dst_sends", "both"]))
def test_in_out_only_conflict_has_penalty_one(arcs, x, y, how):
    # Comm 100→101 where 100 sends nothing else and 101 receives nothing else, but 100
    # receives (y→100) and/or 101 sends (101→x): its only conflict is in-out.
    extra = []
    if how in ("src_receives", "both"):
        extra.append((y, 100))
    if how in ("dst_sends", "both"):
        extra.append((101, x))
    s = scheme(*arcs, *extra, (100, 101))
    for model in ("gige", "myrinet", "infiniband", "ib-simgrid"):
        r = penalties(s, model)
        assert r.conflicts[-1] == ["in-out"]
        assert r.penalties[-1] == pytest.approx(1.0, abs=1e-12), model


# -- 5. max-min ---------------------------------------------------------------------------


def test_maxmin_penalties():
    # Full-duplex NICs of capacity 1: node 0's up-link carries a, b, c → 1/3 each; node 3's
    # down-link carries c (1/3, bottlenecked at 0) and d, which gets the rest 2/3.
    # Penalty = 1 / rate: 3, 3, 3, 1.5.
    r = penalties(scheme((0, 1), (0, 2), (0, 3), (4, 3)), "maxmin")
    assert r.penalties == approx_list([3.0, 3.0, 3.0, 1.5])
    assert r.parameters == {}
    # A node both sending and receiving is no conflict with full duplex: 0→1, 1→2 → 1, 1.
    assert penalties(scheme((0, 1), (1, 2)), "maxmin").penalties == approx_list([1.0, 1.0])


# -- 6. CLI --------------------------------------------------------------------------------


def test_cli_penalties_json_fig4():
    proc = run_cli("penalties", FIG4, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert {"model", "parameters", "penalties", "conflicts", "degrees"} <= doc.keys()
    assert doc["model"] == "gige"
    assert doc["parameters"] == {"beta": BETA, "gamma_o": GO, "gamma_i": GI}
    assert doc["penalties"] == pytest.approx({"a": 3 * BETA * (1 - GO), "b": 3 * BETA * (1 - GO),
                                              "c": 3 * BETA * (1 + 2 * GO), "d": 2 * BETA * (1 - GI),
                                              "e": 3 * BETA * (1 - GI), "f": 3 * BETA * (1 - GI)}, rel=1e-12)
    assert all(isinstance(v, list) for v in doc["conflicts"].values())
    assert doc["conflicts"]["c"] == ["outgoing", "incoming"]  # 0 and 3 are pure source / sink
    assert doc["degrees"]["a"] == {"delta_out": 3, "delta_in": 1}
    assert doc["degrees"]["f"] == {"delta_out": 1, "delta_in": 3}
    assert "state_sets" not in doc


def test_cli_penalties_params():
    proc = run_cli("penalties", FIG4, "--json", "--param", "beta=1", "--param", "gamma_o=0")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    # a: 3·1·(1 − 0) = 3; f: 3·1·(1 − 0.036) = 2.892.
    assert doc["penalties"]["a"] == pytest.approx(3.0, rel=1e-12)
    assert doc["penalties"]["f"] == pytest.approx(2.892, rel=1e-12)
    assert doc["parameters"] == {"beta": 1.0, "gamma_o": 0.0, "gamma_i": GI}


def test_cli_penalties_myrinet_fig6():
    proc = run_cli("penalties", FIG6, "--model", "myrinet", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["state_sets"] == 5 and isinstance(doc["state_sets"], int)
    assert doc["state_sets_estimated"] is False
    assert doc["penalties"] == pytest.approx({"a": 5, "b": 5, "c": 5, "d": 2.5, "e": 2.5, "f": 2.5})
    assert doc["components"][0]["comms"] == list("abcdef")


def test_cli_static_times():
    bw = 8.8e7
    proc = run_cli("penalties", FIG4, "--static-times", "--bandwidth", bw, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    # static time = penalty × bytes / B, with the file's 4 MiB per comm.
    assert doc["static_times_s"]["a"] == pytest.approx(3 * BETA * (1 - GO) * MB4 / bw, rel=1e-12)
    assert doc["static_times_s"]["c"] == pytest.approx(3 * BETA * (1 + 2 * GO) * MB4 / bw, rel=1e-12)
    assert doc["static_times_s"]["d"] == pytest.approx(2 * BETA * (1 - GI) * MB4 / bw, rel=1e-12)
    # Fig. 6 has no bytes: --bytes gives them; myrinet penalty 5 for a, 2.5 for f.
    proc = run_cli("penalties", FIG6, "--model", "myrinet", "--static-times", "--bandwidth", "1e8",
                   "--bytes", "2e6", "--latency", "1e-4", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["static_times_s"]["a"] == pytest.approx(1e-4 + 5 * 2e6 / 1e8, rel=1e-12)
    assert doc["static_times_s"]["f"] == pytest.approx(1e-4 + 2.5 * 2e6 / 1e8, rel=1e-12)
    # The API agrees.
    r = penalties(FIG4, "gige")
    assert r.static_times(bandwidth=bw)["b"] == pytest.approx(3 * BETA * (1 - GO) * MB4 / bw, rel=1e-12)


def test_cli_table():
    proc = run_cli("penalties", FIG4, env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    with pytest.raises(json.JSONDecodeError):
        json.loads(proc.stdout)
    rows = {}
    for line in proc.stdout.splitlines():
        cells = line.replace("│", " ").split()
        if cells and cells[0] in "abcdef" and len(cells[0]) == 1:
            rows[cells[0]] = cells
    assert set(rows) == set("abcdef"), proc.stdout
    # penalty column formatted with 4 significant digits: 1.99125 → 1.991, 1.446, 2.169.
    assert rows["a"][-1] == "1.991" and rows["d"][-1] == "1.446" and rows["f"][-1] == "2.169"
    assert "parameters: beta=0.75, gamma_o=0.115, gamma_i=0.036" in proc.stdout
    myr = run_cli("penalties", FIG6, "--model", "myrinet", env={"COLUMNS": "200"})
    assert myr.returncode == 0, myr.stderr
    assert "state sets: 5 (exact)" in myr.stdout


def test_cli_table_shows_the_first_rows(tmp_path):
    path = tmp_path / "star60.json"
    path.write_text(json.dumps(star(60)))
    rows = lambda text: [ln for ln in text.splitlines() if ln.startswith("│ c")]  # noqa: E731
    proc = run_cli("penalties", path, env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert len(rows(proc.stdout)) == 50
    assert "first 50 of 60 communications shown" in proc.stdout
    proc = run_cli("penalties", path, "--limit", "3", env={"COLUMNS": "200"})
    assert len(rows(proc.stdout)) == 3 and "first 3 of 60" in proc.stdout
    proc = run_cli("penalties", path, "--all", env={"COLUMNS": "200"})
    assert len(rows(proc.stdout)) == 60 and "shown" not in proc.stdout
    # A star of 60: every penalty 60β = 45.
    assert all(r.split("│")[-2].strip() == "45" for r in rows(proc.stdout))
    check_fails(("penalties", path, "--limit", "3", "--all"), "--limit and --all")


def test_myrinet_count_beyond_a_float_is_given_by_its_log(tmp_path):
    # 110 disjoint complete bipartite K5,6 blocks: each has 6!/1! = 720 maximal matchings and
    # each arc's coefficient is that of K4,5, 5!/1! = 120, so every penalty is 720/120 = 6.
    # The count 720^110 ≈ 10^314 is exact but beyond a float: state_sets is null (JSON writers
    # refuse ints of thousands of digits), state_sets_log10 = 110·log10(720).
    arcs = [(11 * b + i, 11 * b + 5 + j) for b in range(110) for i in range(5) for j in range(6)]
    path = tmp_path / "blocks.json"
    path.write_text(json.dumps(scheme(*arcs)))
    r = penalties(path, "myrinet")
    assert not r.state_sets_estimated and len(r.components) == 110
    assert r.penalties == approx_list([6.0] * len(arcs), rel=1e-9)
    assert r.state_sets is None
    assert r.state_sets_log10 == pytest.approx(110 * math.log10(720), rel=1e-12)
    proc = run_cli("penalties", path, "--model", "myrinet", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["state_sets"] is None and doc["state_sets_estimated"] is False
    assert doc["components"][0]["state_sets"] == 720
    proc = run_cli("penalties", path, "--model", "myrinet", "--limit", "1")
    assert proc.returncode == 0, proc.stderr
    assert f"state sets: about 10^{110 * math.log10(720):.2f} (exact)" in proc.stdout
    # 107 blocks, 720^107 ≈ 10^305.9, still fit: the exact integer, in the API and in the
    # document the core writes for --json (306 digits, beyond any machine integer).
    assert penalties(scheme(*arcs[:107 * 30]), "myrinet").state_sets == 720 ** 107
    path.write_text(json.dumps(scheme(*arcs[:107 * 30])))
    proc = run_cli("penalties", path, "--model", "myrinet", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["state_sets"] == 720 ** 107 and doc["components"][106]["state_sets"] == 720
    assert list(doc["penalties"]) == [f"c{k}" for k in range(107 * 30)]  # the scheme's order


# -- 7. bad input -----------------------------------------------------------------------


def check_fails(args, *needles):
    proc = run_cli(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == "", "nothing on stdout"
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    return lines[0]


ONE = {"comms": [{"id": "a", "src": 0, "dst": 1}]}

SCHEME_CASES = [
    ("selfloop", {"comms": [{"id": "a", "src": 0, "dst": 1}, {"id": "b", "src": 2, "dst": 2}]},
     "comms[1].dst", "self-loop"),
    ("negative", {"comms": [{"id": "a", "src": -1, "dst": 1}]}, "comms[0].src", "-1"),
    ("nonint", {"comms": [{"id": "a", "src": 0, "dst": 1.5}]}, "comms[0].dst", "1.5"),
    ("string_id", {"comms": [{"id": "a", "src": "zero", "dst": 1}]}, "comms[0].src", "zero"),
    ("duplicate", {"comms": [{"id": "a", "src": 0, "dst": 1}, {"id": "a", "src": 1, "dst": 2}]},
     "comms[1].id", "duplicate id"),
    ("empty", {"comms": []}, "comms", "no communications"),
    ("bytes_inf", '{"comms": [{"id": "a", "src": 0, "dst": 1, "bytes": 1e400}]}', "comms[0].bytes", "out of range"),
    ("bytes_neg", {"comms": [{"id": "a", "src": 0, "dst": 1, "bytes": -4}]}, "comms[0].bytes", "-4"),
    ("malformed", '{"comms": [{"id": "a", "src": 0,', "malformed JSON"),
    ("typo", {"comms": [{"id": "a", "src": 0, "dst": 1, "byte": 4}]}, "unknown field `byte`"),
]


@pytest.mark.parametrize("case", SCHEME_CASES, ids=[c[0] for c in SCHEME_CASES])
def test_cli_bad_scheme(tmp_path, case):
    name, doc, *needles = case
    path = tmp_path / f"{name}.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    check_fails(("penalties", path), f"{name}.json", *needles)


def test_cli_missing_file(tmp_path):
    check_fails(("penalties", tmp_path / "nope.json"), "nope.json", "cannot read")


OPTION_CASES = [
    (["--param", "zeta=1"], "zeta", "unknown parameter"),
    (["--param", "beta=nan"], "beta", "finite"),
    (["--param", "beta=inf"], "beta", "finite"),
    (["--param", "beta=0"], "beta", "> 0"),
    (["--param", "beta=-0.5"], "beta", "> 0"),
    (["--param", "gamma_o=1"], "gamma_o", "[0, 1)"),
    (["--param", "gamma_i=-0.1"], "gamma_i", "[0, 1)"),
    (["--param", "beta"], "--param", "NAME=VALUE"),
    (["--param", "beta=x"], "--param", "NAME=VALUE"),
    (["--model", "maxmin", "--param", "beta=1"], "beta", "takes no parameters"),
    (["--model", "myrinet", "--param", "exact_limit=2.5"], "exact_limit", "integer"),
    (["--model", "myrinet", "--param", "tolerance=0"], "tolerance", "(0, 1)"),
    (["--model", "myrinet", "--param", "tolerance=1"], "tolerance", "(0, 1)"),
    (["--model", "ib-simgrid", "--param", "gamma_s=0"], "gamma_s", "> 0"),
    (["--static-times"], "--static-times", "--bandwidth"),
    (["--static-times", "--bandwidth", "0"], "--bandwidth"),
    (["--static-times", "--bandwidth", "1e8"], "--bytes", "no bytes"),
]


@pytest.mark.parametrize("case", OPTION_CASES, ids=[" ".join(c[0]) for c in OPTION_CASES])
def test_cli_bad_option(write_json, case):
    args, *needles = case
    path = write_json("one.json", ONE)
    line = check_fails(("penalties", path, *args), *needles)
    if args[0] == "--param":
        assert line.startswith("error: --param: "), line


def test_api_errors_carry_field():
    cases = [
        ({"comms": [{"id": "a", "src": 3, "dst": 3}]}, None, _core.SchemeError, "comms[0].dst"),
        ({"comms": [{"id": "a", "src": -2, "dst": 3}]}, None, _core.SchemeError, "comms[0].src"),
        ({"comms": [{"id": "a", "src": 0, "dst": 1}, {"id": "a", "src": 0, "dst": 2}]}, None, _core.SchemeError,
         "comms[1].id"),
        ({"comms": []}, None, _core.SchemeError, "comms"),
        ({"comms": [{"id": "a", "src": 0, "dst": 1, "bytes": float("inf")}]}, None, _core.SchemeError,
         "comms[0].bytes"),
        (ONE, {"zeta": 1}, _core.OptionsError, "zeta"),
        (ONE, {"beta": float("nan")}, _core.OptionsError, "beta"),
        (ONE, {"beta": 0}, _core.OptionsError, "beta"),
        (ONE, {"gamma_o": 1}, _core.OptionsError, "gamma_o"),
        (ONE, {"gamma_i": -0.1}, _core.OptionsError, "gamma_i"),
    ]
    for doc, params, exc, field in cases:
        with pytest.raises(exc) as info:
            penalties(doc, "gige", params)
        assert info.value.field == field, (doc, params, info.value)
        assert info.value.reason
        # The source is the dict for scheme errors, the option for parameter errors.
        assert info.value.source == ("<dict>" if exc is _core.SchemeError else "--param")
    # A bad model name: the error names the option (source `--model`, as every option error
    # of the package does).
    for model in ("contention_free", "quantum"):
        with pytest.raises(_core.OptionsError) as info:
            penalties(ONE, model)
        assert info.value.source == "--model" and model in str(info.value)


# -- 8. calibration ---------------------------------------------------------------------

T_REF = 0.047603  # Fig. 4: a lone 4 MB transfer
FIG4_TIMES = {"a": 0.095, "b": 0.099, "c": 0.118, "d": 0.068, "e": 0.099, "f": 0.103}
FIG4_ARCS = {"a": (0, 1), "b": (0, 2), "c": (0, 3), "d": (1, 2), "e": (1, 3), "f": (2, 3)}


def star_rows() -> list[dict]:
    # Fig. 2, Gigabit Ethernet column: stars of 1, 2, 3 with penalties 1, 1.5, 2.25.
    return [{"name": f"star{k}", "comms": [{"id": "abc"[j], "src": 0, "dst": j + 1, "penalty": p} for j in range(k)]}
            for k, p in ((1, 1.0), (2, 1.5), (3, 2.25))]


def measured_doc() -> dict:
    fig4 = {"name": "fig4", "t_ref_s": T_REF,
            "comms": [{"id": c, "src": s, "dst": d, "time_s": FIG4_TIMES[c]} for c, (s, d) in FIG4_ARCS.items()]}
    return {"schemes": [*star_rows(), fig4]}


# β = Σ Δ·P / Σ Δ² over the star rows = (2·1.5·2 + 3·2.25·3) / (2·2² + 3·3²) = 26.25 / 35 = 0.75.
# a carries γo alone (Δi = 1, a ∉ C_o^m, card 1): t_a/t_ref = 3β(1 − γo) → γo = 1 − t_a/(3β t_ref);
# f carries γi alone (Δo = 1, f ∉ C_i^m, card 1): γi = 1 − t_f/(3β t_ref)  (§V-A).
GAMMA_O = 1 - 0.095 / (3 * 0.75 * T_REF)
GAMMA_I = 1 - 0.103 / (3 * 0.75 * T_REF)


def test_calibrate_fig2_and_fig4():
    doc = calibrate_penalty(measured_doc(), "gige")
    p = doc["parameters"]
    assert abs(p["beta"] - 0.75) < 1e-12
    assert p["gamma_o"] == pytest.approx(GAMMA_O, abs=1e-9)
    assert p["gamma_i"] == pytest.approx(GAMMA_I, abs=1e-9)
    # The paper reports γo = 0.115 and γi = 0.036 (0.1130 and 0.0383 from its rounded times).
    assert abs(p["gamma_o"] - 0.115) <= 0.005 and abs(p["gamma_i"] - 0.036) <= 0.005
    assert doc["undetermined"] == [] and doc["out_of_range"] == []
    assert doc["rows"] == {"beta": 5, "gamma_o": 1, "gamma_i": 1}
    # The fit reproduces a and f exactly (their γ was solved from them).
    fit = {(e["scheme"], e["id"]): e for e in doc["fit"]}
    assert fit[("fig4", "a")]["error_rel_pct"] == pytest.approx(0, abs=1e-9)
    assert fit[("fig4", "f")]["error_rel_pct"] == pytest.approx(0, abs=1e-9)
    assert fit[("star3", "a")]["predicted"] == pytest.approx(2.25, abs=1e-12)


def test_calibrate_stars_only():
    doc = calibrate_penalty({"schemes": star_rows()}, "gige")
    assert abs(doc["parameters"]["beta"] - 0.75) < 1e-12
    assert set(doc["undetermined"]) == {"gamma_o", "gamma_i"}
    # Undetermined parameters keep the family's defaults.
    assert doc["parameters"]["gamma_o"] == GO and doc["parameters"]["gamma_i"] == GI
    ib = calibrate_penalty({"schemes": star_rows()}, "infiniband")
    assert ib["parameters"]["gamma_o"] == 0 and ib["parameters"]["gamma_i"] == 0


def test_calibrate_cli(write_json):
    path = write_json("measured.json", measured_doc())
    proc = run_cli("calibrate", "penalty", path, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert abs(doc["parameters"]["beta"] - 0.75) < 1e-12
    assert doc["parameters"]["gamma_o"] == pytest.approx(GAMMA_O, abs=1e-9)
    assert doc["parameters"]["gamma_i"] == pytest.approx(GAMMA_I, abs=1e-9)
    assert doc["family"] == "gige" and doc["undetermined"] == []
    table = run_cli("calibrate", "penalty", path, env={"COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    assert "beta=0.75" in table.stdout


def test_calibrate_bad_measured(write_json):
    bad = {"schemes": [{"name": "s", "comms": [{"id": "a", "src": 0, "dst": 1}, {"id": "b", "src": 0, "dst": 2}]}]}
    path = write_json("bad_measured.json", bad)
    check_fails(("calibrate", "penalty", path), "bad_measured.json", "schemes[0].comms[0].penalty")
    with pytest.raises(_core.SchemeError) as info:
        calibrate_penalty(bad)
    assert info.value.field == "schemes[0].comms[0].penalty"
    # time_s without any t_ref_s is refused too.
    no_ref = {"comms": [{"id": "a", "src": 0, "dst": 1, "time_s": 0.1}]}
    check_fails(("calibrate", "penalty", write_json("no_ref.json", no_ref)), "no_ref.json", "comms[0].time_s", "t_ref_s")
    check_fails(("calibrate", "penalty", write_json("junk.json", "[1, 2")), "junk.json", "malformed JSON")


# -- 9. engine --------------------------------------------------------------------------

B = 1e8
SIZE = 1e6  # above the 65536-byte eager threshold: rendezvous


def star_platform(model: str = "gige", **network) -> dict:
    return {"cluster": {"count": 4, "speed": 1e9, "cores": 1, "memory": 1e9},
            "network": {"model": model, "bandwidth": B, "latency": 0.0, "eager_threshold": 65536, **network}}


# Rank 0 isends SIZE to 1, 2, 3 and waits; each receiver posts its recv at t = 0, so all
# three rendezvous transfers start together at t = 0.
STAR_TRACE = {"ranks": [[*({"op": "isend", "dst": d, "bytes": SIZE, "tag": 0} for d in (1, 2, 3)), {"op": "waitall"}],
                        [{"op": "recv", "src": 0}], [{"op": "irecv", "src": 0}, {"op": "waitall"}],
                        [{"op": "recv", "src": 0}]]}


def star_durations(model: str, params=None, platform=None) -> list[tuple[float, float]]:
    res = commaware.simulate(platform or star_platform(model), STAR_TRACE, model=model, params=params)
    msgs = res.messages
    assert len(msgs) == 3 and sorted(msgs["dst_rank"]) == [1, 2, 3]
    return list(zip(msgs["start"], msgs["end"]))


@pytest.mark.parametrize("model, params, penalty", [
    ("gige", None, 3 * 0.75),                        # star of 3: 3β
    ("gige", {"beta": 0.5}, 3 * 0.5),                # 1.5
    ("infiniband", None, 3 * 11.28 / 13),            # 3·β_IB
    ("ib-simgrid", None, 3.0),                        # max-min 1/3 each binds; cap B/(3·0.925) does not
    ("myrinet", None, 3.0),                           # 3 singleton state sets
    ("maxmin", None, 3.0),
])
def test_engine_star(model, params, penalty):
    for start, end in star_durations(model, params):
        assert start == 0.0
        assert end == pytest.approx(penalty * SIZE / B, rel=1e-9)


def test_engine_says_when_myrinet_estimated(tmp_path, write_json):
    """The simulation's output says how many Myrinet component counts were estimated, how many
    of those estimates the work bound `steps` stopped before `tolerance`, and the largest error
    of a penalty; it warns when any was stopped: the star's three transfers are one component of
    three, counted exactly by default, estimated within the tolerance when the exact programme is
    turned off, and stopped at once with `steps` 1."""
    trace = write_json("trace.json", STAR_TRACE)
    plat = write_json("plat.json", star_platform("myrinet"))
    exact = run_cli("simulate", plat, trace, "--json")
    assert exact.returncode == 0, exact.stderr
    counts = json.loads(exact.stdout)["penalty_counts"]
    assert counts["counts"] >= 1 and counts["estimated"] == 0 and counts["bounded"] == 0
    assert counts["largest_error"] == 0
    assert "estimated" not in exact.stderr
    est = run_cli("simulate", plat, trace, "--json", "--param", "exact_limit=0", "--param", "exact_states=0")
    assert est.returncode == 0, est.stderr
    counts = json.loads(est.stdout)["penalty_counts"]
    assert counts["estimated"] == counts["counts"] >= 1 and counts["bounded"] == 0
    assert 0 <= counts["largest_error"] <= 0.05 and "estimated" not in est.stderr
    # The star is symmetric: every estimate within its tolerance of the exact makespan.
    assert json.loads(est.stdout)["makespan"] == pytest.approx(json.loads(exact.stdout)["makespan"], rel=0.05)
    # A tangled scheme (every rank sends to two others, at once) whose penalties the chains
    # only estimate: `steps` 1 stops them after their first rounds, short of tolerance 1e-6.
    tangled = write_json("tangled.json", {"ranks": [
        [*({"op": "isend", "dst": (r + k) % 4, "bytes": SIZE, "tag": 0} for k in (1, 2)),
         *({"op": "irecv", "src": (r - k) % 4} for k in (1, 2)), {"op": "waitall"}] for r in range(4)]})
    stopped = ["--param", "exact_limit=0", "--param", "exact_states=0", "--param", "steps=1", "--param", "tolerance=1e-6"]
    bounded = run_cli("simulate", plat, tangled, "--json", *stopped)
    assert bounded.returncode == 0, bounded.stderr
    counts = json.loads(bounded.stdout)["penalty_counts"]
    assert 1 <= counts["bounded"] <= counts["estimated"] and counts["largest_error"] > 1e-6
    assert (f"myrinet: {counts['estimated']} of {counts['counts']} component counts were estimated, and steps "
            f"stopped {counts['bounded']} of those estimates before tolerance") in " ".join(bounded.stderr.split())
    # The API carries the same, and other models have no such field.
    res = commaware.simulate(star_platform("myrinet"), json.loads((tmp_path / "tangled.json").read_text()),
                             params={"exact_limit": 0, "exact_states": 0, "steps": 1, "tolerance": 1e-6})
    assert res.to_dict()["penalty_counts"] == counts
    assert any("estimated, ±" in w for w in res.warnings)
    assert "penalty_counts" not in commaware.simulate(star_platform("gige"), STAR_TRACE).to_dict()


def test_engine_platform_parameters(tmp_path, write_json):
    trace = write_json("trace.json", STAR_TRACE)
    good = write_json("plat.json", star_platform("gige", parameters={"beta": 0.5}))
    proc = run_cli("simulate", good, trace, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["model"] == "gige"
    assert [m["end"] for m in doc["messages"]] == pytest.approx([1.5 * SIZE / B] * 3, rel=1e-9)
    # The API honours the file too, and params given to simulate override it.
    assert star_durations("gige", platform=str(good))[0][1] == pytest.approx(1.5 * SIZE / B, rel=1e-9)
    assert star_durations("gige", {"beta": 1.0}, platform=str(good))[0][1] == pytest.approx(3 * SIZE / B, rel=1e-9)
    bad = write_json("bad_plat.json", star_platform("gige", parameters={"beta": 0}))
    check_fails(("simulate", bad, trace), "bad_plat.json", "network.parameters.beta", "> 0")
    with pytest.raises(_core.PlatformError) as info:
        commaware.simulate(str(bad), STAR_TRACE)
    assert info.value.field == "network.parameters.beta"


# -- accuracy against measured times (§VI-B) -------------------------------------------------


def _star_run(tmp_path):
    """A 4-host star, rank 0 sending 1 MiB to ranks 1, 2, 3 at t = 0 (gige: 2.25 x t_ref each)."""
    size, bw = 2**20, 1e8
    platform = {"cluster": {"count": 4, "speed": 1e9}, "network": {"bandwidth": bw, "model": "gige"}}
    trace = {"ranks": [[{"op": "isend", "dst": d, "bytes": size} for d in (1, 2, 3)] + [{"op": "waitall"}]]
             + [[{"op": "recv", "src": 0}] for _ in range(3)]}
    pp, tp = tmp_path / "p.json", tmp_path / "t.json"
    pp.write_text(json.dumps(platform))
    tp.write_text(json.dumps(trace))
    return str(pp), str(tp), 2.25 * size / bw


def test_measured_accuracy_cli(tmp_path):
    pp, tp, predicted = _star_run(tmp_path)
    csv = tmp_path / "m.csv"
    # Measured 10 % above and 20 % below the prediction: E_rel -9.09 % and +25 %.
    csv.write_text(f"src,dst,seq,measured_s\n0,1,0,{predicted * 1.1}\n0,2,0,{predicted * 0.8}\n")
    proc = run_cli("simulate", pp, tp, "--measured", str(csv), "--json")
    assert proc.returncode == 0, proc.stderr
    acc = json.loads(proc.stdout)["accuracy"]
    rel = [m["e_rel_pct"] for m in acc["messages"]]
    assert rel == pytest.approx([(1 / 1.1 - 1) * 100, (1 / 0.8 - 1) * 100])
    assert acc["e_abs_pct"] == pytest.approx((abs(rel[0]) + abs(rel[1])) / 2)
    # One task (rank 0): |S_p - S_m| / S_m over its two messages.
    assert acc["tasks"] == {"0": pytest.approx(abs(2 - 1.9) / 1.9 * 100)}
    assert [m["penalty"] for m in acc["messages"]] == pytest.approx([2.25, 2.25])
    assert acc["messages"][0]["conflicts"] == ["outgoing"]
    text = run_cli("simulate", pp, tp, "--measured", str(csv))
    assert text.returncode == 0 and "E_abs" in text.stdout


@pytest.mark.parametrize("body,field", [
    ("src,dst,measured_s\n0,1,1\n", "seq: missing column"),
    ("src,dst,seq,measured_s\n0,1,0,-1\n", "row 2.measured_s: must be a number > 0"),
    ("src,dst,seq,measured_s\n0,1,9,1\n", "row 2: no such message"),
    ("src,dst,seq,measured_s\n0,1,0,1\n0,1,0,2\n", "row 3: the same message"),
])
def test_measured_bad_csv(tmp_path, body, field):
    pp, tp, _ = _star_run(tmp_path)
    csv = tmp_path / "bad.csv"
    csv.write_text(body)
    proc = run_cli("simulate", pp, tp, "--measured", str(csv), "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"{csv}: {field}" in proc.stderr and "Traceback" not in proc.stderr


def test_penalty_columns_in_messages(tmp_path):
    pp, tp, predicted = _star_run(tmp_path)
    m = commaware.simulate(pp, tp).messages
    assert list(m["penalty"]) == pytest.approx([2.25] * 3)
    assert list(m["conflicts"].astype(str)) == ["outgoing"] * 3
    plain = commaware.simulate(pp, tp, model="maxmin").messages
    assert plain["penalty"].isna().all() and plain["conflicts"].isna().all()
    doc = json.loads(run_cli("simulate", pp, tp, "--json").stdout)
    assert [x["penalty"] for x in doc["messages"]] == pytest.approx([2.25] * 3)
    assert [x["conflicts"] for x in doc["messages"]] == [["outgoing"]] * 3
    assert "penalty" not in json.loads(run_cli("simulate", pp, tp, "--json", "--model", "maxmin").stdout)["messages"][0]


def test_calibrate_example_file():
    proc = run_cli("calibrate", "penalty", str(EXAMPLES / "measured" / "paper004_gige.json"), "--json")
    assert proc.returncode == 0, proc.stderr
    params = json.loads(proc.stdout)["parameters"]
    # β from the stars; γ from t_a = 0.095 and t_f = 0.103 with t_ref = 0.047603 (closed forms).
    assert params["beta"] == pytest.approx(0.75, abs=1e-12)
    assert params["gamma_o"] == pytest.approx(1 - 0.095 / (2.25 * 0.047603), abs=1e-9)
    assert params["gamma_i"] == pytest.approx(1 - 0.103 / (2.25 * 0.047603), abs=1e-9)


def test_myrinet_large_component_is_marked():
    """Far beyond the exact limit the estimator (sequential Monte Carlo, resampling) keeps
    its effective sample size above the floor (20) where plain importance weights collapsed:
    the count is estimated, not failed, with an interval around it and finite penalties >= 1."""
    rng = random.Random(1)
    comms = []
    for i in range(1000):
        s = rng.randrange(200)
        d = rng.randrange(199)
        comms.append({"id": f"c{i}", "src": s, "dst": d + (d >= s)})
    doc = penalties({"comms": comms}, "myrinet").to_dict()
    assert doc["state_sets_estimated"] and not doc["estimator_failed"]
    big = max(doc["components"], key=lambda c: len(c["comms"]))
    assert len(big["comms"]) > 900 and big["estimated"] and big["effective_samples"] >= 20
    assert big["ci95"][0] <= big["state_sets"] <= big["ci95"][1]
    assert all(math.isfinite(p) and p >= 1 for p in doc["penalties"].values())
    json.dumps(doc, allow_nan=False)  # valid JSON: no NaN or inf left


def test_measure_calibrate_simulate_chain(tmp_path):
    """calibrate's --json feeds simulate --calibration (model and parameters) unedited."""
    fit = tmp_path / "fit.json"
    proc = run_cli("calibrate", "penalty", str(EXAMPLES / "measured" / "paper004_gige.json"), "--json")
    fit.write_text(proc.stdout)
    pp, tp, predicted = _star_run(tmp_path)
    doc = json.loads(run_cli("simulate", pp, tp, "--calibration", str(fit), "--json").stdout)
    assert doc["model"] == "gige"
    # β = 0.75 fitted: a star of 3 still takes 3β = 2.25 t_ref; a --param after it wins.
    assert [m["penalty"] for m in doc["messages"]] == pytest.approx([2.25] * 3)
    doc = json.loads(run_cli("simulate", pp, tp, "--calibration", str(fit), "--param", "beta=0.5", "--json").stdout)
    assert [m["penalty"] for m in doc["messages"]] == pytest.approx([1.5] * 3)
    bad = tmp_path / "bad.json"
    bad.write_text('{"parameters": {}}')
    proc = run_cli("simulate", pp, tp, "--calibration", str(bad))
    assert proc.returncode == 2 and "calibrate penalty" in proc.stderr and proc.stdout == ""


def test_mean_penalty_per_task(tmp_path):
    """§VI-A: per task, the average penalty of the messages it sent (gige: rank 0 sends three
    messages at penalty 2.25; the receivers send nothing)."""
    pp, tp, _ = _star_run(tmp_path)
    ranks = commaware.simulate(pp, tp).ranks
    assert ranks["mean_penalty"][0] == pytest.approx(2.25)
    assert ranks["mean_penalty"][1:].isna().all()
    doc = json.loads(run_cli("simulate", pp, tp, "--json").stdout)
    assert doc["ranks"][0]["mean_penalty"] == pytest.approx(2.25) and "mean_penalty" not in doc["ranks"][1]
    assert "mean penalty" in run_cli("simulate", pp, tp).stdout
    assert "mean penalty" not in run_cli("simulate", pp, tp, "--model", "maxmin").stdout
