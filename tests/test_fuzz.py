"""Fuzz the platform and trace parsers: any input gives a result or an InputError, never a
panic or another exception. Bounded by hypothesis' example count and deadline."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import commaware

OPS = ["compute", "send", "isend", "recv", "irecv", "wait", "waitall", "barrier", "bcast", "allreduce", "alltoall", "sleep", "bogus"]
numbers = st.one_of(st.integers(-3, 5), st.floats(allow_nan=False, width=32), st.sampled_from([0, 1e300, -1e300, 2**64]))
values = st.one_of(numbers, st.sampled_from(["any", "x", None, True, [], {}]))
ops = st.builds(
    lambda op, fields: {"op": op, **fields},
    st.sampled_from(OPS),
    st.dictionaries(st.sampled_from(["dst", "src", "bytes", "tag", "req", "root", "flops", "seconds", "sync", "zz"]), values, max_size=4),
)
traces = st.builds(lambda ranks: {"ranks": ranks}, st.lists(st.lists(ops, max_size=5), min_size=0, max_size=4))

PLATFORM = {"cluster": {"count": 4, "speed": 1e9, "cores": 2}, "network": {"bandwidth": 1e8, "latency": 1e-5}}
net_fields = st.dictionaries(
    st.sampled_from(["model", "bandwidth", "latency", "eager_threshold", "backbone", "memory_bandwidth", "send_overhead", "x"]),
    values, max_size=4)
cluster_fields = st.dictionaries(st.sampled_from(["count", "speed", "cores", "memory", "prefix"]), values, max_size=3)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces)
def test_trace_parser_and_replay_never_crash(trace):
    try:
        t = commaware.load_trace(trace)
    except commaware.InputError as exc:
        assert str(exc)
        return
    try:
        res = commaware.simulate(PLATFORM, t, placement="rrn")
    except commaware.InputError as exc:
        assert str(exc)
        return
    assert res.makespan >= 0


@settings(max_examples=200, deadline=None)
@given(net_fields, cluster_fields)
def test_platform_parser_never_crashes(net, cluster):
    spec = {"cluster": {**PLATFORM["cluster"], **cluster}, "network": {**PLATFORM["network"], **net}}
    try:
        p = commaware.load_platform(spec)
    except commaware.InputError as exc:
        assert str(exc)
        return
    assert len(p) >= 1


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text_is_rejected_cleanly(text):
    from commaware import _core

    for loader in (_core.load_platform, _core.load_trace):
        try:
            loader(text, "fuzz.json")
        except commaware.InputError as exc:
            assert "fuzz.json" in str(exc)
