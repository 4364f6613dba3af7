"""Reproductions of the papers' figures and tables.

Each paper module registers checks with :func:`check`; a check returns one or more
:class:`Check` rows that print the paper's value beside ours with the tolerance.

Every row has a ``status``:

* ``pass``: ours agrees with the paper (within the tolerance, or the claim holds);
* ``fail``: ours disagrees (beyond the tolerance, or an ordering claim whose interval lies on
  the other side; our code or the paper's setup is then in question); ``commaware reproduce`` exits 1;
* ``not_reproduced``: a faithful implementation, on the inputs stated in the row, does not give
  the paper's claim; the row's ``note`` says what was assumed, what was tried and the likely
  cause. It does not change the exit code. A row is only labelled so after that analysis.

Every row also has a ``kind``: ``reproduction`` (our model on the paper's inputs against a
value or claim the paper prints), ``in_sample`` (a parameter fitted, or a reconstruction chosen,
using the checked value), ``arithmetic`` (the paper's own numbers recomputed) or ``self_check``
(our code against our code, or an identity). The headline counts are of reproductions. A claim
that one policy or algorithm beats another is judged by :func:`ordering` over at least
``MIN_SEEDS`` seeds.

The package: `runner` runs the checks (its API is re-exported here), one module per paper
(`paper000` ... `paper004`) registers them, and `html_report` writes ``commaware reproduce --out``.
"""

from .runner import (ARITHMETIC, FAIL, IN_SAMPLE, KINDS, MIN_SEEDS, NOT_REPRODUCED, PAPERS, PASS, REPRODUCTION,
                     SELF_CHECK, STATUSES, Check, Job, Ordering, Progress, check, counts, counts_by_kind, document,
                     exit_code, jobs, ordering, plot, quick, registered, report, run, save_figure, summary)

__all__ = ["ARITHMETIC", "FAIL", "IN_SAMPLE", "KINDS", "MIN_SEEDS", "NOT_REPRODUCED", "PAPERS", "PASS",
           "REPRODUCTION", "SELF_CHECK", "STATUSES", "Check", "Job", "Ordering", "Progress", "check", "counts",
           "counts_by_kind", "document", "exit_code", "jobs", "ordering", "plot", "quick", "registered", "report", "run",
           "save_figure", "summary"]
