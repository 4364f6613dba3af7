"""Bad input: a clear message naming file, field and reason; exit code 2; nothing on stdout."""

from __future__ import annotations

import json

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
    # Issue 30: a latency this long made the clock overflow, reported as "the trace deadlocks".
    ("latency_overflow", with_network(latency=1e308), "network.latency: 1e308 s is too long for any progress to be "
     "made (the simulated clock would overflow); must be at most 1e12 s"),
    ("overhead_overflow", with_network(send_overhead=1e20), "network.send_overhead: 1e20 s is too long"),
    ("neg_envelope", with_network(envelope_bytes=-16), "network.envelope_bytes: must be >= 0"),
    ("neg_test_seconds", with_network(test_seconds=-1), "network.test_seconds: must be >= 0"),
    ("neg_reduction_cost", with_network(reduction_flops_per_byte=-2), "network.reduction_flops_per_byte: must be >= 0"),
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
    ("nonfinite", '{"ranks": [[{"op": "sleep", "seconds": NaN}]]}', "ranks[0][0].seconds: non-finite number (NaN/inf) is not allowed at line 1 column 40"),
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


# Error details (issue 13, item 5): every InputError carries .source, .field and .reason,
# and str(exc) is "source: field: reason".


def details(exc: commaware.InputError) -> tuple[str, str, str]:
    e = exc
    assert str(e) == ": ".join(p for p in (e.source, e.field, e.reason) if p), str(e)
    return e.source, e.field, e.reason


def test_read_errors_carry_source_field_reason(tmp_path):
    cases = {
        tmp_path / "nope.json": "cannot read: No such file or directory",
        tmp_path: "cannot read: Is a directory",
    }
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe{}")
    cases[tmp_path / "binary.json"] = "not UTF-8 text (byte 0 is 0xff)"
    for path, reason in cases.items():
        with pytest.raises(commaware.PlatformError) as exc:
            commaware.load_platform(path)
        assert details(exc.value) == (str(path), "", reason)
    bad = tmp_path / "bad.toml"
    bad.write_text("[cluster\ncount = 4\n")
    with pytest.raises(commaware.TraceError) as exc:
        commaware.load_trace(bad)
    source, field, reason = details(exc.value)
    assert (source, field) == (str(bad), "") and reason.startswith("malformed TOML") and "line 1 column" in reason
    with pytest.raises(commaware.PlatformError) as exc:
        commaware.load_platform(42)
    assert details(exc.value) == ("<int>", "", "expected a file path or a dict, got int")


def test_toml_errors_give_the_toml_files_own_position(write_json):
    plat = write_json("platform.toml", '[cluster]\ncount = 4\nspeed = "fast"\n\n[network]\nbandwidth = 1e9\n')
    with pytest.raises(commaware.PlatformError) as exc:
        commaware.load_platform(plat)
    assert details(exc.value) == (str(plat), "cluster.speed", 'invalid type: string "fast", expected f64 at line 3 column 9')
    trace = write_json("t.json", PINGPONG)
    check_fails(["simulate", plat, trace], f"{plat}: cluster.speed: invalid type", "at line 3 column 9")
    # A valid TOML platform still loads, and a NaN in TOML (valid TOML) is named as such.
    assert len(commaware.load_platform(EXAMPLES / "platform_hetero.toml")) > 0
    nan = write_json("nan.toml", '[cluster]\ncount = 4\nspeed = nan\n\n[network]\nbandwidth = 1e9\n')
    with pytest.raises(commaware.PlatformError) as exc:
        commaware.load_platform(nan)
    assert exc.value.reason == "non-finite number (NaN/inf) is not allowed, got NaN"
    assert exc.value.field.endswith(".speed")


@pytest.mark.parametrize("op,field", [
    ({"op": "send", "dst": "x", "bytes": 1}, "ranks[0][0].dst"),
    ({"op": "isend", "dst": 1, "bytes": "lots"}, "ranks[0][0].bytes"),
    ({"op": "recv", "src": 0, "tag": [1]}, "ranks[0][0].tag"),
    ({"op": "wait", "req": -1}, "ranks[0][0].req"),
    ({"op": "send", "dst": 1, "bytes": 1, "colour": "red"}, "ranks[0][0].colour"),
])
def test_type_errors_name_the_field_not_the_op(op, field):
    with pytest.raises(commaware.TraceError) as exc:
        commaware.load_trace({"ranks": [[op], []]})
    assert exc.value.field == field, str(exc.value)
    assert "line" not in exc.value.reason, "a dict has no lines"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_numbers_in_a_dict_are_named(value):
    with pytest.raises(commaware.TraceError) as exc:
        commaware.load_trace({"ranks": [[{"op": "sleep", "seconds": 1}, {"op": "sleep", "seconds": value}]]})
    source, field, reason = details(exc.value)
    assert (source, field) == ("<dict>", "ranks[0][1].seconds")
    assert reason.startswith("non-finite number (NaN/inf) is not allowed")
    with pytest.raises(commaware.PlatformError) as exc:
        commaware.load_platform(with_network(latency=value))
    assert exc.value.field == "network.latency" and "non-finite" in exc.value.reason
    with pytest.raises(commaware.PlatformError) as exc:
        commaware.load_platform({**PLATFORM, "cluster": {**PLATFORM["cluster"], "speed": {1, 2}}})
    assert details(exc.value) == ("<dict>", "cluster.speed", "a set is not a JSON value")


def test_huge_values_are_shown_in_scientific_notation(write_json):
    plat = write_json("platform.json", with_network(latency=-1e300))
    trace = write_json("t.json", {"ranks": [[{"op": "send", "dst": 1, "bytes": 1e300}], [{"op": "recv", "src": 0}]]})
    flat = check_fails(["simulate", plat, trace], "network.latency: must be >= 0, got -1e300")
    plat = write_json("platform.json", PLATFORM)
    flat = check_fails(["simulate", plat, trace], "ranks[0][0].bytes: 1e300 is too large")
    assert max(len(run) for run in "".join(c if c.isdigit() else " " for c in flat).split()) < 25, flat
    with pytest.raises(commaware.PlatformError) as exc:
        commaware.load_platform({**PLATFORM, "cluster": {**PLATFORM["cluster"], "cores": 10**300}})
    assert "1e300" in exc.value.reason and len(exc.value.reason) < 80, exc.value.reason


def test_replay_errors_name_their_source(write_json):
    plat = write_json("platform.json", PLATFORM)
    deadlock = write_json("deadlock.json", {"ranks": [[{"op": "recv", "src": 1}], [{"op": "recv", "src": 0}]]})
    with pytest.raises(commaware.DeadlockError) as exc:
        commaware.simulate(plat, deadlock)
    assert exc.value.source == str(deadlock)
    five = write_json("five.json", {"ranks": [[]] * 5})
    with pytest.raises(commaware.PlacementError) as exc:
        commaware.simulate(plat, five, placement="rrp")
    assert details(exc.value) == (str(five), "ranks", "5 ranks need more cores than the 4 the platform has")
    explicit = write_json("explicit.json", {"ranks": [[], []], "placement": ["n0", "zz"]})
    with pytest.raises(commaware.PlacementError) as exc:
        commaware.simulate(plat, explicit)
    assert details(exc.value) == (str(explicit), "placement[1]", "unknown host `zz`")
    for kw, source in (({"model": "nope"}, "--model"), ({"placement": "diagonal"}, "--placement")):
        with pytest.raises(commaware.OptionsError) as exc:
            commaware.simulate(plat, PINGPONG, **kw)
        assert details(exc.value)[:2] == (source, "")
    check_fails(["simulate", plat, deadlock], f"{deadlock}: the trace deadlocks")
    check_fails(["simulate", plat, PINGPONG_FILE(write_json), "--model", "nope"], "--model: unknown sharing model")


def PINGPONG_FILE(write_json):
    return write_json("pingpong.json", PINGPONG)


def test_multicast_errors_name_their_source(write_json):
    from commaware import multicast

    with pytest.raises(commaware.OptionsError) as exc:
        multicast.generate(100_000)
    assert details(exc.value) == ("--nodes", "", "100000 nodes, at most 4096 (2^12) are allowed")
    with pytest.raises(commaware.OptionsError) as exc:
        multicast.generate(8, pattern="ring")
    assert details(exc.value)[:2] == ("--pattern", "")
    with pytest.raises(commaware.OptionsError) as exc:
        multicast.generate(8, pattern="random", sources=-1)
    assert details(exc.value)[:2] == ("--sources", "")
    inst = multicast.generate(4, seed=1)
    with pytest.raises(commaware.OptionsError) as exc:
        multicast.schedule(inst, "fastest")
    assert details(exc.value)[:2] == ("--algorithm", "")
    with pytest.raises(commaware.OptionsError) as exc:
        multicast.execute(inst, multicast.schedule(inst, "ecf"), model="nope")
    assert details(exc.value)[:2] == ("--execute", "")
    bad = write_json("inst.json", {**inst.to_dict(), "multicasts": [{"source": 0, "destinations": [1e300], "bytes": 1}]})
    with pytest.raises(commaware.MulticastError) as exc:
        multicast.load_instance(bad)
    source, field, reason = details(exc.value)
    assert (source, field) == (str(bad), "multicasts[0].destinations[0]") and "`1e300`" in reason and "line 1" in reason


# Sizes (issue 13, item 4): checked against documented limits before allocating.


def test_huge_sizes_are_refused_not_aborted(write_json):
    trace = write_json("t.json", PINGPONG)
    for cluster, field in (({"count": 10**12}, "cluster.count"), ({"count": 4, "cores": 10**12}, "cluster.cores"),
                           ({"count": 2**20, "cores": 32}, "")):
        plat = write_json("p.json", {**PLATFORM, "cluster": {**PLATFORM["cluster"], **cluster}})
        flat = check_fails(["simulate", plat, trace], str(plat), f"{field}: " if field else "cores in all", "at most")
        assert "memory allocation" not in flat
    # contention_free keeps no table per pair of hosts (unless the platform gives one): 50,000
    # hosts run, and a lone 8-byte eager message takes latency + 8 B / bandwidth.
    plat = write_json("p.json", {**PLATFORM, "cluster": {**PLATFORM["cluster"], "count": 50_000}})
    proc = run_cli("simulate", plat, trace, "--model", "contention_free", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["makespan"] == pytest.approx(5e-5 + 8 / 1.25e8, rel=1e-12)
    check_fails(["multicast", "generate", "--nodes", "100000"], "--nodes: 100000 nodes, at most 4096 (2^12) are allowed")


def test_memory_is_checked_before_allocating_under_an_address_space_limit():
    """4,096 nodes with per-pair links fit the limits but need more than 600 MiB: under that
    address-space limit, generation is refused with exit 2 instead of aborting the process."""
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (600 << 20, 600 << 20))

    proc = subprocess.run([sys.executable, "-m", "commaware.cli", "multicast", "generate", "--nodes", "4096", "--network", "mixed"],
                          capture_output=True, text=True, preexec_fn=limit, timeout=120)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout == ""
    assert "--nodes: needs about" in " ".join(proc.stderr.split()) and "cannot be allocated" in proc.stderr

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
        assert (exc.value.source, exc.value.field) == ("seed", "")  # an option has no field path
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
