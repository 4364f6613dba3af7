"""Steady-state throughput bounds on trees (paper 000 §3.2): `commaware.throughput` and
`commaware interference throughput`.

Every expected number is worked out by hand from the paper's formulas, never taken from
the code under test. Notation (§3.2), all rates in tasks/s, Z in MB:

    B_r^n = link_mb_s / Z                  a_i = 1 − IR_s(i)·Z·C^n   (excluded if a_i <= 0)
    K^n   = 1 + IR_r^n·Z·C^n  (1 at the root)
    T̂(n) = (C^n + Σ_i a_i·T(i)) / K^n    subject to
      (1) Σ T(i) <= B_s^n/Z  (multi-port)  or  Σ T(i)/B_r^i <= 1 (single-port,
          B_r^i = min(link, B_s^n)/Z)
      (2) T̂(n) <= B_r^n
      (3) T̂(n) − Σ T(i) >= 0      i.e.  T(i)·(K − a_i) <= C + Σ_prev a·T − K·Σ_prev T
    idle-node case: T̂(n) = min(B_r^n, C^n/K^n) when nothing is sent.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import pytest

from commaware import _core
from commaware.throughput import PORTS, bound, load_tree, lp_bound
from conftest import EXAMPLES

SMALL = EXAMPLES / "interference" / "tree_small.json"
CHAIN = EXAMPLES / "interference" / "tree_chain.json"
GAP = EXAMPLES / "interference" / "tree_single_gap.json"


def node(nid, parent, c, link=None, ir_r=0.0, ir_s=0.0, bs=None):
    d = {"id": nid, "parent": parent, "compute_rate": c}
    if parent is not None:
        d.update(link_mb_s=link, ir_r=ir_r, ir_s=ir_s)
    if bs is not None:
        d["send_limit_mb_s"] = bs
    return d


def tree(z, *nodes):
    return {"task_mb": z, "nodes": list(nodes)}


def by_id(report):
    return {e["id"]: e for e in report.to_dict()["nodes"]}


def approx(x, rel=1e-12):
    return pytest.approx(x, rel=rel, abs=1e-12)


# -- hand-computed trees ---------------------------------------------------------------


def test_root_two_children_multi():
    # examples/interference/tree_small.json, Z = 1, root C = 2, B_s = 10 MB/s -> 10 tasks/s.
    # a: C=3, link 4, IR_r=0.1: leaf, T̂(a) = min(4, 3/(1 + 0.1·1·3)) = 3/1.3 = 30/13.
    # b: C=5, link 8, IR_r=0:   leaf, T̂(b) = min(8, 5/1) = 5.
    # c: IR_s = 0.5: 0.5·1·2 = 1 >= 1, excluded.
    # Root: a_a = 1 − 0.05·2 = 0.9, a_b = 1 − 0.2·2 = 0.6, K = 1; order by IR_s: a, b.
    #  a: (3) T(a)·0.1 <= 2 -> 20; (1) 10: saturated, T(a) = 30/13; num = 2 + 0.9·30/13 = 53/13.
    #  b: (3) T(b)·0.4 <= 53/13 − 30/13 = 23/13 -> T(b) = 23/5.2 = 115/26 < 5: partial.
    #  T̂(root) = 53/13 + 0.6·115/26 = 106/26 + 69/26 = 175/26; S(root) = 175/26 − 30/13 − 115/26 = 0.
    r = bound(SMALL, "multi", lp=True)
    assert r.throughput == approx(175 / 26)
    n = by_id(r)
    assert n["root"]["priority"] == ["a", "b"] and n["root"]["excluded"] == ["c"]
    assert n["root"]["S"] == approx(0.0)
    assert n["a"]["T"] == approx(30 / 13) and n["a"]["S"] == approx(30 / 13)
    assert n["b"]["T"] == approx(115 / 26) and n["b"]["T_hat"] == approx(5.0)
    assert n["c"]["T"] == 0.0 and n["c"]["S"] == 0.0
    assert r.lp_throughput == approx(175 / 26, rel=1e-7)


def test_send_limit_binds_multi():
    # As above with B_s = 3 MB/s (3 tasks/s): a saturated (30/13), b gets 3 − 30/13 = 9/13
    # (its (3) limit 57.5/13 is looser); T̂ = 53/13 + 0.6·9/13 = 58.4/13 = 292/65;
    # S(root) = 58.4/13 − 39/13 = 19.4/13 = 97/65.
    doc = json.loads(SMALL.read_text())
    doc["nodes"][0]["send_limit_mb_s"] = 3
    r = bound(doc, "multi", lp=True)
    assert r.throughput == approx(292 / 65)
    n = by_id(r)
    assert n["b"]["T"] == approx(9 / 13)
    assert n["root"]["S"] == approx(97 / 65)
    assert r.lp_throughput == approx(292 / 65, rel=1e-7)


def test_chain():
    # examples/interference/tree_chain.json, Z = 2: r (C=1) -> m (C=2, link 6 -> B_r 3,
    # IR_r 0.25 -> K = 1 + 0.25·2·2 = 2; IR_s on r 0.1) -> l (C=4, link 4 -> B_r 2, IR_r 0;
    # IR_s on m 0.05).
    #  l: T̂ = min(2, 4) = 2.
    #  m: C/K = 1 < 3, a_l = 1 − 0.05·2·2 = 0.8; (2) (3·2 − 2)/0.8 = 5; (3) d = 2 − 0.8 = 1.2,
    #     T(l) <= 2/1.2 = 5/3 -> T(l) = 5/3; T̂(m) = (2 + 0.8·5/3)/2 = 5/3, S(m) = 0.
    #  r: a_m = 1 − 0.1·2·1 = 0.8, K = 1; (3) 0.2·T(m) <= 1 -> 5: T(m) = 5/3 saturated;
    #     T̂(r) = 1 + 0.8·5/3 = 7/3, S(r) = 2/3 (= (1 − 0.1·2·5/3)·1: the compute bound).
    for ports in PORTS:  # no B_s, single child each: the same in both port models
        r = bound(CHAIN, ports, lp=True)
        assert r.throughput == approx(7 / 3)
        n = by_id(r)
        assert n["m"]["T"] == approx(5 / 3) and n["m"]["S"] == approx(0.0)
        assert n["l"]["T"] == approx(5 / 3) and n["l"]["T_hat"] == approx(2.0)
        assert n["r"]["S"] == approx(2 / 3)
        assert r.lp_throughput == approx(7 / 3, rel=1e-7)


def test_partial_child_computes_first():
    # The chain with B_s(r) = 2 MB/s = 1 task/s: r sends T(m) = 1 < T̂(m) = 5/3. m then needs
    # only 1 task/s: its C/K = 2/2 = 1 covers it (the idle-node case), so it sends l nothing.
    # T̂(r) = 1 + 0.8·1 = 1.8, S(r) = 0.8 = (1 − 0.1·2·1)·1.
    doc = json.loads(CHAIN.read_text())
    doc["nodes"][0]["send_limit_mb_s"] = 2
    r = bound(doc, "multi", lp=True)
    assert r.throughput == approx(1.8)
    n = by_id(r)
    assert n["m"]["T"] == approx(1.0) and n["m"]["S"] == approx(1.0)
    assert n["l"]["T"] == 0.0
    assert n["r"]["S"] == approx(0.8)
    assert r.lp_throughput == approx(1.8, rel=1e-7)


def test_idle_node_case():
    # Leaf: C = 3, IR_r = 0.1, Z = 1, link 100: T̂ = min(100, 3/1.3) = 30/13 (receiving slows
    # it down). A node whose C/K fills its link sends nothing: m has C = 10, IR_r = 0.1,
    # K = 1 + 0.1·1·10 = 2, C/K = 5 >= B_r = 2 -> T̂(m) = 2 = S(m), its child idle.
    # Root C = 1: T̂ = 1 + (1 − 0)·(30/13 + 2) = 1 + 56/13 = 69/13.
    t = tree(1, node("r", None, 1), node("leaf", "r", 3, link=100, ir_r=0.1),
             node("m", "r", 10, link=2, ir_r=0.1), node("k", "m", 50, link=50))
    r = bound(t, "multi", lp=True)
    n = by_id(r)
    assert n["leaf"]["T_hat"] == approx(30 / 13)
    assert n["m"]["T_hat"] == approx(2.0) and n["m"]["S"] == approx(2.0)
    assert n["m"]["priority"] == ["k"] and n["k"]["T"] == 0.0
    assert r.throughput == approx(69 / 13)
    assert r.lp_throughput == approx(69 / 13, rel=1e-7)
    # Single-port: leaf first (100·1 > 2·1), T = 30/13 uses 30/1300 of the port; m gets
    # 2·(1 − 30/1300) = 127/65 < 2, and with C/K = 5 >= 127/65 computes all of it itself.
    # T̂ = 1 + 30/13 + 127/65 = 342/65 (the LP agrees: no compute constraint binds).
    r = bound(t, "single", lp=True)
    n = by_id(r)
    assert r.throughput == approx(342 / 65) and r.lp_throughput == approx(342 / 65, rel=1e-7)
    assert n["m"]["T"] == approx(127 / 65) and n["m"]["S"] == approx(127 / 65) and n["k"]["T"] == 0.0
    # A root alone computes C.
    assert bound(tree(1, node("r", None, 4.5))).throughput == 4.5


def test_exclusion():
    # Root C = 2, Z = 0.5: child x with IR_s = 1 has 1·0.5·2 = 1 >= 1 (excluded at equality);
    # y with IR_s = 0.99 has 0.99 < 1, a_y = 0.01, kept. Each child can take 10.
    # Multi: y only; (3) T(y)·(1 − 0.01) <= 2 -> 2/0.99; T̂ = 2 + 0.01·2/0.99 = 2/0.99.
    t = tree(0.5, node("r", None, 2), node("x", "r", 10, link=5, ir_s=1.0), node("y", "r", 10, link=5, ir_s=0.99))
    for ports in PORTS:
        r = bound(t, ports, lp=True)
        n = by_id(r)
        assert n["r"]["excluded"] == ["x"] and n["r"]["priority"] == ["y"]
        assert n["x"]["T"] == 0.0
        assert r.throughput == approx(2 / 0.99)
        assert r.lp_throughput == approx(2 / 0.99, rel=1e-7)
    # A child whose IR_s·Z·C > 1 only costs: the bound is the root's C, and the LP agrees.
    t = tree(1, node("r", None, 3), node("x", "r", 100, link=50, ir_s=0.5))
    r = bound(t, "multi", lp=True)
    assert r.throughput == approx(3.0) and r.lp_throughput == approx(3.0, rel=1e-7)
    assert by_id(r)["r"]["excluded"] == ["x"]


def test_single_port_counterexample():
    # The notes' counterexample: root C = 1, Z = 1, children (B_r 10, IR_s 0.5), (B_r 4, IR_s 0.01),
    # each able to take its whole link. Priority B_r·a: 10·0.5 = 5 > 4·0.99 = 3.96, so "fast"
    # first; (3) T·(1 − 0.5) <= 1 -> 2, and S(root) = 0 stops there: 1 + 0.5·2 = 2.0.
    # LP: max 1 + 0.5x + 0.99y, 0.5x + 0.01y <= 1 (S >= 0), x/10 + y/4 <= 1: at the vertex
    # y = 0.8/0.248 = 100/31, x = 2 − 2/31 = 60/31: 1 + 30/31 + 99/31 = 160/31 = 5.1613.
    r = bound(GAP, "single", lp=True)
    assert r.throughput == approx(2.0)
    assert by_id(r)["root"]["priority"] == ["fast", "slow"]
    assert r.lp_throughput == pytest.approx(5.16, abs=1e-2)
    assert r.lp_throughput == pytest.approx(160 / 31, rel=1e-7)
    assert r.gap == pytest.approx(160 / 31 - 2.0, rel=1e-7)
    # Multi-port (no B_s): by IR_s, slow (4, saturated; (3) 0.01·4 <= 1) then fast:
    # (3) 0.5·x <= 1 + 0.99·4 − 4 = 0.96 -> 1.92; 1 + 3.96 + 0.96 = 5.92, the LP optimum.
    m = bound(GAP, "multi", lp=True)
    assert m.throughput == approx(5.92) and m.lp_throughput == approx(5.92, rel=1e-7)


def test_single_port_send_limit_caps_links():
    # Single-port: each link at min(link, B_s of the parent). Root C = 1, Z = 1, B_s = 2 MB/s;
    # child link 10 -> 2 tasks/s; IR_s = 0.1 -> a = 0.9. Port x/2 <= 1, (3) 0.1x <= 1:
    # x = 2, T̂ = 1 + 1.8 = 2.8.
    t = tree(1, node("r", None, 1, bs=2), node("a", "r", 100, link=10, ir_s=0.1))
    r = bound(t, "single", lp=True)
    assert r.throughput == approx(2.8) and r.lp_throughput == approx(2.8, rel=1e-7)
    assert by_id(r)["a"]["T_hat"] == approx(2.0)
    # Two children, no B_s: a (link 6, IR_s 0.1: 6·0.9 = 5.4) before b (link 2, IR_s 0: 2).
    # a fills the port (6/6 = 1): T̂ = 1 + 5.4 = 6.4, S = 0.4; here the ordering is optimal.
    t = tree(1, node("r", None, 1), node("a", "r", 100, link=6, ir_s=0.1), node("b", "r", 100, link=2))
    r = bound(t, "single", lp=True)
    assert by_id(r)["r"]["priority"] == ["a", "b"]
    assert r.throughput == approx(6.4) and by_id(r)["r"]["S"] == approx(0.4)
    assert r.lp_throughput == approx(6.4, rel=1e-7)


def test_deep_chain_is_iterative():
    # 100,000 nodes in a line, no interference, links wide open, C = 1 each: every node
    # computes 1 task/s, so T̂(root) = 100,000. No recursion anywhere.
    n = 100_000
    nodes = [node("n0", None, 1.0)] + [node(f"n{k}", f"n{k - 1}", 1.0, link=1e9) for k in range(1, n)]
    r = bound(tree(1, *nodes), "multi")
    assert r.throughput == approx(float(n), rel=1e-9)
    assert r.T[-1] == 1.0 and r.S[0] == approx(1.0)


# -- random trees against the LP -------------------------------------------------------


def random_tree(seed: int, n: int) -> dict:
    g = random.Random(seed)
    nodes = []
    for k in range(n):
        c = 0.0 if g.random() < 0.05 else g.uniform(0.1, 10)
        d = {"id": f"n{k}", "parent": None if k == 0 else f"n{g.randrange(k)}", "compute_rate": c}
        if k:
            d.update(link_mb_s=0.0 if g.random() < 0.05 else g.uniform(0.1, 20), ir_r=g.uniform(0, 0.1),
                     ir_s=g.uniform(0, 0.1) * g.choice([0.1, 1, 3]))
        if g.random() < 0.5:
            d["send_limit_mb_s"] = g.uniform(0.5, 30)
        nodes.append(d)
    return {"task_mb": g.choice([0.5, 1, 2, 5]), "nodes": nodes}


def check_schedule(t: dict, report, ports: str, tol: float = 1e-9) -> None:
    """The report's T and S form a feasible schedule of the §3.2 model."""
    z = t["task_mb"]
    nodes = t["nodes"]
    idx = {d["id"]: k for k, d in enumerate(nodes)}
    kids: dict[int, list[int]] = {k: [] for k in range(len(nodes))}
    for k, d in enumerate(nodes):
        if d["parent"] is not None:
            kids[idx[d["parent"]]].append(k)
    T, S = report.T, report.S
    scale = max(1.0, report.throughput)
    for k, d in enumerate(nodes):
        c = d["compute_rate"]
        bs = d.get("send_limit_mb_s", math.inf)
        assert S[k] >= -tol * scale
        assert T[k] == pytest.approx(S[k] + sum(T[i] for i in kids[k]), abs=tol * scale)
        rate = 1 - sum(nodes[i]["ir_s"] * z * T[i] for i in kids[k])
        if d["parent"] is not None:
            rate -= d["ir_r"] * z * T[k]
            link = d["link_mb_s"]
            if ports == "single":
                link = min(link, nodes[idx[d["parent"]]].get("send_limit_mb_s", math.inf))
            assert T[k] <= link / z + tol * scale
        assert S[k] <= rate * c + tol * scale
        if ports == "multi":
            assert sum(T[i] for i in kids[k]) <= bs / z + tol * scale
        else:
            used = 0.0
            for i in kids[k]:
                cap = min(nodes[i]["link_mb_s"], bs) / z
                used += T[i] / cap if cap > 0 else 0.0
            assert used <= 1 + tol
    assert T[idx[nodes[0]["id"]]] == pytest.approx(report.throughput, rel=1e-12)


@pytest.mark.parametrize("seed", range(60))
def test_multi_port_equals_lp(seed):
    t = random_tree(seed, random.Random(1000 + seed).randint(1, 30))
    r = bound(t, "multi", lp=True)
    assert r.throughput == pytest.approx(r.lp_throughput, rel=1e-7, abs=1e-9)
    check_schedule(t, r, "multi")
    lp = lp_bound(t, "multi")
    assert lp.throughput == r.lp_throughput


@pytest.mark.parametrize("seed", range(60))
def test_single_port_never_exceeds_lp(seed):
    t = random_tree(seed, random.Random(2000 + seed).randint(1, 30))
    r = bound(t, "single", lp=True)
    assert r.throughput <= r.lp_throughput * (1 + 1e-7) + 1e-9
    assert r.gap >= -1e-7 * max(1.0, r.lp_throughput)
    check_schedule(t, r, "single")


# -- reading trees ---------------------------------------------------------------------


def test_load_tree_validates():
    with pytest.raises(_core.PlatformError) as e:
        load_tree(tree(0, node("r", None, 1)))
    assert e.value.field == "task_mb" and e.value.source == "<dict>"
    assert load_tree(tree(1, node("r", None, 1))).root == 0


def run_cmd(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from commaware.cli.throughput import throughput_cmd; throughput_cmd()",
                           *map(str, args)], capture_output=True, text=True)


def test_cli_json():
    p = run_cmd(GAP, "--ports", "single", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert set(doc) >= {"ports", "throughput", "lp_throughput", "gap", "nodes"}
    assert doc["ports"] == "single" and doc["throughput"] == approx(2.0)
    assert doc["lp_throughput"] == pytest.approx(160 / 31, rel=1e-7)
    assert [set(e) >= {"id", "T", "S", "priority", "excluded"} for e in doc["nodes"]] == [True] * 3
    p = run_cmd(SMALL, "--no-lp", "--json")
    doc = json.loads(p.stdout)
    assert doc["lp_throughput"] is None and doc["gap"] is None and doc["throughput"] == approx(175 / 26)
    p = run_cmd(SMALL)
    assert p.returncode == 0 and "6.73077" in p.stdout


BAD = [
    ("cycle", tree(1, node("r", None, 1), node("a", "b", 1, link=1), node("b", "a", 1, link=1)), "nodes[", "cycle"),
    ("roots", tree(1, node("r", None, 1), node("s", None, 1)), "nodes[1].parent", "several roots"),
    ("noroot", tree(1, node("a", "b", 1, link=1), node("b", "a", 1, link=1)), "nodes", "no root"),
    ("unknown", tree(1, node("r", None, 1), node("a", "zz", 1, link=1)), "nodes[1].parent", "unknown parent"),
    ("negative", tree(1, node("r", None, 1), node("a", "r", 1, link=-2)), "nodes[1].link_mb_s", ">= 0"),
    ("negative_ir", tree(1, node("r", None, 1), node("a", "r", 1, link=2, ir_s=-0.1)), "nodes[1].ir_s", ">= 0"),
    ("rate", tree(1, node("r", None, -1)), "nodes[0].compute_rate", ">= 0"),
    ("z", tree(-1, node("r", None, 1)), "task_mb", "> 0"),
    ("dup", tree(1, node("r", None, 1), node("a", "r", 1, link=1), node("a", "r", 1, link=1)), "nodes[2].id", "duplicate"),
    ("missing", tree(1, node("r", None, 1), {"id": "a", "parent": "r", "compute_rate": 1, "link_mb_s": 1, "ir_r": 0}),
     "nodes[1].ir_s", "missing"),
    ("nan", '{"task_mb": 1, "nodes": [{"id": "r", "parent": null, "compute_rate": NaN}]}', "nodes[0].compute_rate",
     "non-finite"),
    ("json", '{"task_mb": 1, "nodes": [', "", "malformed JSON"),
]


@pytest.mark.parametrize("name, doc, where, reason", BAD, ids=[b[0] for b in BAD])
def test_cli_bad_input(tmp_path, name, doc, where, reason):
    path = tmp_path / f"{name}.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    p = run_cmd(path, "--json")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stdout == ""
    msg = " ".join(p.stderr.split())
    assert str(path.name) in msg and where in msg and reason in msg
    assert len(p.stderr.strip().splitlines()) >= 1


def test_cli_missing_file(tmp_path):
    p = run_cmd(tmp_path / "nope.json")
    assert p.returncode == 2 and p.stdout == "" and "cannot read" in p.stderr


def test_cli_ports_are_the_models():
    from commaware.throughput import PORTS
    from commaware.cli.throughput import throughput_cmd

    ports = next(p for p in throughput_cmd.params if p.name == "ports")
    assert tuple(ports.type.choices) == PORTS
