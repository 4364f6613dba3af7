"""Progress on stderr (`commaware.cli.common.Progress`): a bar on a terminal; otherwise, or with
--json, a plain line every PROGRESS_SECONDS while a long command runs, and stdout untouched."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from commaware.cli import common
from conftest import ROOT


def test_plain_lines_name_the_step_and_counts(monkeypatch, capsys):
    monkeypatch.setenv(common.PROGRESS_ENV, "0.1")
    with common.Progress("demo", plain=True, unit="runs") as progress:
        assert progress.mode == "plain" and progress.every == 0.1
        progress.stage("[1/2] first")
        progress.update(3, 10, "warming up")
        time.sleep(0.45)  # four beats or so; the step reports nothing meanwhile
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 2, lines
    assert all(line == "demo: [1/2] first: 3/10 runs, warming up (0m00s elapsed)" for line in lines), lines
    time.sleep(0.25)
    assert capsys.readouterr().err == "", "no line once the command is done"


def test_a_short_run_quiet_or_not_prints_nothing(monkeypatch, capsys):
    monkeypatch.setenv(common.PROGRESS_ENV, "5")
    with common.Progress("demo", plain=True) as progress:
        progress.update(1, 2)
    with common.Progress("demo", plain=True, quiet=True) as progress:
        assert progress.mode == "off"
        progress.update(1, 2)
    assert capsys.readouterr().err == ""


def test_not_a_terminal_means_plain_lines(monkeypatch):
    monkeypatch.setenv(common.PROGRESS_ENV, "not a number")
    progress = common.Progress("demo")
    assert not common.err.is_terminal  # pytest captures stderr
    assert progress.mode == "plain" and progress.every == common.PROGRESS_SECONDS == 10.0


def test_reproduce_json_piped_prints_progress_lines_and_clean_json():
    """`reproduce 004 --quick --json` with stdout and stderr piped: its stdout is the JSON document
    alone, and its stderr gets a line at least every interval (1 s here, 10 s by default)."""
    env = {**os.environ, common.PROGRESS_ENV: "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "python"), os.environ.get("PYTHONPATH")]))}
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "commaware.cli", "reproduce", "004", "--quick", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    stamped: list[tuple[float, str]] = []
    reader = threading.Thread(target=lambda: stamped.extend((time.monotonic(), line) for line in proc.stderr))
    reader.start()
    stdout = proc.stdout.read()
    proc.wait(timeout=600)
    reader.join()
    end = time.monotonic()
    assert proc.returncode in (0, 1), "".join(line for _, line in stamped)
    doc = json.loads(stdout)
    assert {row["paper"] for row in doc["checks"]} == {"004"}
    lines = [line.rstrip("\n") for _, line in stamped]
    shown = [line for line in lines if line.startswith("reproduce: [")]  # after "reproduce: starting" lines
    assert shown and lines[-len(shown):] == shown, lines
    assert all(re.fullmatch(r"reproduce: starting \(\dm\d\ds elapsed\)", line) for line in lines[:-len(shown)]), lines
    assert all(re.fullmatch(r"reproduce: \[\d+/\d+\] 004 .+ \(\d+m\d\ds elapsed\)", line) for line in shown), lines
    assert len(lines) >= 2 and end - start > 2, lines
    beats = [t for t, _ in stamped]
    gaps = [b - a for a, b in zip(beats, beats[1:])]
    assert max(gaps) < 5, f"a gap of {max(gaps):.1f} s between progress lines (interval 1 s): {lines}"


def test_sweep_json_piped_prints_runs_done(tmp_path):
    env = {**os.environ, common.PROGRESS_ENV: "0.2",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "python"), os.environ.get("PYTHONPATH")]))}
    spec = ROOT / "examples" / "sweeps" / "simulate.toml"
    proc = subprocess.run([sys.executable, "-m", "commaware.cli", "sweep", str(spec), "--serial", "--json",
                           "--out", str(tmp_path / "results")], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)) == 4
    progress = [line for line in proc.stderr.splitlines() if line.startswith("sweep: ")]
    if not progress:
        pytest.fail(f"the sweep took under 0.2 s or printed no progress: {proc.stderr!r}")
    assert all(re.fullmatch(r"sweep: (starting|[0-4]/4 runs) \(\d+m\d\ds elapsed\)", line) for line in progress), progress
