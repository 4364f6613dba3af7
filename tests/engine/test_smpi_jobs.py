"""Jobs that share a fabric (issue 41, item 5): several TI traces replayed together, each job's
ranks from its start time on its hosts, by SMPI 3.32 (``tests/peers/smpi_replay_jobs.cpp``:
the setting of SimGrid's ``replay_multiple_manual`` example, every job in one simulation) and by
``commaware.simulate_jobs``, on a fat tree, a torus and a dragonfly written by ``commaware
platform export``: every rank's end agrees within 1e-9.

SMPI runs with smpirun's defaults (its timing model, protocol and default collective selector,
crosstraffic on), ``network/optim:Full`` and ``surf/precision`` 1e-13, and commaware with its
``simgrid-3.32`` preset: the setting of tests/engine/test_smpi_replay_topologies.py's preset
test. Start times are whole seconds, as SimGrid's example reads them; hosts go to SMPI by index
in SimGrid's host order (sorted by name). Jobs overlap in time on interleaved hosts, so that
their messages share links, and a job starts on hosts another one has left.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from commaware import load_platform, load_trace, simulate, simulate_jobs
from commaware.traces.export import export_ti

import smpi_replay
from conftest import requires_smpi_mark
from engine.test_smpi_real_traces import traces  # noqa: F401  (the real NPB/HPCC TI traces, a fixture)
from engine.test_smpi_replay_topologies import mixed_trace
from smpi_replay_jobs import PeerJob, run_smpi_jobs

SMPI_OK, SMPI_REASON = smpi_replay.smpi_available()
requires_smpi = requires_smpi_mark((SMPI_OK, SMPI_REASON), "SMPI replay of several jobs")

#: smpirun's defaults but for what makes event times exact, and crosstraffic on (as smpirun has it).
SMPI_TIMING = ["network/crosstraffic:1"]
TOLERANCE = 1e-9


def prefixed(trace: dict, seconds: float) -> dict:
    """`trace` with each rank computing `seconds` first."""
    return {"ranks": [[{"op": "compute", "seconds": seconds}, *ops] for ops in trace["ranks"]]}


def agree(tmp_path: Path, spec: dict, jobs: list[tuple[str, dict | Path, int, list[int]]]) -> None:
    """Run `jobs` (name, trace or TI index, start, host indices in our platform's order) in both
    simulators on `spec`'s SimGrid file; every rank's end must agree."""
    platform = load_platform(spec)
    xml = tmp_path / "fabric.xml"
    xml.write_text(platform.export("simgrid"))
    by_name = sorted(platform.host_names)
    indices = []
    for name, trace, _, _ in jobs:
        indices.append(trace if isinstance(trace, Path) else export_ti(trace, tmp_path / name, platform=spec))
    peer = [PeerJob(name, index, start, [by_name.index(platform.host_names[h]) for h in hosts])
            for (name, _, start, hosts), index in zip(jobs, indices)]
    theirs = run_smpi_jobs(spec, xml, peer, smpi_timing=SMPI_TIMING)
    ours = simulate_jobs(load_platform(xml), [(load_trace(index, format="ti"), start, hosts)
                                              for (_, _, start, hosts), index in zip(jobs, indices)],
                         smpi="simgrid-3.32")
    for (name, _, start, _), times in zip(jobs, ours):
        assert times.start == start
        assert times.rank_ends == pytest.approx(theirs[name], rel=TOLERANCE, abs=1e-12), name
    # The jobs did meet: each overlapping pair slowed at least one of them down, against each
    # alone on the same hosts.
    alone = [simulate_jobs(load_platform(xml), [(load_trace(index, format="ti"), start, hosts)], smpi="simgrid-3.32")[0]
             for (_, _, start, hosts), index in zip(jobs, indices)]
    assert any(t.end > a.end * (1 + 1e-6) for t, a in zip(ours, alone)), [(t.end, a.end) for t, a in zip(ours, alone)]


#: (platform, hosts of job b, hosts of jobs a and c): interleaved so that b's and c's routes share
#: links. On the 3x3 torus of the other SMPI tests two routes share a link only where they share
#: a host (every route is one hop a dimension), so the torus here is a ring of 8.
FABRICS = {
    "fat_tree_8": (smpi_replay.TOPOLOGY_PLATFORMS["fat_tree_8"], [0, 1, 4, 5], [2, 3, 6, 7]),
    "torus_8": (smpi_replay.topology_platform(8, {"kind": "torus", "id": "tor", "dims": [8]}), [0, 2, 4, 6], [1, 3, 5, 7]),
    # Hosts of three groups: b's and c's messages share the global links.
    "dragonfly_18": (smpi_replay.TOPOLOGY_PLATFORMS["dragonfly_18"], [0, 6, 12, 2], [1, 7, 13, 3]),
}


@requires_smpi
@pytest.mark.parametrize("name", sorted(FABRICS))
def test_three_jobs_on_interleaved_hosts_end_as_in_smpi(tmp_path, name):
    """Job a from 0 s, job b from 0 s on other hosts (computing for 1 s first), job c from 1 s
    on a's hosts (a has ended): b's and c's messages meet."""
    assert SMPI_OK, SMPI_REASON
    spec, b_hosts, c_hosts = FABRICS[name]
    trace = mixed_trace(4)
    agree(tmp_path, spec, [
        ("a", trace, 0, c_hosts),
        ("b", prefixed(trace, 1.0), 0, b_hosts),
        ("c", trace, 1, c_hosts),
    ])


def two_cores(spec: dict) -> dict:
    """`spec` with 2 cores a host: two jobs' ranks share a host, each on a core of its own (a
    rank has a core of its own in commaware; SimGrid time-shares a host's cores)."""
    return {**spec, "cluster": {**spec["cluster"], "cores": 2}}


#: Per platform: job a's trace, job b's, and b's hosts. A's rank i is on host i and b's
#: interleaved with a's, so that their messages share NICs and links (on the fat tree and the
#: torus every host holds a rank of each).
REAL_PAIRS = {
    "fat_tree_8": ("lu.S", "mg.S", [1, 3, 5, 7, 0, 2, 4, 6]),
    "torus_9": ("hpl", "ft.S", [1, 3, 5, 7, 0, 2, 4, 6]),
    "dragonfly_18": ("lu.S", "hpl", [1, 3, 5, 7, 9, 11, 13, 15]),
}


@requires_smpi
@pytest.mark.parametrize("name", sorted(REAL_PAIRS))
def test_real_traces_that_share_a_fabric_end_as_in_smpi(tmp_path, traces, name):
    """Two real traces from 0 s on hosts they share (the p2p-heavy LU, MG and HPL: their
    waits are what SimGrid's multi-job replay gets wrong without the peer's fix, see
    tests/peers/smpi_replay_jobs.cpp)."""
    assert SMPI_OK, SMPI_REASON
    spec = two_cores(smpi_replay.TOPOLOGY_PLATFORMS[name])
    a, b, b_hosts = REAL_PAIRS[name]
    agree(tmp_path, spec, [
        ("a", traces / a / "index.txt", 0, list(range(8))),
        ("b", traces / b / "index.txt", 0, b_hosts),
    ])


@requires_smpi
def test_cosched_explicit_replays_real_traces_as_smpi(tmp_path, traces):
    """The same through `cosched run --policy explicit`: a workload whose jobs name real
    traces, start times and hosts (a schedule a cluster ran); each job's end is SMPI's last
    rank end, and two that shared hosts ran slower than alone."""
    assert SMPI_OK, SMPI_REASON
    import json

    from commaware import cosched

    spec = two_cores(smpi_replay.TOPOLOGY_PLATFORMS["fat_tree_8"])
    platform = load_platform(spec)
    xml = tmp_path / "fabric.xml"
    xml.write_text(platform.export("simgrid"))
    jobs = [("lu", "lu.S", 0, list(range(8))), ("hpl", "hpl", 0, [1, 3, 5, 7, 0, 2, 4, 6]),
            ("mg", "mg.S", 1, [2, 3, 4, 5, 6, 7, 0, 1])]
    workload = tmp_path / "schedule.json"
    workload.write_text(json.dumps({"jobs": [
        {"id": k, "submit_s": 0, "procs": 8, "runtime_s": 1, "start_s": start, "hosts": hosts,
         "trace": str(traces / trace / "index.txt")}
        for k, (_, trace, start, hosts) in enumerate(jobs)]}))
    run = cosched.run(workload, "explicit", platform=xml, smpi="simgrid-3.32")
    by_name = sorted(platform.host_names)
    theirs = run_smpi_jobs(spec, xml, [PeerJob(name, traces / trace / "index.txt", start,
                                               [by_name.index(platform.host_names[h]) for h in hosts])
                                       for name, trace, start, hosts in jobs], smpi_timing=SMPI_TIMING)
    ends = list(run.jobs["end"])
    for (name, _, _, _), end in zip(jobs, ends):
        assert end == pytest.approx(max(theirs[name]), rel=TOLERANCE, abs=1e-12), name
    # lu and hpl met: at least one ran slower than alone.
    slowdown = list(run.jobs["slowdown"])
    assert max(slowdown[:2]) > 1 + 1e-6, slowdown


@requires_smpi
def test_the_peer_replays_a_real_trace_alone_as_smpirun_does(tmp_path, traces):
    """The peer's check: NPB MG alone ends in the peer as under smpirun -replay (crosstraffic on
    in both), to SMPI's own precision."""
    assert SMPI_OK, SMPI_REASON
    spec = smpi_replay.TOPOLOGY_PLATFORMS["fat_tree_8"]
    platform = load_platform(spec)
    xml = tmp_path / "fabric.xml"
    xml.write_text(platform.export("simgrid"))
    index = traces / "mg.S" / "index.txt"
    by_name = sorted(platform.host_names)
    peer = run_smpi_jobs(spec, xml, [PeerJob("mg", index, 0, [by_name.index(h) for h in platform.host_names[:8]])],
                         smpi_timing=SMPI_TIMING)["mg"]
    smpirun = smpi_replay.run_smpi_replay({}, index, platform_file=xml, host_names=platform.host_names, bare=True,
                                          extra_cfg=["surf/precision:1e-13"])
    assert peer == pytest.approx(smpirun.rank_ends, rel=1e-12)
    assert max(peer) > 0.07  # its waits wait (0.0496 s when they return at once)


def test_a_job_alone_ends_as_simulate_shifted_by_its_start():
    spec = smpi_replay.TOPOLOGY_PLATFORMS["fat_tree_8"]
    trace = mixed_trace(4)
    (times,) = simulate_jobs(spec, [(trace, 3, ["node-4", "node-5", "node-6", "node-7"])])
    placed = {**trace, "placement": ["node-4", "node-5", "node-6", "node-7"]}
    alone = simulate(spec, placed)
    assert times.rank_ends == pytest.approx([3 + e for e in alone.ranks["end"]], rel=1e-12)


def fat_tree(down: list[int], up: list[int]) -> dict:
    return {"cluster": {"count": down[0] * down[1], "speed": 1e9, "prefix": "n"},
            "network": {"bandwidth": 1e8, "latency": 0, "eager_threshold": 0,
                        "topology": {"kind": "fat_tree", "id": "ft", "down": down, "up": up, "parallel": [1, 1]}}}


def pair(bytes_: float) -> dict:
    return {"ranks": [[{"op": "send", "dst": 1, "bytes": bytes_}], [{"op": "recv", "src": 0}]]}


def test_jobs_under_different_leaves_of_a_fat_tree_do_not_slow_each_other():
    """Two leaves of 2 hosts under one top switch: a job within each leaf uses only its leaf's
    links, so together each takes as long as alone (1e8 bytes at 1e8 B/s: 1 s)."""
    spec = fat_tree([2, 2], [1, 1])
    together = simulate_jobs(spec, [(pair(1e8), 0, [0, 1]), (pair(1e8), 0, [2, 3])])
    assert [t.end for t in together] == pytest.approx([1.0, 1.0], rel=1e-12)


def test_two_jobs_whose_only_shared_link_is_one_up_link_share_it():
    """Hosts 0 and 1 under leaf 0, hosts 2 and 3 under leaf 1, one top switch: job a sends 0 -> 2,
    job b 1 -> 3. Both cross leaf 0's up-link and leaf 1's down-link (one each way, equal
    latencies: CM02 gives equal shares), and nothing else in common: each gets half of it,
    1e8 bytes at 5e7 B/s = 2 s; job b alone takes 1 s."""
    spec = fat_tree([2, 2], [1, 1])
    together = simulate_jobs(spec, [(pair(1e8), 0, [0, 2]), (pair(1e8), 0, [1, 3])])
    assert [t.end for t in together] == pytest.approx([2.0, 2.0], rel=1e-12)
    (alone,) = simulate_jobs(spec, [(pair(1e8), 0, [1, 3])])
    assert alone.end == pytest.approx(1.0, rel=1e-12)
    # Job b 0.5 s later: they share the link from then on.
    staggered = simulate_jobs(spec, [(pair(1e8), 0, [0, 2]), (pair(1e8), 0.5, [1, 3])])
    # a alone 0.5 s (5e7 bytes), then half rate for its 5e7 left: 1 s more -> 1.5 s; b got 5e7 by
    # then, and its other 5e7 at full rate: 0.5 s more -> 2.0 s.
    assert [t.end for t in staggered] == pytest.approx([1.5, 2.0], rel=1e-12)


def test_bad_jobs_are_refused_with_the_field_named():
    spec = fat_tree([2, 2], [1, 1])
    from commaware import OptionsError, PlacementError

    with pytest.raises(PlacementError, match=r"jobs\[0\]\.hosts\[1\]: unknown host 'nope'"):
        simulate_jobs(spec, [(pair(1.0), 0, ["n0", "nope"])])
    with pytest.raises(OptionsError, match=r"jobs\[1\]\.hosts: lists 1 hosts for 2 ranks"):
        simulate_jobs(spec, [(pair(1.0), 0, [0, 1]), (pair(1.0), 0, [2])])
    with pytest.raises(OptionsError, match=r"jobs\[0\]\.start: must be a time >= 0 s"):
        simulate_jobs(spec, [(pair(1.0), -1, [0, 1])])
    # One core a host (the default): a rank of a second job on a host a running job holds is
    # refused (commaware gives each rank a core of its own), not time-shared.
    with pytest.raises(OptionsError, match=r"jobs\[1\]\.hosts: host `n1` would run 2 ranks at 0 s but has 1 cores"):
        simulate_jobs(spec, [(pair(1e8), 0, [0, 1]), (pair(1.0), 0, [1, 2])])
