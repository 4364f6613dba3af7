"""The reproduction report: one self-contained HTML file with every check and every figure.

``commaware reproduce all --out DIR`` writes into DIR:

* ``report.html``: the summary (rows per paper, kind and status), the figures (embedded as data URIs,
  so the file needs no network and no other file to be viewed) and one table per paper with the
  paper's value beside ours, the tolerance, the kind, the status and the note;
* ``checks.json``: the rows, as ``commaware reproduce --json`` prints them;
* ``figures/``: the same figures as separate files.

DIR is built under a temporary name next to it and renamed when complete, so an interrupted run
leaves no half-written report.
"""

from __future__ import annotations

import base64
import html
import json
import os
import shutil
from pathlib import Path
from typing import Iterable

from .. import __version__
from ..output import at_once, on_delivery, remove_path
from . import runner
from .runner import Check

#: How a figure file is embedded, by suffix.
MIME = {".svg": "image/svg+xml", ".png": "image/png"}

STATUS_CLASS = {"pass": "pass", "fail": "fail", "not_reproduced": "nr"}
STATUS_TEXT = {"pass": "pass", "fail": "FAIL", "not_reproduced": "not reproduced"}

#: Values longer than this (characters) are shown cut, with the whole value on hover.
LONG_VALUE = 160
#: The columns of a paper's check table and their share of the page's width (the table is
#: laid out fixed, so no value can widen it past the page).
COLUMNS = (("figure or table", 13), ("claim", 24), ("paper value", 13), ("ours", 13), ("tolerance", 7),
           ("kind", 8), ("status", 9), ("note", 13))

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1400px; padding: 0 1em; color: #222;
       box-sizing: border-box; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { margin-top: 1.5em; }
table { border-collapse: collapse; font-size: 0.85em; width: 100%; table-layout: fixed; }
th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { background: #f3f3f3; }
td.num { text-align: right; }
span.cut { text-decoration: underline dotted; cursor: help; }
.pass { color: #1a7f37; font-weight: 600; } .fail { color: #cf222e; font-weight: 700; }
.nr { color: #9a6700; font-weight: 600; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
details summary { cursor: pointer; color: #555; }
.note { font-size: 0.9em; color: #444; max-width: 60em; }
"""


class ReportError(Exception):
    """The output directory cannot be used (exists and is not empty without ``force``)."""


def check_out_dir(out: Path, force: bool) -> None:
    """Refuse an output directory that exists and is not empty, unless `force`; refuse a file."""
    if out.exists() and not out.is_dir():
        raise ReportError(f"{out}: --out must be a directory, and this is a file")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise ReportError(f"{out}: --out directory exists and is not empty (use --force to replace it)")


def write(papers: list[str], checks: list[Check], out: str | Path, force: bool = False, quick: bool = False,
          progress: runner.Progress | None = None) -> Path:
    """Draw the figures of `papers` and write the report of `checks` into `out`; returns the
    path of ``report.html``. Call after :func:`commaware.reproduce.run` with the same `quick`
    (the figures reuse what the checks simulated)."""
    out = Path(out)
    check_out_dir(out, force)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.with_name(f".{out.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        with at_once():  # the figures are part of the folder, which is delivered whole
            figures = runner.plot(papers, staging / "figures", progress=progress, quick=quick)
        (staging / "checks.json").write_text(json.dumps(runner.document(checks), indent=2) + "\n")
        (staging / "report.html").write_text(render(papers, checks, figures, quick=quick), encoding="utf-8")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise

    def commit() -> None:
        if out.exists():
            shutil.rmtree(out)
        os.replace(staging, out)

    on_delivery(commit, lambda: remove_path(staging))
    return out / "report.html"


def _data_uri(path: Path) -> str:
    return f"data:{MIME[path.suffix.lower()]};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "" if value is None else str(value)


def _value(value: object) -> str:
    """A value's cell as HTML: a long one (a schedule, a list) cut to LONG_VALUE characters, with
    its length, and whole in the title shown on hover; it wraps anywhere in its column."""
    text = _cell(value)
    if len(text) <= LONG_VALUE:
        return html.escape(text)
    return (f"<span class=cut title=\"{html.escape(text)}\">{html.escape(text[:LONG_VALUE - 1])}…</span> "
            f"<small>({len(text):,} characters)</small>")


def _value_cell(value: object) -> str:
    """The <td> of a value: numbers to the right, text (a schedule, a claim's wording) to the left."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return f"<td class=num>{_value(value)}</td>" if number else f"<td>{_value(value)}</td>"


def _table(rows: Iterable[Check]) -> list[str]:
    parts = ["<table class=checks><colgroup>" + "".join(f"<col style='width: {share}%'>" for _, share in COLUMNS)
             + "</colgroup><thead><tr>" + "".join(f"<th>{name}</th>" for name, _ in COLUMNS) + "</tr></thead><tbody>"]
    for c in rows:
        flag = " <em>(paper inconsistent)</em>" if c.paper_inconsistent else ""
        note = (f"<details><summary>note</summary><div class=note>{html.escape(c.note)}</div></details>"
                if c.note else "")
        parts.append(
            f"<tr class=row-{STATUS_CLASS[c.status]}><td>{html.escape(c.figure)}</td><td>{html.escape(c.name)}{flag}</td>"
            f"{_value_cell(c.paper_value)}{_value_cell(c.ours)}{_value_cell(c.tolerance)}<td>{html.escape(c.kind)}</td>"
            f"<td class={STATUS_CLASS[c.status]}>{STATUS_TEXT[c.status]}</td><td>{note}</td></tr>")
    parts.append("</tbody></table>")
    return parts


def render(papers: list[str], checks: list[Check], figures: list[Path], quick: bool = False) -> str:
    """The HTML document (a string): summary, then per paper its figures and its rows."""
    mode = "quick (smaller samples where a check samples)" if quick else "full"
    parts = ["<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
             "<title>commaware: reproduction of the papers</title>", f"<style>{STYLE}</style></head><body>",
             "<h1>commaware: reproduction of the papers</h1>",
             f"<p>commaware {html.escape(__version__)}, {mode} run. {html.escape(runner.summary(checks))}</p>",
             "<p>Kinds: <em>reproduction</em>, our model on the paper's inputs against a value or claim the paper "
             "prints (the headline); <em>in sample</em>, a parameter fitted or a reconstruction chosen using the "
             "value the row checks; <em>arithmetic</em>, the paper's own numbers recomputed; <em>self check</em>, "
             "our code against our code. A <em>not reproduced</em> row is a faithful implementation that does not "
             "give the paper's claim on the inputs its note states; <em>fail</em> means ours disagrees beyond the tolerance, or beyond seed noise for an ordering claim. "
             "<em>Paper inconsistent</em> rows assert the paper's own formula and are counted apart.</p>",
             "<h2 id=summary>Summary</h2><table class=summary><colgroup><col style='width: 5%'>"
             "<col style='width: 27%'><col style='width: 6%'>" + "<col style='width: 12%'>" * len(runner.KINDS)
             + "<col style='width: 7%'><col style='width: 7%'></colgroup>"
             "<thead><tr><th>paper</th><th>title</th><th>checks</th>"
             + "".join(f"<th>{k.replace('_', ' ')}<br>pass / fail / not reproduced</th>" for k in runner.KINDS)
             + "<th>paper inconsistent</th><th>figures</th></tr></thead><tbody>"]
    for p in papers:
        rows = [c for c in checks if c.paper == p]
        n = runner.counts_by_kind(rows)
        figs = [f for f in figures if f.name.startswith((f"paper{p}_", f"paper{p}-"))]
        cells = "".join(f"<td class=num><span class=pass>{n[k]['pass']}</span> / <span class=fail>{n[k]['fail']}</span>"
                        f" / <span class=nr>{n[k]['not_reproduced']}</span></td>" for k in runner.KINDS)
        parts.append(f"<tr><td><a href='#paper{p}'>{p}</a></td><td>{html.escape(runner.PAPERS[p])}</td>"
                     f"<td class=num>{len(rows)}</td>{cells}"
                     f"<td class=num>{sum(c.paper_inconsistent for c in rows)}</td>"
                     f"<td class=num>{len(figs)}</td></tr>")
    parts.append("</tbody></table>")
    for p in papers:
        parts.append(f"<h2 id=paper{p}>Paper {p}: {html.escape(runner.PAPERS[p])}</h2>")
        for f in (f for f in figures if f.name.startswith((f"paper{p}_", f"paper{p}-"))):
            parts.append(f"<figure><img class=plot alt='{html.escape(f.stem)}' src='{_data_uri(f)}'>"
                         f"<figcaption>{html.escape(f.name)}</figcaption></figure>")
        rows = [c for c in checks if c.paper == p]
        if rows:
            parts.append("<h3>Checks</h3>")
            parts.extend(_table(rows))
    parts.append("</body></html>\n")
    return "\n".join(parts)
