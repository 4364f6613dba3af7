"""Steady-state throughput of independent tasks on a tree overlay (paper 000, §3.2).

A tree of nodes farms out independent tasks of Z MB each from its root. Node n computes
C^n tasks/s when it does not communicate; receiving from its parent at TR(n) MB/s and
sending to child i at TR(i) MB/s slows it down linearly (§3.1): the tasks/s computed at n are
S(n) <= (1 - IR_r^n·TR(n) - Σ_i IR_s^n(i)·TR(i))·C^n, with TR(n) = Z·T(n), where T(n) = S(n) + Σ_i T(i) is the number of tasks/s that enter the
subtree of n, S(n) >= 0 and T(n) <= B_r^n (the link from the parent, in tasks/s). The root
receives nothing (no IR_r term, no link).

* :func:`bound`: the paper's greedy upper bound, computed bottom-up as in bandwidth-centric
  scheduling. **Multi-port** (§3.2.1): children by increasing IR_s, never a child with
  IR_s·Z·C^n >= 1, the first p children saturated and the (p+1)-th partially, under
  (1) Σ T(i) <= B_s^n, (2) T̂(n) = (C^n + Σ T(i)(1 − IR_s(i)·Z·C^n)) / (1 + IR_r·Z·C^n)
  within the link into n, (3) T̂(n) − Σ T(i) >= 0, and the idle-node case
  T̂(n) = min(B_r^n, C^n / (1 + IR_r·Z·C^n)). **Single-port** (§3.2.2): children by
  decreasing B_r^i·(1 − IR_s(i)·Z·C^n), Σ T(i)/B_r^i <= 1 in place of (1), each link
  capped at min(link rate, B_s of the parent), with (2) and (3).
* :func:`lp_bound`: the same model as a linear program (scipy's HiGHS). The multi-port
  greedy bound equals its optimum; the single-port ordering is not optimal when the node's
  own compute constraint S(n) >= 0 binds (root C=1, Z=1, children B_r=10, IR_s=0.5 and
  B_r=4, IR_s=0.01: 2.0 by the ordering, 5.16 by the LP), so reports carry both and the gap.

TREE.json::

    {"task_mb": 2, "nodes": [{"id": "root", "parent": null, "compute_rate": 9.0,
                              "send_limit_mb_s": 10.7},
                             {"id": "a", "parent": "root", "compute_rate": 3.5,
                              "link_mb_s": 8.0, "ir_r": 0.05, "ir_s": 0.02}]}

``task_mb`` is Z, the size of a task in MB.
``compute_rate`` in tasks/s (C), ``link_mb_s`` the rate from the parent in MB/s (ignored for
the root), ``ir_r`` the interference on this node of receiving and ``ir_s`` the interference
on the *parent* of sending to this node, both per MB/s (fractions: 0.05 = 5 % per MB/s),
``send_limit_mb_s`` this node's B_s (optional; absent or null = unlimited). MB = 2^20 bytes.
Every number is at most 1e15, and so is each interference term IR_r·Z·C^n and IR_s(i)·Z·C^n
(the parent's C).
Errors are :class:`commaware.PlatformError` naming the file, the field and the reason.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from . import _core
from ._errors import NON_FINITE, input_error
from .api import Source, read_json_object

#: The two port models of §3.2.
PORTS = ("multi", "single")

_INF = math.inf


@dataclass
class Tree:
    """A validated tree (nodes in input order; index 0..N-1)."""

    source: str
    task_mb: float
    ids: list[Any]
    parent: list[int]  # index of the parent, -1 for the root
    compute_rate: list[float]
    link_mb_s: list[float]  # 0.0 for the root (unused)
    ir_r: list[float]  # 0.0 for the root (unused)
    ir_s: list[float]  # 0.0 for the root (unused)
    send_limit_mb_s: list[float]  # math.inf when unlimited
    root: int
    order: list[int]  # breadth-first from the root: parents before children

    def __len__(self) -> int:
        return len(self.ids)


TreeSource = Union[Tree, Source]


@dataclass
class ThroughputReport:
    """The greedy bound of §3.2 on one tree under one port model.

    Per node (in input order): ``T`` the tasks/s entering its subtree in the bound's
    schedule, ``S`` the tasks/s it computes, ``T_hat`` the most its subtree could take
    (T̂ of §3.2.1, what its parent sees), ``priority`` its children in the order used
    (exclusions left out) and ``excluded`` the children it never sends to
    (IR_s·Z·C^n >= 1). ``lp_throughput`` (when asked for) is the LP optimum of the same
    model, ``gap`` = lp_throughput − throughput."""

    ports: str
    throughput: float
    ids: list[Any]
    T: list[float]
    S: list[float]
    T_hat: list[float]
    kid_ids: list[Any]  # every node's children, node after node, each in priority order
    kid_start: list[int]  # node v's children are kid_ids[kid_start[v]:kid_start[v + 1]]
    kid_kept: list[int]  # ... the first kid_kept[v] of them in its priority, the rest excluded
    lp_throughput: float | None = None
    source: str = ""

    @property
    def gap(self) -> float | None:
        return None if self.lp_throughput is None else self.lp_throughput - self.throughput

    @property
    def priority(self) -> list[list[Any]]:
        """Per node, its children in the order used (exclusions left out)."""
        k, st = self.kid_ids, self.kid_start
        return [k[lo:lo + m] for lo, m in zip(st, self.kid_kept)]

    @property
    def excluded(self) -> list[list[Any]]:
        """Per node, the children it never sends to (IR_s·Z·C^n >= 1)."""
        k, st = self.kid_ids, self.kid_start
        return [k[lo + m:hi] for lo, m, hi in zip(st, self.kid_kept, st[1:])]

    def node(self, node_id: Any) -> dict[str, Any]:
        """One node's entry of `to_dict()["nodes"]`."""
        v = self.ids.index(node_id)
        lo, m, hi = self.kid_start[v], self.kid_kept[v], self.kid_start[v + 1]
        return {"id": node_id, "T": self.T[v], "S": self.S[v], "T_hat": self.T_hat[v],
                "priority": self.kid_ids[lo:lo + m], "excluded": self.kid_ids[lo + m:hi]}

    def to_dict(self) -> dict[str, Any]:
        return {
            "ports": self.ports,
            "throughput": self.throughput,
            "lp_throughput": self.lp_throughput,
            "gap": self.gap,
            "nodes": [{"id": i, "T": t, "S": s, "T_hat": h, "priority": p, "excluded": e}
                      for i, t, s, h, p, e in zip(self.ids, self.T, self.S, self.T_hat, self.priority, self.excluded)],
        }


@dataclass
class LPResult:
    """The optimum of the §3.2 linear program: throughput at the root, T and S per node."""

    ports: str
    throughput: float
    T: list[float]
    S: list[float]


# -- reading a tree ----------------------------------------------------------------------


#: The largest number a tree may hold, and the largest interference a node may take from
#: receiving or sending one task per second (IR·Z·C^n): far beyond any measured tree, and
#: small enough that neither the bound's arithmetic nor the LP solver (HiGHS refuses
#: coefficients above 1e15) overflows.
MAX_VALUE = 1e15
MAX_LOAD = 1e15


def _number(name: str, where: str, value: Any, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise input_error(_core.PlatformError, name, where, f"expected a number, got {json.dumps(value)}")
    try:
        x = float(value)
    except OverflowError:  # an integer beyond any float
        raise input_error(_core.PlatformError, name, where,
                          f"must be at most {MAX_VALUE:g}, got an integer of {len(str(abs(value)))} digits") from None
    if not math.isfinite(x):
        raise input_error(_core.PlatformError, name, where, NON_FINITE)
    if x > MAX_VALUE:
        raise input_error(_core.PlatformError, name, where, f"must be at most {MAX_VALUE:g}, got {x:g}")
    if positive and x <= 0:
        raise input_error(_core.PlatformError, name, where, f"must be > 0, got {value}")
    if x < 0:
        raise input_error(_core.PlatformError, name, where, f"must be >= 0, got {value}")
    return x


def load_tree(source: TreeSource) -> Tree:
    """A validated :class:`Tree` from TREE.json (a path) or a dict (see the module doc).

    Rejects, naming the file, the field and the reason: malformed JSON, a missing field,
    a negative or non-finite rate or size, task_mb <= 0, duplicate ids, an unknown parent,
    no root or several, and a cycle. The traversal is iterative (any depth)."""
    if isinstance(source, Tree):
        return source
    doc, name = read_json_object(source, _core.PlatformError, "with `task_mb` and `nodes`")
    if "task_mb" not in doc:
        raise input_error(_core.PlatformError, name, "task_mb", "missing field (the task size Z in MB)")
    z = _number(name, "task_mb", doc["task_mb"], positive=True)
    nodes = doc.get("nodes")
    if "nodes" not in doc:
        raise input_error(_core.PlatformError, name, "nodes", "missing field (the list of nodes)")
    if not isinstance(nodes, list) or not nodes:
        raise input_error(_core.PlatformError, name, "nodes", "expected a non-empty list of nodes")

    n = len(nodes)
    ids: list[Any] = [None] * n
    parent_ids: list[Any] = [None] * n
    index: dict[Any, int] = {}
    roots: list[int] = []
    # First the shape (ids, parents, one root, no cycle), then the numbers.
    for k, node in enumerate(nodes):
        where = f"nodes[{k}]"
        if not isinstance(node, dict):
            raise input_error(_core.PlatformError, name, where, "a node is an object")
        if "id" not in node:
            raise input_error(_core.PlatformError, name, f"{where}.id", "missing field")
        nid = node["id"]
        if isinstance(nid, bool) or not isinstance(nid, (str, int)):
            raise input_error(_core.PlatformError, name, f"{where}.id", f"expected a string or an integer, got {json.dumps(nid)}")
        if nid in index:
            raise input_error(_core.PlatformError, name, f"{where}.id",
                              f"duplicate id {json.dumps(nid)} (also nodes[{index[nid]}])")
        index[nid] = k
        ids[k] = nid
        if "parent" not in node:
            raise input_error(_core.PlatformError, name, f"{where}.parent", "missing field (null for the root)")
        par = node["parent"]
        if par is None:
            roots.append(k)
        elif isinstance(par, bool) or not isinstance(par, (str, int)):
            raise input_error(_core.PlatformError, name, f"{where}.parent",
                              f"expected a node id or null, got {json.dumps(par)}")
        parent_ids[k] = par
    if not roots:
        raise input_error(_core.PlatformError, name, "nodes",
                          "no root (a node with \"parent\": null): the parent links form a cycle")
    if len(roots) > 1:
        shown = ", ".join(json.dumps(ids[r]) for r in roots[:5]) + (", ..." if len(roots) > 5 else "")
        raise input_error(_core.PlatformError, name, f"nodes[{roots[1]}].parent",
                          f"several roots ({len(roots)}: {shown}): a tree has exactly one node with parent null")
    parent = [-1] * n
    for k, par in enumerate(parent_ids):
        if par is None:
            continue
        p = index.get(par)
        if p is None:
            raise input_error(_core.PlatformError, name, f"nodes[{k}].parent", f"unknown parent {json.dumps(par)}")
        parent[k] = p
    root = roots[0]
    order = _bfs(parent, root)
    if len(order) < n:
        seen = bytearray(n)
        for v in order:
            seen[v] = 1
        start = next(k for k in range(n) if not seen[k])
        # Walk up from an unreached node: it never reaches the root, so it enters a cycle.
        visited: set[int] = set()
        v = start
        while v not in visited:
            visited.add(v)
            v = parent[v]
        cycle = [v]
        u = parent[v]
        while u != v:
            cycle.append(u)
            u = parent[u]
        shown = " -> ".join(json.dumps(ids[c]) for c in cycle[:8]) + (" -> ..." if len(cycle) > 8 else f" -> {json.dumps(ids[v])}")
        raise input_error(_core.PlatformError, name, f"nodes[{v}].parent",
                          f"the parent links form a cycle ({shown}), not connected to the root")

    rate = [0.0] * n
    link = [0.0] * n
    irr = [0.0] * n
    irs = [0.0] * n
    bs = [_INF] * n
    for k, node in enumerate(nodes):
        where = f"nodes[{k}]"
        is_root = k == root
        required = ("compute_rate",) if is_root else ("compute_rate", "link_mb_s", "ir_r", "ir_s")
        for key in required:
            if key not in node:
                raise input_error(_core.PlatformError, name, f"{where}.{key}", "missing field")
        rate[k] = _number(name, f"{where}.compute_rate", node["compute_rate"])
        for key, arr in (("link_mb_s", link), ("ir_r", irr), ("ir_s", irs)):
            if key in node:  # validated for the root too, where it is not used
                value = _number(name, f"{where}.{key}", node[key])
                if not is_root:
                    arr[k] = value
        limit = node.get("send_limit_mb_s")
        if limit is not None:
            bs[k] = _number(name, f"{where}.send_limit_mb_s", limit)
    # The interference terms of §3.1 in tasks/s: IR_r·Z·C^n at the node, IR_s(i)·Z·C^n at its parent.
    for k in range(n):
        if k == root:
            continue
        for key, ir, c, whose in (("ir_r", irr[k], rate[k], "its"), ("ir_s", irs[k], rate[parent[k]], "its parent's")):
            load = ir * z * c
            if load > MAX_LOAD:
                raise input_error(_core.PlatformError, name, f"nodes[{k}].{key}",
                                  f"{key} × task_mb × {whose} compute_rate is {load:g}, more than {MAX_LOAD:g}")
    return Tree(name, z, ids, parent, rate, link, irr, irs, bs, root, order)


def _bfs(parent: list[int], root: int) -> list[int]:
    """Nodes reachable from `root`, breadth-first (iterative)."""
    n = len(parent)
    par = np.asarray(parent, dtype=np.int64)
    nonroot = np.flatnonzero(par >= 0)
    by_parent = nonroot[np.argsort(par[nonroot], kind="stable")]
    counts = np.bincount(par[nonroot], minlength=n)
    start = np.concatenate(([0], np.cumsum(counts))).tolist()
    kids = by_parent.tolist()
    order = [root]
    for v in order:  # grows while iterating: a breadth-first sweep
        a, b = start[v], start[v + 1]
        if a != b:
            order.extend(kids[a:b])
    return order


# -- the greedy bound (§3.2.1, §3.2.2) ---------------------------------------------------


def _check_ports(ports: str) -> None:
    if ports not in PORTS:
        raise input_error(_core.OptionsError, "--ports", "", f"unknown port model {ports!r}: multi or single")


def _model(tree: Tree, ports: str) -> dict[str, Any]:
    """The per-node quantities of §3.2 in tasks/s, and each node's children in priority
    order (the excluded ones, IR_s·Z·C^n >= 1, after them)."""
    z = tree.task_mb
    n = len(tree)
    par = np.asarray(tree.parent, dtype=np.int64)
    c = np.asarray(tree.compute_rate, dtype=float)
    bs = np.asarray(tree.send_limit_mb_s, dtype=float)
    nonroot = np.flatnonzero(par >= 0)
    pn = par[nonroot]
    cp = c[pn]  # C^n of each child's parent
    load = np.asarray(tree.ir_s, dtype=float)[nonroot] * z * cp  # IR_s(i)·Z·C^n
    excl = load >= 1.0
    a = np.zeros(n)
    a[nonroot] = 1.0 - load
    link = np.asarray(tree.link_mb_s, dtype=float)
    if ports == "single":
        link = np.where(par >= 0, np.minimum(link, bs[np.maximum(par, 0)]), link)  # min(link rate, B_s)
    cap = link / z  # B_r^n in tasks/s
    cap[tree.root] = _INF
    k = 1.0 + np.asarray(tree.ir_r, dtype=float) * z * c
    k[tree.root] = 1.0  # no receive term at the root
    if ports == "multi":
        key = np.asarray(tree.ir_s, dtype=float)[nonroot]  # increasing IR_s
    else:
        key = -(cap[nonroot] * a[nonroot])  # decreasing B_r^i·(1 − IR_s·Z·C^n)
    srt = np.lexsort((nonroot, key, excl, pn))
    kids = nonroot[srt]
    counts = np.bincount(pn, minlength=n)
    start = np.concatenate(([0], np.cumsum(counts)))
    kept = np.bincount(pn[~excl], minlength=n)
    return {
        "a": a.tolist(), "cap": cap.tolist(), "k": k.tolist(), "c": c.tolist(), "xs": (bs / z).tolist(),
        "kids": kids.tolist(), "start": start.tolist(), "mid": (start[:-1] + kept).tolist(),
    }


def bound(tree: TreeSource, ports: str = "multi", lp: bool = False) -> ThroughputReport:
    """The §3.2 greedy upper bound on the steady-state throughput (tasks/s at the root).

    Bottom-up, each node's T̂ is the most its subtree can take: children in the §3.2.1
    (multi-port: increasing IR_s) or §3.2.2 (single-port: decreasing
    B_r^i·(1 − IR_s·Z·C^n)) priority order, excluded when IR_s·Z·C^n >= 1, each given
    as much as it can take until constraint (1) (Σ T(i) <= B_s^n, or Σ T(i)/B_r^i <= 1
    single-port), (2) (T̂(n) <= B_r^n) or (3) (S(n) >= 0) stops the (p+1)-th; a node whose
    C^n/(1 + IR_r·Z·C^n) already fills its link sends nothing (the idle-node case). Then
    top-down, a node given less than its T̂ by its parent computes as much as it can and
    delegates only the rest, so ``T`` and ``S`` form one feasible schedule.
    With ``lp=True`` the report also carries the LP optimum (:func:`lp_bound`)."""
    _check_ports(ports)
    tree = load_tree(tree)
    m = _model(tree, ports)
    a: list[float] = m["a"]
    capv: list[float] = m["cap"]
    kv: list[float] = m["k"]
    cv: list[float] = m["c"]
    xsv: list[float] = m["xs"]
    kids: list[int] = m["kids"]
    start: list[int] = m["start"]
    mid: list[int] = m["mid"]
    multi = ports == "multi"
    n = len(tree)
    that = [0.0] * n
    sent = [0.0] * n  # what its parent sends each node in the bottom-up (T̂) allocation

    def alloc(v: int, cap: float, out: list[float]) -> tuple[float, float]:
        """(T, Σ T(i)) of node v under a cap on T, writing each child's T(i) into out."""
        kk = kv[v]
        num = cv[v]
        if num >= cap * kk:  # idle-node case: T = cap, computed locally
            return cap, 0.0
        lo, hi = start[v], mid[v]
        total = 0.0
        if lo == hi:
            return num / kk, 0.0
        room = xsv[v] if multi else 1.0  # what is left of (1): tasks/s, or the port's time
        for j in range(lo, hi):
            i = kids[j]
            th = that[i]
            if th <= 0.0:
                continue
            ai = a[i]
            x = th
            if multi:
                if room < x:
                    x = room
            else:
                r = room * capv[i]
                if r < x:
                    x = r
            lim = (cap * kk - num) / ai  # (2): T̂(n) within B_r^n
            if lim < x:
                x = lim
            d = kk - ai  # = IR_r·Z·C + IR_s·Z·C >= 0
            if d > 0.0:
                lim = (num - kk * total) / d  # (3): S(n) >= 0
                if lim < x:
                    x = lim
            if x <= 0.0:
                break
            out[i] = x
            num += ai * x
            total += x
            if multi:
                room -= x
            else:
                room -= x / capv[i]
            if x < th:
                break
        t = num / kk
        return (cap if cap < t else t), total

    for v in reversed(tree.order):
        if start[v] == mid[v]:  # a leaf, or every child excluded: the idle-node case
            t = cv[v] / kv[v]
            cap = capv[v]
            that[v] = cap if cap < t else t
        else:
            that[v] = alloc(v, capv[v], sent)[0]

    tv = [0.0] * n
    sv = [0.0] * n
    root = tree.root
    tv[root] = that[root]
    for v in tree.order:
        t = tv[v]
        if t <= 0.0:
            continue  # nothing enters: the subtree stays at 0
        lo, hi = start[v], mid[v]
        if t >= that[v]:
            total = 0.0
            for j in range(lo, hi):
                i = kids[j]
                x = sent[i]
                tv[i] = x
                total += x
        else:
            _, total = alloc(v, t, tv)
        s = t - total
        sv[v] = s if s > 0.0 else 0.0

    ids = tree.ids
    kid_ids = [ids[i] for i in kids]
    kept = [hi - lo for lo, hi in zip(start, mid)]
    report = ThroughputReport(ports, that[root], list(ids), tv, sv, that, kid_ids, start, kept, source=tree.source)
    if lp:
        report.lp_throughput = lp_bound(tree, ports).throughput
    return report


# -- the linear program ------------------------------------------------------------------


def lp_bound(tree: TreeSource, ports: str = "multi") -> LPResult:
    """The §3.2 model as a linear program, solved by scipy.optimize.linprog (HiGHS).

    Variables T(n) and S(n) per node; maximise T(root) subject to, for every node n,
    T(n) = S(n) + Σ_i T(i), S(n) >= 0, 0 <= T(n) <= B_r^n (none at the root),
    S(n) + IR_r·Z·C^n·T(n) + Σ_i IR_s(i)·Z·C^n·T(i) <= C^n (from
    S(n) <= (1 − IR_r·TR(n) − Σ IR_s(i)·TR(i))·C^n with TR = Z·T; no IR_r term at the
    root), and the port constraint: multi-port Σ_i T(i) <= B_s^n/Z, single-port
    Σ_i T(i)/B_r^i <= 1 with B_r^i = min(link, B_s^n)/Z. No priority and no exclusion:
    those are the greedy's (§3.2.1 says they lose nothing; the LP checks it)."""
    from scipy.optimize import linprog  # type: ignore[import-untyped]
    from scipy.sparse import coo_matrix  # type: ignore[import-untyped]

    _check_ports(ports)
    tree = load_tree(tree)
    n = len(tree)
    z = tree.task_mb
    par = np.asarray(tree.parent, dtype=np.int64)
    c = np.asarray(tree.compute_rate, dtype=float)
    bs = np.asarray(tree.send_limit_mb_s, dtype=float)
    link = np.asarray(tree.link_mb_s, dtype=float)
    nonroot = np.flatnonzero(par >= 0)
    pn = par[nonroot]
    if ports == "single":
        link = np.where(par >= 0, np.minimum(link, bs[np.maximum(par, 0)]), link)
    cap = link / z
    ar = np.arange(n)
    # Columns: T(0..n-1), then S(0..n-1).
    # Equalities, row v: T(v) − S(v) − Σ_{i child of v} T(i) = 0.
    eq_r = np.concatenate((ar, ar, pn))
    eq_c = np.concatenate((ar, n + ar, nonroot))
    eq_v = np.concatenate((np.ones(n), -np.ones(n), -np.ones(len(nonroot))))
    a_eq = coo_matrix((eq_v, (eq_r, eq_c)), shape=(n, 2 * n)).tocsr()
    # Interference, row v: S(v) + IR_r·Z·C·T(v) + Σ IR_s(i)·Z·C·T(i) <= C.
    irr = np.asarray(tree.ir_r, dtype=float) * z * c
    irr[tree.root] = 0.0
    irs = np.asarray(tree.ir_s, dtype=float)[nonroot] * z * c[pn]
    rows = [ar, ar, pn]
    cols = [n + ar, ar, nonroot]
    vals = [np.ones(n), irr, irs]
    b_ub = [c]
    nrow = n
    if ports == "multi":
        lim = np.flatnonzero(np.isfinite(bs))
        if len(lim):
            sel = np.isin(pn, lim)
            slot = np.full(n, -1)
            slot[lim] = nrow + np.arange(len(lim))
            rows.append(slot[pn[sel]])
            cols.append(nonroot[sel])
            vals.append(np.ones(int(sel.sum())))
            b_ub.append(bs[lim] / z)
            nrow += len(lim)
    else:
        capk = cap[nonroot]
        sel = capk > 0  # a zero-rate link is held at 0 by its bound
        senders = np.unique(pn[sel])
        if len(senders):
            slot = np.full(n, -1)
            slot[senders] = nrow + np.arange(len(senders))
            rows.append(slot[pn[sel]])
            cols.append(nonroot[sel])
            vals.append(1.0 / capk[sel])
            b_ub.append(np.ones(len(senders)))
            nrow += len(senders)
    a_ub = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(nrow, 2 * n)).tocsr()
    upper = [None if (v == tree.root or not math.isfinite(cap[v])) else float(cap[v]) for v in range(n)]
    bounds = [(0.0, u) for u in upper] + [(0.0, None)] * n
    cost = np.zeros(2 * n)
    cost[tree.root] = -1.0
    try:
        res = linprog(cost, A_ub=a_ub, b_ub=np.concatenate(b_ub), A_eq=a_eq, b_eq=np.zeros(n), bounds=bounds,
                      method="highs", options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    except ValueError as exc:  # scipy refuses an infinite coefficient (a rate over a tiny task_mb)
        raise input_error(_core.PlatformError, tree.source, "",
                          f"the LP solver cannot take this tree's numbers: {exc}") from None
    if res.status != 0:  # T = S = 0 is always feasible and T is bounded: only numbers too far apart fail
        raise input_error(_core.PlatformError, tree.source, "",
                          f"the LP solver cannot solve this tree ({res.message}): its numbers span too wide a range")
    x = res.x
    return LPResult(ports, float(x[tree.root]), x[:n].tolist(), x[n:].tolist())
