"""Our Paje timeline against the one SMPI writes itself (issue 27, item 5): the same TI trace
replayed by SMPI 3.32 (`smpirun -replay` with `tracing:yes`, `tracing/smpi:yes`,
`tracing/smpi/computing:yes`) and by `commaware simulate --timeline`, both read by pajeng's
`pj_dump`. Every rank has the same states at the same times, and every message is the same
MPI_LINK (ranks, start, end).

What differs, and is asserted as such: SMPI's offline replay names every MPI state `kernel`
(its online runs write `PMPI_Send`, … which we write), and adds zero-length states for the
trace's `init` and `finalize`. SimGrid's own link variables are not compared: under its
default lazy update it writes a link's `bandwidth_used` over the intervals between its model
updates (n0's DOWN link shows 1.25e8 B/s from 0 for a message that arrives at the end), not
when flows run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import smpi_replay
from conftest import requires_smpi_mark
from .test_timeline_paje import requires_pajeng

SMPI_OK, SMPI_REASON = smpi_replay.smpi_available()
requires_smpi = requires_smpi_mark((SMPI_OK, SMPI_REASON), "SMPI Paje")

PLATFORM = {"cluster": {"count": 4, "speed": 1e9, "prefix": "n"},
            "network": {"bandwidth": 1.25e8, "latency": 1e-5, "eager_threshold": 65536,
                        "envelope_bytes": smpi_replay.SMPI_ENVELOPE_BYTES}}
TRACING = ["tracing:yes", "tracing/smpi:yes", "tracing/smpi/computing:yes", "tracing/precision:15"]


def write_ranks(directory: Path, ranks: dict[int, list[str]]) -> Path:
    """One TI file per rank and their index."""
    for r, lines in ranks.items():
        (directory / f"rank{r}.txt").write_text("".join(f"{r} {line}\n" for line in ["init", *lines, "finalize"]))
    index = directory / "index.txt"
    index.write_text("".join(f"rank{r}.txt\n" for r in sorted(ranks)))
    return index


def ring() -> dict[int, list[str]]:
    """Rank 0 computes, sends 10^5 B (rendezvous) to 1; each rank then passes 1,000 B on."""
    ranks = {0: ["compute 1000000", "send 1 1 100000", "recv 3 1 1000"]}
    for r in (1, 2, 3):
        ranks[r] = [f"recv {r - 1} 1 {100000 if r == 1 else 1000}", "compute 500000", f"send {(r + 1) % 4} 1 1000"]
    return ranks


def exchange() -> dict[int, list[str]]:
    """Pairs (0,1) and (2,3) exchange 200 kB with isend/irecv and wait, then 0 sends 1 kB to 2
    while 2 computes: rendezvous, eager and non-blocking calls in one run."""
    ranks: dict[int, list[str]] = {}
    for r, peer in ((0, 1), (1, 0), (2, 3), (3, 2)):
        ranks[r] = [f"irecv {peer} 7 200000", f"isend {peer} 7 200000", f"wait {peer} {r} 7", f"wait {r} {peer} 7"]
    ranks[0] += ["send 2 1 1000"]
    ranks[2] += ["compute 2000000", "recv 0 1 1000"]
    return ranks


def dump(path: Path) -> tuple[dict[str, list[tuple[float, float, str]]], list[tuple[str, str, float, float]]]:
    """States per rank as (start, end, name) in time order, and MPI links as (from, to, start, end)."""
    proc = subprocess.run(["pj_dump", "-l", "15", str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    states: dict[str, list[tuple[float, float, str]]] = {}
    links = []
    for line in proc.stdout.splitlines():
        f = [x.strip() for x in line.split(",")]
        if f[0] == "State" and f[2] == "MPI_STATE":
            states.setdefault(f[1], []).append((float(f[3]), float(f[4]), f[7]))
        elif f[0] == "Link" and f[2] == "MPI_LINK":
            links.append((f[7], f[8], float(f[3]), float(f[4])))
    return {k: sorted(v) for k, v in states.items()}, sorted(links)


@requires_smpi
@requires_pajeng
@pytest.mark.parametrize("program", [ring, exchange])
def test_our_paje_has_smpis_states_and_messages(cli, tmp_path, program):
    index = write_ranks(tmp_path, program())
    smpi_file = tmp_path / "smpi.paje"
    run = smpi_replay.run_smpi_replay(PLATFORM, index, extra_cfg=[*TRACING, f"tracing/filename:{smpi_file}"])
    platform = tmp_path / "platform.json"
    platform.write_text(json.dumps(PLATFORM))
    ours_file = tmp_path / "ours.paje"
    doc = json.loads(cli("simulate", platform, index, "--format", "ti", "--json", "--timeline", ours_file, check=True).stdout)
    assert doc["makespan"] == pytest.approx(run.makespan, rel=1e-9)

    smpi_states, smpi_links = dump(smpi_file)
    our_states, our_links = dump(ours_file)
    assert set(our_states) == set(smpi_states) == {f"rank-{r}" for r in range(4)}
    for rank, theirs in smpi_states.items():
        names = {name for _, _, name in theirs}
        assert names <= {"kernel", "computing", "smpi_replay_run_init", "smpi_replay_run_finalize"}, names
        theirs = [s for s in theirs if not s[2].startswith("smpi_replay_run_")]
        ours = our_states[rank]
        assert len(ours) == len(theirs), (rank, ours, theirs)
        for (s0, e0, name), (t0, t1, their_name) in zip(ours, theirs):
            assert (s0, e0) == pytest.approx((t0, t1), rel=1e-9, abs=1e-15), (rank, name)
            assert (name == "computing") == (their_name == "computing"), (rank, name, their_name)
            assert name == "computing" or name.startswith("PMPI_")
    assert len(our_links) == len(smpi_links) == len(doc["messages"])
    for (f0, t0, s0, e0), (f1, t1, s1, e1) in zip(our_links, smpi_links):
        assert (f0, t0) == (f1, t1)
        assert (s0, e0) == pytest.approx((s1, e1), rel=1e-9, abs=1e-15)
