"""Reproductions of the papers' figures and tables.

Each paper module registers checks with :func:`check`; a check returns one or more
:class:`Check` rows that print the paper's value beside ours with the tolerance.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable

PAPERS = {
    "000": "Interference-aware scheduling (Kreaseck et al.)",
    "001": "Pipelined tiling with overlap (Koziris et al.)",
    "002": "Coscheduling in clusters (Choi et al.)",
    "003": "Multiple multicast on heterogeneous NOWs (Wu et al.)",
    "004": "Predictive models for bandwidth sharing (Vienne et al.)",
}


@dataclass
class Check:
    paper: str
    name: str
    paper_value: float | str | None
    ours: float | str | None
    tolerance: float | None
    passed: bool
    note: str = ""
    paper_inconsistent: bool = False
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["pass"] = d.pop("passed")
        if not self.paper_inconsistent:
            d.pop("paper_inconsistent")
        if not self.extra:
            d.pop("extra")
        return d


_REGISTRY: dict[str, list[Callable[[], Iterable[Check]]]] = {p: [] for p in PAPERS}


def check(paper: str) -> Callable:
    """Decorator: register a function returning Check rows for `paper`."""

    def register(fn: Callable[[], Iterable[Check]]) -> Callable[[], Iterable[Check]]:
        _REGISTRY[paper].append(fn)
        return fn

    return register


def _load_modules() -> None:
    for paper in PAPERS:
        try:
            importlib.import_module(f"commaware.reproductions.paper{paper}")
        except ModuleNotFoundError as exc:
            if exc.name != f"commaware.reproductions.paper{paper}":
                raise


def run(papers: list[str], track: Callable[[list, str], Iterable] | None = None) -> list[Check]:
    """Run the checks of `papers`; `track(items, description)` may wrap the loop (a progress bar)."""
    _load_modules()
    jobs = [(p, fn) for p in papers for fn in _REGISTRY[p]]
    rows: list[Check] = []
    for _, fn in (track(jobs, "reproducing") if track else jobs):
        rows.extend(fn())
    return rows


def registered(paper: str) -> int:
    _load_modules()
    return len(_REGISTRY[paper])


def plot(papers: list[str], outdir: Path) -> list[Path]:
    """Write the figures of the papers whose module has `plot(outdir)`; returns the files."""
    _load_modules()
    outdir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for p in papers:
        module = sys.modules.get(f"commaware.reproductions.paper{p}")
        if module is not None and hasattr(module, "plot"):
            written.extend(module.plot(outdir))
    return written
