"""`cosched run --timeline FILE.perfetto-trace` (issue 42, item 3): the schedule as a Perfetto
trace, read back with Perfetto's published classes: a track per host (on a platform), per node
(time-sharing) or for the cluster (batch), lanes under it, and on the lanes a slice per job
from its start to its end as the `--json` document gives them; no lane holds two jobs at once."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cosched.test_cosched import COSCHED
from cosched.test_cosched_platform import exchange_workload, platform
from traces.test_timeline_perfetto import BEGIN, END, Read, args, ns


def lanes(read: Read) -> dict[str, list[tuple[str, int, int, dict]]]:
    """Each lane's slices (name, start, end, arguments), by `GROUP/slot N`; a lane's slices
    never overlap (each begins after the previous one ended)."""
    out = {}
    for uuid, d in read.tracks.items():
        if not d.HasField("thread"):
            continue
        group = read.tracks[d.parent_uuid].name
        slices, open_ = [], None
        for t, e in read.events[uuid]:
            if e.type == BEGIN:
                assert open_ is None, f"{group}/{d.name}: two jobs at once"
                open_ = (e.name, t, args(e))
            else:
                assert e.type == END and open_ is not None
                slices.append((open_[0], open_[1], t, open_[2]))
                open_ = None
        assert open_ is None
        out[f"{group}/{d.name}"] = slices
    assert read.times == sorted(read.times)
    return out


def run(cli, tmp_path: Path, *args_: object) -> tuple[dict, dict]:
    timeline = tmp_path / "schedule.perfetto-trace"
    doc = json.loads(cli("cosched", "run", *args_, "--json", "--timeline", timeline, check=True).stdout)
    return doc, lanes(Read(timeline))


def check_jobs(doc: dict, by_lane: dict, per_job: dict[int, int]) -> None:
    """Each job has `per_job[id]` slices, each from its start to its end, with its arguments."""
    seen = Counter()
    jobs = {j["id"]: j for j in doc["jobs"]}
    for slices in by_lane.values():
        for name, start, end, a in slices:
            job = jobs[a["id"]]
            assert name == f"job {job['id']}" and a["procs"] == job["procs"]
            assert (start, end) == (ns(job["start_s"]), ns(job["end_s"]))
            assert a["wait_s"] == pytest.approx(job["start_s"] - job["submit_s"])
            seen[a["id"]] += 1
    assert dict(seen) == per_job


def test_batch_jobs_take_their_processors_lanes(cli, tmp_path):
    doc, by_lane = run(cli, tmp_path, COSCHED / "easy_two_crossing.json", "--policy", "batch-easy", "--nodes", "10")
    assert {k.split("/")[0] for k in by_lane} == {"cluster (10 processors)"}
    assert len(by_lane) <= 10
    check_jobs(doc, by_lane, {j["id"]: j["procs"] for j in doc["jobs"]})


def test_time_sharing_jobs_on_their_nodes(cli, tmp_path):
    doc, by_lane = run(cli, tmp_path, COSCHED / "easy_two_crossing.json", "--policy", "gang", "--nodes", "10",
                       "--mpl", "2")
    assert all(k.startswith("node ") for k in by_lane)
    # One slice a node a job: a job of p processes on p distinct nodes (gang's packing).
    check_jobs(doc, by_lane, {j["id"]: j["procs"] for j in doc["jobs"]})
    nodes_of = {}
    for key, slices in by_lane.items():
        for _, _, _, a in slices:
            nodes_of.setdefault(a["id"], set()).add(key.split("/")[0])
    assert all(len(nodes_of[j["id"]]) == j["procs"] for j in doc["jobs"])


def test_platform_jobs_on_their_hosts(cli, tmp_path, write_json):
    doc, by_lane = run(cli, tmp_path, write_json("w.json", exchange_workload()), "--platform",
                       write_json("p.json", platform(4)), "--policy", "batch")
    hosts = {k.split("/")[0] for k in by_lane}
    assert hosts and all(not h.startswith(("node ", "cluster")) for h in hosts)
    check_jobs(doc, by_lane, {1: 2, 2: 2})


def test_timeline_needs_a_perfetto_file(cli, tmp_path):
    proc = cli("cosched", "run", COSCHED / "easy_two_crossing.json", "--timeline", tmp_path / "t.json")
    assert proc.returncode == 2 and "--timeline" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "t.json").exists()


def test_api_platform_run_without_host_names(tmp_path, write_json):
    """From the API, a platform run's timeline without the platform's host names names each
    host by its index."""
    from commaware import cosched

    run_ = cosched.run(cosched.load_workload(write_json("w.json", exchange_workload())), "batch",
                       platform=write_json("p.json", platform(4)))
    timeline = tmp_path / "api.pftrace"
    run_.write_timeline(timeline)
    by_lane = lanes(Read(timeline))
    assert {k.split("/")[0] for k in by_lane} <= {f"host {h}" for h in range(4)} and len(by_lane) >= 2
