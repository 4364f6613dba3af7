"""The JSON Schemas carry the loaders' bounds: every bad-input case is checked against both,
and the schema rejects each one it can express (ranges that depend on other fields, such
as a rank below the rank count, are the loaders' alone)."""

from __future__ import annotations

import json

import jsonschema
import pytest

import commaware
from commaware import _core
from .test_bad_input import PLATFORM_CASES, TRACE_CASES

#: Trace cases no JSON Schema can express: they depend on the rank count or on op order.
TRACE_LOADER_ONLY = {"rank_range", "wait_unposted"}
#: Documents (not texts that fail to parse) among the cases.
DOC_CASES = [c for c in TRACE_CASES if not isinstance(c[1], str)]


def test_text_cases_are_the_unparseable_ones():
    assert {c[0] for c in TRACE_CASES if isinstance(c[1], str)} == {"malformed", "nonfinite"}


@pytest.mark.parametrize("name,content,message", DOC_CASES, ids=[c[0] for c in DOC_CASES])
def test_trace_case_rejected_by_loader_and_schema(name, content, message):
    with pytest.raises(commaware.TraceError):
        commaware.load_trace(content)
    valid = jsonschema.Draft7Validator(json.loads(_core.trace_schema())).is_valid(content)
    assert valid == (name in TRACE_LOADER_ONLY), f"schema {'accepts' if valid else 'rejects'} {name}"


@pytest.mark.parametrize("op", [{"op": "compute", "flops": 1}, {"op": "compute", "seconds": 2},
                                {"op": "send", "dst": 0, "bytes": 2**53, "tag": 3}])
def test_schema_accepts_what_the_loader_accepts(op):
    trace = {"ranks": [[op]]}
    commaware.load_trace(trace)
    jsonschema.validate(trace, json.loads(_core.trace_schema()))


#: Platform cases no JSON Schema can express: an override must name an existing host.
PLATFORM_LOADER_ONLY = {"unknown_host"}
PLATFORM_DOCS = [c for c in PLATFORM_CASES if not isinstance(c[1], str)]


@pytest.mark.parametrize("name,content,message", PLATFORM_DOCS, ids=[c[0] for c in PLATFORM_DOCS])
def test_platform_case_rejected_by_loader_and_schema(name, content, message):
    with pytest.raises(commaware.InputError):
        commaware.load_platform(content)
    valid = jsonschema.Draft7Validator(json.loads(_core.platform_schema())).is_valid(content)
    assert valid == (name in PLATFORM_LOADER_ONLY), f"schema {'accepts' if valid else 'rejects'} {name}"


@pytest.mark.parametrize("platform", [
    {"cluster": {"count": 2, "speed": 1, "cores": 2}, "network": {"bandwidth": 1, "model": "contention_free"}},
    {"hosts": [{"name": "a", "speed": 1, "send_overhead": 0}], "network": {"bandwidth": 1, "latency": 0}},
])
def test_platform_schema_accepts_what_the_loader_accepts(platform):
    commaware.load_platform(platform)
    jsonschema.validate(platform, json.loads(_core.platform_schema()))
