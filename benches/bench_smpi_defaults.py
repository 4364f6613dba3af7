#!/usr/bin/env python3
"""smpirun as users run it, on real traces (issue 39): NAS IS, NPB LU, MG and FT and HPCC's HPL
and PTRANS, built with ``smpicc``/``smpiff`` from their public sources, traced with
``smpirun -trace-ti``, then replayed by SMPI 3.32 with no option but ``network/optim:Full``
(exact per-flow times) and by commaware's ``simgrid-3.32`` preset, on a fat tree, a torus and a
dragonfly written as SimGrid files by ``commaware platform export``
(``smpi_replay.TOPOLOGY_PLATFORMS``). Three ways each:

* ``default``: no collective algorithm named: SMPI's ``default`` selector on both sides;
* ``named``: the algorithms of ``smpi_replay.default_algorithms`` named on both sides
  (``--cfg=smpi/<coll>:<algo>`` / ``coll=``);
* ``config``: the same algorithms and ``network/model:SMPI`` in the file's ``<config>``; SMPI and
  commaware are given the file alone.

Each row prints SMPI's makespan, commaware's, the relative difference, the tolerance (1e-6)
and ``pass``/``fail``; with ``--before PYTHON`` (an interpreter whose ``commaware`` is an older
commit), also that version's makespan in the configuration the issue gave for it (the preset, a
16-byte envelope, ``crosstraffic=1`` and the algorithms named; a file with a ``<config>`` was
refused then). Wall times of both replays are printed beside (SMPI's whole ``smpirun``, our
``simulate`` call in process).

The sources are not in the repository and this machine cannot reach GitHub in CI; get them
with the project's ``fetch`` tool or ``git clone`` (NPB 3.4 MPI: any mirror of NASA's
NPB3.4-MPI tree, e.g. github.com/thaisacs/NPB3.4-MPI; HPCC: github.com/icl-utk-edu/hpcc), then::

    .venv/bin/python benches/bench_smpi_defaults.py --npb ~/NPB3.4-MPI --hpcc ~/hpcc --save
    .venv/bin/python benches/bench_smpi_defaults.py --npb ~/NPB3.4-MPI --programs lu,mg --class W

How the programs are built (in ``--work``, the sources copied there): NPB with ``smpiff`` /
``smpicc`` and ``-O2``, ``RAND = randdp``; the NPB3.4-MPI mirror above calls five timing
hooks (``init_timestep`` and its kin) that make no MPI call, given here as empty C functions.
HPCC with HPL's ``Make.Linux_PII_FBLAS`` made for ``smpicc`` and Debian's reference BLAS
(``libblas-dev``), linked with the whole ``libhpl.a`` (SMPI loads the program as a shared
object and needs its ``main``), and one change: ``HPCC_ONLY=HPL`` or ``=PTRANS`` in the
environment runs that test alone (HPCC runs all of them in one program otherwise); its input is
the distribution's ``_hpccinf.txt`` with a 2×4 process grid. Every program is traced on the fat
tree. Nothing is asserted: rows are marked ``pass`` or ``fail``, and the exit code is 1 on a
``fail``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import commaware

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "peers"))
import smpi_replay  # noqa: E402
from common import save_results  # noqa: E402

TOLERANCE = 1e-6
NPB_PROGRAMS = ("is", "lu", "mg", "ft")
HPCC_PROGRAMS = ("hpl", "ptrans")
MODES = ("default", "named", "config")
TRACED_ON = "fat_tree_8"

# The timing hooks the NPB3.4-MPI mirror's LU, MG, IS and FT call (they time, no MPI call).
NPB_HOOKS = """void init_timestep_(void) {}
void begin_timestep_(void) {}
void end_timestep_(void) {}
void exit_timestep_(void) {}
void set_early_stop_(int *n) { (void)n; }
int parse_init_(void) { return -1; }
"""

NPB_MAKE_DEF = """MPIFC = smpiff
FLINK = $(MPIFC)
FFLAGS = -O2
FLINKFLAGS = $(FFLAGS) {hooks}
MPICC = smpicc
CLINK = $(MPICC)
CFLAGS = -O2
CLINKFLAGS = $(CFLAGS) {hooks}
CC = gcc
BINDIR = ../bin
CONVERTFLAG = -DFORTRAN_REC_SIZE=1
RAND = randdp
"""

# HPCC's io.c sets every Run* flag to 1; after that line, HPCC_ONLY keeps one test.
HPCC_ONLY_ANCHOR = "  params->RunLatencyBandwidth = 1;\n"
HPCC_ONLY_PATCH = """  { const char *only = getenv("HPCC_ONLY");
    if (only) {
      params->RunStarDGEMM = params->RunSingleDGEMM = params->RunStarStream = params->RunSingleStream =
      params->RunMPIRandomAccess_LCG = params->RunStarRandomAccess_LCG = params->RunSingleRandomAccess_LCG =
      params->RunMPIRandomAccess = params->RunStarRandomAccess = params->RunSingleRandomAccess =
      params->RunMPIFFT = params->RunStarFFT = params->RunSingleFFT = params->RunLatencyBandwidth = 0;
      params->RunHPL = !strcmp(only, "HPL"); params->RunPTRANS = !strcmp(only, "PTRANS"); } }
"""


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise SystemExit(f"{' '.join(cmd)} failed in {cwd} (exit {proc.returncode}):\n{tail}")
    return proc.stdout


def copy_source(source: Path, dest: Path) -> None:
    if not dest.exists():
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".git"))


def build_npb(source: Path, work: Path, programs: list[str], klass: str) -> dict[str, Path]:
    tree = work / "npb"
    copy_source(source, tree)
    hooks = tree / "hooks.o"
    (tree / "hooks.c").write_text(NPB_HOOKS)
    run(["smpicc", "-O2", "-c", "hooks.c", "-o", str(hooks)], tree)
    (tree / "config" / "make.def").write_text(NPB_MAKE_DEF.format(hooks=hooks))
    (tree / "bin").mkdir(exist_ok=True)
    binaries = {}
    for program in programs:
        binary = tree / "bin" / f"{program}.{klass}.x"
        if not binary.exists():
            print(f"building NPB {program.upper()} class {klass}", file=sys.stderr)
            run(["make", program, f"CLASS={klass}"], tree)
        binaries[program] = binary
    return binaries


def build_hpcc(source: Path, work: Path) -> Path:
    tree = work / "hpcc"
    copy_source(source, tree)
    binary = tree / "hpcc"
    if binary.exists():
        return binary
    print("building HPCC", file=sys.stderr)
    make = (tree / "hpl" / "setup" / "Make.Linux_PII_FBLAS").read_text().splitlines()
    settings = {"MPdir": "", "MPinc": "", "MPlib": "", "LAdir": "", "LAlib": "-lblas", "CC": "smpicc",
                "LINKER": "smpicc", "CCFLAGS": "$(HPL_DEFS) -O2", "HPL_LIBS": "$(HPLlib) $(LAlib) -lm"}
    lines = [f"{line.split()[0]} = {settings[line.split()[0]]}" if line.split() and line.split()[0] in settings
             and "=" in line else line for line in make]
    (tree / "hpl" / "Make.SMPI").write_text("\n".join(lines) + "\n")
    io = tree / "src" / "io.c"
    text = io.read_text()
    if "HPCC_ONLY" not in text:
        if HPCC_ONLY_ANCHOR not in text:
            raise SystemExit(f"{io}: no line {HPCC_ONLY_ANCHOR.strip()!r} to add HPCC_ONLY after")
        io.write_text("#include <stdlib.h>\n#include <string.h>\n"
                      + text.replace(HPCC_ONLY_ANCHOR, HPCC_ONLY_ANCHOR + HPCC_ONLY_PATCH, 1))
    run(["make", "arch=SMPI"], tree)
    library = tree / "hpl" / "lib" / "SMPI" / "libhpl.a"
    run(["smpicc", "-O2", "-o", str(binary), "-Wl,--whole-archive", str(library), "-Wl,--no-whole-archive",
         "-lblas", "-lm"], tree)
    return binary


def trace(name: str, binary: Path, ranks: int, work: Path, platforms: dict[str, Path],
          hpcc_input: Path | None) -> Path:
    """The TI trace of `binary` on `ranks` ranks (smpirun -trace-ti on the fat tree)."""
    directory = work / "traces" / name
    index = directory / "index.txt"
    if index.exists():
        return index
    directory.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if hpcc_input is not None:
        (directory / "hpccinf.txt").write_text(hpcc_input.read_text())
        env["HPCC_ONLY"] = name.upper()
    print(f"tracing {name} on {ranks} ranks", file=sys.stderr)
    xml = platforms[TRACED_ON]
    run(["smpirun", "-np", str(ranks), "-platform", str(xml), "-hostfile", str(xml.with_suffix(".hosts")),
         "-trace-ti", "--cfg=tracing/filename:index.txt", "--log=root.thres:error", str(binary)], directory, env)
    return index


def write_platforms(work: Path, algorithms: dict[str, str]) -> dict[str, dict[str, Path]]:
    """Per fabric, its SimGrid file as exported and the same file with a ``<config>``."""
    out: dict[str, dict[str, Path]] = {}
    config = {"network/model": "SMPI", **{f"smpi/{c}": a for c, a in algorithms.items()}}
    for name, spec in smpi_replay.TOPOLOGY_PLATFORMS.items():
        platform = commaware.load_platform(spec)
        xml, with_config = work / f"{name}.xml", work / f"{name}-config.xml"
        text = platform.export("simgrid")
        xml.write_text(text)
        with_config.write_text(smpi_replay.with_config(text, config))
        xml.with_suffix(".hosts").write_text("".join(f"{h}\n" for h in platform.host_names))
        out[name] = {"plain": xml, "config": with_config}
    return out


BEFORE_SCRIPT = """
import json, sys
import commaware
out = []
for job in json.load(sys.stdin):
    platform = {"simgrid_platform": job["xml"], "network": {"smpi": "simgrid-3.32", "envelope_bytes": 16}}
    try:
        result = commaware.simulate(commaware.load_platform(platform),
                                    commaware.load_trace(job["index"], format="ti"),
                                    coll=job["coll"] or None, params={"crosstraffic": 1})
        out.append(result.makespan)
    except Exception as error:
        out.append(str(error).splitlines()[0])
print(json.dumps(out))
"""


def before(python: str, jobs: list[dict[str, Any]]) -> list[Any]:
    proc = subprocess.run([python, "-c", BEFORE_SCRIPT], input=json.dumps(jobs), capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{python}: the older commaware failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--npb", type=Path, help="an NPB3.4-MPI source tree (NAS IS, NPB LU, MG, FT)")
    ap.add_argument("--hpcc", type=Path, help="an HPCC source tree (HPL, PTRANS)")
    ap.add_argument("--programs", default=",".join(NPB_PROGRAMS + HPCC_PROGRAMS), help="comma-separated subset")
    ap.add_argument("--class", dest="klass", default="S", help="NPB problem class (S)")
    ap.add_argument("--ranks", type=int, default=8, help="ranks per program (8; NPB wants a power of two)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/commaware-smpi-defaults"), help="build and trace folder")
    ap.add_argument("--before", help="a Python interpreter with an older commaware, to print its makespans too")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--save", action="store_true", help="also write benches/results/smpi-defaults-<timestamp>.json")
    args = ap.parse_args()
    started = datetime.now(timezone.utc)
    programs = [p.strip() for p in args.programs.split(",") if p.strip()]
    unknown = sorted(set(programs) - set(NPB_PROGRAMS + HPCC_PROGRAMS))
    if unknown:
        ap.error(f"unknown programs {unknown}")
    npb_wanted = [p for p in programs if p in NPB_PROGRAMS]
    hpcc_wanted = [p for p in programs if p in HPCC_PROGRAMS]
    if npb_wanted and args.npb is None:
        ap.error("--npb is needed for " + ",".join(npb_wanted))
    if hpcc_wanted and args.hpcc is None:
        ap.error("--hpcc is needed for " + ",".join(hpcc_wanted))
    ok, reason = smpi_replay.smpi_available()
    if not ok:
        ap.error(reason)
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    algorithms = smpi_replay.default_algorithms(args.ranks)
    coll = ",".join(f"{c}={a}" for c, a in algorithms.items())
    platforms = write_platforms(work, algorithms)
    plain = {name: files["plain"] for name, files in platforms.items()}

    indexes: dict[str, Path] = {}
    if npb_wanted:
        for program, binary in build_npb(args.npb.resolve(), work, npb_wanted, args.klass).items():
            indexes[f"{program}.{args.klass}"] = trace(f"{program}.{args.klass}", binary, args.ranks, work, plain, None)
    if hpcc_wanted:
        binary = build_hpcc(args.hpcc.resolve(), work)
        grid = binary.parent / "hpccinf.txt"
        grid.write_text((binary.parent / "_hpccinf.txt").read_text().replace("2            Qs", "4            Qs", 1))
        for program in hpcc_wanted:
            indexes[program] = trace(program, binary, args.ranks, work, plain, grid)

    rows: list[dict[str, Any]] = []
    jobs: list[dict[str, Any]] = []
    for trace_name, index in indexes.items():
        actions = sum(1 for f in (index.parent / "index.txt_files").iterdir() for _ in f.open())
        loaded = commaware.load_trace(index, format="ti")
        for fabric, files in platforms.items():
            hosts = commaware.load_platform(files["plain"]).host_names
            for mode in MODES:
                xml = files["config" if mode == "config" else "plain"]
                t0 = time.perf_counter()
                smpi = smpi_replay.run_smpi_replay({}, index, platform_file=xml, host_names=hosts, bare=True,
                                                   collectives=algorithms if mode == "named" else None)
                smpi_s = time.perf_counter() - t0
                t0 = time.perf_counter()
                if mode == "config":
                    ours = commaware.simulate(commaware.load_platform(xml), loaded)
                else:
                    ours = commaware.simulate(commaware.load_platform(xml), loaded, smpi="simgrid-3.32",
                                              coll=coll if mode == "named" else None)
                ours_s = time.perf_counter() - t0
                diff = abs(ours.makespan - smpi.makespan) / smpi.makespan
                rows.append({"trace": trace_name, "actions": actions, "platform": fabric, "collectives": mode,
                             "smpi_makespan_s": smpi.makespan, "ours_makespan_s": ours.makespan,
                             "relative_difference": diff, "tolerance": TOLERANCE,
                             "status": "pass" if diff <= TOLERANCE else "fail",
                             "smpi_wall_s": round(smpi_s, 3), "ours_wall_s": round(ours_s, 3),
                             "smpi_command": " ".join(smpi.command)})
                jobs.append({"xml": str(xml), "index": str(index), "coll": coll if mode != "default" else ""})
    if args.before:
        for row, old in zip(rows, before(args.before, jobs)):
            row["before_makespan_s"] = old if isinstance(old, float) else None
            row["before_error"] = None if isinstance(old, float) else old
            if isinstance(old, float):
                row["before_relative_difference"] = abs(old - row["smpi_makespan_s"]) / row["smpi_makespan_s"]

    failed = sum(r["status"] == "fail" for r in rows)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        head = f"{'trace':10} {'platform':13} {'colls':8} {'actions':>8} {'SMPI (s)':>14} {'commaware (s)':>14} " \
               f"{'rel. diff':>9} {'status':6}" + (f" {'before (s)':>12} {'before diff':>11}" if args.before else "") \
               + f" {'SMPI wall':>9} {'ours wall':>9}"
        print(head)
        for r in rows:
            line = f"{r['trace']:10} {r['platform']:13} {r['collectives']:8} {r['actions']:>8} " \
                   f"{r['smpi_makespan_s']:>14.9f} {r['ours_makespan_s']:>14.9f} {r['relative_difference']:>9.1e} " \
                   f"{r['status']:6}"
            if args.before:
                old = r["before_makespan_s"]
                line += f" {old:>12.6f} {r['before_relative_difference']:>11.1%}" if old is not None \
                    else f" {'refused':>12} {'':>11}"
            print(line + f" {r['smpi_wall_s']:>9.2f} {r['ours_wall_s']:>9.2f}")
        print(f"{len(rows) - failed} of {len(rows)} within {TOLERANCE:g} of smpirun's default makespan")
    if args.save:
        worst = max(rows, key=lambda r: r["relative_difference"]) if rows else None
        summary = {"rows": len(rows), "within_tolerance": len(rows) - failed,
                   "largest_relative_difference": worst and worst["relative_difference"],
                   "largest_at": worst and f"{worst['trace']} {worst['platform']} {worst['collectives']}"}
        out = save_results("smpi-defaults", started, {"commaware": commaware.__version__, "class": args.klass,
                                                       "ranks": args.ranks, "algorithms": algorithms,
                                                       "summary": summary, "rows": rows})
        print(f"wrote {out.relative_to(ROOT)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
