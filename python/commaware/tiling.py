"""Loop tiling with overlapped communication (paper 001).

A DIMX × DIMY × DIMZ loop with unit dependences is cut into tiles of x × y × z points, one
column of tiles along the mapping dimension (the largest, k by default) per processor of a
p_i × p_j grid. Two schedules run the tiles:

* non-overlapping (§3, Π = [1 … 1]): receive, compute, send; eq. (3)
  T_block = P·(t_comp + t_comm_block), P = x_i + x_j + x_k + 1;
* overlapping (§4, Π' = [2 … 2 1]): compute tile k while sending k−1 and receiving k+1;
  eq. (4) T_overlap = P'·max(t_comp, t_comm), P' = 2(x_i + x_j) + x_k + 1;

with x_i = p_i − 1, x_j = p_j − 1, x_k = DIMZ/z − 1, t_comp = g·t_c (g = x·y·z points).
Conventions (docs/tiling.md): t_comm is one startup plus the largest face at the network's
bandwidth (the faces of a step travel at the same time); t_comm_block is every incoming
and outgoing message of a blocking step one after another (§3). Eq. (7) is the SCI model
of §6.2. Both programs of §5.3 also run on the engine (`sim_block`, `sim_overlap`) under
any sharing model, with the platform's interference if it has one.

All work per tile happens in the Rust core; Python loops only over tile heights.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from . import _core
from ._errors import input_error, option_error
from .api import Platform, Trace, load_platform, param_list

#: Network assumed for the FastEthernet experiments of §5 (the paper's values are in lost
#: figures): 100 Mb/s, and a one-way MPI latency of 100 µs (MPICH over TCP, 2000-era).
FAST_ETHERNET = {"bandwidth": 100e6 / 8, "latency": 100e-6}
#: t_c assumed for the FastEthernet runs: about 150 cycles of a 500 MHz Pentium III for the
#: three single-precision square roots and two additions of one point (§5.3).
T_C_FAST_ETHERNET = 0.3e-6
#: t_c assumed for the SCI runs: the same 150 cycles on the 800 MHz Pentium III of §6.2.
T_C_SCI = 150 / 800e6
#: §6.2's ping-pong values (s).
T_START_DMA = 49.2e-6
T_SCI_INTERRUPT = 18.8e-6
SCHEDULES = tuple(_core.TILING_SCHEDULES)

_DIMS = re.compile(r"^\s*\d+(\s*[xX×]\s*\d+)*\s*$")
_SUFFIX = {"k": 2**10, "K": 2**10, "m": 2**20, "M": 2**20}


def parse_dims(text: str, option: str) -> list[int]:
    """`16x16x16384` (also `12x12x512K`, K = 2^10, M = 2^20) as a list of ints."""
    parts = re.split(r"\s*[xX×]\s*", str(text).strip())
    out = []
    for part in parts:
        scale = 1
        if part and part[-1] in _SUFFIX:
            scale, part = _SUFFIX[part[-1]], part[:-1]
        if not part.isdigit():
            raise input_error(_core.OptionsError, option, "",
                              f"expected sizes like 16x16x16384 (whole numbers, K = 2^10, M = 2^20), got {text!r}")
        out.append(int(part) * scale)
    if any(v <= 0 for v in out):
        raise input_error(_core.OptionsError, option, "", f"sizes must be > 0, got {text!r}")
    if any(v >= 2**63 for v in out):
        raise input_error(_core.OptionsError, option, "", f"sizes must be below 2^63, got {text!r}")
    return out


def parse_matrix(text: str, option: str, integer: bool) -> list[list[Any]]:
    """Rows separated by `;`, entries by `,`: `1,0;0,1`."""
    rows = []
    for row in str(text).split(";"):
        cells = [c.strip() for c in row.split(",")]
        try:
            rows.append([int(c) if integer else float(c) for c in cells])
        except ValueError:
            kind = "integers" if integer else "numbers"
            raise input_error(_core.OptionsError, option, "", f"expected rows of {kind} like '1,0;0,1', got {text!r}") from None
    return rows


def _core_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except _core.OptionsError as exc:
        raise option_error(exc) from None
    except OverflowError as exc:
        raise input_error(_core.OptionsError, "<options>", "", f"a size is too large: {exc}") from None


def geometry(space: Sequence[int], deps: Sequence[Sequence[int]] | None = None, *, sides: Sequence[int] | None = None,
             h: Sequence[Sequence[float]] | None = None, mapping: int | None = None) -> dict[str, Any]:
    """§2's tiling model: legality (0 ≤ HD ≤ 1), tile volume det(P), eqs. (1) and (2),
    tile-space bounds, and the step counts of both schedules over that tile space.
    `deps` are the dependence vectors (default: the unit vectors); `mapping` is 0-based."""
    n = len(space)
    deps = [list(d) for d in deps] if deps is not None else [[int(i == k) for k in range(n)] for i in range(n)]
    doc: dict[str, Any] = json.loads(_core_call(_core.tiling_geometry, list(space), deps,
                                                list(sides) if sides is not None else None,
                                                [list(r) for r in h] if h is not None else None, mapping))
    tiles, m = doc["tiles"], doc["mapping"]
    doc["P_block"] = sum(t - 1 for t in tiles) + 1
    doc["P_overlap"] = sum((1 if d == m else 2) * (t - 1) for d, t in enumerate(tiles)) + 1
    return doc


def time_step(tile: Sequence[int], schedule: str, mapping: int) -> int:
    """The time step of a tile (coordinates from the tile space's origin, `mapping` 0-based):
    Π·j^S with Π = [1 … 1] (`block`, §3) or Π' = [2 … 2 1 2 … 2] (`overlap`, §4)."""
    return int(_core_call(_core.tiling_time_step, [int(t) for t in tile], schedule, int(mapping)))


def default_platform(n_procs: int, *, bandwidth: float = FAST_ETHERNET["bandwidth"],
                     latency: float = FAST_ETHERNET["latency"], model: str = "maxmin") -> Platform:
    """A cluster of `n_procs` hosts on the assumed FastEthernet (one rank per host)."""
    return load_platform({"cluster": {"count": n_procs, "speed": 1e9},
                          "network": {"model": model, "bandwidth": bandwidth, "latency": latency}})


def _network(platform: Platform) -> tuple[float, float]:
    net = json.loads(platform._core.to_json())["network"]
    return float(net["latency"]), float(net["bandwidth"])


def _sci(sci: bool | tuple[float, float] | None) -> tuple[float, float] | None:
    if sci is True:
        return (T_START_DMA, T_SCI_INTERRUPT)
    return tuple(sci) if sci else None  # type: ignore[return-value]


def analyze(space: Sequence[int], procs: Sequence[int], tile_height: int, *, t_c: float = T_C_FAST_ETHERNET,
            platform: str | Path | Mapping[str, Any] | Platform | None = None, model: str | None = None,
            params: Mapping[str, float] | Sequence[tuple[str, float]] | None = None,
            sci: bool | tuple[float, float] | None = None, simulate: bool = True,
            mapping: int | None = None, on_progress: Callable[[str, float, int, int, int, float], None] | None = None,
            progress_every: float = 10.0) -> dict[str, Any]:
    """One tile height: step counts, t_comp, t_comm, eqs. (3) and (4), with `sci` eq. (7)
    (`T_sci`), and with `simulate` both programs on the platform (`sim_block`,
    `sim_overlap`). Without a platform, the assumed FastEthernet cluster is used.
    While a program is simulated, `on_progress(schedule, simulated seconds, messages, ranks
    done, ranks, wall seconds of this program)` is called every `progress_every` wall seconds
    (a z = 1 run of a deep space takes minutes)."""
    n_procs = 1
    for p in procs:
        n_procs *= max(int(p), 1)
    plat = load_platform(platform) if platform is not None else default_platform(n_procs)
    latency, bandwidth = _network(plat)
    s = _sci(sci)
    row: dict[str, Any] = json.loads(_core_call(_core.tiling_formulas, list(space), list(procs), int(tile_height),
                                                float(t_c), latency, bandwidth, mapping, s))
    row["t_c"] = t_c
    if simulate:
        pl = param_list(params)
        for name in SCHEDULES:
            report = None
            if on_progress is not None:
                def report(now: float, _steps: int, messages: int, done: int, ranks: int, elapsed: float,
                           name: str = name) -> None:
                    on_progress(name, now, messages, done, ranks, elapsed)
            run = _core_call(_core.tiling_simulate, plat._core, list(space), list(procs), int(tile_height), float(t_c),
                             name, mapping, model, pl, on_progress=report, progress_every=float(progress_every))
            row[f"sim_{name}"] = run["makespan"]
            row[f"sim_{name}_max_compute"] = run["max_compute_seconds"]
            row["model"] = run["model"]
    return row


def sweep(space: Sequence[int], procs: Sequence[int], *, heights: Sequence[int] | None = None,
          progress: Callable[[int, int, int | None], None] | None = None, **kwargs: Any) -> dict[str, Any]:
    """`analyze` at every tile height (default: the divisors of DIMZ up to DIMZ / max p,
    §5.4), with the best z of each time column; with `sci`, also eq. (7)'s closed-form
    z_opt and T_min (`z_opt_sci`, `T_min_sci`). `progress(done, n, z)` is called as each of the
    n heights starts (`done` of them finished, `z` the one starting) and once at the end (`done`
    = n, `z` None); `on_progress` (see `analyze`) reports within one height."""
    mapping = kwargs.get("mapping")
    zs = list(heights) if heights is not None else _core_call(_core.tiling_sweep_heights, list(space), list(procs), mapping)
    if not zs:
        raise input_error(_core.OptionsError, "--sweep-z", "", "no tile height divides the mapping dimension up to DIMZ / max p")
    rows = []
    for i, z in enumerate(zs):
        if progress is not None:
            progress(i, len(zs), z)
        rows.append(analyze(space, procs, z, **kwargs))
    if progress is not None:
        progress(len(zs), len(zs), None)
    doc: dict[str, Any] = {"space": list(space), "procs": list(procs), "rows": rows, "best": {}}
    for col in ("T_block", "T_overlap", "T_sci", "sim_block", "sim_overlap"):
        if col in rows[0]:
            best = min(rows, key=lambda r: r[col])
            doc["best"][col] = {"tile_height": best["tile_height"], "time": best[col]}
    s = _sci(kwargs.get("sci"))
    if s is not None:
        opt = json.loads(_core_call(_core.tiling_sci_optimum, list(space), list(procs), float(kwargs.get("t_c", T_C_FAST_ETHERNET)),
                                    s[0], s[1], mapping))
        doc["z_opt_sci"], doc["T_min_sci"], doc["sci_a"], doc["sci_C"] = opt["z_opt"], opt["T_min"], opt["a"], opt["C"]
    return doc


def program(space: Sequence[int], procs: Sequence[int], tile_height: int, schedule: str, *, t_c: float = T_C_FAST_ETHERNET,
            mapping: int | None = None) -> Trace:
    """The §5.3 program of `schedule` (`block` or `overlap`) as a trace for `commaware.simulate`."""
    core = _core_call(_core.tiling_program, list(space), list(procs), int(tile_height), float(t_c), schedule, mapping)
    return Trace(core, f"<tiling {schedule}>")


def plot_sweep(doc: dict[str, Any], path: str | Path) -> None:
    """Completion time against tile height (the shape of Figs. 5–7 and 12–15)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = doc["rows"]
    zs = [r["tile_height"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    styles = {"T_block": ("eq. (3) non-overlapping", "C0", "--"), "T_overlap": ("eq. (4) overlapping", "C1", "--"),
              "sim_block": ("simulated non-overlapping", "C0", "-"), "sim_overlap": ("simulated overlapping", "C1", "-"),
              "T_sci": ("eq. (7) SCI", "C2", ":")}
    for col, (label, color, style) in styles.items():
        if col in rows[0]:
            ax.plot(zs, [r[col] for r in rows], style, color=color, marker="o", markersize=3, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("tile height z")
    ax.set_ylabel("completion time (s)")
    ax.set_title("×".join(map(str, doc["space"])) + " on " + "×".join(map(str, doc["procs"])) + " processors")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    from .output import deliver

    try:  # complete or not at all (the format from the name the user gave)
        deliver(lambda partial: fig.savefig(partial, format=Path(path).suffix.lstrip(".").lower() or "png"), path)
    finally:
        plt.close(fig)
