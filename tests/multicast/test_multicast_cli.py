"""The multicast command: JSON contract on every example instance, generation, bad input."""

from __future__ import annotations

import json

import pytest

from commaware import _core
from conftest import EXAMPLES, run_cli

INSTANCES = sorted((EXAMPLES / "multicast").glob("*.json"))
ALGORITHMS = _core.multicast_algorithms()


def test_there_are_example_instances():
    assert {p.name for p in INSTANCES} >= {"fig4.json", "random12.json"}


@pytest.mark.parametrize("instance", INSTANCES, ids=lambda p: p.name)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_json_contract(instance, algorithm):
    proc = run_cli("multicast", instance, "--algorithm", algorithm, "--json", "--execute", "contention_free")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert {"algorithm", "sequence", "tasks", "completion_time", "lower_bound", "scheduling_seconds"} <= doc.keys()
    assert doc["algorithm"] == algorithm
    inst = json.loads(instance.read_text())
    deliveries = sum(len(m["destinations"]) for m in inst["multicasts"])
    assert len(doc["sequence"]) == deliveries
    assert doc["completion_time"] >= doc["lower_bound"] - 1e-12
    assert doc["completion_time"] == pytest.approx(max(s["complete"] for s in doc["sequence"]))
    assert set(doc["tasks"]) == {str(i) for i in range(len(inst["nodes"]))}
    # Replaying the schedule without contention gives the scheduler's completion time.
    assert doc["execution"]["makespan"] == pytest.approx(doc["completion_time"], rel=1e-9)


def test_summary_and_fig4_ecf():
    proc = run_cli("multicast", EXAMPLES / "multicast" / "fig4.json", "-a", "ecf", "--summary", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == {"algorithm", "completion_time", "lower_bound", "scheduling_seconds"}
    assert doc["completion_time"] == 19  # paper 003 Fig. 4(b)


def test_summary_without_json_is_a_table():
    fig4 = EXAMPLES / "multicast" / "fig4.json"
    proc = run_cli("multicast", fig4, "-a", "ecf", "--summary", env={"COLUMNS": "160"})
    assert proc.returncode == 0, proc.stderr
    with pytest.raises(json.JSONDecodeError):
        json.loads(proc.stdout)
    lines = proc.stdout.splitlines()
    assert len(lines) == 5, proc.stdout  # top rule, header, rule, one row, bottom rule
    header = " ".join(lines[1].replace("┃", " ").split())
    assert header == "algorithm completion (s) lower bound (s) ratio scheduling (ms)"
    cells = lines[3].replace("│", " ").split()
    assert cells[:4] == ["ecf", "19", "13", f"{19 / 13:.3f}"]
    replay = run_cli("multicast", fig4, "-a", "ecf", "--summary", "--execute", "maxmin", env={"COLUMNS": "160"})
    assert "maxmin makespan (s)" in replay.stdout and replay.stdout.splitlines()[3].replace("│", " ").split()[-1] == "19"


def test_generate_is_seeded_and_valid(tmp_path):
    args = ("multicast", "generate", "--nodes", "10", "--pattern", "random", "--sources", "3", "--sizes", "mixed")
    a = run_cli(*args, "--seed", "4").stdout
    assert a == run_cli(*args, "--seed", "4").stdout
    assert a != run_cli(*args, "--seed", "5").stdout
    inst = json.loads(a)
    assert len(inst["nodes"]) == 10 and len(inst["multicasts"]) == 3
    for node in inst["nodes"]:
        assert 80e-6 <= node["send_const"] <= 400e-6 and 80e-6 <= node["recv_const"] <= 400e-6
    out = tmp_path / "i.json"
    run_cli(*args, "--seed", "4", "-o", out)
    assert out.read_text() == a


def test_generate_mixed_network_is_a_symmetric_matrix_of_two_speeds():
    args = ("multicast", "generate", "--nodes", "12", "--pattern", "broadcast", "--source", "3", "--seed", "9")
    mixed = json.loads(run_cli(*args, "--network", "mixed").stdout)
    fast = json.loads(run_cli(*args, "--network", "fast").stdout)
    assert fast["transmission"] == {"default": 8e-9}
    x = mixed["transmission"]["matrix"]
    pairs = [x[i][j] for i in range(12) for j in range(i + 1, 12)]
    assert all(x[i][j] == x[j][i] for i in range(12) for j in range(12)) and all(x[i][i] == 0 for i in range(12))
    assert set(pairs) == {8e-9, 8 / 155e6}
    assert mixed["nodes"] == fast["nodes"] and mixed["multicasts"] == fast["multicasts"]


GOOD = json.loads((EXAMPLES / "multicast" / "fig4.json").read_text())


def variant(**changes):
    doc = json.loads(json.dumps(GOOD))
    for path, value in changes.items():
        target = doc
        keys = path.split("__")
        for k in keys[:-1]:
            target = target[int(k)] if k.isdigit() else target[k]
        last = keys[-1]
        target[int(last) if last.isdigit() else last] = value
    return doc


BAD = [
    ("source_in_dests", variant(multicasts__0__destinations=[0, 1]), "multicasts[0].destinations"),
    ("empty_dests", variant(multicasts__0__destinations=[]), "multicasts[0].destinations"),
    ("node_range", variant(multicasts__0__destinations=[1, 9]), "out of range"),
    ("neg_overhead", variant(nodes__1__recv_const=-1), "nodes[1].recv_const"),
    ("neg_size", variant(multicasts__2__bytes=-5), "multicasts[2].bytes"),
    ("nonsquare", variant(transmission={"matrix": [[0, 1], [1, 0]]}), "transmission"),
    ("neg_matrix", variant(transmission={"matrix": [[0, 1, 1, 1], [1, 0, -1, 1], [1, 1, 0, 1], [1, 1, 1, 0]]}), "transmission"),
    ("same_source", variant(multicasts__1__source=0, multicasts__1__destinations=[3]), "source"),
    ("malformed", "{nodes:", "malformed JSON"),
    ("unknown_field", variant(nodes__0__speed=3), "unknown field `speed`"),
]


@pytest.mark.parametrize("name,content,message", BAD, ids=[b[0] for b in BAD])
def test_bad_instances(write_json, name, content, message):
    path = write_json(f"{name}.json", content)
    proc = run_cli("multicast", path, "--json")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    flat = " ".join(proc.stderr.split())
    assert str(path) in flat and message in flat, flat


def test_bad_generate_options():
    proc = run_cli("multicast", "generate", "--nodes", "4", "--pattern", "random", "--sources", "9")
    assert proc.returncode == 2 and "sources" in proc.stderr
    proc = run_cli("multicast", "generate", "--nodes", "1")
    assert proc.returncode == 2 and "at least 2 nodes" in proc.stderr


def test_outputs_are_streamed_files_that_appear_whole(tmp_path):
    inst = tmp_path / "i.json"
    run_cli("multicast", "generate", "--nodes", "12", "--seed", "3", "-o", inst, check=True)
    stdout = run_cli("multicast", "generate", "--nodes", "12", "--seed", "3", check=True).stdout
    assert inst.read_text() == stdout, "-o FILE and stdout carry the same document"
    assert [p.name for p in tmp_path.iterdir()] == ["i.json"], "no partial file left behind"
    doc = json.loads(run_cli("multicast", inst, "-a", "ecf", "--json", check=True).stdout)
    assert len(doc["sequence"]) == 12 * 11 and "execution" not in doc
    bad = run_cli("multicast", "generate", "--nodes", "12", "-o", tmp_path / "missing" / "x.json")
    assert bad.returncode == 2 and "cannot write" in bad.stderr and "Traceback" not in bad.stderr
    table = run_cli("multicast", inst, "-a", "wr", check=True).stdout
    assert "first 40 of 132 selections" in table


def test_generated_instance_reloads_bit_for_bit(tmp_path):
    # Floats print shortest-roundtrip and load back exactly, so a saved instance schedules
    # exactly as the generated one (8/155e6 used to come back one ulp off).
    from commaware import multicast

    inst = multicast.generate(6, "random", "mixed", "slow", sources=3, seed=5)
    path = tmp_path / "i.json"
    inst.write_json(path)
    again = multicast.load_instance(path)
    assert again.to_json() == inst.to_json()
    assert multicast.schedule(again, "ecf").completion_time == multicast.schedule(inst, "ecf").completion_time
