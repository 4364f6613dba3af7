"""The collectives and sendrecv added for real programs: replayed makespans against hand
calculation on a simple platform (latency L, NIC bandwidth B, every message rendezvous)."""

from __future__ import annotations

import pytest

from commaware import simulate

L, B, BLOCK = 1e-4, 1e8, 1e6
PLATFORM = {"cluster": {"count": 8, "speed": 1e9},
            "network": {"model": "maxmin", "bandwidth": B, "latency": L, "eager_threshold": 0}}


def run(op: dict, p: int) -> float:
    return simulate(PLATFORM, {"ranks": [[op] for _ in range(p)]}).makespan


def msg(blocks: float) -> float:
    return L + blocks * BLOCK / B


def test_gather_binomial_on_4_ranks():
    # Round 0: 1→0 and 3→2 (one block each, in parallel); round 1: 2→0 with two blocks.
    assert run({"op": "gather", "root": 0, "bytes": BLOCK}, 4) == pytest.approx(msg(1) + msg(2), rel=1e-12)


def test_scatter_binomial_on_4_ranks():
    # 0→2 with two blocks (the larger subtree first), then 0→1 and 2→3 in parallel.
    assert run({"op": "scatter", "root": 0, "bytes": BLOCK}, 4) == pytest.approx(msg(2) + msg(1), rel=1e-12)


def test_reduce_binomial_on_8_ranks_has_three_levels():
    assert run({"op": "reduce", "root": 3, "bytes": BLOCK}, 8) == pytest.approx(3 * msg(1), rel=1e-12)


def test_allgather_ring_on_5_ranks():
    # 4 steps; in each every rank sends one block to its right and receives from its left.
    assert run({"op": "allgather", "bytes": BLOCK}, 5) == pytest.approx(4 * msg(1), rel=1e-12)


def test_allgatherv_ring_steps_wait_for_the_largest_block():
    sizes = [BLOCK, 2 * BLOCK, BLOCK]
    # Step k moves block (r − k) from every r: k = 0 moves blocks 0, 1, 2 (largest 2),
    # k = 1 moves blocks 2, 0, 1 (largest 2) — each step lasts its largest message.
    assert run({"op": "allgatherv", "bytes": sizes}, 3) == pytest.approx(2 * msg(2), rel=1e-12)


def test_gatherv_root_posts_every_receive_at_once():
    sizes = [0.0, BLOCK, 3 * BLOCK]
    # The default (SMPI's and MPICH's): the root posts both receives at once, so both transfers
    # share its link from L: 1's block ends at L + 2 blocks / B, then 2's last 2 blocks at full rate.
    assert run({"op": "gatherv", "root": 0, "bytes": sizes}, 3) == pytest.approx(L + 4 * BLOCK / B, rel=1e-12)


def test_gatherv_linear_root_receives_in_rank_order():
    sizes = [0.0, BLOCK, 3 * BLOCK]
    # Root 0 receives from 1, then from 2 (rendezvous: 2's transfer starts when 0 posts).
    ops = {"ranks": [[{"op": "gatherv", "root": 0, "bytes": sizes}] for _ in range(3)]}
    assert simulate(PLATFORM, ops, coll="gatherv=linear").makespan == pytest.approx(msg(1) + msg(3), rel=1e-12)


def test_scatterv_root_posts_every_send_at_once():
    sizes = [5.0, 2 * BLOCK, BLOCK]
    # Both sends share the root's link from L: 2's block ends at L + 2 blocks / B, then 1's
    # last block at full rate.
    assert run({"op": "scatterv", "root": 0, "bytes": sizes}, 3) == pytest.approx(L + 3 * BLOCK / B, rel=1e-12)


def test_scatterv_linear_root_sends_in_rank_order():
    sizes = [5.0, 2 * BLOCK, BLOCK]
    ops = {"ranks": [[{"op": "scatterv", "root": 0, "bytes": sizes}] for _ in range(3)]}
    assert simulate(PLATFORM, ops, coll="scatterv=linear").makespan == pytest.approx(msg(2) + msg(1), rel=1e-12)


def test_reduce_scatter_and_alltoallv_pairwise():
    # MPICH's pairwise reduce-scatter: round i pairs r + i and r - i for every count, a power of
    # two included (SimGrid's mpich_pair, checked against SMPI in test_smpi_replay): the same
    # messages as an alltoallv over the `ring` partners in which r sends sizes[dst] to dst.
    sizes = [2 * BLOCK, BLOCK, BLOCK, 3 * BLOCK]
    reduce_scatter = run({"op": "reduce_scatter", "bytes": sizes}, 4)
    same_messages = {"ranks": [[{"op": "alltoallv", "bytes": sizes}] for _ in range(4)]}
    assert reduce_scatter == pytest.approx(
        simulate(PLATFORM, same_messages, coll="alltoallv=ring").makespan, rel=1e-12)
    ranks = [[{"op": "alltoallv", "bytes": [BLOCK * (1 + (r == 0)) for _ in range(4)]}] for r in range(4)]
    # Rank 0 sends 2 blocks to everyone, the others 1: every round lasts a 2-block message.
    assert simulate(PLATFORM, {"ranks": ranks}).makespan == pytest.approx(3 * msg(2), rel=1e-12)


def test_scan_recursive_doubling_on_6_ranks():
    # Masks 1, 2, 4: rounds 0 and 1 pair everyone; round 2 pairs only 0↔4 and 1↔5.
    assert run({"op": "scan", "bytes": BLOCK}, 6) == pytest.approx(3 * msg(1), rel=1e-12)
    assert run({"op": "exscan", "bytes": BLOCK}, 6) == pytest.approx(3 * msg(1), rel=1e-12)


def test_sendrecv_ring_shift():
    ranks = [[{"op": "sendrecv", "dst": (r + 1) % 4, "bytes": BLOCK, "src": (r - 1) % 4}] for r in range(4)]
    assert simulate(PLATFORM, {"ranks": ranks}).makespan == pytest.approx(msg(1), rel=1e-12)


def test_collectives_on_sub_communicators_run_side_by_side():
    # 4 ranks split into {0, 1} and {2, 3}; each pair broadcasts one block from its comm
    # rank 0: two single messages on distinct NICs, at the same time.
    ranks = [[{"op": "comm_split", "color": r // 2, "key": r},
              {"op": "bcast", "root": 0, "bytes": BLOCK, "comm": 1}] for r in range(4)]
    assert simulate(PLATFORM, {"ranks": ranks}).makespan == pytest.approx(msg(1), rel=1e-12)
    # The same bcast on the world takes two levels of the binomial tree.
    world = [[{"op": "bcast", "root": 0, "bytes": BLOCK}] for _ in range(4)]
    assert simulate(PLATFORM, {"ranks": world}).makespan == pytest.approx(2 * msg(1), rel=1e-12)


def test_envelope_bytes_are_added_to_every_message():
    plat = {**PLATFORM, "network": {**PLATFORM["network"], "envelope_bytes": 16}}
    ranks = [[{"op": "barrier"}] for _ in range(2)]
    # One zero-payload exchange each way: latency plus 16 bytes.
    assert simulate(plat, {"ranks": ranks}).makespan == pytest.approx(L + 16 / B, rel=1e-12)
    assert simulate(PLATFORM, {"ranks": ranks}).makespan == pytest.approx(L, rel=1e-12)


def test_unknown_communicator_is_exit_2(tmp_path):
    import json

    from conftest import EXAMPLES, run_cli

    path = tmp_path / "t.json"
    path.write_text(json.dumps({"ranks": [[{"op": "barrier", "comm": 1}], [{"op": "barrier"}]]}))
    proc = run_cli("simulate", str(EXAMPLES / "cluster16.json"), str(path))
    assert proc.returncode == 2
    assert "ranks[0][0].comm" in proc.stderr and "does not exist" in proc.stderr


def test_selected_algorithms_change_the_schedule_as_worked_out():
    # Allreduce of 4 blocks on 4 ranks (power of two: no fold).
    ranks = [[{"op": "allreduce", "bytes": 4 * BLOCK}] for _ in range(4)]
    trace = {"ranks": ranks}
    # Default recursive doubling: 2 rounds of the whole buffer.
    assert simulate(PLATFORM, trace).makespan == pytest.approx(2 * msg(4), rel=1e-12)
    # Ring (lr): 2·(4 − 1) rounds of a quarter.
    assert simulate(PLATFORM, trace, coll="allreduce=lr").makespan == pytest.approx(6 * msg(1), rel=1e-12)
    # Rabenseifner: halves (2, 1 blocks) then doubles back (1, 2 blocks).
    assert simulate(PLATFORM, trace, coll="allreduce=rab_rdb").makespan == pytest.approx(2 * msg(2) + 2 * msg(1), rel=1e-12)
    # The same choice from the platform file, and --coll over it.
    plat = {**PLATFORM, "network": {**PLATFORM["network"], "collectives": {"allreduce": "lr"}}}
    assert simulate(plat, trace).makespan == pytest.approx(6 * msg(1), rel=1e-12)
    assert simulate(plat, trace, coll="allreduce=rdb").makespan == pytest.approx(2 * msg(4), rel=1e-12)


def test_bad_collective_choices_are_exit_2(tmp_path):
    import json

    from conftest import EXAMPLES, run_cli

    path = tmp_path / "t.json"
    path.write_text(json.dumps({"ranks": [[{"op": "allgather", "bytes": 8}] for _ in range(6)]}))
    for coll, words in [("allgather=frob", "no algorithm"), ("intel", "unknown preset \"intel\"; presets: mpich, ompi"),
                        ("allgather=pair", "power-of-two"), ("allgather=NTSLR_NB", "it has: ring, rdb, bruck, pair, ompi_neighborexchange")]:
        proc = run_cli("simulate", str(EXAMPLES / "cluster16.json"), str(path), "--coll", coll)
        assert proc.returncode == 2, (coll, proc.stderr)
        assert words in proc.stderr.replace("\n", "") and "Traceback" not in proc.stderr


def test_reductions_cost_flops_per_byte_combined():
    # 1e9 flop/s hosts, 2 flops a byte: combining one block takes C seconds.
    fpb, speed = 2.0, 1e9
    plat = {**PLATFORM, "network": {**PLATFORM["network"], "reduction_flops_per_byte": fpb}}
    c = BLOCK * fpb / speed
    # Allreduce on 2 ranks: one exchange, then each combines the block it received.
    two = {"ranks": [[{"op": "allreduce", "bytes": BLOCK}] for _ in range(2)]}
    assert simulate(plat, two).makespan == pytest.approx(msg(1) + c, rel=1e-12)
    assert simulate(PLATFORM, two).makespan == pytest.approx(msg(1), rel=1e-12)
    # Binomial reduce on 4: rank 2 combines 3's block then sends; rank 0 combines 1's, then 2's.
    four = {"ranks": [[{"op": "reduce", "root": 0, "bytes": BLOCK}] for _ in range(4)]}
    assert simulate(plat, four).makespan == pytest.approx(2 * msg(1) + 2 * c, rel=1e-12)
    # A copy collective costs nothing more.
    gather = {"ranks": [[{"op": "allgather", "bytes": BLOCK}] for _ in range(2)]}
    assert simulate(plat, gather).makespan == pytest.approx(msg(1), rel=1e-12)
    # Ring allreduce (lr) on 4: 3 reduce-scatter steps combine a quarter each, 3 allgather steps copy.
    ring = {"ranks": [[{"op": "allreduce", "bytes": 4 * BLOCK}] for _ in range(4)]}
    assert simulate(plat, ring, coll="allreduce=lr").makespan == pytest.approx(6 * msg(1) + 3 * c, rel=1e-12)


EAGER = {"cluster": {"count": 4, "speed": 1e9}, "network": {"bandwidth": B, "latency": L, "eager_threshold": 1e12}}


def test_test_consumes_a_completed_request_and_costs_test_seconds():
    # Rank 0's message lands at msg(1); rank 1 tests at t = 1 s (done: consumed), so its wait is free.
    ranks = [[{"op": "send", "dst": 1, "bytes": BLOCK}],
             [{"op": "irecv", "src": 0}, {"op": "sleep", "seconds": 1}, {"op": "test", "req": 0}, {"op": "wait", "req": 0}]]
    assert simulate(EAGER, {"ranks": ranks}).makespan == pytest.approx(1.0, rel=1e-12)
    costly = {**EAGER, "network": {**EAGER["network"], "test_seconds": 0.25}}
    assert simulate(costly, {"ranks": ranks}).makespan == pytest.approx(1.25, rel=1e-12)
    # Testing before the message is in consumes nothing: the wait then waits for it.
    early = [[{"op": "sleep", "seconds": 2}, {"op": "send", "dst": 1, "bytes": BLOCK}],
             [{"op": "irecv", "src": 0}, {"op": "test", "req": 0}, {"op": "wait", "req": 0}]]
    assert simulate(EAGER, {"ranks": early}).makespan == pytest.approx(2 + msg(1), rel=1e-12)


def test_waitany_takes_the_first_to_complete_then_the_next():
    # Rank 2 receives from 0 (sends at t = 2) and 1 (at t = 1). The first waitany returns when
    # 1's message is in; rank 2 then computes 0.5 s; the second waitany waits for 0's.
    ranks = [[{"op": "sleep", "seconds": 2}, {"op": "send", "dst": 2, "bytes": BLOCK}],
             [{"op": "sleep", "seconds": 1}, {"op": "send", "dst": 2, "bytes": BLOCK}],
             [{"op": "irecv", "src": 0}, {"op": "irecv", "src": 1}, {"op": "waitany", "reqs": [0, 1]},
              {"op": "compute", "seconds": 0.5}, {"op": "waitany", "reqs": [0, 1]}, {"op": "waitany", "reqs": [0, 1]},
              {"op": "waitall"}]]
    res = simulate(EAGER, {"ranks": ranks})
    assert res.makespan == pytest.approx(2 + msg(1), rel=1e-12)
    assert res.ranks["compute_seconds"].iloc[2] == pytest.approx(0.5)
    # The first waitany ended at 1 + msg(1): rank 2 was blocked until then, then from 1.5 + msg(1) to 2 + msg(1).
    assert res.ranks["blocked_seconds"].iloc[2] == pytest.approx(2 + msg(1) - 0.5, rel=1e-12)


def test_test_and_waitany_need_posted_open_requests(tmp_path):
    import json

    from conftest import EXAMPLES, run_cli

    for ops, words in [([{"op": "test", "req": 0}], "not posted"),
                       ([{"op": "irecv", "src": 0}, {"op": "waitany", "reqs": []}], "lists no request"),
                       ([{"op": "irecv", "src": 0}, {"op": "wait", "req": 0}, {"op": "waitany", "reqs": [0]}], "already waited")]:
        path = tmp_path / "t.json"
        path.write_text(json.dumps({"ranks": [[], ops]}))
        proc = run_cli("simulate", str(EXAMPLES / "cluster16.json"), str(path))
        assert proc.returncode == 2 and words in proc.stderr, (ops, proc.stderr)


def test_bad_platform_collectives_name_the_file(tmp_path):
    # Checked when the platform loads, and refused by the JSON Schema, which lists the names.
    import json

    import jsonschema
    from conftest import EXAMPLES, ROOT, run_cli

    plat = tmp_path / "plat.json"
    plat.write_text(json.dumps({**PLATFORM, "network": {**PLATFORM["network"], "collectives": {"bcast": "frob"}}}))
    proc = run_cli("simulate", str(plat), str(EXAMPLES / "ring.json"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{plat}: network.collectives: bcast has no algorithm" in proc.stderr.replace("\n", "")
    schema = json.loads((ROOT / "docs" / "platform.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    assert not validator.is_valid(json.loads(plat.read_text()))
    good = {**PLATFORM, "network": {**PLATFORM["network"], "collectives": {"preset": "ompi", "bcast": "binomial_tree",
                                                                           "scan": "linear"}}}
    assert validator.is_valid(good)
