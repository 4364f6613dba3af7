"""Bad input: a clear message naming file, field and reason; exit code 2; nothing on stdout."""

from __future__ import annotations

import pytest

import commaware
from conftest import EXAMPLES, run_cli

PLATFORM = {"cluster": {"count": 4, "speed": 1e9, "cores": 1, "memory": 1e9},
            "network": {"model": "maxmin", "bandwidth": 1.25e8, "latency": 5e-5, "eager_threshold": 65536}}
PINGPONG = {"ranks": [[{"op": "send", "dst": 1, "bytes": 8}], [{"op": "recv", "src": 0}]]}


def with_network(**kw):
    return {**PLATFORM, "network": {**PLATFORM["network"], **kw}}


PLATFORM_CASES = [
    ("malformed", "{ not json", "malformed JSON"),
    ("zero_bw", with_network(bandwidth=0), "network.bandwidth: must be > 0"),
    ("neg_latency", with_network(latency=-1), "network.latency: must be >= 0"),
    ("zero_speed", {**PLATFORM, "cluster": {**PLATFORM["cluster"], "speed": 0}}, "speed: must be > 0"),
    ("missing_bw", {**PLATFORM, "network": {"latency": 0}}, "missing field `bandwidth`"),
    ("unknown_model", with_network(model="quantum"), "unknown sharing model `quantum`"),
    ("unknown_host", {**PLATFORM, "overrides": {"zz": {"speed": 1}}}, "unknown host `zz`"),
    ("both", {**PLATFORM, "hosts": [{"name": "a", "speed": 1}]}, "either `cluster` or `hosts`"),
    ("typo", {**PLATFORM, "netwrok": {}}, "unknown field `netwrok`"),
]

TRACE_CASES = [
    ("malformed", '{"ranks": [[{"op": "send",', "malformed JSON"),
    ("unknown_op", {"ranks": [[{"op": "teleport"}]]}, "unknown variant `teleport`"),
    ("rank_range", {"ranks": [[{"op": "send", "dst": 9, "bytes": 1}], []]}, "ranks[0][0].dst: rank 9 out of range"),
    ("neg_bytes", {"ranks": [[{"op": "send", "dst": 1, "bytes": -5}], [{"op": "recv", "src": 0}]]}, "ranks[0][0].bytes: must be >= 0"),
    ("huge_bytes", {"ranks": [[{"op": "send", "dst": 1, "bytes": 1e300}], [{"op": "recv", "src": 0}]]}, "too large"),
    ("nonfinite", '{"ranks": [[{"op": "sleep", "seconds": NaN}]]}', "malformed JSON"),
    ("wait_unposted", {"ranks": [[{"op": "wait", "req": 3}]]}, "request 3 is not posted yet"),
    ("no_ranks", {"ranks": []}, "no ranks"),
    ("compute_both", {"ranks": [[{"op": "compute", "flops": 1, "seconds": 1}]]}, "exactly one of `flops` or `seconds`"),
    ("bad_src", {"ranks": [[{"op": "recv", "src": "anyone"}]]}, 'got "anyone"'),
]

RUN_CASES = [
    ("deadlock", {"ranks": [[{"op": "recv", "src": 1}], [{"op": "recv", "src": 0}]]}, "deadlocks", ["rank 0 blocked in op 0 `recv(src=1, tag=0)`", "rank 1 blocked"]),
    ("unmatched", {"ranks": [[{"op": "send", "dst": 1, "bytes": 8, "tag": 4}], []]}, "left unmatched", ["never received"]),
    ("too_many_ranks", {"ranks": [[]] * 5}, "5 ranks but only 4 hosts", []),
]


def check_fails(args, *needles):
    proc = run_cli(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == "", "no partial output on stdout"
    flat = " ".join(proc.stderr.split())
    for needle in needles:
        assert needle in flat, f"{needle!r} not in {flat!r}"
    return flat


@pytest.mark.parametrize("name,content,message", PLATFORM_CASES, ids=[c[0] for c in PLATFORM_CASES])
def test_bad_platform(write_json, name, content, message):
    plat = write_json(f"{name}.json", content)
    trace = write_json("trace.json", PINGPONG)
    check_fails(["simulate", plat, trace, "--json"], str(plat), message)


@pytest.mark.parametrize("name,content,message", TRACE_CASES, ids=[c[0] for c in TRACE_CASES])
def test_bad_trace(write_json, name, content, message):
    plat = write_json("platform.json", PLATFORM)
    trace = write_json(f"{name}.json", content)
    check_fails(["simulate", plat, trace, "--json"], str(trace), message)


@pytest.mark.parametrize("name,content,message,details", RUN_CASES, ids=[c[0] for c in RUN_CASES])
def test_bad_run(write_json, name, content, message, details):
    plat = write_json("platform.json", PLATFORM)
    trace = write_json(f"{name}.json", content)
    check_fails(["simulate", plat, trace, "--json"], message, *details)


def test_placement_needs_more_cores(write_json):
    plat = write_json("platform.json", PLATFORM)
    trace = write_json("t.json", {"ranks": [[]] * 5})
    check_fails(["simulate", plat, trace, "--placement", "rrp"], "5 ranks need more cores than the 4")


def test_missing_file_and_bad_options(write_json, tmp_path):
    plat = write_json("platform.json", PLATFORM)
    trace = write_json("t.json", PINGPONG)
    check_fails(["simulate", tmp_path / "nope.json", trace], "nope.json: cannot read")
    check_fails(["simulate", plat, trace, "--model", "nope"], "unknown sharing model `nope`")
    check_fails(["simulate", plat, trace, "--gantt", tmp_path / "x.pdf"], "needs a .svg or .png")
    assert not (tmp_path / "x.pdf").exists()


def test_api_raises_typed_errors():
    with pytest.raises(commaware.PlatformError) as exc:
        commaware.load_platform(with_network(bandwidth=-1))
    assert exc.value.field == "network.bandwidth" and exc.value.source == "<dict>"
    with pytest.raises(commaware.TraceError):
        commaware.load_trace({"ranks": [[{"op": "nope"}]]})
    with pytest.raises(commaware.DeadlockError):
        commaware.simulate(PLATFORM, {"ranks": [[{"op": "recv", "src": 1}], [{"op": "recv", "src": 0}]]})
    with pytest.raises(commaware.OptionsError):
        commaware.simulate(PLATFORM, PINGPONG, placement="diagonal")
    assert issubclass(commaware.DeadlockError, commaware.InputError)


# --- seeds: 0 <= seed < 2^64, one check for the API and the CLI ---------------------------------

BAD_SEEDS = [("-1", "got -1"), ("18446744073709551616", "got 18446744073709551616"),
             ("99999999999999999999999", "got 1.000e+23")]


@pytest.mark.parametrize("seed,shown", BAD_SEEDS, ids=[s[0] for s in BAD_SEEDS])
def test_bad_seed_cli(write_json, seed, shown):
    plat = write_json("platform.json", PLATFORM)
    trace = write_json("t.json", PINGPONG)
    instance = EXAMPLES / "multicast" / "fig4.json"
    for args in (["simulate", plat, trace, "--placement", "random", "--seed", seed],
                 ["multicast", instance, "-a", "rrs", "--seed", seed],
                 ["multicast", "generate", "--seed", seed]):
        flat = check_fails(args, "--seed: must be between 0 and 2^64 - 1", shown)
        assert "Traceback" not in flat and flat.count("error:") == 1, flat


def test_largest_seed_is_accepted(write_json):
    plat = write_json("platform.json", PLATFORM)
    trace = write_json("t.json", PINGPONG)
    proc = run_cli("simulate", plat, trace, "--placement", "random", "--seed", str(2**64 - 1), "--json")
    assert proc.returncode == 0, proc.stderr
    assert run_cli("multicast", "generate", "--nodes", "3", "--seed", str(2**64 - 1)).returncode == 0


@pytest.mark.parametrize("seed", [-1, 2**64, 10**400, 1.5, "3", True])
def test_bad_seed_api(seed):
    from commaware import multicast

    calls = [lambda: commaware.simulate(PLATFORM, PINGPONG, placement="random", seed=seed),
             lambda: multicast.generate(4, seed=seed),
             lambda: multicast.schedule(EXAMPLES / "multicast" / "fig4.json", "rrs", seed=seed)]
    for call in calls:
        with pytest.raises(commaware.OptionsError) as exc:
            call()
        assert (exc.value.source, exc.value.field) == ("seed", "seed")
        assert exc.value.reason and str(exc.value) == f"seed: {exc.value.reason}"
        assert len(str(exc.value)) < 120, "a huge seed is not echoed digit by digit"


def test_seed_api_accepts_the_range():
    from commaware import multicast

    a = commaware.simulate(PLATFORM, PINGPONG, placement="random", seed=2**64 - 1)
    assert a.makespan > 0
    assert multicast.generate(4, seed=0).to_json() == multicast.generate(4, seed=0).to_json()


# --- demo --examples DIR ------------------------------------------------------------------------


def test_demo_examples_dir_missing_a_file(tmp_path):
    (tmp_path / "cluster16.json").write_text((EXAMPLES / "cluster16.json").read_text())
    (tmp_path / "ring.json").write_text((EXAMPLES / "ring.json").read_text())
    flat = check_fails(["demo", "--examples", tmp_path], str(tmp_path), "missing alltoall.json, master_worker.json, "
                       "bcast_barrier.json")
    assert "Traceback" not in flat


def test_demo_examples_dir_with_a_bad_file(tmp_path):
    for name in ("cluster16.json", "ring.json", "alltoall.json", "master_worker.json", "bcast_barrier.json"):
        (tmp_path / name).write_text((EXAMPLES / name).read_text())
    (tmp_path / "alltoall.json").write_text("{ not json")
    check_fails(["demo", "--examples", tmp_path], str(tmp_path / "alltoall.json"), "malformed JSON")
    proc = run_cli("demo", "--examples", tmp_path / "nope")
    assert proc.returncode == 2 and "does not exist" in proc.stderr
