"""`commaware reproduce`: row statuses, the exit code, the summary line and the progress display."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from commaware.reproduce import runner as reproduce
from commaware.reproduce import Check


def row(status: str, name: str = "x", note: str = "why") -> Check:
    return Check("000", name, 1.0, 2.0, 0.1, status == "pass", note=note, status=status)


def test_status_defaults_from_passed_and_to_dict():
    assert Check("000", "a", 1, 1, 0, True).status == "pass"
    assert Check("000", "a", 1, 2, 0, False).status == "fail"
    d = row("not_reproduced").to_dict()
    assert d["status"] == "not_reproduced" and d["pass"] is False
    assert row("pass").to_dict()["pass"] is True
    assert "paper_inconsistent" not in d and "extra" not in d


def test_status_must_agree_with_passed_and_not_reproduced_needs_a_note():
    with pytest.raises(ValueError, match="contradicts"):
        Check("000", "a", 1, 1, 0, True, status="not_reproduced", note="n")
    with pytest.raises(ValueError, match="contradicts"):
        Check("000", "a", 1, 2, 0, False, status="pass")
    with pytest.raises(ValueError, match="needs a note"):
        Check("000", "a", 1, 2, 0, False, status="not_reproduced")
    with pytest.raises(ValueError, match="status must be one of"):
        Check("000", "a", 1, 2, 0, False, status="skipped")


def test_exit_code_and_counts():
    rows = [row("pass"), row("not_reproduced"), row("pass")]
    assert reproduce.exit_code(rows) == 0
    assert reproduce.counts(rows) == {"pass": 2, "fail": 0, "not_reproduced": 1}
    rows.append(row("fail"))
    assert reproduce.exit_code(rows) == 1
    assert reproduce.counts(rows) == {"pass": 2, "fail": 1, "not_reproduced": 1}
    assert reproduce.exit_code([]) == 0


def test_run_reports_each_check_and_inner_progress():
    events = []

    class Recorder:
        def start(self, index, count, job):
            events.append(("start", index, count, job.label))

        def advance(self, done, total, detail):
            events.append(("advance", done, total, detail))

    def first():
        """First check of the fake paper."""
        for i in range(3):
            reproduce.report(i + 1, 3, "steps")
        return [row("pass", "a")]

    def second():
        return [row("not_reproduced", "b")]

    reproduce._load_modules()  # register the real checks first: the fakes replace them below
    saved = reproduce._REGISTRY["000"]
    reproduce._REGISTRY["000"] = []
    try:
        reproduce.check("000")(first)
        reproduce.check("000", "the second")(second)
        rows = reproduce.run(["000"], progress=Recorder())
    finally:
        reproduce._REGISTRY["000"] = saved
    assert [r.name for r in rows] == ["a", "b"]
    assert events == [("start", 0, 2, "First check of the fake paper"), ("advance", 1, 3, "steps"),
                      ("advance", 2, 3, "steps"), ("advance", 3, 3, "steps"), ("start", 1, 2, "the second")]
    reproduce.report(1, 1, "outside a run: ignored")  # no progress set: a no-op


FAKE = """
import sys
from commaware import cli
from commaware.reproduce import runner as reproduce
from commaware.reproduce import Check

statuses = sys.argv[1].split(",")
reproduce._load_modules()
reproduce._REGISTRY["000"] = []

@reproduce.check("000", "fake rows")
def rows():
    return [Check("000", f"row {i}", 1.0, 1.0 if s == "pass" else 2.0, 0.0, s == "pass", note="assumed, tried, cause",
                  status=s) for i, s in enumerate(statuses)]

cli.main(["reproduce", "000", *sys.argv[2:]])
"""


def run_fake(statuses: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(FAKE), statuses, *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "160"})


@pytest.mark.parametrize("statuses,code,summary", [
    ("pass,pass", 0, "2 checks: 2 pass, 0 fail, 0 not reproduced"),
    ("pass,not_reproduced", 0, "2 checks: 1 pass, 0 fail, 1 not reproduced"),
    ("pass,not_reproduced,fail", 1, "3 checks: 1 pass, 1 fail, 1 not reproduced"),
])
def test_cli_exit_code_summary_and_status_column(statuses, code, summary):
    proc = run_fake(statuses)
    assert proc.returncode == code, proc.stderr
    flat = " ".join(proc.stdout.split())
    assert summary in flat, flat
    table = flat[:flat.index(summary)]
    cells = statuses.split(",")
    assert "┃ status ┃" in table
    assert table.count("│ pass ") == cells.count("pass")
    assert table.count("│ FAIL ") == cells.count("fail")
    assert table.count("│ not reproduced ") == cells.count("not_reproduced")
    assert proc.stderr == ""
    doc = json.loads(run_fake(statuses, "--json").stdout)
    assert [c["status"] for c in doc["checks"]] == statuses.split(",")
    assert [c["pass"] for c in doc["checks"]] == [s == "pass" for s in statuses.split(",")]


def test_cli_progress_only_on_a_terminal_and_not_with_quiet():
    """On a terminal (a pty) the check's label shows on stderr; --quiet shows nothing."""
    pty = pytest.importorskip("pty")

    def on_terminal(*args: str) -> str:
        code = textwrap.dedent(FAKE)
        out = bytearray()
        pid, fd = pty.fork()
        if pid == 0:  # child: stdout to /dev/null, stderr on the terminal
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.execv(sys.executable, [sys.executable, "-c", code, "pass", *args])
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.waitpid(pid, 0)
        return out.decode(errors="replace")

    assert "fake rows" in on_terminal()
    assert "fake rows" not in on_terminal("--quiet")
