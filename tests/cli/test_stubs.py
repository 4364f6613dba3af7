"""The type stubs of the Rust extension match it: every function's parameters and
defaults, every class and attribute (mypy's stubtest imports the module and compares)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_core_stubs_match_the_extension():
    pytest.importorskip("mypy.stubtest", reason="mypy is a dev extra: pip install -e .[dev]")
    proc = subprocess.run([sys.executable, "-m", "mypy.stubtest", "commaware._core"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
