"""Paper 000 (Kreaseck, Carter, Casanova, Ferrante, Nandy): interference-aware scheduling.

Each row puts a value printed in the paper beside ours: the arithmetic of §2.3-§2.4 and the
averages of Table 2, the §2.5 synergy example on seeded synthetic samples (the paper's raw
samples are not published), the three-point model of §3.1 with the notes' corrected IR_s,
Table 4's interference lines recomputed from its rate lines, and the priority orders of
Figs. 2-4. Interference rates are fractions per MB/s (MB = 2^20 bytes), although Table 4's
caption says percent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..interference import FitReport, fit, interference_rate, normalised_rate, priority, three_point
from .runner import Check, check, save_figure

PAPER = "000"

#: Table 2 (Java): Lab0 receives from / sends to each node: avg IR_r, avg IR_s.
TABLE2_IR_R = {
    "Lab1": 0.0458, "Lab2": 0.0467, "Lab3": 0.0468, "Lab4": 0.0452, "Lab5": 0.0467, "Lab6": 0.0465,
    "Campus0": 0.0474, "Campus1": 0.0477, "Campus2": 0.0473, "Campus3": 0.0471, "Campus4": 0.0474,
    "Campus5": 0.0475, "Campus6": 0.0474, "Campus7": 0.0472, "Campus8": 0.0477, "Campus9": 0.0494,
    "SB0": 0.0510, "SB1": 0.0515, "SB2": 0.0513, "SB3": 0.0511, "SB4": 0.0511, "SB5": 0.0501,
    "Tenn": 0.0743, "France": 0.0848, "Brazil": 0.0891,
}
TABLE2_IR_S = {
    "Lab1": 0.0314, "Lab2": 0.0299, "Lab3": 0.0299, "Lab4": 0.0199, "Lab5": 0.0211, "Lab6": 0.0305,
    "Campus0": 0.0388, "Campus1": 0.0373, "Campus2": 0.0383, "Campus3": 0.0381, "Campus4": 0.0367,
    "Campus5": 0.0377, "Campus6": 0.0372, "Campus7": 0.0377, "Campus8": 0.0366, "Campus9": 0.0237,
    "SB0": 0.0310, "SB1": 0.0312, "SB2": 0.0313, "SB3": 0.0310, "SB4": 0.0307, "SB5": 0.0307,
    "Tenn": 0.0638, "France": 0.0372, "Brazil": 0.0431,
}

#: Table 4 (§4.2), the fork graph with root Lab0; one value per leaf, in this order.
LEAVES = ("Lab3", "Lab4", "Lab5", "Lab6", "SB0", "Tenn")
TABLE4 = {
    1: (9.057, 9.055, 9.055, 8.98, 9.18, 9.06),        # compute rate, root (diagonals/s)
    2: (23.86, 3.47, 3.02, 8.27, 22.55, 13.23),        # compute rate, leaf P_i
    3: (5.8, 7.02, 7.1, 5.8, 6.75, 8.92),              # root's rate while sending to P_i
    4: (12.45, 1.77, 1.2, 7.12, 15.15, 12.7),          # P_i's rate while receiving
    5: (11.1, 11.12, 11.05, 10.85, 7.7, 0.3),          # transfer rate (MB/s), no computation
    6: (10.8, 10.81, 9.62, 10.7, 7.73, 0.2),           # transfer rate, both computing
    7: (0.0299, 0.0199, 0.0211, 0.0305, 0.0310, 0.0638),  # IR_s at root, root computes (Table 2)
    8: (0.0333, 0.0208, 0.0226, 0.0331, 0.0342, 0.0331),  # IR_s at root, both compute
    9: (0.0443, 0.0454, 0.0621, 0.0130, 0.0425, 0.1300),  # IR_r at P_i, both compute
}

#: Figs. 2-4 (the notes: derivable from Table 4 lines 7, 2 and 5).
FIG2_IA = ["Lab4", "Lab5", "Lab3", "Lab6", "SB0", "Tenn"]
FIG3_COMPRATE = ["Lab3", "SB0", "Tenn", "Lab6", "Lab4", "Lab5"]
FIG4_BWC = ["Lab4", "Lab3", "Lab5", "Lab6", "SB0", "Tenn"]

#: §2.5: separate rates 1 − .0502 TR(A) − .0327 TR(B); planar fit of 234 concurrent samples
#: .9542 − .0427 TR(A) − .0265 TR(B), mean error 2.2 % against 6.7 % for the separate rates.
SEPARATE = (0.0502, 0.0327)
PLANAR = (0.9542, 0.0427, 0.0265)
PLANAR_MEAN_ERROR, SEPARATE_MEAN_ERROR = 0.022, 0.067

#: The synthetic samples: seed, noise bound (uniform on ±NOISE in normalised rate), counts.
SEED, NOISE = 2004, 0.01
N_ALONE, N_CONCURRENT = 95, 234  # §2.3: 95 points per experiment on average; §2.5: 234 points
ROOT_RATE = 9.057  # Lab0's compute rate (Table 4 line 1), diagonals/s: the unit of the raw samples
SYNTHETIC = ("seeded synthetic samples (the paper's 234 raw points are not published): {n} receive-only "
             "(A ~ U[0, 11]) and {n} send-only (B ~ U[0, 10.7]) samples from 1 − .0502A and 1 − .0327B, {m} "
             "concurrent (A ~ U[0.5, 8], B ~ U[0.5, 10]) from .9542 − .0427A − .0265B, uniform noise ±{noise} "
             "on the normalised rate, seed {seed}; fitted by `interference.fit` after normalising to the maximum")

#: The notes' example of the corrected IR_s (§3.1).
NOTES_NODE = {"C": 10.0, "MR": 10.0, "C_r": 5.0, "children": [{"id": "a", "SR": 10.0, "RR": 5.0, "C_sr": 5.0}]}


def synergy_samples(seed: int = SEED) -> dict[str, np.ndarray]:
    """The §2.5 experiment, synthesised: columns compute_rate, recv:A, send:B (see SYNTHETIC)."""
    rng = np.random.default_rng(seed)
    a = np.concatenate([rng.uniform(0, 11, N_ALONE), np.zeros(N_ALONE), rng.uniform(0.5, 8, N_CONCURRENT)])
    b = np.concatenate([np.zeros(N_ALONE), rng.uniform(0, 10.7, N_ALONE), rng.uniform(0.5, 10, N_CONCURRENT)])
    law = np.concatenate([
        1 - SEPARATE[0] * a[:N_ALONE],
        1 - SEPARATE[1] * b[N_ALONE:2 * N_ALONE],
        PLANAR[0] - PLANAR[1] * a[2 * N_ALONE:] - PLANAR[2] * b[2 * N_ALONE:],
    ])
    y = law + rng.uniform(-NOISE, NOISE, len(law))
    return {"compute_rate": ROOT_RATE * y, "recv:A": a, "send:B": b}


def _standard_errors(*columns: np.ndarray) -> np.ndarray:
    """Standard errors of the least-squares coefficients [const, columns...] for noise of
    standard deviation NOISE/√3 (uniform on ±NOISE)."""
    design = np.column_stack([np.ones(len(columns[0])), *columns])
    return np.asarray((NOISE / np.sqrt(3)) * np.sqrt(np.diag(np.linalg.inv(design.T @ design))), dtype=np.float64)


def _relative(ours: float, paper: float, tol: float) -> bool:
    return abs(ours - paper) <= tol * abs(paper)


@check(PAPER, "§2.3-§2.4 arithmetic and the averages of Table 2")
def arithmetic_checks() -> list[Check]:
    recv = normalised_rate({"ir_r": 0.052, "ir_s": {}}, 10.0)
    send = normalised_rate({"ir_r": 0.0, "ir_s": {"B": 0.034}}, 0.0, {"B": 10.0})
    mean_r = float(np.mean(list(TABLE2_IR_R.values())))
    mean_s = float(np.mean(list(TABLE2_IR_S.values())))
    larger = sum(TABLE2_IR_R[k] > TABLE2_IR_S[k] for k in TABLE2_IR_R)
    return [
        Check(PAPER, "§2.3 receiving at 10 MB/s with IR_r 0.052", 0.48, round(recv, 12), 1e-12,
              abs(recv - 0.48) <= 1e-12, note="1 − 10 × 0.052 by `normalised_rate` (the fraction of the maximum "
                                              "compute rate left)"),
        Check(PAPER, "§2.4 sending at 10 MB/s with IR_s 0.034", 0.66, round(send, 12), 1e-12,
              abs(send - 0.66) <= 1e-12, note="1 − 10 × 0.034 by `normalised_rate`"),
        Check(PAPER, "§2.3 average IR_r of Lab0 (Table 2)", 0.052, round(mean_r, 5), 0.0005,
              abs(mean_r - 0.052) <= 0.0005, note="mean of Table 2's 25 receive rates; the text rounds to 3 digits"),
        Check(PAPER, "§2.4 average IR_s of Lab0 (Table 2)", 0.034, round(mean_s, 5), 0.0005,
              abs(mean_s - 0.034) <= 0.0005, note="mean of Table 2's 25 send rates; the text rounds to 3 digits"),
        Check(PAPER, "§1 IR_r > IR_s for the same node (Table 2)", "in general", f"{larger} of {len(TABLE2_IR_R)}",
              None, larger == len(TABLE2_IR_R), note="the claim holds for every node of Table 2; ranges "
              f"IR_r {min(TABLE2_IR_R.values())}-{max(TABLE2_IR_R.values())}, IR_s {min(TABLE2_IR_S.values())}-"
              f"{max(TABLE2_IR_S.values())}, as §2.3-§2.4 print"),
    ]


@check(PAPER, "§2.5 synergy of concurrent sending and receiving (synthetic samples)")
def synergy_checks() -> list[Check]:
    samples = synergy_samples()
    report: FitReport = fit(samples)
    how = SYNTHETIC.format(n=N_ALONE, m=N_CONCURRENT, noise=NOISE, seed=SEED)
    tol_how = ("tolerance (relative) = 1 % (normalising to the maximum sample divides every coefficient by a "
               f"factor within 1 ± {NOISE}, the noise bound) + 3 least-squares standard errors of the coefficient "
               "for this design")
    a, b = samples["recv:A"], samples["send:B"]
    alone_a, alone_b = slice(0, N_ALONE), slice(N_ALONE, 2 * N_ALONE)
    conc = slice(2 * N_ALONE, None)
    rows = []
    for column, paper, part in (("recv:A", SEPARATE[0], a[alone_a]), ("send:B", SEPARATE[1], b[alone_b])):
        ours = report.columns[column].ir
        se = _standard_errors(part)[1]
        tol = round(0.01 + 3 * se / paper, 4)
        label = "IR_r" if column.startswith("recv") else "IR_s"
        rows.append(Check(PAPER, f"§2.5 separate {label} ({column})", paper, round(ours, 5), tol,
                          _relative(ours, paper, tol), note=f"linear fit of the {column} samples alone; {how}; {tol_how}"))
    planar = report.planar
    assert planar is not None
    se = _standard_errors(a[conc], b[conc])
    for k, (name, paper, ours) in enumerate((("const", PLANAR[0], planar.const), ("IR_r", PLANAR[1], planar.ir_r),
                                             ("IR_s", PLANAR[2], planar.ir_s))):
        tol = round(0.01 + 3 * float(se[k]) / paper, 4)
        rows.append(Check(PAPER, f"§2.5 planar fit {name}", paper, round(ours, 5), tol, _relative(ours, paper, tol),
                          note=f"planar fit of the {planar.samples} concurrent samples; {how}; {tol_how}"))
    sep = planar.separate
    assert sep is not None
    rows.append(Check(
        PAPER, "§2.5 planar fit beats the separate rates", f"{PLANAR_MEAN_ERROR:.1%} < {SEPARATE_MEAN_ERROR:.1%}",
        f"{planar.errors.mean_error:.2%} < {sep.mean_error:.2%}", None, planar.errors.mean_error < sep.mean_error,
        note=("a direction claim: mean absolute error of the planar fit against that of 1 − IR_r·A − IR_s·B (the "
              f"separate fits) on the concurrent samples; max errors {planar.errors.max_error:.2%} and "
              f"{sep.max_error:.2%} (paper 12.4 % and 25 %); the sizes depend on the unpublished samples; {how}")))
    return rows


def _random_node(rng: np.random.Generator, k: int) -> dict[str, Any]:
    c = float(rng.uniform(1, 30))
    c_r = float(c * rng.uniform(0.3, 1.0))
    children = [{"id": f"c{i}", "SR": float(rng.uniform(0.1, 12)), "RR": float(rng.uniform(0, 11)),
                 "C_sr": float(c * rng.uniform(0.1, 1.0))} for i in range(k)]
    return {"C": c, "MR": float(rng.uniform(0.1, 12)), "C_r": c_r, "children": children}


def k_plus_2_error(node: dict[str, Any]) -> float:
    """Largest |model − measured| over the k+2 measured normalised rates of `node` (§3.1)."""
    model = three_point(node)
    c = node["C"]
    errors = [abs(normalised_rate(model, 0.0) - 1.0), abs(normalised_rate(model, node["MR"]) - node["C_r"] / c)]
    errors += [abs(normalised_rate(model, ch["RR"], {ch["id"]: ch["SR"]}) - ch["C_sr"] / c) for ch in node["children"]]
    return max(errors)


@check(PAPER, "§3.1 the three-point model with the corrected IR_s")
def three_point_checks() -> list[Check]:
    model = three_point(NOTES_NODE)
    rate = normalised_rate(model, 5.0, {"a": 10.0})
    example = ("the notes' example C=10, MR=10, C_r=5, RR=5, SR=10, C_sr=5; corrected IR_s(i) = (1 − RR·(C − C_r)/"
               "(MR·C) − C_sr/C)/SR (the printed formula has a units slip)")
    rng = np.random.default_rng(SEED)
    nodes = [NOTES_NODE] + [_random_node(rng, k) for k in range(0, 9) for _ in range(5)]
    worst = max(k_plus_2_error(n) for n in nodes)
    return [
        Check(PAPER, "§3.1 IR_s of the notes' example", 0.025, round(model["ir_s"]["a"], 12), 1e-12,
              abs(model["ir_s"]["a"] - 0.025) <= 1e-12, note=f"{example}; IR_r = ((C − C_r)/C)/MR = 0.05"),
        Check(PAPER, "§3.1 model at (RR, SR) of the example", 0.5, round(rate, 12), 1e-12, abs(rate - 0.5) <= 1e-12,
              note=f"1 − IR_r·5 − IR_s·10 = C_sr/C; {example}"),
        Check(PAPER, "§3.1 the model returns its k+2 points", "exactly", f"max error {worst:.1e}", 1e-12,
              worst <= 1e-12, note=(f"the notes' example and {len(nodes) - 1} seeded random nodes with 0-8 children "
                                    f"(seed {SEED}): rate 1 alone, C_r/C at MR, C_sr(i)/C at (RR(i), SR(i)); the §3.1 "
                                    "example's .9440 formula comes from unpublished points and is not checked")),
    ]


@check(PAPER, "Table 4 lines 8-9 recomputed from lines 1-6")
def table4_checks() -> list[Check]:
    rows = []
    tol = 0.02
    t = LEAVES.index("Tenn")
    implied_both = [(1 - TABLE4[loaded][t] / TABLE4[free][t]) / TABLE4[line][t] for line, free, loaded in ((8, 1, 3), (9, 2, 4))]
    for line, free, loaded, what in ((8, 1, 3, "IR_s at the root"), (9, 2, 4, "IR_r at the leaf")):
        for j, leaf in enumerate(LEAVES):
            printed = TABLE4[line][j]
            ours = interference_rate(TABLE4[free][j], TABLE4[loaded][j], TABLE4[6][j])
            formula = (f"(1 − line {loaded}/line {free})/line 6 = (1 − {TABLE4[loaded][j]}/{TABLE4[free][j]})/"
                       f"{TABLE4[6][j]}")
            if leaf != "Tenn":
                rows.append(Check(PAPER, f"Table 4 line {line} ({what}) {leaf}", printed, round(ours, 5), tol,
                                  _relative(ours, printed, tol), note=f"{formula}; relative tolerance 2 %"))
                continue
            with_line5 = interference_rate(TABLE4[free][j], TABLE4[loaded][j], TABLE4[5][j])
            implied = (1 - TABLE4[loaded][j] / TABLE4[free][j]) / printed
            expected = (1 - TABLE4[loaded][j] / TABLE4[free][j]) / TABLE4[6][j]
            rows.append(Check(
                PAPER, f"Table 4 line {line} ({what}) {leaf}", printed, round(ours, 5), tol,
                abs(ours - expected) <= 1e-12 * abs(expected), paper_inconsistent=True,
                extra={"formula_with_line6": ours, "formula_with_line5": with_line5, "implied_transfer_rate": implied},
                note=(f"{formula} = {ours:.4f}, not the printed {printed}; with line 5's 0.3 MB/s it is "
                      f"{with_line5:.4f}; the printed value implies {implied:.3f} MB/s, and no single transfer rate "
                      "gives both of Tenn's printed lines 8 and 9 "
                      f"({implied_both[0]:.3f} and {implied_both[1]:.3f} MB/s); we assert the formula's value")))
    same = [TABLE4[7][j] == TABLE2_IR_S[leaf] for j, leaf in enumerate(LEAVES)]
    rows.append(Check(PAPER, "Table 4 line 7 is Table 2's IR_s", "as printed", f"{sum(same)} of {len(LEAVES)} equal",
                      0, all(same), note="§4.2: 'the seventh line re-records ... (taken from Table 2)'"))
    return rows


@check(PAPER, "Figs. 2-4 priority orders from Table 4")
def priority_checks() -> list[Check]:
    rows = []
    for fig, name, line, descending, printed in (
        ("Fig. 2", "IA, increasing IR_s (line 7)", 7, False, FIG2_IA),
        ("Fig. 3", "CompRate, decreasing compute rate (line 2)", 2, True, FIG3_COMPRATE),
        ("Fig. 4", "BWC, decreasing link rate (line 5)", 5, True, FIG4_BWC),
    ):
        ours = priority(dict(zip(LEAVES, TABLE4[line])), descending=descending)
        rows.append(Check(PAPER, f"{fig} order: {name}", ", ".join(printed), ", ".join(ours), None, ours == printed,
                          note=f"`interference.priority` of Table 4 line {line}; the figures' drawings are lost, the "
                               "orders are the notes' reading of the text"))
    # §4.3: only at 10 MB / 1 diagonal is IR_s·Z·C >= 1 for every child (so no child should get tasks).
    cells = {(z, d): min(TABLE4[7]) * z * TABLE4[1][0] / d for z in (2, 5, 10) for d in (1, 3, 5, 7, 9, 11)}
    at_least_one = [cell for cell, v in cells.items() if v >= 1]
    runner_up = max(v for v in cells.values() if v < 1)
    rows.append(Check(PAPER, "§4.3 smallest IR_s·Z·C at 10 MB/1 diagonal", 1.80, round(cells[(10, 1)], 4), 0.005,
                      abs(cells[(10, 1)] - 1.80) <= 0.005 and at_least_one == [(10, 1)],
                      note=(f"min line 7 ({min(TABLE4[7])}) × Z MB × root rate {TABLE4[1][0]} diagonals/s / diagonals per "
                            f"task, over the 18 application types: >= 1 only at 10 MB/1 diagonal; the next largest is "
                            f"{runner_up:.3f} at 5 MB/1 (the notes: 0.90)")))
    return rows


# -- §4 task farming, Fig. 5 ----------------------------------------------------------------

FIG5_HOW = ("§4 testbed reconstructed as the notes say (root Lab0 at 9.057 diagonals/s, B_s 10.7 MB/s, links Table 4 "
            "line 6, root send interference line 8, child receive interference line 9, priorities from lines 5 and 7, "
            "each child holds 2 tasks and requests at t=0, zero latency), 1,000 tasks, algorithms as the paper ran them "
            "(no §3 cutoff, footnote 5)")


def _cell(row: dict[str, Any]) -> str:
    return f"{row['send_mb']:g} MB/{row['diagonals']} diag"


@check(PAPER, "Fig. 5, task farming on the §4 testbed")
def fig5_checks() -> list[Check]:
    from ..taskfarm import fig5

    rows = fig5()
    others = [a for a in rows[0]["normalised"] if a != "ia-multi"]

    def behind(r: dict[str, Any]) -> float:
        """How far IA:Multi is behind the best other algorithm (relative)."""
        return r["normalised"]["ia-multi"] / min(r["normalised"][a] for a in others) - 1

    exception = [r for r in rows if (r["send_mb"], r["diagonals"]) == (10.0, 1)]
    regular = [r for r in rows if r not in exception]
    late = [f"{_cell(r)} ({100 * behind(r):.1f} %)" for r in regular if behind(r) > 0.03]
    root_wins = [_cell(r) for r in rows if r["normalised"]["ia-multi"] > 1.0]
    loads = sorted(rows, key=lambda r: -r["min_load"])
    why = ("at 5 MB/1 diagonal the smallest IR_s·Z·C is 0.90, just under 1: children barely pay for their "
           "sends, and with non-interruptible 5 MB sends, 2 tasks held per child and the reconstructed rates the "
           "root alone edges ahead; tried as checks, not to fit: holding 1, 3 or 4 tasks per child instead of 2 "
           "puts IA:Multi at 1.044, 1.008 and 1.002 of RootComputes (still behind IA:Single, 0.994-0.999), and the "
           "§3 cutoff variant removes the gap; the paper's runs were real, and its drawing of Fig. 5 is lost, so the "
           "cell's margin cannot be compared")
    result = [
        Check(PAPER, "Fig. 5: IA:Multi within 3 % of the best other algorithm (every cell but 10 MB/1)", "every cell",
              "every cell" if not late else "behind in " + ", ".join(late), 0.03, not late,
              status="pass" if not late else "not_reproduced",
              note=f"{FIG5_HOW}; " + ("" if not late else why)),
        Check(PAPER, "Fig. 5: RootComputes beats IA:Multi only at 10 MB/1 diagonal", "10 MB/1 diag",
              ", ".join(root_wins) or "nowhere", None, root_wins == ["10 MB/1 diag"],
              status="pass" if root_wins == ["10 MB/1 diag"] else "not_reproduced",
              note=f"{FIG5_HOW}; " + ("" if root_wins == ["10 MB/1 diag"] else why)),
        Check(PAPER, "§4.3: 10 MB/1 diagonal is the only cell with IR_s·Z·C ≥ 1 (smallest over the children)",
              "1.80, next 0.90", f"{loads[0]['min_load']:.2f} at {_cell(loads[0])}, next {loads[1]['min_load']:.2f}",
              0.005, _cell(loads[0]) == "10 MB/1 diag" and loads[1]["min_load"] < 1 <= loads[0]["min_load"],
              note="priority IR_s (Table 4 line 7) × task size × root compute rate in tasks/s"),
    ]
    over = [f"{_cell(r)}" for r in rows if r["best_throughput"] > r["bound"] * (1 + 1e-9)]
    result.append(Check(PAPER, "§3.2 bound: no farm exceeds the multi-port throughput bound (18 cells × 6 algorithms)",
                        "never", "never" if not over else ", ".join(over), 1e-9, not over,
                        note=f"{FIG5_HOW}; the bound of `commaware interference throughput` on the same tree"))
    cut = fig5(cutoff=True)
    late_cut = [_cell(r) for r in cut if behind(r) > 0.03]
    result.append(Check(PAPER, "§3 cutoff variant (ours): IA:Multi within 3 % of the best other in every cell",
                        "(not in the paper)", "every cell" if not late_cut else ", ".join(late_cut), 0.03, not late_cut,
                        note="with --cutoff (never send to a child with IR_s·Z·C ≥ 1), the §3-informed variant the "
                             "paper's footnote 5 says it did not run"))
    return result


def plot(outdir: str | Path) -> list[Path]:
    """Fig. 5 as a heat map: each algorithm's makespan normalised to RootComputes, per
    application type (send size, diagonals) on the §4 testbed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..taskfarm import fig5

    rows = fig5()
    algorithms = list(rows[0]["normalised"])
    grid = np.array([[r["normalised"][a] for r in rows] for a in algorithms])
    fig, ax = plt.subplots(figsize=(13, 3.6))
    image = ax.imshow(grid, cmap="RdYlGn_r", vmin=0.8, vmax=1.2, aspect="auto")
    for (i, j), value in np.ndenumerate(grid):
        ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=6)
    ax.set_yticks(range(len(algorithms)), algorithms, fontsize=8)
    ax.set_xticks(range(len(rows)), [_cell(r).replace(" diag", "d") for r in rows], rotation=60, fontsize=7)
    fig.colorbar(image, ax=ax, label="makespan / RootComputes'")
    ax.set_title("paper 000 Fig. 5: task farming on the §4 testbed (1,000 tasks; lower is better)", fontsize=9)
    return [save_figure(fig, Path(outdir) / "paper000_fig5.svg")]
