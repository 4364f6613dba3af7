"""`commaware reproduce`: run the papers' reproduction checks, and write their report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from .common import Progress, Table, err, fail, failing, out


class ReproduceProgress(Progress):
    """`reproduce`'s progress on stderr (the commands' `Progress`): which check runs (k of n) and
    how far it is. `commaware.reproduce.run` calls `start` for each check, and a long check
    reports its own work through `advance`."""

    def start(self, index: int, count: int, job: Any) -> None:
        self.stage(f"[{index + 1}/{count}] {job.paper} {job.label}")

    def advance(self, done: int, total: int, detail: str) -> None:
        self.update(done, total, detail)


STATUS_STYLE = {"pass": "[green]pass[/]", "fail": "[red]FAIL[/]", "not_reproduced": "[yellow]not reproduced[/]"}


def check_table(checks: list[Any]) -> Any:
    """The rows as a rich table: the short columns (paper, tolerance, kind, status) never wrap;
    the text and the values wrap, a value with no space (a schedule, a list) folding over lines,
    so nothing is cut, at any width."""
    table = Table(header_style="bold")
    for col, least, most in (("paper", 5, 5), ("figure or table", 8, 22), ("claim", 12, 40), ("paper value", 8, 24),
                             ("ours", 8, 24), ("tol", 5, 6), ("kind", 12, 12), ("status", 15, 16)):
        table.add_column(col, min_width=least, max_width=most, no_wrap=col in ("paper", "tol", "kind", "status"))
    for c in checks:
        table.add_row(c.paper, c.figure, c.name, str(c.paper_value), str(c.ours), str(c.tolerance), c.kind,
                      STATUS_STYLE[c.status] + ("*" if c.paper_inconsistent else ""))
    return table


@click.command("reproduce")
@click.argument("paper")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Write DIR/report.html (self-contained: every figure and table), checks.json and figures/.")
@click.option("--quick", is_flag=True, help="Smaller samples where a check samples (paper 003: 20 random "
              "configurations per point instead of 100, paper 002: 10 seeds instead of 20); "
              "wider intervals, so an ordering "
              "claim a full run decides may stay not_reproduced.")
@click.option("--force", is_flag=True, help="Replace --out DIR if it exists and is not empty.")
@click.option("--json", "as_json", is_flag=True, help='Print {"checks": [...], "counts": {kind: {status: n}}}, '
              "each row with its kind, status and note.")
@click.option("--plots", type=click.Path(file_okay=False), default=None,
              help="Also write the papers' figures into DIR (without the report).")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr (a bar on a terminal, else a line every 10 s).")
def reproduce_cmd(paper: str, out_dir: str | None, quick: bool, force: bool, as_json: bool, plots: str | None,
                  quiet: bool) -> None:
    """Run the reproduction checks of PAPER (000-004) or all.

    Each check's status is pass, fail (ours disagrees beyond the tolerance, or beyond seed noise) or
    not_reproduced (a faithful implementation does not give the paper's claim; the note says
    what was assumed, what was tried and the likely cause). Exit 1 only if a check fails.
    Each row's kind says what evidence it is: reproduction (the headline count), in_sample
    (fitted or chosen on the value it checks), arithmetic (the paper's own numbers recomputed)
    or self_check (our code against our code).

    \b
      commaware reproduce all --quick --out report    # report/report.html
      commaware reproduce 004 --json
    """
    from ..reproduce import html_report, runner

    if paper != "all" and paper not in runner.PAPERS:
        fail(f"unknown paper `{paper}` (known: {', '.join(runner.PAPERS)}, all)")
    papers = list(runner.PAPERS) if paper == "all" else [paper]
    if out_dir is not None:
        try:
            html_report.check_out_dir(Path(out_dir), force)
        except html_report.ReportError as exc:
            fail(str(exc))

    written: Path | None = None
    try:
        with failing(), ReproduceProgress("reproduce", quiet=quiet, plain=as_json) as progress:
            checks = runner.run(papers, progress=progress, quick=quick)
            if plots:
                figures = runner.plot(papers, Path(plots), progress=progress, quick=quick)
                err.print(f"wrote {len(figures)} plot(s) into {plots}")
            if out_dir is not None:
                written = html_report.write(papers, checks, out_dir, force=force, quick=quick, progress=progress)
    except (html_report.ReportError, OSError) as exc:
        fail(f"{out_dir or plots}: cannot write the report: {exc}")
    if as_json:
        click.echo(json.dumps(runner.document(checks), indent=2))
    elif not checks:
        out.print(f"no reproduction checks are registered yet for: {', '.join(papers)}")
    else:
        out.print(check_table(checks))
        if any(c.paper_inconsistent for c in checks):
            out.print("* paper_inconsistent: the paper contradicts itself; the row asserts the paper's own formula "
                      "(counted apart below)", soft_wrap=True)
        out.print(runner.summary(checks) + " --json shows each check's note.", highlight=False, soft_wrap=True)
    if written is not None:
        err.print(f"report: {written} (open it in a browser; self-contained)", highlight=False)
    sys.exit(runner.exit_code(checks))
