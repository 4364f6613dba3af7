"""Placements (`rrn`, `rrp`, `random`, a hostfile) on every kind of topology, and the hostfile's
bad input.

The host order is SimGrid's: the repository's peer ``tests/peers/simgrid_platform.cpp`` in
``hosts`` mode prints the hosts SimGrid 3.32 loads from the same file. It lists them sorted by
name (``Engine::get_all_hosts``), so the platforms here name their hosts so that the name order
is the document order (radicals of two digits, zone hosts in alphabetical order): the expected
placements are built from the peer's list, never from ours.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from conftest import requires_simgrid_mark, run_cli
from topology.test_simgrid_xml import HEAD, peer_available, run_peer

requires_simgrid = requires_simgrid_mark(peer_available(), "SimGrid platform")

CORES = 2


def cluster(topology: str, params: str, hosts: int) -> str:
    return HEAD + (f'  <cluster id="c" prefix="h" suffix="" radical="10-{9 + hosts}" speed="1Gf" core="{CORES}" '
                   f'bw="125MBps" lat="50us" topology="{topology}" topo_parameters="{params}"/>\n</platform>\n')


def graph_zone() -> str:
    """Four hosts on one router (Floyd: shortest paths over the declared links); SimGrid's DTD
    wants the hosts and routers, then the links, then the routes."""
    names = ("alpha", "bravo", "charlie", "delta")
    hosts = "".join(f'  <host id="{n}" speed="1Gf" core="{CORES}"/>\n' for n in names)
    links = "".join(f'  <link id="l{n}" bandwidth="1GBps" latency="1us"/>\n' for n in names)
    routes = "".join(f'  <route src="{n}" dst="r"><link_ctn id="l{n}"/></route>\n' for n in names)
    return HEAD + f'<zone id="G" routing="Floyd">\n{hosts}  <router id="r"/>\n{links}{routes}</zone>\n</platform>\n'


PLATFORMS = {
    "flat": cluster("FLAT", "", 5),
    "torus": cluster("TORUS", "3,2", 6),
    "fat_tree": cluster("FAT_TREE", "2;2,2;1,2;1,1", 4),
    "dragonfly": cluster("DRAGONFLY", "1,1;2,1;2,1;2", 8),
    "graph_zone": graph_zone(),
}


def ranks_hosts(platform: Path, trace: Path, *options: str) -> list[str]:
    proc = run_cli("simulate", platform, trace, "--json", "--quiet", *options, check=True)
    return [r["host"] for r in json.loads(proc.stdout)["ranks"]]


def empty_trace(path: Path, ranks: int) -> Path:
    path.write_text(json.dumps({"ranks": [[] for _ in range(ranks)]}))
    return path


@requires_simgrid
@pytest.mark.parametrize("kind", sorted(PLATFORMS))
def test_placements_follow_simgrids_host_order(tmp_path: Path, kind: str) -> None:
    platform = tmp_path / f"{kind}.xml"
    platform.write_text(PLATFORMS[kind])
    peer = run_peer("hosts", platform)
    hosts = [line[1] for line in peer]
    assert {int(line[3]) for line in peer} == {CORES}
    n = len(hosts)
    trace = empty_trace(tmp_path / "t.json", n + 1)  # one more rank than hosts: rrn wraps round
    assert ranks_hosts(platform, trace, "--placement", "rrn") == [hosts[i % n] for i in range(n + 1)]
    assert ranks_hosts(platform, trace, "--placement", "rrp") == [hosts[i // CORES] for i in range(n + 1)]
    drawn = ranks_hosts(platform, trace, "--placement", "random", "--seed", "7")
    assert set(drawn) <= set(hosts) and max(Counter(drawn).values()) <= CORES
    assert drawn == ranks_hosts(platform, trace, "--placement", "random", "--seed", "7")
    # A hostfile, last host first, two slots each: rank i on the i-th slot.
    hostfile = tmp_path / "hosts.txt"
    hostfile.write_text("".join(f"{h}:2\n" for h in reversed(hosts)))
    assert ranks_hosts(platform, trace, "--hostfile", hostfile) == [h for h in reversed(hosts) for _ in (0, 1)][:n + 1]


def test_hostfile_format(tmp_path: Path) -> None:
    """SMPI's lines (`name`, `name:slots`) with blank lines, comments and blanks around the parts."""
    platform = tmp_path / "p.xml"
    platform.write_text(PLATFORMS["flat"])
    hostfile = tmp_path / "hosts.txt"
    hostfile.write_text("# the job's nodes\n\nh13:2   # two ranks\n   \nh11\n h14 : 1 \nh10:2\n")
    trace = empty_trace(tmp_path / "t.json", 5)
    assert ranks_hosts(platform, trace, "--hostfile", hostfile) == ["h13", "h13", "h11", "h14", "h10"]


def test_hostfile_in_the_api(tmp_path: Path) -> None:
    import commaware

    platform = tmp_path / "p.xml"
    platform.write_text(PLATFORMS["torus"])
    hostfile = tmp_path / "hosts.txt"
    hostfile.write_text("h15\nh12:2\n")
    trace = empty_trace(tmp_path / "t.json", 3)
    result = commaware.simulate(platform, trace, hostfile=hostfile)
    assert result.rank_columns["host"] == ["h15", "h12", "h12"]
    with pytest.raises(commaware.OptionsError) as info:
        commaware.simulate(platform, trace, hostfile=hostfile, placement="rrn")
    assert "give either a hostfile or a placement" in str(info.value)


@pytest.mark.parametrize(("text", "ranks", "message"), [
    ("h10\nh99\n", 1, "hosts.txt: line 2: unknown host `h99` (the platform has 5 hosts)"),
    ("h10:0\n", 1, "hosts.txt: line 1: host `h10`: 0 slots (at least 1)"),
    ("\n# c\nh10:-2\n", 1, "hosts.txt: line 3: host `h10`: slots `-2` is not a whole number from 1 to 65536"),
    ("h10:two\n", 1, "hosts.txt: line 1: host `h10`: slots `two` is not a whole number from 1 to 65536"),
    ("h10:1e3\n", 1, "hosts.txt: line 1: host `h10`: slots `1e3` is not a whole number"),
    ("h10:99999999999999999999999999\n", 1, "hosts.txt: line 1: host `h10`: 1e26 slots, at most 65536"),
    ("h10:70000\n", 1, "hosts.txt: line 1: host `h10`: 70000 slots, at most 65536 (2^16) a line"),
    (":3\n", 1, "hosts.txt: line 1: no host name before `:`"),
    ("h10:2\nh11\n", 4, "hosts.txt: 3 slot(s) for 4 ranks: the hostfile needs a slot for every rank"),
    ("h10:3\n", 3, "hosts.txt: line 1: host `h10` gets more ranks than its 2 core(s)"),
    ("# nothing\n", 1, "hosts.txt: 0 slot(s) for 1 ranks"),
])
def test_bad_hostfiles_exit_2_with_file_line_and_reason(tmp_path: Path, text: str, ranks: int, message: str) -> None:
    platform = tmp_path / "p.xml"
    platform.write_text(PLATFORMS["flat"])
    (tmp_path / "hosts.txt").write_text(text)
    trace = empty_trace(tmp_path / "t.json", ranks)
    proc = run_cli("simulate", platform, trace, "--json", "--hostfile", tmp_path / "hosts.txt")
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
