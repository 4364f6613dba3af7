"""Run the shared SimGrid peer harness and turn its flows into commaware inputs.

The harness (``sg_flows.cpp``, kept in ``shared/peers/simgrid`` beside the repository, never copied
into it) builds a star of N hosts, each with its own SPLITDUPLEX 1 Gbps link to an implicit centre,
starts M flows at t = 0 and, with ``SG_DUMP=FILE``, writes one ``src dst bytes start finish`` line
per flow in flow order.  This module compiles it once, runs it with SimGrid's pure max-min
configuration and converts the same flow list into a commaware platform and trace.

How the two models map onto each other:

* SimGrid ``network/model:CM02`` + ``network/crosstraffic:0`` is plain max-min sharing with no
  TCP correction factors; ``network/optim:Full`` is required because the default ``Lazy`` mode of
  SimGrid 3.32 gives per-flow times up to 80% off exact max-min with SPLITDUPLEX links and a
  non-zero latency (see the harness README).
* A StarZone route crosses two links (source up-link, destination down-link), each with latency
  ``SG_LAT``, so the route latency, and the commaware ``latency``, is ``2 * SG_LAT``.
* 1 Gbps is ``1.25e8`` bytes/s per NIC direction.
* CM02 also caps every flow at ``TCP-gamma / (2 * route latency)`` (4 MiB by default); this stays
  above 1 Gbps only while ``SG_LAT`` is below about 8 ms, so keep latencies under that.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

#: 1 Gbps in bytes/s: the NIC bandwidth (per direction) of every harness host.
LINK_BANDWIDTH = 1.25e8
#: The harness's default link latency in microseconds (``SG_LAT`` unset).
DEFAULT_LAT_US = 50.0
#: Eager/rendezvous threshold of the commaware platform, as in the engine's contract.
EAGER_THRESHOLD = 65536
#: SimGrid options for pure max-min sharing (``optim`` is appended by :func:`simgrid_flags`).
BASE_FLAGS = ("--cfg=network/model:CM02", "--cfg=network/crosstraffic:0")
#: Patterns of ``sg_flows.cpp`` that this module runs.
PATTERNS = ("randsize", "random", "shift", "tiny", "pingpong")
#: Where the compiled harness is cached (override with ``COMMAWARE_SG_CACHE``).
CACHE_DIR = Path(os.environ.get("COMMAWARE_SG_CACHE", "/tmp/commaware-sg"))


class SimGridError(RuntimeError):
    """The harness could not be found, compiled or run, or its output was unreadable."""


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
    """A complete harness run: SimGrid's ``RESULT`` JSON and the per-flow dump."""

    result: dict[str, Any]
    flows: list[SgFlow]
    command: list[str]
    wall_s: float


def repo_root() -> Path:
    """The repository root (the parent of ``tests/``)."""
    return Path(__file__).resolve().parent.parent


def harness_dir() -> Path:
    """Directory of the shared SimGrid harness.

    ``$COMMAWARE_SHARED/peers/simgrid`` if ``COMMAWARE_SHARED`` is set, otherwise
    ``<repo root>/../shared/peers/simgrid`` (CI clones the repository with ``shared/`` beside it).
    """
    shared = os.environ.get("COMMAWARE_SHARED")
    base = Path(shared) if shared else repo_root().parent / "shared"
    return base / "peers" / "simgrid"


def harness_source() -> Path:
    """Path of ``sg_flows.cpp`` in the shared harness."""
    return harness_dir() / "sg_flows.cpp"


def binary_path() -> Path:
    """Path of the cached compiled harness."""
    return CACHE_DIR / "sg_flows"


def build_harness(force: bool = False) -> Path:
    """Compile ``sg_flows.cpp`` into :data:`CACHE_DIR` unless a binary newer than the source exists.

    The binary is written under a temporary name and renamed, so concurrent callers never run a
    half-written file.  Raises :class:`SimGridError` with the compiler's message on failure.
    """
    src = harness_source()
    if not src.is_file():
        raise SimGridError(f"SimGrid harness not found: {src} (set COMMAWARE_SHARED to the shared/ directory)")
    out = binary_path()
    if not force and out.is_file() and out.stat().st_mtime >= src.stat().st_mtime:
        return out
    compiler = shutil.which("g++")
    if compiler is None:
        raise SimGridError("g++ not found (install Debian packages: g++ libsimgrid-dev)")
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix="sg_flows.", dir=out.parent)
    os.close(fd)
    cmd = [compiler, "-O2", "-std=c++17", str(src), "-o", tmp_name, "-lsimgrid"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines() or ["no compiler output"]
            first_error = next((ln for ln in lines if "error" in ln), lines[-1])
            raise SimGridError(
                f"cannot compile the SimGrid harness (install Debian packages: libsimgrid-dev g++): {first_error}"
            )
        os.chmod(tmp_name, 0o755)
        os.replace(tmp_name, out)
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
    return out


@functools.lru_cache(maxsize=1)
def simgrid_available() -> tuple[bool, str]:
    """Whether the SimGrid harness can be compiled and run here, with the reason if not."""
    try:
        run_simgrid(5, 4, 1e6, "tiny", 1, timeout=60)
    except SimGridError as exc:
        return False, str(exc)
    return True, f"SimGrid harness compiled at {binary_path()}"


def simgrid_flags(optim: str = "Full") -> list[str]:
    """SimGrid ``--cfg`` options for pure max-min sharing with the given ``network/optim``."""
    return [*BASE_FLAGS, f"--cfg=network/optim:{optim}", "--log=root.thresh:warning"]


def route_latency_s(lat_us: float) -> float:
    """Route latency in seconds (two star links of ``lat_us`` each): the commaware ``latency``."""
    return 2.0 * lat_us * 1e-6


def parse_dump(text: str) -> list[SgFlow]:
    """Parse ``SG_DUMP`` output: one ``src dst bytes start finish`` line per flow, in flow order."""
    flows: list[SgFlow] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 5:
            raise SimGridError(f"SG_DUMP line {lineno}: expected 5 fields, got {line!r}")
        flows.append(SgFlow(int(parts[0]), int(parts[1]), int(parts[2]), float(parts[3]), float(parts[4])))
    return flows


def parse_result(stdout: str) -> dict[str, Any]:
    """Extract the ``RESULT {json}`` line the harness prints."""
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            parsed: dict[str, Any] = json.loads(line[len("RESULT "):])
            return parsed
    raise SimGridError("the SimGrid harness printed no RESULT line")


def run_simgrid_full(
    hosts: int,
    flows: int,
    size: float,
    pattern: str,
    seed: int,
    lat_us: float = DEFAULT_LAT_US,
    optim: str = "Full",
    timeout: float | None = None,
    dump_path: Path | None = None,
) -> SimGridRun:
    """Run the C++ harness once (split duplex, per-host actors, mailbox mode) and read its dump.

    ``flows`` is the number of flows M (for ``shift``, each host sends to the next ``M // hosts``
    hosts); ``size`` the flow size S in bytes (``randsize`` draws sizes in S/10..10S).  The
    ``SG_DUMP`` file goes to a temporary directory, or is kept at ``dump_path`` if given.
    """
    if pattern not in PATTERNS:
        raise ValueError(f"unknown pattern {pattern!r}, expected one of {PATTERNS}")
    if hosts < 2 or flows < 1:
        raise ValueError(f"need at least 2 hosts and 1 flow, got hosts={hosts}, flows={flows}")
    binary = build_harness()
    cmd = [str(binary), str(hosts), str(flows), repr(float(size)), pattern, "split", str(seed),
           "per-host", "mailbox", *simgrid_flags(optim)]
    with tempfile.TemporaryDirectory(prefix="commaware-sg-") as tmp:
        dump = Path(dump_path) if dump_path is not None else Path(tmp) / "flows.txt"
        dump.unlink(missing_ok=True)
        env = dict(os.environ, SG_DUMP=str(dump), SG_LAT=f"{lat_us:g}us")
        env.pop("SG_TOPO", None)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired as exc:
            raise SimGridTimeout(f"SimGrid timed out after {timeout:g} s: {' '.join(cmd)}") from exc
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip()[-500:]
            raise SimGridError(f"SimGrid exited with {proc.returncode}: {' '.join(cmd)}: {tail}")
        result = parse_result(proc.stdout)
        if not dump.is_file():
            raise SimGridError("the SimGrid harness wrote no SG_DUMP file")
        sg_flows = parse_dump(dump.read_text())
    if len(sg_flows) != result.get("flows"):
        raise SimGridError(f"SG_DUMP has {len(sg_flows)} flows, RESULT says {result.get('flows')}")
    return SimGridRun(result=result, flows=sg_flows, command=cmd, wall_s=wall)


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
    """Per-flow ``(src, dst, bytes, start, finish)`` of one harness run; see :func:`run_simgrid_full`."""
    return run_simgrid_full(hosts, flows, size, pattern, seed, lat_us, optim, timeout).flows


class SplitMix64:
    """The harness's flow generator (SplitMix64), so flow lists can be rebuilt without SimGrid."""

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
    """The ``(src, dst, bytes)`` list the harness generates for these arguments (``SG_DUMP`` order).

    The benchmark reads SimGrid's dump whenever SimGrid finishes; this is only the fallback for a
    SimGrid run that timed out, and the tests check it against the dump.
    """
    rng = SplitMix64(seed)
    sz = int(size)  # the harness parses SIZE into an integer

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
    """The commaware platform matching the harness star: ``n_hosts`` identical hosts, max-min network."""
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


def exact_maxmin_finish(flows: Sequence[Sequence[Any]], lat_us: float) -> list[float] | None:
    """Finish times from the harness's own exact max-min reference (``maxmin_ref.py``), if present.

    Used only to say which side is wrong when commaware and SimGrid disagree.
    """
    path = harness_dir() / "maxmin_ref.py"
    if not path.is_file():
        return None
    import importlib.util

    spec = importlib.util.spec_from_file_location("commaware_sg_maxmin_ref", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    triples = [(int(f[0]), int(f[1]), int(f[2])) for f in flows]
    _, finish = module.simulate(triples, LINK_BANDWIDTH, lat_us * 1e-6, "split")
    return [float(x) for x in finish]
