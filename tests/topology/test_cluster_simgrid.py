"""SimGrid 3.32's cluster topologies, route by route, against SimGrid itself.

For each parameter set the test writes a SimGrid platform with one ``<cluster>``, runs the
repository's peer ``tests/peers/simgrid_platform.cpp`` (compiled on first use by
:mod:`peer_build`; ``routes`` prints every ordered pair's route, ``links`` every link) and
builds the same cluster in commaware from a JSON platform's ``network.topology``. Every host
pair's route must name the same links in the same order with a latency within 1e-15 s, and
every link must have SimGrid's bandwidth, latency and sharing policy.

Skips (with the reason in the warnings summary) where SimGrid (Debian ``libsimgrid-dev g++``)
is missing, unless ``COMMAWARE_REQUIRE_SIMGRID=1`` (CI): then it runs and fails with the reason.
"""

from __future__ import annotations

import functools
import json
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import peer_build
from conftest import requires_simgrid_mark

SOURCE = Path(__file__).resolve().parents[1] / "peers" / "simgrid_platform.cpp"
CXXFLAGS = ("-O2", "-std=c++17")
LIBS = ("-lsimgrid",)
HINT = "install Debian packages: libsimgrid-dev g++"
BW = 1.25e8
LAT = 5e-5


class PeerError(RuntimeError):
    """The platform peer could not be built or run."""


def run_peer(mode: str, xml: str) -> list[list[str]]:
    """Run ``simgrid_platform MODE`` on the platform text ``xml``; its output lines, split."""
    binary = peer_build.build_peer(SOURCE, "g++", CXXFLAGS, libs=LIBS, error=PeerError, hint=HINT)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "platform.xml"
        path.write_text(xml)
        proc = subprocess.run([str(binary), mode, str(path), "--log=root.thresh:warning"], capture_output=True,
                              text=True, timeout=300)
    if proc.returncode != 0:
        raise PeerError(f"simgrid_platform {mode} failed: {(proc.stderr or proc.stdout).strip()[-500:]}")
    return [line.split() for line in proc.stdout.splitlines() if line.strip()]


@dataclass(frozen=True)
class Cluster:
    """One parameter set: SimGrid's ``topology``/``topo_parameters`` and our ``network.topology``."""

    name: str
    hosts: int
    topology: str
    topo_parameters: str
    spec: dict[str, Any]
    attrs: dict[str, str] = field(default_factory=dict)

    def xml(self) -> str:
        extra = "".join(f' {k}="{v}"' for k, v in self.attrs.items())
        return (
            "<?xml version='1.0'?>\n"
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            '<platform version="4.1">\n'
            f'  <cluster id="c" prefix="h" suffix="" radical="0-{self.hosts - 1}" speed="1Gf" bw="{BW!r}Bps" '
            f'lat="{LAT!r}s" topology="{self.topology}" topo_parameters="{self.topo_parameters}"{extra}/>\n'
            "</platform>\n"
        )

    def platform_json(self) -> str:
        return json.dumps({"cluster": {"count": self.hosts, "speed": 1e9, "prefix": "h"},
                           "network": {"bandwidth": BW, "latency": LAT, "topology": {"id": "c", **self.spec}}})


def sharing(policy: str) -> dict[str, str]:
    return {"sharing_policy": policy}


EXTRAS = {"limiter_link": "1e8Bps", "loopback_bw": "1e10Bps", "loopback_lat": "1e-7s"}
SPEC_EXTRAS = {"limiter_bandwidth": 1e8, "loopback": {"bandwidth": 1e10, "latency": 1e-7}}

CLUSTERS = [
    # Fat trees: parallel cables, uneven up/down counts, limiters on hosts and switches.
    Cluster("fat_tree_16_parallel_top", 16, "FAT_TREE", "2;4,4;1,2;1,2", {"kind": "fat_tree", "down": [4, 4], "up": [1, 2], "parallel": [1, 2]}),
    Cluster("fat_tree_6_uneven", 6, "FAT_TREE", "2;2,3;2,2;2,1", {"kind": "fat_tree", "levels": 2, "down": [2, 3], "up": [2, 2], "parallel": [2, 1]}),
    # (SimGrid refuses limiters on a fat tree with more switches than hosts: names collide.)
    Cluster("fat_tree_8_3levels_loopback_shared", 8, "FAT_TREE", "3;2,2,2;1,2,2;1,2,1",
            {"kind": "fat_tree", "down": [2, 2, 2], "up": [1, 2, 2], "parallel": [1, 2, 1], "sharing": "SHARED",
             "loopback": SPEC_EXTRAS["loopback"]},
            {**sharing("SHARED"), "loopback_bw": EXTRAS["loopback_bw"], "loopback_lat": EXTRAS["loopback_lat"]}),
    Cluster("fat_tree_16_limiters_loopback", 16, "FAT_TREE", "2;4,4;1,2;1,2",
            {"kind": "fat_tree", "down": [4, 4], "up": [1, 2], "parallel": [1, 2], **SPEC_EXTRAS}, EXTRAS),
    Cluster("fat_tree_6_fatpipe", 6, "FAT_TREE", "2;3,2;2,3;2,2", {"kind": "fat_tree", "down": [3, 2], "up": [2, 3], "parallel": [2, 2], "sharing": "FATPIPE"},
            sharing("FATPIPE")),
    # Tori of 1 to 4 dimensions, odd sizes and an even one (ties).
    Cluster("torus_1d_5", 5, "TORUS", "5", {"kind": "torus", "dims": [5]}),
    Cluster("torus_2d_4x3", 12, "TORUS", "4,3", {"kind": "torus", "dims": [4, 3]}),
    Cluster("torus_3d_3x2x3_extras", 18, "TORUS", "3,2,3", {"kind": "torus", "dims": [3, 2, 3], **SPEC_EXTRAS}, EXTRAS),
    Cluster("torus_4d_3x1x3x2_shared", 18, "TORUS", "3,1,3,2", {"kind": "torus", "dims": [3, 1, 3, 2], "sharing": "SHARED"}, sharing("SHARED")),
    # Dragonflies with several chassis (the chassis quirk shows in these).
    Cluster("dragonfly_3g_2c_3r_2n", 36, "DRAGONFLY", "3,1;2,1;3,1;2",
            {"kind": "dragonfly", "groups": [3, 1], "chassis": [2, 1], "routers": [3, 1], "nodes": 2}),
    Cluster("dragonfly_2g_3c_2r_multi_links", 12, "DRAGONFLY", "2,2;3,3;2,2;1",
            {"kind": "dragonfly", "groups": [2, 2], "chassis": [3, 3], "routers": [2, 2], "nodes": 1}),
    Cluster("dragonfly_1g_3c_2r_extras_shared", 12, "DRAGONFLY", "1,1;3,2;2,1;2",
            {"kind": "dragonfly", "groups": [1, 1], "chassis": [3, 2], "routers": [2, 1], "nodes": 2, "sharing": "SHARED", **SPEC_EXTRAS},
            {**sharing("SHARED"), **EXTRAS}),
    # Flat clusters: backbone, limiter, loopback, each sharing policy.
    Cluster("flat_backbone_shared_extras", 5, "FLAT", "", {"kind": "flat", "backbone": {"bandwidth": 2e9, "latency": 1e-6}, **SPEC_EXTRAS},
            {"bb_bw": "2e9Bps", "bb_lat": "1e-6s", **EXTRAS}),
    Cluster("flat_backbone_fatpipe_shared_links", 4, "FLAT", "",
            {"kind": "flat", "sharing": "SHARED", "backbone": {"bandwidth": 2e9, "latency": 1e-6, "sharing": "FATPIPE"}},
            {"bb_bw": "2e9Bps", "bb_lat": "1e-6s", "bb_sharing_policy": "FATPIPE", **sharing("SHARED")}),
    Cluster("flat_fatpipe_limiter", 4, "FLAT", "", {"kind": "flat", "sharing": "FATPIPE", "limiter_bandwidth": 1e8},
            {"limiter_link": "1e8Bps", **sharing("FATPIPE")}),
]


@functools.lru_cache(maxsize=1)
def peer_available() -> tuple[bool, str]:
    try:
        run_peer("hosts", CLUSTERS[-1].xml())
    except (PeerError, OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    return True, "simgrid_platform peer built"


requires_simgrid = requires_simgrid_mark(peer_available(), "SimGrid cluster topology")


@requires_simgrid
@pytest.mark.parametrize("cluster", CLUSTERS, ids=lambda c: c.name)
def test_routes_and_links_equal_simgrids(cw: ModuleType, cluster: Cluster) -> None:
    core = cw._core
    platform = core.load_platform(cluster.platform_json(), "<test>")
    xml = cluster.xml()
    # Engine::get_all_hosts() lists hosts by name; our order is the radical's.
    hosts = [line[1] for line in run_peer("hosts", xml)]
    assert sorted(hosts) == sorted(platform.host_names)
    routes = run_peer("routes", xml)
    assert len(routes) == cluster.hosts * (cluster.hosts - 1)
    for line in routes:
        src, dst, latency, sg_links = line[1], line[2], float(line[3]), line[4:]
        ours_latency, ours = core.platform_route(platform, src, dst)
        assert [name for name, *_ in ours] == sg_links, (src, dst)
        assert abs(ours_latency - latency) <= 1e-15, (src, dst, ours_latency, latency)
    sg = {line[1]: (float(line[2]), float(line[3]), line[4]) for line in run_peer("links", xml)}
    # SimGrid lists a SPLITDUPLEX link's container besides its _UP and _DOWN halves.
    # and its network model's own `__loopback__` (for hosts without a loopback of their own).
    sg = {name: v for name, v in sg.items() if v[2] != "SPLITDUPLEX" and name != "__loopback__"}
    ours_links = {name: (bw, lat, policy) for name, bw, lat, policy in core.platform_links(platform)}
    assert len(ours_links) == len(core.platform_links(platform)), "link names must be unique"
    assert ours_links == sg
