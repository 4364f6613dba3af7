"""Paper 004 (Vienne et al., Cluster 2008): predictive models of bandwidth sharing.

Each row puts a value printed in the paper beside ours. The drawings of Figs. 2, 4 and 5 are
lost; where a row needs a scheme, it says how the scheme was reconstructed from the text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .runner import Check, check, save_figure
from ..sharing import calibrate_penalty, e_abs, e_rel, penalties

PAPER = "004"

#: Fig. 2, first three rows: one node sending 20 MB to one, two, three peers.
FIG2_STARS = {"gige": [1.0, 1.5, 2.25], "myrinet": [1.0, 1.9, 2.8], "infiniband": [1.0, 1.725, 2.61]}

#: Fig. 4 (4 MB), measured and predicted times in s, as printed.
FIG4_MEASURED = {"a": 0.095, "b": 0.099, "c": 0.118, "d": 0.068, "e": 0.099, "f": 0.103}
FIG4_PREDICTED = {"a": 0.095, "b": 0.095, "c": 0.113, "d": 0.069, "e": 0.103, "f": 0.103}
#: The reconstruction of the notes: the transitive tournament on 4 nodes.
FIG4_ARCS = {"a": (0, 1), "b": (0, 2), "c": (0, 3), "d": (1, 2), "e": (1, 3), "f": (2, 3)}
FIG4_HOW = "scheme reconstructed as the transitive tournament a 0→1, b 0→2, c 0→3, d 1→2, e 1→3, f 2→3"

#: Fig. 6: emission-coefficient sums and per-source minima, penalties, 5 state sets.
FIG6_SUMS = [1, 2, 2, 2, 2, 3]
FIG6_MINIMA = [1, 1, 1, 2, 2, 2]
FIG6_PENALTIES = [5, 5, 5, 2.5, 2.5, 2.5]
#: A scheme consistent with Fig. 6 (found by exhaustive search over 4-node schemes; the
#: simplest with these sums, minima and 5 state sets).
FIG6_ARCS = {"a": (0, 1), "b": (0, 2), "c": (0, 3), "d": (2, 1), "e": (3, 1), "f": (3, 0)}

#: Fig. 7, Myrinet model on synthetic graphs: (T_m, T_p, printed E_rel) per communication.
FIG7 = {
    "MK1 (tree)": ([(0.087, 0.089, 2.3), (0.087, 0.089, 2.3), (0.070, 0.071, 1.4), (0.052, 0.053, 1.9),
                    (0.037, 0.035, -5.4), (0.051, 0.053, 3.9), (0.070, 0.071, 1.4)], 2.6),
    "MK2 (complete graph)": ([(0.164, 0.177, 7.9)] * 4 + [(0.043, 0.053, 23.2), (0.086, 0.085, -1.2),
                              (0.087, 0.085, -2.3), (0.108, 0.101, -6.5), (0.108, 0.101, -6.5),
                              (0.059, 0.073, 23.7)], 9.5),
}


def scheme(arcs: dict[str, tuple[int, int]]) -> dict[str, Any]:
    return {"comms": [{"id": k, "src": s, "dst": d} for k, (s, d) in arcs.items()]}


def star(k: int) -> dict[str, Any]:
    return scheme({chr(ord("a") + j): (0, j + 1) for j in range(k)})


def fig4_t_ref() -> float:
    """The paper prints no t_ref for Fig. 4: the least-squares t_ref of the printed predictions
    of the five communications the formula reproduces (T_p = penalty · t_ref)."""
    p = penalties(scheme(FIG4_ARCS), "gige").by_id
    ids = "abdef"
    return sum(p[i] * FIG4_PREDICTED[i] for i in ids) / sum(p[i] ** 2 for i in ids)


@check(PAPER, "Fig. 2, one node sending to 1, 2, 3 peers")
def fig2_checks() -> list[Check]:
    rows = []
    for model, printed in FIG2_STARS.items():
        for k, value in enumerate(printed, start=1):
            ours = penalties(star(k), model).penalties[0]
            if model == "gige":
                tol, note = 1e-9, "§V-A formula with β = 0.75: Δ·β for a star (its γ terms vanish, card = Δ)"
            elif model == "myrinet":
                # The Myrinet model is descriptive (state sets give penalty k for a star of k);
                # the paper reports its errors against measurements up to E_abs = 9.5 % (Fig. 7).
                tol, note = 0.10, ("§V-B: a star of k has k state sets, one each, so penalty k; against the "
                                   "measured value, relative tolerance 10 % (the paper's own Fig. 7 errors reach 9.5 %)")
            else:
                tol, note = 0.01, ("InfiniBand: GigE family with β = 11.28/13 fitted by least squares on the rows "
                                   "1.725 and 2.61 (no single β fits both: residuals +0.6 % and −0.3 %)")
            ok = abs(ours - value) <= tol * value
            rows.append(Check(PAPER, f"Fig. 2 {model} star of {k}", value, round(ours, 6), tol, ok, note=note))
    measured = {"schemes": [{"name": f"star{k}", "comms": [{**c, "penalty": FIG2_STARS["gige"][k - 1]}
                                                           for c in star(k)["comms"]]} for k in (2, 3)]}
    beta = calibrate_penalty(measured, "gige")["parameters"]["beta"]
    rows.append(Check(PAPER, "§V-A β from the GigE star rows (1.5/2 = 2.25/3)", 0.75, beta, 1e-12,
                      abs(beta - 0.75) <= 1e-12, note="`calibrate penalty` on Fig. 2 rows 2 and 3 (P = Δ·β)"))
    return rows


@check(PAPER, "Fig. 4, GigE predictions and the γ derivations")
def fig4_checks() -> list[Check]:
    t_ref = fig4_t_ref()
    report = penalties(scheme(FIG4_ARCS), "gige")
    beta, g_o, g_i = 0.75, 0.115, 0.036
    # The §V-A formula by hand for c: in C_o^m of node 0 (card 1) and C_i^m of node 3 (card 1).
    c_formula = 3 * beta * max(1 + g_o * 2, 1 + g_i * 2) * t_ref
    rows = []
    for cid, printed in FIG4_PREDICTED.items():
        ours = report.by_id[cid] * t_ref
        if cid == "c":
            rows.append(Check(
                PAPER, "Fig. 4 predicted time of c (s)", printed, round(ours, 5), 0.005,
                abs(ours - c_formula) <= 0.005 * c_formula, paper_inconsistent=True,
                note=(f"the §V-A formula gives 3β(1+2γo)·t_ref = {c_formula:.4f} s, not the printed 0.113 "
                      f"(0.118 measured); we assert the formula's value; {FIG4_HOW}; t_ref = {t_ref:.6f} s")))
            continue
        rows.append(Check(PAPER, f"Fig. 4 predicted time of {cid} (s)", printed, round(ours, 5), 0.005,
                          abs(ours - printed) <= 0.005 * printed,
                          note=f"static prediction penalty × t_ref; {FIG4_HOW}; t_ref = {t_ref:.6f} s, the "
                               "least-squares t_ref of rows a, b, d, e, f (not printed in the paper)"))
    # §V-A: γo and γi from t_a and t_f (closed forms), with β from the star rows.
    measured = {"schemes": [
        {"name": "star2", "comms": [{**c, "penalty": 1.5} for c in star(2)["comms"]]},
        {"name": "star3", "comms": [{**c, "penalty": 2.25} for c in star(3)["comms"]]},
        {"name": "fig4", "t_ref_s": t_ref,
         "comms": [{**c, "time_s": FIG4_MEASURED[c["id"]]} for c in scheme(FIG4_ARCS)["comms"]]},
    ]}
    fit = calibrate_penalty(measured, "gige")
    for g, printed, comm in (("gamma_o", 0.115, "a"), ("gamma_i", 0.036, "f")):
        ours = fit["parameters"][g]
        rows.append(Check(PAPER, f"§V-A {g} from t_{comm}", printed, round(ours, 5), 0.005, abs(ours - printed) <= 0.005,
                          note=(f"γ = 1 − t_{comm}/(3β·t_ref) from the measured t_{comm} = {FIG4_MEASURED[comm]} s "
                                f"(`calibrate penalty`); t_ref = {t_ref:.6f} s; no single t_ref gives both printed γ "
                                "beyond 3 digits")))
    return rows


@check(PAPER, "Figs. 5-6, Myrinet state sets")
def fig6_checks() -> list[Check]:
    report = penalties(scheme(FIG6_ARCS), "myrinet")
    how = ("scheme reconstructed as a 0→1, b 0→2, c 0→3, d 2→1, e 3→1, f 3→0: the simplest scheme "
           "(4 nodes) with Fig. 6's sums and minima, found by exhaustive search")
    ours = report.penalties
    rows = [
        Check(PAPER, "Fig. 5 number of state sets", 5, report.state_sets, 0,
              report.state_sets == 5 and not report.state_sets_estimated, note=f"exact count of maximal matchings; {how}"),
        Check(PAPER, "Fig. 6 penalties a-f", ", ".join(f"{p:g}" for p in FIG6_PENALTIES), ", ".join(f"{p:g}" for p in ours),
              1e-12, all(abs(a - b) <= 1e-12 for a, b in zip(ours, FIG6_PENALTIES)),
              note=f"sets / per-source minimum emission coefficient (sums {FIG6_SUMS}, minima {FIG6_MINIMA}); {how}"),
    ]
    return rows


@check(PAPER, "Fig. 7, accuracy measures of the Myrinet model")
def fig7_checks() -> list[Check]:
    rows = []
    for graph, (data, printed_abs) in FIG7.items():
        recomputed = [e_rel(tp, tm) for tm, tp, _ in data]
        worst = max(abs(r - printed) for r, (_, _, printed) in zip(recomputed, data))
        rows.append(Check(PAPER, f"Fig. 7 {graph}: E_rel of every communication", "as printed",
                          f"max |ours − printed| = {worst:.3f}", 0.1, worst <= 0.1,
                          note="E_rel = (T_p − T_m)/T_m × 100 recomputed from the printed times (§VI-B)"))
        ours = e_abs([tp for _, tp, _ in data], [tm for tm, _, _ in data])
        rows.append(Check(PAPER, f"Fig. 7 {graph}: E_abs (%)", printed_abs, round(ours, 3), 0.1,
                          abs(ours - printed_abs) <= 0.1,
                          note="mean |E_rel| over the graph from the printed times; the paper truncates (2.67 → 2.6)"))
    return rows


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
                  note="replay of 0 → {1,2,3}, 20 MiB each, starting together: the dynamic model keeps the static "
                       "penalty 3β while the three transfers run")]


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
    ax.set_title(f"Fig. 4: GigE, t_ref = {t_ref * 1e3:.1f} ms (least squares)", fontsize=9)
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
