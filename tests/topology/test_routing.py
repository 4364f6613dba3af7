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
