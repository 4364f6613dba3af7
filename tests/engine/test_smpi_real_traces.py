"""Real traces replayed as smpirun replays them by default (issue 39): NAS IS, NPB LU, MG and
FT and HPCC's HPL and PTRANS, traced by ``smpirun -trace-ti`` (tests/data/ti_real/README.md),
replayed by SMPI 3.32 with no option but ``network/optim:Full`` and by commaware's
``simgrid-3.32`` preset on a fat tree, a torus and a dragonfly written by ``commaware platform
export``: with no collective algorithm named (SMPI's ``default`` selector on both sides), with
the algorithms named, and with those algorithms and ``network/model:SMPI`` in the file's
``<config>`` (nothing else given to either). Within 1e-6: SMPI's default ``surf/precision``
(1e-9 s) merges close events, which moves its makespans by up to a few 1e-7 relative here; with
1e-13 the difference falls below 1e-11 (checked on one trace).

``benches/bench_smpi_defaults.py`` rebuilds and retraces the programs from their sources and
prints the same rows. Needs ``smpirun`` and ``smpicxx`` (Debian ``simgrid``), as the other SMPI
tests.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from commaware import load_platform, load_trace, simulate

import smpi_replay
from conftest import requires_smpi_mark

SMPI_OK, SMPI_REASON = smpi_replay.smpi_available()
requires_smpi = requires_smpi_mark((SMPI_OK, SMPI_REASON), "SMPI replay of real traces")

ARCHIVE = Path(__file__).resolve().parents[1] / "data" / "ti_real" / "npb_hpcc_8.tar.xz"
TRACES = ("is.S", "lu.S", "mg.S", "ft.S", "hpl", "ptrans")
RANKS = 8
TOLERANCE = 1e-6


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ti_real")
    with tarfile.open(ARCHIVE) as archive:
        archive.extractall(root, filter="data")
    return root


@pytest.fixture(scope="module")
def fabrics(tmp_path_factory) -> dict[str, tuple[Path, Path, list[str]]]:
    """Per fabric: its SimGrid file, the same file with a ``<config>`` naming the algorithms,
    and its host names."""
    root = tmp_path_factory.mktemp("fabrics")
    config = {"network/model": "SMPI", **{f"smpi/{c}": a for c, a in smpi_replay.default_algorithms(RANKS).items()}}
    out = {}
    for name, spec in smpi_replay.TOPOLOGY_PLATFORMS.items():
        platform = load_platform(spec)
        text = platform.export("simgrid")
        plain, configured = root / f"{name}.xml", root / f"{name}-config.xml"
        plain.write_text(text)
        configured.write_text(smpi_replay.with_config(text, config))
        out[name] = (plain, configured, platform.host_names)
    return out


@requires_smpi
@pytest.mark.parametrize("name", TRACES)
def test_real_trace_replays_to_smpiruns_default_makespan(traces, fabrics, name):
    assert SMPI_OK, SMPI_REASON
    index = traces / name / "index.txt"
    trace = load_trace(index, format="ti")
    algorithms = smpi_replay.default_algorithms(RANKS)
    coll = ",".join(f"{c}={a}" for c, a in algorithms.items())
    misses = []
    for fabric, (plain, configured, hosts) in fabrics.items():
        cases = {
            "default": (plain, None, {"smpi": "simgrid-3.32"}),
            "named": (plain, algorithms, {"smpi": "simgrid-3.32", "coll": coll}),
            "config": (configured, None, {}),
        }
        for mode, (xml, named, options) in cases.items():
            smpi = smpi_replay.run_smpi_replay({}, index, platform_file=xml, host_names=hosts, bare=True,
                                               collectives=named)
            ours = simulate(load_platform(xml), trace, **options)
            if abs(ours.makespan - smpi.makespan) > TOLERANCE * smpi.makespan:
                misses.append((fabric, mode, smpi.makespan, ours.makespan))
            assert ours.makespan > 1e-3
    assert not misses, misses


@requires_smpi
def test_the_remaining_difference_is_smpis_event_precision(traces, fabrics):
    """MG on the fat tree: within 1e-6 of a bare smpirun, within 1e-11 once SMPI merges no
    event closer than 1e-13 s (so the few 1e-7 are SMPI's ``surf/precision``, not a model
    difference)."""
    assert SMPI_OK, SMPI_REASON
    index = traces / "mg.S" / "index.txt"
    plain, _, hosts = fabrics["fat_tree_8"]
    ours = simulate(load_platform(plain), load_trace(index, format="ti"), smpi="simgrid-3.32").makespan
    coarse = smpi_replay.run_smpi_replay({}, index, platform_file=plain, host_names=hosts, bare=True).makespan
    fine = smpi_replay.run_smpi_replay({}, index, platform_file=plain, host_names=hosts, bare=True,
                                       extra_cfg=["surf/precision:1e-13"]).makespan
    assert abs(ours - fine) <= 1e-11 * fine, (ours, fine)
    assert abs(ours - coarse) > 1e-9 * coarse, (ours, coarse)
