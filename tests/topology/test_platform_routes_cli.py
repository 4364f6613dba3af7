"""`commaware platform routes` on a JSON platform with a `network.topology`, and its bad input.

The expected route is worked out by hand from SimGrid 3.32's FatTreeZone.cpp (see
docs/topologies.md): in `2;2,2;1,2;1,1` hosts 0, 1 hang from switch 7, hosts 2, 3 from
switch 6, and both reach the top switches 5 and 4; D-mod-k sends host 0's message for
host 3 to top switch 3 mod 2 = 1, id 4.
"""

from __future__ import annotations

import json


def platform(topology: dict, count: int = 4) -> dict:
    return {"cluster": {"count": count, "speed": 1e9, "prefix": "h"},
            "network": {"bandwidth": 1.25e8, "latency": 1e-6, "topology": topology}}


FAT_TREE = {"kind": "fat_tree", "down": [2, 2], "up": [1, 2]}


def test_route_json(cli, write_json):
    path = write_json("ft.json", platform(FAT_TREE))
    proc = cli("platform", "routes", path, "h0", "h3", "--json", check=True)
    doc = json.loads(proc.stdout)
    assert [link["name"] for link in doc["links"]] == [
        "link_from_0_7_0_UP", "link_from_7_4_5_UP", "link_from_6_4_7_DOWN", "link_from_3_6_3_DOWN"]
    assert doc["latency_s"] == 1e-6 + 1e-6 + 1e-6 + 1e-6
    assert {link["sharing"] for link in doc["links"]} == {"SHARED"}


def test_bad_input_is_one_line_exit_2(cli, write_json):
    cases = [
        (platform(FAT_TREE), "h9", "ft.json: dst: unknown host `h9`"),
        (platform({"kind": "torus", "dims": [2, 0]}), "h1", "network.topology.dims[1]: is 0, every value must be > 0"),
        (platform(FAT_TREE, count=5), "h1", "the fat_tree topology has 4 hosts but the platform has 5"),
        (platform({**FAT_TREE, "up": [1]}), "h1", "network.topology.up: has 1 values for 2 levels"),
        (platform({"kind": "dragonfly", "groups": [3, 1], "chassis": [2, 1], "routers": [2, 1], "nodes": 1}, count=12),
         "h1", "SimGrid 3.32 routes between groups only when groups (3) <= routers per chassis (2)"),
        ({"cluster": {"count": 2, "speed": 1}, "network": {"bandwidth": 1}}, "n1", "the platform has no topology"),
    ]
    for spec, dst, message in cases:
        path = write_json("ft.json", spec)
        proc = cli("platform", "routes", path, "h0" if dst != "n1" else "n0", dst)
        assert proc.returncode == 2, proc.stderr
        assert proc.stdout == ""
        assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
