"""Gantt charts of replays: ranks against time, one colour per kind of stretch.

Up to :data:`MAX_BAR_RANKS` ranks (and :data:`MAX_BAR_INTERVALS` intervals) each rank gets
its own row of bars. Above that one bar per rank is unreadable (1,024 ranks made a
1000x30880 px image), so the chart becomes a heat map of fixed size: ranks grouped into at
most :data:`HEATMAP_ROWS` rows, time cut into :data:`HEATMAP_BINS` bins, and each cell
coloured by the share of its rank-time spent in each state (white where the ranks were idle
or finished).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from .api import Result

COLOURS = {
    "compute": "#1f77b4",
    "comm": "#ff7f0e",
    "wait": "#c7c7c7",
    "sleep": "#2ca02c",
    "overhead": "#9467bd",
}
LABELS = {
    "compute": "compute",
    "comm": "communication (data moving)",
    "wait": "waiting for a partner",
    "sleep": "sleep",
    "overhead": "message overhead (send/receive CPU time)",
}

#: Above this many ranks, or intervals, the chart is a heat map instead of one bar row per rank.
MAX_BAR_RANKS = 64
MAX_BAR_INTERVALS = 200_000
#: The heat map's rows (groups of consecutive ranks) and time bins.
HEATMAP_ROWS = 64
HEATMAP_BINS = 400


def write_gantt(result: Result, path: str | Path, title: str = "") -> None:
    """Draw `result`'s timeline to an .svg or .png file (written atomically, mode 0666 & ~umask
    like any new file)."""
    path = Path(path)
    if path.suffix.lower() not in (".svg", ".png"):
        raise ValueError(f"{path}: the Gantt chart must be .svg or .png")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tl = result.timeline
    n_ranks = len(result.ranks)
    title = title or f"makespan {result.makespan:.6g} s"
    if n_ranks > MAX_BAR_RANKS or len(tl) > MAX_BAR_INTERVALS:
        fig = _heatmap_figure(plt, tl, n_ranks, result.makespan)
        title += f"\n{n_ranks} ranks; colour: share of each state in the cell's rank-time"
    else:
        fig = _bars_figure(plt, tl, n_ranks)
    fig.axes[0].set_title(title, fontsize="medium")
    fig.tight_layout()
    try:
        save_atomically(fig, path)
    finally:
        plt.close(fig)


def save_atomically(fig: Any, path: Path) -> None:
    """Save through a temporary file beside `path`, created as open() creates files (mode
    0666 & ~umask; tempfile.mkstemp would make it 0600), then renamed over `path`."""
    from .output import put_in_place

    folder = path.parent if str(path.parent) else Path(".")
    tmp = folder / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            fig.savefig(handle, format=path.suffix.lower()[1:], bbox_inches="tight")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    put_in_place(tmp, path)


def _legend(ax: Any, handles: list, labels: list) -> None:
    unique = dict(zip(labels, handles))
    if unique:
        # Right of the axes: below them it would cover the time axis's label on short charts.
        ax.legend(unique.values(), unique.keys(), loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  fontsize="small", frameon=False)


def _bars_figure(plt: Any, tl: Any, n_ranks: int) -> Any:
    """One row of bars per rank."""
    fig, ax = plt.subplots(figsize=(10, 1.6 + 0.3 * n_ranks))
    kinds = tl["kind"].astype(str)
    for kind, colour in COLOURS.items():
        rows = tl[kinds == kind]
        for rank, group in rows.groupby("rank"):
            spans = list(zip(group["start"], group["end"] - group["start"]))
            ax.broken_barh(spans, (rank - 0.4, 0.8), facecolors=colour, label=LABELS[kind])
    _legend(ax, *ax.get_legend_handles_labels())
    ax.set_xlabel("time (s)")
    ax.set_ylabel("rank")
    ax.set_ylim(-0.6, n_ranks - 0.4)
    ax.invert_yaxis()
    return fig


def state_time(rank: np.ndarray, kind: np.ndarray, start: np.ndarray, end: np.ndarray, n_ranks: int,
               n_kinds: int, horizon: float, rows: int = HEATMAP_ROWS, bins: int = HEATMAP_BINS) -> np.ndarray:
    """Seconds spent in each state per (state, row of ranks, time bin), vectorised.

    Rank r belongs to row r * rows // n_ranks; time bin b covers [b, b + 1) * horizon / bins.
    An interval adds its overlap with each bin it crosses: the partial first and last bins
    directly, the full bins between them through a difference array summed along time (no
    loop over intervals, so millions of them cost a few numpy passes)."""
    import numpy as np

    rows = max(1, min(rows, n_ranks))
    width = horizon / bins if horizon > 0 else 1.0
    out = np.zeros((n_kinds, rows, bins + 1))
    full = np.zeros((n_kinds, rows, bins + 1))
    start = np.clip(np.asarray(start, dtype=float), 0.0, bins * width)
    end = np.clip(np.asarray(end, dtype=float), start, bins * width)
    row = (np.asarray(rank, dtype=np.int64) * rows) // max(n_ranks, 1)
    kind = np.asarray(kind, dtype=np.int64)
    b0 = np.minimum((start // width).astype(np.int64), bins - 1)
    b1 = np.minimum((end // width).astype(np.int64), bins - 1)
    b1 = np.maximum(b1, b0)
    same = b0 == b1
    # an interval inside one bin
    np.add.at(out, (kind[same], row[same], b0[same]), end[same] - start[same])
    # across bins: the tail of the first, the head of the last, the full bins between
    k, r, f, l, s, e = kind[~same], row[~same], b0[~same], b1[~same], start[~same], end[~same]
    np.add.at(out, (k, r, f), np.clip((f + 1) * width - s, 0.0, width))
    np.add.at(out, (k, r, l), np.clip(e - l * width, 0.0, width))
    np.add.at(full, (k, r, f + 1), width)
    np.add.at(full, (k, r, l), -width)
    out += np.cumsum(full, axis=2)
    return out[:, :, :bins]


def _heatmap_figure(plt: Any, tl: Any, n_ranks: int, makespan: float) -> Any:
    """Ranks grouped into rows x time bins; colour = the mix of states, weighted by time."""
    import numpy as np
    from matplotlib.colors import to_rgb
    from matplotlib.patches import Patch

    kinds = list(COLOURS)
    codes = {k: i for i, k in enumerate(kinds)}
    kind_col = tl["kind"]
    if hasattr(kind_col, "cat"):
        lookup = np.array([codes.get(str(c), -1) for c in kind_col.cat.categories] + [-1], dtype=np.int64)
        kind = lookup[kind_col.cat.codes.to_numpy()]  # code -1 (missing) picks the trailing -1
    else:
        kind = np.array([codes.get(str(c), -1) for c in kind_col], dtype=np.int64)
    known = kind >= 0
    start = tl["start"].to_numpy(dtype=float)[known]
    end = tl["end"].to_numpy(dtype=float)[known]
    rank = tl["rank"].to_numpy()[known]
    horizon = max(float(makespan), float(end.max()) if len(end) else 0.0)
    rows = max(1, min(HEATMAP_ROWS, n_ranks))
    seconds = state_time(rank, kind[known], start, end, n_ranks, len(kinds), horizon, rows, HEATMAP_BINS)
    per_row = np.bincount((np.arange(n_ranks) * rows) // n_ranks, minlength=rows).astype(float)
    width = horizon / HEATMAP_BINS if horizon > 0 else 1.0
    share = np.clip(seconds / (per_row[None, :, None] * width), 0.0, 1.0)  # (kind, row, bin)
    colours = np.array([to_rgb(COLOURS[k]) for k in kinds])  # (kind, 3)
    busy = np.clip(share.sum(axis=0), 0.0, 1.0)
    rgb = np.einsum("krb,kc->rbc", share, colours) + (1.0 - busy)[:, :, None]
    rgb = np.clip(rgb, 0.0, 1.0)

    fig, ax = plt.subplots(figsize=(10, 6.5))
    ax.imshow(rgb, aspect="auto", interpolation="nearest", extent=(0.0, horizon or 1.0, n_ranks - 0.5, -0.5))
    ax.set_xlabel("time (s)")
    group = n_ranks / rows
    ax.set_ylabel(f"rank ({rows} rows of {group:.3g} ranks)" if group > 1 else "rank")
    totals = seconds.sum(axis=(1, 2))
    handles = [Patch(facecolor=COLOURS[k], label=f"{LABELS[k]} ({100 * totals[i] / max(totals.sum(), 1e-300):.0f}%)")
               for i, k in enumerate(kinds) if totals[i] > 0]
    handles.append(Patch(facecolor="white", edgecolor="black", label="idle or finished"))
    _legend(ax, handles, [h.get_label() for h in handles])
    return fig
