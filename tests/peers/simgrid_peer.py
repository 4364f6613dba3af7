"""Build and run the repository's SimGrid peer, and turn the same workloads into commaware inputs.

The peer is ``tests/peers/simgrid_star.cpp`` (C++, SimGrid 3.32 s4u), compiled on first use into a
cache directory (:mod:`peer_build`).  It builds a star of N hosts, each with its own SPLITDUPLEX link (1 Gbps per
direction) to the star's centre, and has two modes:

* ``flows``: reads a flow list (``src dst bytes`` per line, written here by Python, e.g. from
  :func:`make_flows`), starts every flow at t = 0 through mailboxes (one sender and one receiver
  actor per host) and writes ``src dst bytes start finish`` per flow in input order;
* ``alltoall``: an MPI-style pairwise alltoall over SimGrid's own engine, rank r on host r.

Both print one ``RESULT {json}`` line.  The same flow list is replayed in commaware by
:func:`flows_to_trace`, so the two engines always see identical workloads.

How the two models map onto each other:

* SimGrid ``network/model:CM02`` + ``network/crosstraffic:0`` is plain max-min sharing with no
  TCP correction factors; ``network/optim:Full`` is required because the default ``Lazy`` mode of
  SimGrid 3.32 gives per-flow times up to 80% off exact max-min with SPLITDUPLEX links and a
  non-zero latency (the first agreement scenario reproduces it).
* A star route crosses two links (source up-link, destination down-link), each of latency
  ``lat_us``, so the route latency, and the commaware ``latency``, is ``2 * lat_us``.
* 1 Gbps is ``1.25e8`` bytes/s per NIC direction.
* CM02 also caps every flow at ``TCP-gamma / (2 * route latency)`` (4 MiB by default); this stays
  above 1 Gbps only while ``lat_us`` is below about 8 ms, so keep latencies under that.
* SimGrid ``network/model:IB`` with :data:`IB_FLAGS` is commaware's ``ib-simgrid``: CM02 plus a
  per-flow cap of route bandwidth / penalty, except where SimGrid leaves a penalty stale (see
  :func:`ib_stale_flows`); run it with :func:`run_simgrid_flows_cfg`.
"""

from __future__ import annotations

import functools
import json
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import peer_build

#: 1 Gbps in bytes/s: the NIC bandwidth (per direction) of every host of the star.
LINK_BANDWIDTH = 1.25e8
#: Default link latency in microseconds (route latency twice this).
DEFAULT_LAT_US = 50.0
#: Eager/rendezvous threshold of the commaware platform, as in the engine's contract.
EAGER_THRESHOLD = 65536
#: SimGrid options for pure max-min sharing (``optim`` is appended by :func:`simgrid_flags`).
BASE_FLAGS = ("--cfg=network/model:CM02", "--cfg=network/crosstraffic:0")
#: SimGrid options for the IB model as commaware's ``ib-simgrid`` models it (``optim`` is added by
#: :func:`run_simgrid_flows_cfg`): SimGrid 3.32's IB model is an SMPI model, so it multiplies
#: bandwidths and latencies by SMPI's piecewise factors (0.940694 and 11.6436 at or above 65472
#: bytes); ``smpi/bw-factor:0:1`` and ``smpi/lat-factor:0:1`` (threshold 0, factor 1) neutralise
#: them.  ``network/bandwidth-factor`` and ``network/latency-factor`` do not (the IB model ignores
#: them), and a bare ``smpi/bw-factor:1`` crashes SimGrid 3.32.  IB's ``network/weight-S`` (8775)
#: is left at its default: it weights a flow's max-min share by its route's latency plus
#: 8775 / bandwidth per link, which is the same for every route of the homogeneous star.
IB_FLAGS = ("--cfg=network/model:IB", "--cfg=network/crosstraffic:0", "--cfg=smpi/bw-factor:0:1",
            "--cfg=smpi/lat-factor:0:1")
#: SimGrid's IB model as it ships (SMPI's bandwidth and latency factors on).
IB_DEFAULT_FLAGS = ("--cfg=network/model:IB", "--cfg=network/crosstraffic:0")
#: SimGrid's default ``smpi/IB-penalty-factors``: beta_e, beta_s, gamma_s.
IB_PENALTY_FACTORS = (0.965, 0.925, 1.35)
#: Flow patterns of :func:`make_flows`.
PATTERNS = ("randsize", "random", "shift", "tiny", "pingpong")
#: Source of the SimGrid peer, inside the repository.
HARNESS_SOURCE = Path(__file__).resolve().parent / "simgrid_star.cpp"
#: Compiler flags, part of the cache key (:mod:`peer_build`; the cache is ``COMMAWARE_SG_CACHE``).
CXXFLAGS = ("-O2", "-std=c++17")
#: What the peer is linked with.
LIBS = ("-lsimgrid",)
#: What to install when the peer does not build.
INSTALL_HINT = "install Debian packages: libsimgrid-dev g++"


class SimGridError(RuntimeError):
    """The peer could not be compiled or run, or its output was unreadable."""


class SimGridTimeout(SimGridError):
    """SimGrid did not finish within the time limit."""


class SgFlow(NamedTuple):
    """One flow of a SimGrid run: hosts are indices, times in seconds."""

    src: int
    dst: int
    bytes: int
    start: float
    finish: float


@dataclass(frozen=True)
class SimGridRun:
    """A ``flows`` run: SimGrid's ``RESULT`` JSON and the per-flow output."""

    result: dict[str, Any]
    flows: list[SgFlow]
    command: list[str]
    wall_s: float


def binary_path() -> Path:
    """Path of the compiled peer for the current source (the name holds a hash of source and flags)."""
    return peer_build.binary_path(HARNESS_SOURCE, "g++", CXXFLAGS, LIBS)


def build_harness(force: bool = False) -> Path:
    """Compile :data:`HARNESS_SOURCE` into the cache unless that exact source is built already
    (:func:`peer_build.build_peer`); raises :class:`SimGridError` with the compiler's first error."""
    return peer_build.build_peer(HARNESS_SOURCE, "g++", CXXFLAGS, libs=LIBS, error=SimGridError, hint=INSTALL_HINT,
                                 force=force)


@functools.lru_cache(maxsize=1)
def simgrid_available() -> tuple[bool, str]:
    """Whether the SimGrid peer compiles and runs here (``libsimgrid-dev``, ``g++``), with the reason if not."""
    try:
        run_simgrid_flows(5, make_flows("tiny", 5, 4, 1e6, 1), timeout=60)
    except SimGridError as exc:
        return False, str(exc)
    return True, f"SimGrid peer compiled at {binary_path()}"


def simgrid_flags(optim: str = "Full", base: Sequence[str] = BASE_FLAGS) -> list[str]:
    """SimGrid ``--cfg`` options: ``base`` (pure max-min sharing by default) with the given
    ``network/optim`` and a warning-level log threshold."""
    return [*base, f"--cfg=network/optim:{optim}", "--log=root.thresh:warning"]


def route_latency_s(lat_us: float) -> float:
    """Route latency in seconds (two star links of ``lat_us`` each): the commaware ``latency``."""
    return 2.0 * lat_us * 1e-6


def parse_dump(text: str) -> list[SgFlow]:
    """Parse per-flow output: one ``src dst bytes start finish`` line per flow, in flow order."""
    flows: list[SgFlow] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 5:
            raise SimGridError(f"flow output line {lineno}: expected 5 fields, got {line!r}")
        flows.append(SgFlow(int(parts[0]), int(parts[1]), int(parts[2]), float(parts[3]), float(parts[4])))
    return flows


def parse_result(stdout: str) -> dict[str, Any]:
    """Extract the ``RESULT {json}`` line the peer prints."""
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            parsed: dict[str, Any] = json.loads(line[len("RESULT "):])
            return parsed
    raise SimGridError("the SimGrid peer printed no RESULT line")


def _run_peer(args: list[str], optim: str, timeout: float | None,
              base: Sequence[str] = BASE_FLAGS) -> tuple[dict[str, Any], list[str], float]:
    """Run the compiled peer with ``args`` and SimGrid's flags; return its RESULT, command and wall time."""
    cmd = [str(build_harness()), *args, *simgrid_flags(optim, base)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise SimGridTimeout(f"SimGrid timed out after {timeout:g} s: {' '.join(cmd)}") from exc
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip()[-500:]
        raise SimGridError(f"SimGrid exited with {proc.returncode}: {' '.join(cmd)}: {tail}")
    return parse_result(proc.stdout), cmd, wall


def write_flow_file(path: Path, flows: Iterable[Sequence[Any]]) -> None:
    """Write ``src dst bytes`` per flow, the peer's input format."""
    path.write_text("".join(f"{int(f[0])} {int(f[1])} {int(f[2])}\n" for f in flows))


def run_simgrid_flows(
    hosts: int,
    flows: Sequence[Sequence[Any]],
    lat_us: float = DEFAULT_LAT_US,
    optim: str = "Full",
    timeout: float | None = None,
    dump_path: Path | None = None,
    bandwidth: float = LINK_BANDWIDTH,
    base: Sequence[str] = BASE_FLAGS,
) -> SimGridRun:
    """Run the peer's ``flows`` mode on ``(src, dst, bytes, ...)`` tuples, all started at t = 0,
    under the SimGrid options ``base`` (CM02 max-min by default; e.g. :data:`IB_FLAGS`).

    Returns SimGrid's per-flow ``(src, dst, bytes, start, finish)`` in the given order.  The
    per-flow output goes to a temporary directory, or is kept at ``dump_path`` if given.
    """
    if hosts < 2 or not flows:
        raise ValueError(f"need at least 2 hosts and 1 flow, got hosts={hosts}, flows={len(flows)}")
    with tempfile.TemporaryDirectory(prefix="commaware-sg-") as tmp:
        flow_file = Path(tmp) / "flows.in"
        write_flow_file(flow_file, flows)
        out = Path(dump_path) if dump_path is not None else Path(tmp) / "flows.out"
        out.unlink(missing_ok=True)
        args = ["flows", str(hosts), repr(float(bandwidth)), repr(lat_us * 1e-6), str(flow_file), str(out)]
        result, cmd, wall = _run_peer(args, optim, timeout, base)
        if not out.is_file():
            raise SimGridError("the SimGrid peer wrote no per-flow output")
        reported = parse_dump(out.read_text())
    if len(reported) != len(flows) or len(reported) != result.get("flows"):
        raise SimGridError(f"SimGrid wrote {len(reported)} flows for {len(flows)} given, RESULT says "
                           f"{result.get('flows')}")
    for i, (given, got) in enumerate(zip(flows, reported, strict=True)):
        if (int(given[0]), int(given[1]), int(given[2])) != (got.src, got.dst, got.bytes):
            raise SimGridError(f"SimGrid's flow {i} is {got[:3]}, expected {tuple(given[:3])}")
    return SimGridRun(result=result, flows=reported, command=cmd, wall_s=wall)


def run_simgrid(
    hosts: int,
    flows: int,
    size: float,
    pattern: str,
    seed: int,
    lat_us: float = DEFAULT_LAT_US,
    optim: str = "Full",
    timeout: float | None = None,
) -> list[SgFlow]:
    """Per-flow ``(src, dst, bytes, start, finish)`` of SimGrid on :func:`make_flows`
    ``(pattern, hosts, flows, size, seed)``; see :func:`run_simgrid_flows`."""
    return run_simgrid_flows(hosts, make_flows(pattern, hosts, flows, size, seed), lat_us, optim, timeout).flows


def run_simgrid_alltoall(
    ranks: int,
    bytes: int,
    lat_us: float = DEFAULT_LAT_US,
    timeout: float | None = None,
    optim: str = "Full",
    bandwidth: float = LINK_BANDWIDTH,
) -> dict[str, Any]:
    """SimGrid's pairwise alltoall of ``bytes`` per block on ``ranks`` hosts (rank r on host r).

    Round i = 1..P-1 exchanges with ``r ^ i`` (P a power of two), else sends to ``(r + i) % P``
    and receives from ``(r - i) % P``, posting both and waiting for both, as commaware's
    ``alltoall`` does.  Returns the peer's RESULT (``run_s``, ``cpu_s``, ``makespan_s``,
    ``messages``, ``time_advances``, ``maxrss_MB``, ...) plus ``wall_s`` (the whole process) and
    ``command``.  A message delivered to the wrong round or from the wrong rank is an error.
    """
    if ranks < 2 or int(bytes) != bytes or bytes < 0:
        raise ValueError(f"need at least 2 ranks and an integer bytes >= 0, got ranks={ranks}, bytes={bytes}")
    args = ["alltoall", str(ranks), repr(float(bandwidth)), repr(lat_us * 1e-6), str(int(bytes))]
    result, cmd, wall = _run_peer(args, optim, timeout)
    if result.get("misdelivered") != 0 or result.get("messages") != ranks * (ranks - 1):
        raise SimGridError(f"SimGrid alltoall went wrong: {result}")
    return {**result, "wall_s": wall, "command": cmd}


def alltoall_trace(ranks: int, bytes: int) -> dict[str, Any]:
    """The commaware trace of one alltoall of ``bytes`` per block on ``ranks`` ranks."""
    return {"ranks": [[{"op": "alltoall", "bytes": bytes}] for _ in range(ranks)]}


class SplitMix64:
    """SplitMix64, the seeded generator of :func:`make_flows`."""

    MASK = (1 << 64) - 1

    def __init__(self, seed: int) -> None:
        self.state = seed & self.MASK

    def next(self) -> int:
        """Next 64-bit output."""
        self.state = (self.state + 0x9E3779B97F4A7C15) & self.MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)

    def below(self, k: int) -> int:
        """Integer in ``[0, k)``."""
        return self.next() % k

    def unit(self) -> float:
        """Float in ``[0, 1)``."""
        return (self.next() >> 11) * (1.0 / (1 << 53))


def make_flows(pattern: str, hosts: int, flows: int, size: float, seed: int) -> list[tuple[int, int, int]]:
    """A ``(src, dst, bytes)`` flow list, the same for the same arguments; both engines replay it.

    ``random``: ``flows`` random pairs of ``size`` bytes; ``randsize``: random pairs of S/10..10S
    bytes; ``shift``: host i sends to i+1..i+k with k = ``flows // hosts``; ``tiny`` (5 hosts) and
    ``pingpong`` (2 hosts): fixed small cases.
    """
    rng = SplitMix64(seed)
    sz = int(size)

    def pair() -> tuple[int, int]:
        s = rng.below(hosts)
        d = rng.below(hosts - 1)
        return s, d + 1 if d >= s else d

    if pattern == "random":
        return [(*pair(), sz) for _ in range(flows)]
    if pattern == "randsize":
        out: list[tuple[int, int, int]] = []
        for _ in range(flows):
            s, d = pair()
            out.append((s, d, int(float(sz) * 10.0 ** (2.0 * rng.unit() - 1.0))))
        return out
    if pattern == "shift":
        k = max(1, flows // hosts)
        return [(i, (i + j) % hosts, sz) for i in range(hosts) for j in range(1, k + 1)]
    if pattern == "tiny":
        return [(0, 1, sz), (0, 2, sz), (0, 3, sz), (4, 3, sz)]
    if pattern == "pingpong":
        return [(0, 1, sz), (1, 0, sz)]
    raise ValueError(f"unknown pattern {pattern!r}, expected one of {PATTERNS}")


def platform_dict(
    n_hosts: int,
    latency_s: float,
    bandwidth: float = LINK_BANDWIDTH,
    eager_threshold: int = EAGER_THRESHOLD,
) -> dict[str, Any]:
    """The commaware platform matching the SimGrid star: ``n_hosts`` identical hosts, max-min network."""
    return {
        "cluster": {"count": n_hosts, "speed": 1e9, "cores": 1, "memory": 1e9},
        "network": {"model": "maxmin", "bandwidth": bandwidth, "latency": latency_s,
                    "eager_threshold": eager_threshold},
    }


def flows_to_trace(n_hosts: int, flows: Iterable[Sequence[Any]]) -> dict[str, Any]:
    """A commaware trace that issues the given flows at t = 0, one rank per host.

    ``flows`` holds ``(src, dst, bytes, ...)`` tuples (e.g. :class:`SgFlow`).  Rank r posts an
    ``isend`` for each of its outgoing flows in flow order, then an ``irecv`` for each incoming
    flow in flow order, then ``waitall``.  Flow i carries tag i, so each message maps back to its
    flow without relying on posting order.
    """
    sends: list[list[dict[str, Any]]] = [[] for _ in range(n_hosts)]
    recvs: list[list[dict[str, Any]]] = [[] for _ in range(n_hosts)]
    for i, flow in enumerate(flows):
        src, dst, size = int(flow[0]), int(flow[1]), int(flow[2])
        if not (0 <= src < n_hosts and 0 <= dst < n_hosts) or src == dst:
            raise ValueError(f"flow {i}: bad pair {src}->{dst} for {n_hosts} hosts")
        sends[src].append({"op": "isend", "dst": dst, "bytes": size, "tag": i})
        recvs[dst].append({"op": "irecv", "src": src, "tag": i})
    return {"ranks": [s + r + [{"op": "waitall"}] for s, r in zip(sends, recvs, strict=True)]}


def ours_finish_by_flow(flows: Sequence[Sequence[Any]], messages: Any) -> list[float]:
    """Completion time of each flow in a commaware ``messages`` DataFrame (rows found by tag).

    Checks that every flow appears exactly once with the expected ranks and size; raises
    ``ValueError`` otherwise.
    """
    ends: list[float | None] = [None] * len(flows)
    cols = messages[["src_rank", "dst_rank", "bytes", "tag", "end"]]
    for src, dst, size, tag, end in cols.itertuples(index=False, name=None):
        i = int(tag)
        if not 0 <= i < len(flows):
            raise ValueError(f"message with unexpected tag {tag}")
        want = (int(flows[i][0]), int(flows[i][1]), int(flows[i][2]))
        if (int(src), int(dst), int(size)) != want:
            raise ValueError(f"message tag {i} is {src}->{dst} {size} B, expected {want}")
        if ends[i] is not None:
            raise ValueError(f"two messages with tag {i}")
        ends[i] = float(end)
    missing = [i for i, e in enumerate(ends) if e is None]
    if missing:
        raise ValueError(f"{len(missing)} flows have no message, first tags {missing[:5]}")
    return [float(e) for e in ends if e is not None]


def relative_errors(reference: Sequence[float], ours: Sequence[float]) -> list[float]:
    """``|ours - reference| / |reference|`` per flow (absolute error where the reference is 0)."""
    return [abs(o - r) / abs(r) if r else abs(o) for r, o in zip(reference, ours, strict=True)]


def _maxmin_rates(routes: Sequence[tuple[Any, ...]], capacity: float) -> list[float]:
    """Max-min fair rates of flows crossing ``routes`` (link keys), every link of ``capacity``.

    Progressive filling: the link with the smallest equal share of what is left saturates
    first and fixes the rate of its unfixed flows; repeat until every flow is fixed.
    """
    users: dict[Any, list[int]] = {}
    for k, route in enumerate(routes):
        for link in route:
            users.setdefault(link, []).append(k)
    left = dict.fromkeys(users, capacity)
    unfixed = {link: len(ks) for link, ks in users.items()}
    rate: list[float | None] = [None] * len(routes)
    while unfixed:
        link = min(unfixed, key=lambda lk: left[lk] / unfixed[lk])
        share = left[link] / unfixed[link]
        for k in users[link]:
            if rate[k] is None:
                rate[k] = share
                for other in routes[k]:
                    left[other] -= share
                    unfixed[other] -= 1
        unfixed = {lk: n for lk, n in unfixed.items() if n > 0}
    return [float(r) for r in rate if r is not None]


def exact_maxmin_finish(
    flows: Sequence[Sequence[Any]], lat_us: float, bandwidth: float = LINK_BANDWIDTH
) -> list[float]:
    """Exact max-min finish times of ``(src, dst, bytes, ...)`` flows started at t = 0 on the star.

    Each flow waits the route latency, then shares the source's up-link and the destination's
    down-link max-min fairly, rates recomputed at every completion.  Plain Python, for checking
    SimGrid and arbitrating disagreements on up to a few thousand flows.
    """
    t = route_latency_s(lat_us)
    finish = [t] * len(flows)
    left = [float(f[2]) for f in flows]
    active = [i for i in range(len(flows)) if left[i] > 0]
    while active:
        rates = _maxmin_rates([(("up", int(flows[i][0])), ("down", int(flows[i][1]))) for i in active], bandwidth)
        ends = [left[i] / r for i, r in zip(active, rates, strict=True)]
        dt = min(ends)
        t += dt
        still = []
        for i, r, end in zip(active, rates, ends, strict=True):
            if end <= dt * (1 + 1e-12):  # ends now, up to rounding
                finish[i] = t
            else:
                left[i] -= r * dt
                still.append(i)
        active = still
    return finish


# ---------------------------------------------------------------------------------------------
# SimGrid's IB model: runs with other flags, and where its penalty updates are incomplete
# ---------------------------------------------------------------------------------------------


def run_simgrid_flows_cfg(
    hosts: int,
    flows: Sequence[Sequence[Any]],
    flags: Sequence[str],
    lat_us: float = DEFAULT_LAT_US,
    optim: str = "Full",
    timeout: float | None = None,
    bandwidth: float = LINK_BANDWIDTH,
) -> SimGridRun:
    """:func:`run_simgrid_flows` with the SimGrid options ``flags`` (e.g. :data:`IB_FLAGS`) instead of CM02's.

    ``network/optim:<optim>`` and a warning-level log threshold are appended to ``flags``.
    """
    return run_simgrid_flows(hosts, flows, lat_us, optim, timeout, bandwidth=bandwidth, base=flags)


def ib_penalties(
    flows: Sequence[Sequence[Any]],
    active: Iterable[int],
    factors: tuple[float, float, float] = IB_PENALTY_FACTORS,
) -> dict[int, float]:
    """SimGrid's IB penalty of each ``active`` flow (indices into ``(src, dst, ...)`` ``flows``).

    For a flow s -> d, with beta_e, beta_s, gamma_s = ``factors``: out(c) = 1 if s has one active
    comm, else n_out(s) * beta_s, times gamma_s if c's destination has more than 2 incoming comms;
    in = 1 if d has one incoming comm, else (comms s -> d) * beta_e * (distinct senders to d);
    penalty = max(in, max of out(c) over s's comms c).  The flow's rate is capped at route
    bandwidth / penalty.
    """
    be, bs, gs = factors
    act = list(active)
    out: dict[int, list[int]] = {}
    into: dict[int, dict[int, int]] = {}
    for i in act:
        s, d = int(flows[i][0]), int(flows[i][1])
        out.setdefault(s, []).append(i)
        senders = into.setdefault(d, {})
        senders[s] = senders.get(s, 0) + 1
    n_in = {d: sum(v.values()) for d, v in into.items()}
    pen: dict[int, float] = {}
    for s, comms in out.items():
        n = len(comms)
        worst_out = max(1.0 if n == 1 else n * bs * (gs if n_in[int(flows[i][1])] > 2 else 1.0) for i in comms)
        for i in comms:
            d = int(flows[i][1])
            pen_in = 1.0 if n_in[d] == 1 else into[d][s] * be * len(into[d])
            pen[i] = max(pen_in, worst_out)
    return pen


def _ib_components(flows: Sequence[Sequence[Any]], active: Iterable[int]) -> dict[int, int]:
    """Host -> representative host of its connected component of the graph of ``active`` flows."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i in active:
        a, b = find(int(flows[i][0])), find(int(flows[i][1]))
        parent[a] = b
    return {h: find(h) for h in list(parent)}


def _ib_simgrid_remove(
    flows: Sequence[Sequence[Any]], active: set[int], pen: dict[int, float], gone: int,
    factors: tuple[float, float, float],
) -> None:
    """SimGrid's update when flow ``gone`` ends: only the component of its sender is recomputed."""
    active.discard(gone)
    pen.pop(gone, None)
    comp = _ib_components(flows, active)
    sender = int(flows[gone][0])
    root = comp.get(sender)
    if root is None:  # the sender has no comm left: SimGrid recomputes nothing else
        return
    fresh = ib_penalties(flows, active, factors)
    for i in active:
        if comp[int(flows[i][0])] == root:
            pen[i] = fresh[i]


def ib_stale_flows(
    flows: Sequence[Sequence[Any]],
    factors: tuple[float, float, float] = IB_PENALTY_FACTORS,
    rel: float = 1e-12,
) -> set[int]:
    """Flows whose SimGrid IB completion time may differ from a correct recomputation of penalties.

    ``flows`` is SimGrid's output (:class:`SgFlow`: ``src, dst, bytes, start, finish``), every flow
    started at t = 0.  SimGrid 3.32 recomputes IB penalties, when a comm starts or ends, only for
    the comms of the connected component (of the graph of active comms) of that comm's *sender*.
    A start merges components, so starts leave every penalty right; but when the last comm
    s -> d of a bridge ends, d's side is left out, and flows into d (and flows of senders into d)
    keep the penalty computed while s -> d was there.  (SimGrid counts a comm from its start, its
    latency phase included; with all flows started together on equal route latencies this is
    the same as counting transfers only.)

    Replays SimGrid's completions in SimGrid's order (its finish times; this needs no rates, so
    it is not a simulation) and tracks SimGrid's penalties against a full recomputation.  Up to
    the first stale penalty the two models run identically; from then on every flow still active
    in the component of a stale flow (flows share links only within a component, and components
    only split) may finish at another time: those flows are returned.  Flows ending at the same
    instant are removed in both input order and reverse order; a penalty that depends on that
    order counts as stale too.  A stale penalty changes times only where its cap binds, so some
    returned flows may still agree.
    """
    if any(float(f[3]) != 0.0 for f in flows):
        raise ValueError("ib_stale_flows expects flows that all start at t = 0")
    active = set(range(len(flows)))
    pen = ib_penalties(flows, active, factors)  # after all starts: every penalty is right
    tainted: set[int] = set()
    finish_times = sorted({float(f[4]) for f in flows})
    for t in finish_times:
        ending = [i for i in sorted(active) if float(flows[i][4]) == t]
        variants = []
        for order in (ending, ending[::-1]):
            act, p = set(active), dict(pen)
            for i in order:
                _ib_simgrid_remove(flows, act, p, i, factors)
            variants.append(p)
        active -= set(ending)
        right = ib_penalties(flows, active, factors)
        stale = {i for i in active for p in variants if abs(p[i] - right[i]) > rel * right[i]}
        pen = variants[0]
        if stale:
            comp = _ib_components(flows, active)
            roots = {comp[int(flows[i][0])] for i in stale}
            tainted |= {i for i in active if comp[int(flows[i][0])] in roots}
    return tainted
