"""Every reproduction row's outcome is pinned (issue 40, item 1): `outcomes.json` beside this
file holds each row's paper, name, kind and status as `commaware reproduce all --quick` gives
them ("quick"), and the rows whose outcome differs in a full run, where papers 002 and 003
sample more ("full"). These tests fail on any difference, listing the rows that moved. A change
of outcome is then a deliberate edit of that file, with its reason in the commit message:

    python tests/reproduce/test_pinned_outcomes.py QUICK_DIR/checks.json FULL_DIR/checks.json

rewrites the file (`commaware reproduce all [--quick] --out DIR` writes checks.json). The full
run takes minutes: tests/conftest.py starts it in the background when the session collects
`test_full_mode_outcomes`, and runs that test last. The rows' own tests in test_paper*.py
check how each status follows from its numbers; these check the outcomes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

PINNED = Path(__file__).with_name("outcomes.json")


def pinned(mode: str) -> dict[str, dict[str, str]]:
    """The pinned outcomes of `mode` ("quick" or "full": the quick ones, with the full run's
    differences)."""
    doc = json.loads(PINNED.read_text())
    return {**doc["quick"], **doc["full"]} if mode == "full" else doc["quick"]


def pinned_status(paper: str, name: str) -> str:
    """The pinned status of one row (quick mode: where a paper's checks do not sample, full
    mode gives the same rows)."""
    return json.loads(PINNED.read_text())["quick"][f"{paper}/{name}"]["status"]


def outcomes(doc: dict) -> dict[str, dict[str, str]]:
    """`paper/name` -> {kind, status} of the rows of a `reproduce --json` document."""
    rows: dict[str, dict[str, str]] = {}
    for r in doc["checks"]:
        key = f"{r['paper']}/{r['name']}"
        assert key not in rows, f"two rows named {key!r}: a pinned outcome needs a unique name"
        rows[key] = {"kind": r["kind"], "status": r["status"]}
    return rows


def moved(pinned: dict[str, dict[str, str]], now: dict[str, dict[str, str]]) -> list[str]:
    """One line per row whose outcome differs: added, gone, or kind/status changed."""
    lines = []
    for key in sorted(pinned.keys() | now.keys()):
        was, is_ = pinned.get(key), now.get(key)
        if was == is_:
            continue
        if was is None:
            lines.append(f"new row   {key}: {is_['kind']} {is_['status']}")
        elif is_ is None:
            lines.append(f"row gone  {key}: was {was['kind']} {was['status']}")
        else:
            lines.append(f"moved     {key}: {was['kind']} {was['status']} -> {is_['kind']} {is_['status']}")
    return lines


def test_every_rows_outcome_is_the_pinned_one(quick_report):
    assert quick_report.returncode in (0, 1), quick_report.stderr[-2000:]
    changes = moved(pinned("quick"), outcomes(quick_report.doc))
    assert not changes, ("reproduction outcomes moved; if deliberate, rewrite "
                         f"{PINNED.name} and say why in the commit:\n" + "\n".join(changes))


def test_full_mode_outcomes(full_report):
    """The full run's outcomes (exit 1: it has rows that fail, pinned as such)."""
    code, stdout, stderr = full_report
    assert code in (0, 1), stderr[-2000:]
    changes = moved(pinned("full"), outcomes(json.loads(stdout)))
    assert not changes, ("full-mode reproduction outcomes moved; if deliberate, rewrite "
                         f"{PINNED.name} and say why in the commit:\n" + "\n".join(changes))
    assert json.loads(PINNED.read_text())["full"], "the full run differs from the quick one on some rows"


def test_the_comparison_sees_every_kind_of_move():
    pinned = {"003/a": {"kind": "reproduction", "status": "pass"}, "003/b": {"kind": "self_check", "status": "pass"}}
    now = {"003/a": {"kind": "reproduction", "status": "not_reproduced"}, "003/c": {"kind": "arithmetic", "status": "pass"}}
    assert moved(pinned, now) == ["moved     003/a: reproduction pass -> reproduction not_reproduced",
                                  "row gone  003/b: was self_check pass", "new row   003/c: arithmetic pass"]
    assert moved(pinned, pinned) == []


if __name__ == "__main__":  # rewrite the pinned file from the quick and the full checks.json
    quick = outcomes(json.loads(Path(sys.argv[1]).read_text()))
    full = outcomes(json.loads(Path(sys.argv[2]).read_text()))
    assert full.keys() == quick.keys(), "the quick and full runs have different rows"
    counts = {s: sum(r["status"] == s and r["kind"] == "reproduction" for r in quick.values())
              for s in ("pass", "fail", "not_reproduced")}
    differ = {k: v for k, v in full.items() if quick[k] != v}
    PINNED.write_text(json.dumps({"about": "reproduction outcomes of `commaware reproduce all --quick`, and the rows "
                                           "a full run gives otherwise (tests/reproduce/test_pinned_outcomes.py)",
                                  "reproduction_counts": counts, "quick": quick, "full": differ},
                                 indent=1, ensure_ascii=False) + "\n")
    print(f"{PINNED}: {len(quick)} rows, reproductions {counts}; {len(differ)} differ in a full run")
