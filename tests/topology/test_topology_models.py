"""The penalty models of paper 004 on topologies (issue 28, item 6): the penalties apply at
each host's private link (its NIC) and the fabric is shared as `maxmin` shares it there
(SimGrid's CM02), each flow capped at its penalised rate.

Expected numbers come from the star (an existing, separately tested path) or are worked out
by hand from the §V-A formulas in the comments, never taken from the code under test.
"""

from __future__ import annotations

import random

import pytest

import commaware as cw

BW = 1e8  # B/s on every link
MODELS = ["gige", "myrinet", "infiniband", "ib-simgrid"]
# §V-A defaults (docs/sharing.md): β = 0.75.
BETA = 0.75


def sends(pairs: list[tuple[int, int, float]], ranks: int) -> dict:
    """Each (src, dst, bytes) as a send, receivers receiving in the same order; messages under
    the eager threshold (65,536 B) are detached, so a rank's sends all start at once."""
    ops: list[list[dict]] = [[] for _ in range(ranks)]
    for s, d, b in pairs:
        ops[s].append({"op": "send", "dst": d, "bytes": b})
    for s, d, _ in pairs:
        ops[d].append({"op": "recv", "src": s})
    return {"ranks": ops}


def star(count: int, backbone: float | None = None) -> dict:
    net: dict = {"bandwidth": BW, "latency": 2e-6}
    if backbone is not None:
        net["backbone"] = backbone
    return {"cluster": {"count": count, "speed": 1e9}, "network": net}


def flat(count: int, backbone: float | None = None) -> dict:
    """The FLAT cluster equal to `star(count, backbone)`: a message crosses the sender's UP
    link, the backbone (latency 0) and the receiver's DOWN link, 1 µs each: 2 µs, as on the
    star."""
    topo: dict = {"kind": "flat", "latency": 1e-6}
    if backbone is not None:
        topo["backbone"] = {"bandwidth": backbone, "latency": 0.0}
    return {"cluster": {"count": count, "speed": 1e9},
            "network": {"bandwidth": BW, "latency": 2e-6, "topology": topo}}


def ends(result) -> list[float]:
    m = result.messages
    return sorted(zip(m["src_rank"].tolist(), m["dst_rank"].tolist(), m["end"].tolist()))


def random_pairs(seed: int, hosts: int, n: int) -> list[tuple[int, int, float]]:
    rng = random.Random(seed)
    # Sources and destinations drawn from few hosts so that conflicts happen; a few
    # messages from a host to itself (memory link, in no conflict graph).
    return [(rng.randrange(hosts), rng.randrange(hosts), float(rng.randrange(1000, 60000))) for _ in range(n)]


@pytest.mark.parametrize("backbone", [None, 1.5 * BW])
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("seed", [1, 2])
def test_flat_cluster_equals_the_star(model, backbone, seed):
    pairs = random_pairs(seed, 6, 40)
    trace = sends(pairs, 6)
    on_star = cw.simulate(star(6, backbone), trace, model=model)
    on_flat = cw.simulate(flat(6, backbone), trace, model=model)
    a, b = ends(on_star), ends(on_flat)
    assert [x[:2] for x in a] == [x[:2] for x in b]
    assert [x[2] for x in b] == pytest.approx([x[2] for x in a], rel=1e-9, abs=1e-15)
    assert on_flat.makespan == pytest.approx(on_star.makespan, rel=1e-9)


@pytest.mark.parametrize("k, penalty", [(1, 1.0), (2, 2 * BETA), (3, 3 * BETA)])
def test_fig2_star_on_a_flat_cluster(k, penalty):
    # Host 0 sends k equal messages to k hosts (Fig. 2): under gige each has penalty k·β
    # (1 for k = 1) and ends at latency + bytes × penalty / BW.
    size = 50000.0
    r = cw.simulate(flat(4), sends([(0, j, size) for j in range(1, k + 1)], 4), model="gige")
    for end in r.messages["end"].tolist():
        assert end == pytest.approx(2e-6 + size * penalty / BW, rel=1e-12)


def test_effective_penalty_on_a_topology_uses_the_route():
    # The Fig. 2 star of 3 under gige (penalty 2.25) on a FLAT cluster whose links have 5 µs
    # each: the route's latency is 10 µs (not network.latency, 2 µs) and the private links'
    # bandwidth is 0.5 BW (not network.bandwidth). end = 10 µs + size × 2.25 / (0.5 BW), and
    # the reported penalty, (end − route latency) × single bandwidth / size, is 2.25.
    size = 50000.0
    spec = {"cluster": {"count": 4, "speed": 1e9},
            "network": {"bandwidth": BW, "latency": 2e-6,
                        "topology": {"kind": "flat", "latency": 5e-6, "bandwidth": 0.5 * BW}}}
    r = cw.simulate(spec, sends([(0, j, size) for j in range(1, 4)], 4), model="gige")
    assert r.messages["end"].tolist() == pytest.approx([1e-5 + size * 2.25 / (0.5 * BW)] * 3, rel=1e-12)
    assert r.messages["penalty"].tolist() == pytest.approx([2.25] * 3, rel=1e-9)


def fat_tree(up: list[int] | None = None) -> dict:
    # 2;4,2;1,1: hosts 0-3 under edge switch A, 4-7 under edge switch B, one top switch;
    # every cable BW. No latency: CM02 then weighs every flow alike and TCP-gamma does not
    # bound (it needs a latency), so the numbers below stay simple.
    return {"cluster": {"count": 8, "speed": 1e9, "prefix": "h"},
            "network": {"bandwidth": BW, "latency": 0.0,
                        "topology": {"kind": "fat_tree", "down": [4, 2], "up": up or [1, 1]}}}


def test_fat_tree_fabric_shares_under_the_caps():
    # gige. a 0→1 and b 0→2 stay under A; c 0→4 and d 3→5 cross A's up cable (BW), the
    # fabric. Host 0 sends 3 messages to hosts receiving 1 each: the Fig. 2 star, penalty
    # 3β = 2.25 for a, b, c: caps BW/2.25. d is alone at both ends: penalty 1, cap BW.
    # a, b: only private links, so they run at their caps: end = 2.25 × size / BW.
    # The up cable, max-min under the caps: fair share BW/2 > c's cap, so c runs at its
    # cap and d takes the rest, BW − BW/2.25 = BW × 1.25/2.25: end = 1.8 × size / BW.
    # (On the star, without the fabric, d would run at BW: end = size / BW.)
    size = 60000.0
    pairs = [(0, 1, size), (0, 2, size), (0, 4, size), (3, 5, size)]
    r = cw.simulate(fat_tree(), sends(pairs, 8), model="gige")
    got = {(s, d): e for s, d, e in ends(r)}
    for pair in [(0, 1), (0, 2), (0, 4)]:
        assert got[pair] == pytest.approx(2.25 * size / BW, rel=1e-12), pair
    assert got[(3, 5)] == pytest.approx(1.8 * size / BW, rel=1e-12)
    assert r.messages["penalty"].tolist()[:1] and all(
        p == pytest.approx(2.25, rel=1e-9)
        for (s, d), p in zip(zip(r.messages["src_rank"].tolist(), r.messages["dst_rank"].tolist()), r.messages["penalty"].tolist())
        if s == 0)
    # The same messages on the star: d is not slowed by anything.
    on_star = cw.simulate({**star(8), "network": {"bandwidth": BW, "latency": 0.0}}, sends(pairs, 8), model="gige")
    assert {(s, d): e for s, d, e in ends(on_star)}[(3, 5)] == pytest.approx(size / BW, rel=1e-12)


def test_fat_tree_fabric_binds_below_the_caps():
    # gige. c 0→4, d 1→5, e 2→6, f 3→7: every source and destination once, penalty 1,
    # caps BW; all four cross A's up cable (BW): BW/4 each, end = 4 × size / BW.
    size = 60000.0
    pairs = [(0, 4, size), (1, 5, size), (2, 6, size), (3, 7, size)]
    r = cw.simulate(fat_tree(), sends(pairs, 8), model="gige")
    for end in r.messages["end"].tolist():
        assert end == pytest.approx(4 * size / BW, rel=1e-12)


def test_ib_simgrid_shares_the_private_links_too():
    # 0→1 and 0→2 stay under edge switch A: they cross only private cables.
    # gige: host 0 sends 2, each destination receives 1: penalty 2β = 1.5 (Fig. 2), and
    # the private links are not shared max-min: rate BW/1.5, end = 1.5 × size / BW.
    # ib-simgrid: penalty 2·β_s = 2 × 0.925 = 1.85 (its defaults), cap BW/1.85 > BW/2,
    # and host 0's cable is shared max-min (as SimGrid's IB model does): BW/2 each,
    # end = 2 × size / BW.
    size = 60000.0
    pairs = [(0, 1, size), (0, 2, size)]
    gige = cw.simulate(fat_tree(), sends(pairs, 8), model="gige")
    assert gige.messages["end"].tolist() == pytest.approx([1.5 * size / BW] * 2, rel=1e-12)
    ib = cw.simulate(fat_tree(), sends(pairs, 8), model="ib-simgrid")
    assert ib.messages["end"].tolist() == pytest.approx([2 * size / BW] * 2, rel=1e-12)
    # A third message: penalty 3·β_s = 2.775, cap BW/2.775 = 0.36 BW, above the fair share
    # BW/3 of host 0's cable, which binds: end = 3 × size / BW.
    ib3 = cw.simulate(fat_tree(), sends(pairs + [(0, 3, size)], 8), model="ib-simgrid")
    assert ib3.messages["end"].tolist() == pytest.approx([3 * size / BW] * 3, rel=1e-12)


def torus() -> dict:
    return {"cluster": {"count": 6, "speed": 1e9, "prefix": "t"},
            "network": {"bandwidth": BW, "latency": 1e-6, "topology": {"kind": "torus", "dims": [3, 2]}}}


@pytest.mark.parametrize("model", MODELS)
def test_torus_is_refused(model, cli, write_json, tmp_path):
    p = write_json("torus.json", torus())
    t = write_json("t.json", sends([(0, 1, 1000.0)], 6))
    proc = cli("simulate", p, t, "--model", model, "--json")
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "torus" in proc.stderr and model in proc.stderr and "private link" in proc.stderr
    # Naming the model in the platform file is refused when it is loaded.
    spec = torus()
    spec["network"]["model"] = model
    proc = cli("simulate", write_json("bad.json", spec), t)
    assert proc.returncode == 2 and proc.stdout == "" and "torus" in proc.stderr


def test_multi_homed_hosts_are_refused(cli, write_json):
    # 2;4,2;2,1: each host has two parents, hence two cables into the fabric: no NIC of its
    # own. The error names the first host.
    spec = fat_tree(up=[2, 1])
    p = write_json("ft.json", spec)
    t = write_json("t.json", sends([(0, 4, 1000.0)], 8))
    proc = cli("simulate", p, t, "--model", "gige")
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert "host `h0`" in proc.stderr and "fat_tree" in proc.stderr and "Traceback" not in proc.stderr
    # maxmin still runs there.
    assert cli("simulate", p, t, "--model", "maxmin").returncode == 0


HEAD = '<?xml version="1.0"?>\n<platform version="4.1">\n'


def star_graph(extra: str = "", extra_routes: str = "", routing: str = "Floyd") -> str:
    """A graph zone: hosts g0-g3 each with a SPLITDUPLEX link (BW, no latency) to router r;
    `extra` hosts, routers and links, and `extra_routes` after the routes (SimGrid's DTD order)."""
    hosts = "".join(f'<host id="g{i}" speed="1Gf"/><link id="l{i}" bandwidth="{BW!r}Bps" latency="0s" '
                    f'sharing_policy="SPLITDUPLEX"/>' for i in range(4))
    routes = "".join(f'<route src="g{i}" dst="r"><link_ctn id="l{i}" direction="UP"/></route>' for i in range(4))
    return HEAD + f'<zone id="z" routing="{routing}">{hosts}<router id="r"/>{extra}{routes}{extra_routes}</zone>\n</platform>\n'


@pytest.mark.parametrize("routing", ["Floyd", "Dijkstra"])
def test_graph_hosts_with_one_link_take_the_penalty_models(tmp_path, routing):
    # g0 sends to g1 and g2 (Fig. 2's star of 2 under gige: penalty 2β = 1.5), over their
    # private links only: rate BW/1.5, end = 1.5 × size / BW; g3 → g0 alone: penalty 1
    # (in-out with g0's sends is no conflict), end = size / BW.
    path = tmp_path / "graph.xml"
    path.write_text(star_graph(routing=routing))
    size = 60000.0
    r = cw.simulate(cw.load_platform(path), sends([(0, 1, size), (0, 2, size), (3, 0, size)], 4), model="gige")
    got = {(s, d): e for s, d, e in ends(r)}
    assert got[(0, 1)] == pytest.approx(1.5 * size / BW, rel=1e-12)
    assert got[(0, 2)] == pytest.approx(1.5 * size / BW, rel=1e-12)
    assert got[(3, 0)] == pytest.approx(size / BW, rel=1e-12)


def test_graph_host_with_two_links_is_refused(cli, write_json, tmp_path):
    # Host m reaches router r by link a and router r2 by link b: two links into the fabric.
    extra = ('<host id="m" speed="1Gf"/><router id="r2"/><link id="a" bandwidth="1e8Bps" latency="0s"/>'
             '<link id="b" bandwidth="1e8Bps" latency="0s"/><link id="rr" bandwidth="1e8Bps" latency="0s"/>')
    routes = ('<route src="m" dst="r"><link_ctn id="a"/></route><route src="m" dst="r2"><link_ctn id="b"/></route>'
              '<route src="r" dst="r2"><link_ctn id="rr"/></route>')
    path = tmp_path / "graph.xml"
    path.write_text(star_graph(extra, routes))
    t = write_json("t.json", sends([(0, 1, 1000.0)], 2))
    proc = cli("simulate", path, t, "--model", "myrinet")
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert "host `m`" in proc.stderr and "floyd" in proc.stderr and "Traceback" not in proc.stderr
    assert cli("simulate", path, t).returncode == 0


def test_fabric_parameters_beside_the_models(cli, write_json):
    # CM02's parameters go to the fabric, from --param or network.parameters. With a 1 ms
    # link latency (routes of 2 to 4 ms) and tcp_gamma = 4000 B, TCP-gamma bounds a flow at
    # 4000 / (2 × 2 ms) = 1 MB/s on a 2-link route, far below its cap: 0→1 (under one edge
    # switch, alone, penalty 1) ends at 2 ms + 60000 / 1e6 s = 62 ms.
    spec = fat_tree()
    spec["network"]["topology"]["latency"] = 1e-3
    trace = sends([(0, 1, 60000.0)], 8)
    r = cw.simulate(spec, trace, model="gige", params={"tcp_gamma": 4000.0, "beta": 0.8})
    assert r.messages["end"].tolist() == pytest.approx([2e-3 + 60000.0 / 1e6], rel=1e-12)
    spec["network"]["model"] = "gige"
    spec["network"]["parameters"] = {"tcp_gamma": 4000.0}
    assert cw.simulate(spec, trace).messages["end"].tolist() == pytest.approx([2e-3 + 60000.0 / 1e6], rel=1e-12)
    # Without it, the cap (BW) binds: 2 ms + 60000 / BW.
    assert cw.simulate(fat_tree() | {"network": {**spec["network"], "parameters": {}}}, trace).messages[
        "end"].tolist() == pytest.approx([2e-3 + 60000.0 / BW], rel=1e-12)
    # On the star the penalty models take only their own parameters.
    star_spec = {**star(8), "network": {**star(8)["network"], "model": "gige", "parameters": {"tcp_gamma": 4000.0}}}
    proc = cli("simulate", write_json("s.json", star_spec), write_json("t.json", trace))
    assert proc.returncode == 2 and "network.parameters.tcp_gamma" in proc.stderr, proc.stderr


@pytest.mark.parametrize("model, penalty", [("gige", 2 * BETA), ("myrinet", 2.0)])
def test_dragonfly_hosts_take_the_models_at_their_router_link(model, penalty):
    # 2,1;1,1;2,1;2: hosts 0 and 1 on router 0, hosts 2 and 3 on router 1 (same chassis),
    # 4-7 in the other group. Host 0 sends to 1 (same router: private links only) and to 5
    # (across the fabric, alone there): Fig. 2's star of 2, penalty 2β = 1.5 under gige, 2 under
    # Myrinet (2 state sets, each message in one); both at their cap BW / penalty.
    spec = {"cluster": {"count": 8, "speed": 1e9},
            "network": {"bandwidth": BW, "latency": 0.0,
                        "topology": {"kind": "dragonfly", "groups": [2, 1], "chassis": [1, 1], "routers": [2, 1],
                                     "nodes": 2}}}
    size = 60000.0
    r = cw.simulate(spec, sends([(0, 1, size), (0, 5, size)], 8), model=model)
    assert r.messages["end"].tolist() == pytest.approx([penalty * size / BW] * 2, rel=1e-12)
