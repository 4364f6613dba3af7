"""A TI trace replayed by SMPI (``smpirun -platform FILE.xml -replay``, SimGrid 3.32) and by
``commaware simulate … --format ti`` on a fat tree and a torus agrees within 1e-9 (issue 28,
item 9): point-to-point messages (eager and rendezvous, to self too) and collectives with their
algorithms named in both simulators.

FILE.xml is written by ``commaware platform export`` from our JSON topology (a `<cluster>`
with ``topology="FAT_TREE"`` / ``"TORUS"``); SMPI is set up as in the star tests
(tests/peers/smpi_replay.py: CM02, crosstraffic off, SMPI's factors and overheads neutral),
so its CM02 still weights shares by route latency and bounds flows by TCP-gamma, as ours.
SMPI adds a 16-byte envelope to every message: a SimGrid file cannot say so, so our side
replays the JSON platform with ``envelope_bytes`` 16, and the XML file itself is checked to
replay exactly as the JSON platform does without the envelope.

Needs ``smpirun`` and ``smpicxx`` (Debian package ``simgrid``); without them these tests skip,
unless ``COMMAWARE_REQUIRE_SIMGRID=1`` (set by ``.ci/run``): then they fail with the reason.
"""

from __future__ import annotations


import pytest

from commaware import load_platform, load_trace, simulate
from commaware.traces.export import export_ti

import smpi_replay
from conftest import requires_smpi_mark

SMPI_OK, SMPI_REASON = smpi_replay.smpi_available()
requires_smpi = requires_smpi_mark((SMPI_OK, SMPI_REASON), "SMPI replay on topologies")


TOPOLOGIES = {name: smpi_replay.TOPOLOGY_PLATFORMS[name] for name in ("fat_tree_8", "torus_9")}


def mixed_trace(n: int) -> dict:
    """Point-to-point rings and cross messages (eager and rendezvous, one to self), then a
    bcast, an allreduce, an alltoall and a barrier, ranks arriving apart."""
    ranks = []
    for r in range(n):
        right, left = (r + 1) % n, (r - 1) % n
        to, frm = (r + n // 2) % n, (r - n // 2) % n
        ranks.append([
            {"op": "compute", "flops": 1e6 * (r + 1)},
            {"op": "isend", "dst": right, "bytes": 1000, "tag": 1}, {"op": "irecv", "src": left, "tag": 1},
            {"op": "waitall"},
            {"op": "isend", "dst": to, "bytes": 200000, "tag": 2}, {"op": "recv", "src": frm, "tag": 2},
            {"op": "wait", "req": 2},
            {"op": "sendrecv", "dst": left, "bytes": 60000, "src": right},
            {"op": "isend", "dst": r, "bytes": 70000 + r, "tag": 5}, {"op": "recv", "src": r, "tag": 5},
            {"op": "wait", "req": 3},
            {"op": "compute", "flops": 2e5 * ((3 * r) % n)},
            {"op": "bcast", "root": 1, "bytes": 100000},
            {"op": "allreduce", "bytes": 50000},
            {"op": "alltoall", "bytes": 20000},
            {"op": "barrier"},
        ])
    return {"ranks": ranks}


#: Algorithms named in both simulators (the same names; tests/engine/test_smpi_replay.py checks
#: each one against SMPI on stars). `ring` alltoall: the torus has 9 ranks, not a power of two.
ALGORITHMS = {"bcast": "binomial_tree", "allreduce": "rdb", "alltoall": "ring", "barrier": "ompi_bruck"}


def exported(tmp_path, name: str, spec: dict):
    """The platform `spec`, its SimGrid file (``commaware platform export``) and the TI trace of
    :func:`mixed_trace` on it."""
    platform = load_platform(spec)
    xml = tmp_path / f"{name}.xml"
    xml.write_text(platform.export("simgrid"))
    index = export_ti(mixed_trace(spec["cluster"]["count"]), tmp_path / "ti", platform=spec)
    return platform, xml, index


@requires_smpi
@pytest.mark.parametrize("name", sorted(TOPOLOGIES))
def test_ti_replay_matches_smpi_on_topologies(tmp_path, name):
    assert SMPI_OK, SMPI_REASON
    spec = TOPOLOGIES[name]
    ours_platform, xml, index = exported(tmp_path, name, spec)
    smpi = smpi_replay.run_smpi_replay(spec, index, collectives=ALGORITHMS, platform_file=xml,
                                       host_names=ours_platform.host_names)
    coll = ",".join(f"{k}={v}" for k, v in ALGORITHMS.items())
    with_envelope = {**spec, "network": {**spec["network"], "envelope_bytes": smpi_replay.SMPI_ENVELOPE_BYTES}}
    ours = simulate(load_platform(with_envelope), load_trace(index, format="ti"), coll=coll)
    assert smpi.makespan > 0.01
    assert ours.makespan == pytest.approx(smpi.makespan, rel=1e-9), (name, smpi.makespan, ours.makespan)
    assert ours.ranks["end"].tolist() == pytest.approx(smpi.rank_ends, rel=1e-9, abs=1e-12)
    # The XML file is the same platform: replayed from it (no envelope) as from the JSON.
    from_xml = simulate(load_platform(xml), load_trace(index, format="ti"), coll=coll)
    from_json = simulate(ours_platform, load_trace(index, format="ti"), coll=coll)
    assert from_xml.makespan == from_json.makespan
    # And the envelope is what separates it from SMPI (it is not already within 1e-9).
    assert abs(from_xml.makespan - smpi.makespan) > 1e-9 * smpi.makespan


#: The three fabrics of smpirun's default-configuration check: 8, 9 and 18 hosts.
DEFAULT_CONFIGURATION = smpi_replay.TOPOLOGY_PLATFORMS


@requires_smpi
@pytest.mark.parametrize("name", sorted(DEFAULT_CONFIGURATION))
def test_the_preset_replays_to_a_bare_smpiruns_makespan_on_topologies(tmp_path, name):
    """smpirun as users run it (no option but ``network/optim:Full`` and exact event times):
    SMPI's timing model, its protocol (``async-small-thresh`` 0, the envelope), crosstraffic,
    ``weight-S`` 8775 and its default collective selector, all implied by commaware's
    ``--smpi simgrid-3.32`` on the SimGrid file itself."""
    assert SMPI_OK, SMPI_REASON
    spec = DEFAULT_CONFIGURATION[name]
    ours_platform, xml, index = exported(tmp_path, name, spec)
    smpi = smpi_replay.run_smpi_replay(spec, index, platform_file=xml, host_names=ours_platform.host_names,
                                       smpi_timing=["network/crosstraffic:1"])
    trace = load_trace(index, format="ti")
    ours = simulate(load_platform(xml), trace, smpi="simgrid-3.32")
    assert ours.makespan == pytest.approx(smpi.makespan, rel=1e-9), (name, smpi.makespan, ours.makespan)
    assert ours.ranks["end"].tolist() == pytest.approx(smpi.rank_ends, rel=1e-9, abs=1e-12)
    # Crosstraffic shows (weight-S does not here: every link has one bandwidth, so it weighs
    # routes as their latencies already do).
    other = simulate(load_platform(xml), trace, smpi="simgrid-3.32", params={"crosstraffic": 0}).makespan
    assert other != pytest.approx(smpi.makespan, rel=1e-6), name


@requires_smpi
@pytest.mark.parametrize("name", sorted(DEFAULT_CONFIGURATION))
def test_the_files_config_is_applied_as_smpirun_applies_it(tmp_path, name):
    """Settings in the platform file's ``<config>`` (SMPI's network model, its
    ``async-small-thresh``, collective algorithms) reach both simulators from the file alone:
    SMPI reads them, and commaware replays the file with no option."""
    assert SMPI_OK, SMPI_REASON
    spec = DEFAULT_CONFIGURATION[name]
    plain, xml, index = exported(tmp_path, name, spec)
    settings = {"network/model": "SMPI", "smpi/async-small-thresh": "65536", "smpi/bcast": "binomial_tree",
                "smpi/allreduce": "rdb"}
    xml.write_text(smpi_replay.with_config(xml.read_text(), settings))
    smpi = smpi_replay.run_smpi_replay(spec, index, platform_file=xml, host_names=plain.host_names,
                                       smpi_timing=["network/crosstraffic:1"])
    trace = load_trace(index, format="ti")
    ours = simulate(load_platform(xml), trace)
    assert ours.makespan == pytest.approx(smpi.makespan, rel=1e-9), (name, smpi.makespan, ours.makespan)
    # The settings matter: smpirun's defaults alone give another makespan.
    assert simulate(plain, trace, smpi="simgrid-3.32").makespan != pytest.approx(smpi.makespan, rel=1e-6)
