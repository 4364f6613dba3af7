#!/usr/bin/env python3
"""Run a benchmark (or a ``commaware measure`` command) with ``--json`` and keep its result,
with the commit and date, under ``benches/recorded/`` for the docs to quote (issue 40, item 2).

Usage::

    .venv/bin/python benches/record.py NAME bench_alltoall.py [the benchmark's options]
    .venv/bin/python benches/record.py NAME commaware measure cosched [its options]

writes ``benches/recorded/NAME.json``: ``{"started", "commit", "dirty", "command", "exit_code", "result"}``,
where ``result`` is what the benchmark printed with ``--json`` (a benchmark exits 1 when it
misses a target; its result is kept all the same). Its progress (stderr) passes
through. ``commit`` and ``dirty`` (the tracked files that differed from it) are taken as the run starts
(the build measured is the one installed, so record on a clean tree, built from it). A figure in the docs is then
followed by ``<!-- figure: NAME.json result.KEY FORMAT -->`` (``tests/cli/test_figures.py``).
Nothing is written when the benchmark prints no JSON.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import subprocess
import sys
from pathlib import Path

from common import head_commit, save_results

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", help="the recorded file's name, without .json")
    ap.add_argument("bench", help="a benchmark in benches/ (bench_*.py), or commaware")
    ap.add_argument("options", nargs=argparse.REMAINDER, help="the benchmark's (or the command's) own options")
    args = ap.parse_args()
    script = ROOT / "benches" / args.bench
    if args.bench == "commaware":  # the command installed beside this interpreter
        command, shown = [str(Path(sys.executable).parent / "commaware"), *args.options, "--json"], ["commaware"]
    elif script.is_file() and script.name.startswith("bench_"):
        command, shown = [sys.executable, str(script), *args.options, "--json"], ["benches/" + args.bench]
    else:
        print(f"record: no benchmark benches/{args.bench}", file=sys.stderr)
        return 2
    started = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    # The commit and the tree as the run starts: a commit made while a long benchmark runs
    # must not be credited with it.
    commit = head_commit()
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                            capture_output=True, text=True).stdout
    proc = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        result = json.loads(proc.stdout)
    except json.JSONDecodeError:
        result = None
    if result is None:
        print(f"record: {args.bench} exited {proc.returncode} without JSON on stdout; nothing written", file=sys.stderr)
        return 1
    saved = save_results(args.name, started, {
        "dirty": [line[3:] for line in status.splitlines()],
        "command": " ".join([*shown, *args.options, "--json"]),
        "exit_code": proc.returncode, "result": result}, commit=commit)
    out = ROOT / "benches" / "recorded" / f"{args.name}.json"
    shutil.copyfile(saved, out)
    print(f"record: wrote {out.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
