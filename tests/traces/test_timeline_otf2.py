"""`simulate --timeline FILE.otf2` (issue 27, items 4 and 6): the simulated run as an OTF2
archive, read back by an independent tool, Debian's otf2-tools (`otf2-print`), which must read
it without an error and count the events we wrote: an Enter and a Leave per trace operation,
an MpiSend and an MpiRecv per message of the `--json` document. CI installs otf2-tools
(.ci/run, with pajeng) and sets COMMAWARE_REQUIRE_PAJENG=1, so there these tests cannot skip."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from conftest import EXAMPLES, requires_peer_mark

from commaware.api import load_trace


def otf2_print_available() -> tuple[bool, str]:
    if shutil.which("otf2-print") is None:
        return False, "otf2-print is not on PATH (Debian: apt-get install otf2-tools)"
    return True, ""


requires_otf2_print = requires_peer_mark(otf2_print_available(), "OTF2 timeline", "otf2-tools",
                                         "COMMAWARE_REQUIRE_PAJENG")


def printed(anchor: Path) -> Counter:
    """otf2-print's event records of `anchor` by kind (it must read the archive without a complaint)."""
    proc = subprocess.run(["otf2-print", str(anchor)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    kinds = Counter()
    for line in proc.stdout.splitlines():
        word = line.split(" ", 1)[0]
        if word in ("ENTER", "LEAVE", "MPI_SEND", "MPI_RECV"):
            kinds[word] += 1
    return kinds


@requires_otf2_print
@pytest.mark.parametrize("trace", ["ring.json", "alltoall.json", "bcast_barrier.json", "master_worker.json"])
def test_otf2_print_reads_it_and_counts_our_events(cli, tmp_path, trace):
    anchor = tmp_path / "run.otf2"
    proc = cli("simulate", EXAMPLES / "cluster16.json", EXAMPLES / trace, "--json", "--timeline", anchor, check=True)
    doc = json.loads(proc.stdout)
    messages = len(doc["messages"])
    ops = load_trace(EXAMPLES / trace).n_ops
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "run.def", "run.otf2"]  # nothing partial left
    kinds = printed(anchor)
    assert kinds == Counter(ENTER=ops, LEAVE=ops, MPI_SEND=messages, MPI_RECV=messages)


@requires_otf2_print
def test_rewriting_replaces_the_archive_and_our_reader_reads_it(cli, tmp_path):
    anchor = tmp_path / "run.otf2"
    for trace in ("alltoall.json", "ring.json"):
        cli("simulate", EXAMPLES / "cluster16.json", EXAMPLES / trace, "--timeline", anchor, check=True)
    kinds = printed(anchor)
    assert kinds["ENTER"] == load_trace(EXAMPLES / "ring.json").n_ops
    # Our reader takes it back: the same messages between the same ranks.
    shown = json.loads(cli("trace", "show", anchor, "--json", check=True).stdout)
    want = json.loads(cli("trace", "show", EXAMPLES / "ring.json", "--json", check=True).stdout)
    assert shown["ranks"] == want["ranks"]
    assert shown["point_to_point"] == want["point_to_point"]


def test_a_failed_run_leaves_no_archive(cli, tmp_path):
    bad = tmp_path / "deadlock.json"
    bad.write_text(json.dumps({"ranks": [[{"op": "recv", "src": 1}], [{"op": "recv", "src": 0}]]}))
    proc = cli("simulate", EXAMPLES / "cluster16.json", bad, "--timeline", tmp_path / "run.otf2")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["deadlock.json"]
