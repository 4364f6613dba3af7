"""The JSON Schemas in docs/ are the ones generated from the validating Rust types, and
the examples validate against them."""

from __future__ import annotations

import json
import tomllib

import jsonschema
import pytest

from commaware import _core
from conftest import EXAMPLES, ROOT


@pytest.mark.parametrize("what,generate", [("platform", _core.platform_schema), ("trace", _core.trace_schema),
                                           ("multicast", _core.multicast_schema), ("scheme", _core.scheme_schema),
                                           ("workload", _core.workload_schema),
                                           ("trace-summary", _core.trace_summary_schema)])
def test_docs_schema_up_to_date(what, generate):
    path = ROOT / "docs" / f"{what}.schema.json"
    assert json.loads(path.read_text()) == json.loads(generate()), (
        f"{path} is stale: regenerate with `commaware schema {what} > {path}`")


def test_examples_validate():
    plat_schema = json.loads(_core.platform_schema())
    trace_schema = json.loads(_core.trace_schema())
    for path in EXAMPLES.iterdir():
        if path.suffix == ".toml":
            jsonschema.validate(tomllib.loads(path.read_text()), plat_schema)
        elif path.suffix == ".json":
            doc = json.loads(path.read_text())
            jsonschema.validate(doc, trace_schema if "ranks" in doc else plat_schema)
    multicast_schema = json.loads(_core.multicast_schema())
    for path in (EXAMPLES / "multicast").glob("*.json"):
        jsonschema.validate(json.loads(path.read_text()), multicast_schema)
    scheme_schema = json.loads(_core.scheme_schema())
    schemes = list((EXAMPLES / "schemes").glob("*.json"))
    assert schemes
    for path in schemes:
        jsonschema.validate(json.loads(path.read_text()), scheme_schema)
    workload_schema = json.loads(_core.workload_schema())
    workloads = list((EXAMPLES / "cosched").glob("*.json"))
    assert workloads
    for path in workloads:
        jsonschema.validate(json.loads(path.read_text()), workload_schema)
    # A generated workload (every mix) validates too.
    for mix in _core.NAS_MIXES:
        jsonschema.validate(json.loads(_core.nas_workload(20, 100.0, 1, ["A", "B", "C"], mix).to_json()), workload_schema)
