"""`simulate --timeline FILE.paje` (issue 27, items 5 and 6): the Paje file SimGrid writes, read
back by an independent tool, Debian's pajeng (`pj_dump`), which must list exactly the states and
links of the run: one state per trace operation with SMPI's name, one link per message of the
`--json` document, at its times. CI installs pajeng (.ci/run) and sets COMMAWARE_REQUIRE_PAJENG=1,
so there these tests cannot skip."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, requires_peer_mark


def pajeng_available() -> tuple[bool, str]:
    if shutil.which("pj_dump") is None:
        return False, "pj_dump is not on PATH (Debian: apt-get install pajeng)"
    return True, ""


requires_pajeng = requires_peer_mark(pajeng_available(), "Paje timeline", "pajeng", "COMMAWARE_REQUIRE_PAJENG")

# SMPI's state of each trace op (its PMPI_ names; `computing` under tracing/smpi/computing).
SMPI_STATE = {"compute": "computing", "send": "PMPI_Send", "recv": "PMPI_Recv", "isend": "PMPI_Isend",
              "irecv": "PMPI_Irecv", "waitall": "PMPI_Waitall", "bcast": "PMPI_Bcast", "barrier": "PMPI_Barrier",
              "allreduce": "PMPI_Allreduce",
              "alltoall": "PMPI_Alltoall"}


def ring_trace(n: int) -> dict:
    """Rank 0 computes 10 ms then sends 1000 bytes round a ring of `n`; every other rank waits in its
    receive (posted at 0), then passes the bytes on. Every message is eager (1000 < 65536), so
    it starts when posted, and arrives after its receive was posted."""
    ranks = [[{"op": "compute", "seconds": 0.01}, {"op": "send", "dst": 1, "bytes": 1000, "tag": 3},
              {"op": "recv", "src": n - 1, "tag": 3}]]
    for r in range(1, n):
        ranks.append([{"op": "recv", "src": r - 1, "tag": 3},
                      {"op": "send", "dst": (r + 1) % n, "bytes": 1000, "tag": 3}])
    return {"ranks": ranks}


def dumped(path: Path) -> tuple[list[list[str]], list[list[str]]]:
    """pj_dump's states and links of `path` (it must read the file without a complaint): the
    fields of `State, rank-N, MPI_STATE, start, end, duration, depth, name` and of
    `Link, 0, MPI_LINK, start, end, duration, value, from, to, key` lines."""
    proc = subprocess.run(["pj_dump", "-l", "17", str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    rows = [[f.strip() for f in line.split(",")] for line in proc.stdout.splitlines()]
    return [r for r in rows if r[0] == "State"], [r for r in rows if r[0] == "Link"]


def simulate(cli, tmp_path: Path, platform: Path, trace: Path | dict) -> tuple[dict, list[list[str]], list[list[str]]]:
    """The `--json` document of a run and pj_dump's states and links of its timeline."""
    if isinstance(trace, dict):
        (tmp_path / "trace.json").write_text(json.dumps(trace))
        trace = tmp_path / "trace.json"
    timeline = tmp_path / "run.paje"
    doc = json.loads(cli("simulate", platform, trace, "--json", "--timeline", timeline, check=True).stdout)
    states, links = dumped(timeline)
    return doc, states, links


def state_names(states: list[list[str]], rank: int) -> list[str]:
    return [s[7] for s in sorted((s for s in states if s[1] == f"rank-{rank}"), key=lambda s: float(s[3]))]


@requires_pajeng
def test_a_ring_has_one_state_per_op_and_each_message_as_a_link_at_its_json_times(cli, tmp_path):
    trace = ring_trace(4)
    doc, states, links = simulate(cli, tmp_path, EXAMPLES / "cluster16.json", trace)
    for r, ops in enumerate(trace["ranks"]):
        assert state_names(states, r) == [SMPI_STATE[op["op"]] for op in ops]
        ends = [float(s[4]) for s in states if s[1] == f"rank-{r}"]
        assert max(ends) == pytest.approx(doc["ranks"][r]["end"], rel=1e-12, abs=0)
    computing = [s for s in states if s[7] == "computing"]
    assert [(s[1], float(s[3]), float(s[4])) for s in computing] == [("rank-0", 0.0, 0.01)]
    assert len(links) == len(doc["messages"]) == 4
    # Eager, receive already posted: the link runs from the message's start to its end.
    got = sorted((s[7], s[8], float(s[3]), float(s[4])) for s in links)
    want = sorted((f"rank-{m['src_rank']}", f"rank-{m['dst_rank']}", m["start"], m["end"]) for m in doc["messages"])
    assert [g[:2] for g in got] == [w[:2] for w in want]
    for g, w in zip(got, want):
        assert g[2:] == pytest.approx(w[2:], rel=1e-12, abs=1e-15)
    assert {s[6] for s in links} == {"PTP"}


@requires_pajeng
@pytest.mark.parametrize("example", ["alltoall.json", "bcast_barrier.json"])
def test_collectives_are_one_state_each_and_their_messages_are_links(cli, tmp_path, example):
    trace = json.loads((EXAMPLES / example).read_text())
    doc, states, links = simulate(cli, tmp_path, EXAMPLES / "cluster16.json", EXAMPLES / example)
    for r, ops in enumerate(trace["ranks"]):
        assert state_names(states, r) == [SMPI_STATE[op["op"]] for op in ops]
    assert len(links) == len(doc["messages"]) > 0
    # Each link is one message of the document: same ranks, posted no later than the transfer
    # started, received no earlier than the last byte arrived.
    key = lambda src, dst: (src, dst)  # noqa: E731
    got: dict[tuple[str, str], list[tuple[float, float]]] = {}
    want: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for s in links:
        got.setdefault(key(s[7], s[8]), []).append((float(s[3]), float(s[4])))
    for m in doc["messages"]:
        want.setdefault(key(f"rank-{m['src_rank']}", f"rank-{m['dst_rank']}"), []).append((m["start"], m["end"]))
    assert {k: len(v) for k, v in got.items()} == {k: len(v) for k, v in want.items()}
    for k in want:
        for (g0, g1), (w0, w1) in zip(sorted(got[k]), sorted(want[k])):
            assert g0 <= w0 * (1 + 1e-12) and g1 >= w1 * (1 - 1e-12), (k, g0, g1, w0, w1)
    collective = {op["op"] for op in trace["ranks"][0] if op["op"] in ("alltoall", "allreduce", "bcast", "barrier")}
    assert {s[6] for s in links} <= collective
    makespan = max(float(s[4]) for s in states)
    assert makespan == pytest.approx(doc["makespan"], rel=1e-12)


def test_a_timeline_needs_a_known_extension(cli, tmp_path):
    out = tmp_path / "run.txt"
    proc = cli("simulate", EXAMPLES / "cluster16.json", EXAMPLES / "ring.json", "--timeline", out)
    assert proc.returncode == 2
    assert proc.stderr == f"error: {out}: --timeline needs a .paje or .trace or .otf2 or .perfetto-trace or .pftrace file\n"
    assert not out.exists()


def test_a_failed_run_leaves_no_timeline(cli, tmp_path):
    # Rank 1 receives a message nobody sends: the replay deadlocks after writing some events.
    trace = tmp_path / "deadlock.json"
    trace.write_text(json.dumps({"ranks": [[{"op": "compute", "seconds": 1}], [{"op": "recv", "src": 0}]]}))
    out = tmp_path / "run.paje"
    proc = cli("simulate", EXAMPLES / "cluster16.json", trace, "--timeline", out)
    assert proc.returncode == 2 and "deadlock" in proc.stderr and "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == [trace]


def test_an_unwritable_timeline_is_one_error_naming_it(cli, tmp_path):
    out = tmp_path / "missing" / "run.paje"
    proc = cli("simulate", EXAMPLES / "cluster16.json", EXAMPLES / "ring.json", "--timeline", out)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: {out}: cannot write: ") and proc.stderr.count("\n") == 1


def test_the_api_writes_a_timeline_and_removes_it_when_the_run_fails(tmp_path):
    import commaware

    out = tmp_path / "api.trace"
    result = commaware.simulate(EXAMPLES / "cluster16.json", ring_trace(3), timeline=out, record_messages=False)
    lines = out.read_text().splitlines()
    assert sum(line.startswith("15 ") for line in lines) == result.message_stats["count"] == 3
    assert sum(line.startswith("12 ") for line in lines) == 3 + 2 + 2
    failed = tmp_path / "failed.paje"
    with pytest.raises(commaware.DeadlockError):
        commaware.simulate(EXAMPLES / "cluster16.json", {"ranks": [[], [{"op": "recv", "src": 0}]]}, timeline=failed)
    assert not failed.exists()
    with pytest.raises(commaware.OptionsError, match=r"a timeline is written to a \.paje, \.trace, \.otf2, \.perfetto-trace, \.pftrace file"):
        commaware.simulate(EXAMPLES / "cluster16.json", ring_trace(3), timeline=tmp_path / "run.txt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["api.trace"]


# Link load as Paje variables (item 5): SimGrid's `LINK` containers with `bandwidth` and
# `bandwidth_used` (B/s), as its tracing/platform writes them.

def variables(path: Path) -> dict[tuple[str, str], list[tuple[float, float, float]]]:
    """pj_dump's `Variable, container, type, start, end, duration, value` rows of `path`, as
    (start, end, value) per (link, variable), in time order."""
    proc = subprocess.run(["pj_dump", "-l", "17", str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    out: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for line in proc.stdout.splitlines():
        f = [x.strip() for x in line.split(",")]
        if f[0] == "Variable":
            out.setdefault((f[1], f[2]), []).append((float(f[3]), float(f[4]), float(f[6])))
    return {k: sorted(v) for k, v in out.items()}


def carried(segments: list[tuple[float, float, float]]) -> float:
    """Bytes: the load integrated over time."""
    return sum((end - start) * value for start, end, value in segments)


def sends(pairs: list[tuple[int, int, float]], ranks: int) -> dict:
    """Each (src, dst, bytes) as an isend and an irecv posted at 0, then a waitall on every rank:
    every transfer starts at 0."""
    ops: list[list[dict]] = [[] for _ in range(ranks)]
    for s, d, b in pairs:
        ops[s].append({"op": "isend", "dst": d, "bytes": b})
        ops[d].append({"op": "irecv", "src": s})
    for r in range(ranks):
        if ops[r]:
            ops[r].append({"op": "waitall"})
    return {"ranks": ops}


@requires_pajeng
def test_one_message_loads_its_two_links_at_full_bandwidth_between_latency_and_last_byte(cli, tmp_path):
    # 10^6 B at 1.25e8 B/s after a 1e-4 s latency: the flow runs from 1e-4 to 0.0081 s.
    platform = tmp_path / "p.json"
    platform.write_text(json.dumps({"cluster": {"count": 2, "speed": 1e9, "prefix": "h"},
                                    "network": {"bandwidth": 1.25e8, "latency": 1e-4}}))
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(sends([(0, 1, 1e6)], 2)))
    timeline = tmp_path / "run.paje"
    cli("simulate", platform, trace, "--timeline", timeline, check=True)
    v = variables(timeline)
    assert {link for link, _ in v} == {"h0_UP", "h1_DOWN"}
    for link in ("h0_UP", "h1_DOWN"):
        used = v[(link, "bandwidth_used")]
        assert [(s, e, val) for s, e, val in used if val > 0] == [pytest.approx((1e-4, 0.0081, 1.25e8), rel=1e-12)]
        assert carried(used) == pytest.approx(1e6, rel=1e-12)
        assert {val for _, _, val in v[(link, "bandwidth")]} == {1.25e8}


@requires_pajeng
def test_two_senders_share_the_receivers_link(cli, tmp_path):
    # h0 and h1 each send 10^6 B to h2 at 0 (no latency): h2's DOWN link carries both at
    # 1e8 B/s in all, 5e7 each, until both end at 0.02 s.
    platform = tmp_path / "p.json"
    platform.write_text(json.dumps({"cluster": {"count": 3, "speed": 1e9, "prefix": "h"},
                                    "network": {"bandwidth": 1e8, "latency": 0.0}}))
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(sends([(0, 2, 1e6), (1, 2, 1e6)], 3)))
    timeline = tmp_path / "run.paje"
    cli("simulate", platform, trace, "--timeline", timeline, check=True)
    v = variables(timeline)
    busy = lambda link: [(s, e, val) for s, e, val in v[(link, "bandwidth_used")] if val > 0]  # noqa: E731
    assert busy("h2_DOWN") == [pytest.approx((0.0, 0.02, 1e8), rel=1e-12, abs=1e-15)]
    assert busy("h0_UP") == busy("h1_UP") == [pytest.approx((0.0, 0.02, 5e7), rel=1e-12, abs=1e-15)]


@requires_pajeng
def test_on_a_fat_tree_each_link_carries_the_bytes_the_link_table_counts(cli, tmp_path):
    platform = tmp_path / "ft.json"
    platform.write_text(json.dumps({"cluster": {"count": 4, "speed": 1e9, "prefix": "h"},
                                    "network": {"bandwidth": 1e8, "latency": 1e-6,
                                                "topology": {"kind": "fat_tree", "down": [2, 2], "up": [1, 1]}}}))
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(sends([(0, 2, 3e6), (1, 3, 1e6), (0, 1, 2e6), (3, 0, 5e5)], 4)))
    timeline, table = tmp_path / "run.paje", tmp_path / "links.csv"
    cli("simulate", platform, trace, "--timeline", timeline, "--links", table, check=True)
    import pandas as pd

    links = pd.read_csv(table).set_index("name")
    v = variables(timeline)
    used = {link for link, var in v if var == "bandwidth_used"}
    assert used == set(links.index[links["bytes"] > 0])
    for link in used:
        # pj_dump keeps values in single precision (66,666,666.67 B/s shows as 66666668).
        assert carried(v[(link, "bandwidth_used")]) == pytest.approx(links.loc[link, "bytes"], rel=1e-6)
        assert max(val for _, _, val in v[(link, "bandwidth_used")]) <= links.loc[link, "bandwidth"] * (1 + 1e-7)
