"""SMPI's timing model (``network.smpi``): commaware with the ``simgrid-3.32`` preset against
SMPI 3.32 in its default timing configuration (``network/model:SMPI`` with its piecewise
``smpi/bw-factor`` and ``smpi/lat-factor``, ``network/weight-S`` 8775, default ``smpi/os``,
``smpi/or``, ``smpi/ois``), and with non-default overhead strings on both sides, to 1e-9
relative (tests/peers/smpi_replay.py; docs/formats.md, "SMPI's timing model").

Needs ``smpirun`` and ``smpicxx`` (Debian package ``simgrid``); without them the SMPI tests
skip, unless ``COMMAWARE_REQUIRE_SIMGRID=1`` (set by ``.ci/run``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commaware import load_platform, load_trace, simulate
from commaware.traces.export import export_ti

import smpi_replay
from conftest import requires_smpi_mark

SMPI_OK, SMPI_REASON = smpi_replay.smpi_available()
requires_smpi = requires_smpi_mark((SMPI_OK, SMPI_REASON), "SMPI timing model")

#: SimGrid 3.32's breakpoints of smpi/bw-factor and smpi/lat-factor, on the simulated size
#: (payload + SMPI's 16-byte envelope).
BREAKPOINTS = [0, 257, 732, 1426, 3484, 5776, 9376, 15424, 65472]
#: Payloads whose simulated size is each breakpoint and one byte past it, both sides of the
#: eager threshold (65536), and rendezvous sizes.
SIZES = sorted({max(0, t - 16 + d) for t in BREAKPOINTS for d in (0, 1)} | {65535, 65536, 200000, 1000000})
#: Non-default overheads, in SimGrid's syntax, with sections below and above the sizes used.
OVERHEADS = {"os": "0:2e-6:1e-10;1000:4e-6:2e-10;70000:1us:0", "or": "0:3e-6:5e-11;5000:6e-6:0",
             "ois": "0:1.5e-6:0;20000:2.5e-6:3e-11"}


def cluster(n: int, **network) -> dict:
    return {"cluster": {"count": n, "speed": 1e9, "prefix": "n"},
            "network": {"bandwidth": 1.25e8, "latency": 1e-4, **network}}


def ping_pong() -> dict:
    """Every size of :data:`SIZES` from rank 0 to 1 (blocking) and back (isend, irecv)."""
    ranks: list[list[dict]] = [[], []]
    for s in SIZES:
        ranks[0] += [{"op": "send", "dst": 1, "bytes": s, "tag": 1}, {"op": "irecv", "src": 1, "tag": 2},
                     {"op": "wait", "req": len([o for o in ranks[0] if o["op"] == "irecv"])}]
        ranks[1] += [{"op": "recv", "src": 0, "tag": 1}, {"op": "isend", "dst": 0, "bytes": s, "tag": 2},
                     {"op": "compute", "flops": 1e4}]
    ranks[1].append({"op": "waitall"})
    return {"ranks": ranks}


def concurrent(n: int) -> dict:
    """Messages of different sizes (and so different factors) sharing links at once: each rank
    isends three sizes to its right and left neighbours and to itself, computes, receives them
    in another order, and waits for all; then a sendrecv and a blocking exchange."""
    ranks = []
    for r in range(n):
        right, left = (r + 1) % n, (r - 1) % n
        ops: list[dict] = [{"op": "compute", "flops": 2e5 * (r + 1)}]
        for k, s in enumerate(SIZES[3 + r::n][:3]):
            ops += [{"op": "isend", "dst": right, "bytes": s, "tag": 10 + k},
                    {"op": "isend", "dst": left, "bytes": SIZES[-1 - k - r], "tag": 20 + k}]
        ops.append({"op": "isend", "dst": r, "bytes": 3000 + r, "tag": 30})
        ops.append({"op": "compute", "flops": 1e5})
        for k in (2, 0, 1):
            ops += [{"op": "irecv", "src": left, "tag": 10 + k}, {"op": "irecv", "src": right, "tag": 20 + k}]
        ops += [{"op": "recv", "src": r, "tag": 30}, {"op": "waitall"},
                {"op": "sendrecv", "dst": right, "bytes": 5000 * (r + 1), "src": left},
                {"op": "send", "dst": right, "bytes": 600, "tag": 40}, {"op": "recv", "src": left, "tag": 40}]
        ranks.append(ops)
    return {"ranks": ranks}


def compare(tmp_path, trace: dict, platform: dict, *, overheads: dict[str, str] | None = None,
            collectives: dict[str, str] | None = None, coll: str | None = None) -> tuple[float, float]:
    """SMPI's makespan in its default timing model (with `overheads` as smpi/os, or, ois) and
    commaware's with the ``simgrid-3.32`` preset (with the same strings); `coll` is commaware's
    ``--coll`` instead when SMPI's options are not ours."""
    assert SMPI_OK, SMPI_REASON
    index = export_ti(trace, tmp_path / "ti", platform=platform)
    timing = [f"smpi/{k}:{v}" for k, v in (overheads or {}).items()]
    smpi = smpi_replay.run_smpi_replay(platform, index, collectives=collectives, smpi_timing=timing)
    spec = {"preset": "simgrid-3.32", **(overheads or {})}
    ours_platform = {**platform, "network": {**platform["network"], "smpi": spec,
                                             "envelope_bytes": smpi_replay.SMPI_ENVELOPE_BYTES}}
    coll = coll or ",".join(f"{k}={v}" for k, v in (collectives or {}).items()) or None
    ours = simulate(load_platform(ours_platform), load_trace(trace), coll=coll)
    return smpi.makespan, ours.makespan


@requires_smpi
@pytest.mark.parametrize("overheads", [None, OVERHEADS], ids=["default", "overheads"])
def test_ping_pong_across_every_breakpoint(tmp_path, overheads):
    smpi, ours = compare(tmp_path, ping_pong(), cluster(2), overheads=overheads)
    assert ours == pytest.approx(smpi, rel=1e-9), (smpi, ours)
    # and the neutral model is far from it
    neutral = simulate(load_platform(cluster(2, envelope_bytes=16)), load_trace(ping_pong())).makespan
    assert abs(neutral / smpi - 1) > 0.05


@requires_smpi
@pytest.mark.parametrize("overheads", [None, OVERHEADS], ids=["default", "overheads"])
@pytest.mark.parametrize("name, n, network", [("star4", 4, {}), ("star5_backbone", 5, {"backbone": 2e8}),
                                              ("star4_memory", 4, {"memory_bandwidth": 5e9, "memory_latency": 1e-6})])
def test_concurrent_messages_match_smpi(tmp_path, name, n, network, overheads):
    smpi, ours = compare(tmp_path, concurrent(n), cluster(n, **network), overheads=overheads)
    assert ours == pytest.approx(smpi, rel=1e-9), (name, smpi, ours)


@requires_smpi
def test_heterogeneous_links_match_smpi(tmp_path):
    """Hosts of different speeds and NIC bandwidths: SMPI's network/weight-S (8775) weighs routes
    of different bandwidths differently, yet on these traces the makespans agree."""
    from tests.engine.test_smpi_replay import P2P_PLATFORMS, ring_p2p

    n, platform = P2P_PLATFORMS["hetero4"]
    for k, trace in enumerate((ring_p2p(n), concurrent(n))):
        (tmp_path / str(k)).mkdir()
        smpi, ours = compare(tmp_path / str(k), trace, platform)
        assert ours == pytest.approx(smpi, rel=1e-9), (k, smpi, ours)


@requires_smpi
@pytest.mark.parametrize("n", [4, 5])
def test_traced_program_matches_smpi_default_configuration(tmp_path, n):
    """tests/peers/ti_program.c traced by `smpirun -trace-ti`, replayed by a bare smpirun (its
    default configuration but `network/optim:Full`, no collective option) and by `commaware
    simulate --format ti` with the preset alone: SMPI's timing model, protocol
    (async-small-thresh 0, the envelope, MPI_Test's growing sleep) and default collectives,
    point to point in every form."""
    from conftest import run_cli

    platform = cluster(n)
    index = smpi_replay.trace_program(Path(__file__).parents[1] / "peers" / "ti_program.c", n, platform, tmp_path / "run")
    smpi = smpi_replay.run_smpi_replay(platform, index, smpi_timing=[])
    ours_platform = tmp_path / "platform.json"
    ours_platform.write_text(json.dumps({**platform, "network": {**platform["network"], "smpi": "simgrid-3.32"}}))
    proc = run_cli("simulate", ours_platform, index, "--format", "ti", "--json")
    assert proc.returncode == 0, proc.stderr
    ours = json.loads(proc.stdout)["makespan"]
    assert ours == pytest.approx(smpi.makespan, rel=1e-9), (n, smpi.makespan, ours)
    # The same with commaware's protocol (async-small-thresh at the eager threshold, a flat
    # MPI_Test): SMPI's default is not that.
    flat = {**platform, "network": {**platform["network"], "test_seconds": 1e-4,
                                    "smpi": {"preset": "simgrid-3.32", "async_small_thresh": 65536}}}
    ours_platform.write_text(json.dumps(flat))
    proc = run_cli("simulate", ours_platform, index, "--format", "ti", "--json")
    assert json.loads(proc.stdout)["makespan"] != pytest.approx(smpi.makespan, rel=1e-6)


def test_malformed_factor_string_is_exit_2_naming_field_and_chunk(tmp_path):
    from conftest import run_cli

    platform = cluster(2, smpi={"preset": "simgrid-3.32", "bw_factor": "65472:0.94;1426:x"})
    path = tmp_path / "p.json"
    path.write_text(json.dumps(platform))
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(ping_pong()))
    proc = run_cli("simulate", path, trace, "--json")
    assert proc.returncode == 2
    assert "network.smpi.bw_factor" in proc.stderr and "chunk 2" in proc.stderr and "`x`" in proc.stderr, proc.stderr
    assert proc.stdout == ""


def test_smpi_option_is_the_platform_field(tmp_path):
    """``--smpi simgrid-3.32`` (``simulate(smpi=...)``) equals the platform's ``network.smpi``,
    ``--smpi none`` turns it off; a lone 1 MB message takes SimGrid's 1e6 / (B * 0.940694) +
    L * 11.6436 (its size with the envelope is above 65472 bytes)."""
    from conftest import run_cli

    trace = {"ranks": [[{"op": "send", "dst": 1, "bytes": 1e6}], [{"op": "recv", "src": 0}]]}
    plain = cluster(2, envelope_bytes=16)
    with_field = cluster(2, envelope_bytes=16, smpi="simgrid-3.32")
    expected = 1e-4 * 11.6436 + (1e6 + 16) / (1.25e8 * 0.940694)
    assert simulate(plain, trace, smpi="simgrid-3.32").makespan == pytest.approx(expected, rel=1e-12)
    assert simulate(with_field, trace).makespan == pytest.approx(expected, rel=1e-12)
    assert simulate(with_field, trace, smpi="none").makespan == pytest.approx(1e-4 + (1e6 + 16) / 1.25e8, rel=1e-12)
    (tmp_path / "p.json").write_text(json.dumps(plain))
    (tmp_path / "t.json").write_text(json.dumps(trace))
    proc = run_cli("simulate", tmp_path / "p.json", tmp_path / "t.json", "--smpi", "simgrid-3.32", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["makespan"] == pytest.approx(expected, rel=1e-12)
    proc = run_cli("simulate", tmp_path / "p.json", tmp_path / "t.json", "--smpi", "simgrid-3.31")
    assert proc.returncode == 2 and "--smpi" in proc.stderr and "simgrid-3.32" in proc.stderr, proc.stderr


def test_bad_smpi_objects_name_the_field(tmp_path):
    from commaware import _core

    with pytest.raises(_core.PlatformError, match=r"network\.smpi\.bw.*unknown field"):
        load_platform(cluster(2, smpi={"bw": "0:1"}))
    with pytest.raises(_core.PlatformError, match=r"network\.smpi\.os.*chunk 2"):
        load_platform(cluster(2, smpi={"os": "0:0:0;100:1e-6"}))
    with pytest.raises(_core.PlatformError, match=r"network\.smpi\b.*unknown preset"):
        load_platform(cluster(2, smpi="simgrid-4"))


def _collective_trace(name: str, op, n: int) -> dict:
    from tests.engine.test_smpi_replay import collective_op

    return {"ranks": [[{"op": "compute", "seconds": 0.0003 * r}, collective_op(name, op, r, n),
                       {"op": "compute", "seconds": 0.0001}] for r in range(n)]}


def _collective_cases(first_count_only: bool) -> list:
    from tests.engine.test_smpi_replay import COLLECTIVES

    return [pytest.param(name, op, algorithm, n, id=f"{name}-{algorithm}-{n}")
            for name, op, algorithm, counts in COLLECTIVES for n in (counts[:1] if first_count_only else counts)]


@requires_smpi
@pytest.mark.parametrize("name, op, algorithm, n", _collective_cases(False))
def test_collectives_match_smpi_default_configuration(tmp_path, name, op, algorithm, n):
    """Every collective algorithm of the neutral agreement tests, under SMPI's default timing model."""
    smpi, ours = compare(tmp_path, _collective_trace(name, op, n), cluster(n), collectives={name: algorithm})
    assert ours == pytest.approx(smpi, rel=1e-9), (name, algorithm, n, smpi, ours)


#: Where SMPI's collective code posts its sends otherwise than our rounds say (a round's lone
#: send is a blocking send, a send-receive round's or a fan's an isend), so that non-default
#: smpi/os and smpi/ois differ: measured 0.1-0.9 % on these (docs/formats.md).
OVERHEAD_MISMATCH = {("reduce_scatter", "ompi_basic_recursivehalving")}


@requires_smpi
@pytest.mark.parametrize("name, op, algorithm, n", _collective_cases(True))
def test_collectives_with_overheads(tmp_path, name, op, algorithm, n):
    smpi, ours = compare(tmp_path, _collective_trace(name, op, n), cluster(n), collectives={name: algorithm},
                         overheads=OVERHEADS)
    if (name, algorithm) in OVERHEAD_MISMATCH:
        assert ours != pytest.approx(smpi, rel=1e-6)
    else:
        assert ours == pytest.approx(smpi, rel=1e-9), (name, algorithm, n, smpi, ours)


@requires_smpi
@pytest.mark.parametrize("overheads", [None, OVERHEADS], ids=["default", "overheads"])
@pytest.mark.parametrize("name", ["gather", "gatherv", "scatterv", "allgather", "allgatherv", "alltoall", "allreduce",
                                  "reduce", "reduce_scatter"])
def test_smpi_default_algorithms_under_smpis_timing_model(tmp_path, name, overheads):
    """SMPI's `default` algorithms (test_smpi_replay.SMPI_DEFAULTS) on 5 ranks (alltoall: 4, where
    it runs `pair` too): a lone send of SMPI's non-blocking collectives is an isend
    (``smpi/ois``), as ours, and allgather(v) post send, receive per peer where sends have an
    overhead."""
    from tests.engine.test_smpi_replay import NOT_SELECTABLE, default_trace

    n = 4 if name == "alltoall" else 5
    collectives = None if name in NOT_SELECTABLE else {name: "default"}
    smpi, ours = compare(tmp_path, default_trace(name, n), cluster(n), overheads=overheads, collectives=collectives,
                         coll=f"{name}=default")
    assert ours == pytest.approx(smpi, rel=1e-9), (name, smpi, ours)
