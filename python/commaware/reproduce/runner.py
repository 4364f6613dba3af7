"""Running the reproduction checks: the rows (`Check`) and their statuses, the registry the
paper modules fill with `check`, and `run` and `plot` with their progress reports."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import math
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Protocol

#: The papers by number: title (authors, venue).
PAPERS = {
    "000": "Interference-Aware Scheduling (Kreaseck, Carter, Casanova, Ferrante, Nandy)",
    "001": "A pipelined schedule to minimize completion time for loop tiling with computation and communication "
           "overlapping (Koziris, Sotiropoulos, Goumas; JPDC 2003)",
    "002": "Coscheduling in Clusters: Is It a Viable Alternative? (Choi, Kim, Ersoz, Yoo, Das; SIGMETRICS 2004)",
    "003": "Efficient Multiple Multicast on Heterogeneous Network of Workstations (Wu, Yeh, Liu)",
    "004": "Predictive models for bandwidth sharing in high performance clusters (Vienne, Martinasso, Vincent, "
           "Méhaut; Cluster 2008)",
}

PASS, FAIL, NOT_REPRODUCED = "pass", "fail", "not_reproduced"
STATUSES = (PASS, FAIL, NOT_REPRODUCED)

#: What kind of evidence a row is (docs/reproduce.md):
#: our model run on the paper's inputs against a value or claim the paper prints;
REPRODUCTION = "reproduction"
#: a parameter fitted, or a reconstruction chosen, using the value the row checks;
IN_SAMPLE = "in_sample"
#: the paper's own numbers recomputed from its own formula (no model of ours in between);
ARITHMETIC = "arithmetic"
#: our code against our code, or an identity of our formulas.
SELF_CHECK = "self_check"
KINDS = (REPRODUCTION, IN_SAMPLE, ARITHMETIC, SELF_CHECK)

#: The fewest seeds an ordering claim ("A beats B") is judged over (see :func:`ordering`).
MIN_SEEDS = 10


@dataclass
class Check:
    """One row: the paper's value beside ours.

    ``passed`` is True exactly when ``status`` is ``pass``. Give ``status`` only to label a row
    that does not pass ``not_reproduced`` (see the module docstring); by default it is ``pass``
    or ``fail`` from ``passed``."""

    paper: str
    name: str
    paper_value: float | str | None
    ours: float | str | None
    tolerance: float | None
    passed: bool
    #: One of KINDS; every row says it (there is no default).
    kind: str = ""
    note: str = ""
    paper_inconsistent: bool = False
    extra: dict = field(default_factory=dict)
    status: str = ""
    #: The figure, table or section the row belongs to: the label of the check that made it
    #: (filled in by :func:`run` when left empty).
    figure: str = ""

    def __post_init__(self) -> None:
        self.passed = bool(self.passed)
        if not self.status:
            self.status = PASS if self.passed else FAIL
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.status not in STATUSES:
            raise ValueError(f"{self.name}: status must be one of {', '.join(STATUSES)}, got {self.status!r}")
        if self.passed != (self.status == PASS):
            raise ValueError(f"{self.name}: passed={self.passed} contradicts status {self.status!r}")
        if self.status == NOT_REPRODUCED and not self.note:
            raise ValueError(f"{self.name}: a not_reproduced row needs a note (assumed, tried, likely cause)")

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"paper": self.paper, "figure": self.figure, "name": self.name, "paper_value": self.paper_value, "ours": self.ours,
             "tolerance": self.tolerance, "pass": self.status == PASS, "status": self.status, "kind": self.kind,
             "note": self.note}
        if self.paper_inconsistent:
            d["paper_inconsistent"] = True
        if self.extra:
            d["extra"] = self.extra
        return d


def counts(checks: Iterable[Check]) -> dict[str, int]:
    """How many rows have each status (every status present, in STATUSES order)."""
    n = dict.fromkeys(STATUSES, 0)
    for c in checks:
        n[c.status] += 1
    return n


def counts_by_kind(checks: Iterable[Check]) -> dict[str, dict[str, int]]:
    """Rows per kind and status (every kind and status present, in KINDS and STATUSES order),
    plus, per kind, ``paper_inconsistent``: how many of its rows carry that flag (they are also
    in their status's count)."""
    n = {kind: {**dict.fromkeys(STATUSES, 0), "paper_inconsistent": 0} for kind in KINDS}
    for c in checks:
        n[c.kind][c.status] += 1
        n[c.kind]["paper_inconsistent"] += c.paper_inconsistent
    return n


def document(checks: list[Check]) -> dict:
    """What ``--json`` prints and ``checks.json`` holds: the rows and the counts per kind."""
    return {"checks": [c.to_dict() for c in checks], "counts": counts_by_kind(checks)}


def summary(checks: list[Check]) -> str:
    """The one-line summary. The headline is the reproductions; rows flagged paper_inconsistent
    are counted apart from every kind's statuses (they assert the paper's own formula, not its
    printed value)."""
    every = counts_by_kind(checks)
    plain = counts_by_kind([c for c in checks if not c.paper_inconsistent])
    parts = []
    for kind in KINDS:
        rows, flagged, p = sum(every[kind][s] for s in STATUSES), every[kind]["paper_inconsistent"], plain[kind]
        if rows or kind == REPRODUCTION:
            apart = f"; {flagged} paper_inconsistent" if flagged else ""
            parts.append(f"{rows} {kind.replace('_', ' ')}: {p[PASS]} pass, {p[FAIL]} fail, "
                         f"{p[NOT_REPRODUCED]} not reproduced{apart}")
    return f"{len(checks)} checks. " + ". ".join(parts) + "."


@dataclass(frozen=True)
class Ordering:
    """An ordering claim judged over seeds (:func:`ordering`): the mean of the per-seed
    differences, its confidence interval (Student's t; 95 %, or simultaneous 95 % over
    `comparisons` by Bonferroni), the seeds and the status."""

    mean: float
    low: float
    high: float
    seeds: int
    status: str
    #: Sample standard deviation of the differences (to widen the interval, see :meth:`among`).
    sd: float = 0.0
    #: How many comparisons the claim this one belongs to makes (1: it stands alone).
    comparisons: int = 1

    def among(self, comparisons: int) -> "Ordering":
        """The same comparison judged as one of `comparisons` that make up one claim: its interval
        at level 1 − 0.05/comparisons (Bonferroni), so that the claim as a whole is held at 95 %."""
        return _judge(self.mean, self.sd, self.seeds, comparisons)

    def describe(self, unit: str = "") -> str:
        """``mean +4.1 % (95 % CI +2.0 % to +6.2 %) over 10 seeds``, numbers from the run."""
        level = "95 % CI" if self.comparisons == 1 else f"simultaneous 95 % CI of {self.comparisons}"
        return (f"mean {self.mean:+.4g}{unit} ({level} {self.low:+.4g}{unit} to {self.high:+.4g}{unit}) "
                f"over {self.seeds} seeds")

    def extra(self) -> dict:
        return {"mean_difference": self.mean, "ci95_low": self.low, "ci95_high": self.high, "seeds": self.seeds,
                "comparisons": self.comparisons}


@functools.lru_cache(maxsize=None)
def _t_quantile(seeds: int, comparisons: int) -> float:
    from scipy import stats  # type: ignore[import-untyped]

    return float(stats.t.ppf(1 - 0.025 / comparisons, seeds - 1))


def _judge(mean: float, sd: float, seeds: int, comparisons: int) -> Ordering:
    if comparisons < 1:
        raise ValueError(f"comparisons must be at least 1, got {comparisons}")
    half = _t_quantile(seeds, comparisons) * sd / math.sqrt(seeds)
    low, high = mean - half, mean + half
    status = PASS if low > 0 else FAIL if high < 0 else NOT_REPRODUCED
    return Ordering(mean, low, high, seeds, status, sd, comparisons)


def ordering(differences: Iterable[float], comparisons: int = 1) -> Ordering:
    """Judge a claim "A beats B" from one difference per seed, each positive where the claim
    holds on that seed (e.g. B's time minus A's). The same rule for every such row (docs/
    reproduce.md): ``pass`` when the 95 % confidence interval of the mean lies above 0, ``fail``
    when it lies below, ``not_reproduced`` when it contains 0. Needs at least MIN_SEEDS seeds.

    A claim made of several comparisons (one per point of a figure, or one per rival) gives each
    the number of `comparisons` (or calls :meth:`Ordering.among`): each interval is then at
    1 − 0.05/comparisons, so that 95 % holds for the claim as a whole and a claim of many
    comparisons does not fail by chance where the true difference is 0."""
    d = [float(x) for x in differences]
    if len(d) < MIN_SEEDS:
        raise ValueError(f"an ordering claim needs at least {MIN_SEEDS} seeds, got {len(d)}")
    return _judge(statistics.fmean(d), statistics.stdev(d), len(d), comparisons)


def exit_code(checks: Iterable[Check]) -> int:
    """1 when any row fails, else 0 (``not_reproduced`` rows do not fail the run)."""
    return 1 if any(c.status == FAIL for c in checks) else 0


# --- registry --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """A registered check function of a paper; `label` is what the progress display shows."""

    paper: str
    label: str
    fn: Callable[[], Iterable[Check]]


_REGISTRY: dict[str, list[Job]] = {p: [] for p in PAPERS}


def check(paper: str, label: str | None = None) -> Callable:
    """Decorator: register a function returning Check rows for `paper`.

    `label` (default: the first line of the function's docstring, else its name) names the
    check in the progress display of ``commaware reproduce``."""

    def register(fn: Callable[[], Iterable[Check]]) -> Callable[[], Iterable[Check]]:
        doc = (fn.__doc__ or "").strip().splitlines()
        _REGISTRY[paper].append(Job(paper, label or (doc[0].rstrip(".") if doc else fn.__name__), fn))
        return fn

    return register


def _load_modules() -> None:
    for paper in PAPERS:
        try:
            importlib.import_module(f"commaware.reproduce.paper{paper}")
        except ModuleNotFoundError as exc:
            if exc.name != f"commaware.reproduce.paper{paper}":
                raise


def jobs(papers: list[str]) -> list[Job]:
    """The registered checks of `papers`, in the order they run."""
    _load_modules()
    return [job for p in papers for job in _REGISTRY[p]]


# --- progress --------------------------------------------------------------------------------


class Progress(Protocol):
    """What :func:`run` reports to (the CLI draws it with rich)."""

    def start(self, index: int, count: int, job: Job) -> None:
        """Check `index` (0-based) of `count` starts."""

    def advance(self, done: int, total: int, detail: str) -> None:
        """Inside the running check: `done` of `total` units of work finished."""


_PROGRESS: contextvars.ContextVar[Progress | None] = contextvars.ContextVar("commaware_reproduce_progress",
                                                                           default=None)
_QUICK: contextvars.ContextVar[bool] = contextvars.ContextVar("commaware_reproduce_quick", default=False)


def quick() -> bool:
    """True inside ``run(..., quick=True)``: a check with a sample size of its own choosing (random
    configurations, seeds) takes the smaller one its paper module documents for ``--quick``."""
    return _QUICK.get()


def report(done: int, total: int, detail: str = "") -> None:
    """Called by a long check (in the thread that runs it) to report its own progress; a no-op
    unless :func:`run` was given a `progress`."""
    progress = _PROGRESS.get()
    if progress is not None:
        progress.advance(done, total, detail)


@contextlib.contextmanager
def _reporting(progress: Progress | None, quick_mode: bool) -> Iterator[None]:
    tokens = _PROGRESS.set(progress), _QUICK.set(quick_mode)
    try:
        yield
    finally:
        _PROGRESS.reset(tokens[0])
        _QUICK.reset(tokens[1])


def run(papers: list[str], progress: Progress | None = None, quick: bool = False) -> list[Check]:
    """Run the checks of `papers`; `progress` hears when each check starts and how far it is.
    `quick` lets the checks that sample take their smaller documented sample (see :func:`quick`)."""
    todo = jobs(papers)
    rows: list[Check] = []
    with _reporting(progress, quick):
        for i, job in enumerate(todo):
            if progress is not None:
                progress.start(i, len(todo), job)
            for row in job.fn():
                row.figure = row.figure or job.label
                rows.append(row)
    return rows


def registered(paper: str) -> int:
    _load_modules()
    return len(_REGISTRY[paper])


def plot(papers: list[str], outdir: Path, progress: Progress | None = None, quick: bool = False) -> list[Path]:
    """Write the figures of the papers whose module has `plot(outdir)`; returns the files.

    Run after :func:`run` with the same `quick`: the modules cache what their checks simulated,
    so the figures show the same runs as the rows."""
    _load_modules()
    outdir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    plotting = [p for p in papers if hasattr(sys.modules.get(f"commaware.reproduce.paper{p}"), "plot")]
    with _reporting(progress, quick):
        for i, p in enumerate(plotting):
            if progress is not None:
                progress.start(i, len(plotting), Job(p, "figures", lambda: []))
            written.extend(sys.modules[f"commaware.reproduce.paper{p}"].plot(outdir))
    return written


def save_figure(fig: Any, path: Path) -> Path:
    """Save a paper module's matplotlib figure (laid out, no date in an SVG, so the same run
    gives the same bytes) and close it; returns `path`."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None} if path.suffix == ".svg" else None)
    plt.close(fig)
    return path
