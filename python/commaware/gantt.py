"""Gantt charts of replays: ranks against time, one colour per kind of stretch."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

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


def write_gantt(result: Result, path: str | Path, title: str = "") -> None:
    """Draw `result`'s timeline to an .svg or .png file (written atomically)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    if path.suffix.lower() not in (".svg", ".png"):
        raise ValueError(f"{path}: the Gantt chart must be .svg or .png")
    tl = result.timeline
    n_ranks = len(result.ranks)
    fig, ax = plt.subplots(figsize=(10, 1.6 + 0.3 * n_ranks))
    for kind, colour in COLOURS.items():
        rows = tl[tl["kind"] == kind]
        for rank, group in rows.groupby("rank"):
            spans = list(zip(group["start"], group["end"] - group["start"]))
            ax.broken_barh(spans, (rank - 0.4, 0.8), facecolors=colour, label=LABELS[kind])
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    if unique:
        ax.legend(unique.values(), unique.keys(), loc="upper center", bbox_to_anchor=(0.5, -0.1),
                  ncol=len(unique), fontsize="small", frameon=False)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("rank")
    ax.set_ylim(-0.6, n_ranks - 0.4)
    ax.invert_yaxis()
    ax.set_title(title or f"makespan {result.makespan:.6g} s")
    fig.tight_layout()
    fd, tmp = tempfile.mkstemp(suffix=path.suffix, dir=path.parent if str(path.parent) else ".")
    os.close(fd)
    try:
        fig.savefig(tmp)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)
