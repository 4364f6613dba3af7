"""Paper 000 (Kreaseck, Carter, Casanova, Ferrante, Nandy): interference-aware scheduling.

The rows, by kind (runner.KINDS):

* arithmetic: the paper's own numbers recomputed from its own formulas: §2.3-§2.4's 48 % and
  66 %, the averages and ranges of Table 2, Table 4's interference lines from its rate lines,
  the priority orders of Figs. 2-4 and the §4.3 condition IR_s·Z·C >= 1 (values derived from
  Table 4, never shown as printed);
* self_check: our code against our code: the §2.5 fits on seeded synthetic samples generated
  from the paper's own coefficients (the 234 raw samples are not published), the three-point
  model of §3.1 with the corrected IR_s on an example of ours, the task farm against the §3.2
  bound, and the §3 cutoff variant;
* reproduction: the task farm of §4 on the reconstructed testbed against the claims of Fig. 5's
  text. The farm is deterministic (no random input), so its margins are exact for the
  reconstruction and the seed rule of runner.ordering does not apply to them; the one ordering
  claim over seeded samples (the planar fit errs less) is judged by runner.ordering.

Interference rates are fractions per MB/s (MB = 2^20 bytes), although Table 4's caption says
percent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..interference import FitReport, fit, interference_rate, normalised_rate, priority, three_point
from .runner import ARITHMETIC, MIN_SEEDS, NOT_REPRODUCED, PASS, REPRODUCTION, SELF_CHECK, Check, check, ordering, save_figure

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

#: An example node of ours for the corrected IR_s of §3.1 (the paper gives none).
NOTES_NODE: dict[str, Any] = {"C": 10.0, "MR": 10.0, "C_r": 5.0,
                              "children": [{"id": "a", "SR": 10.0, "RR": 5.0, "C_sr": 5.0}]}


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


#: §2.3-§2.4: the ranges of IR_r and IR_s the text prints for Table 2.
TABLE2_RANGES = {"IR_r": (0.0452, 0.0891), "IR_s": (0.0199, 0.0638)}


@check(PAPER, "§2.3-§2.4 arithmetic and the averages of Table 2")
def arithmetic_checks() -> list[Check]:
    recv = normalised_rate({"ir_r": 0.052, "ir_s": {}}, 10.0)
    send = normalised_rate({"ir_r": 0.0, "ir_s": {"B": 0.034}}, 0.0, {"B": 10.0})
    mean_r = float(np.mean(list(TABLE2_IR_R.values())))
    mean_s = float(np.mean(list(TABLE2_IR_S.values())))
    larger = sum(TABLE2_IR_R[k] > TABLE2_IR_S[k] for k in TABLE2_IR_R)
    ranges = {"IR_r": (min(TABLE2_IR_R.values()), max(TABLE2_IR_R.values())),
              "IR_s": (min(TABLE2_IR_S.values()), max(TABLE2_IR_S.values()))}
    return [
        Check(PAPER, "§2.3 receiving at 10 MB/s with IR_r 0.052", 0.48, round(recv, 12), 1e-12,
              abs(recv - 0.48) <= 1e-12, kind=ARITHMETIC,
              note="the paper's 1 − 10 × 0.052 = 48 % by `normalised_rate` (the fraction of the maximum compute "
                   "rate left)"),
        Check(PAPER, "§2.4 sending at 10 MB/s with IR_s 0.034", 0.66, round(send, 12), 1e-12,
              abs(send - 0.66) <= 1e-12, kind=ARITHMETIC, note="the paper's 1 − 10 × 0.034 = 66 % by `normalised_rate`"),
        Check(PAPER, "§2.3 average IR_r of Lab0 (Table 2)", 0.052, round(mean_r, 5), 0.0005,
              abs(mean_r - 0.052) <= 0.0005, kind=ARITHMETIC,
              note="mean of Table 2's 25 receive rates; the text rounds to 3 digits"),
        Check(PAPER, "§2.4 average IR_s of Lab0 (Table 2)", 0.034, round(mean_s, 5), 0.0005,
              abs(mean_s - 0.034) <= 0.0005, kind=ARITHMETIC,
              note="mean of Table 2's 25 send rates; the text rounds to 3 digits"),
        Check(PAPER, "§2.3-§2.4 ranges of IR_r and IR_s (Table 2)",
              ", ".join(f"{k} {lo}-{hi}" for k, (lo, hi) in TABLE2_RANGES.items()),
              ", ".join(f"{k} {lo}-{hi}" for k, (lo, hi) in ranges.items()), 0, ranges == TABLE2_RANGES,
              kind=ARITHMETIC, note="smallest and largest of Table 2's 25 receive and 25 send rates"),
        Check(PAPER, "§1 IR_r > IR_s for the same node (Table 2)", "in general", f"{larger} of {len(TABLE2_IR_R)}",
              None, larger == len(TABLE2_IR_R), kind=ARITHMETIC,
              note="the claim holds for every node of Table 2"),
    ]


#: What the six §2.5 fit rows are: a self_check (said in each note).
SELF_FIT = ("self_check: the samples are generated from the paper's own coefficients, so a pass shows that "
            "`interference.fit` recovers the coefficients put into them, not that the paper's data give them")


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
                          _relative(ours, paper, tol), kind=SELF_CHECK,
                          note=f"{SELF_FIT}; linear fit of the {column} samples alone; {how}; {tol_how}"))
    planar = report.planar
    assert planar is not None
    se = _standard_errors(a[conc], b[conc])
    for k, (name, paper, ours) in enumerate((("const", PLANAR[0], planar.const), ("IR_r", PLANAR[1], planar.ir_r),
                                             ("IR_s", PLANAR[2], planar.ir_s))):
        tol = round(0.01 + 3 * float(se[k]) / paper, 4)
        rows.append(Check(PAPER, f"§2.5 planar fit {name}", paper, round(ours, 5), tol, _relative(ours, paper, tol),
                          kind=SELF_CHECK,
                          note=f"{SELF_FIT}; planar fit of the {planar.samples} concurrent samples; {how}; {tol_how}"))
    rows.append(planar_beats_separate())
    return rows


def planar_beats_separate(seeds: int = MIN_SEEDS) -> Check:
    """§2.5's ordering claim, the planar fit errs less than the separate rates, judged by
    runner.ordering over `seeds` synthetic sample sets (seeds SEED, SEED + 1, ...): one
    difference per seed, the separate rates' mean absolute error minus the planar fit's, in
    percentage points of the normalised compute rate."""
    planar_err, separate_err = [], []
    for seed in range(SEED, SEED + seeds):
        p = fit(synergy_samples(seed)).planar
        assert p is not None and p.separate is not None
        planar_err.append(p.errors.mean_error)
        separate_err.append(p.separate.mean_error)
    o = ordering(100 * (s - p) for s, p in zip(separate_err, planar_err))
    how = SYNTHETIC.format(n=N_ALONE, m=N_CONCURRENT, noise=NOISE, seed=f"{SEED}-{SEED + seeds - 1}")
    return Check(
        PAPER, "§2.5 planar fit beats the separate rates", f"{PLANAR_MEAN_ERROR:.1%} < {SEPARATE_MEAN_ERROR:.1%}",
        f"{100 * np.mean(planar_err):.2f} % < {100 * np.mean(separate_err):.2f} % (means over {seeds} seeds)", None,
        o.status == PASS, status=o.status, kind=SELF_CHECK, extra=o.extra(),
        note=(f"{SELF_FIT} (the concurrent samples follow the planar law, so the separate rates must err more); "
              f"mean absolute error of 1 − IR_r·A − IR_s·B (the separate fits) minus that of the planar fit on "
              f"the concurrent samples: {o.describe(' pp')} (runner.ordering: pass when the 95 % CI lies above 0); "
              f"the error sizes depend on the unpublished samples; {how}"))


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


#: The example's IR_r and IR_s worked by hand from the corrected §3.1 formulas (the paper
#: prints neither): IR_r = ((10 − 5)/10)/10 = 0.05 and IR_s = (1 − 5·(10 − 5)/(10·10) − 5/10)/10
#: = (1 − 0.25 − 0.5)/10 = 0.025.
EXAMPLE_IR_R, EXAMPLE_IR_S = 0.05, 0.025


@check(PAPER, "§3.1 the three-point model with the corrected IR_s")
def three_point_checks() -> list[Check]:
    model = three_point(NOTES_NODE)
    ch = NOTES_NODE["children"][0]
    rate = normalised_rate(model, ch["RR"], {ch["id"]: ch["SR"]})
    measured = ch["C_sr"] / NOTES_NODE["C"]
    example = ("an example of ours, not the paper's: C=10, MR=10, C_r=5, RR=5, SR=10, C_sr=5; corrected "
               "IR_s(i) = (1 − RR·(C − C_r)/(MR·C) − C_sr/C)/SR (the printed formula has a units slip)")
    rng = np.random.default_rng(SEED)
    nodes = [NOTES_NODE] + [_random_node(rng, k) for k in range(0, 9) for _ in range(5)]
    worst = max(k_plus_2_error(n) for n in nodes)
    return [
        Check(PAPER, "§3.1 IR_s of an example node (derived by hand from the corrected formula)", EXAMPLE_IR_S,
              round(model["ir_s"]["a"], 12), 1e-12,
              abs(model["ir_s"]["a"] - EXAMPLE_IR_S) <= 1e-12 and abs(model["ir_r"] - EXAMPLE_IR_R) <= 1e-12,
              kind=SELF_CHECK,
              note=(f"self_check: `three_point` against IR_s = {EXAMPLE_IR_S} and IR_r = {EXAMPLE_IR_R} worked by hand "
                    f"(the paper prints neither; ours IR_r {model['ir_r']:.12g}); {example}")),
        Check(PAPER, "§3.1 model at (RR, SR) of the example gives C_sr/C (derived)", round(measured, 12), round(rate, 12),
              1e-12, abs(rate - measured) <= 1e-12, kind=SELF_CHECK,
              note=(f"self_check: 1 − IR_r·RR − IR_s·SR by the model against the measured point C_sr/C = "
                    f"{measured:g} it was built from; {example}")),
        Check(PAPER, "§3.1 the model returns its k+2 points", "exactly", f"max error {worst:.1e}", 1e-12,
              worst <= 1e-12, kind=SELF_CHECK,
              note=(f"self_check of the paper's design rule ('chosen to exactly match the (k+2) measured values') on "
                    f"the example and {len(nodes) - 1} seeded random nodes of ours with 0-8 children (seed {SEED}): "
                    "rate 1 alone, C_r/C at MR, C_sr(i)/C at (RR(i), SR(i)); the §3.1 example's .9440 formula comes "
                    "from unpublished points and is not checked")),
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
                                  _relative(ours, printed, tol), kind=ARITHMETIC, note=f"{formula}; relative tolerance 2 %"))
                continue
            with_line5 = interference_rate(TABLE4[free][j], TABLE4[loaded][j], TABLE4[5][j])
            implied = (1 - TABLE4[loaded][j] / TABLE4[free][j]) / printed
            expected = (1 - TABLE4[loaded][j] / TABLE4[free][j]) / TABLE4[6][j]
            rows.append(Check(
                PAPER, f"Table 4 line {line} ({what}) {leaf}", printed, round(ours, 5), tol,
                abs(ours - expected) <= 1e-12 * abs(expected), kind=ARITHMETIC, paper_inconsistent=True,
                extra={"formula_with_line6": ours, "formula_with_line5": with_line5, "implied_transfer_rate": implied},
                note=(f"{formula} = {ours:.4f}, not the printed {printed}; with line 5's 0.3 MB/s it is "
                      f"{with_line5:.4f}; the printed value implies {implied:.3f} MB/s, and no single transfer rate "
                      "gives both of Tenn's printed lines 8 and 9 "
                      f"({implied_both[0]:.3f} and {implied_both[1]:.3f} MB/s); we assert the formula's value")))
    same = [TABLE4[7][j] == TABLE2_IR_S[leaf] for j, leaf in enumerate(LEAVES)]
    rows.append(Check(PAPER, "Table 4 line 7 is Table 2's IR_s", "as printed", f"{sum(same)} of {len(LEAVES)} equal",
                      0, all(same), kind=ARITHMETIC, note="§4.2: 'the seventh line re-records ... (taken from Table 2)'"))
    return rows


#: §4.3's application types: task send sizes (MB) and compute sizes (diagonals).
SEND_SIZES, DIAGONAL_COUNTS = (2, 5, 10), (1, 3, 5, 7, 9, 11)


def root_loads(line: int) -> dict[tuple[int, int], float]:
    """IR_s·Z·C per application type (Z MB, d diagonals): the root's compute lost per task sent
    to the child with the smallest IR_s of Table 4 `line` (7 or 8), in tasks, with C the root's
    rate of Table 4 line 1 (Lab3's column, 9.057 diagonals/s) in tasks/s."""
    return {(z, d): min(TABLE4[line]) * z * TABLE4[1][0] / d for z in SEND_SIZES for d in DIAGONAL_COUNTS}


@check(PAPER, "Figs. 2-4 priority orders from Table 4")
def priority_checks() -> list[Check]:
    rows = []
    orders = {}
    for fig, name, line, descending, derived in (
        ("Fig. 2", "IA, increasing IR_s (line 7)", 7, False, FIG2_IA),
        ("Fig. 3", "CompRate, decreasing compute rate (line 2)", 2, True, FIG3_COMPRATE),
        ("Fig. 4", "BWC, decreasing link rate (line 5)", 5, True, FIG4_BWC),
    ):
        ours = priority(dict(zip(LEAVES, TABLE4[line])), descending=descending)
        orders[fig] = ours
        rows.append(Check(PAPER, f"{fig} order: {name}, derived from Table 4", ", ".join(derived), ", ".join(ours), None,
                          ours == derived, kind=ARITHMETIC,
                          note=(f"the figure's drawing is lost: the paper value is its caption's rule applied by hand "
                                f"to Table 4 line {line}, not a printed order; ours: `interference.priority` of the same "
                                "line")))
    ia, bwc = orders["Fig. 2"], orders["Fig. 4"]
    moved = [leaf for leaf in LEAVES if [x for x in ia if x != leaf] == [x for x in bwc if x != leaf]]
    rows.append(Check(PAPER, "§4.3: IA and BWC orders differ only in Lab5's place; BWC's second child is Lab3",
                      "Lab5; Lab3", f"{', '.join(moved) or 'no single child'}; {bwc[1]}", None,
                      "Lab5" in moved and ia != bwc and bwc[1] == "Lab3", kind=ARITHMETIC,
                      note=("§4.3 prints both (IA:Single and BWC 'differ only in the priority assigned to Lab5'; for "
                            "the BWC runs 'the second-highest priority child was Lab3'); ours: the children whose "
                            "removal makes the two orders of Table 4 lines 7 and 5 equal, and BWC's second")))
    # §4.3: "the only interference-aware experiment" where IR_s·Z·C >= 1 (smallest over the children).
    loads, loads8 = root_loads(7), root_loads(8)
    at_least_one = [cell for cell, v in loads.items() if v >= 1]
    at_least_one_8 = [cell for cell, v in loads8.items() if v >= 1]
    runner_up = max(loads.items(), key=lambda kv: kv[1] if kv[1] < 1 else -1)
    rows.append(Check(PAPER, "§4.3 IR_s·Z·C >= 1 only at 10 MB/1 diagonal (derived from Table 4 lines 1 and 7)",
                      "only 10 MB/1 diag",
                      " and ".join(f"{z} MB/{d} diag" for z, d in at_least_one) + f" ({loads[(10, 1)]:.3f})", None,
                      at_least_one == [(10, 1)], kind=ARITHMETIC,
                      note=(f"the paper prints the claim, not the values: min line 7 ({min(TABLE4[7])}) × Z MB × root "
                            f"rate {TABLE4[1][0]} diagonals/s ÷ diagonals per task, over the 18 application types: "
                            f"{loads[(10, 1)]:.3f} at 10 MB/1, the largest below 1 {runner_up[1]:.3f} at "
                            f"{runner_up[0][0]} MB/{runner_up[0][1]}; with line 8 (both computing, the simulation's "
                            f"rates) the cells >= 1 are "
                            + ", ".join(f"{z} MB/{d}" for z, d in at_least_one_8)
                            + f" ({loads8[(10, 1)]:.3f})")))
    return rows


# -- §4 task farming, Fig. 5 ----------------------------------------------------------------

FIG5_HOW = ("§4 testbed reconstructed from Table 4 (root Lab0 at 9.057 diagonals/s, B_s 10.7 MB/s, links Table 4 "
            "line 6, root send interference line 8, child receive interference line 9, priorities from lines 5 and 7, "
            "each child holds 2 tasks and requests at t=0, zero latency), 1,000 tasks, algorithms as the paper ran them "
            "(no §3 cutoff, footnote 5)")
DETERMINISTIC = ("the farm simulation is deterministic (no random input; ties go to the lower node index), so each "
                 "margin is exact for the reconstructed testbed and the seed rule (runner.ordering) does not apply")
#: §4.3: single-port (non-interruptible) 2 MB sends from Lab0 to Lab3 took from 200 ms to over 2,000 ms.
PAPER_SEND_TIME_MS = (200, 2000)
#: Tasks held per child tried beside the reconstruction's 2, as a sensitivity check (never to fit).
HOLDS = (1, 2, 3, 4)
NAMES = {"ia-multi": "IA:Multi", "ia-single": "IA:Single", "fcfs": "FCFS", "comprate": "CompRate", "bwc": "BWC",
         "root-computes": "RootComputes"}


def _cell(row: dict[str, Any]) -> str:
    return f"{row['send_mb']:g} MB/{row['diagonals']} diag"


def _exception(row: dict[str, Any]) -> bool:
    """The cell the paper excepts from IA:Multi's wins (Fig. 5(c), 10 MB/1 diagonal)."""
    return (row["send_mb"], row["diagonals"]) == (10.0, 1)


def beaten_by(row: dict[str, Any], algorithm: str = "ia-multi") -> dict[str, float]:
    """Every algorithm with a shorter makespan than `algorithm` in the Fig. 5 cell `row`, with
    how far `algorithm` is behind it (its makespan / theirs − 1), largest first."""
    mine = row["makespan"][algorithm]
    lags = {a: mine / s - 1 for a, s in row["makespan"].items() if a != algorithm and s < mine}
    return dict(sorted(lags.items(), key=lambda kv: -kv[1]))


def _pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def _beaten_text(rows: list[dict[str, Any]]) -> str:
    return "; ".join(f"{_cell(r)}: " + ", ".join(f"{NAMES[a]} {_pct(lag)}" for a, lag in beaten_by(r).items())
                     for r in rows)


def offload(send_mb: float, diagonals: int, algorithm: str, cutoff: bool = False) -> dict[str, Any]:
    """One farm of the §4 testbed with what it cost the root: ``tasks`` per child, ``cost`` per
    child (IR_s(i)·Z·C, the root's own tasks lost to interference per task sent to i, with the
    simulation's IR_s of Table 4 line 8) and ``net`` = Σ tasks_i·(1 − cost_i), the tasks the
    children took off the root, net of the interference their sends caused there."""
    from ..taskfarm import ROOT_RATE, taskfarm, testbed_table4

    farm = taskfarm(testbed_table4(send_mb, diagonals), algorithm, cutoff=cutoff, with_bound=False)
    cost = {leaf: TABLE4[8][j] * send_mb * ROOT_RATE / diagonals for j, leaf in enumerate(LEAVES)}
    tasks = {leaf: farm.tasks_per_node[leaf] for leaf in LEAVES}
    return {"tasks": tasks, "cost": cost, "net": sum(n * (1 - cost[leaf]) for leaf, n in tasks.items()),
            "transfers": farm.transfers}


def _why_beaten(rows: list[dict[str, Any]], beaten: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The analysis of the cells where IA:Multi is beaten, from the run: what each delegation cost
    the root, the tasks IA:Multi and IA:Single sent to the costliest child IA:Multi uses there,
    their net offloads, and the cells beaten when each child holds another number of tasks."""
    from ..taskfarm import ROOT_SEND_LIMIT, fig5

    regular = [r for r in rows if not _exception(r)]
    farms = {_cell(r): (offload(r["send_mb"], r["diagonals"], "ia-multi"),
                        offload(r["send_mb"], r["diagonals"], "ia-single")) for r in regular}
    used = {leaf for r in beaten for leaf, n in farms[_cell(r)][0]["tasks"].items() if n > 0}
    child = max(used, key=lambda leaf: TABLE4[8][LEAVES.index(leaf)])
    per_cell, agree = {}, 0
    for r in regular:
        m, s = farms[_cell(r)]
        lag = r["makespan"]["ia-multi"] / r["makespan"]["ia-single"] - 1
        agree += (lag > 0) == (m["net"] < s["net"])
        per_cell[_cell(r)] = {"lag_behind_ia_single": lag, "net_offload_ia_multi": m["net"],
                              "net_offload_ia_single": s["net"], "costliest_child": child,
                              "child_tasks_ia_multi": m["tasks"][child], "child_tasks_ia_single": s["tasks"][child],
                              "child_cost": m["cost"][child]}
    won = [per_cell[_cell(r)]["child_cost"] for r in regular if r not in beaten]
    negative = [_cell(r) for r in regular if per_cell[_cell(r)]["net_offload_ia_multi"] < 0]
    lines = []
    for r in beaten:
        c = per_cell[_cell(r)]
        lines.append(f"{_cell(r)}: a task sent to {child} costs the root {c['child_cost']:.3f} tasks; IA:Multi sends "
                     f"{child} {c['child_tasks_ia_multi']} tasks (IA:Single {c['child_tasks_ia_single']}) and nets "
                     f"{c['net_offload_ia_multi']:.1f} tasks (IA:Single {c['net_offload_ia_single']:.1f})")
    holds = {h: [_cell(r) for r in fig5(hold=h) if not _exception(r) and beaten_by(r)] for h in HOLDS if h != 2}
    ia_order = priority(dict(zip(LEAVES, TABLE4[7])))
    below = [leaf for leaf in ia_order if TABLE4[6][LEAVES.index(leaf)] < ROOT_SEND_LIMIT]
    text = (
        "why: a task sent to child i costs the root IR_s(i)·Z·C of its own tasks (interference, Table 4 line 8), so "
        "it nets 1 − IR_s(i)·Z·C tasks. IA:Multi starts another send whenever the active sends' link rates sum "
        f"below B_s = {ROOT_SEND_LIMIT} MB/s (so while it sends to {below[0]} alone, link "
        f"{TABLE4[6][LEAVES.index(below[0])]} MB/s), to the next asking child in IA order; of the children IA:Multi "
        f"uses in these cells ({', '.join(sorted(used))}), {child} is the costliest (IR_s "
        f"{TABLE4[8][LEAVES.index(child)]}), and IA:Single, with one port, sends it fewer tasks. "
        + "; ".join(lines)
        + (f". In the cells IA:Multi wins, a task to {child} costs at most {max(won):.3f}" if won else "")
        + f". IA:Multi is behind IA:Single where its net offload Σ tasks_i·(1 − IR_s(i)·Z·C) is smaller: the two "
        f"agree in {agree} of {len(regular)} cells"
        + (f"; where it is negative ({', '.join(negative)}) RootComputes, which offloads nothing, is ahead too"
           if negative else "")
        + ". Tried as checks, not fits: holding "
        + ", ".join(f"{h} task{'s' if h > 1 else ''} per child, IA:Multi is beaten in {len(c)} cells "
                    f"({', '.join(c) or 'none'})" for h, c in holds.items())
        + ". Likely cause of the difference from the paper: our links are constant-rate and the model's only cost of "
        "concurrency is the shared B_s, while the paper's single-port (non-interruptible) sends to Lab3 took "
        f"{PAPER_SEND_TIME_MS[0]} ms to over {PAPER_SEND_TIME_MS[1]} ms (§4.3) and its IA:Multi left the bandwidth "
        "split to TCP (§4.1); the drawing of Fig. 5 is lost, so the paper's margins cannot be compared")
    return text, {"cells": per_cell, "beaten_cells_by_hold": {str(h): c for h, c in holds.items()}}


@check(PAPER, "Fig. 5, task farming on the §4 testbed")
def fig5_checks() -> list[Check]:
    from ..taskfarm import fig5

    rows = fig5()
    regular = [r for r in rows if not _exception(r)]
    beaten = [r for r in regular if beaten_by(r)]
    over3 = [r for r in regular if max(beaten_by(r).values(), default=0.0) > 0.03]
    margins = {_cell(r): {NAMES[a]: lag for a, lag in beaten_by(r).items()} for r in rows}

    def lead(r: dict[str, Any]) -> float:
        """How far the best other algorithm is behind IA:Multi (relative)."""
        return min(s for a, s in r["makespan"].items() if a != "ia-multi") / r["makespan"]["ia-multi"] - 1

    winning = [r for r in regular if r not in beaten]
    closest = (f"IA:Multi's smallest winning margin is {_pct(min(map(lead, winning)))} at "
               f"{_cell(min(winning, key=lead))}" if winning else "IA:Multi wins no cell")
    claim = ("§4.3: 'In general, the IA:Multi scheduling algorithm outperforms all of the other algorithms, with one "
             "exception' (10 MB/1 diagonal); 'outperformed all others for all application types'")
    ours = (f"beaten in {len(beaten)} of {len(regular)} cells: {_beaten_text(beaten)}" if beaten
            else f"best in all {len(regular)} cells")
    extra: dict[str, Any] = {"beaten_by": margins, "deterministic": True}
    if beaten:
        why, detail = _why_beaten(rows, beaten)
        extra.update(detail)
        note = (f"{claim}; {FIG5_HOW}; {DETERMINISTIC}. {closest}; with a 3 % tie band (not the paper's) it is still behind in "
                f"{', '.join(_cell(r) for r in over3) or 'no cell'}. {why}")
    else:
        note = f"{claim}; {FIG5_HOW}; {DETERMINISTIC}; {closest}"
    result = [Check(PAPER, "Fig. 5: IA:Multi beats every other algorithm in every cell but 10 MB/1 diagonal",
                    "every cell but 10 MB/1 diag", ours, None, not beaten, kind=REPRODUCTION,
                    status=PASS if not beaten else NOT_REPRODUCED, note=note, extra=extra)]

    # The project's reading of §4.3 (ties are common in the drawing): within 3 % of the best other algorithm.
    worst = max(regular, key=lambda r: max(beaten_by(r).values(), default=0.0))
    worst_lag = max(beaten_by(worst).values(), default=0.0)
    result.append(Check(
        PAPER, "Fig. 5: IA:Multi within 3 % of the best other algorithm in every cell but 10 MB/1 diagonal",
        "within 3 %", f"worst {_pct(worst_lag)} behind at {_cell(worst)}", 0.03, not over3, kind=REPRODUCTION,
        status=PASS if not over3 else NOT_REPRODUCED, extra={"beaten_by": margins},
        note=(f"the tie band reading of §4.3's 'outperforms' (ties are common in the lost drawing); over 3 % behind at "
              f"{', '.join(_cell(r) for r in over3) or 'no cell'}; every cell where it is beaten, with the cause, is in "
              f"the row above; {FIG5_HOW}; {DETERMINISTIC}")))
    root_wins = [r for r in rows if "root-computes" in beaten_by(r)]
    only_exception = [_cell(r) for r in root_wins] == [_cell(r) for r in rows if _exception(r)]
    result.append(Check(
        PAPER, "Fig. 5: RootComputes beats IA:Multi only at 10 MB/1 diagonal", "only at 10 MB/1 diag",
        "at " + ", ".join(f"{_cell(r)} ({_pct(beaten_by(r)['root-computes'])})" for r in root_wins), None,
        only_exception, kind=REPRODUCTION, status=PASS if only_exception else NOT_REPRODUCED,
        note=("§4.3 and the 1.80 ≥ 1 arithmetic (the next smallest IR_s·Z·C is 0.90, at 5 MB/1); RootComputes is ahead "
              "where IA:Multi's sends cost the root more work than they take off it (the cause is in the first Fig. 5 "
              f"row); {FIG5_HOW}; {DETERMINISTIC}")))

    (exc,) = [r for r in rows if _exception(r)]
    best = min(exc["makespan"], key=exc["makespan"].get)
    runner_up = min((a for a in exc["makespan"] if a != best), key=exc["makespan"].get)
    result.append(Check(
        PAPER, "Fig. 5(c): RootComputes is the best algorithm at 10 MB/1 diagonal", "RootComputes",
        f"{NAMES[best]} (next {NAMES[runner_up]}, {exc['normalised'][runner_up]:.4f} of RootComputes)", None,
        best == "root-computes", kind=REPRODUCTION, extra={"normalised": exc["normalised"]},
        note=(f"§4.3: 'the best scheduling algorithm is Root Computes'; IA:Multi at "
              f"{exc['normalised']['ia-multi']:.4f} of RootComputes; {FIG5_HOW}; {DETERMINISTIC}")))

    loads = root_loads(7)
    mismatch = [_cell(r) for r in rows if abs(r["min_load"] - loads[(int(r["send_mb"]), r["diagonals"])]) > 1e-9]
    result.append(Check(PAPER, "Fig. 5 testbed: the farm's IR_s·Z·C equals the Table 4 arithmetic in all 18 cells",
                        "(the §4.3 arithmetic row)", "equal" if not mismatch else "differs at " + ", ".join(mismatch),
                        1e-9, not mismatch, kind=SELF_CHECK,
                        note=("self_check: the smallest IR_s·Z·C of `taskfarm.fig5` (the reconstructed tree, priority "
                              "IR_s of Table 4 line 7, root rate in tasks/s) against `root_loads(7)` of this module")))

    over = [f"{_cell(r)}" for r in rows if r["best_throughput"] > r["bound"] * (1 + 1e-9)]
    result.append(Check(PAPER, "§3.2 bound: no farm exceeds the multi-port throughput bound (18 cells × 6 algorithms)",
                        "never", "never" if not over else ", ".join(over), 1e-9, not over, kind=SELF_CHECK,
                        note=f"self_check: our farm against our bound; {FIG5_HOW}; the bound of `commaware interference "
                             "throughput` on the same tree"))

    cut = fig5(cutoff=True)
    (cut_exc,) = [r for r in cut if _exception(r)]
    sent = offload(10.0, 1, "ia-multi", cutoff=True)["transfers"]
    cut_beaten = [r for r in cut if not _exception(r) and beaten_by(r)]
    ok = sent == 0 and cut_exc["normalised"]["ia-multi"] == 1.0
    result.append(Check(
        PAPER, "§3 cutoff variant (ours): at 10 MB/1 diagonal no child gets a task and IA:Multi equals RootComputes",
        "(not run in the paper)", f"{sent} tasks sent, {cut_exc['normalised']['ia-multi']:.4f} of RootComputes", None, ok,
        kind=SELF_CHECK,
        extra={"beaten_by": {_cell(r): {NAMES[a]: lag for a, lag in beaten_by(r).items()} for r in cut_beaten}},
        note=("self_check of --cutoff (never send to a child with IR_s·Z·C >= 1, IR_s of Table 4 line 7), the "
              "§3-informed variant footnote 5 says the paper did not run; §4.3 says the children 'should not have been "
              "sent any tasks' at 10 MB/1. With the cutoff IA:Multi is still beaten in "
              + (_beaten_text(cut_beaten) if cut_beaten else "no cell") + f"; {DETERMINISTIC}")))
    return result


#: Size of the numbers in the cells of the Fig. 5 heat map (points).
HEATMAP_POINTS = 10


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
    # 13 in wide: the report shows it at its own size (under its 1,400 px), so the numbers are 10 pt
    fig, ax = plt.subplots(figsize=(13, 5))
    image = ax.imshow(grid, cmap="RdYlGn_r", vmin=0.8, vmax=1.2, aspect="auto")
    for (i, j), value in np.ndenumerate(grid):
        red, green, blue, _ = image.cmap(image.norm(value))
        dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5  # white on the dark ends of the scale
        ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=HEATMAP_POINTS,
                color="white" if dark else "black")
    ax.set_yticks(range(len(algorithms)), algorithms, fontsize=10)
    ax.set_xticks(range(len(rows)), [_cell(r).replace(" diag", "d") for r in rows], rotation=45, ha="right",
                  rotation_mode="anchor", fontsize=9)
    fig.colorbar(image, ax=ax, label="makespan / RootComputes'")
    ax.set_title("paper 000 Fig. 5: task farming on the §4 testbed (1,000 tasks; lower is better)", fontsize=11)
    return [save_figure(fig, Path(outdir) / "paper000_fig5.svg")]
