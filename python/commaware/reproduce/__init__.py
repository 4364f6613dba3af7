"""Reproductions of the papers' figures and tables.

Each paper module registers checks with :func:`check`; a check returns one or more
:class:`Check` rows that print the paper's value beside ours with the tolerance.

Every row has a ``status``:

* ``pass``: ours agrees with the paper (within the tolerance, or the claim holds);
* ``fail``: ours disagrees and our code is suspect; ``commaware reproduce`` exits 1;
* ``not_reproduced``: a faithful implementation, on the inputs stated in the row, does not give
  the paper's claim; the row's ``note`` says what was assumed, what was tried and the likely
  cause. It does not change the exit code. A row is only labelled so after that analysis.

The package: `runner` runs the checks (its API is re-exported here), one module per paper
(`paper000` ... `paper004`) registers them, and `html_report` writes ``commaware reproduce --out``.
"""

from .runner import (FAIL, NOT_REPRODUCED, PAPERS, PASS, STATUSES, Check, Job, Progress, check, counts, exit_code,
                     jobs, plot, quick, registered, report, run, save_figure)

__all__ = ["FAIL", "NOT_REPRODUCED", "PAPERS", "PASS", "STATUSES", "Check", "Job", "Progress", "check", "counts",
           "exit_code", "jobs", "plot", "quick", "registered", "report", "run", "save_figure"]
