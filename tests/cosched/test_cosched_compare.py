"""`commaware cosched compare` and `cosched.compare`: the Fig. 3-style table over seeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from commaware import cosched


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "commaware.cli", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "160"})


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("cmp") / "w.json"
    path.write_text(cosched.nas_workload(jobs=8, interarrival=60, seed=5).to_json())
    return path


def test_api_rows_fields_and_pairs():
    c = cosched.compare(nas_jobs=8, interarrival=60, policies="batch,gang,hybrid,sb",
                        allocations="packing,random", seeds=2, first_seed=3, workers=2)
    pairs = [(r["policy"], r["allocation"]) for r in c.rows]
    # batch: packing only; gang never random; the others every allocation
    assert pairs == [("batch", "packing"), ("gang", "packing"), ("hybrid", "packing"), ("hybrid", "random"),
                     ("sb", "packing"), ("sb", "random")]
    for r in c.rows:
        assert r["seeds"] == 2
        for m in cosched.COMPARE_METRICS:
            cell = r[m]
            assert len(cell["per_seed"]) == 2
            assert cell["min"] <= cell["mean"] <= cell["max"]
            assert cell["mean"] == pytest.approx(sum(cell["per_seed"]) / 2)
        resp, wait, exe = (r[k]["mean"] for k in ("avg_response_s", "avg_wait_s", "avg_exec_s"))
        assert resp == pytest.approx(wait + exe, rel=1e-9)
    # each seed is a different workload: the per-seed values of batch are those of single runs
    for i, s in enumerate((3, 4)):
        one = cosched.run(cosched.nas_workload(8, 60, s), "batch").summary["avg_response_s"]
        assert c.row("batch")["avg_response_s"]["per_seed"][i] == pytest.approx(one, rel=1e-12)
    assert c.setup["seeds"] == [3, 4]


def test_api_deterministic_whatever_the_workers():
    a = cosched.compare(nas_jobs=6, policies=["nls", "pb", "batch-easy"], allocations=["random"], seeds=3, workers=1)
    b = cosched.compare(nas_jobs=6, policies=["nls", "pb", "batch-easy"], allocations=["random"], seeds=3, workers=3)
    assert a.to_dict() == b.to_dict()
    # the seeds matter: other seeds give other numbers
    c = cosched.compare(nas_jobs=6, policies=["nls", "pb", "batch-easy"], allocations=["random"], seeds=3, first_seed=9)
    assert c.to_dict()["rows"] != a.to_dict()["rows"]


def test_api_progress_counts_every_distinct_run(small):
    seen = []
    cosched.compare(small, policies="batch,nls", allocations="packing,random", seeds=3, progress=lambda d, n: seen.append((d, n)))
    # batch once, nls packing once (a fixed workload), nls random once per seed
    assert seen == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]


def test_api_fixed_workload_seeds_vary_random_allocation_only(small):
    c = cosched.compare(small, policies="batch,nls", allocations="packing,random", seeds=3)
    assert c.row("batch")["avg_response_s"]["std"] == 0.0
    assert c.row("nls", "packing")["avg_response_s"]["std"] == 0.0
    assert len(set(c.row("nls", "random")["avg_response_s"]["per_seed"])) > 1


@pytest.mark.parametrize("kwargs,field", [
    ({"policies": "batch,nope"}, "policies"), ({"allocations": "packed"}, "allocation"), ({"seeds": 0}, "seeds"),
    ({"workers": 0}, "workers"),
])
def test_api_bad_options(kwargs, field):
    with pytest.raises(cosched._core.OptionsError) as info:
        cosched.compare(nas_jobs=4, **kwargs)
    assert info.value.source == field


def test_api_needs_exactly_one_source(small):
    with pytest.raises(cosched._core.OptionsError):
        cosched.compare()
    with pytest.raises(cosched._core.OptionsError):
        cosched.compare(small, nas_jobs=4)


def test_cli_table_json_and_plot(small, tmp_path):
    chart = tmp_path / "fig3.png"
    proc = cli("cosched", "compare", str(small), "--policies", "batch,hybrid,pb", "--seeds", "2", "--plot", str(chart))
    assert proc.returncode == 0, proc.stderr
    for word in ("response (s)", "wait (s)", "execution (s)", "batch", "hybrid", "pb", "±"):
        assert word in proc.stdout
    assert chart.stat().st_size > 1000 and chart.read_bytes()[:4] == b"\x89PNG"
    assert not list(tmp_path.glob(".*partial"))
    doc = json.loads(cli("cosched", "compare", str(small), "--policies", "batch,hybrid,pb", "--seeds", "2",
                         "--json").stdout)
    api = cosched.compare(small, policies="batch,hybrid,pb", seeds=2)
    assert doc["rows"] == json.loads(api.to_json())["rows"]
    assert [r["policy"] for r in doc["rows"]] == ["batch", "hybrid", "pb"]
    svg = tmp_path / "c.svg"
    assert cli("cosched", "compare", "--nas-jobs", "5", "--policies", "hybrid", "--seeds", "1", "--plot", str(svg),
               "--quiet").returncode == 0
    assert svg.read_text().lstrip().startswith("<?xml")


def test_cli_deterministic_with_seeds():
    args = ("cosched", "compare", "--nas-jobs", "6", "--policies", "nls,sb", "--allocation", "random", "--seeds", "2",
            "--first-seed", "7", "--json")
    a, b = cli(*args), cli(*args, "--workers", "1")
    assert a.returncode == 0 and b.returncode == 0
    assert json.loads(a.stdout) == json.loads(b.stdout)


@pytest.mark.parametrize("args,message", [
    (("--nas-jobs", "5", "--policies", "fcfs"), "--policies: unknown policy `fcfs`"),
    (("--nas-jobs", "5", "--allocation", "packed"), "--allocation: unknown allocation `packed`"),
    (("--nas-jobs", "5", "--seeds", "0"), "--seeds"),
    (("--nas-jobs", "0",), "--nas-jobs"),
    (("--nas-jobs", "5", "--mpl", "0"), "--mpl"),
    (("--nas-jobs", "5", "--plot", "x.gif"), "--plot"),
    (("--nas-jobs", "5", "--param", "spin_s"), "--param"),
    (("--nas-jobs", "5", "--param", "no_such=1", "--policies", "sb", "--seeds", "1"), "no_such"),
    ((), "give either WORKLOAD or --nas-jobs"),
    (("missing.json",), "missing.json"),
])
def test_cli_bad_options_exit_2(args, message, tmp_path):
    proc = cli("cosched", "compare", *args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert message in " ".join(proc.stderr.split())
    assert proc.stdout == ""
