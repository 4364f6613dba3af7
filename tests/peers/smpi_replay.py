"""SimGrid SMPI's offline replay of a time-independent (TI) trace, set up to model what commaware
models, and the makespan it gives.

    run_smpi_replay(platform_dict, ti_index) -> SmpiRun(makespan, rank_ends, ...)

How the two are made to agree (docs/formats.md, "Replaying in SMPI"):

* the platform XML comes from our platform JSON (:func:`platform_xml`): one host per host, each
  with an up-link and a down-link of its NIC bandwidths (our star through a non-blocking
  switch) whose latencies add up to our one-way ``latency``, a backbone link on every
  inter-host route when the platform has one, and a loopback link per host (the host's
  ``memory_bandwidth`` and ``memory_latency``, shared by its intra-host messages), so that a
  message to self stays on its host;
* ``network/model:CM02`` with ``network/crosstraffic:0`` is plain max-min sharing, with
  ``network/optim:Full`` (the default ``Lazy`` gives wrong per-flow times with split links and a
  latency), bandwidth, latency and SMPI factors 1, ``network/weight-S:0``;
* SMPI's per-message overheads (``smpi/os``, ``smpi/or``, ``smpi/ois``) are 0; its eager
  threshold ``smpi/send-is-detached-thresh`` is our ``eager_threshold`` (the sender goes on at
  once), and so is ``smpi/async-small-thresh``: below it a message goes to the receiver's
  mailbox with a permanent receiver, so its transfer starts when the send is posted, as in
  commaware (with the default 0 an eager message waits for its receive to be posted);
* SMPI adds a 16-byte envelope to every message's size (``smpi_request.cpp``: "MPI enveloppe
  size") while deciding eager or rendezvous on the payload alone: commaware replays with
  the platform's ``envelope_bytes`` at 16, which does the same;
* ``surf/precision`` (default 1e-9 s: SimGrid merges events closer than that, which moves
  ranks' ends by a few 1e-10 s) is 1e-13;
* ``smpi/test`` (the time MPI_Test sleeps before it looks) is our ``test_seconds`` (0 by
  default), with ``smpi/grow-injected-times:no`` (by default SMPI multiplies that sleep by the
  number of failed tests in a row, counted over all ranks);
* collective algorithms are selected with ``smpi/<coll>:<algorithm>``.

SMPI's own "Simulation time" line has 6 decimals, so the replay runs our replay program
(``smpi_replay_main.cpp``, SimGrid's ``smpireplaymain`` plus one line per rank giving the clock
when the rank ended, with 17 digits) under ``smpirun -replay INDEX``.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence
from xml.sax.saxutils import quoteattr

from peer_build import build_peer

HERE = Path(__file__).resolve().parent
REPLAY_SOURCE = HERE / "smpi_replay_main.cpp"
#: What to install when smpicc or smpicxx is missing or fails.
INSTALL_HINT = "install the Debian package simgrid"
#: SMPI's envelope, added to every message's simulated size (SimGrid 3.32, smpi_request.cpp).
SMPI_ENVELOPE_BYTES = 16
#: Options that make SMPI model what commaware models (the eager threshold is added per run).
BASE_CFG = (
    "network/model:CM02",
    "network/crosstraffic:0",
    "network/optim:Full",
    "network/bandwidth-factor:1",
    "network/latency-factor:1",
    "network/weight-S:0",
    "smpi/bw-factor:0:1",
    "smpi/lat-factor:0:1",
    "smpi/os:0:0:0:0:0",
    "smpi/or:0:0:0:0:0",
    "smpi/ois:0:0:0:0:0",
    "surf/precision:1e-13",
)
#: The options of :data:`BASE_CFG` that are not SMPI's timing model: with these alone, SMPI runs
#: with its default network model (``network/model:SMPI``, which smpirun sets: CM02 sharing
#: with SMPI's piecewise ``smpi/bw-factor`` and ``smpi/lat-factor`` and ``network/weight-S``
#: 8775), its default ``smpi/os``, ``smpi/or``, ``smpi/ois``, protocol and collective
#: selector: what commaware's ``network.smpi: "simgrid-3.32"`` models (docs/formats.md, "SMPI's
#: timing model"). Crosstraffic stays off: the platforms :func:`platform_xml` writes are
#: commaware's star, whose solver does not model it (the preset turns it on on topologies).
DEFAULT_TIMING_CFG = (
    "network/crosstraffic:0",
    "network/optim:Full",
    "surf/precision:1e-13",
)


class SmpiError(RuntimeError):
    """smpirun is missing, the replay program does not build, or the replay failed."""


@dataclass(frozen=True)
class SmpiRun:
    makespan: float
    rank_ends: list[float]
    command: list[str]
    output: str


def _which(name: str) -> str | None:
    return shutil.which(name)


@functools.lru_cache(maxsize=1)
def smpi_available() -> tuple[bool, str]:
    """Whether smpirun and smpicxx are here and the replay program builds, with the reason if not."""
    for tool in ("smpirun", "smpicxx"):
        if _which(tool) is None:
            return False, f"{tool} not found ({INSTALL_HINT})"
    try:
        build_replay()
    except SmpiError as exc:
        return False, str(exc)
    return True, ""


def build_replay() -> Path:
    """Compile :data:`REPLAY_SOURCE` with smpicxx into the cache (:func:`peer_build.build_peer`)."""
    return _build(REPLAY_SOURCE, "smpicxx", ["-std=c++17"])


def _build(source: Path, compiler_name: str, flags: list[str]) -> Path:
    """Compile `source` with SimGrid's `compiler_name` (smpicc, smpicxx) and ``-O1 FLAGS`` into the
    cache unless it is there already."""
    return build_peer(source, compiler_name, ["-O1", *flags], error=SmpiError, hint=INSTALL_HINT)


def trace_program(source: str | Path, n_ranks: int, platform: dict[str, Any], out_dir: str | Path,
                  timeout: float = 300) -> Path:
    """Build the C MPI program `source` with smpicc, run it on `n_ranks` ranks of `platform` (rank
    i on host i) under ``smpirun -trace-ti``, and return the trace's index file in `out_dir`.

    ``smpi/host-speed`` is the first host's speed, so that a compute burst's flops in the trace
    replay on that host in the time the burst took here."""
    return _run_traced(source, n_ranks, platform, out_dir, [], [], timeout)[0]


def trace_binary(program: str | Path, n_ranks: int, platform: dict[str, Any], out_dir: str | Path,
                 timeout: float = 300) -> Path:
    """:func:`trace_program` for a program already built with SMPI's compilers (NPB's, say)."""
    return _run_traced(program, n_ranks, platform, out_dir, [], [], timeout, built=True)[0]


def run_program(source: str | Path, n_ranks: int, platform: dict[str, Any], out_dir: str | Path, *,
                args: Sequence[str] = (), collectives: dict[str, str] | None = None,
                timeout: float = 300, per_host: int = 1,
                host_of: Sequence[int] | None = None) -> tuple[Path, SmpiRun]:
    """SMPI's own simulation of the C MPI program `source` (built with smpicc) on `n_ranks` ranks of
    `platform` with `args`, under the configuration :func:`run_smpi_replay` uses, traced with
    ``-trace-ti`` into `out_dir`: (the trace's index file, the run's rank end times).

    The run has ``smpi/simulate-computation:no`` (the program's own CPU time is not simulated,
    so the run is deterministic: its compute is what it asks for with ``smpi_execute_flops``)
    and ``smpi/wtime:0``; each rank must print ``COMMAWARE_RANK_END RANK TIME`` (MPI_Wtime, 17
    digits) when it is done. This is the reference for what SMPI's replay cannot replay. With
    `per_host`, ranks i·per_host … (i + 1)·per_host − 1 run on host i, which has that many cores;
    with `host_of`, rank i runs on host ``host_of[i]`` (each host with per_host cores)."""
    cfg = [*_model_cfg(platform, collectives), "smpi/simulate-computation:no", "smpi/wtime:0"]
    return _run_traced(source, n_ranks, platform, out_dir, list(args), cfg, timeout, per_host, host_of)


def _run_traced(source: str | Path, n_ranks: int, platform: dict[str, Any], out_dir: str | Path, args: list[str],
                cfg: list[str], timeout: float, per_host: int = 1,
                host_of: Sequence[int] | None = None, built: bool = False) -> tuple[Path, SmpiRun]:
    """Build `source` (unless `built`: it is the program) and run it under ``smpirun -trace-ti``
    with `cfg`: the index file, and the rank end times the program printed
    (``COMMAWARE_RANK_END``; empty if it printed none)."""
    program = Path(source).resolve() if built else _build(Path(source), "smpicc", [])
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    xml, hostfile, hosts = _write_platform(out_dir, platform, n_ranks, per_host, host_of)
    cmd = ["smpirun", "-np", str(n_ranks), "-platform", xml.name, "-hostfile", hostfile.name, "-trace-ti",
           "--cfg=tracing/filename:ti.txt", f"--cfg=smpi/host-speed:{hosts[0]['speed']!r}f",
           *(f"--cfg={c}" for c in cfg), "--log=root.thres:warning", str(program), *args]
    try:
        proc = subprocess.run(cmd, cwd=out_dir, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SmpiError(f"smpirun -trace-ti did not finish within {timeout} s") from None
    index = out_dir / "ti.txt"
    if proc.returncode != 0 or not index.is_file():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise SmpiError(f"smpirun -trace-ti failed (exit code {proc.returncode}):\n{tail}")
    ends = {int(m.group(1)): float(m.group(2)) for m in _END.finditer(proc.stdout)}
    rank_ends = [ends[r] for r in range(n_ranks)] if len(ends) == n_ranks else []
    return index, SmpiRun(makespan=max(rank_ends, default=0.0), rank_ends=rank_ends, command=cmd,
                          output=proc.stdout + proc.stderr)


def _model_cfg(platform: dict[str, Any], collectives: dict[str, str] | None,
               smpi_timing: Sequence[str] | None = None) -> list[str]:
    """The options that make SMPI model what commaware models on `platform` (module docstring),
    with the algorithms `collectives`. With `smpi_timing` (a list, maybe empty, of options such
    as ``smpi/os:...``), SMPI keeps smpirun's defaults (:data:`DEFAULT_TIMING_CFG`), what
    commaware's ``simgrid-3.32`` preset models, under those options: its timing model, its
    protocol (``smpi/async-small-thresh`` 0, ``smpi/test`` 1e-4 s growing) but for the fields
    `platform` gives itself (``eager_threshold``, ``test_seconds``), and its collective
    selector but for `collectives`."""
    net = platform["network"]
    named = [f"smpi/{coll}:{algo}" for coll, algo in (collectives or {}).items()]
    # MPI_Test sleeps smpi/test before it looks; with grow-injected-times (the default) the
    # sleep grows with every failed test of any rank: off, so a test costs test_seconds.
    flat_test = ["smpi/test:" + repr(float(net.get("test_seconds", 0.0))), "smpi/grow-injected-times:no"]
    if smpi_timing is None:
        eager = int(net.get("eager_threshold", 65536))
        return [*BASE_CFG, f"smpi/send-is-detached-thresh:{eager}", f"smpi/async-small-thresh:{eager}", *flat_test, *named]
    own = [*(["smpi/send-is-detached-thresh:" + str(int(net["eager_threshold"]))] if "eager_threshold" in net else []),
           *(flat_test if "test_seconds" in net else [])]
    return [*DEFAULT_TIMING_CFG, *smpi_timing, *own, *named]


def _write_platform(directory: Path, platform: dict[str, Any], n_ranks: int,
                    per_host: int = 1, host_of: Sequence[int] | None = None) -> tuple[Path, Path, list[dict[str, Any]]]:
    """SMPI's platform XML and hostfile (rank i on host i, on host i // per_host, or on host
    host_of[i], each host with per_host cores) for `platform` in `directory`, and the hosts; too
    few hosts is an error."""
    host_of = list(host_of) if host_of is not None else [r // per_host for r in range(n_ranks)]
    hosts = _hosts(platform)
    if n_ranks > len(hosts) * per_host:
        raise SmpiError(f"{n_ranks} ranks but the platform has {len(hosts)} hosts of {per_host} ranks")
    xml, hostfile = directory / "platform.xml", directory / "hostfile"
    text = platform_xml(platform)
    xml.write_text(text if per_host == 1 else text.replace("<host id=", f'<host core="{per_host}" id='))
    hostfile.write_text("".join(f"{hosts[host_of[r]]['name']}\n" for r in range(n_ranks)))
    return xml, hostfile, hosts


def _hosts(platform: dict[str, Any]) -> list[dict[str, Any]]:
    """Every host of a platform JSON document with its speed and NIC bandwidths."""
    net = platform["network"]
    if "cluster" in platform:
        c = platform["cluster"]
        hosts = [{"name": f"{c.get('prefix', 'n')}{i}", "speed": c["speed"]} for i in range(c["count"])]
    else:
        hosts = [dict(h) for h in platform["hosts"]]
    by_name = {h["name"]: h for h in hosts}
    for name, changes in platform.get("overrides", {}).items():
        by_name[name].update(changes)
    for h in hosts:
        h.setdefault("bandwidth_up", net["bandwidth"])
        h.setdefault("bandwidth_down", net["bandwidth"])
    return hosts


def platform_xml(platform: dict[str, Any]) -> str:
    """SimGrid platform XML (version 4.1, one Full-routing zone) of a commaware platform JSON
    document: every route between two hosts crosses the source's up-link, the backbone if any,
    and the destination's down-link, each with half the one-way latency on the NIC links; a
    host's route to itself is its loopback link (memory bandwidth and latency, SHARED)."""
    net = platform["network"]
    for key in ("send_overhead", "recv_overhead", "send_overhead_per_byte", "recv_overhead_per_byte"):
        if net.get(key):
            raise ValueError(f"network.{key} has no SMPI equivalent here: the comparison needs overheads 0")
    if net.get("model", "maxmin") != "maxmin":
        raise ValueError("only the maxmin model is SimGrid's CM02")
    latency = float(net.get("latency", 0.0))
    mem_bw = float(net.get("memory_bandwidth", net["bandwidth"]))
    mem_lat = float(net.get("memory_latency", 0.0))
    hosts = _hosts(platform)
    lines = ['<?xml version="1.0"?>', '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">', '<zone id="commaware" routing="Full">']
    for h in hosts:
        n = h["name"]
        lines.append(f'  <host id={quoteattr(n)} speed="{float(h["speed"])!r}f"/>')
        lines.append(f'  <link id={quoteattr(n + "_up")} bandwidth="{float(h["bandwidth_up"])!r}Bps" latency="{latency / 2!r}s"/>')
        lines.append(f'  <link id={quoteattr(n + "_down")} bandwidth="{float(h["bandwidth_down"])!r}Bps" latency="{latency / 2!r}s"/>')
        lines.append(f'  <link id={quoteattr(n + "_loopback")} bandwidth="{mem_bw!r}Bps" latency="{mem_lat!r}s"/>')
    if net.get("backbone"):
        lines.append(f'  <link id="backbone" bandwidth="{float(net["backbone"])!r}Bps" latency="0s"/>')
    for a in hosts:
        for b in hosts:
            if a is b:
                links = [a["name"] + "_loopback"]
            else:
                links = [a["name"] + "_up", *(["backbone"] if net.get("backbone") else []), b["name"] + "_down"]
            ctn = "".join(f"<link_ctn id={quoteattr(link)}/>" for link in links)
            lines.append(f'  <route src={quoteattr(a["name"])} dst={quoteattr(b["name"])} symmetrical="NO">{ctn}</route>')
    lines += ["</zone>", "</platform>", ""]
    return "\n".join(lines)


_END = re.compile(r"COMMAWARE_RANK_END (\d+) (\S+)")


def topology_platform(count: int, topology: dict[str, Any]) -> dict[str, Any]:
    """A commaware platform of `count` 1 Gflop/s hosts on `topology`, 1 Gbit/s links of 20 µs,
    and a loopback link per host: SimGrid routes a host's message to itself over it (a torus
    without one has no route from a host to itself in SimGrid)."""
    topology = {**topology, "loopback": {"bandwidth": 5e9, "latency": 1e-6}}
    return {"cluster": {"count": count, "speed": 1e9, "prefix": "node-"},
            "network": {"bandwidth": 1.25e8, "latency": 2e-5, "topology": topology}}


#: The fabrics the SMPI agreement checks on topologies use (tests/engine/
#: test_smpi_replay_topologies.py, benches/bench_smpi_defaults.py), written to SimGrid files by
#: ``commaware platform export``.
TOPOLOGY_PLATFORMS = {
    # 2;4,2;1,2: 8 hosts, 2 edge switches, 2 top switches, 2 parallel cables up each: routes of
    # 2 and 4 links (unequal latencies: CM02's weighting shows).
    "fat_tree_8": topology_platform(8, {"kind": "fat_tree", "id": "ft", "down": [4, 2], "up": [1, 2],
                                        "parallel": [1, 2]}),
    # 3x3 torus: routes of 1 to 4 hops (dimension order, the shorter way round).
    "torus_9": topology_platform(9, {"kind": "torus", "id": "tor", "dims": [3, 3]}),
    # 3 groups of 1 chassis of 3 routers of 2 nodes (SimGrid wants a group's routers to number
    # at least its groups).
    "dragonfly_18": topology_platform(18, {"kind": "dragonfly", "id": "df", "groups": [3, 1], "chassis": [1, 1],
                                           "routers": [3, 1], "nodes": 2}),
}


def with_config(xml: str, settings: dict[str, str]) -> str:
    """The SimGrid platform file `xml` (version 4.1) with a ``<config>`` of `settings` first."""
    config = "<config>" + "".join(f"<prop id={quoteattr(k)} value={quoteattr(v)}/>" for k, v in settings.items())
    head, sep, tail = xml.partition('<platform version="4.1">')
    if not sep:
        raise SmpiError("not a SimGrid 4.1 platform file: no <platform version=\"4.1\">")
    return f"{head}{sep}\n{config}</config>{tail}"


def default_algorithms(n: int) -> dict[str, str]:
    """For each collective, SMPI's algorithm that is commaware's default on `n` ranks (gatherv
    and scatterv: SMPI's only one, nothing to select; scan and exscan: see :data:`SCAN_COLL`).
    Pairwise alltoall pairs r XOR i on a power of two (SimGrid's `pair`) and r ± i otherwise
    (SimGrid's `ring`); SimGrid's alltoallv `ring` is that exchange for every count."""
    pairwise = "pair" if n & (n - 1) == 0 else "ring"
    return {"bcast": "binomial_tree", "reduce": "binomial", "allreduce": "rdb", "gather": "ompi_binomial",
            "scatter": "ompi_binomial", "allgather": "NTSLR", "allgatherv": "mpich_ring", "alltoall": pairwise,
            "alltoallv": "ring", "reduce_scatter": "mpich_pair", "barrier": "ompi_bruck"}


#: SimGrid's scan and exscan, which it does not let one select: commaware's `--coll` for them.
SCAN_COLL = "scan=linear,exscan=linear"


def run_smpi_replay(platform: dict[str, Any], index: str | Path, *, collectives: dict[str, str] | None = None,
                    extra_cfg: Sequence[str] = (), smpi_timing: Sequence[str] | None = None,
                    platform_file: str | Path | None = None, host_names: Sequence[str] = (),
                    bare: bool = False, timeout: float = 300) -> SmpiRun:
    """Replay the TI trace of `index` (an index file listing one file per rank, paths relative to
    its directory) in SMPI on `platform` (a commaware platform JSON document), rank i on host i;
    `collectives` selects SMPI's algorithms (e.g. ``{"bcast": "binomial_tree"}``); `smpi_timing`
    keeps SMPI's default timing model under those options (:func:`_model_cfg`).

    With `platform_file` (a SimGrid platform XML, e.g. a topology written by ``commaware
    platform export``) SMPI loads that file instead of :func:`platform_xml` of `platform`, and
    rank i runs on ``host_names[i]``; `platform` then only gives the MPI settings (eager
    threshold, ``test_seconds``).

    `bare` runs smpirun as users run it: no option but ``network/optim:Full`` (exact per-flow
    times), the `collectives` named and `extra_cfg`; smpirun's defaults and the platform file's
    ``<config>`` give everything else (`platform` is then unused)."""
    if _which("smpirun") is None:
        raise SmpiError(f"smpirun not found ({INSTALL_HINT})")
    program = build_replay()
    index = Path(index).resolve()
    n_ranks = sum(1 for line in index.read_text().splitlines() if line.strip())
    with tempfile.TemporaryDirectory(prefix="commaware-smpi-") as tmp:
        if platform_file is None:
            xml, hostfile, _ = _write_platform(Path(tmp), platform, n_ranks)
        else:
            if len(host_names) < n_ranks:
                raise SmpiError(f"{n_ranks} ranks but {len(host_names)} host names")
            xml, hostfile = Path(platform_file).resolve(), Path(tmp) / "hostfile"
            hostfile.write_text("".join(f"{h}\n" for h in host_names[:n_ranks]))
        if bare:
            cfg = ["network/optim:Full", *(f"smpi/{c}:{a}" for c, a in (collectives or {}).items()), *extra_cfg]
        else:
            cfg = [*_model_cfg(platform, collectives, smpi_timing), *extra_cfg]
        cmd = ["smpirun", "-np", str(n_ranks), "-platform", str(xml), "-hostfile", str(hostfile),
               "-replay", str(index), *(f"--cfg={c}" for c in cfg), "--log=root.thres:warning", str(program)]
        try:
            # The rank files are named relative to the index: run from its directory.
            proc = subprocess.run(cmd, cwd=index.parent, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise SmpiError(f"smpirun did not finish within {timeout} s") from None
    output = proc.stdout + proc.stderr
    ends = {int(m.group(1)): float(m.group(2)) for m in _END.finditer(proc.stdout)}
    if proc.returncode != 0 or len(ends) != n_ranks:
        tail = "\n".join(output.strip().splitlines()[-15:])
        raise SmpiError(f"smpirun failed (exit code {proc.returncode}, {len(ends)} of {n_ranks} ranks ended):\n{tail}")
    rank_ends = [ends[r] for r in range(n_ranks)]
    return SmpiRun(makespan=max(rank_ends), rank_ends=rank_ends, command=cmd, output=output)


if __name__ == "__main__":  # a quick look: python tests/peers/smpi_replay.py PLATFORM.json INDEX [coll=algo...]
    import sys

    run = run_smpi_replay(json.loads(Path(sys.argv[1]).read_text()), sys.argv[2],
                          collectives=dict(a.split("=", 1) for a in sys.argv[3:]))
    print(json.dumps({"makespan": run.makespan, "rank_ends": run.rank_ends}))
