"""Paper 004 (Vienne et al., Cluster 2008): predictive models of bandwidth sharing.

Each row puts a value printed in the paper beside ours and says what kind of evidence it is
(runner.KINDS). The drawings of Figs. 2, 4, 5 and 7 are lost; where a row needs a scheme, it says
how the scheme was reconstructed from the text, and whether the reconstruction was chosen with the
checked values in view (then the row is ``in_sample``).

What the paper's data determine and what they do not:

* β = 0.75 is the paper's own arithmetic on the GigE star rows (1.5/2 = 2.25/3), and the default
  β of our ``gige`` model: the GigE star rows are in-sample for it. The InfiniBand β is our least
  squares on the InfiniBand star rows: in-sample too. The Myrinet model has no parameter, so its
  star rows are reproductions.
* γ_o and γ_i (§V-A) come from t_a and t_f of Fig. 4 with a t_ref (4 MB, alone) the paper does not
  print. The printed times fix only (1 − γ_o)/(1 − γ_i) = t_a/t_f; every Fig. 4 communication's
  penalty involves a γ, so t_ref cannot be told apart from γ without communication c, the one whose
  printed prediction disagrees with the formula. The rows check the printed γ against that
  relation (arithmetic) and show where a fit of t_ref and both γ to the six measured times lands
  (reproduction, not reproduced).
* Fig. 2 rows 4-6 and Fig. 7's MK1 and MK2 are run over every scheme the text's description
  allows (enumerated in the run), since the drawings are lost.

Runtime: about 3 s, the same with ``--quick`` (nothing here samples).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from .runner import ARITHMETIC, IN_SAMPLE, NOT_REPRODUCED, REPRODUCTION, SELF_CHECK, Check, check, save_figure
from ..sharing import calibrate_penalty, e_abs, e_rel, penalties

PAPER = "004"

#: Fig. 2, first three rows: one node sending 20 MB to one, two, three peers.
FIG2_STARS = {"gige": [1.0, 1.5, 2.25], "myrinet": [1.0, 1.9, 2.8], "infiniband": [1.0, 1.725, 2.61]}
#: Fig. 2, rows 4-6 as printed (their drawings are lost).
FIG2_ROWS = {
    4: {"gige": [2.15, 2.15, 2.15, 1.15], "myrinet": [2.8, 2.8, 2.8, 1.45],
        "infiniband": [2.61, 2.61, 2.61, 1.14]},
    5: {"gige": [4.4, 2.6, 2.6, 2.6, 2.6], "myrinet": [4.4, 4.2, 4.2, 2.5, 2.5],
        "infiniband": [3.663, 3.66, 3.66, 2.035, 2.035]},
    6: {"gige": [4.4, 2.0, 3.3, 2.6, 2.6, 1.4], "myrinet": [4.5, 4.5, 4.5, 2.5, 2.5, 1.3],
        "infiniband": [3.935, 3.935, 3.935, 1.995, 1.995, 1.01]},
}
#: The relative tolerance of the Myrinet star rows, used to count close schemes in rows 4-6.
STAR_TOLERANCE = 0.10

#: Fig. 4 (4 MB), measured and predicted times in s, as printed.
FIG4_MEASURED = {"a": 0.095, "b": 0.099, "c": 0.118, "d": 0.068, "e": 0.099, "f": 0.103}
FIG4_PREDICTED = {"a": 0.095, "b": 0.095, "c": 0.113, "d": 0.069, "e": 0.103, "f": 0.103}
#: §V-A's printed parameters.
BETA, GAMMA_O, GAMMA_I = 0.75, 0.115, 0.036
#: The reconstruction of the notes: the transitive tournament on 4 nodes.
FIG4_ARCS = {"a": (0, 1), "b": (0, 2), "c": (0, 3), "d": (1, 2), "e": (1, 3), "f": (2, 3)}
FIG4_HOW = ("scheme reconstructed as the transitive tournament a 0→1, b 0→2, c 0→3, d 1→2, e 1→3, f 2→3; "
            "it has the text's closed forms for a and f, but they alone do not fix the scheme, and it was "
            "chosen with the printed predictions in view")
#: Half a unit of the last printed digit of Figs. 4 and 7 (times printed to the ms).
PRINTED_HALF_UNIT_S = 0.0005

#: Fig. 6: emission-coefficient sums and per-source minima, penalties, 5 state sets.
FIG6_SUMS = [1, 2, 2, 2, 2, 3]
FIG6_MINIMA = [1, 1, 1, 2, 2, 2]
FIG6_PENALTIES = [5, 5, 5, 2.5, 2.5, 2.5]
FIG6_SETS = 5
#: A scheme consistent with Fig. 6, found by the exhaustive search of myrinet.rs (`search_fig6`):
#: the simplest 4-node scheme with Fig. 6's sums, 5 state sets and its penalties.
FIG6_ARCS = {"a": (0, 1), "b": (0, 2), "c": (0, 3), "d": (2, 1), "e": (3, 1), "f": (3, 0)}

#: Fig. 7, Myrinet model on synthetic graphs: (T_m, T_p, printed E_rel) per communication.
FIG7 = {
    "MK1 (tree)": ([(0.087, 0.089, 2.3), (0.087, 0.089, 2.3), (0.070, 0.071, 1.4), (0.052, 0.053, 1.9),
                    (0.037, 0.035, -5.4), (0.051, 0.053, 3.9), (0.070, 0.071, 1.4)], 2.6),
    "MK2 (complete graph)": ([(0.164, 0.177, 7.9)] * 4 + [(0.043, 0.053, 23.2), (0.086, 0.085, -1.2),
                              (0.087, 0.085, -2.3), (0.108, 0.101, -6.5), (0.108, 0.101, -6.5),
                              (0.059, 0.073, 23.7)], 9.5),
}
#: What the text says of the graphs (§VI-C: "a tree (MK1) and a complete graph (MK2)"), with the
#: printed number of communications: a tree of 7 arcs has 8 nodes, a complete graph of 10 edges 5.
#: The graphs we assume, chosen before looking at the times: the binary tree in heap order with
#: arcs parent → child, and the complete graph oriented i → j for i < j (as Fig. 4's scheme, the
#: complete graph on 4 nodes); labels in arc order.
MK_ASSUMED = {
    "MK1 (tree)": [(0, 1), (0, 2), (1, 3), (1, 4), (2, 5), (2, 6), (3, 7)],
    "MK2 (complete graph)": [(i, j) for i in range(5) for j in range(i + 1, 5)],
}
MK_HOW = {
    "MK1 (tree)": "the binary tree on 8 nodes in heap order, arcs parent → child (a 0→1, b 0→2, c 1→3, d 1→4, "
                  "e 2→5, f 2→6, g 3→7)",
    "MK2 (complete graph)": "the complete graph on 5 nodes oriented i → j for i < j, as Fig. 4's scheme "
                            "(a 0→1, b 0→2, c 0→3, d 0→4, e 1→2, …, j 3→4)",
}


def scheme(arcs: dict[str, tuple[int, int]] | list[tuple[int, int]]) -> dict[str, Any]:
    """A scheme of labelled arcs (a dict) or of arcs labelled a, b, c, … in order (a list)."""
    if not isinstance(arcs, dict):
        arcs = {chr(ord("a") + k): arc for k, arc in enumerate(arcs)}
    return {"comms": [{"id": k, "src": s, "dst": d} for k, (s, d) in arcs.items()]}


def star(k: int) -> dict[str, Any]:
    return scheme({chr(ord("a") + j): (0, j + 1) for j in range(k)})


def fig4_t_ref() -> float:
    """The paper prints no t_ref for Fig. 4: the least-squares t_ref of the printed predictions
    of the five communications the formula reproduces (T_p = penalty · t_ref). Fitted on the
    values the Fig. 4 rows check, so those rows are in-sample."""
    p = penalties(scheme(FIG4_ARCS), "gige").by_id
    ids = "abdef"
    return sum(p[i] * FIG4_PREDICTED[i] for i in ids) / sum(p[i] ** 2 for i in ids)


def star_beta() -> float:
    """β from the GigE star rows of Fig. 2 (rows 2 and 3), by `calibrate penalty` (P = Δ·β)."""
    measured = {"schemes": [{"name": f"star{k}", "comms": [{**c, "penalty": FIG2_STARS["gige"][k - 1]}
                                                           for c in star(k)["comms"]]} for k in (2, 3)]}
    return calibrate_penalty(measured, "gige")["parameters"]["beta"]


# --- Fig. 2 ------------------------------------------------------------------------------------


@check(PAPER, "Fig. 2, one node sending to 1, 2, 3 peers")
def fig2_checks() -> list[Check]:
    rows = []
    for model, printed in FIG2_STARS.items():
        for k, value in enumerate(printed, start=1):
            ours = penalties(star(k), model).penalties[0]
            if k == 1:
                kind, tol = SELF_CHECK, 1e-9
                note = ("a lone transfer has penalty 1 by definition on both sides: the paper's P = T/T_ref with "
                        "T_ref that very transfer (§IV-B), ours because a communication without conflict gets 1")
            elif model == "gige":
                kind, tol = IN_SAMPLE, 1e-9
                note = (f"§V-A formula, a star's penalty is Δ·β (its γ terms vanish, card = Δ); β = {BETA} is the "
                        "paper's value, derived from these very rows (1.5/2 = 2.25/3), so the row is in-sample")
            elif model == "myrinet":
                kind, tol = REPRODUCTION, STAR_TOLERANCE
                note = ("§V-B, no parameter: a star of k has k state sets, one each, so penalty k; against the "
                        f"measured value within a relative {STAR_TOLERANCE * 100:.0f} % (about the paper's own E_abs on "
                        "MK2 in Fig. 7, 9.5 %)")
            else:
                kind, tol = IN_SAMPLE, 0.01
                note = ("InfiniBand: the GigE family with β = 11.28/13 fitted by least squares on this row and the "
                        "other star row (1.725 and 2.61), so in-sample; no single β fits both: residuals "
                        f"{(ours - value) / value:+.2%} here")
            ok = abs(ours - value) <= tol * value
            rows.append(Check(PAPER, f"Fig. 2 {model} star of {k}", value, round(ours, 6), tol, ok, kind=kind,
                              note=note))
    beta = star_beta()
    rows.append(Check(PAPER, "§V-A β from the GigE star rows (1.5/2 = 2.25/3)", BETA, beta, 1e-12,
                      abs(beta - BETA) <= 1e-12, kind=ARITHMETIC,
                      note="the paper's own division of Fig. 2 rows 2 and 3 by the number of communications, "
                           "done by `calibrate penalty` (P = Δ·β, least squares)"))
    return rows


def extensions(arcs: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """Every scheme `arcs` + one arc: between nodes already there, from or to one new node, or
    between two new ones; new nodes numbered in order of use (one scheme per renaming of them)."""
    n = 1 + max(max(a) for a in arcs)
    new = [(s, d) for s in range(n) for d in range(n) if s != d]
    new += [(s, n) for s in range(n)] + [(n, d) for d in range(n)] + [(n, n + 1)]
    return [arcs + [a] for a in new]


def fig2_candidates(row: int) -> list[list[tuple[int, int]]]:
    """The schemes of Fig. 2 row `row` (4-6) as the text describes the figure: row 3's star
    a 0→1, b 0→2, c 0→3 plus one communication per row (d, then e, then f)."""
    level = [[(0, 1), (0, 2), (0, 3)]]
    for _ in range(row - 3):
        level = [e for arcs in level for e in extensions(arcs)]
    return level


def _fmt_arcs(arcs: list[tuple[int, int]], skip: int = 3) -> str:
    return ", ".join(f"{chr(ord('a') + k)} {s}→{d}" for k, (s, d) in enumerate(arcs) if k >= skip)


def fig2_row_survey(row: int) -> dict[str, Any]:
    """Our three models on every candidate scheme of Fig. 2 row `row` against its printed
    penalties: per network the smallest and largest E_abs (%), the best scheme and how many
    schemes put every communication within STAR_TOLERANCE; how many do so for all three networks;
    and the scheme that serves GigE and Myrinet best together (smallest worse E_abs of the two)."""
    printed = FIG2_ROWS[row]
    candidates = fig2_candidates(row)
    per: dict[str, dict[str, Any]] = {m: {"min": float("inf"), "max": 0.0, "best": None, "close": 0} for m in printed}
    all_close = 0
    common: tuple[float, list[tuple[int, int]], dict[str, float]] | None = None
    for arcs in candidates:
        errs, close = {}, {}
        for model, values in printed.items():
            ours = penalties(scheme(arcs), model).penalties
            errs[model] = e_abs(ours, values)
            close[model] = all(abs(p - v) <= STAR_TOLERANCE * v for p, v in zip(ours, values))
            s = per[model]
            s["close"] += close[model]
            s["max"] = max(s["max"], errs[model])
            if errs[model] < s["min"]:
                s["min"], s["best"] = errs[model], arcs
        all_close += all(close.values())
        worse = max(errs["gige"], errs["myrinet"])
        if common is None or worse < common[0]:
            common = (worse, arcs, errs)
    assert common is not None
    return {"schemes": len(candidates), "networks": per, "all_close": all_close,
            "common": {"arcs": common[1], "e_abs_pct": common[2]}}


@check(PAPER, "Fig. 2 rows 4-6, schemes lost")
def fig2_rows_checks() -> list[Check]:
    rows = []
    for row, printed in FIG2_ROWS.items():
        survey = fig2_row_survey(row)
        nets = survey["networks"]
        added = "d" if row == 4 else "d, e" if row == 5 else "d, e, f"
        spans = "; ".join(
            f"{m} {s['min']:.1f}–{s['max']:.1f} % (best: {_fmt_arcs(s['best'])}; {s['close']} within "
            f"{STAR_TOLERANCE * 100:.0f} % on every communication)" for m, s in nets.items())
        common = survey["common"]
        note = (f"the drawing is lost; the text says only that each row adds one communication task. We read "
                f"row {row} as row 3's star a 0→1, b 0→2, c 0→3 plus {added}, each added arc between the nodes so "
                f"far or new ones: {survey['schemes']} schemes (up to renaming new nodes). Our models' E_abs "
                f"against the printed penalties over them: {spans} (infiniband is our β fit with γ = 0). "
                f"{survey['all_close']} schemes are within {STAR_TOLERANCE * 100:.0f} % on every communication of all "
                f"three networks; the scheme best for GigE and Myrinet together ({_fmt_arcs(common['arcs'])}) "
                f"leaves E_abs {common['e_abs_pct']['gige']:.1f} % and {common['e_abs_pct']['myrinet']:.1f} %. "
                "Without the drawing the row cannot be checked" + (
                    ", and no scheme of this construction reproduces it for all three networks"
                    if survey["all_close"] == 0 else "; the schemes that come close were found with the printed "
                    "values in view, so they are no reproduction"))
        extra = {"schemes": survey["schemes"], "within_tolerance_all_networks": survey["all_close"],
                 "tolerance_rel": STAR_TOLERANCE,
                 "networks": {m: {"e_abs_min_pct": s["min"], "e_abs_max_pct": s["max"], "within_tolerance": s["close"],
                                  "best_scheme": [list(a) for a in s["best"]]} for m, s in nets.items()},
                 "best_for_gige_and_myrinet": {"scheme": [list(a) for a in common["arcs"]],
                                               "e_abs_pct": common["e_abs_pct"]}}
        paper_value = " | ".join(f"{m} " + ", ".join(f"{v:g}" for v in values) for m, values in printed.items())
        ours = "smallest E_abs: " + ", ".join(f"{m} {s['min']:.1f} %" for m, s in nets.items())
        rows.append(Check(PAPER, f"Fig. 2 row {row} (drawing lost)", paper_value, ours, None, False,
                          kind=REPRODUCTION, status=NOT_REPRODUCED, note=note, extra=extra))
    return rows


# --- Fig. 4 and the γ of §V-A ---------------------------------------------------------------


def fig4_fit(ids: str = "abcdef", t_ref: float | None = None) -> dict[str, float]:
    """Least squares of our GigE model (β from the stars) on Fig. 4's measured times of `ids`:
    T = penalty(γ_o, γ_i) · t_ref. Fits t_ref too unless it is given. Returns t_ref, gamma_o,
    gamma_i and the rms residual in s."""
    import numpy as np
    from scipy.optimize import least_squares  # type: ignore[import-untyped]

    beta, report_scheme = star_beta(), scheme(FIG4_ARCS)

    def times(t: float, g_o: float, g_i: float) -> np.ndarray:
        p = penalties(report_scheme, "gige", {"beta": beta, "gamma_o": g_o, "gamma_i": g_i}).by_id
        return np.array([p[i] * t for i in ids])

    measured = np.array([FIG4_MEASURED[i] for i in ids])
    if t_ref is None:
        sol = least_squares(lambda x: times(*x) - measured, x0=[0.05, 0.1, 0.05],
                            bounds=([1e-6, 0.0, 0.0], [1.0, 0.999, 0.999]), xtol=1e-14, ftol=1e-14, gtol=1e-14)
        t, g_o, g_i = sol.x
    else:
        sol = least_squares(lambda x: times(t_ref, *x) - measured, x0=[0.1, 0.05],
                            bounds=([0.0, 0.0], [0.999, 0.999]), xtol=1e-14, ftol=1e-14, gtol=1e-14)
        t, (g_o, g_i) = t_ref, sol.x
    rms = float(np.sqrt(np.mean((times(t, g_o, g_i) - measured) ** 2)))
    return {"t_ref_s": float(t), "gamma_o": float(g_o), "gamma_i": float(g_i), "rms_s": rms}


@check(PAPER, "Fig. 4, GigE predictions and the γ derivations")
def fig4_checks() -> list[Check]:
    t_ref = fig4_t_ref()
    report = penalties(scheme(FIG4_ARCS), "gige")
    # The §V-A formula by hand for c: in C_o^m of node 0 (card 1) and C_i^m of node 3 (card 1).
    c_formula = 3 * BETA * max(1 + GAMMA_O * 2, 1 + GAMMA_I * 2) * t_ref
    rows = []
    for cid, printed in FIG4_PREDICTED.items():
        ours = report.by_id[cid] * t_ref
        if cid == "c":
            rows.append(Check(
                PAPER, "Fig. 4 predicted time of c (s)", printed, round(ours, 5), 0.005,
                abs(ours - c_formula) <= 0.005 * c_formula, kind=SELF_CHECK, paper_inconsistent=True,
                note=(f"the §V-A formula gives 3β(1+2γo)·t_ref = {c_formula:.4f} s, not the printed 0.113 "
                      f"({FIG4_MEASURED['c']} measured); the row asserts that our model gives the formula's value "
                      f"(a check of our code against the formula by hand); {FIG4_HOW}; t_ref = {t_ref:.6f} s")))
            continue
        rows.append(Check(PAPER, f"Fig. 4 predicted time of {cid} (s)", printed, round(ours, 5), 0.005,
                          abs(ours - printed) <= 0.005 * printed, kind=IN_SAMPLE,
                          note=f"static prediction penalty × t_ref with the paper's β, γo, γi; t_ref = {t_ref:.6f} s "
                               "is the least-squares t_ref of the printed predictions of a, b, d, e, f (the paper "
                               f"prints none), this one included; {FIG4_HOW}"))
    rows += gamma_checks()
    return rows


def gamma_checks() -> list[Check]:
    """§V-A: γo = 1 − t_a/(3β·t_ref), γi = 1 − t_f/(3β·t_ref), with t_ref (4 MB, alone) not printed.

    What the printed data determine: the ratio (1 − γo)/(1 − γi) = t_a/t_f, so each printed γ
    follows from the other (arithmetic rows). Where a fit of t_ref and both γ to the measured
    times lands: the reproduction rows."""
    t_a, t_f = FIG4_MEASURED["a"], FIG4_MEASURED["f"]
    ratio = t_a / t_f
    lo, hi = (t_a - PRINTED_HALF_UNIT_S) / (t_f + PRINTED_HALF_UNIT_S), (t_a + PRINTED_HALF_UNIT_S) / (t_f - PRINTED_HALF_UNIT_S)
    printed_ratio = (1 - GAMMA_O) / (1 - GAMMA_I)
    t_ref_o, t_ref_i = t_a / (3 * BETA * (1 - GAMMA_O)), t_f / (3 * BETA * (1 - GAMMA_I))
    common = (f"t_ref (4 MB, alone) is not printed, so the printed times fix only (1 − γo)/(1 − γi) = t_a/t_f = "
              f"{t_a}/{t_f} = {ratio:.4f} ({lo:.4f} to {hi:.4f} within the printing's ±0.5 ms); the printed γ give "
              f"{printed_ratio:.4f}. The t_ref each printed γ implies: {t_ref_o:.6f} s (γo, t_a) and {t_ref_i:.6f} s "
              f"(γi, t_f), {abs(t_ref_o / t_ref_i - 1):.2%} apart")
    g_o = 1 - ratio * (1 - GAMMA_I)
    g_i = 1 - (1 - GAMMA_O) / ratio
    rows = [
        Check(PAPER, "§V-A γo from t_a/t_f and the printed γi", GAMMA_O, round(g_o, 5), 0.005, abs(g_o - GAMMA_O) <= 0.005,
              kind=ARITHMETIC, note=f"γo = 1 − (t_a/t_f)(1 − γi), the paper's closed forms on its own numbers; {common}"),
        Check(PAPER, "§V-A γi from t_a/t_f and the printed γo", GAMMA_I, round(g_i, 5), 0.005, abs(g_i - GAMMA_I) <= 0.005,
              kind=ARITHMETIC, note=f"γi = 1 − (1 − γo)/(t_a/t_f), the paper's closed forms on its own numbers; {common}"),
    ]
    fit = fig4_fit("abcdef")
    # Without c, t_ref and γ trade off: two different t_ref fit a, b, d, e, f equally well.
    alt = [fig4_fit("abdef", t_ref=t) for t in (fit["t_ref_s"], t_ref_o)]
    p_printed = penalties(scheme(FIG4_ARCS), "gige").by_id
    analysis = (f"β = {star_beta():g} from the GigE star rows, then t_ref and both γ by least squares on the six "
                f"measured times of Fig. 4 (our `gige` model on the reconstructed scheme; t_ref is fitted because "
                f"the paper does not print it): t_ref = {fit['t_ref_s']:.6f} s, γo = {fit['gamma_o']:.4f}, "
                f"γi = {fit['gamma_i']:.4f}, rms residual {fit['rms_s'] * 1e3:.2f} ms. Without c the data do not "
                f"determine γ: with t_ref = {alt[0]['t_ref_s']:.6f} s the five other times fit with γo = "
                f"{alt[0]['gamma_o']:.4f}, γi = {alt[0]['gamma_i']:.4f} (rms {alt[0]['rms_s'] * 1e3:.3f} ms), and "
                f"with t_ref = {alt[1]['t_ref_s']:.6f} s (the printed γo's) with γo = {alt[1]['gamma_o']:.4f}, "
                f"γi = {alt[1]['gamma_i']:.4f} (rms {alt[1]['rms_s'] * 1e3:.3f} ms). So t_ref, and with it γ, is "
                f"fixed by c alone, the communication the formula misses (at the printed γ it puts c at "
                f"{p_printed['c'] / p_printed['a']:.3f} × a; measured {FIG4_MEASURED['c'] / FIG4_MEASURED['a']:.3f} × a, "
                f"printed prediction {FIG4_PREDICTED['c'] / FIG4_PREDICTED['a']:.3f} × a). The paper took γ from t_a "
                "and t_f alone with a t_ref it measured and did not print; what the printed times do determine is "
                "checked by the two arithmetic γ rows")
    extra = {"fit_six_times": fit, "fit_without_c": alt}
    for g, printed in (("gamma_o", GAMMA_O), ("gamma_i", GAMMA_I)):
        ours = fit[g]
        ok = abs(ours - printed) <= 0.005
        rows.append(Check(PAPER, f"§V-A {g} fitted to Fig. 4's measured times", printed, round(ours, 5), 0.005, ok,
                          kind=REPRODUCTION, status="" if ok else NOT_REPRODUCED, note=analysis, extra=extra))
    return rows


# --- Figs. 5-6 ---------------------------------------------------------------------------------


@check(PAPER, "Figs. 5-6, Myrinet state sets")
def fig6_checks() -> list[Check]:
    report = penalties(scheme(FIG6_ARCS), "myrinet")
    how = ("scheme reconstructed as a 0→1, b 0→2, c 0→3, d 2→1, e 3→1, f 3→0: the simplest (4-node) scheme that "
           "an exhaustive search (myrinet.rs `search_fig6`) keeps because it has Fig. 6's sums, 5 state sets and "
           "the printed penalties, so the rows are in-sample")
    ours = report.penalties
    by_rule = [FIG6_SETS / m for m in FIG6_MINIMA]
    return [
        Check(PAPER, "Fig. 5 number of state sets", FIG6_SETS, report.state_sets, 0,
              report.state_sets == FIG6_SETS and not report.state_sets_estimated, kind=IN_SAMPLE,
              note=f"exact count of maximal matchings; {how}"),
        Check(PAPER, "Fig. 6 penalties a-f", ", ".join(f"{p:g}" for p in FIG6_PENALTIES), ", ".join(f"{p:g}" for p in ours),
              1e-12, all(abs(a - b) <= 1e-12 for a, b in zip(ours, FIG6_PENALTIES)), kind=IN_SAMPLE,
              note=f"sets / per-source minimum emission coefficient (sums {FIG6_SUMS}, minima {FIG6_MINIMA}); {how}"),
        Check(PAPER, "Fig. 6 penalty = state sets / minimum, from its own rows",
              ", ".join(f"{p:g}" for p in FIG6_PENALTIES), ", ".join(f"{p:g}" for p in by_rule), 1e-12,
              all(abs(a - b) <= 1e-12 for a, b in zip(by_rule, FIG6_PENALTIES)), kind=ARITHMETIC,
              note=f"§V-B's rule on the printed table: {FIG6_SETS} sets divided by each printed minimum {FIG6_MINIMA}"),
    ]


# --- Fig. 7 ------------------------------------------------------------------------------------


def _canonical(edges: list[tuple[int, int]], n: int) -> str:
    """A string equal for isomorphic trees: the smallest AHU encoding over the roots."""
    adj: dict[int, list[int]] = {v: [] for v in range(n)}
    for u, v in edges:
        adj[u].append(v)
        adj[v].append(u)

    def enc(v: int, parent: int) -> str:
        return "(" + "".join(sorted(enc(w, v) for w in adj[v] if w != parent)) + ")"

    return min(enc(r, -1) for r in range(n))


@lru_cache(maxsize=None)
def trees(n: int) -> list[list[tuple[int, int]]]:
    """One edge list per unlabelled tree on `n` nodes: grown by adding a leaf to every node of
    the trees on n − 1 nodes, keeping one tree per canonical form."""
    forms: dict[str, list[tuple[int, int]]] = {"()": []}
    for m in range(2, n + 1):
        grown: dict[str, list[tuple[int, int]]] = {}
        for edges in forms.values():
            for v in range(m - 1):
                e = edges + [(v, m - 1)]
                grown.setdefault(_canonical(e, m), e)
        forms = grown
    return list(forms.values())


def orientations(edges: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    return [[(u, v) if mask >> k & 1 else (v, u) for k, (u, v) in enumerate(edges)] for mask in range(2 ** len(edges))]


@lru_cache(maxsize=None)
def mk_schemes(graph: str) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Every scheme of the shape the text gives for `graph`: each orientation of each tree on 8
    nodes (MK1, 7 communications) or of the complete graph on 5 nodes (MK2, 10)."""
    shapes = trees(8) if graph.startswith("MK1") else [[(i, j) for i in range(5) for j in range(i + 1, 5)]]
    return tuple(tuple(arcs) for edges in shapes for arcs in orientations(edges))


def closest_scaled(p: list[float], t: list[float]) -> float:
    """min over t_ref and over labellings of max_i |t_ref·p_σ(i) − t_i| (s): the sorted pairing
    is optimal for every t_ref, and the optimum t_ref is where two of the lines cross."""
    p, t = sorted(p), sorted(t)
    cands = {ti / pi for pi, ti in zip(p, t)}
    for i in range(len(p)):
        for j in range(len(p)):
            cands.add((t[i] + t[j]) / (p[i] + p[j]))
            if p[i] != p[j]:
                cands.add((t[i] - t[j]) / (p[i] - p[j]))
    return min(max(abs(s * pi - ti) for pi, ti in zip(p, t)) for s in cands if s > 0)


def best_e_abs(p: list[float], t: list[float]) -> float:
    """min over t_ref and over labellings of E_abs (%) of t_ref·p against t: for each t_ref the
    best labelling is an assignment problem, and the optimum t_ref is a breakpoint t_i/p_j."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment  # type: ignore[import-untyped]

    pa, ta = np.asarray(p, dtype=float), np.asarray(t, dtype=float)
    best = float("inf")
    for s in {ti / pj for ti in t for pj in p}:
        cost = np.abs(s * pa[None, :] - ta[:, None]) / ta[:, None]
        r, c = linear_sum_assignment(cost)
        best = min(best, float(cost[r, c].sum()) / len(t) * 100)
    return best


def mk_survey(graph: str) -> dict[str, Any]:
    """Our Myrinet model (static, equal sizes) on every scheme of the graph's shape: how many give
    the printed T_p for some t_ref and labelling within the printing's ±0.5 ms, the closest, and
    the smallest E_abs against the measured T_m reachable with the best t_ref and labelling."""
    data, _ = FIG7[graph]
    t_m, t_p = [d[0] for d in data], [d[1] for d in data]
    patterns = {tuple(sorted(penalties(scheme(list(arcs)), "myrinet").penalties)) for arcs in mk_schemes(graph)}
    closest = {pat: closest_scaled(list(pat), t_p) for pat in patterns}
    near = min(closest, key=closest.__getitem__)
    best = {pat: best_e_abs(list(pat), t_m) for pat in patterns}
    fav = min(best, key=best.__getitem__)
    return {"schemes": len(mk_schemes(graph)), "penalty_patterns": len(patterns),
            "matching_printed_predictions": sum(d <= PRINTED_HALF_UNIT_S + 1e-12 for d in closest.values()),
            "closest_max_deviation_s": closest[near], "closest_penalties": list(near),
            "best_e_abs_vs_measured_pct": best[fav], "best_e_abs_penalties": list(fav)}


def mk_dynamic(arcs: list[tuple[int, int]]) -> list[float]:
    """Our engine (dynamic penalties, our extension) on a scheme of equal 4 MiB messages posted
    together: each transfer's time over its time alone, in arc order."""
    from ..api import simulate

    size, bandwidth = 4 * 2**20, 1.25e8
    n = 1 + max(max(a) for a in arcs)
    platform = {"cluster": {"count": n, "speed": 1e9}, "network": {"bandwidth": bandwidth, "model": "myrinet"}}
    ranks: list[list[dict[str, Any]]] = [[] for _ in range(n)]
    for s, d in arcs:
        ranks[s].append({"op": "isend", "dst": d, "bytes": size})
    for s, d in arcs:
        ranks[d].append({"op": "irecv", "src": s})
    for ops in ranks:
        ops.append({"op": "waitall"})
    m = simulate(platform, {"ranks": ranks}, record_timeline=False).messages
    took = {(int(s), int(d)): (e - b) / (size / bandwidth)
            for s, d, b, e in zip(m["src_rank"], m["dst_rank"], m["start"], m["end"])}
    return [took[a] for a in arcs]


def mk_assumed(graph: str) -> dict[str, Any]:
    """Our Myrinet model on the assumed graph: static penalties, t_ref by least squares on the
    printed T_p (a stand-in for the unprinted t_ref), the predicted times and E_abs against T_m
    and T_p; the same with the engine's dynamic penalties."""
    data, _ = FIG7[graph]
    t_m, t_p = [d[0] for d in data], [d[1] for d in data]
    arcs = MK_ASSUMED[graph]
    out: dict[str, Any] = {}
    for how, p in (("static", penalties(scheme(arcs), "myrinet").penalties), ("dynamic", mk_dynamic(arcs))):
        t_ref = sum(a * b for a, b in zip(p, t_p)) / sum(a * a for a in p)
        times = [x * t_ref for x in p]
        out[how] = {"penalties": p, "t_ref_s": t_ref, "predicted_s": times,
                    "e_abs_vs_measured_pct": e_abs(times, t_m), "e_abs_vs_printed_prediction_pct": e_abs(times, t_p)}
    return out


@check(PAPER, "Fig. 7, accuracy measures of the Myrinet model")
def fig7_checks() -> list[Check]:
    rows = []
    for graph, (data, printed_abs) in FIG7.items():
        recomputed = [e_rel(tp, tm) for tm, tp, _ in data]
        worst = max(abs(r - printed) for r, (_, _, printed) in zip(recomputed, data))
        rows.append(Check(PAPER, f"Fig. 7 {graph}: E_rel of every communication", "as printed",
                          f"max |ours − printed| = {worst:.3f}", 0.1, worst <= 0.1, kind=ARITHMETIC,
                          note="E_rel = (T_p − T_m)/T_m × 100 recomputed from the printed times (§VI-B)"))
        ours = e_abs([tp for _, tp, _ in data], [tm for tm, _, _ in data])
        rows.append(Check(PAPER, f"Fig. 7 {graph}: E_abs (%)", printed_abs, round(ours, 3), 0.1,
                          abs(ours - printed_abs) <= 0.1, kind=ARITHMETIC,
                          note=f"mean |E_rel| over the graph from the printed times: {ours:.3f}, printed {printed_abs} "
                               "(the paper truncates to one decimal)"))
        rows += mk_rows(graph)
    return rows


def mk_rows(graph: str) -> list[Check]:
    data, printed_abs = FIG7[graph]
    t_p = [d[1] for d in data]
    short = graph.split()[0]
    n = len(data)
    survey = mk_survey(graph)
    shape = (f"each of the {len(trees(8))} trees on 8 nodes (7 communications) in each of its 2^7 orientations"
             if short == "MK1" else "the complete graph on 5 nodes (10 communications) in each of its 2^10 orientations")
    assumed = (f"§VI-C says only \"a tree (MK1) and a complete graph (MK2)\", with {n} communications; we assume equal "
               "messages starting together and the paper's static prediction penalty × t_ref (§V, Fig. 4)")
    matching = survey["matching_printed_predictions"]
    # A match would be a graph picked for fitting the printed times: in-sample, never a reproduction.
    rows = [Check(
        PAPER, f"Fig. 7 {graph}: predicted times from the Myrinet model on any graph of that shape",
        ", ".join(f"{x:g}" for x in t_p), f"{matching} of {survey['schemes']} schemes",
        PRINTED_HALF_UNIT_S, matching > 0, kind=IN_SAMPLE if matching else REPRODUCTION,
        status="" if matching else NOT_REPRODUCED, extra=survey,
        note=(f"{assumed}. Over {shape} ({survey['schemes']} schemes, {survey['penalty_patterns']} distinct penalty "
              f"sets), with any t_ref and any labelling, {survey['matching_printed_predictions']} give the printed T_p "
              f"within the printing's ±0.5 ms; the closest (penalties "
              f"{', '.join(f'{x:.4g}' for x in survey['closest_penalties'])}) misses by "
              f"{survey['closest_max_deviation_s'] * 1e3:.2f} ms at best. So the printed predictions are not the "
              "static model on equal messages of such a graph: the graph, the sizes, the latencies or the way the "
              "paper's simulator (§VI-A) let transfers end differ, and the text gives none of them"))]
    res = mk_assumed(graph)
    st, dy = res["static"], res["dynamic"]
    ok = st["e_abs_vs_measured_pct"] <= printed_abs + 0.1
    rows.append(Check(
        PAPER, f"Fig. 7 {graph}: E_abs of our Myrinet model on the assumed graph (%)", printed_abs,
        round(st["e_abs_vs_measured_pct"], 2), 0.1, ok, kind=REPRODUCTION, status="" if ok else NOT_REPRODUCED,
        extra={"assumed_graph": [list(a) for a in MK_ASSUMED[graph]], **res,
               "best_over_all_schemes_pct": survey["best_e_abs_vs_measured_pct"]},
        note=(f"{assumed}; assumed graph: {MK_HOW[graph]}. Our static penalties "
              f"{', '.join(f'{x:.4g}' for x in st['penalties'])} with t_ref = {st['t_ref_s']:.5f} s (least squares on "
              f"the printed T_p, a stand-in for the t_ref the paper does not print) give E_abs "
              f"{st['e_abs_vs_measured_pct']:.2f} % against the measured T_m ({st['e_abs_vs_printed_prediction_pct']:.2f} % "
              f"against the printed T_p); the claim counts as reproduced at most {printed_abs} + 0.1. Our engine's "
              f"dynamic penalties (our extension) give {', '.join(f'{x:.4g}' for x in dy['penalties'])}, E_abs "
              f"{dy['e_abs_vs_measured_pct']:.2f} %. Even the most favourable of the {survey['schemes']} schemes of "
              f"that shape, with the t_ref and labelling that suit it best (chosen on T_m, so only a bound), reaches "
              f"{survey['best_e_abs_vs_measured_pct']:.2f} %")))
    return rows


# --- the engine --------------------------------------------------------------------------------


@check(PAPER, "Engine: a star's transfers under gige take penalty × t_ref")
def engine_checks() -> list[Check]:
    """The dynamic model (our extension) agrees with the static prediction when the scheme's
    transfers start together and are equal (a star: all end together)."""
    from ..api import simulate

    size, bandwidth = 20 * 2**20, 1.25e8
    platform = {"cluster": {"count": 4, "speed": 1e9}, "network": {"bandwidth": bandwidth, "model": "gige"}}
    ranks: list[list[dict[str, Any]]] = [[{"op": "isend", "dst": d, "bytes": size} for d in (1, 2, 3)]
                                         + [{"op": "waitall"}]]
    ranks += [[{"op": "recv", "src": 0}] for _ in range(3)]
    result = simulate(platform, {"ranks": ranks}, record_timeline=False)
    took = result.messages["end"].max() - result.messages["start"].min()
    ours = took / (size / bandwidth)
    return [Check(PAPER, "engine: star of 3 under gige, time / t_ref", 2.25, round(ours, 9), 1e-9, abs(ours - 2.25) <= 1e-9,
                  kind=SELF_CHECK,
                  note="replay of 0 → {1,2,3}, 20 MiB each, starting together: the engine's dynamic model keeps our "
                       "static penalty 3β while the three transfers run (our engine against our formula; 2.25 is "
                       "also the star row β was derived from)")]


def plot(outdir: str | Path) -> list[Path]:
    """Penalty bars against the paper's: Fig. 2's stars per model, Fig. 4's times per
    communication (measured, the paper's prediction, ours) and Fig. 6's Myrinet penalties."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    width = 0.38
    ax = axes[0]
    labels, printed, ours = [], [], []
    for model, values in FIG2_STARS.items():
        for k, value in enumerate(values, start=1):
            labels.append(f"{model}\n{k} peer{'s' if k > 1 else ''}")
            printed.append(value)
            ours.append(penalties(star(k), model).penalties[0])
    x = np.arange(len(labels))
    ax.bar(x - width / 2, printed, width, label="paper (measured)", color="#9e9e9e")
    ax.bar(x + width / 2, ours, width, label="ours (model)", color="#1f77b4")
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylabel("penalty")
    ax.set_title("Fig. 2: one node sending to k peers", fontsize=9)
    ax.legend(fontsize=7)

    ax = axes[1]
    t_ref = fig4_t_ref()
    by_id = penalties(scheme(FIG4_ARCS), "gige").by_id
    ids = list(FIG4_ARCS)
    x = np.arange(len(ids))
    w = 0.27
    ax.bar(x - w, [FIG4_MEASURED[i] for i in ids], w, label="paper measured", color="#9e9e9e")
    ax.bar(x, [FIG4_PREDICTED[i] for i in ids], w, label="paper predicted", color="#ffbb78")
    ax.bar(x + w, [by_id[i] * t_ref for i in ids], w, label="ours (gige)", color="#1f77b4")
    ax.set_xticks(x, [f"{i} {s}→{d}" for i, (s, d) in FIG4_ARCS.items()], fontsize=7)
    ax.set_ylabel("time of a 4 MB transfer (s)")
    ax.set_title(f"Fig. 4: GigE, t_ref = {t_ref * 1e3:.1f} ms (fitted to the predictions)", fontsize=9)
    ax.legend(fontsize=7)

    ax = axes[2]
    ids = list(FIG6_ARCS)
    x = np.arange(len(ids))
    ax.bar(x - width / 2, FIG6_PENALTIES, width, label="paper", color="#9e9e9e")
    ax.bar(x + width / 2, penalties(scheme(FIG6_ARCS), "myrinet").penalties, width, label="ours (myrinet)",
           color="#1f77b4")
    ax.set_xticks(x, [f"{i} {s}→{d}" for i, (s, d) in FIG6_ARCS.items()], fontsize=7)
    ax.set_ylabel("penalty")
    ax.set_title("Fig. 6: Myrinet state sets", fontsize=9)
    ax.legend(fontsize=7)
    fig.suptitle("paper 004: penalties against the paper's", fontsize=10)
    return [save_figure(fig, Path(outdir) / "paper004_penalties.svg")]
