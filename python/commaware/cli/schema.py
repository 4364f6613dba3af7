"""`commaware schema`: the JSON Schemas of the input formats."""

from __future__ import annotations

import json

import click

from .. import _core


@click.command("schema")
@click.argument("what", type=click.Choice(["platform", "trace", "multicast", "scheme", "workload", "sweep", "trace-summary"]))
def schema_cmd(what: str) -> None:
    """Print the JSON Schema of the platform, trace, multicast instance, communication scheme, job workload or
    sweep spec format, or of the output of `commaware trace show --json` (trace-summary)."""
    if what == "sweep":
        from ..experiments.sweep import spec_schema

        click.echo(json.dumps(spec_schema(), indent=2, ensure_ascii=False))
        return
    schemas = {"platform": _core.platform_schema, "trace": _core.trace_schema, "multicast": _core.multicast_schema,
               "scheme": _core.scheme_schema, "workload": _core.workload_schema,
               "trace-summary": _core.trace_summary_schema}
    click.echo(schemas[what]())
