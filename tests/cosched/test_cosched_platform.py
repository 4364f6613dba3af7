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
    (["--allocation", "memory-aware"], "--allocation: memory-aware does not run on a platform"),
    (["--pattern", "ring"], "unknown pattern `ring`"),
    (["--pattern", "halo2d:bytes=-1"], "pattern.phases[0].bytes"),
    (["--policy", "explicit"], "jobs[0].start_s"),
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


def test_platform_only_options_need_a_platform(cli, write_json):
    w = write_json("w.json", exchange_workload())
    for args, message in ((["--policy", "explicit"], "--policy: explicit replays"),
                          (["--allocation", "compact"], "--allocation: compact is for --platform"),
                          (["--pattern", "pairs"], "--pattern: only with --platform")):
        proc = cli("cosched", "run", w, *args)
        assert proc.returncode == 2, args
        assert message in proc.stderr and "Traceback" not in proc.stderr


FAT_TREE = {"cluster": {"count": 16, "speed": 1e9},
            "network": {"bandwidth": 1e8, "latency": 0, "eager_threshold": 0,
                        "topology": {"kind": "fat_tree", "down": [4, 4], "up": [1, 1], "parallel": [1, 1]}}}


def alltoall_jobs(n: int, procs: int) -> dict:
    program = {"iterations": 1, "phases": [{"phase": "alltoall", "bytes": 1e7}]}
    return {"jobs": [{"id": k, "submit_s": 0.0, "procs": procs, "runtime_s": 5.0, "program": program}
                     for k in range(1, n + 1)]}


def test_compact_keeps_each_job_under_its_leaf_and_spread_makes_them_share_up_links(cli, write_json):
    """Four 4-process alltoalls on a 16-host fat tree of 4 leaves with one up-link each. compact
    gives each job a leaf: no job crosses an up-link, so each runs as alone, 3 × 1e7 B into
    each NIC at 1e8 B/s = 0.3 s. spread deals each job over the four leaves: every message
    crosses two up-links that all four jobs share, so each job takes longer."""
    w, p = write_json("w.json", alltoall_jobs(4, 4)), write_json("p.json", FAT_TREE)
    ends = {}
    for allocation in ("compact", "spread", "contiguous"):
        proc = cli("cosched", "run", w, "--platform", p, "--allocation", allocation, "--json")
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["allocation"] == allocation
        ends[allocation] = [j["end_s"] for j in doc["jobs"]]
    assert ends["compact"] == pytest.approx([0.3] * 4, abs=1e-9)
    assert ends["contiguous"] == ends["compact"]
    assert min(ends["spread"]) > 0.3 + 1e-3


def test_a_pattern_gives_swf_jobs_a_program(cli, write_json, tmp_path):
    """An SWF log's jobs (no program) run --pattern's program: two 2-process jobs that each
    swap 1e8 bytes once between random pairs take 1 s on the network whatever the log says."""
    swf = tmp_path / "w.swf"
    swf.write_text("; MaxProcs: 4\n1 0 0 50 2 -1 -1 2 60 -1 1 1 1 -1 1 -1 -1 -1\n"
                   "2 0 0 50 2 -1 -1 2 60 -1 1 1 1 -1 1 -1 -1 -1\n")
    proc = cli("cosched", "run", swf, "--platform", write_json("p.json", platform(2)), "--pattern",
               "pairs:bytes=1e8,iterations=1", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(j["start_s"], j["end_s"]) for j in doc["jobs"]] == [(0.0, 1.0), (1.0, 2.0)]
    # Without a pattern, they compute for their logged 50 s.
    proc = cli("cosched", "run", swf, "--platform", write_json("p.json", platform(2)), "--json")
    assert [j["end_s"] for j in json.loads(proc.stdout)["jobs"]] == [50.0, 100.0]


def test_a_workload_default_program_and_a_job_trace(write_json, tmp_path):
    """A job's `trace` (relative to the workload file) replays; the others run the workload's
    default_program. The trace sends 1e8 bytes from rank 0 to 1: 1 s."""
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "pair.json").write_text(json.dumps(
        {"ranks": [[{"op": "send", "dst": 1, "bytes": 1e8}], [{"op": "recv", "src": 0}]]}))
    workload = {"default_program": {"iterations": 2, "phases": [{"phase": "compute", "seconds": 0.25}]},
                "jobs": [{"id": 1, "submit_s": 0, "procs": 2, "runtime_s": 9, "trace": "traces/pair.json"},
                         {"id": 2, "submit_s": 0, "procs": 2, "runtime_s": 9}]}
    path = write_json("w.json", workload)
    run = cosched.run(path, "batch", platform=platform(4))
    assert list(run.jobs["end"]) == pytest.approx([1.0, 0.5], abs=1e-12)
    # A trace whose rank count is not the job's processes is named.
    workload["jobs"][0]["procs"] = 3
    with pytest.raises(cosched._core.WorkloadError, match=r"jobs\[0\]\.trace.*2 ranks for the job's 3 processes"):
        cosched.run(write_json("w.json", workload), "batch", platform=platform(4))
    # Time-sharing policies do not replay traces.
    with pytest.raises(cosched._core.WorkloadError, match=r"jobs\[0\]\.trace: a trace replays on a platform only"):
        cosched.run(write_json("w.json", workload), "nls", processors=4)


def explicit_workload(hosts_b: list) -> dict:
    program = {"iterations": 1, "phases": [{"phase": "exchange", "bytes": 1e8, "neighbors": 1}]}
    return {"jobs": [{"id": 1, "submit_s": 0, "procs": 2, "runtime_s": 1, "start_s": 0, "hosts": ["n0", "n1"],
                      "program": program},
                     {"id": 2, "submit_s": 0, "procs": 2, "runtime_s": 1, "start_s": 0.5, "hosts": hosts_b,
                      "program": program}]}


def test_explicit_starts_each_job_when_and_where_the_workload_says(cli, write_json):
    """Job 1 on hosts 0-1 from 0 s, job 2 on hosts 2-3 from 0.5 s: on a star they do not
    share a link, so each takes 1 s. On the same hosts they would overlap (1 core each)."""
    p = write_json("p.json", platform(4))
    proc = cli("cosched", "run", write_json("w.json", explicit_workload(["n2", 3])), "--platform", p,
               "--policy", "explicit", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["policy"] == "explicit"
    assert [(j["start_s"], j["end_s"]) for j in doc["jobs"]] == [(0.0, 1.0), (0.5, 1.5)]
    for hosts, message in ((["n1", "n2"], "jobs[1].hosts: host `n1` has 1 core(s) and at 0.5 s would run 2 "
                                            "processes (with jobs[0]): the schedule overlaps"),
                           (["n2", "x"], "jobs[1].hosts[1]: unknown host `x`"),
                           (["n2", 9], "jobs[1].hosts[1]: host index 9 out of range")):
        proc = cli("cosched", "run", write_json("w.json", explicit_workload(hosts)), "--platform", p,
                   "--policy", "explicit", "--json")
        assert proc.returncode == 2, proc.stdout
        assert message in proc.stderr and "Traceback" not in proc.stderr
        assert proc.stdout == ""


def test_each_job_reports_its_time_alone_slowdown_bytes_and_hosts(cli, write_json, tmp_path):
    """Four hosts on one SHARED 1e8 B/s backbone; two 2-process jobs each swap 1e8 bytes: 2e8
    bytes a job over the backbone. Together, 4 s each; alone, 2 s: slowdown 2."""
    p = {"cluster": {"count": 4, "speed": 1e9},
         "network": {"bandwidth": 1e9, "latency": 0, "eager_threshold": 0,
                     "topology": {"kind": "flat", "backbone": {"bandwidth": 1e8, "latency": 0, "sharing": "SHARED"}}}}
    w = write_json("w.json", exchange_workload())
    out = tmp_path / "jobs.parquet"
    proc = cli("cosched", "run", w, "--platform", write_json("p.json", p), "--json", "--jobs-out", out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(j["alone_s"], j["slowdown"], j["bytes"], j["hosts"]) for j in doc["jobs"]] == \
        [(pytest.approx(2.0), pytest.approx(2.0), 2e8, "0-1"), (pytest.approx(2.0), pytest.approx(2.0), 2e8, "2-3")]
    assert doc["avg_slowdown"] == pytest.approx(2.0) and (doc["bytes"], doc["messages"]) == (4e8, 4)
    assert doc["engine_events"] > 0 and doc["jobs"][0]["messages"] == 2
    import pyarrow.parquet as pq

    table = pq.read_table(out).to_pydict()
    assert table["slowdown"] == pytest.approx([2.0, 2.0]) and table["bytes"] == [2e8, 2e8]
    # --no-alone leaves alone_s and slowdown null; without a platform none of these fields exist.
    doc = json.loads(cli("cosched", "run", w, "--platform", write_json("p.json", p), "--json", "--no-alone").stdout)
    assert (doc["jobs"][0]["alone_s"], doc["jobs"][0]["slowdown"], doc["jobs"][0]["bytes"]) == (None, None, 2e8)
    assert doc["avg_slowdown"] is None
    doc = json.loads(cli("cosched", "run", w, "--json").stdout)
    assert not {"alone_s", "bytes", "hosts", "slowdown"} & set(doc["jobs"][0]) and "avg_slowdown" not in doc


def test_compare_on_a_platform_gives_the_slowdown_of_each_allocation(cli, write_json, tmp_path):
    """`cosched compare --platform`: the four alltoalls of the compact/spread test under each
    allocation; compact as alone (slowdown 1), spread 4 (each leaf's up-link carries four
    times what it carries for one job alone), random seeded in between; the chart is written."""
    w, p = write_json("w.json", alltoall_jobs(4, 4)), write_json("p.json", FAT_TREE)
    plot = tmp_path / "slowdown.svg"
    proc = cli("cosched", "compare", w, "--platform", p, "--policies", "batch-easy", "--allocation",
               "compact,spread,random", "--seeds", "2", "--json", "--plot", plot)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert "avg_slowdown" in doc["metrics"] and doc["setup"]["platform"] == str(p)
    slowdown = {r["allocation"]: r["avg_slowdown"] for r in doc["rows"]}
    assert slowdown["compact"]["per_seed"] == pytest.approx([1.0, 1.0])
    assert slowdown["spread"]["per_seed"] == pytest.approx([4.0, 4.0])
    assert 1.0 < slowdown["random"]["mean"] < 4.0
    assert plot.read_text().lstrip().startswith("<?xml")
    for args, message in ((["--policies", "hybrid"], "unknown policy `hybrid` on a platform"),
                          (["--allocation", "memory-aware"], "unknown allocation `memory-aware`"),
                          (["--nodes", "4"], "do not apply with --platform")):
        proc = cli("cosched", "compare", w, "--platform", p, *args)
        assert proc.returncode == 2, args
        assert message in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("cosched", "compare", w, "--pattern", "pairs")
    assert proc.returncode == 2 and "--pattern: only with --platform" in proc.stderr


def test_the_interference_table_and_link_statistics_of_a_cluster_run(cli, write_json, tmp_path):
    """The four alltoalls of the compact/spread test. compact: no two jobs use a common link,
    so the table is empty and only host links carry bytes (3e7 each way). spread: every pair
    overlaps on the 4 leaves' up-links, each way (8 links), and each job's 12 messages of 1e7
    bytes cross two of them: 2.4e8 bytes each; each leaf up-link carries 4 × 3e7 bytes, 4 flows
    at once."""
    w, p = write_json("w.json", alltoall_jobs(4, 4)), write_json("p.json", FAT_TREE)
    compact = cosched.run(tmp_path / "w.json", "batch-easy", allocation="compact", platform=FAT_TREE,
                          link_stats=True, interference=True)
    assert compact.interference.empty
    assert compact.links.query("bytes > 0")["bytes"].tolist() == pytest.approx([3e7] * 32)
    pairs_csv, links_csv, plot = tmp_path / "pairs.csv", tmp_path / "links.csv", tmp_path / "links.svg"
    proc = cli("cosched", "run", w, "--platform", p, "--allocation", "spread", "--json", "--interference", pairs_csv,
               "--links", links_csv, "--link-plot", plot)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [(x["job_a"], x["job_b"]) for x in doc["interference"]] == [(1, 2), (1, 3), (2, 3), (1, 4), (2, 4), (3, 4)]
    assert {(x["links"], x["bytes_a"], x["bytes_b"]) for x in doc["interference"]} == {(8, 2.4e8, 2.4e8)}
    import pyarrow.csv as pacsv

    pairs = pacsv.read_csv(pairs_csv).to_pydict()
    assert pairs["links"] == [8] * 6 and pairs["bytes_a"] == [2.4e8] * 6
    links = pacsv.read_csv(links_csv).to_pandas()
    up = links[links["bytes"] > 1e8]
    assert len(up) == 8 and set(up["peak_flows"]) == {4}
    assert up["bytes"].tolist() == pytest.approx([1.2e8] * 8) and up["mean_utilisation"].tolist() == pytest.approx([1.0] * 8)
    assert plot.read_text().lstrip().startswith("<?xml")
    # Text output: the pairs' count and the busiest links.
    proc = cli("cosched", "run", w, "--platform", p, "--allocation", "spread", "--interference", pairs_csv,
               "--links", links_csv)
    assert proc.returncode == 0, proc.stderr
    assert "interference: 6 pairs" in proc.stdout and "link table:" in proc.stdout
    # Without a platform, or to a file of another kind: exit 2, nothing written.
    for args, message in ((["--interference", tmp_path / "x.csv"], "--interference: only with --platform"),
                          (["--platform", p, "--interference", tmp_path / "x.txt"], "must be .parquet or .csv"),
                          (["--platform", p, "--link-plot", tmp_path / "x.pdf"], "--link-plot needs a .svg or .png")):
        proc = cli("cosched", "run", w, *args)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, args
        assert not (tmp_path / "x.csv").exists()


def test_the_interference_table_of_an_explicit_schedule(write_json):
    """--policy explicit keeps the table too: on the shared backbone of the alone/slowdown test,
    two jobs swapping 1e8 bytes each way from 0 s share the backbone (2e8 bytes each over
    it), and a third started after both ended pairs with neither."""
    p = {"cluster": {"count": 4, "speed": 1e9},
         "network": {"bandwidth": 1e9, "latency": 0, "eager_threshold": 0,
                     "topology": {"kind": "flat", "backbone": {"bandwidth": 1e8, "latency": 0, "sharing": "SHARED"}}}}
    swap = {"iterations": 1, "phases": [{"phase": "exchange", "bytes": 1e8, "neighbors": 1}]}
    jobs = [{"id": k, "submit_s": 0, "procs": 2, "runtime_s": 1, "start_s": start, "hosts": hosts, "program": swap}
            for k, start, hosts in ((7, 0, [0, 1]), (8, 0, [2, 3]), (9, 10, [0, 2]))]
    run = cosched.run(write_json("w.json", {"jobs": jobs}), "explicit", platform=p, interference=True)
    assert list(run.jobs["end"]) == pytest.approx([4.0, 4.0, 12.0])
    table = run.interference
    assert table.to_dict("records") == [{"job_a": 7, "job_b": 8, "links": 1, "bytes_a": 2e8, "bytes_b": 2e8}]


def test_a_sweep_runs_cosched_on_a_platform(write_json, tmp_path):
    """`sweep` runs `cosched.run` with a platform as `cosched run --platform`: the four alltoalls
    under compact (each as alone: slowdown 1) and spread (each leaf up-link carries four
    jobs: 4), with the bytes moved; without a platform the two columns are null."""
    from commaware import sweep

    write_json("w.json", alltoall_jobs(4, 4))
    write_json("p.json", FAT_TREE)
    spec = tmp_path / "spec.toml"
    spec.write_text('command = "cosched.run"\n[fixed]\nworkload = "w.json"\nplatform = "p.json"\n'
                    'policy = "batch-easy"\n[grid]\nallocation = ["compact", "spread"]\n')
    table = sweep.run(spec, tmp_path / "out", serial=True)
    by = dict(zip(table["allocation"], zip(table["avg_slowdown"], table["bytes"])))
    assert by["compact"] == (pytest.approx(1.0), 4 * 12 * 1e7)
    assert by["spread"] == (pytest.approx(4.0), 4 * 12 * 1e7)
    plain = tmp_path / "plain.toml"
    plain.write_text('command = "cosched.run"\n[fixed]\nworkload = "w.json"\npolicy = "batch-easy"\n')
    table = sweep.run(plain, tmp_path / "plain-out", serial=True)
    assert table["avg_slowdown"].isna().all() and table["bytes"].isna().all()


def hosts_of(intervals: str) -> list[int]:
    """`0-3 7` -> [0, 1, 2, 3, 7]."""
    out = []
    for part in intervals.split():
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def test_a_cached_time_alone_is_the_jobs_own(write_json, tmp_path):
    """Sixteen 4-process halos of two sizes on the fat tree, compact: jobs of one program land
    under different leaves, where the cache gives them an earlier job's time alone. Each
    job's alone_s equals its own trace run alone on its own hosts (simulate_jobs), exactly."""
    from commaware import simulate_jobs

    programs = [{"iterations": 3, "phases": [{"phase": "halo", "bytes": b, "dims": 2}, {"phase": "compute", "seconds": 0.01}]}
                for b in (1e5, 1e6)]
    jobs = [{"id": k, "submit_s": 0.0, "procs": 4, "runtime_s": 5.0, "program": programs[k % 2]} for k in range(16)]
    path = write_json("w.json", {"jobs": jobs})
    run = cosched.run(path, "batch-easy", allocation="compact", platform=FAT_TREE)
    doc = run.to_dict()
    leaves = {tuple(h // 4 for h in hosts_of(j["hosts"])) for j in doc["jobs"]}
    assert len(leaves) > 2  # the jobs did land under different leaves
    for i, j in enumerate(doc["jobs"]):
        (alone,) = simulate_jobs(FAT_TREE, [(cosched.job_trace(path, i), 0, hosts_of(j["hosts"]))])
        assert j["alone_s"] == alone.end, (i, j["hosts"])
