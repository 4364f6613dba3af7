"""`commaware platform show`: hosts, links, zones, parameters, diameter and bandwidths.

Against SimGrid 3.32 itself where it can say: the repository's peer
``tests/peers/simgrid_platform.cpp`` lists the hosts (``hosts``), every link with its
bandwidth and sharing policy (``links``) and every ordered pair's route (``routes``) of the
same file, so the link counts, the total bandwidth and the diameter (the most links on a
route) are SimGrid's numbers. The bisection bandwidths are worked out by hand; the Rust tests
of ``network/topology/summary.rs`` check the closed forms by brute force.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import EXAMPLES, requires_simgrid_mark, run_cli
from topology.test_hostfile import PLATFORMS, cluster
from topology.test_simgrid_xml import HEAD, peer_available, run_peer, zones

requires_simgrid = requires_simgrid_mark(peer_available(), "SimGrid platform")

EXTRAS = ' limiter_link="60MBps" loopback_bw="1GBps" loopback_lat="1us"'
SHOWN = {
    **PLATFORMS,
    "flat_backbone_limiter": cluster("FLAT", "", 7).replace('topology="FLAT"', f'topology="FLAT" bb_bw="1GBps" bb_lat="1us"{EXTRAS}'),
    "torus_limiter": cluster("TORUS", "3,3", 9).replace('topology="TORUS"', f'topology="TORUS"{EXTRAS}'),
    "fat_tree_3_levels": cluster("FAT_TREE", "3;2,2,2;1,2,2;1,2,1", 8),
    "dragonfly_quirk": cluster("DRAGONFLY", "3,1;2,1;3,1;2", 36),
    "nested_zones": zones("Floyd"),
}


def show(path: Path) -> dict:
    return json.loads(run_cli("platform", "show", path, "--json", check=True).stdout)


@requires_simgrid
@pytest.mark.parametrize("name", sorted(SHOWN))
def test_counts_total_bandwidth_and_diameter_are_simgrids(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.xml"
    path.write_text(SHOWN[name])
    doc = show(path)
    hosts = [line[1] for line in run_peer("hosts", path)]
    # SimGrid lists a SPLITDUPLEX link's container besides its _UP and _DOWN halves, and its
    # network model's own `__loopback__` (for hosts without a loopback): neither carries traffic.
    links = [line for line in run_peer("links", path) if line[4] != "SPLITDUPLEX" and line[1] != "__loopback__"]
    routes = run_peer("routes", path)
    assert doc["hosts"]["count"] == len(hosts)
    assert doc["hosts"]["first"] == hosts[:3] and doc["hosts"]["last"] == hosts[max(3, len(hosts) - 3):]
    policies = Counter(line[4] for line in links)
    assert doc["links"] == {"count": len(links), "SHARED": policies["SHARED"], "FATPIPE": policies["FATPIPE"]}
    assert doc["total_bandwidth_bytes_per_s"] == pytest.approx(sum(float(line[2]) for line in links), rel=1e-12)
    assert doc["diameter_hops"] == max(len(line) - 4 for line in routes)
    # A root zone holding A, B and C; every other platform here is one zone.
    assert doc["zones"] == (4 if name == "nested_zones" else 1)


@requires_simgrid
def test_simgrid_string_loads_the_same_cluster(tmp_path: Path) -> None:
    """The `simgrid` strings shown for a JSON platform, put in a SimGrid file, give the same links."""
    spec = {"cluster": {"count": 16, "speed": 1e9, "prefix": "h"},
            "network": {"bandwidth": 1.25e8, "latency": 5e-5,
                        "topology": {"kind": "fat_tree", "id": "c", "down": [4, 4], "up": [1, 2], "parallel": [1, 2]}}}
    path = tmp_path / "ft.json"
    path.write_text(json.dumps(spec))
    doc = show(path)
    assert doc["kind"] == "fat_tree"
    assert doc["parameters"]["down"] == [4, 4] and doc["parameters"]["parallel"] == [1, 2]
    sg = doc["simgrid"]
    xml = tmp_path / "ft.xml"
    xml.write_text(HEAD + f'  <cluster id="c" prefix="h" suffix="" radical="0-15" speed="1Gf" bw="125MBps" lat="50us" '
                          f'topology="{sg["topology"]}" topo_parameters="{sg["topo_parameters"]}"/>\n</platform>\n')
    links = [line for line in run_peer("links", xml) if line[4] != "SPLITDUPLEX" and line[1] != "__loopback__"]
    assert doc["links"]["count"] == len(links)


def test_bisection_by_hand(tmp_path: Path) -> None:
    # examples/cluster16.json: a star of 16 hosts at 125 MB/s: 8 hosts' links are the cut.
    doc = show(EXAMPLES / "cluster16.json")
    assert (doc["kind"], doc["hosts"]["count"], doc["links"]["count"], doc["diameter_hops"]) == ("star", 16, 32, 2)
    assert doc["bisection_bandwidth_bytes_per_s"] == 8 * 125e6
    assert doc["hosts"]["first"] == ["n0", "n1", "n2"] and doc["hosts"]["last"] == ["n13", "n14", "n15"]
    # A 4x2 torus: cut the 2 rings of 4 in halves, 2 cables each: 4 cables of 125 MB/s.
    path = tmp_path / "torus.xml"
    path.write_text(cluster("TORUS", "4,2", 8))
    doc = show(path)
    assert doc["bisection_bandwidth_bytes_per_s"] == 4 * 125e6
    assert doc["simgrid"] == {"topology": "TORUS", "topo_parameters": "4,2"}
    assert doc["parameters"]["dims"] == [4, 2]
    # Fat tree 2;4,4;1,2;1,2 (16 hosts, 125 MB/s): 8 hosts' single up links, or 2 of the 4
    # level-1 switches' 2 parents x 2 cables: 8 cables either way.
    path = tmp_path / "ft.xml"
    path.write_text(cluster("FAT_TREE", "2;4,4;1,2;1,2", 16))
    assert show(path)["bisection_bandwidth_bytes_per_s"] == 8 * 125e6
    # An odd count of top subtrees (3): not derived.
    path.write_text(cluster("FAT_TREE", "2;2,3;1,1;1,1", 6))
    assert show(path)["bisection_how"] == "not derived for a fat tree with an odd count of subtrees at some level"
    # Dragonfly 2,1;2,1;2,1;2 (16 hosts, 125 MB/s): one blue link joins the 2 groups, the
    # smallest cut (8 hosts' links would be 1 GB/s).
    path.write_text(cluster("DRAGONFLY", "2,1;2,1;2,1;2", 16))
    assert show(path)["bisection_bandwidth_bytes_per_s"] == 125e6
    # 3 groups of 3 routers of one host: no even split of the groups; not claimed, with bounds.
    path.write_text(cluster("DRAGONFLY", "3,1;1,1;3,1;1", 9))
    doc = show(path)
    assert doc["bisection_bandwidth_bytes_per_s"] is None
    assert doc["bisection_how"].startswith("not derived for this dragonfly: between "), doc["bisection_how"]
    # FLAT with a 1 GB/s backbone and 60 MB/s limiters, 7 hosts: 3 limiters (180 MB/s).
    path = tmp_path / "flat.xml"
    path.write_text(SHOWN["flat_backbone_limiter"])
    assert show(path)["bisection_bandwidth_bytes_per_s"] == pytest.approx(3 * 60e6, rel=1e-12)
    # A graph zone has no bisection here; its diameter comes from every route.
    path = tmp_path / "graph.xml"
    path.write_text(PLATFORMS["graph_zone"])
    doc = show(path)
    assert (doc["bisection_bandwidth_bytes_per_s"], doc["bisection_how"]) == (None, "not defined for graphs")
    assert (doc["diameter_hops"], doc["diameter_how"], doc["simgrid"]) == (2, "all routes", None)


def test_table(tmp_path: Path) -> None:
    path = tmp_path / "torus.xml"
    path.write_text(cluster("TORUS", "3,2", 6))
    proc = run_cli("platform", "show", path, check=True)
    for text in ("hosts", "6: h10, h11, h12 ... h13, h14, h15", 'topology="TORUS" topo_parameters="3,2"',
                 "diameter", "2 hops (closed form)", "bisection bandwidth", "largest dimension is odd"):
        assert text in proc.stdout, proc.stdout


def test_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text(HEAD + '<zone id="z" routing="Full"><host id="a" speed="1Gf"/><bogus/></zone></platform>\n')
    for path, message in ((tmp_path / "missing.json", "missing.json"), (bad, "bad.xml")):
        proc = run_cli("platform", "show", path, "--json")
        assert proc.returncode == 2 and proc.stdout == ""
        assert len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr, proc.stderr


def test_schema_holds_every_topology_field(tmp_path: Path) -> None:
    """`commaware schema platform` accepts each kind of topology with every field the loader
    takes, and refuses an unknown field as the loader does."""
    import commaware
    import jsonschema

    schema = json.loads(run_cli("schema", "platform", check=True).stdout)
    common = {"id": "c", "bandwidth": 1e9, "latency": 1e-6, "sharing": "SHARED", "limiter_bandwidth": 5e8,
              "loopback": {"bandwidth": 1e10, "latency": 1e-7}}
    kinds = [
        (4, {"kind": "flat", "backbone": {"bandwidth": 2e9, "latency": 1e-6, "sharing": "FATPIPE"}}),
        (6, {"kind": "torus", "dims": [3, 2]}),
        (4, {"kind": "fat_tree", "levels": 2, "down": [2, 2], "up": [1, 2], "parallel": [1, 1]}),
        (8, {"kind": "dragonfly", "groups": [1, 1], "chassis": [2, 1], "routers": [2, 1], "nodes": 2, "routing": "minimal"}),
    ]
    for count, topology in kinds:
        spec = {"cluster": {"count": count, "speed": 1e9, "prefix": "h"},
                "network": {"bandwidth": 1.25e8, "latency": 5e-5, "topology": {**common, **topology}}}
        commaware.load_platform(spec)  # the loader takes it
        jsonschema.validate(spec, schema)  # and so does the schema
        spec["network"]["topology"]["bogus"] = 1
        with pytest.raises(commaware.PlatformError):
            commaware.load_platform(spec)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(spec, schema)
