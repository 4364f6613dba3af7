"""Every example input is simulated through the CLI, and its output follows the JSON contract."""

from __future__ import annotations

import json

import pytest

from conftest import EXAMPLES, run_cli

TRACES = sorted(p.name for p in EXAMPLES.glob("*.json") if "ranks" in json.loads(p.read_text()))
PLATFORMS = sorted(p.name for p in EXAMPLES.iterdir() if p.suffix in (".json", ".toml") and p.name not in TRACES)


def test_examples_are_all_covered():
    assert set(TRACES) | set(PLATFORMS) == {p.name for p in EXAMPLES.iterdir() if p.suffix in (".json", ".toml")}
    assert {"ring.json", "alltoall.json", "master_worker.json", "cluster16.json"} <= set(TRACES) | set(PLATFORMS)


@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("placement", ["explicit", "rrn", "rrp", "random"])
def test_simulate_json_contract(trace, placement):
    platform = "star5.json" if trace.startswith("star5") else "cluster16.json"
    proc = run_cli("simulate", EXAMPLES / platform, EXAMPLES / trace, "--placement", placement, "--seed", "7", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    n_ranks = len(json.loads((EXAMPLES / trace).read_text())["ranks"])
    assert [r["rank"] for r in doc["ranks"]] == list(range(n_ranks))
    assert doc["makespan"] == max(r["end"] for r in doc["ranks"])
    assert doc["messages"], "every example sends messages"
    ends = [m["end"] for m in doc["messages"]]
    assert ends == sorted(ends), "messages are streamed in the order their last byte arrived"
    assert doc["message_stats"]["count"] == len(doc["messages"])
    assert doc["message_stats"]["bytes"] == pytest.approx(sum(m["bytes"] for m in doc["messages"]))
    for m in doc["messages"]:
        assert {"src_rank", "dst_rank", "bytes", "start", "end"} <= m.keys()
        assert 0 <= m["start"] <= m["end"] <= doc["makespan"] + 1e-12


def test_ring_matches_hand_computation():
    # 3 iterations of: every rank sends 1 MiB to its right neighbour (each NIC direction
    # carries one flow at 1.25e8 B/s after 50 us latency), then computes 1e8 flop at 1e9 flop/s.
    proc = run_cli("simulate", EXAMPLES / "cluster16.json", EXAMPLES / "ring.json", "--json", check=True)
    doc = json.loads(proc.stdout)
    expected = 3 * (5e-5 + 1048576 / 1.25e8 + 0.1)
    assert doc["makespan"] == pytest.approx(expected, rel=1e-9)


def test_star5_matches_simgrid_recorded_values():
    # SimGrid 3.32 (CM02, optim:Full) on this star: 24.1 ms for h0's three flows, 12.1 ms for h4->h3.
    proc = run_cli("simulate", EXAMPLES / "star5.json", EXAMPLES / "star5_flows.json", "--json", check=True)
    ends = {(m["src_rank"], m["dst_rank"]): m["end"] for m in json.loads(proc.stdout)["messages"]}
    assert ends[(0, 1)] == pytest.approx(0.0241, rel=1e-9)
    assert ends[(4, 3)] == pytest.approx(0.0121, rel=1e-9)


def test_toml_platform(cli):
    trace = EXAMPLES / "star5_flows.json"
    proc = cli("simulate", EXAMPLES / "platform_hetero.toml", trace, "--placement", "rrp", "--json")
    assert proc.returncode == 0, proc.stderr
    hosts = [r["host"] for r in json.loads(proc.stdout)["ranks"]]
    assert hosts == ["fast", "fast", "fast", "fast", "slow"]


def test_demo_runs_and_reports_every_example():
    proc = run_cli("demo", "--json", check=True)
    runs = json.loads(proc.stdout)["runs"]
    assert {r["trace"] for r in runs} == {"ring.json", "alltoall.json", "master_worker.json", "bcast_barrier.json"}
    assert all(r["makespan"] > 0 for r in runs)
    human = run_cli("demo", check=True)
    assert "ring.json" in human.stdout


def test_same_seed_same_bytes():
    args = ("simulate", EXAMPLES / "cluster16.json", EXAMPLES / "alltoall.json", "--placement", "random", "--json")
    a = run_cli(*args, "--seed", "5", check=True).stdout
    b = run_cli(*args, "--seed", "5", check=True).stdout
    c = run_cli(*args, "--seed", "6", check=True).stdout
    assert a == b
    assert json.loads(a)["ranks"] != json.loads(c)["ranks"]


def test_gantt_svg_and_png(tmp_path):
    for ext in ("svg", "png"):
        out = tmp_path / f"g.{ext}"
        run_cli("simulate", EXAMPLES / "cluster16.json", EXAMPLES / "master_worker.json", "--gantt", out, check=True)
        assert out.stat().st_size > 1000
    assert b"<svg" in (tmp_path / "g.svg").read_bytes()[:500]


def test_help_and_reproduce_group():
    assert "simulate" in run_cli("--help", check=True).stdout
    assert "--placement" in run_cli("simulate", "--help", check=True).stdout
    proc = run_cli("reproduce", "001", "--json")  # a fast paper; `all` runs in tests/reproduce/conftest.py
    checks = json.loads(proc.stdout)["checks"]
    assert checks, "the papers register checks"
    for c in checks:
        assert {"paper", "name", "paper_value", "ours", "tolerance", "pass", "status", "kind", "note"} <= c.keys()
        assert c["status"] in ("pass", "fail", "not_reproduced") and c["pass"] is (c["status"] == "pass")
    # Exit code 1 exactly when a check fails (not_reproduced rows do not count).
    assert proc.returncode == (1 if any(c["status"] == "fail" for c in checks) else 0), proc.stderr
    assert any(c["status"] == "not_reproduced" for c in checks)
    assert run_cli("reproduce", "999").returncode == 2
