"""Speed in the simulation's own output (issue 29, item 1): `actions` and `events` always, the
wall-clock `timing` only when asked, so the default `--json` stays the same bytes run after run."""

from __future__ import annotations

import json

import pytest

import commaware

PLATFORM = {"cluster": {"count": 2, "speed": 1e9, "prefix": "h"}, "network": {"bandwidth": 1.25e8, "latency": 1e-4}}
# Rank 0: isend + waitall, rank 1: recv: 3 ops. One rendezvous message: its latency ends at
# 1e-4 s (an engine step), its last byte arrives at 1e-4 + 1e6 / 1.25e8 s (another).
TRACE = {"ranks": [[{"op": "isend", "dst": 1, "bytes": 1000000}, {"op": "waitall"}], [{"op": "recv", "src": 0}]]}
TIMING_KEYS = {"load_s", "replay_s", "load_actions_per_s", "replay_actions_per_s", "events_per_s"}


@pytest.fixture
def inputs(tmp_path):
    platform, trace = tmp_path / "p.json", tmp_path / "t.json"
    platform.write_text(json.dumps(PLATFORM))
    trace.write_text(json.dumps(TRACE))
    return platform, trace


def test_the_json_counts_actions_and_events_and_is_the_same_bytes_twice(cli, inputs):
    first = cli("simulate", *inputs, "--json", check=True).stdout
    second = cli("simulate", *inputs, "--json", check=True).stdout
    assert first == second
    doc = json.loads(first)
    assert (doc["actions"], doc["events"]) == (3, 2)
    assert doc["makespan"] == pytest.approx(1e-4 + 1e6 / 1.25e8, rel=1e-12)
    assert "timing" not in doc


def test_timing_adds_wall_clock_rates_that_agree_with_the_counts(cli, inputs):
    plain = json.loads(cli("simulate", *inputs, "--json", check=True).stdout)
    doc = json.loads(cli("simulate", *inputs, "--json", "--timing", check=True).stdout)
    timing = doc.pop("timing")
    assert doc == plain
    assert set(timing) == TIMING_KEYS
    assert timing["load_s"] > 0 and timing["replay_s"] > 0
    assert timing["load_actions_per_s"] == pytest.approx(3 / timing["load_s"], rel=1e-9)
    assert timing["replay_actions_per_s"] == pytest.approx(3 / timing["replay_s"], rel=1e-9)
    assert timing["events_per_s"] == pytest.approx(2 / timing["replay_s"], rel=1e-9)


def test_timing_without_json_prints_one_line(cli, inputs):
    out = cli("simulate", *inputs, "--timing", check=True).stdout
    lines = [line for line in out.splitlines() if line.startswith("timing:")]
    assert len(lines) == 1
    assert lines[0].startswith("timing: loaded 3 actions in ")
    assert "actions/s, " in lines[0] and lines[0].endswith("events/s)")
    assert "timing:" not in cli("simulate", *inputs, check=True).stdout


def test_the_api_reports_counts_and_writes_timing_on_request(inputs, tmp_path):
    trace = commaware.load_trace(inputs[1])
    assert trace.load_seconds > 0
    out = tmp_path / "doc.json"
    result = commaware.simulate(inputs[0], trace, json_path=out, timing=True)
    assert (result.actions, result.events) == (3, 2)
    assert result.replay_seconds > 0
    timing = json.loads(out.read_text())["timing"]
    assert timing["load_s"] == trace.load_seconds
    assert timing["replay_s"] == result.replay_seconds


def test_timing_with_measured_times_in_the_json(cli, inputs, tmp_path):
    # --measured builds its document in memory (every measured message); --timing adds to it too.
    csv = tmp_path / "measured.csv"
    csv.write_text("src,dst,seq,measured_s\n0,1,0,0.01\n")
    plain = json.loads(cli("simulate", *inputs, "--json", "--measured", csv, check=True).stdout)
    doc = json.loads(cli("simulate", *inputs, "--json", "--measured", csv, "--timing", check=True).stdout)
    timing = doc.pop("timing")
    assert doc == plain and "accuracy" in doc
    assert set(timing) == TIMING_KEYS
    assert timing["replay_actions_per_s"] == pytest.approx(3 / timing["replay_s"], rel=1e-9)
