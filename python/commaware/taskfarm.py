"""Autonomous task farming on a tree overlay (paper 000, §4); the event loop is in the
Rust core (`commaware_core::taskfarm`).

N independent identical tasks of Z MB start at the root, which computes continuously.
Every other node asks its parent for tasks at t = 0 and keeps asking while it holds fewer
than ``hold`` (queued + computing + in transit to it); a parent sends only to a child that
asks, choosing among the requesting children by the algorithm:

* single-port (one send at a time, at min(link rate, B_s)): ``fcfs`` (oldest request),
  ``comprate`` (highest compute rate), ``bwc`` (largest link rate), ``ia-single``
  (lowest IR_s);
* ``ia-multi``: multi-port; starts a send to the requesting child with the lowest IR_s
  that is not already receiving while the active sends' link rates sum below B_s; the
  active sends share B_s max-min under their link caps;
* ``root-computes``: the root computes everything.

Every node computes at C × max(0, 1 − IR_r·TR_in − Σ IR_s(child)·TR_out(child)) at every
moment (rates in MB/s, MB = 2^20 bytes). As the paper ran them (footnote 5), the
algorithms have no §3 cutoff; ``cutoff=True`` adds it (never send to a child with
IR_s·Z·C_parent >= 1). Latency is zero; ties go to the lower node index.

The farm's throughput never exceeds the §3.2 multi-port bound of the same tree *while
every node's normalised rate stays >= 0*: the bound is linear and charges a negative
compute rate where the farm clamps at 0, so on trees where Σ IR·TR > 1 can happen
(``examples/interference/tree_small.json``) the farm can beat it.

:func:`testbed_table4` rebuilds the §4 fork graph (see its doc for the reconstruction), and
:func:`fig5` runs the 18 application types through the six algorithms, normalised to
RootComputes as in Fig. 5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from . import _core
from ._errors import input_error
from .throughput import Tree, TreeSource, bound, load_tree

#: The six algorithms of §4.1, in the order of Fig. 5's legend.
ALGORITHMS = ("ia-multi", "ia-single", "fcfs", "comprate", "bwc", "root-computes")

#: Send sizes (MB) and compute sizes (diagonals) of the 18 application types of §4.3.
SEND_MB = (2.0, 5.0, 10.0)
DIAGONALS = (1, 3, 5, 7, 9, 11)

# Table 4 of paper 000, columns Lab3, Lab4, Lab5, Lab6, SB0, Tenn.
TABLE4_LEAVES = ("Lab3", "Lab4", "Lab5", "Lab6", "SB0", "Tenn")
TABLE4 = {
    1: (9.057, 9.055, 9.055, 8.98, 9.18, 9.06),  # compute rate root (diagonals/s)
    2: (23.86, 3.47, 3.02, 8.27, 22.55, 13.23),  # compute rate P_i (diagonals/s)
    3: (5.8, 7.02, 7.1, 5.8, 6.75, 8.92),  # root w/ sending
    4: (12.45, 1.77, 1.2, 7.12, 15.15, 12.7),  # P_i w/ receiving
    5: (11.1, 11.12, 11.05, 10.85, 7.7, 0.3),  # transfer rate, no compute (MB/s)
    6: (10.8, 10.81, 9.62, 10.7, 7.73, 0.2),  # transfer rate, both compute (MB/s)
    7: (0.0299, 0.0199, 0.0211, 0.0305, 0.0310, 0.0638),  # IR_s at root (root computes)
    8: (0.0333, 0.0208, 0.0226, 0.0331, 0.0342, 0.0331),  # IR_s at root (both compute)
    9: (0.0443, 0.0454, 0.0621, 0.0130, 0.0425, 0.1300),  # IR_r at P_i (both compute)
}
#: The root's compute rate: the mean of Table 4 line 1, diagonals/s.
ROOT_RATE = 9.057
#: B_s of the root, MB/s (§2.4).
ROOT_SEND_LIMIT = 10.7

TESTBED_NOTE = (
    "Reconstruction of the §4 testbed (docs/interference.md): fork graph Lab0 -> Lab3, Lab4, Lab5, Lab6, SB0, Tenn; "
    "root compute 9.057 diagonals/s (mean of Table 4 line 1), B_s 10.7 MB/s (§2.4); children compute "
    "Table 4 line 2; a task of k diagonals takes k/rate s; link rates line 6 (simulation) and line 5 "
    "(BWC's priority); root send interference line 8 (simulation) and line 7 (IA priority and the cutoff); "
    "child receive interference line 9; interference as fractions per MB/s; each child holds at most "
    "`hold` tasks and requests at t=0; the root computes continuously; latency zero."
)


@dataclass
class FarmTree(Tree):
    """A :class:`Tree` with the schedulers' own view of IR_s and of the link rates, when it
    differs from the simulated one (the §4 testbed), and a description."""

    priority_ir_s: Optional[list[float]] = None
    priority_link_mb_s: Optional[list[float]] = None
    note: str = ""


@dataclass
class FarmReport:
    """One farm: ``makespan`` (s, when the N-th task completes), ``throughput``
    (N/makespan, tasks/s), ``tasks_per_node`` (id -> tasks computed), and the §3.2
    multi-port ``bound`` of the same tree (tasks/s; the farm never exceeds it) with
    ``gap`` = bound − throughput."""

    algorithm: str
    tasks: int
    hold: int
    cutoff: bool
    makespan: float
    throughput: float
    tasks_per_node: dict[Any, int]
    bound: float
    transfers: int
    source: str = ""
    testbed: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def gap(self) -> float:
        return self.bound - self.throughput

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "algorithm": self.algorithm, "tasks": self.tasks, "hold": self.hold, "cutoff": self.cutoff,
            "makespan": self.makespan, "throughput": self.throughput,
            "tasks_per_node": {str(k): v for k, v in self.tasks_per_node.items()},
            "bound": self.bound, "gap": self.gap, "transfers": self.transfers,
        }
        if self.testbed:
            d["testbed"] = self.testbed
        d.update(self.extra)
        return d


def _check(algorithm: str, tasks: Any, hold: Any) -> None:
    if algorithm not in ALGORITHMS:
        raise input_error(_core.OptionsError, "--algorithm", "",
                          f"unknown algorithm {algorithm!r} (known: {', '.join(ALGORITHMS)})")
    for name, value in (("--tasks", tasks), ("--hold", hold)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise input_error(_core.OptionsError, name, "", f"must be an integer >= 1, got {value!r}")


def taskfarm(tree: TreeSource, algorithm: str = "ia-multi", tasks: int = 1000, hold: int = 2,
             cutoff: bool = False, with_bound: bool = True) -> FarmReport:
    """Farm ``tasks`` tasks on ``tree`` (TREE.json path, dict, :class:`Tree` or
    :class:`FarmTree`) with ``algorithm`` (one of :data:`ALGORITHMS`).

    Errors are :class:`commaware.InputError` subclasses naming the file, field and reason."""
    _check(algorithm, tasks, hold)
    t = load_tree(tree)
    prio_irs = getattr(t, "priority_ir_s", None)
    prio_link = getattr(t, "priority_link_mb_s", None)
    r = _core.taskfarm(t.parent, t.compute_rate, t.link_mb_s, t.ir_r, t.ir_s, t.send_limit_mb_s, t.task_mb,
                       algorithm, tasks=tasks, hold=hold, cutoff=cutoff, priority_ir_s=prio_irs,
                       priority_link_mb_s=prio_link, source=t.source)
    b = bound(t, "multi").throughput if with_bound else math.nan
    per_node = dict(zip(t.ids, r["tasks_per_node"]))
    return FarmReport(algorithm, tasks, hold, cutoff, r["makespan"], r["throughput"], per_node, b,
                      r["transfers"], source=t.source, testbed=getattr(t, "note", ""))


def testbed_table4(send_mb: float = 2.0, diagonals: float = 5.0) -> FarmTree:
    """The §4 fork graph of Table 4 for tasks of ``send_mb`` MB and ``diagonals``
    diagonals (compute rates in tasks/s = diagonals/s ÷ diagonals); see TESTBED_NOTE."""
    for name, value in (("--send-mb", send_mb), ("--diagonals", diagonals)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise input_error(_core.OptionsError, name, "", f"must be a number > 0, got {value!r}")
    k = float(diagonals)
    ids: list[Any] = ["Lab0", *TABLE4_LEAVES]
    n = len(ids)
    inf = math.inf
    return FarmTree(
        source="testbed table4",
        task_mb=float(send_mb),
        ids=ids,
        parent=[-1] + [0] * (n - 1),
        compute_rate=[ROOT_RATE / k] + [c / k for c in TABLE4[2]],
        link_mb_s=[0.0, *TABLE4[6]],
        ir_r=[0.0, *TABLE4[9]],
        ir_s=[0.0, *TABLE4[8]],
        send_limit_mb_s=[ROOT_SEND_LIMIT] + [inf] * (n - 1),
        root=0,
        order=list(range(n)),
        priority_ir_s=[0.0, *TABLE4[7]],
        priority_link_mb_s=[0.0, *TABLE4[5]],
        note=TESTBED_NOTE + f" Tasks: {send_mb:g} MB, {diagonals:g} diagonals.",
    )


def fig5(tasks: int = 1000, hold: int = 2, cutoff: bool = False) -> list[dict[str, Any]]:
    """Fig. 5: for the 18 application types, every algorithm's makespan normalised to
    RootComputes, the multi-port bound (tasks/s) and the best farm throughput.

    Each row: send_mb, diagonals, normalised {algorithm: makespan / RootComputes'},
    makespan {algorithm: s}, bound, best_throughput, min_load (the smallest
    IR_s·Z·C of the root over its children, with the priority IR_s, Table 4 line 7)."""
    rows = []
    for mb in SEND_MB:
        for k in DIAGONALS:
            tree = testbed_table4(mb, k)
            b = bound(tree, "multi").throughput
            spans = {a: taskfarm(tree, a, tasks, hold, cutoff, with_bound=False).makespan for a in ALGORITHMS}
            base = spans["root-computes"]
            rows.append({
                "send_mb": mb, "diagonals": k,
                "normalised": {a: s / base for a, s in spans.items()},
                "makespan": spans, "bound": b, "best_throughput": tasks / min(spans.values()),
                "min_load": min(tree.priority_ir_s[1:]) * mb * tree.compute_rate[0],  # type: ignore[index]
            })
    return rows
