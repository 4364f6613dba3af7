"""`commaware trace show`: the text summary of a trace and the drawing of its rank-to-rank
communication matrix. The counting is the core's (`commaware.api.summarize_trace`); this
module only lays it out.

The matrix is a heat map of point-to-point bytes, sender rows by receiver columns, on a log
colour scale, at any rank count: up to :data:`MAX_CELLS` ranks one cell per rank pair, above
that consecutive ranks are binned into blocks (the sum of each block) so the picture keeps
at most :data:`MAX_CELLS` cells a side, and the title says so.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..gantt import save_atomically

if TYPE_CHECKING:
    from ..api import CommMatrix

#: Largest number of cells per side of the drawn matrix (about one screen pixel each).
MAX_CELLS = 512


def cells_per_rank(n_ranks: int) -> int:
    """Ranks per cell (per axis) of the drawn matrix: 1 up to MAX_CELLS ranks."""
    return max(1, math.ceil(n_ranks / MAX_CELLS))


def write_matrix(matrix: CommMatrix, path: str | Path, title: str = "") -> None:
    """Draw `matrix` to an .svg or .png file (written atomically)."""
    path = Path(path)
    if path.suffix.lower() not in (".svg", ".png"):
        raise ValueError(f"{path}: the matrix must be .svg or .png")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import LogNorm

    n = matrix.n_ranks
    per = cells_per_rank(n)
    dense = matrix.dense(per)
    cells = dense.shape[0]
    shown = np.ma.masked_less_equal(dense, 0.0)
    # 150 dpi: the axes span about 700 pixels, more than MAX_CELLS.
    fig, ax = plt.subplots(figsize=(7.5, 6.2), dpi=150)
    if shown.count():
        lo, hi = float(shown.min()), float(shown.max())
        norm = LogNorm(vmin=lo, vmax=hi if hi > lo else lo * 10)
        image = ax.imshow(shown, cmap="viridis", norm=norm, interpolation="nearest", origin="upper",
                          extent=(-0.5 * per, cells * per - 0.5 * per, cells * per - 0.5 * per, -0.5 * per))
        fig.colorbar(image, ax=ax, label="bytes sent (log scale)")
    else:
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_ylim(n - 0.5, -0.5)
        ax.text(0.5, 0.5, "no point-to-point bytes", ha="center", va="center", transform=ax.transAxes)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("receiver rank")
    ax.set_ylabel("sender rank")
    ax.set_facecolor("white")
    heading = title or "point-to-point bytes"
    if per > 1:
        heading += f"\n{n} ranks binned {per} per cell ({cells} x {cells} cells): each cell sums its block"
    else:
        heading += f"\n{n} ranks; white: no bytes"
    ax.set_title(heading, fontsize="medium")
    fig.tight_layout()
    try:
        save_atomically(fig, path)
    finally:
        plt.close(fig)


def _bytes(value: float) -> str:
    """A byte count for people: 1.5 MiB, 12 B."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.4g} {unit}"
    return f"{value:.6g} B"


def text_lines(summary: dict[str, Any], source: str) -> list[str]:
    """The summary as lines of text (per-rank rows cut to the busiest when there are many)."""
    p2p = summary["point_to_point"]
    lines = [f"{source}: {summary['ranks']} ranks, {summary['ops']} ops"]
    kinds = sorted(summary["ops_per_kind"].items(), key=lambda kv: (-kv[1], kv[0]))
    lines.append("ops per kind: " + ", ".join(f"{k} {v}" for k, v in kinds))
    comp = summary["computation"]
    parts = []
    if comp["flops"]:
        parts.append(f"{comp['flops']:.6g} flops")
    if comp["compute_seconds"]:
        parts.append(f"{comp['compute_seconds']:.6g} s of compute")
    if comp["sleep_seconds"]:
        parts.append(f"{comp['sleep_seconds']:.6g} s of sleep")
    if parts:
        lines.append("computation: " + ", ".join(parts))
    lines.append(f"point-to-point: {p2p['messages']} messages, {p2p['bytes']:.17g} bytes ({_bytes(p2p['bytes'])})"
                 + (f"; {p2p['any_source_receives']} receives from any source" if p2p["any_source_receives"] else "")
                 + (f"; {p2p['any_tag_receives']} for any tag" if p2p["any_tag_receives"] else ""))
    if summary["collectives"]:
        lines.append("collectives (bytes as the calls state them, MPI's counts):")
        for name, c in summary["collectives"].items():
            lines.append(f"  {name:<15} {c['calls']:>9} calls {c['ops']:>10} ops {c['bytes']:>22.17g} bytes ({_bytes(c['bytes'])})")
    per = summary["per_rank"]
    ranks = list(range(summary["ranks"]))
    shown = ranks
    limit = 32
    if len(ranks) > limit:
        shown = sorted(sorted(ranks, key=lambda r: -per["sent_bytes"][r])[:limit])
    lines.append("per rank (point-to-point)" + (f", the {limit} ranks sending most bytes:" if shown is not ranks else ":"))
    lines.append(f"  {'rank':>7} {'ops':>10} {'messages sent':>14} {'bytes sent':>22} {'bytes received':>22}")
    for r in shown:
        lines.append(f"  {r:>7} {per['ops'][r]:>10} {per['sent_messages'][r]:>14} {per['sent_bytes'][r]:>22.17g} "
                     f"{per['received_bytes'][r]:>22.17g}")
    if summary["derived_datatype_ops"]:
        lines.append(f"derived datatypes (id -1): {summary['derived_datatype_ops']} ops")
    return lines
