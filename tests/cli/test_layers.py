"""The package's layers hold: `lint-imports` keeps every import-linter contract of pyproject.toml
(the CLI above what runs and measures, above the paper front-ends, above the simulation API;
inside a package, its modules above their shared one; no import cycle)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_import_contracts_are_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    assert lint.is_file(), f"{lint} is missing: import-linter is a dev extra (pip install -e .[dev])"
    # This checkout's package, whatever is installed; no cache file left in the tree.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"lint-imports exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    assert "0 broken" in proc.stdout, proc.stdout
