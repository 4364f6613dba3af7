"""Where is the bottleneck (issue 28): the per-link table of a replay and the plot of the most
loaded links' utilisation against time.

Both read a `Result` simulated with ``link_stats=True``; the statistics themselves are kept by
the core's engine (memory proportional to the links, not to the events).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .api import MESSAGE_FORMATS
from .output import deliver

if TYPE_CHECKING:
    from .api import Result

#: The link table's file formats (as for the message table).
LINK_FORMATS = MESSAGE_FORMATS
#: The plot's file formats.
PLOT_FORMATS = (".svg", ".png")
#: Up to this many loaded links the plot draws one line each; more make a heat map.
MAX_LINES = 8
#: Rows of the heat map (the most loaded links).
HEATMAP_LINKS = 64


def check_table_path(path: str | Path) -> str | None:
    """The reason `path` cannot be a link table, or None."""
    if Path(path).suffix.lower() not in LINK_FORMATS:
        return f"{path}: --links needs a .parquet or .csv file"
    return None


def check_plot_path(path: str | Path) -> str | None:
    """The reason `path` cannot be a link plot, or None."""
    if Path(path).suffix.lower() not in PLOT_FORMATS:
        return f"{path}: --link-plot needs a .svg or .png file"
    return None


def write_link_table(result: Result, path: str | Path) -> None:
    """Write one row per link (name, bandwidth B/s, bytes, busy_time s, mean_utilisation,
    peak_utilisation, peak_flows) to a .parquet or .csv file; it appears only once complete."""
    reason = check_table_path(path)
    if reason:
        raise ValueError(reason)
    import pyarrow as pa

    table = pa.Table.from_pandas(result.links, preserve_index=False)
    parquet = Path(path).suffix.lower() == ".parquet"

    def write(partial: Path) -> None:
        if parquet:
            import pyarrow.parquet as pq

            pq.write_table(table, partial)
        else:
            import pyarrow.csv as pacsv

            pacsv.write_csv(table, partial)

    deliver(write, path)


def loaded_links(result: Result, limit: int) -> list[int]:
    """Row numbers of `result.links` of the `limit` most utilised links that carried anything:
    highest mean utilisation first, then highest peak, then link order (as `--json` lists them)."""
    links = result.links
    carried = links[links["bytes"] > 0]
    order = carried.sort_values(["mean_utilisation", "peak_utilisation"], ascending=False, kind="stable")
    return [int(i) for i in order.index[:limit]]


def write_link_plot(result: Result, path: str | Path, title: str = "") -> None:
    """Draw the utilisation against time of the most loaded links to an .svg or .png file:
    one line per link when at most `MAX_LINES` links carried anything, else a heat map of the
    `HEATMAP_LINKS` most loaded (the file appears only once complete)."""
    reason = check_plot_path(path)
    if reason:
        raise ValueError(reason)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    width, hist = result.link_utilisation
    names = result.links["name"]
    rows = loaded_links(result, HEATMAP_LINKS)
    carried = int((result.links["bytes"] > 0).sum())
    title = title or f"makespan {result.makespan:.6g} s"
    edges = np.arange(hist.shape[1] + 1) * width
    if carried <= MAX_LINES:
        fig, ax = plt.subplots(figsize=(10, 4.5))
        for i in rows:
            ax.stairs(hist[i], edges, label=str(names[i]))
        if rows:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
        ax.set_ylabel("utilisation")
        ax.set_ylim(bottom=0)
    else:
        fig, ax = plt.subplots(figsize=(10, 1.6 + 0.18 * len(rows)))
        mesh: Any = ax.pcolormesh(edges, np.arange(len(rows) + 1), hist[rows], cmap="viridis", vmin=0,
                                  vmax=max(1.0, float(hist[rows].max())))
        ax.set_yticks(np.arange(len(rows)) + 0.5, [str(names[i]) for i in rows], fontsize="x-small")
        ax.invert_yaxis()
        fig.colorbar(mesh, ax=ax, label="utilisation")
        title += f"\nthe {len(rows)} most loaded of {carried} links that carried traffic"
    ax.set_xlabel("time (s)")
    ax.set_xlim(0, max(result.makespan, width))
    ax.set_title(title, fontsize="medium")
    fig.tight_layout()
    fmt = Path(path).suffix.lower()[1:]
    try:
        # Through a partial file renamed into place, as the link table (errors name `path`).
        deliver(lambda partial: fig.savefig(partial, format=fmt, bbox_inches="tight"), path)
    finally:
        plt.close(fig)
