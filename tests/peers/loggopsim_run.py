#!/usr/bin/env python3
"""LogGOPSim (github.com/spcl/LogGOPSim) as a peer: build it from its public source, write GOAL
schedules with its ``schedgen``, convert them with ``txt2bin``, run ``LogGOPSim`` over several
LogGP parameter sets and write every rank's end time as JSON, the reference of
``tests/data/goal/`` (its README.md says how that was made and what the numbers mean).

The source is not in the repository and CI cannot reach GitHub: get it with the project's
``fetch`` tool or ``git clone https://github.com/spcl/LogGOPSim``. The build needs Debian's
``cmake re2c gengetopt libgraphviz-dev`` and a C, C++ and Fortran compiler (its CMake project
declares Fortran; ``g++ gfortran``). Then::

    python tests/peers/loggopsim_run.py --source ~/LogGOPSim --work /tmp/lgs --save
    python tests/peers/loggopsim_run.py --source ~/LogGOPSim --work /tmp/lgs --from-data --check

The first builds, generates the schedules with schedgen, runs them and rewrites
``tests/data/goal/schedgen.tar.xz`` and ``loggopsim_reference.json``; the second runs the stored
schedules again and compares with the stored JSON (exit code 1 on any difference).

LogGOPSim prints every host's end time only when there are at most 16 hosts, else the maximum
alone (``LogGOPSim.cpp``: ``if(p <= 16 && ...)``). So two binaries are built from copies of the
source (the source folder itself is never written): the original, and one whose only change is
that condition (:data:`ALLHOSTS_PATCH`), which prints all hosts. Every run is made with both,
and the harness checks that they agree: the same list up to 16 hosts, the same maximum and
host of the maximum above.

From Python (a test can use the stored data without LogGOPSim)::

    texts = goal_texts(DATA)           # {schedule name: GOAL text}, the tar and the hand files
    ref = json.loads((DATA / "loggopsim_reference.json").read_text())
    ref["results"]["binomialtreebcast_8"]["note"]["end"]   # per-rank end times (LogGOPSim units)
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: Where the schedules and the reference live.
DATA = ROOT / "tests" / "data" / "goal"
#: Hand-written GOAL files (plain text, in the repository); each is run like a generated one.
HAND_DIR = DATA / "hand"
#: The generated schedules, one tar member ``schedgen/NAME.goal`` each.
TAR_NAME = "schedgen.tar.xz"
JSON_NAME = "loggopsim_reference.json"
#: Reproducible tar flags (with ``cJf``).
TAR_FLAGS = ("--sort=name", "--owner=0", "--group=0", "--mtime=2026-12-07")
#: What to install when a build tool is missing (Debian).
INSTALL_HINT = "as root: apt-get install cmake re2c gengetopt libgraphviz-dev g++ gfortran"
BUILD_TOOLS = ("cmake", "make", "re2c", "gengetopt", "g++", "gfortran")
#: The one change of the all-hosts binary: print every host's end time whatever the host count.
ALLHOSTS_PATCH = ("if(p <= 16 && !args_info.batchmode_given) { // print all hosts",
                  "if(!args_info.batchmode_given) { // print all hosts (commaware harness: no 16-host limit)")
RUN_TIMEOUT_S = 600

#: LogGP parameter sets: LogGOPSim's -L -o -g -G -O -S (times in its integer unit, ns by its
#: convention; G and O per byte; S in bytes: a message of more than S bytes is rendezvous).
PARAMETER_SETS: dict[str, dict[str, int]] = {
    # ISSUE-NOTES.md's check: no overheads, no gap, L and G only.
    "note": {"L": 1000, "o": 0, "g": 0, "G": 10, "O": 0, "S": 65535},
    # LogGOPSim's own defaults (loggopsim_cmdline.ggo).
    "default": {"L": 2500, "o": 1500, "g": 1000, "G": 6, "O": 0, "S": 65535},
    # Rendezvous above 512 bytes, a CPU cost per byte (O) below the NIC's (G).
    "rendezvous": {"L": 3000, "o": 200, "g": 500, "G": 2, "O": 1, "S": 512},
    # O above G (the receiver's CPU cost per byte is O), a large per-message gap, S = 4096.
    "overhead": {"L": 500, "o": 100, "g": 2000, "G": 1, "O": 3, "S": 4096},
}

#: (name, schedgen pattern, ranks, datasize, extra schedgen options). Sizes are chosen so that
#: both sides of S = 512 and S = 4096 occur; allreduce_recdoub on 256 ranks deadlocks in
#: LogGOPSim (its unstable sort of ready ops posts two receives from the same peer in the wrong
#: order; SEMANTICS.md) and is kept as that case.
SCHEDULES: tuple[tuple[str, str, int, int, tuple[str, ...]], ...] = tuple(
    [(f"binomialtreebcast_{n}", "binomialtreebcast", n, 1024, ()) for n in (8, 64, 1024)]
    + [(f"binarytreebcast_{n}", "binarytreebcast", n, 8192, ()) for n in (8, 64)]
    + [(f"binomialtreereduce_{n}", "binomialtreereduce", n, 1024, ()) for n in (8, 64)]
    + [(f"dissemination_{n}", "dissemination", n, 64, ()) for n in (8, 64, 1024)]
    + [(f"nwaydissemination2_{n}", "nwaydissemination", n, 256, ("--nway", "2")) for n in (8, 64)]
    + [(f"allreduce_recdoub_{n}", "allreduce_recdoub", n, 16384, ()) for n in (8, 64, 256)]
    + [(f"allreduce_ring_{n}", "allreduce_ring", n, 65536, ()) for n in (8, 64)]
    + [(f"linear_alltoall_{n}", "linear_alltoall", n, 1024, ()) for n in (8, 64)]
    + [(f"linear_alltoallv_{n}", "linear_alltoallv", n, 8192, ()) for n in (8, 64)]
    + [(f"pipelinedring_{n}", "pipelinedring", n, 16384, ("--segmentsize", "4096")) for n in (8, 64)]
    + [(f"pipelinedringdep_{n}", "pipelinedringdep", n, 16384, ("--segmentsize", "4096")) for n in (8, 64)]
    + [(f"doublering_{n}", "doublering", n, 1024, ()) for n in (8, 64)]
    + [(f"gather_{n}", "gather", n, 1024, ()) for n in (8, 64)]
    + [(f"scatter_{n}", "scatter", n, 1024, ()) for n in (8, 64)]
    + [(f"linbarrier_{n}", "linbarrier", n, 1, ()) for n in (8, 64)]
    + [("resnet_8", "resnet", 8, 1, ())]
)


class LogGOPSimError(RuntimeError):
    """A build step, schedgen, txt2bin or LogGOPSim failed; the message says which and why."""


@dataclass(frozen=True)
class Tools:
    loggopsim: Path           # the original binary
    loggopsim_allhosts: Path  # the same with ALLHOSTS_PATCH
    schedgen: Path
    txt2bin: Path
    commit: str               # of the source, "unknown" when it is not a git checkout


@dataclass
class Run:
    """One LogGOPSim run: ``ends`` (one per rank), or ``unmatched`` when it ended with receives
    or messages left in its match queues: {"receive_queue": [per host], "unexpected_queue": [...]}."""
    ends: list[int] | None
    events: int
    unmatched: dict[str, list[int]] | None
    max_time: int | None
    max_host: int | None


def _run(cmd: list[str], *, cwd: Path | None = None, what: str, timeout: float = RUN_TIMEOUT_S) -> str:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError as exc:
        raise LogGOPSimError(f"{what}: {cmd[0]} not found ({INSTALL_HINT})") from exc
    except subprocess.TimeoutExpired as exc:
        raise LogGOPSimError(f"{what}: no answer after {timeout:g} s: {' '.join(cmd)}") from exc
    if proc.returncode != 0:
        lines = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()
        raise LogGOPSimError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n  " + "\n  ".join(lines[-8:]))
    return proc.stdout


def _source_commit(source: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=30)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def build(source: Path, work: Path, *, jobs: int = 2) -> Tools:
    """Build LogGOPSim, schedgen and txt2bin from ``source`` (a LogGOPSim checkout: the folder
    with ``src/CMakeLists.txt``) in ``work``, as its README says (``cmake ../src/CMakeLists.txt``,
    then ``make LogGOPSim schedgen txt2bin``), plus the all-hosts LogGOPSim. The build writes
    generated files (gengetopt, re2c) next to its sources, so it builds copies."""
    source = source.resolve()
    if not (source / "src" / "CMakeLists.txt").is_file():
        raise LogGOPSimError(f"{source} is not a LogGOPSim checkout (no src/CMakeLists.txt); "
                             "get it with `git clone https://github.com/spcl/LogGOPSim`")
    missing = [t for t in BUILD_TOOLS if shutil.which(t) is None]
    if missing:
        raise LogGOPSimError(f"{', '.join(missing)} not found ({INSTALL_HINT})")
    commit = _source_commit(source)
    work.mkdir(parents=True, exist_ok=True)
    binaries: dict[str, Path] = {}
    for flavour in ("original", "allhosts"):
        copy = work / f"src-{flavour}"
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns(".git", "build"))
        if flavour == "allhosts":
            cpp = copy / "src" / "LogGOPSim" / "LogGOPSim.cpp"
            text = cpp.read_text()
            if text.count(ALLHOSTS_PATCH[0]) != 1:
                raise LogGOPSimError(f"{cpp.name}: the line to patch ({ALLHOSTS_PATCH[0]!r}) is not there exactly "
                                     "once; this harness knows commit 76451de (December 2023)")
            cpp.write_text(text.replace(*ALLHOSTS_PATCH))
        bdir = work / f"build-{flavour}"
        bdir.mkdir(parents=True, exist_ok=True)
        _run(["cmake", str(copy / "src" / "CMakeLists.txt")], cwd=bdir, what=f"cmake ({flavour})")
        targets = ["LogGOPSim", "schedgen", "txt2bin"] if flavour == "original" else ["LogGOPSim"]
        _run(["make", f"-j{jobs}", *targets], cwd=bdir, what=f"make ({flavour})", timeout=1800)
        for t in targets:
            binaries[f"{t}-{flavour}"] = bdir / t
    return Tools(binaries["LogGOPSim-original"], binaries["LogGOPSim-allhosts"], binaries["schedgen-original"],
                 binaries["txt2bin-original"], commit)


def schedgen_command(pattern: str, ranks: int, datasize: int, extra: tuple[str, ...], out: str) -> list[str]:
    return ["schedgen", "-p", pattern, "-s", str(ranks), "-d", str(datasize), *extra, "-o", out]


def generate(tools: Tools, folder: Path) -> dict[str, str]:
    """Write every schedule of :data:`SCHEDULES` with schedgen into ``folder``; {name: text}."""
    folder.mkdir(parents=True, exist_ok=True)
    texts: dict[str, str] = {}
    for name, pattern, ranks, datasize, extra in SCHEDULES:
        cmd = schedgen_command(pattern, ranks, datasize, extra, f"{name}.goal")
        _run([str(tools.schedgen), *cmd[1:]], cwd=folder, what=f"schedgen {name}")
        texts[name] = (folder / f"{name}.goal").read_text()
    return texts


def goal_texts(data: Path = DATA) -> dict[str, str]:
    """The stored schedules: every member of ``schedgen.tar.xz`` and every ``hand/*.goal``."""
    texts: dict[str, str] = {}
    with tarfile.open(data / TAR_NAME) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".goal"):
                texts[Path(member.name).stem] = tar.extractfile(member).read().decode()  # type: ignore[union-attr]
    for path in sorted((data / "hand").glob("*.goal")):
        texts[path.stem] = path.read_text()
    return texts


_TIMES = re.compile(r"^Host (\d+): (\d+)$", re.M)
_MAX = re.compile(r"^Maximum finishing time at host (\d+): (\d+) ", re.M)
_EVENTS = re.compile(r"^PERFORMANCE: Processes: (\d+) \t Events: (\d+) ", re.M)
_QUEUE = re.compile(r"^(receive|unexpected) queue on host (\d+) contains (\d+) elements!$", re.M)


def parse_output(out: str, what: str) -> Run:
    """LogGOPSim's stdout: per-host end times (``Host i: T``) or the maximum alone, the event
    count, or the non-empty match queues it reports instead of times."""
    ev = _EVENTS.search(out)
    if ev is None:
        raise LogGOPSimError(f"{what}: no PERFORMANCE line in LogGOPSim's output:\n{out[-2000:]}")
    queues = _QUEUE.findall(out)
    if queues:
        hosts = int(ev.group(1))
        unmatched = {"receive_queue": [0] * hosts, "unexpected_queue": [0] * hosts}
        for kind, host, count in queues:
            unmatched[f"{kind}_queue"][int(host)] = int(count)
        return Run(None, int(ev.group(2)), unmatched, None, None)
    times = [(int(h), int(t)) for h, t in _TIMES.findall(out)]
    if times:
        if [h for h, _ in times] != list(range(len(times))) or len(times) != int(ev.group(1)):
            raise LogGOPSimError(f"{what}: host lines out of order or missing")
        ends = [t for _, t in times]
        top = max(ends)
        return Run(ends, int(ev.group(2)), None, top, ends.index(top) if top > 0 else 0)
    mx = _MAX.search(out)
    if mx is None:
        raise LogGOPSimError(f"{what}: neither host times nor a maximum in LogGOPSim's output:\n{out[-2000:]}")
    return Run(None, int(ev.group(2)), None, int(mx.group(2)), int(mx.group(1)))


def run_loggopsim(binary: Path, schedule_bin: Path, params: dict[str, int], what: str) -> Run:
    cmd = [str(binary), "-f", str(schedule_bin), *(x for k in ("L", "o", "g", "G", "O", "S")
                                                    for x in (f"-{k}", str(params[k])))]
    return parse_output(_run(cmd, what=what), what)


def run_all(tools: Tools, texts: dict[str, str], work: Path) -> dict[str, dict[str, Any]]:
    """txt2bin every schedule and run it under every parameter set with both binaries;
    {schedule: {parameter set: result}}."""
    goal_dir, bin_dir = work / "goal", work / "bin"
    goal_dir.mkdir(parents=True, exist_ok=True)
    bin_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, Any]] = {}
    for name, text in sorted(texts.items()):
        goal = goal_dir / f"{name}.goal"
        goal.write_text(text)
        binfile = bin_dir / f"{name}.bin"
        _run([str(tools.txt2bin), "-i", str(goal), "-o", str(binfile)], what=f"txt2bin {name}")
        results[name] = {}
        for pname, params in PARAMETER_SETS.items():
            what = f"LogGOPSim {name} {pname}"
            full = run_loggopsim(tools.loggopsim_allhosts, binfile, params, what)
            orig = run_loggopsim(tools.loggopsim, binfile, params, what + " (original)")
            if orig.events != full.events or orig.unmatched != full.unmatched:
                raise LogGOPSimError(f"{what}: the all-hosts binary disagrees with the original")
            if full.unmatched is None:
                assert full.ends is not None
                if orig.ends is not None and orig.ends != full.ends:
                    raise LogGOPSimError(f"{what}: end times differ between the two binaries")
                if (orig.max_time, orig.max_host) != (full.max_time, full.max_host):
                    raise LogGOPSimError(f"{what}: maximum {orig.max_time} at host {orig.max_host} (original) "
                                         f"but {full.max_time} at host {full.max_host} (all hosts)")
                results[name][pname] = {"end": full.ends, "max": full.max_time, "max_host": full.max_host,
                                        "events": full.events}
            else:
                results[name][pname] = {"unmatched": full.unmatched, "events": full.events}
    return results


def _describe(name: str, text: str) -> dict[str, Any]:
    ranks = int(re.search(r"^num_ranks (\d+)", text, re.M).group(1))  # type: ignore[union-attr]
    ops = len(re.findall(r"^(?:\w+:\s*)?(?:send|recv|calc)\b", text, re.M))
    for sname, pattern, n, datasize, extra in SCHEDULES:
        if sname == name:
            return {"file": f"schedgen/{name}.goal", "ranks": ranks, "ops": ops, "pattern": pattern,
                    "command": " ".join(schedgen_command(pattern, n, datasize, extra, f"{name}.goal"))}
    return {"file": f"hand/{name}.goal", "ranks": ranks, "ops": ops, "pattern": "hand-written"}


def _tool_versions() -> dict[str, str]:
    def first(cmd: list[str]) -> str:
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        except (FileNotFoundError, subprocess.TimeoutExpired):
            return "unknown"
        return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr).strip() else "unknown"
    return {"g++": first(["g++", "--version"]), "re2c": first(["re2c", "--version"]),
            "gengetopt": first(["gengetopt", "--version"]), "cmake": first(["cmake", "--version"])}


def reference(tools: Tools, texts: dict[str, str], results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "about": "Per-rank end times printed by LogGOPSim (LogGP backend, no noise) for each GOAL schedule and "
                 "parameter set; see README.md. 'end' is LogGOPSim's 'Host i: T' (the host's CPU next-free "
                 "time, max over its CPUs), in LogGOPSim's integer time unit (ns by its convention). "
                 "'unmatched' replaces 'end' when LogGOPSim ended with non-empty match queues (it prints no times "
                 "then).",
        "loggopsim": {"repository": "https://github.com/spcl/LogGOPSim", "commit": tools.commit,
                      "allhosts_patch": list(ALLHOSTS_PATCH), "tools": _tool_versions()},
        "parameters": PARAMETER_SETS,
        "schedules": {name: _describe(name, texts[name]) for name in sorted(texts)},
        "results": results,
    }


def dumps(ref: dict[str, Any]) -> str:
    """JSON with one line per list of end times (diff-friendly, small)."""
    text = json.dumps(ref, indent=1, sort_keys=False)
    return re.sub(r"\[\s+([-\d,\s]+?)\s+\]", lambda m: "[" + ", ".join(m.group(1).split(",\n")).replace(" ", "")
                  .replace(",", ", ") + "]", text) + "\n"


def write_tar(texts: dict[str, str], out: Path, work: Path) -> None:
    """``out`` (tar.xz) with ``schedgen/NAME.goal`` for the generated schedules, made by GNU tar
    with :data:`TAR_FLAGS` so the same texts give the same bytes."""
    stage = work / "tar"
    if stage.exists():
        shutil.rmtree(stage)
    (stage / "schedgen").mkdir(parents=True)
    names = sorted(n for n, *_ in SCHEDULES)
    for name in names:
        (stage / "schedgen" / f"{name}.goal").write_text(texts[name])
    _run(["tar", "cJf", str(out.resolve()), *TAR_FLAGS, "schedgen"], cwd=stage, what="tar")


def compare(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    diffs = []
    for name, per in new["results"].items():
        for pname, res in per.items():
            ref = old.get("results", {}).get(name, {}).get(pname)
            if ref != res:
                diffs.append(f"{name} {pname}: stored {str(ref)[:120]} but LogGOPSim gives {str(res)[:120]}")
    for name in old.get("results", {}):
        if name not in new["results"]:
            diffs.append(f"{name}: in the stored reference, not run")
    return diffs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", type=Path, required=True, help="LogGOPSim checkout (with src/CMakeLists.txt)")
    ap.add_argument("--work", type=Path, required=True, help="folder for the builds, schedules and runs")
    ap.add_argument("--from-data", action="store_true",
                    help=f"run the stored schedules ({TAR_NAME} and hand/) instead of generating them")
    ap.add_argument("--data", type=Path, default=DATA, help="the reference folder (default tests/data/goal)")
    ap.add_argument("--save", action="store_true", help=f"write {TAR_NAME} and {JSON_NAME} into --data")
    ap.add_argument("--check", action="store_true", help=f"compare with the stored {JSON_NAME}; exit 1 on a difference")
    ap.add_argument("--json", type=Path, help="also write the reference JSON here")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="make -j (default 2)")
    a = ap.parse_args()
    try:
        work = a.work.resolve()
        tools = build(a.source, work, jobs=a.jobs)
        print(f"built LogGOPSim {tools.commit[:12]} in {work}", file=sys.stderr)
        if a.from_data:
            texts = goal_texts(a.data)
        else:
            texts = generate(tools, work / "schedgen")
            texts.update({p.stem: p.read_text() for p in sorted((a.data / "hand").glob("*.goal"))})
        results = run_all(tools, texts, work)
        ref = reference(tools, texts, results)
        for name, per in results.items():
            row = " ".join(f"{p}={r['max']}" if "max" in r else f"{p}=unmatched" for p, r in per.items())
            print(f"{name:24} {row}")
        if a.json:
            a.json.write_text(dumps(ref))
        status = 0
        if a.check:
            diffs = compare(ref, json.loads((a.data / JSON_NAME).read_text()))
            for d in diffs:
                print(d, file=sys.stderr)
            print(f"{sum(len(v) for v in results.values()) - len(diffs)} of {sum(len(v) for v in results.values())} "
                  f"runs agree with {a.data / JSON_NAME}", file=sys.stderr)
            status = 1 if diffs else 0
        if a.save:
            write_tar(texts, a.data / TAR_NAME, work)
            (a.data / JSON_NAME).write_text(dumps(ref))
            print(f"wrote {a.data / TAR_NAME} and {a.data / JSON_NAME}", file=sys.stderr)
        return status
    except LogGOPSimError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
