"""The commands a sweep can run (`commaware sweep`): each maps keyword parameters to one flat
row of scalar outputs through the public Python API.

A command declares its parameters (kind, default, allowed values, bounds) and its outputs
(kind), which give the spec's validation, the JSON Schema of docs/sweep.schema.json and the
Parquet columns of the results store. Parameters of kind `file` are paths, relative to the
spec file; their content is hashed into the run's id.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .. import _core

#: A value that must be given (a parameter without default).
REQUIRED: Any = type("Required", (), {"__repr__": lambda self: "REQUIRED"})()

#: Kinds of parameters and outputs, and their JSON Schema types.
JSON_TYPES = {"int": "integer", "float": "number", "str": "string", "bool": "boolean", "file": "string"}


@dataclass(frozen=True)
class Param:
    """One parameter: `kind` is int, float, str, bool or file; `default` None means optional."""

    name: str
    kind: str
    default: Any = REQUIRED
    help: str = ""
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class Command:
    """A sweepable command: its parameters, its outputs (name -> kind) and the function."""

    name: str
    help: str
    params: tuple[Param, ...]
    outputs: dict[str, str]
    function: Callable[..., dict[str, Any]]

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


SEED = Param("seed", "int", 0, "Seed of every random draw of the run.", minimum=0, maximum=2**63 - 1)


def _simulate(platform: str, trace: str, format: str, model: str | None, placement: str, seed: int,
              coll: str | None, derived_datatype_bytes: float | None, hostfile: str | None = None,
              traced_speed: float | None = None, routing: str | None = None,
              routing_seed: int | None = None) -> dict[str, Any]:
    from ..api import load_trace, simulate

    loaded = load_trace(trace, format=format, derived_datatype_bytes=derived_datatype_bytes, traced_speed=traced_speed)
    result = simulate(platform, loaded,
                      model=model, placement=placement, seed=seed, record_messages=False, record_timeline=False, coll=coll,
                      hostfile=hostfile, routing=routing, routing_seed=routing_seed)
    stats = result.message_stats
    return {"makespan": result.makespan, "model_used": result.model, "messages": int(stats["count"]),
            "bytes": float(stats["bytes"]), "mean_message_s": float(stats["mean_seconds"]),
            "max_message_s": float(stats["max_seconds"]), "derived_datatype_ops": result.derived_datatype_ops}


def _cosched(workload: str | None, jobs: int, interarrival_s: float, classes: str, mix: str, policy: str,
             processors: int, allocation: str, mpl: int | None, seed: int, platform: str | None = None,
             pattern: str | None = None, routing: str | None = None, routing_seed: int | None = None) -> dict[str, Any]:
    from .. import cosched

    w = (cosched.load_workload(workload) if workload is not None else
         cosched.nas_workload(jobs, interarrival_s, seed, [c.strip().upper() for c in classes.split(",") if c.strip()], mix))
    if platform is not None:
        run = cosched.run_on_platform(w, platform, policy, "contiguous" if allocation == "packing" else allocation, seed,
                                      pattern=pattern, routing=routing, routing_seed=routing_seed,
                                      trace_dir=Path(workload).parent if workload is not None else None)
    else:
        run = cosched.run(w, policy, processors=processors, allocation=allocation, mpl=mpl, seed=seed, pattern=pattern)
    row: dict[str, Any] = {("jobs_done" if k == "jobs" else k): v for k, v in run.summary.items()}
    row["jobs_done"] = int(row["jobs_done"])
    row["skipped"] = int(run.skipped["total"])
    doc = run.to_dict() if platform is not None else {}
    row["avg_slowdown"] = doc.get("avg_slowdown")
    row["bytes"] = doc.get("bytes")
    return row


def _tiling(space: str, procs: str, tile_height: int, t_c: float, platform: str | None, model: str | None,
            sci: bool, simulate: bool, mapping: int | None) -> dict[str, Any]:
    from .. import tiling

    doc = tiling.analyze(tiling.parse_dims(space, "space"), tiling.parse_dims(procs, "procs"), tile_height, t_c=t_c,
                         platform=platform, model=model, sci=sci, simulate=simulate, mapping=mapping)
    return {name: doc.get("model" if name == "model_used" else name) for name in TILING_OUTPUTS}


TILING_OUTPUTS = {"P_block": "int", "P_overlap": "int", "tile_points": "float", "t_comp": "float", "t_comm": "float",
                  "t_comm_block": "float", "T_block": "float", "T_overlap": "float", "T_sci": "float",
                  "sim_block": "float", "sim_overlap": "float", "sim_block_max_compute": "float",
                  "sim_overlap_max_compute": "float", "model_used": "str"}


def _multicast(instance: str | None, nodes: int, pattern: str, sizes: str, network: str, algorithm: str, seed: int,
               execute: str | None) -> dict[str, Any]:
    from .. import multicast

    inst = (multicast.load_instance(instance) if instance is not None else
            multicast.generate(nodes, pattern, sizes, network, seed=seed))
    sched = multicast.schedule(inst, algorithm, seed=seed)
    bound = sched.lower_bound
    return {"completion_time": sched.completion_time, "lower_bound": bound,
            "ratio": sched.completion_time / bound if bound > 0 else None, "selections": sched.n_selections,
            "makespan": multicast.execute(inst, sched, execute).makespan if execute else None}


def _penalties(scheme: str, model: str) -> dict[str, Any]:
    from ..sharing import penalties

    values = penalties(scheme, model).penalties
    return {"comms": len(values), "mean_penalty": sum(values) / len(values) if values else None,
            "min_penalty": min(values, default=None), "max_penalty": max(values, default=None)}


def _taskfarm(tree: str | None, send_mb: float, diagonals: float, algorithm: str, tasks: int, hold: int,
              cutoff: bool) -> dict[str, Any]:
    from ..taskfarm import taskfarm, testbed_table4

    report = taskfarm(tree if tree is not None else testbed_table4(send_mb, diagonals), algorithm, tasks, hold, cutoff)
    return {"makespan": report.makespan, "throughput": report.throughput, "bound": report.bound,
            "gap": report.gap, "transfers": report.transfers}


def _commands() -> dict[str, Command]:
    from ..api import TRACE_FORMATS
    from ..cosched import ALLOCATIONS, MIXES, PLATFORM_ALLOCATIONS, POLICIES
    from ..multicast import ALGORITHMS as MULTICAST_ALGORITHMS
    from ..multicast import NETWORKS, PATTERNS, SIZES
    from ..sharing import SCHEME_MODELS
    from ..taskfarm import ALGORITHMS as FARM_ALGORITHMS
    from ..tiling import T_C_FAST_ETHERNET

    models = tuple(_core.sharing_models())
    model = Param("model", "str", None, "Sharing model (default: the platform's).", choices=models)
    routing = (Param("routing", "str", None, "How flows pick their routes on the topology (default: the platform's "
                     "network.routing, else minimal); docs/routing.md.", choices=tuple(_core.routings())),
               Param("routing_seed", "int", None, "Seed of the routing's draws and hashes (default: the platform's "
                     "network.routing_seed, else 0).", minimum=0, maximum=2**63 - 1))
    commands = [
        Command("simulate", "Replay a trace on a platform (commaware.simulate).", (
            Param("platform", "file", help="Platform file (JSON or TOML)."),
            Param("trace", "file", help="Trace file or directory."),
            Param("format", "str", "auto", "Trace format.", choices=tuple(TRACE_FORMATS)),
            model,
            Param("placement", "str", "explicit", "Ranks onto hosts.", choices=tuple(_core.placements())),
            Param("hostfile", "file", None, "SMPI hostfile (host or host:slots a line): rank i on the i-th slot."),
            SEED,
            Param("coll", "str", None, "Collective algorithms, e.g. `mpich` or `bcast=binomial`."),
            Param("derived_datatype_bytes", "float", None, "Bytes per element of a TI trace's derived datatype "
                  "(id -1; default 0, as SimGrid's replay reads it).", minimum=0, maximum=2**31 - 1),
            Param("traced_speed", "float", None, "OTF2 and DUMPI traces: the traced machine's flops/s; compute "
                  "between MPI calls becomes flops at it (default: kept as seconds)."),
            *routing,
        ), {"makespan": "float", "model_used": "str", "messages": "int", "bytes": "float", "mean_message_s": "float",
            "max_message_s": "float", "derived_datatype_ops": "int"}, _simulate),
        Command("cosched.run", "Schedule a job workload (a file, or a seeded NAS workload) under a policy "
                "(commaware.cosched.run).", (
            Param("workload", "file", None, "Workload file (JSON or SWF); default: a generated NAS workload."),
            Param("jobs", "int", 100, "Jobs of the generated workload.", minimum=1),
            Param("interarrival_s", "float", 100.0, "Mean inter-arrival time of the generated workload, s.", minimum=0),
            Param("classes", "str", "A,B", "Problem classes of the generated workload, comma-separated (A, B, C)."),
            Param("mix", "str", "nas", "Benchmark mix of the generated workload.", choices=MIXES),
            Param("policy", "str", "batch", "Scheduling policy (with a platform: a batch policy or explicit).",
                  choices=(*POLICIES, "explicit")),
            Param("processors", "int", 16, "Nodes of the cluster (1 CPU each; not with a platform).", minimum=1,
                  maximum=2**24),
            Param("allocation", "str", "packing", "Node allocation (time-sharing policies; with a platform, its "
                  "cores: contiguous, random, compact, spread).",
                  choices=(*ALLOCATIONS, *(a for a in PLATFORM_ALLOCATIONS if a not in ALLOCATIONS))),
            Param("mpl", "int", None, "Most processes per node (time-sharing; default 3).", minimum=1, maximum=64),
            Param("seed", "int", 0, "Seed of the generated workload and of the random allocation.", minimum=0,
                  maximum=2**63 - 1),
            Param("platform", "file", None, "Run every job's program on this platform, jobs sharing its network "
                  "(as cosched run --platform)."),
            Param("pattern", "str", None, "With a platform: the program of jobs without one, e.g. "
                  "`halo2d:bytes=65536,iterations=10`."),
            *routing,
        ), {"jobs_done": "int", "avg_wait_s": "float", "avg_response_s": "float", "avg_exec_s": "float",
            "avg_bounded_slowdown": "float", "max_wait_s": "float", "total_time_s": "float", "utilization": "float",
            "energy_busy_j": "float", "energy_idle_j": "float", "energy_j": "float", "skipped": "int",
            "avg_slowdown": "float", "bytes": "float"}, _cosched),
        Command("tiling.analyze", "One tile height of a tiled loop: formulas and simulated programs "
                "(commaware.tiling.analyze).", (
            Param("space", "str", help="Iteration space, e.g. 16x16x16384 (K = 2^10, M = 2^20)."),
            Param("procs", "str", help="Processor grid, e.g. 4x4."),
            Param("tile_height", "int", help="Tile height along the mapping dimension.", minimum=1),
            Param("t_c", "float", T_C_FAST_ETHERNET, "Compute time of one point, s.", minimum=0),
            Param("platform", "file", None, "Platform file (default: the assumed FastEthernet cluster)."),
            model,
            Param("sci", "bool", False, "Also eq. (7), the SCI model."),
            Param("simulate", "bool", True, "Also run both programs on the engine."),
            Param("mapping", "int", None, "Mapping dimension, 0-based (default: the largest).", minimum=0),
        ), TILING_OUTPUTS, _tiling),
        Command("multicast", "Schedule multiple multicasts (an instance file, or a generated one) "
                "(commaware.multicast.schedule).", (
            Param("instance", "file", None, "Instance file; default: a generated instance."),
            Param("nodes", "int", 16, "Nodes of the generated instance.", minimum=2),
            Param("pattern", "str", "all_to_all", "Pattern of the generated instance.", choices=PATTERNS),
            Param("sizes", "str", "small", "Message sizes of the generated instance.", choices=SIZES),
            Param("network", "str", "fast", "Network of the generated instance.", choices=NETWORKS),
            Param("algorithm", "str", "ecf", "Scheduling algorithm.", choices=tuple(MULTICAST_ALGORITHMS)),
            Param("seed", "int", 0, "Seed of the generated instance and of RRS/RRSP.", minimum=0, maximum=2**63 - 1),
            Param("execute", "str", None, "Also replay the schedule on the engine with this sharing model.",
                  choices=models),
        ), {"completion_time": "float", "lower_bound": "float", "ratio": "float", "selections": "int",
            "makespan": "float"}, _multicast),
        Command("penalties", "Bandwidth-sharing penalties of a communication scheme (commaware.sharing.penalties).", (
            Param("scheme", "file", help="Scheme file (JSON)."),
            Param("model", "str", "gige", "Penalty model.", choices=SCHEME_MODELS),
        ), {"comms": "int", "mean_penalty": "float", "min_penalty": "float", "max_penalty": "float"}, _penalties),
        Command("taskfarm", "Farm independent tasks on a tree (a file, or the testbed of Table 4) "
                "(commaware.taskfarm.taskfarm).", (
            Param("tree", "file", None, "Tree file (JSON); default: the testbed of Table 4."),
            Param("send_mb", "float", 2.0, "Task size of the testbed, MB.", minimum=0),
            Param("diagonals", "float", 5.0, "Diagonals per task of the testbed.", minimum=0),
            Param("algorithm", "str", "ia-multi", "Farming algorithm.", choices=FARM_ALGORITHMS),
            Param("tasks", "int", 1000, "Tasks to farm.", minimum=1),
            Param("hold", "int", 2, "Most tasks a child holds.", minimum=1),
            Param("cutoff", "bool", False, "Never send to a child with IR_s·Z·C_parent >= 1."),
        ), {"makespan": "float", "throughput": "float", "bound": "float", "gap": "float", "transfers": "int"},
            _taskfarm),
    ]
    return {c.name: c for c in commands}


_REGISTRY: dict[str, Command] | None = None


def commands() -> dict[str, Command]:
    """Every sweepable command by name (built on first use)."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _commands()
    return _REGISTRY


def file_params(command: Command) -> list[str]:
    return [p.name for p in command.params if p.kind == "file"]


def resolve(command: Command, params: dict[str, Any], base: Path) -> dict[str, Any]:
    """The keyword arguments of `command.function`: file parameters as paths from `base`."""
    return {name: str(base / value) if value is not None and command.param(name).kind == "file" else value  # type: ignore[union-attr]
            for name, value in params.items()}
