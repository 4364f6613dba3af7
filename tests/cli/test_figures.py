"""Figures the README and the docs quote come from results the repository keeps (issue 40,
item 2): a figure followed by ``<!-- figure: FILE KEY FORMAT -->`` must be, as printed, the
value at KEY (dot-separated; list indices as numbers) of ``benches/recorded/FILE``, a result
``benches/record.py`` (or a benchmark's ``--save``) wrote with the commit it ran on and when,
formatted by FORMAT: a Python format spec (``d``, ``.3f``, ``,``), or ``sciN`` for N decimals in
scientific notation written as the docs write it (``3.8e-7``); either may follow a division,
``SPEC/DIVISOR`` (``.1f/1e9`` prints bytes as GB, ``.2f/1048576`` as MiB). The figure must stand
in the 160 characters before its marker, so a stale figure, or a result file that changed,
fails here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "benches" / "recorded"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"<!-- figure: (\S+) (\S+) (\S+) -->")
REACH = 160


def shown(value, fmt: str) -> str:
    if "/" in fmt:
        fmt, divisor = fmt.rsplit("/", 1)
        value = value / float(divisor)
    if fmt.startswith("sci"):
        mantissa, exponent = f"{value:.{int(fmt[3:])}e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    return format(value, fmt)


def value_at(doc, key: str):
    for part in key.split("."):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def stale(text: str, where: str) -> tuple[int, list[str]]:
    """How many markers `text` has, and what is wrong with each that does not hold."""
    count, problems = 0, []
    for m in MARKER.finditer(text):
        count += 1
        name, key, fmt = m.groups()
        line = text.count("\n", 0, m.start()) + 1
        path = RECORDED / name
        if not path.is_file():
            problems.append(f"{where}:{line}: no recorded result {name}")
            continue
        try:
            figure = shown(value_at(json.loads(path.read_text()), key), fmt)
        except (KeyError, IndexError, ValueError, TypeError, ZeroDivisionError) as e:
            problems.append(f"{where}:{line}: {name} {key} ({fmt}): {e!r}")
            continue
        if figure not in text[max(0, m.start() - REACH):m.start()]:
            problems.append(f"{where}:{line}: the figure before the marker is not {figure} ({name} {key})")
    return count, problems


def test_every_marked_figure_is_its_recorded_value():
    total, problems = 0, []
    for page in PAGES:
        count, bad = stale(page.read_text(), page.relative_to(ROOT).as_posix())
        total += count
        problems += bad
    assert not problems, "\n".join(problems)
    assert total >= 6  # the markers this test was written with


def test_recorded_results_say_which_commit_and_when():
    files = sorted(RECORDED.glob("*.json"))
    assert files
    for path in files:
        doc = json.loads(path.read_text())
        assert re.fullmatch(r"[0-9a-f]{40}", doc.get("commit", "")), path.name
        assert re.match(r"\d{4}-\d\d-\d\dT", doc.get("started", "")), path.name


@pytest.mark.parametrize("page, problem", [
    ("54 of them <!-- figure: X.json summary.rows d -->", "no recorded result X.json"),
    ("largest 3.9e-7 <!-- figure: {f} summary.largest_relative_difference sci1 -->", "is not 3.8e-7"),
    ("all 53 <!-- figure: {f} summary.within_tolerance d -->", "is not 54"),
    ("x <!-- figure: {f} summary.nothing d -->", "KeyError"),
    ("x <!-- figure: {f} summary.rows d/0 -->", "ZeroDivisionError"),
])
def test_a_stale_or_unsourced_figure_is_found(page, problem):
    name = "smpi-defaults-S.json"
    count, problems = stale(page.format(f=name), "page")
    assert count == 1 and len(problems) == 1 and problem in problems[0], problems


def test_a_figure_can_be_shown_in_larger_units():
    assert shown(7_130_000_000, ".2f/1e9") == "7.13"
    assert shown(26_214_400, ".0f/1048576") == "25"
    assert shown(3.8e-7 * 1e3, "sci1/1e3") == "3.8e-7"
