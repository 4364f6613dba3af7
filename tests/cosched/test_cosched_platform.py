"""`cosched run --platform` (issue 41, item 2): the batch scheduler's jobs run their programs in one
engine on a platform, and the scheduler reacts to the ends the engine reaches."""

from __future__ import annotations

import json

import pytest

from commaware import cosched

from cosched.test_cosched import COSCHED, TWO_CROSSING


def platform(hosts: int) -> dict:
    return {"cluster": {"count": hosts, "speed": 1e9},
            "network": {"bandwidth": 1e8, "latency": 0, "eager_threshold": 0}}


@pytest.mark.parametrize("policy", cosched.BATCH_POLICIES)
def test_jobs_without_programs_are_scheduled_as_without_a_platform(cli, write_json, policy):
    """The hand-worked EASY case (tests/cosched/test_cosched.py) on a 10-host platform: jobs
    without a program compute for their logged runtimes, so every start is the same."""
    proc = cli("cosched", "run", COSCHED / "easy_two_crossing.json", "--platform", write_json("p.json", platform(10)),
               "--policy", policy, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(j["id"], j["start_s"]) for j in doc["jobs"]] == TWO_CROSSING[policy]
    assert doc["processors"] == 10


def exchange_workload() -> dict:
    """Two 2-process jobs submitted together, each swapping 1e8 bytes between its processes
    (logged: 5 s, requested 5 s)."""
    program = {"iterations": 1, "phases": [{"phase": "exchange", "bytes": 1e8, "neighbors": 1}]}
    return {"jobs": [{"id": k, "submit_s": 0.0, "procs": 2, "runtime_s": 5.0, "program": program} for k in (1, 2)]}


def test_runtimes_come_from_the_network_and_the_scheduler_waits_for_them(cli, write_json):
    """On 2 hosts of 1 core, 1e8 bytes at 1e8 B/s take 1 s: job 2 starts when job 1 ends, at
    1 s, not at the 5 s the log says."""
    proc = cli("cosched", "run", write_json("w.json", exchange_workload()), "--platform",
               write_json("p.json", platform(2)), "--policy", "batch", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(j["start_s"], j["end_s"], j["exec_s"]) for j in doc["jobs"]] == [(0.0, 1.0, 1.0), (1.0, 2.0, 1.0)]
    assert (doc["allocation"], doc["processors"]) == ("contiguous", 2)


def test_a_random_allocation_is_seeded(cli, write_json):
    """On 4 hosts of 1 core both jobs run at once; a seed gives the same bytes every time."""
    w, p = write_json("w.json", exchange_workload()), write_json("p.json", platform(4))
    runs = [cli("cosched", "run", w, "--platform", p, "--allocation", "random", "--seed", "3", "--json") for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    assert [j["start_s"] for j in json.loads(runs[0].stdout)["jobs"]] == [0.0, 0.0]


@pytest.mark.parametrize("args,message", [
    (["--policy", "hybrid"], "--policy: hybrid does not run on a platform"),
    (["--nodes", "4"], "--nodes: a platform gives the processors itself"),
    (["--allocation", "memory-aware"], "--allocation: on a platform, contiguous (packing) or random"),
])
def test_what_a_platform_run_cannot_take_is_exit_2(cli, write_json, args, message):
    proc = cli("cosched", "run", write_json("w.json", exchange_workload()), "--platform",
               write_json("p.json", platform(2)), *args)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_network_options_need_a_platform(cli, write_json):
    proc = cli("cosched", "run", write_json("w.json", exchange_workload()), "--model", "maxmin")
    assert proc.returncode == 2
    assert "--model: only with --platform" in proc.stderr
