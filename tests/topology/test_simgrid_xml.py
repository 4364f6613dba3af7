"""SimGrid platform files (issue 28): hosts and routes as SimGrid 3.32 itself gives them, and bad
files refused with the file, the line and the reason.

The reference is the repository's peer ``tests/peers/simgrid_platform.cpp`` (SimGrid's s4u API:
``Host::route_to`` for every ordered pair of distinct hosts, ``Engine::get_all_hosts``), compiled on
first use by :mod:`peer_build`. The SimGrid tests skip, with the reason in the warnings summary,
where SimGrid (Debian ``libsimgrid-dev g++``) is missing, unless ``COMMAWARE_REQUIRE_SIMGRID=1``.
"""

from __future__ import annotations

import functools
import json
import subprocess
import time
from pathlib import Path
from types import ModuleType

import pytest

import peer_build
from conftest import EXAMPLES, requires_simgrid_mark, run_cli

PEER_SOURCE = Path(__file__).resolve().parents[1] / "peers" / "simgrid_platform.cpp"


class PeerError(RuntimeError):
    """The platform peer could not be built or run."""


def peer_binary() -> Path:
    return peer_build.build_peer(PEER_SOURCE, "g++", ("-O2", "-std=c++17"), libs=("-lsimgrid",), error=PeerError,
                                 hint="install Debian packages: libsimgrid-dev g++")


def run_peer(mode: str, platform: Path) -> list[list[str]]:
    proc = subprocess.run([str(peer_binary()), mode, str(platform), "--log=root.thresh:warning"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise PeerError(f"simgrid_platform {mode} {platform.name}: exit {proc.returncode}: {proc.stderr.strip()[:500]}")
    return [line.split() for line in proc.stdout.splitlines() if line.strip()]


@functools.lru_cache(maxsize=1)
def peer_available() -> tuple[bool, str]:
    try:
        peer_binary()
    except PeerError as exc:
        return False, str(exc)
    return True, "SimGrid platform peer built"


requires_simgrid = requires_simgrid_mark(peer_available(), "SimGrid platform")

HEAD = '<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n<platform version="4.1">\n'

# Every route of a Full zone listed (SimGrid gives an empty route for a pair left out), with the
# three sharing policies, both link_ctn directions, symmetrical routes and one-way ones. Hosts
# out of alphabetical order: SimGrid's get_all_hosts() sorts them, we keep the document's order.
FULL = HEAD + """<zone id="AS0" routing="Full">
  <host id="c1" speed="1Gf" core="2"/>
  <host id="a2" speed="2Gf,1Gf"/>
  <host id="b3" speed="500Mf"><prop id="note" value="changes nothing"/></host>
  <link id="sh" bandwidth="125MBps" latency="10us"/>
  <link id="fp" bandwidth="1GBps" latency="1us" sharing_policy="FATPIPE"/>
  <link id="sd1" bandwidth="10Gbps" latency="50us" sharing_policy="SPLITDUPLEX"/>
  <link id="sd2" bandwidth="1.5e3kBps" latency="0.2ms" sharing_policy="SPLITDUPLEX"/>
  <link id="sd3" bandwidth="100" latency="3e-6" sharing_policy="SPLITDUPLEX"/>
  <route src="c1" dst="a2"><link_ctn id="sd1" direction="UP"/><link_ctn id="sh"/><link_ctn id="sd2" direction="DOWN"/></route>
  <route src="c1" dst="b3" symmetrical="NO"><link_ctn id="sd1" direction="UP"/><link_ctn id="fp"/><link_ctn id="sd3" direction="DOWN"/></route>
  <route src="b3" dst="c1" symmetrical="NO"><link_ctn id="sd3" direction="UP"/><link_ctn id="sh"/><link_ctn id="sd1" direction="DOWN"/></route>
  <route src="a2" dst="b3"><link_ctn id="sd2" direction="DOWN"/><link_ctn id="fp"/><link_ctn id="sd3" direction="UP"/></route>
</zone>
</platform>
"""


def graph(routing: str) -> str:
    """Four hosts on a ring of four routers, with equal-length alternatives (SimGrid's tie rule
    decides), a one-way router link, the three sharing policies and both directions."""
    hosts = "".join(f'  <host id="h{i}" speed="1Gf"/>\n  <router id="r{i}"/>\n'
                    f'  <link id="nic{i}" bandwidth="1GBps" latency="{i + 1}us" sharing_policy="SPLITDUPLEX"/>\n'
                    for i in range(4))
    ring = "".join(f'  <link id="ring{i}" bandwidth="10GBps" latency="{10 * (i + 1)}us"'
                   f' sharing_policy="{("SHARED", "FATPIPE", "SPLITDUPLEX", "SHARED")[i]}"/>\n' for i in range(4))
    ring += '  <link id="back" bandwidth="1GBps" latency="7us"/>\n'
    routes = "".join(f'  <route src="h{i}" dst="r{i}"><link_ctn id="nic{i}" direction="UP"/></route>\n' for i in range(4))
    ctn = ['<link_ctn id="ring0"/>', '<link_ctn id="ring1"/>', '<link_ctn id="ring2" direction="DOWN"/>']
    routes += "".join(f'  <route src="r{i}" dst="r{i + 1}">{ctn[i]}</route>\n' for i in range(3))
    routes += ('  <route src="r3" dst="r0" symmetrical="NO"><link_ctn id="ring3"/></route>\n'
               '  <route src="r0" dst="r3" symmetrical="NO"><link_ctn id="back"/><link_ctn id="ring3"/></route>\n')
    return HEAD + f'<zone id="G" routing="{routing}">\n{hosts}{ring}{routes}</zone>\n</platform>\n'


def zones(root_routing: str) -> str:
    """Three zones (Floyd, Dijkstra, Full) under a root; with a Floyd root and no A-C route,
    A to C goes through B, entering at rb and leaving at rb2 (a route inside B between them)."""
    a = ('<zone id="A" routing="Floyd"><host id="a0" speed="1Gf"/><host id="a1" speed="1Gf"/><router id="ra"/>'
         '<link id="la0" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX"/><link id="la1" bandwidth="1GBps" latency="2us"/>'
         '<route src="a0" dst="ra"><link_ctn id="la0" direction="UP"/></route><route src="a1" dst="ra"><link_ctn id="la1"/></route></zone>\n')
    b = ('<zone id="B" routing="Dijkstra"><host id="b0" speed="1Gf"/><router id="rb"/><router id="rb2"/>'
         '<link id="lb0" bandwidth="1GBps" latency="3us"/><link id="lbb" bandwidth="1GBps" latency="4us" sharing_policy="FATPIPE"/>'
         '<route src="b0" dst="rb"><link_ctn id="lb0"/></route><route src="rb" dst="rb2"><link_ctn id="lbb"/></route></zone>\n')
    c = ('<zone id="C" routing="Full"><host id="c0" speed="1Gf"/><router id="rc"/>'
         '<link id="lc0" bandwidth="1GBps" latency="5us" sharing_policy="SPLITDUPLEX"/>'
         '<route src="c0" dst="rc"><link_ctn id="lc0" direction="DOWN"/></route></zone>\n')
    links = ''.join(f'<link id="{n}" bandwidth="10GBps" latency="{lat}us"/>' for n, lat in (("ab", 10), ("bc", 20), ("ac", 30)))
    routes = ('<zoneRoute src="A" dst="B" gw_src="ra" gw_dst="rb"><link_ctn id="ab"/></zoneRoute>\n'
              '<zoneRoute src="B" dst="C" gw_src="rb2" gw_dst="rc"><link_ctn id="bc"/></zoneRoute>\n')
    if root_routing == "Full":
        routes += '<zoneRoute src="A" dst="C" gw_src="ra" gw_dst="rc"><link_ctn id="ac"/></zoneRoute>\n'
    return HEAD + f'<zone id="root" routing="{root_routing}">\n{a}{b}{c}{links}\n{routes}</zone>\n</platform>\n'


def clusters_in_one_file() -> str:
    """Two fat trees and two dragonflies in one file, chained by zoneRoutes under a Floyd root.
    SimGrid numbers their links with counters that run on from cluster to cluster, and routes
    the second fat tree on host positions that continue from the first (3 hosts: odd, so the
    second tree's d-mod-k up port and parallel down cable both change)."""
    def cluster(cid: str, kind: str, params: str, hosts: int) -> str:
        return (f'<cluster id="{cid}" prefix="{cid}-" suffix="" radical="0-{hosts - 1}" speed="1Gf" bw="125MBps"'
                f' lat="10us" topology="{kind}" topo_parameters="{params}"/>\n')
    body = (cluster("ft1", "FAT_TREE", "2;3,1;1,1;1,1", 3) + cluster("df1", "DRAGONFLY", "2,1;1,1;2,1;1", 4)
            + cluster("ft2", "FAT_TREE", "2;2,2;2,2;1,2", 4) + cluster("df2", "DRAGONFLY", "2,2;2,1;2,1;1", 8))
    ids = ["ft1", "df1", "ft2", "df2"]
    links = "".join(f'<link id="j{i}" bandwidth="1GBps" latency="5us"/>' for i in range(3))
    # SimGrid 3.32 gives these clusters no router: a zoneRoute leaves and enters through hosts.
    routes = "".join(f'<zoneRoute src="{a}" dst="{b}" gw_src="{a}-1" gw_dst="{b}-2">'
                     f'<link_ctn id="j{i}"/></zoneRoute>\n' for i, (a, b) in enumerate(zip(ids, ids[1:])))
    return HEAD + f'<zone id="root" routing="Floyd">\n{body}{links}\n{routes}</zone>\n</platform>\n'


PLATFORMS = {"full": FULL, "clusters": clusters_in_one_file(), "floyd": graph("Floyd"), "dijkstra": graph("Dijkstra"), "dijkstra_cache": graph("DijkstraCache"),
             "zones_full": zones("Full"), "zones_floyd": zones("Floyd")}


@pytest.fixture(scope="module")
def cw() -> ModuleType:
    import commaware
    return commaware


@requires_simgrid
@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_hosts_and_routes_equal_simgrids(cw: ModuleType, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.xml"
    path.write_text(PLATFORMS[name])
    platform = cw.load_platform(path)
    sg_hosts = [(h[1], float(h[2]), int(h[3])) for h in run_peer("hosts", path)]
    ours = platform.host_names
    # Same names, speeds (first power state) and cores; SimGrid lists them sorted by name,
    # we keep the document's order (the order ranks are placed in).
    assert sorted(ours) == [h[0] for h in sg_hosts]
    core_hosts = {h.name: (h.speed, h.cores) for h in _hosts(platform)}
    assert core_hosts == {n: (s, c) for n, s, c in sg_hosts}
    sg_routes = run_peer("routes", path)
    assert len(sg_routes) == len(ours) * (len(ours) - 1)
    for line in sg_routes:
        src, dst, lat, links = line[1], line[2], float(line[3]), line[4:]
        our_lat, route = platform.route(src, dst)
        our_links = [name for name, *_ in route]
        assert our_links == links, (src, dst)
        assert our_lat == pytest.approx(lat, rel=1e-12, abs=1e-18), (src, dst)


class _Host:
    def __init__(self, name: str, speed: float, cores: int) -> None:
        self.name, self.speed, self.cores = name, speed, cores


def _hosts(platform) -> list[_Host]:
    import json
    doc = json.loads(platform._core.to_json())
    return [_Host(h["name"], h["speed"], h["cores"]) for h in doc["hosts"]]


def test_hosts_keep_document_order(cw: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "full.xml"
    path.write_text(FULL)
    assert cw.load_platform(path).host_names == ["c1", "a2", "b3"]
    assert [(h.speed, h.cores) for h in _hosts(cw.load_platform(path))] == [(1e9, 2), (2e9, 1), (5e8, 1)]


def test_routes_by_hand(cw: ModuleType, tmp_path: Path) -> None:
    """Checked without SimGrid: the reverse of a symmetrical route, UP and DOWN swapped."""
    path = tmp_path / "full.xml"
    path.write_text(FULL)
    p = cw.load_platform(path)
    def names(src: str, dst: str) -> tuple[float, list[str]]:
        latency, links = p.route(src, dst)
        return latency, [name for name, *_ in links]

    assert names("c1", "a2") == (pytest.approx(50e-6 + 10e-6 + 0.2e-3), ["sd1_UP", "sh", "sd2_DOWN"])
    assert names("a2", "c1") == (pytest.approx(0.2e-3 + 10e-6 + 50e-6), ["sd2_UP", "sh", "sd1_DOWN"])
    assert names("b3", "a2")[1] == ["sd3_DOWN", "fp", "sd2_UP"]
    with pytest.raises(cw.PlatformError, match="unknown host `zz`"):
        p.route("c1", "zz")


def line_of(text: str, needle: str) -> str:
    """"line N," of the first line holding `needle`."""
    return f"line {text[: text.index(needle)].count(chr(10)) + 1},"


def bad(name: str, text: str, needle: str, reason: str) -> tuple[str, str, str, str]:
    return name, text, line_of(text, needle), reason


def cluster(radical: str, extra: str = "") -> str:
    return HEAD + f'<cluster id="c" prefix="n" suffix="" radical="{radical}" speed="1Gf" bw="1GBps" lat="1us" {extra}/>\n</platform>\n'


BAD = [
    bad("malformed", FULL.replace("</route>", "</rout>", 1), "</rout>", "malformed XML"),
    bad("unknown_element", FULL.replace("</zone>", '<disk id="d" read_bw="1" write_bw="1"/>\n</zone>'), "<disk",
        '<disk id="d"> is not modelled'),
    bad("unknown_unit", FULL.replace("125MBps", "125MBs"), "125MBs", "unknown unit `MBs`"),
    bad("duplicate_id", FULL.replace('<host id="a2"', '<host id="c1"'), 'c1" speed="2Gf', "used twice"),
    bad("no_link", FULL.replace('<link_ctn id="sh"/>', '<link_ctn id="nope"/>', 1), "nope", "no link `nope`"),
    bad("no_route", FULL.replace('<route src="a2" dst="b3">', '<route src="a2" dst="zz">'), "zz", "`zz` names no host"),
    # SimGrid 3.32 gives a fat tree no router: its {prefix}{id}_router is no point of the file.
    bad("fat_tree_router", clusters_in_one_file().replace('gw_src="ft1-1"', 'gw_src="ft1-ft1_router"'), "ft1-ft1_router",
        "`ft1-ft1_router`"),
    bad("entity", HEAD.replace('dtd">', 'dtd" [\n<!ENTITY a "aaaa">]>') + "<zone id='z' routing='Full'>&a;</zone></platform>",
        "<!ENTITY", "entity declarations"),
    # Hostile values (issue 40, item 5).
    ("nul_byte", FULL.replace("1Gf", "1G\0f", 1), f"byte {FULL.index('1Gf') + 2} is NUL", "not a text file"),
    bad("radical_2_64", cluster("0-18446744073709551615"), "<cluster", "more than 1048576 (2^20) hosts"),
    bad("torus_10_18", cluster("0-3", 'topology="TORUS" topo_parameters="1000000,1000000,1000000"'), "<cluster",
        "has 4 hosts but its torus dimensions `1000000,1000000,1000000` has 1000000000000000000"),
    bad("fat_tree_10_6_levels", cluster("0-3", f'topology="FAT_TREE" topo_parameters="1000000;{",".join(["2"] * 10**6)};1;1"'),
        "<cluster", "1000000 fat tree levels, at most 32 are allowed"),
    bad("speed_1e999", FULL.replace("1Gf", "1e999Gf", 1), "1e999Gf", "speed: non-finite number (NaN/inf) is not allowed"),
    bad("negative_latency", FULL.replace('latency="', 'latency="-', 1), 'latency="-', "latency: must be >= 0"),
]


@pytest.mark.parametrize(("name", "text", "where", "reason"), BAD, ids=[b[0] for b in BAD])
def test_bad_platform_files_exit_2_with_file_line_and_reason(tmp_path: Path, name: str, text: str, where: str,
                                                             reason: str) -> None:
    path = tmp_path / f"{name}.xml"
    path.write_text(text)
    start = time.monotonic()
    proc = run_cli("simulate", path, EXAMPLES / "ring.json")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert str(path) in lines[0] and where in lines[0] and reason in lines[0], lines[0]
    assert time.monotonic() - start < 30


def test_billion_laughs_is_refused_quickly(cw: ModuleType, tmp_path: Path) -> None:
    entities = ['<!ENTITY a0 "lol">'] + [f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 10)]
    text = '<?xml version="1.0"?>\n<!DOCTYPE platform [\n' + "\n".join(entities) + '\n]>\n<platform version="4.1">&a9;</platform>\n'
    path = tmp_path / "lol.xml"
    path.write_text(text)
    start = time.monotonic()
    with pytest.raises(cw.PlatformError, match="line 3, column 1: entity declarations are not accepted"):
        cw.load_platform(path)
    assert time.monotonic() - start < 1.0


def test_a_large_file_loads_in_linear_time(cw: ModuleType, tmp_path: Path) -> None:
    """20,000 hosts on a ring of 200 routers (Dijkstra, 3.9 MB): positions are looked up only
    for errors (looking each one up made this 47 s), and paths only from the sources asked."""
    lines = ['<?xml version="1.0"?>', '<platform version="4.1">', '<zone id="big" routing="Dijkstra">']
    lines += [f'<router id="r{r}"/><link id="ring{r}" bandwidth="10GBps" latency="1us"/>' for r in range(200)]
    hosts = [(f"h{r}_{j}", r) for r in range(200) for j in range(100)]
    # SimGrid's DTD order: the hosts and links, then the routes.
    lines += [f'<host id="{h}" speed="1Gf"/><link id="n{h}" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX"/>'
              for h, _ in hosts]
    lines += [f'<route src="{h}" dst="r{r}"><link_ctn id="n{h}" direction="UP"/></route>' for h, r in hosts]
    lines += [f'<route src="r{r}" dst="r{(r + 1) % 200}"><link_ctn id="ring{r}"/></route>' for r in range(200)]
    path = tmp_path / "big.xml"
    path.write_text("\n".join([*lines, "</zone>", "</platform>"]))
    start = time.monotonic()
    platform = cw.load_platform(path)
    latency, links = platform.route("h0_0", "h100_0")  # 100 ring hops either way: the first found
    assert len(platform) == 20_000
    assert len(links) == 102 and latency == pytest.approx(102e-6)
    assert time.monotonic() - start < 15


# A platform file whose `simgrid_platform` names a SimGrid file: the file's hosts and links, the
# MPI side from `network`. A 4-host fat tree of 125 MB/s, 10 us cables: 1 MB from n0 to n3 goes up
# two levels and down two, 4 x 10 us + 1e6 / 125e6 s.
OVER_XML = HEAD + """<cluster id="ft" prefix="n" suffix="" radical="0-3" speed="1Gf" bw="125MBps" lat="10us"
 topology="FAT_TREE" topo_parameters="2;2,2;1,2;1,1"/>
</platform>
"""
ONE_MESSAGE = {"ranks": [[{"op": "send", "dst": 3, "bytes": 1_000_000}], [], [], [{"op": "recv", "src": 0}]]}


def test_a_json_platform_over_a_simgrid_file_sets_the_mpi_side(cw: ModuleType, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ft.xml").write_text(OVER_XML)
    trace = cw.load_trace(ONE_MESSAGE)
    bare = cw.simulate(cw.load_platform(tmp_path / "ft.xml"), trace).makespan
    assert bare == pytest.approx(4 * 10e-6 + 1e6 / 125e6, rel=1e-12)
    (tmp_path / "plain.json").write_text(json.dumps({"simgrid_platform": "ft.xml", "network": {}}))
    plain = cw.load_platform(tmp_path / "plain.json")
    assert plain.host_names == ["n0", "n1", "n2", "n3"]
    assert cw.simulate(plain, trace).makespan == bare
    # The sender's CPU overhead comes first: 1 ms more, and the same from TOML and from a dict
    # (whose path is taken from the working directory).
    (tmp_path / "slow.toml").write_text('simgrid_platform = "ft.xml"\n[network]\nsend_overhead = 0.001\n')
    monkeypatch.chdir(tmp_path)
    for source in (tmp_path / "slow.toml", {"simgrid_platform": "ft.xml", "network": {"send_overhead": 0.001}}):
        assert cw.simulate(cw.load_platform(source), trace).makespan == pytest.approx(bare + 0.001, rel=1e-12)
    # A route is the file's.
    assert cw.load_platform(tmp_path / "plain.json").route("n0", "n3") == cw.load_platform(tmp_path / "ft.xml").route("n0", "n3")


@pytest.mark.parametrize(("extra", "needle"), [
    ({"cluster": {"count": 4, "speed": 1e9}}, "cluster: a platform whose hosts come from a SimGrid file"),
    ({"network": {"topology": {"kind": "torus", "dims": [4]}}}, "network.topology: the SimGrid file"),
    ({"network": {"latency": 1e-6}}, "network.latency: the SimGrid file's links carry the latencies"),
    ({"simgrid_platform": "missing.xml"}, "p.json: simgrid_platform: no such file"),
    ({"network": {"model": "nope"}}, "network.model: unknown sharing model `nope`"),
])
def test_a_json_platform_over_a_simgrid_file_refuses_what_the_file_gives(tmp_path: Path, extra: dict, needle: str) -> None:
    (tmp_path / "ft.xml").write_text(OVER_XML)
    (tmp_path / "trace.json").write_text(json.dumps(ONE_MESSAGE))
    doc = {"simgrid_platform": "ft.xml", "network": {}} | extra
    (tmp_path / "p.json").write_text(json.dumps(doc))
    proc = run_cli("simulate", tmp_path / "p.json", tmp_path / "trace.json")
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr, proc.stderr


# A zone's first element after its props picks the branch of SimGrid's DTD: a link there puts
# the zone among the zones of hosts, where zones and clusters are refused. Both readers must
# agree on every case.
LINK = '<link id="l0" bandwidth="1GBps" latency="1us"/>'
OTHER_LINK = '<link id="l9" bandwidth="1GBps" latency="1us"/>'
ZONE_1 = '<zone id="z1" routing="Full"><host id="h1" speed="1Gf"/></zone>'
ZONE_2 = '<zone id="z2" routing="Full"><host id="h2" speed="1Gf"/></zone>'
CLUSTER = '<cluster id="c1" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"/>'
ZONE_ORDERS = {
    "link_then_zone": (LINK + ZONE_1, False),
    "link_then_cluster": (LINK + CLUSTER, False),
    "prop_links_then_zone": ('<prop id="p" value="v"/>' + LINK + OTHER_LINK + ZONE_1, False),
    "zone_link_zone": (ZONE_1 + LINK + ZONE_2, True),
    "cluster_link_zone": (CLUSTER + LINK + ZONE_1, True),
}


def zone_order_file(tmp_path: Path, name: str) -> tuple[Path, bool]:
    children, accepted = ZONE_ORDERS[name]
    path = tmp_path / f"{name}.xml"
    path.write_text(HEAD + f'<zone id="w" routing="Full">\n{children}\n</zone>\n</platform>\n')
    return path, accepted


@pytest.mark.parametrize("name", sorted(ZONE_ORDERS))
def test_a_zone_starting_with_a_link_holds_no_zones(cw: ModuleType, tmp_path: Path, name: str) -> None:
    path, accepted = zone_order_file(tmp_path, name)
    if accepted:
        assert len(cw.load_platform(path)) >= 2
    else:
        with pytest.raises(cw.InputError, match=r"<zone id=\"w\">: the zone's first element is a <link>"):
            cw.load_platform(path)


@requires_simgrid
@pytest.mark.parametrize("name", sorted(ZONE_ORDERS))
def test_simgrid_reads_the_same_zone_orders(tmp_path: Path, name: str) -> None:
    path, accepted = zone_order_file(tmp_path, name)
    if accepted:
        assert run_peer("hosts", path)
    else:
        with pytest.raises(PeerError, match="is not allowed here"):
            run_peer("hosts", path)
