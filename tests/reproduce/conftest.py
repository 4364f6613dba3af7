"""One `commaware reproduce all --quick --out DIR --json` for the whole session: the report tests
and the paper tests that read rows from the CLI share it (paper 002's quick run alone takes
minutes; running it twice would double that)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import run_cli


@dataclass
class QuickReport:
    returncode: int
    stdout: str
    stderr: str
    out: Path

    @property
    def doc(self) -> dict:
        return json.loads(self.stdout)

    def rows(self, paper: str) -> list[dict]:
        return [c for c in self.doc["checks"] if c["paper"] == paper]

    def figures(self, paper: str) -> list[str]:
        return sorted(p.name for p in (self.out / "figures").iterdir() if p.name.startswith(f"paper{paper}"))


@pytest.fixture(scope="session")
def quick_report(tmp_path_factory) -> QuickReport:
    out = tmp_path_factory.mktemp("report") / "out"
    proc = run_cli("reproduce", "all", "--quick", "--out", str(out), "--json")
    return QuickReport(proc.returncode, proc.stdout, proc.stderr, out)
