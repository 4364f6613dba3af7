"""Routing beyond minimal (issue 44) from the CLI and the API: each routing on the topologies it
applies to, refused elsewhere with exit 2, seeded, and the worst-case shift on a dragonfly
against its closed form."""

from __future__ import annotations

import json

import pytest

import commaware
from commaware import _core
from conftest import EXAMPLES, run_cli

DRAGONFLY = EXAMPLES / "routing" / "dragonfly50.json"
SHIFT = EXAMPLES / "routing" / "shift.json"


def platform(write_json, topology: dict, count: int, **network) -> str:
    return str(write_json("platform.json", {"cluster": {"count": count, "speed": 1e9},
                                            "network": {"bandwidth": 1.25e9, "latency": 1e-6, "topology": topology,
                                                        **network}}))


def pairs_trace(write_json, pairs: list[tuple[int, int]], ranks: int, nbytes: float = 1e7) -> str:
    """Every (src, dst) pair sends one message at time 0."""
    ops: list[list[dict]] = [[] for _ in range(ranks)]
    for i, (s, d) in enumerate(pairs):
        ops[d].append({"op": "irecv", "src": s, "tag": i})
        ops[s].append({"op": "isend", "dst": d, "bytes": nbytes, "tag": i})
    for r in ops:
        r.append({"op": "waitall"})
    return str(write_json("trace.json", {"ranks": ops}))


def makespan(*args) -> float:
    proc = run_cli("simulate", *args, "-q", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["makespan"]


FAT_TREE = {"kind": "fat_tree", "down": [4, 2], "up": [1, 2]}
TORUS = {"kind": "torus", "dims": [4, 2]}


@pytest.mark.parametrize("topology,count,routings", [
    ("dragonfly", 50, ["minimal", "valiant", "ugal-g", "ugal-l"]),
    (FAT_TREE, 8, ["minimal", "ecmp", "adaptive"]),
    (TORUS, 8, ["minimal", "valiant"]),
])
def test_each_routing_runs_where_it_applies_and_is_refused_elsewhere(write_json, topology, count, routings):
    plat = str(DRAGONFLY) if topology == "dragonfly" else platform(write_json, topology, count)
    trace = pairs_trace(write_json, [(i, (i + count // 2) % count) for i in range(count)], count)
    for routing in routings:
        assert makespan(plat, trace, "--routing", routing) > 0
    for routing in set(_core.routings()) - set(routings):
        proc = run_cli("simulate", plat, trace, "--routing", routing)
        assert proc.returncode == 2, routing
        assert "--routing: routing `" in proc.stderr and "topologies only" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_a_routing_in_the_platform_file_is_checked_against_its_topology(write_json):
    plat = platform(write_json, FAT_TREE, 8, routing="valiant")
    proc = run_cli("simulate", plat, EXAMPLES / "ring.json")
    assert proc.returncode == 2
    assert "network.routing" in proc.stderr and "routing `valiant` applies to dragonfly and torus topologies only" in proc.stderr
    proc = run_cli("platform", "show", platform(write_json, FAT_TREE, 8, routing="spray"))
    assert proc.returncode == 2 and "unknown routing `spray`" in proc.stderr, proc.stderr
    # The star takes only minimal.
    proc = run_cli("simulate", EXAMPLES / "cluster16.json", EXAMPLES / "ring.json", "--routing", "ecmp")
    assert proc.returncode == 2 and "not to the star" in proc.stderr, proc.stderr


def test_platform_show_names_the_routing_and_whose_it_is(write_json):
    doc = commaware.load_platform(platform(write_json, FAT_TREE, 8, routing="ecmp", routing_seed=5)).summary()
    assert doc["routing"]["name"] == "ecmp" and doc["routing"]["seed"] == 5
    assert doc["routing"]["how"].startswith("commaware's (not SimGrid's)")
    assert doc["routing"]["available"] == ["minimal", "ecmp", "adaptive"]
    minimal = commaware.load_platform(DRAGONFLY).summary()["routing"]
    assert minimal["how"] == "SimGrid 3.32's routing"
    assert minimal["available"] == ["minimal", "valiant", "ugal-g", "ugal-l"]


def test_worst_case_shift_on_a_dragonfly():
    # 5 groups of 5 routers, 2 hosts each: every host sends 1e7 bytes to the host 10 on, in the
    # next group. Minimal routing puts a group's 10 flows on the one global link to the next
    # group (1.25e9 B/s): 10 × 1e7 / 1.25e9 = 0.08 s, plus at most 5 link latencies of 1 us.
    minimal = makespan(DRAGONFLY, SHIFT)
    assert 0.08 < minimal <= 0.08 + 5e-6
    assert makespan(DRAGONFLY, SHIFT, "--routing", "minimal") == minimal
    # UGAL-G spreads the later flows over the idle global links: strictly better.
    assert makespan(DRAGONFLY, SHIFT, "--routing", "ugal-g") < 0.9 * minimal


def test_routes_depend_on_the_seed_and_only_on_it(tmp_path):
    def doc(*args):
        out = tmp_path / "run.json"
        proc = run_cli("simulate", DRAGONFLY, SHIFT, "-q", "--json", *args)
        assert proc.returncode == 0, proc.stderr
        out.write_text(proc.stdout)
        return proc.stdout

    a = doc("--routing", "valiant", "--routing-seed", "3")
    assert doc("--routing", "valiant", "--routing-seed", "3") == a
    assert doc("--routing", "valiant", "--routing-seed", "4") != a
    proc = run_cli("simulate", DRAGONFLY, SHIFT, "--routing-seed", "-1")
    assert proc.returncode == 2 and "--routing-seed: must be between 0 and 2^64 - 1" in proc.stderr


def test_the_api_takes_the_routing_and_refuses_a_wrong_one():
    minimal = commaware.simulate(DRAGONFLY, SHIFT, record_messages=False, record_timeline=False)
    ugal = commaware.simulate(DRAGONFLY, SHIFT, routing="ugal-g", routing_seed=1, record_messages=False,
                              record_timeline=False)
    assert ugal.makespan < minimal.makespan
    with pytest.raises(_core.OptionsError, match="routing `ecmp` applies to fat_tree topologies only"):
        commaware.simulate(DRAGONFLY, SHIFT, routing="ecmp")
    with pytest.raises(_core.OptionsError, match="routing_seed"):
        commaware.simulate(DRAGONFLY, SHIFT, routing="valiant", routing_seed=-2)


def traffic_trace(write_json, name: str, destinations: list[list[int]], message_bytes: float) -> str:
    """Every rank posts all its receives, then one isend to each of its `destinations`, then waits."""
    n = len(destinations)
    recvs: list[list[dict]] = [[] for _ in range(n)]
    sends: list[list[dict]] = [[] for _ in range(n)]
    for r, dsts in enumerate(destinations):
        for i, d in enumerate(dsts):
            sends[r].append({"op": "isend", "dst": d, "bytes": message_bytes, "tag": i})
            recvs[d].append({"op": "irecv", "src": r, "tag": i})
    return str(write_json(name, {"ranks": [recvs[r] + sends[r] + [{"op": "waitall"}] for r in range(n)]}))


# dragonfly50: g = 5 groups of k = 10 hosts; every link, global ones included, B = 1.25 GB/s.
G, K, B, HOSTS = 5, 10, 1.25e9, 50
MESSAGES, PER_HOST = 400, 1e7  # each host sends 400 messages, 1e7 bytes in all


def test_steady_state_throughputs_against_their_closed_forms(write_json):
    """Many messages per host, so that Valiant's per-message draws average out (flow level:
    one draw a message), on the worst case (each group sends to the next) and on uniform
    random traffic; each makespan against the flow-level closed form of its busiest links."""
    size = PER_HOST / MESSAGES
    shift = traffic_trace(write_json, "shift.json", [[(r + K) % HOSTS] * MESSAGES for r in range(HOSTS)], size)
    rng = __import__("random").Random(1)
    uniform_dsts = []
    for r in range(HOSTS):
        row = [rng.randrange(HOSTS - 1) for _ in range(MESSAGES)]
        uniform_dsts.append([d + (d >= r) for d in row])
    uniform = traffic_trace(write_json, "uniform.json", uniform_dsts, size)
    t = {(traffic, routing): makespan(DRAGONFLY, trace, "--routing", routing)
         for traffic, trace in (("worst", shift), ("uniform", uniform))
         for routing in ("minimal", "valiant", "ugal-g")}

    # Worst case, minimal: a group's k hosts share one global link: k × PER_HOST / B.
    assert t["worst", "minimal"] == pytest.approx(K * PER_HOST / B, rel=1e-3)
    # Worst case, Valiant: a flow from group a crosses a -> m and m -> a + 1 for m drawn among
    # the g - 2 other groups, so the direct links a -> a + 1 carry nothing and every other
    # directed global link carries 2k / (g - 2) hosts' worth: 2k × PER_HOST / ((g - 2) B) on
    # average; the busiest link of the draws a few % above.
    valiant_worst = 2 * K * PER_HOST / ((G - 2) * B)
    assert valiant_worst <= t["worst", "valiant"] <= 1.06 * valiant_worst
    # Uniform, minimal: each directed global link carries the bytes from its group's k hosts
    # to the k of g·k − 1 destinations in the other group; Valiant crosses two global links
    # for each message between groups, so twice that.
    minimal_uniform = K * PER_HOST * K / (HOSTS - 1) / B
    assert 0.97 * minimal_uniform <= t["uniform", "minimal"] <= 1.1 * minimal_uniform
    assert 0.97 * 2 * minimal_uniform <= t["uniform", "valiant"] <= 1.1 * 2 * minimal_uniform
    # ISCA 2008's ordering: UGAL-G close to minimal on uniform traffic and close to Valiant on
    # the worst case, where it beats minimal by far.
    assert t["uniform", "ugal-g"] <= 1.02 * t["uniform", "minimal"]
    assert t["worst", "ugal-g"] <= 1.1 * t["worst", "valiant"] < 0.8 * t["worst", "minimal"]


def test_cosched_on_a_platform_takes_the_routing(write_json, tmp_path):
    workload = tmp_path / "w.json"
    workload.write_text(run_cli("workload", "nas", "--jobs", "4", "--interarrival", "5", "--seed", "1", check=True).stdout)
    plat = platform(write_json, {"kind": "fat_tree", "down": [8, 4], "up": [1, 2]}, 32)
    for routing in ("ecmp", "adaptive"):
        proc = run_cli("cosched", "run", workload, "--platform", plat, "--routing", routing, "--json")
        assert proc.returncode == 0, proc.stderr
        assert len(json.loads(proc.stdout)["jobs"]) == 4
    proc = run_cli("cosched", "run", workload, "--platform", plat, "--routing", "ugal-g", "--json")
    assert proc.returncode == 2 and "--routing: routing `ugal-g` applies to dragonfly topologies only" in proc.stderr
    assert proc.stdout == ""
    proc = run_cli("cosched", "run", workload, "--routing", "ecmp")
    assert proc.returncode == 2 and "--routing: only with --platform" in proc.stderr, proc.stderr


def test_a_sweep_varies_the_routing(tmp_path):
    spec = (f'command = "simulate"\n[fixed]\nplatform = "{DRAGONFLY}"\ntrace = "{SHIFT}"\n'
            '[grid]\nrouting = ["minimal", "ugal-g"]\n')
    path = tmp_path / "routing.toml"
    path.write_text(spec)
    out = tmp_path / "results"
    proc = run_cli("sweep", path, "--out", out, "--serial", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(run_cli("results", "query", out, "SELECT routing, makespan FROM runs ORDER BY routing",
                              "--json", check=True).stdout)
    times = {r["routing"]: r["makespan"] for r in rows}
    assert times["ugal-g"] < times["minimal"] == pytest.approx(0.080004, rel=1e-6)
    bad = tmp_path / "bad.toml"
    bad.write_text(spec.replace('["minimal", "ugal-g"]', '["spray"]'))
    proc = run_cli("sweep", bad, "--out", tmp_path / "bad", "--serial")
    assert proc.returncode == 2 and "routing" in proc.stderr and "spray" in proc.stderr, proc.stderr
