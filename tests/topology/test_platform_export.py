"""`commaware platform export` (issue 28 item 3), checked against SimGrid itself.

Each platform (the cluster parameter sets of :mod:`test_cluster_simgrid`, SimGrid graph zones, a
JSON star) is exported with ``--format simgrid``; the repository's peer
``tests/peers/simgrid_platform.cpp`` loads the file and every route and link it reports must equal
what commaware says on the *original* platform (``platform_route``, ``platform_links``); random
flows (seeded) must end at the times ``commaware simulate`` gives on the original, within 1e-9.
``--format json`` must give back a platform with the same routes, and JSON -> XML -> JSON must be a
fixed point. Bad input: exit 2, one line, no file.

SimGrid tests skip (reason in the warnings summary) where SimGrid (Debian ``libsimgrid-dev g++``)
is missing, unless ``COMMAWARE_REQUIRE_SIMGRID=1``.
"""

from __future__ import annotations

import json
import random
import subprocess
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import peer_build
from conftest import run_cli

from .test_cluster_simgrid import BW, CLUSTERS, LAT, Cluster, requires_simgrid, run_peer
from .test_simgrid_xml import PLATFORMS

SOURCE = Path(__file__).resolve().parents[1] / "peers" / "simgrid_platform.cpp"
SG_CFG = ("--cfg=network/model:CM02", "--cfg=network/crosstraffic:0", "--cfg=network/optim:Full")


@pytest.fixture(scope="module")
def cw() -> ModuleType:
    import commaware
    return commaware


def by_name(name: str) -> Cluster:
    return next(c for c in CLUSTERS if c.name == name)


def sg_links(xml: str) -> dict[str, tuple[float, float, str]]:
    rows = {line[1]: (float(line[2]), float(line[3]), line[4]) for line in run_peer("links", xml)}
    # A SPLITDUPLEX link's container besides its halves, and SimGrid's own `__loopback__`.
    return {n: v for n, v in rows.items() if v[2] != "SPLITDUPLEX" and n != "__loopback__"}


def assert_same_network(cw: ModuleType, platform: Any, xml: str) -> None:
    """SimGrid's routes and links of `xml` are commaware's of `platform`, pair by pair."""
    core = cw._core
    hosts = [line[1] for line in run_peer("hosts", xml)]
    assert sorted(hosts) == sorted(platform.host_names)
    routes = run_peer("routes", xml)
    n = len(hosts)
    assert len(routes) == n * (n - 1)
    for line in routes:
        src, dst, latency, links = line[1], line[2], float(line[3]), line[4:]
        ours_latency, ours = core.platform_route(platform, src, dst)
        assert [name for name, *_ in ours] == links, (src, dst)
        # Nested zones: SimGrid adds a route's latencies zone by zone, a flat zone link by link.
        assert abs(ours_latency - latency) <= 1e-15, (src, dst, ours_latency, latency)
    ours_links = {name: (bw, lat, s) for name, bw, lat, s in core.platform_links(platform)}
    assert ours_links == sg_links(xml)


# Flat with backbone, limiter and loopback; a fat tree with parallel cables (two sets); a 3-D
# torus; dragonflies; each kind with at least two parameter sets.
EXPORTED = [c.name for c in CLUSTERS]


@requires_simgrid
@pytest.mark.parametrize("name", EXPORTED)
def test_cluster_export_has_simgrids_routes_and_links(cw: ModuleType, name: str) -> None:
    cluster = by_name(name)
    platform = cw._core.load_platform(cluster.platform_json(), "<test>")
    xml = cw._core.platform_export(platform, "simgrid")
    assert "<cluster " in xml and f'topology="{cluster.topology}"' in xml
    assert_same_network(cw, platform, xml)


GRAPHS = ["floyd", "dijkstra", "full", "zones_full", "zones_floyd"]


@requires_simgrid
@pytest.mark.parametrize("name", GRAPHS)
def test_graph_export_has_simgrids_routes_and_links(cw: ModuleType, name: str) -> None:
    platform = cw._core.platform_from_simgrid_xml(PLATFORMS[name], "<test>")
    xml = cw._core.platform_export(platform, "simgrid")
    assert 'routing="Full"' in xml
    assert_same_network(cw, platform, xml)
    # And commaware reads its own export back to the same network.
    again = cw._core.platform_from_simgrid_xml(xml, "<export>")
    assert cw._core.platform_links(again) == cw._core.platform_links(platform)


def write_flows_trace(hosts: list[str], pairs: list[tuple[int, int, int]], path: Path) -> None:
    """One message per (src, dst, bytes), all posted at t = 0 (isend/irecv, then waitall)."""
    ranks: list[list[dict[str, Any]]] = [[] for _ in hosts]
    for tag, (s, d, b) in enumerate(pairs):
        ranks[s].append({"op": "isend", "dst": d, "bytes": b, "tag": tag})
        ranks[d].append({"op": "irecv", "src": s, "tag": tag})
    for ops in ranks:
        ops.append({"op": "waitall"})
    path.write_text(json.dumps({"ranks": ranks}))


FLOW_PLATFORMS = ["flat_backbone_shared_extras", "fat_tree_16_limiters_loopback", "torus_3d_3x2x3_extras",
                  "dragonfly_3g_2c_3r_2n", "floyd", "star"]
STAR = {"cluster": {"count": 6, "speed": 1e9, "prefix": "s"},
        "network": {"bandwidth": BW, "latency": LAT, "backbone": 3e8}}


@requires_simgrid
@pytest.mark.parametrize("name", FLOW_PLATFORMS)
def test_random_flows_end_at_simgrids_times(cw: ModuleType, name: str, tmp_path: Path) -> None:
    if name == "star":
        original = tmp_path / "star.json"
        original.write_text(json.dumps(STAR))
    elif name in PLATFORMS:
        original = tmp_path / f"{name}.xml"
        original.write_text(PLATFORMS[name])
    else:
        original = tmp_path / f"{name}.json"
        original.write_text(by_name(name).platform_json())
    exported = tmp_path / "exported.xml"
    run_cli("platform", "export", original, "--format", "simgrid", "-o", exported, check=True)
    hosts = cw.load_platform(original).host_names
    rng = random.Random(28)
    pairs = []
    for _ in range(12):
        s, d = rng.sample(range(len(hosts)), 2)
        pairs.append((s, d, rng.randrange(100_000, 20_000_000)))
    # Every message is above the eager threshold (rendezvous): its transfer starts when both the
    # isend and the irecv are posted, at t = 0, as the peer's sendto_async does.
    trace = tmp_path / "flows.json"
    write_flows_trace(hosts, pairs, trace)
    proc = run_cli("simulate", original, trace, "--json", check=True)
    messages = json.loads(proc.stdout)["messages"]
    ours = {(m["src_rank"], m["dst_rank"], m["tag"]): m["end"] for m in messages}
    flow_file = tmp_path / "flows.txt"
    flow_file.write_text("".join(f"{hosts[s]} {hosts[d]} {b} 0\n" for s, d, b in pairs))
    binary = peer_build.build_peer(SOURCE, "g++", ("-O2", "-std=c++17"), libs=("-lsimgrid",), error=RuntimeError,
                                   hint="install Debian packages: libsimgrid-dev g++")
    sg = subprocess.run([str(binary), "flows", str(exported), str(flow_file), *SG_CFG, "--log=root.thresh:warning"],
                        capture_output=True, text=True, timeout=300, check=True)
    finish = [float(line.split()[3]) for line in sg.stdout.splitlines() if line.startswith("FLOW ")]
    assert len(finish) == len(pairs)
    for tag, (s, d, _) in enumerate(pairs):
        assert ours[(s, d, tag)] == pytest.approx(finish[tag], rel=1e-9, abs=1e-12), (name, tag)


def subset(expected: Any, got: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(got, dict) and all(k in got and subset(v, got[k]) for k, v in expected.items())
    return bool(expected == got)


@pytest.mark.parametrize("name", EXPORTED)
def test_json_xml_json_round_trip(cw: ModuleType, name: str) -> None:
    core = cw._core
    cluster = by_name(name)
    original = core.load_platform(cluster.platform_json(), "<test>")
    xml1 = core.platform_export(original, "simgrid")
    json2 = core.platform_export(core.platform_from_simgrid_xml(xml1, "<x1>"), "json")
    back = core.load_platform(json2, "<j2>")
    xml2 = core.platform_export(back, "simgrid")
    json3 = core.platform_export(core.platform_from_simgrid_xml(xml2, "<x2>"), "json")
    assert xml1 == xml2
    assert json2 == json3
    doc = json.loads(json2)
    assert doc["cluster"] == {"count": cluster.hosts, "speed": 1e9, "cores": 1, "prefix": "h"}
    topology = doc["network"]["topology"]
    assert subset({"id": "c", "bandwidth": BW, "latency": LAT, **cluster.spec}, topology), (cluster.spec, topology)
    assert core.platform_links(back) == core.platform_links(original)
    hosts = original.host_names
    for s in hosts[:4]:
        for d in hosts[-3:]:
            assert core.platform_route(back, s, d) == core.platform_route(original, s, d)


def test_units_are_written_exactly(cw: ModuleType) -> None:
    spec = {"cluster": {"count": 4, "speed": 1.1e9, "prefix": "h"},
            "network": {"bandwidth": 1 / 3, "latency": 0.1 + 0.2, "topology": {"kind": "flat", "limiter_bandwidth": 1e8}}}
    xml = cw._core.platform_export(cw._core.load_platform(json.dumps(spec), "<t>"), "simgrid")
    assert f'bw="{1 / 3!r}Bps"' in xml and f'lat="{0.1 + 0.2!r}s"' in xml and 'speed="1100000000f"' in xml
    back = cw._core.platform_from_simgrid_xml(xml, "<x>")
    link = {name: bw for name, bw, *_ in cw._core.platform_links(back)}["cluster_link_0_UP"]
    assert link == 1 / 3


def test_json_of_a_graph_zone_says_why(tmp_path: Path) -> None:
    path = tmp_path / "floyd.xml"
    path.write_text(PLATFORMS["floyd"])
    proc = run_cli("platform", "export", path, "--format", "json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "floyd" in proc.stderr and "explicit links, routes or nested zones" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_mpi_settings_become_a_comment_and_models_are_refused(tmp_path: Path) -> None:
    spec = json.loads(by_name("torus_1d_5").platform_json())
    spec["network"]["eager_threshold"] = 1024
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(spec))
    proc = run_cli("platform", "export", ok, "--format", "simgrid", check=True)
    assert "<!-- Not in SimGrid's platform file" in proc.stdout and "network.eager_threshold = 1024" in proc.stdout
    spec["network"]["model"] = "gige"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(spec))
    out = tmp_path / "out.xml"
    proc = run_cli("platform", "export", bad, "--format", "simgrid", "-o", out)
    assert proc.returncode == 2 and "network.model" in proc.stderr and "gige" in proc.stderr
    assert not out.exists() and list(tmp_path.glob("out*")) == []


def test_unknown_format_and_unwritable_output(tmp_path: Path) -> None:
    src = tmp_path / "p.json"
    src.write_text(by_name("torus_1d_5").platform_json())
    proc = run_cli("platform", "export", src, "--format", "dot")
    assert proc.returncode == 2 and "dot" in proc.stderr and proc.stdout == ""
    # A folder that is a file: cannot be written, whoever runs the test (root included).
    out = src / "x.xml"
    proc = run_cli("platform", "export", src, "--format", "simgrid", "-o", out)
    assert proc.returncode == 2 and "cannot write" in proc.stderr and "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json"]
    missing = tmp_path / "none" / "x.xml"
    proc = run_cli("platform", "export", src, "--format", "simgrid", "-o", missing)
    assert proc.returncode == 2 and str(missing) in proc.stderr and not missing.parent.exists()
