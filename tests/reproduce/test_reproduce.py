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


R = "reproduction"


def row(status: str, name: str = "x", note: str = "why", kind: str = R, inconsistent: bool = False) -> Check:
    return Check("000", name, 1.0, 2.0, 0.1, status == "pass", kind=kind, note=note, status=status,
                 paper_inconsistent=inconsistent)


def test_status_defaults_from_passed_and_to_dict():
    assert Check("000", "a", 1, 1, 0, True, kind=R).status == "pass"
    assert Check("000", "a", 1, 2, 0, False, kind=R).status == "fail"
    d = row("not_reproduced", kind="self_check").to_dict()
    assert d["status"] == "not_reproduced" and d["pass"] is False and d["kind"] == "self_check"
    assert row("pass").to_dict()["pass"] is True
    assert "paper_inconsistent" not in d and "extra" not in d


def test_status_must_agree_with_passed_and_not_reproduced_needs_a_note():
    with pytest.raises(ValueError, match="contradicts"):
        Check("000", "a", 1, 1, 0, True, kind=R, status="not_reproduced", note="n")
    with pytest.raises(ValueError, match="contradicts"):
        Check("000", "a", 1, 2, 0, False, kind=R, status="pass")
    with pytest.raises(ValueError, match="needs a note"):
        Check("000", "a", 1, 2, 0, False, kind=R, status="not_reproduced")
    with pytest.raises(ValueError, match="status must be one of"):
        Check("000", "a", 1, 2, 0, False, kind=R, status="skipped")


def test_every_row_names_its_kind():
    with pytest.raises(ValueError, match="kind must be one of"):
        Check("000", "a", 1, 1, 0, True)
    with pytest.raises(ValueError, match="kind must be one of"):
        Check("000", "a", 1, 1, 0, True, kind="anecdote")


def test_counts_per_kind_and_the_summary_puts_reproductions_first_and_paper_inconsistent_apart():
    rows = [row("pass"), row("pass", inconsistent=True), row("not_reproduced"), row("pass", kind="in_sample"),
            row("fail", kind="self_check"), row("pass", kind="arithmetic", inconsistent=True)]
    by_kind = reproduce.counts_by_kind(rows)
    assert by_kind["reproduction"] == {"pass": 2, "fail": 0, "not_reproduced": 1, "paper_inconsistent": 1}
    assert by_kind["in_sample"] == {"pass": 1, "fail": 0, "not_reproduced": 0, "paper_inconsistent": 0}
    assert list(by_kind) == ["reproduction", "in_sample", "arithmetic", "self_check"]
    assert reproduce.summary(rows) == (
        "6 checks. 3 reproduction: 1 pass, 0 fail, 1 not reproduced; 1 paper_inconsistent. "
        "1 in sample: 1 pass, 0 fail, 0 not reproduced. 1 arithmetic: 0 pass, 0 fail, 0 not reproduced; "
        "1 paper_inconsistent. 1 self check: 0 pass, 1 fail, 0 not reproduced.")
    # no reproduction at all still heads the line with zero
    assert reproduce.summary([row("pass", kind="self_check")]).startswith("1 checks. 0 reproduction: 0 pass")


def test_an_ordering_claim_is_judged_by_the_95_percent_interval_of_the_mean_over_ten_seeds():
    # mean 1, sample sd 1 over 10 seeds: half-width t(0.975, 9) / sqrt(10) = 2.262157 / 3.162278 = 0.715357
    d = [1 + x for x in (-1.5, -0.5, 0.5, 1.5, -1.0, 1.0, 0.0, 0.0, -1.0, 1.0)]
    import statistics
    assert statistics.mean(d) == pytest.approx(1) and statistics.stdev(d) == pytest.approx(1)
    o = reproduce.ordering(d)
    assert o.status == "pass" and o.seeds == 10
    assert o.high == pytest.approx(1.715357, rel=1e-6) and o.low == pytest.approx(0.284643, rel=1e-5)
    assert reproduce.ordering([-x for x in d]).status == "fail"
    assert reproduce.ordering([x - 1 for x in d]).status == "not_reproduced"  # centred on 0
    assert "over 10 seeds" in o.describe(" %")
    with pytest.raises(ValueError, match="at least 10 seeds"):
        reproduce.ordering(d[:9])


def test_a_claim_of_many_comparisons_is_judged_on_simultaneous_intervals():
    # Bonferroni over 10 comparisons: each interval at 99.5 %, t(0.9975, 9) = 3.690 (a t table),
    # half-width 3.690 / sqrt(10) = 1.1669 for sd 1: the lone claim above passes, one of ten does not.
    d = [1 + x for x in (-1.5, -0.5, 0.5, 1.5, -1.0, 1.0, 0.0, 0.0, -1.0, 1.0)]
    alone, one_of_ten = reproduce.ordering(d), reproduce.ordering(d, comparisons=10)
    assert one_of_ten == alone.among(10)
    assert one_of_ten.high == pytest.approx(1 + 3.690 / 10 ** 0.5, abs=2e-4)
    assert alone.status == "pass" and one_of_ten.status == "not_reproduced"
    assert one_of_ten.comparisons == 10 and "simultaneous 95 % CI of 10" in one_of_ten.describe()
    assert reproduce.ordering([x + 1 for x in d], comparisons=10).status == "pass"  # mean 2: clear even so


def test_exit_code_and_counts():
    rows = [row("pass"), row("not_reproduced"), row("pass")]
    assert reproduce.exit_code(rows) == 0
    assert reproduce.counts(rows) == {"pass": 2, "fail": 0, "not_reproduced": 1}
    rows.append(row("fail"))
    assert reproduce.exit_code(rows) == 1
    assert reproduce.counts(rows) == {"pass": 2, "fail": 1, "not_reproduced": 1}
    assert reproduce.exit_code([]) == 0
    assert reproduce.exit_code([row("fail", kind="self_check")]) == 1  # a failing self check fails the run too


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

statuses = sys.argv[1].split(",")  # status[/kind][!]: ! flags paper_inconsistent
reproduce._load_modules()
reproduce._REGISTRY["000"] = []

@reproduce.check("000", "fake rows")
def rows():
    out = []
    for i, token in enumerate(statuses):
        s, _, kind = token.rstrip("!").partition("/")
        out.append(Check("000", f"row {i}", 1.0, 1.0 if s == "pass" else 2.0, 0.0, s == "pass",
                         kind=kind or "reproduction", note="assumed, tried, cause", status=s,
                         paper_inconsistent=token.endswith("!")))
    return out

cli.main(["reproduce", "000", *sys.argv[2:]])
"""


def run_fake(statuses: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(FAKE), statuses, *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "160"})


@pytest.mark.parametrize("statuses,code,summary", [
    ("pass,pass", 0, "2 checks. 2 reproduction: 2 pass, 0 fail, 0 not reproduced."),
    ("pass,not_reproduced", 0, "2 checks. 2 reproduction: 1 pass, 0 fail, 1 not reproduced."),
    ("pass,not_reproduced,fail", 1, "3 checks. 3 reproduction: 1 pass, 1 fail, 1 not reproduced."),
    ("pass/in_sample,pass!,not_reproduced/self_check", 0,
     "3 checks. 1 reproduction: 0 pass, 0 fail, 0 not reproduced; 1 paper_inconsistent. "
     "1 in sample: 1 pass, 0 fail, 0 not reproduced. 1 self check: 0 pass, 0 fail, 1 not reproduced."),
])
def test_cli_exit_code_summary_and_status_column(statuses, code, summary):
    proc = run_fake(statuses)
    assert proc.returncode == code, proc.stderr
    flat = " ".join(proc.stdout.split())
    assert summary in flat, flat
    table = flat[:flat.index(summary)]
    tokens = statuses.split(",")
    cells = [t.rstrip("!").partition("/")[0] for t in tokens]
    kinds = [t.rstrip("!").partition("/")[2] or "reproduction" for t in tokens]
    assert "┃ status ┃" in table and "┃ kind " in table
    assert table.count("│ pass ") + table.count("│ pass* ") == cells.count("pass")
    assert table.count("│ FAIL ") == cells.count("fail")
    assert table.count("│ not reproduced ") == cells.count("not_reproduced")
    assert table.count("│ pass* ") == statuses.count("!")  # every flagged row here passes
    assert ("* paper_inconsistent: the paper contradicts itself" in flat) == ("!" in statuses)
    for kind in set(kinds):
        assert table.count(f"│ {kind} ") == kinds.count(kind)
    assert proc.stderr == ""
    doc = json.loads(run_fake(statuses, "--json").stdout)
    assert [c["status"] for c in doc["checks"]] == cells
    assert [c["kind"] for c in doc["checks"]] == kinds
    assert [c["pass"] for c in doc["checks"]] == [s == "pass" for s in cells]
    assert sum(n["pass"] for n in doc["counts"].values()) == cells.count("pass")
    assert doc["counts"]["reproduction"]["paper_inconsistent"] == statuses.count("!")


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


def test_terminal_table_wraps_long_values_at_120_columns():
    """The summary table at 120 columns (the least `reproduce` prints at) cuts nothing: a
    schedule of 700 characters with no room folds over lines in its column, and the status
    column is whole on every row."""
    import io

    from rich.console import Console

    from commaware.cli.reproduce import check_table

    schedule = "(" + ",".join(f"({i},{i % 3},{i % 5})" for i in range(70)) + ")"
    rows = [reproduce.Check("003", "Fig. 4(b) ECF sequence of the worked example, every send in order", schedule,
                            schedule.replace("1", "2"), 0.0, False, kind="reproduction", note="n",
                            status="not_reproduced", figure="§6 Fig. 4, worked example"),
            reproduce.Check("004", "Fig. 2 gige star of 2", 1.5, 1.5, 1e-9, True, kind="in_sample",
                            figure="Fig. 2, one node sending to 1, 2, 3 peers")]
    console = Console(width=120, file=io.StringIO(), color_system=None)
    console.print(check_table(rows))
    text = console.file.getvalue()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 120
    cells = [[cell.strip() for cell in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]
    assert all(len(c) == 8 for c in cells)
    starts = [i for i, c in enumerate(cells) if c[0]] + [len(cells)]  # a row's first line names its paper
    first, second = (cells[a:b] for a, b in zip(starts, starts[1:]))
    assert "".join(c[3] for c in first) == schedule and "".join(c[4] for c in first) == schedule.replace("1", "2")
    assert first[0][7] == "not reproduced" and second[0][7] == "pass" and second[0][0] == "004"
    assert " ".join(filter(None, (c[2] for c in first))) == rows[0].name
    assert " ".join(filter(None, (c[1] for c in second))) == rows[1].figure
