"""`commaware workload` and `commaware cosched` (paper 002: cluster job scheduling); see
`commaware.cosched`. Nothing heavy (numpy, pandas, pyarrow) is loaded unless a job table is
written.
"""

from __future__ import annotations

import re
from typing import NoReturn, Optional, Sequence

import click

from .. import _core
from .common import Progress, Table, err, fail, failing, out, routing_options

_POLICIES = list(_core.COSCHED_POLICIES)
_ALLOCATIONS = list(_core.COSCHED_ALLOCATIONS)
_PLATFORM_ALLOCATIONS = list(_core.FABRIC_ALLOCATIONS)
_PLATFORM_ONLY = [a for a in _PLATFORM_ALLOCATIONS if a not in _ALLOCATIONS]
_MIXES = list(_core.NAS_MIXES)
#: The paper's cluster: 16 single-processor nodes (§5.1).
DEFAULT_NODES = 16



def _parse_overrides(params: Sequence[str]) -> dict[str, float]:
    """`--param NAME=VALUE` entries as a dict (whole numbers stay ints); a bad one is exit 2."""
    overrides: dict[str, float] = {}
    for item in params:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            fail(f"--param: expected NAME=VALUE, got `{item}`")
        try:
            overrides[name.strip()] = float(value) if any(c in value for c in ".eE") else int(value)
        except ValueError:
            fail(f"--param {name.strip()}: not a number: `{value}`")
    return overrides


def _fail_option(exc: _core.OptionsError, options: set[str]) -> NoReturn:
    """A bad option or time-sharing parameter found by the core: `--OPTION: reason` for one of
    `options` (processors is --nodes), else `--param NAME: reason`."""
    field = exc.field.split(".")[0] if exc.field else ""
    if field in options:
        fail(f"--{'nodes' if field == 'processors' else field}: {exc.reason}")
    fail(f"--param {exc.field}: {exc.reason}" if exc.field else str(exc))


@click.group("workload")
def workload_group() -> None:
    """Generate job workloads for `commaware cosched run` (paper 002)."""


@workload_group.command("nas")
@click.option("--jobs", type=int, default=100, show_default=True, help="Number of jobs.")
@click.option("--interarrival", type=float, default=100.0, show_default=True,
              help="Mean exponential inter-arrival time, s (paper: 100 heavy, 250 light, 500 long-running).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the generator, 0 to 2^64 - 1.")
@click.option("--classes", default="A,B", show_default=True,
              help="Problem classes to draw from, comma-separated among A, B, C (A and B fit at MPL 3 without swapping).")
@click.option("--mix", type=click.Choice(_MIXES), default="nas", show_default=True,
              help="nas: CG, IS, SP, MG, BT, LU, EP; long: sPPM, BlockSolve95, LU (Fig. 4); "
                   "table2: Table 2's ten class C configurations (Fig. 7).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the workload here instead of stdout.")
@click.option("--swf", "as_swf", is_flag=True, help="Write Standard Workload Format instead of JSON.")
def workload_nas_cmd(jobs: int, interarrival: float, seed: int, classes: str, mix: str, output: Optional[str],
                     as_swf: bool) -> None:
    """A seeded NAS-like workload calibrated to paper 002 (Tables 1 and 2), as JSON.

    Each job has a submit time, a process count (BT and SP: 4, 9, 16; the others 4, 8, 16),
    memory per process (MB = 2^20 bytes), its time alone (T16·16/p) and a program of phases
    (compute, exchanges, collectives with message sizes). docs/cosched.md says where every
    number comes from.

    \b
    Examples:
      commaware workload nas --jobs 100 --interarrival 100 --seed 1 > heavy.json
      commaware workload nas --jobs 20 --interarrival 500 --mix long --classes B,C
    """
    from ..output import deliver

    if not 0 <= seed < 2**64:
        fail(f"--seed: must be in 0..2^64 - 1, got {seed}")
    names = [c.strip().upper() for c in classes.split(",") if c.strip()]
    try:
        w = _core.nas_workload(jobs, interarrival, seed, names, mix)
    except _core.OptionsError as exc:
        fail(f"--{exc.field}: {exc.reason}" if exc.field else str(exc))
    text = w.to_swf() if as_swf else w.to_json()
    if output is None:
        click.echo(text)
        return

    def write(path) -> None:  # type: ignore[no-untyped-def]
        path.write_text(text + ("" if as_swf else "\n"))

    with failing(writing=output):
        deliver(write, output)


@click.group("cosched")
def cosched_group() -> None:
    """Cluster job scheduling (paper 002): run workloads under batch and time-sharing policies."""


def _swf_nodes(workload: str, header: list[str]) -> int:
    """The processors of an SWF log without --nodes: its `; MaxProcs:` header, in 1..2^24; a
    missing or bad one is exit 2 naming the header field and its line."""
    field = re.compile(r";\s*MaxProcs:\s*(.*?)\s*$")
    if not any(field.match(line) for line in header):
        fail(f"{workload}: the log has no `; MaxProcs:` header line: give --nodes (processors)")
    with open(workload, encoding="utf-8", errors="replace") as log:  # the header's line number
        for number, line in enumerate(log, 1):
            m = field.match(line)
            if m:
                break
    value = m.group(1) if m else ""
    if re.fullmatch(r"[0-9]{1,9}", value) and 1 <= int(value) <= 2**24:
        return int(value)
    fail(f"{workload}: line {number}: header MaxProcs: must be a whole number of processors in 1..2^24, "
         f"got {value!r}; or give --nodes")


@cosched_group.command("run")
@click.argument("workload", metavar="WORKLOAD(.json|.swf)", type=click.Path(dir_okay=False))
@click.option("--policy", type=click.Choice([*_POLICIES, "explicit"]), default="batch", show_default=True,
              help="batch: FCFS at MPL 1 (the paper's PBS); batch-easy: EASY backfilling; "
                   "batch-conservative: conservative backfilling; time-sharing (Linux 2.4 nodes): nls (local), "
                   "gang (Ousterhout matrix), dcs, sb, pb, cc, hybrid; with --platform, explicit: each job starts "
                   "at its start_s on its hosts (a schedule a real cluster ran).")
@click.option("--allocation", type=click.Choice([*_ALLOCATIONS, *_PLATFORM_ONLY]), default="packing",
              show_default=True,
              help="packing: contiguous nodes; random: seeded random nodes; memory-aware: packing, and a job waits "
                   "while its memory does not fit (900 MB per node). Batch: packing only; gang: not random. With "
                   "--platform: contiguous (= packing: free cores in the platform's host order), random, compact "
                   "(fewest switches: a leaf, then a pod; a router, chassis, then group) or spread (round-robin over "
                   "leaves or groups); docs/cosched.md says exactly.")
@click.option("--mpl", type=int, default=None,
              help="Most processes per node (time-sharing; default 3, §5.1). Batch policies run at MPL 1.")
@click.option("--nodes", type=int, default=None,
              help=f"Nodes of the cluster (1 CPU each; for batch, processors). Default: {DEFAULT_NODES} for a JSON "
                   "workload, the log's MaxProcs for an SWF log.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random allocation, 0 to 2^64 - 1.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Override a time-sharing parameter (repeatable), e.g. --param context_switch_s=5e-5; "
                   "the names, defaults and sources are in docs/cosched.md.")
@click.option("--platform", type=click.Path(dir_okay=False), default=None,
              help="Run every job's program on this platform (JSON/TOML, any topology, or a SimGrid file), all in one "
                   "engine so that jobs share the network; a job ends when its last rank ends (its runtime comes out "
                   "of the run). Batch policies; one process a core; a job without a program computes for its "
                   "logged runtime. Its network settings: --model, --coll, --smpi as in simulate.")
@click.option("--pattern", default=None, metavar="NAME[:bytes=B,iterations=N,compute=S]",
              help="With --platform: the program of every job without a program or trace (an SWF log's jobs), sized "
                   "by its processes: halo2d, halo3d, alltoall, allreduce or pairs (random pairs); bytes a message "
                   "(default 1 MiB), iterations (10), compute s before each exchange (0).")
@click.option("--alone/--no-alone", default=True, show_default=True,
              help="With --platform: also run each job alone on its hosts, for its alone_s and slowdown "
                   "(runtime / alone_s), unless it ran isolated (no message in flight while another "
                   "job's was: its runtime is its time alone).")
@click.option("--model", default=None, help="With --platform: the sharing model (default: the platform's).")
@click.option("--coll", default=None, metavar="SPEC", help="With --platform: collective algorithms, as simulate --coll.")
@click.option("--smpi", default=None, metavar="PRESET", help="With --platform: SMPI's timing model, as simulate --smpi.")
@routing_options
@click.option("--links", "links_file", type=click.Path(dir_okay=False), default=None,
              help="With --platform: write one row per link (bandwidth, bytes, busy_time, mean and peak utilisation, "
                   "peak_flows) over the whole run to a .parquet or .csv file, as simulate --links.")
@click.option("--link-plot", type=click.Path(dir_okay=False), default=None,
              help="With --platform: plot the most loaded links' utilisation against time (.svg or .png), as "
                   "simulate --link-plot.")
@click.option("--interference", "interference_file", type=click.Path(dir_okay=False), default=None,
              help="With --platform: write the interference table to a .parquet or .csv file: each pair of jobs that "
                   "ran at the same time on links both used (job_a, job_b, links, bytes_a, bytes_b: the bytes each "
                   "moved over those links); --json then adds it as `interference`.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: policy, allocation, mpl, processors, avg_wait_s, avg_response_s, avg_exec_s, "
                   "avg_bounded_slowdown, max_wait_s, total_time_s, utilization, energy_busy_j, energy_idle_j, "
                   "energy_j, skipped, jobs.")
@click.option("--jobs-csv", type=click.Path(dir_okay=False), default=None,
              help="Write Batsim's jobs.csv (the columns evalys reads) to this file.")
@click.option("--jobs-out", type=click.Path(dir_okay=False), default=None,
              help="Write the per-job table (id, procs, submit, runtime, requested, start, end, reserved, wait, "
                   "response, bounded_slowdown; with --platform also alone, slowdown, bytes) to a .parquet or .csv "
                   "file.")
@click.option("--timeline", type=click.Path(dir_okay=False), default=None, metavar="FILE.perfetto-trace",
              help="Write the schedule as a Perfetto trace (ui.perfetto.dev, in a browser): a track per host "
                   "(--platform), per node (time-sharing) or for the cluster (batch), lanes under it, a slice per job.")
def cosched_run_cmd(workload: str, policy: str, allocation: str, mpl: Optional[int], nodes: Optional[int], seed: int,
                    params: tuple[str, ...], platform: Optional[str], pattern: Optional[str], alone: bool,
                    model: Optional[str],
                    coll: Optional[str], smpi: Optional[str], links_file: Optional[str], link_plot: Optional[str],
                    interference_file: Optional[str], as_json: bool, jobs_csv: Optional[str],
                    jobs_out: Optional[str], timeline: Optional[str], routing: Optional[str],
                    routing_seed: Optional[int]) -> None:
    """Schedule WORKLOAD (JSON jobs, or a Standard Workload Format log: .swf) on a cluster.

    Batch policies space-share processors: at each instant all job ends are applied, then all
    arrivals (submit time, then id), then one scheduling pass; reservations use requested
    times; a job that runs past its request is not killed. Time-sharing policies run every
    job's phase program (compute, exchanges, collectives) on 1-CPU nodes scheduled by
    Linux 2.4's epoch scheduler, up to --mpl processes per node; jobs without a program (SWF)
    get the default profile (docs/cosched.md). Jobs larger than the cluster (and SWF jobs with
    a negative runtime) are skipped and counted.

    \b
    Examples:
      commaware workload nas --jobs 100 --seed 1 > w.json
      commaware cosched run w.json --policy batch-easy
      commaware cosched run w.json --policy hybrid --allocation packing --mpl 3 --json
      commaware cosched run UniLu-Gaia-2014-2.swf --policy batch-easy --json > gaia.json
      commaware cosched run w.json --policy batch-easy --platform examples/cluster16.json
      commaware cosched run w.json --platform examples/cluster16.json --interference pairs.csv --links links.csv
    """
    import json as _json
    from pathlib import Path

    from ..cosched import BATCH_POLICIES, JOB_FORMATS, CoschedRun, load_workload, run_on_platform
    from ..links import check_plot_path, check_table_path

    if jobs_out is not None and not jobs_out.lower().endswith(JOB_FORMATS):
        fail(f"--jobs-out: {jobs_out}: the job table must be .parquet or .csv")
    if timeline is not None and not timeline.lower().endswith((".perfetto-trace", ".pftrace")):
        fail(f"--timeline: {timeline}: a schedule timeline is a .perfetto-trace or .pftrace file")
    if interference_file is not None and not interference_file.lower().endswith(JOB_FORMATS):
        fail(f"--interference: {interference_file}: the interference table must be .parquet or .csv")
    for reason in (links_file and check_table_path(links_file), link_plot and check_plot_path(link_plot)):
        if reason:
            fail(reason)
    if nodes is not None and not 1 <= nodes <= 2**24:
        fail(f"--nodes: must be in 1..2^24, got {nodes}")
    if mpl is not None and not 1 <= mpl <= 64:
        fail(f"--mpl: must be in 1..64, got {mpl}")
    if not 0 <= seed < 2**64:
        fail(f"--seed: must be in 0..2^64 - 1, got {seed}")
    batch = policy in BATCH_POLICIES or policy == "explicit"
    if platform is None:
        if policy == "explicit":
            fail("--policy: explicit replays each job's start_s and hosts on a platform: give --platform")
        for name, value in (("--pattern", pattern), ("--model", model), ("--coll", coll), ("--smpi", smpi),
                            ("--routing", routing), ("--routing-seed", routing_seed),
                            ("--links", links_file), ("--link-plot", link_plot), ("--interference", interference_file)):
            if value is not None:
                fail(f"{name}: only with --platform (the network the jobs share)")
        if allocation in _PLATFORM_ONLY:
            fail(f"--allocation: {allocation} is for --platform (a topology's hosts); without one, packing allocates "
                 "contiguous nodes")
    else:
        if not batch:
            fail(f"--policy: {policy} does not run on a platform: the time-sharing policies' node model (Linux 2.4 "
                 "epochs, spinning, MPL) is not lowered onto the engine; use batch, batch-easy or batch-conservative")
        if nodes is not None:
            fail("--nodes: a platform gives the processors itself (one a core)")
        if allocation == "memory-aware":
            fail("--allocation: memory-aware does not run on a platform (no per-host memory is checked there); use "
                 f"{', '.join(_PLATFORM_ALLOCATIONS)}")
        allocation = "contiguous" if allocation == "packing" else allocation
    if batch and mpl not in (None, 1):
        fail(f"--mpl: batch policies run at MPL 1 (the paper's PBS), got {mpl}")
    if batch and platform is None and allocation != "packing":
        fail(f"--allocation: batch policies allocate with packing only (§5.1), got {allocation}")
    if policy == "gang" and allocation == "random":
        fail("--allocation: gang scheduling allocates with packing only (SCore's allocator, §5.1): "
             "use packing or memory-aware")
    overrides = _parse_overrides(params)
    with Progress("cosched run", plain=as_json, delay=1.0) as progress:
        progress.stage(f"loading {workload}")
        with failing():
            w = load_workload(workload)
        if platform is not None:
            from ..api import load_platform

            with failing():
                fabric = load_platform(platform)
            progress.stage(f"scheduling {len(w):,} jobs under {policy} on {platform}, every job's program on its network")
            with failing():
                run = run_on_platform(w, fabric, policy, allocation, seed, pattern=pattern, model=model, coll=coll,
                                      smpi=smpi, trace_dir=Path(workload).parent, alone=alone, routing=routing,
                                      routing_seed=routing_seed,
                                      link_stats=bool(links_file or link_plot),
                                      interference=interference_file is not None)
            nodes = run.processors
        else:
            if nodes is None:
                if w.is_swf:
                    nodes = _swf_nodes(workload, w.header)
                else:
                    nodes = DEFAULT_NODES
            progress.stage(f"scheduling {len(w):,} jobs under {policy} on {nodes} nodes")
            with failing():
                try:
                    run = CoschedRun(_core.cosched_run(w, policy, nodes, allocation, mpl, seed,
                                                       _json.dumps(overrides) if overrides else None))
                except _core.OptionsError as exc:
                    _fail_option(exc, {"mpl", "allocation", "policy", "nodes", "processors"})
    if jobs_out is not None:
        with failing(writing=jobs_out):
            run.write_jobs(jobs_out)
    if timeline is not None:
        with failing(writing=timeline):
            run.write_timeline(timeline, fabric.host_names if platform is not None else ())
    if jobs_csv is not None:
        with failing(writing=jobs_csv):
            run.write_jobs_csv(jobs_csv, Path(workload).stem)
    if interference_file is not None:
        with failing(writing=interference_file):
            run.write_interference(interference_file)
    if links_file is not None:
        from ..links import write_link_table

        with failing(writing=links_file):
            write_link_table(run, links_file)
    if link_plot is not None:
        from ..links import write_link_plot

        with failing(writing=link_plot):
            write_link_plot(run, link_plot, title=f"{Path(workload).name} on {Path(str(platform)).name} ({allocation})")
    if as_json:
        if platform is None:
            click.echo(run.to_json())
        else:  # the allocation a platform run used, and the platform
            doc = _json.loads(run.to_json())
            doc.update(allocation=allocation, platform=platform, engine_events=run.engine_events)
            click.echo(_json.dumps(doc, sort_keys=True, separators=(",", ":")))
        return
    s = run.summary
    skipped = run.skipped
    what = f"{policy} on {nodes} processors" + (f" of {platform} ({allocation}; runtimes from the network, a job "
                                                "past its request not killed)" if platform else "") if batch else \
        f"{policy}, {allocation}, MPL {mpl or 3}, on {nodes} nodes"
    out.print(f"[bold]{workload}[/]: {what}, {s['jobs']:,} jobs ({skipped['total']:,} skipped)",
              highlight=False, soft_wrap=True)
    table = Table(header_style="bold")
    for col in ("metric", "value"):
        table.add_column(col, justify="right" if col == "value" else "left")
    rows = [("mean wait (s)", f"{s['avg_wait_s']:.6g}"), ("mean response (s)", f"{s['avg_response_s']:.6g}"),
            ("mean execution (s)", f"{s['avg_exec_s']:.6g}"),
            ("mean bounded slowdown (τ = 10 s)", f"{s['avg_bounded_slowdown']:.6g}"),
            ("max wait (s)", f"{s['max_wait_s']:.6g}"), ("total time (s)", f"{s['total_time_s']:.6g}"),
            ("utilization", f"{s['utilization']:.4f}"),
            ("energy busy / idle / total (MJ)",
             f"{s['energy_busy_j'] / 1e6:.4g} / {s['energy_idle_j'] / 1e6:.4g} / {s['energy_j'] / 1e6:.4g}")]
    if platform is not None:
        cols = run.columns
        if alone:
            rows.append(("mean slowdown (runtime / alone)", f"{float(cols['slowdown'].mean()):.6g}"))
        rows.append(("bytes moved (all jobs)", f"{float(cols['bytes'].sum()):.6g}"))
    for name in ("negative_runtime", "no_procs", "no_submit", "too_large"):
        if skipped[name]:
            rows.append((f"skipped: {name.replace('_', ' ')}", f"{skipped[name]:,}"))
    for name, value in rows:
        table.add_row(name, value)
    out.print(table)
    if interference_file is not None:
        pairs = run.interference
        out.print(f"interference: {len(pairs):,} pairs of jobs ran at the same time on links both used", highlight=False,
                  soft_wrap=True)
        top = pairs.assign(bytes=pairs["bytes_a"] + pairs["bytes_b"]).nlargest(3, "bytes")
        for row in top.itertuples():
            out.print(f"  jobs {row.job_a} and {row.job_b}: {row.links} links, {row.bytes_a:.4g} + {row.bytes_b:.4g} "
                      "bytes over them", highlight=False, soft_wrap=True)
    if links_file or link_plot:
        from .common import print_busiest_links

        print_busiest_links(run)
    for path, what in ((jobs_out, "per-job table"), (jobs_csv, "Batsim jobs.csv"), (interference_file, "interference table"),
                       (links_file, "link table"), (link_plot, "link plot")):
        if path:
            out.print(f"{what}: {path}", highlight=False, soft_wrap=True)


@cosched_group.command("compare")
@click.argument("workload", metavar="[WORKLOAD(.json|.swf)]", required=False, type=click.Path(dir_okay=False))
@click.option("--nas-jobs", type=int, default=None,
              help="Instead of WORKLOAD: a fresh NAS-like workload of this many jobs per seed (`workload nas`).")
@click.option("--interarrival", type=float, default=100.0, show_default=True,
              help="With --nas-jobs: mean inter-arrival time, s (paper: 100 heavy, 250 light, 500 long-running).")
@click.option("--classes", default="A,B", show_default=True, help="With --nas-jobs: problem classes among A, B, C.")
@click.option("--mix", type=click.Choice(_MIXES), default="nas", show_default=True, help="With --nas-jobs: the mix.")
@click.option("--policies", default="all", show_default=True,
              help=f"Comma-separated policies, or all ({', '.join(_POLICIES)}).")
@click.option("--allocation", "allocations", default="packing", show_default=True,
              help="Comma-separated allocations for the time-sharing policies (packing, random, memory-aware); "
                   "batch runs with packing only, gang never random (§5.1).")
@click.option("--seeds", type=int, default=10, show_default=True,
              help="Number of seeds (workload generator with --nas-jobs, and random allocation).")
@click.option("--first-seed", type=int, default=0, show_default=True, help="The seeds are FIRST .. FIRST + SEEDS - 1.")
@click.option("--mpl", type=int, default=None, help="Most processes per node for time-sharing (default 3).")
@click.option("--nodes", type=int, default=None,
              help=f"Nodes (processors). Default: {DEFAULT_NODES} for JSON, the log's MaxProcs for SWF.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Override a time-sharing parameter (repeatable), as in `cosched run`.")
@click.option("--workers", type=int, default=None, help="Parallel runs (threads; default: the CPU count).")
@click.option("--platform", type=click.Path(dir_okay=False), default=None,
              help="Run the batch policies on this platform, jobs sharing its network (as cosched run --platform), "
                   "under each --allocation among contiguous, random, compact, spread; adds the mean slowdown "
                   "(runtime / alone), which --plot then shows.")
@click.option("--pattern", default=None, metavar="NAME[:KEY=VALUE,...]", help="With --platform: as in cosched run.")
@click.option("--model", default=None, help="With --platform: the sharing model.")
@click.option("--coll", default=None, metavar="SPEC", help="With --platform: collective algorithms.")
@click.option("--smpi", default=None, metavar="PRESET", help="With --platform: SMPI's timing model.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: setup, metrics, and rows (policy, allocation, and per metric mean, std, "
                   "min, max, per_seed).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Write a bar chart of mean response (wait + execution) per policy (.png, .svg, .pdf).")
@click.option("--quiet", is_flag=True, help="No progress on stderr (a bar on a terminal, else a line every 10 s).")
def cosched_compare_cmd(workload: Optional[str], nas_jobs: Optional[int], interarrival: float, classes: str, mix: str,
                        policies: str, allocations: str, seeds: int, first_seed: int, mpl: Optional[int],
                        nodes: Optional[int], params: tuple[str, ...], workers: Optional[int], platform: Optional[str],
                        pattern: Optional[str], model: Optional[str], coll: Optional[str], smpi: Optional[str],
                        as_json: bool, plot_path: Optional[str], quiet: bool) -> None:
    """Compare policies over seeds: mean response, wait and execution per policy (Fig. 3's shape).

    Give WORKLOAD (fixed; the seeds then vary only random allocation) or --nas-jobs N (a new
    NAS-like workload per seed). Runs go in parallel (threads: the core releases the GIL);
    the result is deterministic given the seeds. Each cell is the mean over seeds ± the
    sample standard deviation.

    \b
    Examples:
      commaware cosched compare --nas-jobs 100 --interarrival 100 --seeds 10 --allocation packing,random
      commaware cosched compare w.json --policies batch,gang,hybrid --seeds 1 --plot fig3.png
      commaware cosched compare w.json --platform ft.json --policies batch-easy \
          --allocation contiguous,random,compact,spread --seeds 3 --plot slowdown.png
    """
    import json as _json
    from pathlib import Path

    from ..cosched import ALLOCATIONS, BATCH_POLICIES, PLATFORM_ALLOCATIONS, POLICIES, compare, load_workload

    if platform is not None:
        if nodes is not None or mpl is not None or params:
            fail("--nodes, --mpl and --param do not apply with --platform (its cores are the processors)")
    else:
        for name, value in (("--pattern", pattern), ("--model", model), ("--coll", coll), ("--smpi", smpi)):
            if value is not None:
                fail(f"{name}: only with --platform")

    if (workload is None) == (nas_jobs is None):
        fail("give either WORKLOAD or --nas-jobs N (not both)")
    if nas_jobs is not None and nas_jobs < 1:
        fail(f"--nas-jobs: must be at least 1, got {nas_jobs}")
    if not 1 <= seeds <= 10_000:
        fail(f"--seeds: must be in 1..10000, got {seeds}")
    if not 0 <= first_seed <= 2**64 - seeds:
        fail(f"--first-seed: must be in 0..2^64 - SEEDS, got {first_seed}")
    if nodes is not None and not 1 <= nodes <= 2**24:
        fail(f"--nodes: must be in 1..2^24, got {nodes}")
    if mpl is not None and not 1 <= mpl <= 64:
        fail(f"--mpl: must be in 1..64, got {mpl}")
    if workers is not None and workers < 1:
        fail(f"--workers: must be at least 1, got {workers}")
    if not interarrival > 0 or interarrival != interarrival or interarrival == float("inf"):
        fail(f"--interarrival: must be a positive finite number, got {interarrival}")
    known_policies = BATCH_POLICIES if platform is not None else POLICIES
    known_allocations = ("packing", *PLATFORM_ALLOCATIONS) if platform is not None else ALLOCATIONS
    pols = list(known_policies) if policies.strip() == "all" else [p.strip() for p in policies.split(",") if p.strip()]
    for p in pols:
        if p not in known_policies:
            fail(f"--policies: unknown policy `{p}`{' on a platform' if platform else ''} "
                 f"(known: {', '.join(known_policies)}, all)")
    if not pols:
        fail("--policies: no policy given")
    allocs = [a.strip() for a in allocations.split(",") if a.strip()]
    for a in allocs:
        if a not in known_allocations:
            fail(f"--allocation: unknown allocation `{a}` (known: {', '.join(known_allocations)})")
    if not allocs:
        fail("--allocation: no allocation given")
    if plot_path is not None and Path(plot_path).suffix.lower() not in (".png", ".svg", ".pdf"):
        fail(f"--plot: {plot_path}: the chart must be .png, .svg or .pdf")
    overrides = _parse_overrides(params)
    class_list = [c.strip().upper() for c in classes.split(",") if c.strip()]
    source = None
    if workload is not None:
        with failing():
            source = load_workload(workload)
        if nodes is None:
            nodes = _swf_nodes(workload, source.header) if source.is_swf else DEFAULT_NODES
    with failing(), Progress("cosched compare", quiet=quiet, plain=as_json, unit="runs") as progress:
        try:
            comparison = compare(source, nas_jobs=nas_jobs, interarrival=interarrival, classes=class_list, mix=mix,
                                 policies=pols, allocations=allocs, seeds=seeds, first_seed=first_seed,
                                 processors=nodes or DEFAULT_NODES, mpl=mpl, params=overrides or None,
                                 workers=workers, progress=lambda done, total: progress.update(done, total),
                                 platform=platform, pattern=pattern, model=model, coll=coll, smpi=smpi)
        except _core.OptionsError as exc:
            _fail_option(exc, {"mpl", "allocation", "policy", "policies", "nodes", "processors", "seeds", "classes",
                               "mix"})
    if workload is not None:
        comparison.setup["workload"] = workload
    if platform is not None:
        comparison.setup["platform"] = platform
    if plot_path is not None:
        from ..output import deliver

        with failing(writing=plot_path):
            deliver(lambda target: comparison.plot(target, format=Path(plot_path).suffix.lstrip(".").lower()), plot_path)
    if as_json:
        click.echo(_json.dumps(comparison.to_dict(), allow_nan=False))
        return
    s = comparison.setup
    what = workload if workload is not None else \
        f"{nas_jobs} NAS-like jobs (classes {','.join(class_list)}, mix {mix}), mean inter-arrival {interarrival:g} s"
    where = f"{s['processors']} cores of {platform}" if platform else f"{s['processors']} nodes, MPL {s['mpl']}"
    out.print(f"[bold]{what}[/] on {where}, {len(s['seeds'])} seed(s) "
              f"{s['seeds'][0]}..{s['seeds'][-1]}: mean ± std over seeds", highlight=False, soft_wrap=True)
    table = Table(header_style="bold")
    slowdown = "avg_slowdown" in comparison.metrics
    for col in ("policy", "allocation", "response (s)", "wait (s)", "execution (s)", "utilization", "energy (MJ)",
                *(("slowdown",) if slowdown else ())):
        table.add_column(col, justify="left" if col in ("policy", "allocation") else "right")

    def cell(m: dict, scale: float = 1.0, fmt: str = ".1f") -> str:
        return f"{m['mean'] / scale:{fmt}} ± {m['std'] / scale:{fmt}}"

    for r in comparison.rows:
        table.add_row(r["policy"], r["allocation"], cell(r["avg_response_s"]), cell(r["avg_wait_s"]),
                      cell(r["avg_exec_s"]), cell(r["utilization"], fmt=".3f"), cell(r["energy_j"], 1e6, ".2f"),
                      *((cell(r["avg_slowdown"], fmt=".3f"),) if slowdown else ()))
    out.print(table)
    if plot_path is not None:
        out.print(f"chart: {plot_path}", highlight=False, soft_wrap=True)
