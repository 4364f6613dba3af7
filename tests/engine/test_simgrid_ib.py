"""Agreement of commaware's ``ib-simgrid`` sharing model with SimGrid 3.32's ``network/model:IB``.

``ib-simgrid`` is CM02 max-min link sharing plus a per-flow rate cap of (route bandwidth) /
penalty, with SimGrid's InfiniBand penalty (``smpi/IB-penalty-factors`` beta_e, beta_s, gamma_s =
0.965, 0.925, 1.35; the formula is :func:`simgrid_peer.ib_penalties`).  The peer is the star of
``tests/peers/simgrid_star.cpp`` (see ``test_simgrid_agreement.py``), every flow starting at
t = 0, run with :data:`simgrid_peer.IB_FLAGS` and ``network/optim:Full``.

What SimGrid 3.32's IB model does beyond that, measured here:

* It is an SMPI model: it multiplies bandwidths by SMPI's piecewise factor (0.940694 at or above
  65472 bytes) and latencies by SMPI's latency factor (11.6436 there), so a lone 1 MB flow takes
  9.67 ms instead of CM02's 8.1 ms.  ``smpi/bw-factor:0:1`` and ``smpi/lat-factor:0:1`` turn
  that off; ``network/bandwidth-factor`` and ``network/latency-factor`` do not
  (``test_simgrid_ib_default_factors``).
* Its ``network/weight-S`` (8775) weights max-min shares by route latency + 8775 / bandwidth per
  link: identical for every route of this homogeneous star, so it cannot show here
  (``test_simgrid_ib_weight_s_is_neutral_on_the_star``).
* When a comm starts or ends, SimGrid recomputes penalties only in the connected component (of
  the graph of active comms) of that comm's *sender*.  When the last s -> d comm ends and leaves
  s and d apart, flows into d keep the penalty they had with s -> d: a stale, too large penalty
  (``test_simgrid_ib_stale_case``).  commaware recomputes every affected flow, so there the two
  differ by design; :func:`simgrid_peer.ib_stale_flows` finds those flows from SimGrid's own
  completion order, and the agreement test asserts exact agreement everywhere else and the
  expected disagreement there.

The commaware tests need the ``ib-simgrid`` model in the installed build; they fail (not skip)
where it is missing.  The SimGrid tests skip where SimGrid is missing, unless
``COMMAWARE_REQUIRE_SIMGRID=1``, as in ``test_simgrid_agreement.py``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

import simgrid_peer as sgp
from conftest import requires_simgrid_mark

#: Required per-flow agreement (relative).
REL_TOL = 1e-6
#: The commaware model under test.
MODEL = "ib-simgrid"
#: Bandwidth (B/s) and route latency (s) of the star at the default 50 us per link.
BW = sgp.LINK_BANDWIDTH
LAT = sgp.route_latency_s(sgp.DEFAULT_LAT_US)
M = 10**6

requires_simgrid = requires_simgrid_mark(sgp.simgrid_available(), "SimGrid IB agreement")


@dataclass(frozen=True)
class IbScenario:
    """``make_flows("randsize", hosts, flows, 1e6, seed)`` (1e5..1e7 bytes) at link latency ``lat_us``.

    ``differ``: the flows whose SimGrid time is more than :data:`REL_TOL` away from a correct
    recomputation of penalties, all of them among :func:`simgrid_peer.ib_stale_flows`.  Found
    with an out-of-tree reference (penalties of every flow recomputed at every completion, then
    max-min with the caps; the same reference with SimGrid's sender-component update reproduces
    SimGrid to 4e-16 on all of these); every other flow differs by less than 1e-9 and every
    listed one by more than 1e-4, so the threshold is not near any value.
    """

    hosts: int
    flows: int
    seed: int
    lat_us: float
    differ: tuple[int, ...]

    def flow_list(self) -> list[tuple[int, int, int]]:
        return sgp.make_flows("randsize", self.hosts, self.flows, 1e6, self.seed)

    def __str__(self) -> str:
        return f"ib-h{self.hosts}-f{self.flows}-lat{self.lat_us:g}us-seed{self.seed}"


# Hosts 4..16 and flows 2..40 drawn by SplitMix64(2024); link latencies 50, 0, 500 us in turn.
SCENARIOS = [
    IbScenario(10, 40, 100, 50, (14, 20, 21, 37)),
    IbScenario(8, 33, 101, 0, (7, 9)),
    IbScenario(7, 3, 102, 500, ()),
    IbScenario(16, 25, 103, 50, (3, 12, 17, 18, 20, 24)),
    IbScenario(4, 39, 104, 0, (11, 18)),
    IbScenario(6, 22, 105, 500, (5, 8, 9)),
    IbScenario(15, 3, 106, 50, ()),
    IbScenario(16, 34, 107, 0, (12, 31)),  # 16 flows stale-tainted, 2 of them move
    IbScenario(6, 20, 108, 500, ()),
    IbScenario(13, 20, 109, 50, (8, 14, 19)),
    IbScenario(11, 3, 110, 0, ()),
    IbScenario(4, 2, 111, 500, ()),
    IbScenario(12, 24, 112, 50, (3, 4, 5, 7, 15, 20)),
    IbScenario(7, 2, 113, 0, ()),
    IbScenario(11, 16, 114, 500, (0, 3, 4, 5, 6, 7, 8, 9, 11, 12, 15)),
    IbScenario(9, 9, 115, 50, ()),
    IbScenario(6, 22, 116, 0, (14,)),
    IbScenario(14, 13, 117, 500, (0, 1, 2, 4, 5, 12)),
    IbScenario(13, 35, 118, 50, (20, 24)),
    IbScenario(15, 11, 119, 0, (7, 8)),
    IbScenario(15, 6, 120, 500, (0, 5)),
    IbScenario(12, 12, 121, 50, (0, 1, 2, 3, 7, 10)),
    IbScenario(7, 25, 122, 0, ()),
    IbScenario(7, 27, 123, 500, (4,)),
]


def simulate_ib(cw: ModuleType, hosts: int, flows: list[Any], latency_s: float = LAT) -> list[float]:
    """commaware's ``ib-simgrid`` completion time of each of ``flows``, all issued at t = 0 on the star.

    Every size here is above the eager threshold: each flow is a rendezvous whose isend and irecv
    are both posted at t = 0 (``flows_to_trace``), so its transfer starts at t = 0, as in SimGrid.
    """
    res = cw.simulate(sgp.platform_dict(hosts, latency_s), sgp.flows_to_trace(hosts, flows), model=MODEL,
                      placement="explicit", seed=0)
    assert len(res.messages) == len(flows)
    return sgp.ours_finish_by_flow(flows, res.messages)


def simgrid_ib(hosts: int, flows: list[Any], lat_us: float = sgp.DEFAULT_LAT_US,
               flags: tuple[str, ...] = sgp.IB_FLAGS) -> list[sgp.SgFlow]:
    """SimGrid IB's per-flow results (factors neutralised unless ``flags`` says otherwise)."""
    return sgp.run_simgrid_flows_cfg(hosts, flows, flags, lat_us=lat_us, timeout=120).flows


@functools.lru_cache(maxsize=None)
def simgrid_scenario(scenario: IbScenario) -> tuple[sgp.SgFlow, ...]:
    """SimGrid IB's run of ``scenario``, once per test session."""
    return tuple(simgrid_ib(scenario.hosts, scenario.flow_list(), scenario.lat_us))


# ---------------------------------------------------------------------------------------------
# Small cases worked out by hand (B = 1.25e8 B/s, route latency L = 1e-4 s, 1 MB flows)
# ---------------------------------------------------------------------------------------------

#: name -> (hosts, flows, expected finish times of the IB model with correct penalties).
#: None of these leaves a penalty stale in SimGrid, so SimGrid must give the same numbers.
HAND_CASES: dict[str, tuple[int, list[tuple[int, int, int]], list[float]]] = {
    # Fan-out of 3: penalty 3 * 0.925 = 2.775 < 3, cap B / 2.775 above the fair share B / 3:
    # the penalty does not bind; L + 3 * 1e6 / B = 24.1 ms as under CM02.
    "out3": (4, [(0, 1, M), (0, 2, M), (0, 3, M)], [LAT + 3 * M / BW] * 3),
    # Fan-in of 3: penalty 0.965 * 3 = 2.895 < 3: does not bind either, 24.1 ms.
    "in3": (4, [(1, 0, M), (2, 0, M), (3, 0, M)], [LAT + 3 * M / BW] * 3),
    # Two parallel comms 0 -> 1: max(in 2 * 0.965 * 1 = 1.93, out 2 * 0.925 = 1.85) = 1.93 < 2: 16.1 ms.
    "par2": (2, [(0, 1, M), (0, 1, M)], [LAT + 2 * M / BW] * 2),
    # Three parallel comms 0 -> 1: 1 has 3 > 2 incoming, so out = 3 * 0.925 * 1.35 = 3.74625
    # (in = 3 * 0.965 = 2.895): cap B / 3.74625 below B / 3; L + 3.74625e6 / B = 30.07 ms.
    "par3": (2, [(0, 1, M)] * 3, [LAT + 3.74625 * M / BW] * 3),
    # 0 -> 1, 0 -> 2, 3 -> 1, 4 -> 1: 0 -> 2's penalty is 0's out = 2 * 0.925 * 1.35 = 2.4975
    # (1 has 3 incoming): L + 2.4975e6 / B = 20.08 ms.  The three flows into 1 have penalty
    # 0.965 * 3 = 2.895 < 3: B / 3 each, 24.1 ms (0 -> 2's end recomputes 0's component: all).
    "out2in3": (5, [(0, 1, M), (0, 2, M), (3, 1, M), (4, 1, M)],
                [LAT + 3 * M / BW, LAT + 2.4975 * M / BW, LAT + 3 * M / BW, LAT + 3 * M / BW]),
}

# The Fig-4-like tournament 0->1, 0->2, 0->3, 1->2, 1->3, 2->3, 1 MB each.
# Penalties: 0's out = 3 * 0.925 * 1.35 = 3.74625 (3 has 3 incoming): 0->1, 0->2, 0->3 get
# 3.74625; 1->2: max(in 1 * 0.965 * 2 = 1.93, 1's out 2 * 0.925 * 1.35 = 2.4975) = 2.4975;
# 1->3 and 2->3: in 0.965 * 3 = 2.895.  Every flow runs at its cap (up(0) carries 3 B / 3.74625
# < B; down(3) 0.267 B + 2 * 0.345 B < B; up(1) 0.400 B + 0.345 B < B; down(2) 0.267 B + 0.400 B).
# * 1->2 ends at L + 2.4975e6 / B = 20.08 ms; the other penalties do not change.
# * 1->3 and 2->3 end at L + 2.895e6 / B = 23.26 ms.
# * 0's flows then have penalty 3 * 0.925 = 2.775 < 3 (no more incoming contention): B / 3 each,
#   with 1e6 * (1 - 2.895 / 3.74625) bytes left each: 23.26 ms + 3e6 * (1 - 2.895 / 3.74625) / B.
_FIG4_SLOW = LAT + 2.895 * M / BW + 3 * M * (1 - 2.895 / 3.74625) / BW
HAND_CASES["fig4"] = (4, [(0, 1, M), (0, 2, M), (0, 3, M), (1, 2, M), (1, 3, M), (2, 3, M)],
                      [_FIG4_SLOW] * 3 + [LAT + 2.4975 * M / BW, LAT + 2.895 * M / BW, LAT + 2.895 * M / BW])

# The minimal stale case: A = 0 -> 2 (1 MB), B = 1 -> 2 (4 MB).
# Both into 2: penalty 1 * 0.965 * 2 = 1.93, cap B / 1.93 = 0.518 B above the fair share B / 2,
# so both run at B / 2 and A ends at L + 1e6 / (B / 2) = 16.1 ms, B having 3e6 bytes left.
# * Correct: B is alone, penalty 1, rate B: 16.1 ms + 3e6 / B = 40.1 ms.
# * SimGrid: A's end recomputes the component of A's sender 0 only, which is now empty; B keeps
#   penalty 1.93 and runs at B / 1.93: 16.1 ms + 3e6 * 1.93 / B = 62.42 ms.
STALE_FLOWS = [(0, 2, M), (1, 2, 4 * M)]
STALE_A = LAT + 2 * M / BW
STALE_CORRECT = [STALE_A, STALE_A + 3 * M / BW]
STALE_SIMGRID = [STALE_A, STALE_A + 3 * M * 1.93 / BW]


def test_hand_numbers() -> None:
    """The hand-derived numbers above, spelled out."""
    assert HAND_CASES["fig4"][2] == pytest.approx([0.0287134534534535] * 3 + [0.02008, 0.02326, 0.02326], rel=1e-9)
    assert STALE_CORRECT == pytest.approx([0.0161, 0.0401], rel=1e-12)
    assert STALE_SIMGRID == pytest.approx([0.0161, 0.06242], rel=1e-12)


def test_enough_scenarios() -> None:
    """At least 20 seeded random star scenarios, 4-16 hosts and 2-40 flows, with and without stale penalties."""
    assert len(SCENARIOS) >= 20
    assert len({str(s) for s in SCENARIOS}) == len(SCENARIOS)
    assert all(4 <= s.hosts <= 16 and 2 <= s.flows <= 40 for s in SCENARIOS)
    assert {0, 50, 500} <= {s.lat_us for s in SCENARIOS}
    assert sum(not s.differ for s in SCENARIOS) >= 5 and sum(bool(s.differ) for s in SCENARIOS) >= 10
    for s in SCENARIOS:
        sizes = [f[2] for f in s.flow_list()]
        assert all(10**5 <= b <= 10**7 and b >= sgp.EAGER_THRESHOLD for b in sizes)
        assert all(i < s.flows for i in s.differ)


def test_ib_penalties() -> None:
    """The penalty formula on the hand cases (see the comments of ``HAND_CASES``)."""
    def pen(flows: list[tuple[int, int, int]]) -> list[float]:
        p = sgp.ib_penalties(flows, range(len(flows)))
        return [p[i] for i in range(len(flows))]

    assert pen([(0, 1, M)]) == [1.0]
    assert pen(HAND_CASES["out3"][1]) == pytest.approx([2.775] * 3)
    assert pen(HAND_CASES["in3"][1]) == pytest.approx([2.895] * 3)
    assert pen(HAND_CASES["par2"][1]) == pytest.approx([1.93] * 2)
    assert pen(HAND_CASES["par3"][1]) == pytest.approx([3.74625] * 3)
    assert pen(HAND_CASES["out2in3"][1]) == pytest.approx([2.895, 2.4975, 2.895, 2.895])
    assert pen(HAND_CASES["fig4"][1]) == pytest.approx([3.74625] * 3 + [2.4975, 2.895, 2.895])
    # Two parallel comms 0 -> 1 and 2 -> 1: in = 2 * 0.965 * 2 = 3.86 for 0's, 0.965 * 2 for 2's.
    assert pen([(0, 1, M), (0, 1, M), (2, 1, M)]) == pytest.approx([3.86, 3.86, 1.93])


def test_ib_stale_flows_minimal() -> None:
    """On SimGrid's times of the minimal stale case, B (flow 1) is the stale one; a lone flow never is."""
    sg = [sgp.SgFlow(*f, 0.0, t) for f, t in zip(STALE_FLOWS, STALE_SIMGRID, strict=True)]
    assert sgp.ib_stale_flows(sg) == {1}
    # The same pair from two senders to two receivers never interacts: nothing stale.
    assert sgp.ib_stale_flows([sgp.SgFlow(0, 2, M, 0.0, 0.0161), sgp.SgFlow(1, 3, 4 * M, 0.0, 0.0401)]) == set()
    # A fan-out: the sender of the first flow to end is the sender of the other: recomputed.
    assert sgp.ib_stale_flows([sgp.SgFlow(0, 1, M, 0.0, 0.0161), sgp.SgFlow(0, 2, 4 * M, 0.0, 0.0401)]) == set()
    # Parallel comms 0 -> 1 plus 2 -> 1: when 2 -> 1 ends first, 0's two comms keep 3.86.
    sg3 = [sgp.SgFlow(0, 1, M, 0.0, 0.03098), sgp.SgFlow(0, 1, M, 0.0, 0.03098), sgp.SgFlow(2, 1, M, 0.0, 0.0167)]
    assert sgp.ib_stale_flows(sg3) == {0, 1}
    with pytest.raises(ValueError):
        sgp.ib_stale_flows([sgp.SgFlow(0, 1, M, 1.0, 2.0)])


# ---------------------------------------------------------------------------------------------
# SimGrid alone: the findings
# ---------------------------------------------------------------------------------------------


@requires_simgrid
def test_simgrid_ib_default_factors() -> None:
    """A lone 1 MB flow: SimGrid's IB applies SMPI's factors unless ``smpi/bw-factor`` and ``smpi/lat-factor`` are 1.

    With them: 1e6 / (1.25e8 * 0.940694) + 1e-4 * 11.6436 = 9.6687 ms; with ``IB_FLAGS``, CM02's
    1e-4 + 1e6 / 1.25e8 = 8.1 ms.  ``network/bandwidth-factor:1`` and ``network/latency-factor:1``
    leave the 9.67 ms: the IB model does not read them.
    """
    lone = [(0, 1, M)]
    default = simgrid_ib(2, lone, flags=sgp.IB_DEFAULT_FLAGS)[0].finish
    assert default == pytest.approx(M / (BW * 0.940694) + LAT * 11.6436, rel=1e-12)
    assert default == pytest.approx(0.00966871954731294, rel=1e-12)
    cm02 = sgp.run_simgrid_flows(2, lone).flows[0].finish
    assert cm02 == pytest.approx(LAT + M / BW, rel=1e-12)
    assert simgrid_ib(2, lone)[0].finish == pytest.approx(cm02, rel=1e-12)
    network_factors = (*sgp.IB_DEFAULT_FLAGS, "--cfg=network/bandwidth-factor:1", "--cfg=network/latency-factor:1")
    assert simgrid_ib(2, lone, flags=network_factors)[0].finish == pytest.approx(default, rel=1e-12)
    # Each factor alone: bandwidth 1e-4 * 11.6436 + 1e6 / B; latency 1e-4 + 1e6 / (0.940694 B).
    only_lat = (*sgp.IB_DEFAULT_FLAGS, "--cfg=smpi/bw-factor:0:1")
    only_bw = (*sgp.IB_DEFAULT_FLAGS, "--cfg=smpi/lat-factor:0:1")
    assert simgrid_ib(2, lone, flags=only_lat)[0].finish == pytest.approx(LAT * 11.6436 + M / BW, rel=1e-12)
    assert simgrid_ib(2, lone, flags=only_bw)[0].finish == pytest.approx(LAT + M / (BW * 0.940694), rel=1e-12)


@requires_simgrid
def test_simgrid_ib_weight_s_is_neutral_on_the_star() -> None:
    """IB's ``network/weight-S`` = 8775 gives every star route the same weight: 0 changes nothing."""
    sc = SCENARIOS[0]
    with_s = [f.finish for f in simgrid_scenario(sc)]
    without = [f.finish for f in simgrid_ib(sc.hosts, sc.flow_list(), sc.lat_us,
                                            flags=(*sgp.IB_FLAGS, "--cfg=network/weight-S:0"))]
    assert max(sgp.relative_errors(with_s, without)) < 1e-12


@requires_simgrid
@pytest.mark.parametrize("name", sorted(HAND_CASES))
def test_simgrid_ib_hand_cases(name: str) -> None:
    """SimGrid IB (factors off) gives the hand-derived times: rate = min(max-min share, B / penalty)."""
    hosts, flows, expected = HAND_CASES[name]
    sg = simgrid_ib(hosts, flows)
    assert [f.finish for f in sg] == pytest.approx(expected, rel=1e-9)
    assert sgp.ib_stale_flows(sg) == set()


@requires_simgrid
def test_simgrid_ib_stale_case() -> None:
    """SimGrid leaves B's penalty stale when A ends: 62.42 ms where a correct update gives 40.1 ms."""
    sg = simgrid_ib(3, STALE_FLOWS)
    assert [f.finish for f in sg] == pytest.approx(STALE_SIMGRID, rel=1e-9)
    assert sgp.ib_stale_flows(sg) == {1}


@requires_simgrid
@pytest.mark.parametrize("scenario", SCENARIOS, ids=str)
def test_simgrid_ib_stale_analysis(scenario: IbScenario) -> None:
    """``ib_stale_flows`` on SimGrid's run covers every flow listed as differing; stale-free ones have none."""
    sg = list(simgrid_scenario(scenario))
    assert all(f.start == 0.0 for f in sg)
    stale = sgp.ib_stale_flows(sg)
    assert set(scenario.differ) <= stale
    if not scenario.differ:
        assert not stale


# ---------------------------------------------------------------------------------------------
# commaware against the hand numbers and against SimGrid
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(HAND_CASES))
def test_ib_hand_cases(cw: ModuleType, name: str) -> None:
    """commaware's ``ib-simgrid`` gives the hand-derived times."""
    hosts, flows, expected = HAND_CASES[name]
    assert simulate_ib(cw, hosts, flows) == pytest.approx(expected, rel=1e-9)


def test_ib_stale_case(cw: ModuleType) -> None:
    """commaware updates B's penalty when A ends (40.1 ms), where SimGrid keeps it (62.42 ms)."""
    assert simulate_ib(cw, 3, STALE_FLOWS) == pytest.approx(STALE_CORRECT, rel=1e-9)


def disagreement_report(scenario: IbScenario, sg: list[sgp.SgFlow], ours: list[float], rel: list[float],
                        stale: set[int], limit: int = 16) -> str:
    """The flows that broke the test, worst first, with their stale mark and expected disagreement."""
    lines = [f"{scenario}: stale-tainted {sorted(stale)}, expected to differ {list(scenario.differ)}",
             f"{'flow':>5} {'src':>4} {'dst':>4} {'bytes':>10} {'simgrid_s':>18} {'commaware_s':>18} "
             f"{'rel_err':>10} {'stale':>5} {'differ':>6}"]
    for i in sorted(range(len(sg)), key=lambda k: -rel[k])[:limit]:
        f = sg[i]
        lines.append(f"{i:5d} {f.src:4d} {f.dst:4d} {f.bytes:10d} {f.finish:18.12g} {ours[i]:18.12g} {rel[i]:10.3e} "
                     f"{'yes' if i in stale else '':>5} {'yes' if i in scenario.differ else '':>6}")
    return "\n".join(lines)


@requires_simgrid
@pytest.mark.parametrize("scenario", SCENARIOS, ids=str)
def test_flow_times_agree_with_simgrid_ib(cw: ModuleType, scenario: IbScenario) -> None:
    """Every flow SimGrid does not leave stale agrees within 1e-6; the stale-tainted ones differ as analysed.

    Flows outside ``ib_stale_flows`` must agree.  Among the tainted ones, exactly
    ``scenario.differ`` must differ by more than 1e-6 (SimGrid's stale penalty binds there), and
    the others must agree (their stale cap never binds).
    """
    sg = list(simgrid_scenario(scenario))
    ours = simulate_ib(cw, scenario.hosts, sg, sgp.route_latency_s(scenario.lat_us))
    rel = sgp.relative_errors([f.finish for f in sg], ours)
    stale = sgp.ib_stale_flows(sg)
    bad_fresh = [i for i in range(len(sg)) if i not in stale and rel[i] > REL_TOL]
    differing = tuple(i for i in sorted(stale) if rel[i] > REL_TOL)
    if bad_fresh or differing != scenario.differ:
        pytest.fail(disagreement_report(scenario, sg, ours, rel, stale), pytrace=False)


# ---------------------------------------------------------------------------------------------
# SMPI's factors: ``network.smpi: "simgrid-3.32"`` against SimGrid's IB model with its defaults
# ---------------------------------------------------------------------------------------------


def simulate_ib_smpi(cw: ModuleType, hosts: int, flows: list[Any], latency_s: float = LAT) -> list[float]:
    """:func:`simulate_ib` with SMPI's timing model of SimGrid 3.32 (``network.smpi``)."""
    platform = sgp.platform_dict(hosts, latency_s)
    # SimGrid's flows are bare (no MPI): the preset's factors without SMPI's 16-byte envelope.
    platform["network"].update({"smpi": "simgrid-3.32", "envelope_bytes": 0})
    res = cw.simulate(platform, sgp.flows_to_trace(hosts, flows), model=MODEL, placement="explicit", seed=0)
    return sgp.ours_finish_by_flow(flows, res.messages)


@requires_simgrid
def test_ib_simgrid_with_the_smpi_preset_is_simgrids_default_ib() -> None:
    """SimGrid's IB model with its defaults (SMPI's factors on) equals ``ib-simgrid`` with the
    ``simgrid-3.32`` preset: the lone 1 MB flow (9.6687 ms, 19 % above CM02's 8.1 ms), the hand
    cases, and every flow of every scenario that SimGrid's stale penalties leave untouched."""
    import commaware as cw

    lone = [(0, 1, M)]
    assert simulate_ib_smpi(cw, 2, lone) == pytest.approx([M / (BW * 0.940694) + LAT * 11.6436], rel=1e-12)
    for name, (hosts, flows, _) in HAND_CASES.items():
        sg = simgrid_ib(hosts, flows, flags=sgp.IB_DEFAULT_FLAGS)
        assert sgp.ib_stale_flows(sg) == set()
        assert simulate_ib_smpi(cw, hosts, flows) == pytest.approx([f.finish for f in sg], rel=1e-12), name
    for sc in SCENARIOS:
        flows = sc.flow_list()
        sg = simgrid_ib(sc.hosts, flows, sc.lat_us, flags=sgp.IB_DEFAULT_FLAGS)
        stale = sgp.ib_stale_flows(sg)
        ours = simulate_ib_smpi(cw, sc.hosts, flows, sgp.route_latency_s(sc.lat_us))
        errors = sgp.relative_errors([f.finish for f in sg], ours)
        assert max([e for i, e in enumerate(errors) if i not in stale], default=0.0) < 1e-12, str(sc)
