"""Per-flow agreement of commaware's max-min model with SimGrid 3.32 (CM02, pure max-min, optim Full).

Each scenario makes a flow list in Python (:func:`simgrid_peer.make_flows`), runs it through the
repository's SimGrid peer (``tests/peers/simgrid_star.cpp``, compiled on first use) on a star of
SPLITDUPLEX 1 Gbps links, replays the same flows in commaware (one rank per host, isends then
irecvs then waitall, flow i tagged i) and requires every flow's completion time to agree within
1e-6 relative.  The peer's alltoall mode is compared with commaware's ``alltoall`` collective.

Model mapping: SimGrid ``--cfg=network/model:CM02 --cfg=network/crosstraffic:0
--cfg=network/optim:Full``; commaware ``bandwidth = 1.25e8`` B/s (1 Gbps) and
``latency = 2 * link latency`` (a star route crosses two links).  SimGrid's default
``optim:Lazy`` is *not* a valid reference: it is off exact max-min here (by 25% on the first
scenario, see ``test_simgrid_lazy_mode_is_not_exact``).

The SimGrid tests skip, with the reason shown in the warnings summary, where SimGrid (Debian
``libsimgrid-dev g++``) is missing, unless ``COMMAWARE_REQUIRE_SIMGRID=1`` (set by ``.ci/run``,
which installs SimGrid): then they run and fail with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

import simgrid_peer as sgp
from conftest import requires_simgrid_mark

#: Required per-flow agreement (relative).
REL_TOL = 1e-6

requires_simgrid = requires_simgrid_mark(sgp.simgrid_available(), "SimGrid agreement")


@dataclass(frozen=True)
class Scenario:
    """One SimGrid run: ``flows`` random pairs (or shift) on ``hosts`` hosts, link latency ``lat_us``."""

    pattern: str
    hosts: int
    flows: int
    size: float
    seed: int
    lat_us: float

    def __str__(self) -> str:
        return f"{self.pattern}-h{self.hosts}-f{self.flows}-s{self.size:g}-lat{self.lat_us:g}us-seed{self.seed}"


SCENARIOS = [
    # SimGrid's Lazy-mode reproducer (Lazy: 15.1 / 18.1 ms; exact and Full: 12.1 / 24.1 ms).
    Scenario("random", 3, 6, 1e6, 9, 50),
    Scenario("random", 3, 20, 1e6, 1, 0),
    Scenario("randsize", 4, 12, 1e6, 2, 500),
    Scenario("randsize", 5, 40, 1e6, 3, 50),
    Scenario("random", 6, 60, 1e6, 4, 500),
    Scenario("randsize", 7, 1, 1e6, 5, 50),  # a single flow: latency + size / bandwidth
    Scenario("randsize", 8, 100, 1e6, 6, 0),
    Scenario("random", 10, 150, 3e4, 7, 50),  # all messages below the eager threshold
    Scenario("randsize", 12, 200, 1e6, 8, 500),
    Scenario("randsize", 13, 80, 2e4, 9, 50),  # 2 kB..200 kB: eager and rendezvous mixed
    Scenario("random", 16, 300, 1e6, 10, 0),
    Scenario("randsize", 16, 256, 1e6, 11, 50),
    Scenario("shift", 16, 64, 1e6, 1, 50),  # host i -> i+1..i+4: equal flows, simultaneous ends
    Scenario("random", 20, 40, 1e6, 12, 500),
    Scenario("randsize", 24, 300, 1e6, 13, 0),
    Scenario("randsize", 27, 250, 4e6, 14, 50),
    Scenario("random", 32, 32, 1e6, 15, 50),
    Scenario("randsize", 32, 300, 1e6, 16, 500),
    Scenario("random", 36, 200, 1e6, 17, 0),
    Scenario("randsize", 40, 120, 1e6, 18, 50),
    Scenario("random", 44, 300, 1e6, 19, 500),
    Scenario("randsize", 48, 300, 1e6, 20, 50),
    Scenario("randsize", 48, 48, 1e6, 21, 0),
    Scenario("random", 48, 250, 1e6, 22, 50),
    Scenario("randsize", 9, 300, 1e5, 23, 500),  # heavy contention: ~33 flows per host
]


def simulate_flows(cw: ModuleType, hosts: int, flows: list[Any], latency_s: float) -> Any:
    """Replay ``flows`` (``(src, dst, bytes, ...)``) at t = 0 in commaware on SimGrid's star."""
    platform = cw.load_platform(sgp.platform_dict(hosts, latency_s))
    trace = cw.load_trace(sgp.flows_to_trace(hosts, flows))
    return cw.simulate(platform, trace, model="maxmin", placement="explicit", seed=0)


def disagreement_report(
    scenario: Scenario, flows: list[sgp.SgFlow], ours: list[float], rel: list[float], limit: int = 12
) -> str:
    """A table of the worst flows, with an exact max-min computation as arbiter."""
    exact = sgp.exact_maxmin_finish(flows, scenario.lat_us) if len(flows) <= 2000 else None
    bad = sum(r > REL_TOL for r in rel)
    lines = [
        f"{scenario}: {bad} of {len(flows)} flows differ by more than {REL_TOL:g} relative "
        f"(max {max(rel):.3e}); commaware latency = {sgp.route_latency_s(scenario.lat_us):g} s",
        f"{'flow':>5} {'src':>4} {'dst':>4} {'bytes':>10} {'simgrid_s':>18} {'commaware_s':>18} "
        f"{'exact_ref_s':>18} {'rel_err':>10}",
    ]
    for i in sorted(range(len(flows)), key=lambda k: -rel[k])[:limit]:
        f = flows[i]
        ref = f"{exact[i]:18.12g}" if exact else f"{'-':>18}"
        lines.append(f"{i:5d} {f.src:4d} {f.dst:4d} {f.bytes:10d} {f.finish:18.12g} {ours[i]:18.12g} {ref} "
                     f"{rel[i]:10.3e}")
    return "\n".join(lines)


def test_enough_scenarios() -> None:
    """The issue asks for at least 20 random scenarios over several latencies, including 0."""
    assert len(SCENARIOS) >= 20
    assert len({str(s) for s in SCENARIOS}) == len(SCENARIOS)
    assert {0, 50, 500} <= {s.lat_us for s in SCENARIOS}
    assert {"random", "randsize"} <= {s.pattern for s in SCENARIOS}
    assert min(s.hosts for s in SCENARIOS) == 3 and max(s.hosts for s in SCENARIOS) == 48


def test_flows_to_trace_layout() -> None:
    """Each rank posts its isends, then its irecvs, in flow order, then waitall; flow i has tag i."""
    flows = [(0, 1, 10), (2, 0, 20), (0, 2, 30), (1, 0, 40)]
    trace = sgp.flows_to_trace(4, flows)
    assert trace["ranks"] == [
        [{"op": "isend", "dst": 1, "bytes": 10, "tag": 0}, {"op": "isend", "dst": 2, "bytes": 30, "tag": 2},
         {"op": "irecv", "src": 2, "tag": 1}, {"op": "irecv", "src": 1, "tag": 3}, {"op": "waitall"}],
        [{"op": "isend", "dst": 0, "bytes": 40, "tag": 3}, {"op": "irecv", "src": 0, "tag": 0}, {"op": "waitall"}],
        [{"op": "isend", "dst": 0, "bytes": 20, "tag": 1}, {"op": "irecv", "src": 0, "tag": 2}, {"op": "waitall"}],
        [{"op": "waitall"}],
    ]
    with pytest.raises(ValueError):
        sgp.flows_to_trace(2, [(0, 2, 1)])


@requires_simgrid
def test_simgrid_tiny_case_is_analytic() -> None:
    """SimGrid gives the tiny case's exact numbers, so the platform and flag mapping are right."""
    flows = sgp.run_simgrid(5, 4, 1e6, "tiny", 1, lat_us=50)
    assert [(f.src, f.dst, f.bytes, f.start) for f in flows] == [
        (0, 1, 10**6, 0.0), (0, 2, 10**6, 0.0), (0, 3, 10**6, 0.0), (4, 3, 10**6, 0.0)]
    assert [f.finish for f in flows] == pytest.approx([0.0241, 0.0241, 0.0241, 0.0121], rel=1e-9)


@requires_simgrid
def test_simgrid_links_are_split_duplex() -> None:
    """h0->h1 and h1->h0 use opposite directions of each link: 1e-4 + 1e6 / 1.25e8 each (not twice that)."""
    flows = sgp.run_simgrid(2, 2, 1e6, "pingpong", 1, lat_us=50)
    assert [f.finish for f in flows] == pytest.approx([0.0081, 0.0081], rel=1e-9)


@requires_simgrid
def test_simgrid_lazy_mode_is_not_exact() -> None:
    """Why the tests use optim:Full: with Lazy, SimGrid 3.32 is off exact max-min on this reproducer."""
    sc = SCENARIOS[0]
    exact = sgp.exact_maxmin_finish(sgp.make_flows(sc.pattern, sc.hosts, sc.flows, sc.size, sc.seed), sc.lat_us)
    full = sgp.run_simgrid(sc.hosts, sc.flows, sc.size, sc.pattern, sc.seed, lat_us=sc.lat_us, optim="Full")
    lazy = sgp.run_simgrid(sc.hosts, sc.flows, sc.size, sc.pattern, sc.seed, lat_us=sc.lat_us, optim="Lazy")
    assert max(sgp.relative_errors(exact, [f.finish for f in full])) < 1e-9
    assert max(sgp.relative_errors(exact, [f.finish for f in lazy])) > 0.1


@requires_simgrid
@pytest.mark.parametrize("scenario", [SCENARIOS[0], SCENARIOS[6], SCENARIOS[17]], ids=str)
def test_simgrid_full_is_exact_maxmin(scenario: Scenario) -> None:
    """With optim:Full, SimGrid matches an exact progressive-filling computation (``exact_maxmin_finish``)."""
    flows = sgp.run_simgrid(scenario.hosts, scenario.flows, scenario.size, scenario.pattern, scenario.seed,
                            lat_us=scenario.lat_us)
    exact = sgp.exact_maxmin_finish(flows, scenario.lat_us)
    assert max(sgp.relative_errors(exact, [f.finish for f in flows])) < 1e-9


def test_exact_maxmin_reference() -> None:
    """The exact reference itself, on the tiny case worked out by hand in ``test_tiny_case_analytic``."""
    flows = [(0, 1, 10**6), (0, 2, 10**6), (0, 3, 10**6), (4, 3, 10**6)]
    assert sgp.exact_maxmin_finish(flows, 50) == pytest.approx([0.0241, 0.0241, 0.0241, 0.0121], rel=1e-12)
    assert sgp.exact_maxmin_finish([(0, 1, 10**6), (1, 0, 10**6)], 0) == pytest.approx([0.008, 0.008], rel=1e-12)


@requires_simgrid
def test_simgrid_keeps_the_given_flow_order() -> None:
    """The peer reports flows in input order, whatever the order of sources (and zero-byte flows)."""
    flows = [(3, 0, 5000), (0, 3, 7000), (2, 1, 0), (1, 2, 3000), (3, 1, 5000), (0, 1, 1)]
    run = sgp.run_simgrid_flows(4, flows, lat_us=50)
    assert [(f.src, f.dst, f.bytes) for f in run.flows] == flows
    assert run.result["flows"] == len(flows) and run.result["hosts"] == 4
    assert [f.finish for f in run.flows] == pytest.approx(sgp.exact_maxmin_finish(flows, 50), rel=1e-9)
    assert run.result["makespan_s"] == pytest.approx(max(f.finish for f in run.flows), rel=1e-12)


@requires_simgrid
def test_simgrid_rejects_bad_flows() -> None:
    """A flow from a host to itself, or to a host outside the star, is an error, not a silent run."""
    with pytest.raises(sgp.SimGridError, match="two different hosts"):
        sgp.run_simgrid_flows(4, [(0, 1, 10), (2, 2, 10)])
    with pytest.raises(sgp.SimGridError, match="two different hosts"):
        sgp.run_simgrid_flows(4, [(0, 4, 10)])


def test_tiny_case_analytic(cw: ModuleType) -> None:
    """h0->h1, h0->h2, h0->h3, h4->h3, 1 MB each, 50 us per link (route latency 100 us).

    h0's up-link is shared three ways: 1e-4 + 3 * 1e6 / 1.25e8 = 24.1 ms.  h4->h3 shares h3's
    down-link with h0->h3, which is held at 1/3 by h0's up-link, so it gets 2/3:
    1e-4 + 1e6 / (2/3 * 1.25e8) = 12.1 ms.
    """
    flows = [(0, 1, 10**6), (0, 2, 10**6), (0, 3, 10**6), (4, 3, 10**6)]
    res = simulate_flows(cw, 5, flows, sgp.route_latency_s(50))
    bw, lat = sgp.LINK_BANDWIDTH, 1e-4
    slow, fast = lat + 3 * 1e6 / bw, lat + 1e6 / (2 / 3 * bw)
    assert (slow, fast) == pytest.approx((0.0241, 0.0121), rel=1e-12)
    assert res.makespan == pytest.approx(slow, rel=1e-9)
    assert sgp.ours_finish_by_flow(flows, res.messages) == pytest.approx([slow, slow, slow, fast], rel=1e-9)


@requires_simgrid
@pytest.mark.parametrize("scenario", SCENARIOS, ids=str)
def test_flow_times_agree_with_simgrid(cw: ModuleType, scenario: Scenario) -> None:
    """Every flow's completion time agrees with SimGrid's within 1e-6 relative."""
    flows = sgp.run_simgrid(scenario.hosts, scenario.flows, scenario.size, scenario.pattern, scenario.seed,
                            lat_us=scenario.lat_us, timeout=120)
    assert all(f.start == 0.0 for f in flows)
    res = simulate_flows(cw, scenario.hosts, flows, sgp.route_latency_s(scenario.lat_us))
    assert len(res.messages) == len(flows)
    ours = sgp.ours_finish_by_flow(flows, res.messages)
    rel = sgp.relative_errors([f.finish for f in flows], ours)
    if max(rel) > REL_TOL:
        pytest.fail(disagreement_report(scenario, flows, ours, rel), pytrace=False)
    assert res.makespan == pytest.approx(max(f.finish for f in flows), rel=REL_TOL)


# ---------------------------------------------------------------------------------------------
# alltoall through SimGrid's own engine against commaware's alltoall collective
# ---------------------------------------------------------------------------------------------

#: Alltoall makespan agreement (relative).  On this star every round is a permutation of equal
#: flows, so both engines must give (P - 1) * (route latency + B / bandwidth); the only expected
#: difference is float summation over P - 1 rounds (a few ulps: 3e-16 measured), while a real
#: model difference (a handshake, a latency counted once more or less, a slower round) would be
#: of the order of 1e-3 or more.
ALLTOALL_REL_TOL = 1e-12
ALLTOALL_LAT_US = 50.0


def alltoall_closed_form(ranks: int, size: int, lat_us: float) -> float:
    """Makespan of a lock-step pairwise alltoall on the star: P - 1 rounds of latency + B / bandwidth."""
    return (ranks - 1) * (sgp.route_latency_s(lat_us) + size / sgp.LINK_BANDWIDTH)


@requires_simgrid
def test_simgrid_alltoall_mode_runs() -> None:
    """The peer's alltoall on 8 ranks: 7 XOR rounds, 56 messages, each delivered in its own round."""
    res = sgp.run_simgrid_alltoall(8, 1024, ALLTOALL_LAT_US, timeout=60)
    assert (res["ranks"], res["bytes"], res["partner"], res["rounds"]) == (8, 1024, "xor", 7)
    assert res["messages"] == 56 and res["misdelivered"] == 0
    assert res["run_s"] >= 0 and res["cpu_s"] >= 0
    assert res["makespan_s"] == pytest.approx(alltoall_closed_form(8, 1024, ALLTOALL_LAT_US), rel=ALLTOALL_REL_TOL)
    assert sgp.run_simgrid_alltoall(6, 1024, ALLTOALL_LAT_US, timeout=60)["partner"] == "shift"


@requires_simgrid
@pytest.mark.parametrize(("ranks", "size"), [
    (8, 1024), (8, 30000), (6, 1024),  # eager in commaware: detached sends
    (8, sgp.EAGER_THRESHOLD), (8, 10**6), (6, 10**6), (7, 200000),  # rendezvous in both engines
], ids=lambda v: str(v))
def test_alltoall_makespan_agrees_with_simgrid(cw: ModuleType, ranks: int, size: int) -> None:
    """commaware's alltoall and SimGrid's give the same makespan, below and above the eager threshold.

    Semantics differ below the threshold: commaware's eager send is detached (its transfer starts
    when posted and the send completes at once), while a SimGrid mailbox transfer starts when both
    sides are posted and the send completes with the transfer.  Here each round is a permutation
    of equal flows on identical links, so all ranks post each round at the same instant and every
    round ends everywhere at once: the difference cannot show, and both sizes are compared with the
    same tolerance (at or above the threshold both engines rendezvous: strictly apples to apples).
    """
    sg = sgp.run_simgrid_alltoall(ranks, size, ALLTOALL_LAT_US, timeout=60)
    platform = cw.load_platform(sgp.platform_dict(ranks, sgp.route_latency_s(ALLTOALL_LAT_US)))
    ours = cw.simulate(platform, cw.load_trace(sgp.alltoall_trace(ranks, size)), model="maxmin",
                       placement="explicit", seed=0)
    assert len(ours.messages) == sg["messages"]
    assert ours.makespan == pytest.approx(sg["makespan_s"], rel=ALLTOALL_REL_TOL)
    assert sg["makespan_s"] == pytest.approx(alltoall_closed_form(ranks, size, ALLTOALL_LAT_US), rel=ALLTOALL_REL_TOL)

