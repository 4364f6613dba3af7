"""Ctrl-C: every long-running command stops within about a second of SIGINT, exits 130 with one
line on stderr, prints nothing on stdout and leaves no output file, partial or whole (issue 30,
item 6). The signal comes once the command has provably begun its main work (its progress line
for that step on stderr), whatever the machine's speed (issue 45). And a Ctrl-C that comes once
delivery has begun is held until everything is out: then the whole output and exit 0, never
output and 130, never half a document (issue 45)."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

#: Seconds between the commands' progress lines here (plain lines: their stderr is a pipe).
PROGRESS_EVERY = "0.1"
#: Seconds from the start of the command to the SIGINT, for the commands whose work cannot end
#: that soon on any machine (a query of 10^11 rows).
STARTED = 3.0
#: Seconds the command may take to exit after the SIGINT.
STOP_LIMIT = 1.5


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Big inputs, written once: a 64-rank trace of 3,000 alltoalls (12 million messages), a
    3,000- and a 5,000-job NAS-like workload, a
    1.2-million-communication scheme, a 600-node all-to-all multicast instance, a sweep spec, an empty
    results store."""
    d = tmp_path_factory.mktemp("interrupt-inputs")
    (d / "c64.json").write_text(json.dumps({
        "cluster": {"count": 64, "speed": 1e9, "cores": 2, "memory": 2**32},
        "network": {"model": "maxmin", "bandwidth": 1.25e8, "latency": 5e-5, "eager_threshold": 65536}}))
    ops = [op for _ in range(3000) for op in ({"op": "compute", "flops": 1e6}, {"op": "alltoall", "bytes": 4096})]
    (d / "a2a.json").write_text(json.dumps({"ranks": [ops] * 64}))
    # 9,600 messages: a --json document of about 2 MB, far more than a pipe holds (64 KiB).
    small = [op for _ in range(40) for op in ({"op": "compute", "flops": 1e6}, {"op": "alltoall", "bytes": 4096})]
    (d / "a2a16.json").write_text(json.dumps({"ranks": [small] * 16}))
    (d / "sweep.toml").write_text(f'command = "simulate"\n[fixed]\nplatform = "{d / "c64.json"}"\n'
                                  f'trace = "{d / "a2a.json"}"\n[grid]\nplacement = ["rrn", "rrp"]\n')
    from commaware.experiments.results import open_store

    # 1.2 million communications in 40,000 complete bipartite 5 x 6 blocks, counted exactly under myrinet.
    comms = [{"id": f"c{b}_{i}_{j}", "src": 11 * b + i, "dst": 11 * b + 5 + j}
             for b in range(40_000) for i in range(5) for j in range(6)]
    (d / "bip.json").write_text(json.dumps({"comms": comms}))
    open_store(d / "store", create=True)  # an empty results store: the query below needs no row
    # Conservative backfilling runs 3,000 jobs in under 5 s on a fast core, 5,000 in about 14 s.
    for name, args in (("nas3000.json", ["workload", "nas", "--jobs", "3000", "--interarrival", "20", "--seed", "1"]),
                       ("nas5000.json", ["workload", "nas", "--jobs", "5000", "--interarrival", "20", "--seed", "1"]),
                       ("mc600.json", ["multicast", "generate", "--nodes", "600", "--pattern", "all_to_all", "--sizes",
                                       "mixed", "-q"])):
        subprocess.run([sys.executable, "-m", "commaware.cli", *args], stdout=(d / name).open("w"), check=True)
    return d


def with_default_sigint() -> None:
    """In the child before it runs: SIGINT at its default. A shell without job control starts
    background commands with SIGINT ignored (`pytest &` in a script), and Python then keeps it
    ignored: the commands under test would never see the Ctrl-C the tests send."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(autouse=True)
def stacks_on_abort(monkeypatch):
    """The commands started here dump every thread's stack on SIGABRT (faulthandler), which
    `interrupt` sends to one that has not ended 30 s after its Ctrl-C: the failure says where
    it hung."""
    monkeypatch.setenv("PYTHONFAULTHANDLER", "1")


def interrupt(proc: subprocess.Popen) -> tuple[str, str, float]:
    """SIGINT to `proc`: its stdout, its stderr and the seconds it took to exit."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        stdout, stderr = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        stdout, stderr = proc.communicate(timeout=30)
        raise AssertionError(f"still running 30 s after the Ctrl-C; its threads then:\n{stderr[-6000:]}") from None
    return stdout, stderr, time.monotonic() - sent


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


#: The sweep's results store, made once its Dask workers are up (then they are inside runs).
STORE = "results/commaware-results.json"

# (id, command line with {in} for the inputs' folder and @ for a space inside an argument, when to
# signal: a compiled pattern, at the first stderr line that matches it (the progress line of the
# command's main work: each of these runs for seconds past it on a fast core, longer on a slow
# one); a file name, a second after it appears; or seconds after the start, for work that no
# machine ends that soon). Outputs go to the working directory.
COMMANDS = [
    ("simulate-json", "simulate {in}/c64.json {in}/a2a.json --json", re.compile(r"^simulate: \d+/64 ranks done, t=")),
    ("simulate-files", "simulate {in}/c64.json {in}/a2a.json --messages msgs.parquet --gantt g.svg",
     re.compile(r"^simulate: \d+/64 ranks done, t=")),
    ("penalties-myrinet", "penalties {in}/bip.json --model myrinet --json", re.compile(r"^penalties: myrinet penalties of ")),
    ("cosched-hybrid", "cosched run {in}/nas3000.json --policy hybrid --json --jobs-csv jobs.csv",
     re.compile(r"^cosched run: scheduling 3,000 jobs")),
    ("cosched-conservative", "cosched run {in}/nas5000.json --policy batch-conservative --json",
     re.compile(r"^cosched run: scheduling 5,000 jobs")),
    ("cosched-compare", "cosched compare --nas-jobs 3000 --interarrival 20 --seeds 4 --policies hybrid,batch-conservative "
                        "--json --plot fig.svg", re.compile(r"^cosched compare: ")),
    ("multicast-ecfp", "multicast schedule {in}/mc600.json --algorithm ecfp --json",
     re.compile(r"^multicast schedule: scheduling with ecfp")),
    ("tiling-sweep", "tiling --space 16x16x65536 --procs 4x4 --sweep-z --json --plot sweep.svg",
     re.compile(r"^tiling: \d+/\d+ tile heights")),
    ("reproduce-pool", "reproduce 003 --quick --json", re.compile(r"^reproduce: \[\d+/\d+\] ")),
    ("reproduce-report", "reproduce 002 --quick --out report", re.compile(r"^reproduce: \[\d+/\d+\] ")),
    ("sweep-serial", "sweep {in}/sweep.toml --serial --out results --json", re.compile(r"^sweep: ")),
    # A query of 10^11 rows, inside DuckDB at the signal (which it looked at only now and then).
    ("results-query", "results query {in}/store SELECT@sum(a.range*b.range)@FROM@range(100000)@a,@range(1000000)@b --json",
     STARTED),
    # Two worker processes of a local Dask cluster, each inside a core call at the signal.
    ("sweep-dask", "sweep {in}/sweep.toml --workers 2 --out results --json", STORE),
    # While the local cluster's workers are still starting (or the first runs begin).
    ("sweep-dask-starting", "sweep {in}/sweep.toml --workers 2 --out results --json", 1.0),
]


def read_lines(stream, into: list[str]) -> threading.Thread:
    """A thread appending each line of `stream` to `into` as it comes (so the pipe never fills)."""
    def pump() -> None:
        for line in stream:
            into.append(line)

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread


def wait_for(work: Path, when: float | str | re.Pattern[str], proc: subprocess.Popen[str], lines: list[str]) -> None:
    """Sleep until the signal is due: `when` seconds, a second after the file `when` appears, or
    as soon as a line of stderr matches the pattern `when`."""
    if isinstance(when, float):
        time.sleep(when)
        return
    def due() -> bool:
        if isinstance(when, re.Pattern):
            return any(when.search(line) for line in list(lines))
        return (work / when).exists()

    deadline = time.monotonic() + 120
    while not due():
        assert proc.poll() is None and time.monotonic() < deadline, f"no {when}: {lines[-5:]}, {proc.communicate()}"
        time.sleep(0.02)
    if not isinstance(when, re.Pattern):
        time.sleep(1.0)


def start(argv: list[str], work: Path, scratch: Path) -> subprocess.Popen[str]:
    """`argv` in `work`, temporary files in `scratch`, progress lines every PROGRESS_EVERY s."""
    return subprocess.Popen(argv, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=with_default_sigint,
                            env={**os.environ, "TMPDIR": str(scratch), "COMMAWARE_PROGRESS_SECONDS": PROGRESS_EVERY})


@pytest.mark.parametrize("line,when", [c[1:] for c in COMMANDS], ids=[c[0] for c in COMMANDS])
def test_ctrl_c_stops_a_long_command_at_once_with_exit_130_and_no_output(inputs, tmp_path, line, when):
    work, scratch = tmp_path / "work", tmp_path / "tmp"  # scratch: the temporary files (--json's document)
    work.mkdir()
    scratch.mkdir()
    argv = [sys.executable, "-m", "commaware.cli", *(word.replace("@", " ") for word in line.replace("{in}", str(inputs)).split())]
    proc = start(argv, work, scratch)
    lines: list[str] = []
    printed: list[str] = []
    readers = [read_lines(proc.stderr, lines), read_lines(proc.stdout, printed)]
    children: list[int] = []
    try:
        wait_for(work, when, proc, lines)
        assert proc.poll() is None, f"finished before the signal: {lines[-5:]}"
        children = descendants(proc.pid)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
            proc.wait(timeout=30)
            for reader in readers:
                reader.join(timeout=10)
            raise AssertionError("still running 30 s after the Ctrl-C; its stderr then (the threads' stacks "
                                 f"last):\n{''.join(lines)[-8000:]}") from None
        took = time.monotonic() - sent
        for reader in readers:
            reader.join(timeout=10)
        stdout, stderr = "".join(printed), "".join(lines)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, stderr[-2000:])
    assert took < STOP_LIMIT, f"{took:.2f} s to stop"
    # Progress lines may come first (long commands report on stderr); the stop is one last line.
    assert stderr.endswith("\nerror: interrupted (Ctrl-C)\n") or stderr == "error: interrupted (Ctrl-C)\n", stderr[-2000:]
    assert stderr.count("error") == 1 and "Traceback" not in stderr, stderr[-2000:]
    assert stdout == ""
    # A sweep's results store keeps the runs that finished (resumable); none had, so the store it
    # made is gone too.
    assert files_under(work) == []
    assert files_under(scratch) == []
    assert left_running(children) == []  # Dask's workers and the like


def left_running(pids: list[int], grace: float = 1.0) -> list[int]:
    """Those of `pids` still running `grace` seconds from now (or as soon as none is)."""
    deadline = time.monotonic() + grace
    while True:
        running = [pid for pid in pids if alive(pid)]
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.05)


def descendants(pid: int) -> list[int]:
    """The process ids under `pid` (children, theirs, ...), from /proc."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        kids = [p for p, parent in parents.items() if parent in frontier]
        found += kids
        frontier = kids
    return found


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, waiting for its parent or init to reap it, has stopped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


#: A replay whose outputs are a --json document on stdout (9,600 messages), a message table and a
#: Gantt chart.
DELIVERED = "simulate {in}/c64.json {in}/a2a16.json --json --messages msgs.parquet --gantt g.svg"
DELIVERED_MESSAGES = 16 * 15 * 40


def delivered(inputs: Path, tmp_path: Path) -> tuple[subprocess.Popen[str], Path, Path]:
    """DELIVERED started in a fresh working folder: the process, its folder and its TMPDIR."""
    work, scratch = tmp_path / "work", tmp_path / "tmp"
    work.mkdir(parents=True)
    scratch.mkdir()
    argv = [sys.executable, "-m", "commaware.cli", *DELIVERED.replace("{in}", str(inputs)).split()]
    return start(argv, work, scratch), work, scratch


def check_all_or_nothing(code: int, stdout: str, stderr: str, work: Path, scratch: Path) -> str:
    """The outcome of DELIVERED after a SIGINT: `everything` (exit 0, the whole document, both
    files) or `nothing` (exit 130, one error line, no file); anything else fails."""
    assert "Traceback" not in stderr, stderr[-2000:]
    assert files_under(scratch) == []
    if code == 130:
        assert stdout == "", f"exit 130 after {len(stdout)} characters of output"
        assert files_under(work) == [] and stderr.endswith("error: interrupted (Ctrl-C)\n"), (files_under(work), stderr)
        return "nothing"
    assert code == 0, (code, stderr[-2000:])
    assert "error" not in stderr, stderr[-2000:]
    document = json.loads(stdout)  # whole, not cut
    assert len(document["messages"]) == DELIVERED_MESSAGES
    assert files_under(work) == ["g.svg", "msgs.parquet"]
    return "everything"


def test_a_ctrl_c_during_delivery_waits_until_every_output_is_out_then_exit_0(inputs, tmp_path):
    """The signal comes while the document is being written to stdout, provably: the first byte
    has reached the pipe (nothing reaches stdout before delivery) and the rest cannot, since the
    pipe is full and nobody reads it. The process finishes its delivery once the pipe is read."""
    proc, work, scratch = delivered(inputs, tmp_path)
    lines: list[str] = []
    reader = read_lines(proc.stderr, lines)
    try:
        readable, _, _ = select.select([proc.stdout], [], [], 120)
        assert readable, f"nothing on stdout in 120 s: {lines[-5:]}"
        time.sleep(0.3)  # the pipe fills; the process waits inside its delivery
        assert proc.poll() is None, "the document fitted in the pipe: make it bigger"
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)  # the signal is handled (held) before the pipe drains
        stdout = proc.stdout.read()
        proc.wait(timeout=60)
        reader.join(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert check_all_or_nothing(proc.returncode, stdout, "".join(lines), work, scratch) == "everything"


def test_a_ctrl_c_at_any_moment_gives_all_the_output_and_exit_0_or_none_and_130(inputs, tmp_path):
    """The race of the issue: signals spread from well before the end of the command to past it
    (it takes T s alone; here at 0.5 T to 1.2 T). Each run ends with everything and exit 0 or
    nothing and exit 130, whichever side of the delivery the signal fell on."""
    proc, work, scratch = delivered(inputs, tmp_path / "alone")
    began = time.monotonic()
    stdout, stderr = proc.communicate(timeout=120)
    alone = time.monotonic() - began
    assert check_all_or_nothing(proc.returncode, stdout, stderr, work, scratch) == "everything"
    for k in range(8):
        proc, work, scratch = delivered(inputs, tmp_path / f"run{k}")
        try:
            time.sleep(alone * (0.5 + 0.1 * k))
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        check_all_or_nothing(proc.returncode, stdout, stderr, work, scratch)


#: A stand-in for mpirun: answers --version, else starts a "rank" that sleeps, records both
#: process ids and waits. Like mpirun, it gets no SIGINT of its own (`launch` starts it in a
#: session of its own).
FAKE_MPIRUN = """#!/bin/sh
[ "$1" = --version ] && { echo "fake launcher"; exit 0; }
sleep 120 &
echo "$$ $!" >> "$FAKE_MPIRUN_PIDS"
wait
"""


def test_ctrl_c_kills_the_mpiruns_of_measure_cosched_started_from_its_threads(tmp_path):
    """`measure cosched` starts each job's mpirun from a thread of its pool; Python interrupts the
    main thread only, so those mpiruns (and their ranks) must be killed for it, not waited for."""
    fake, pids = tmp_path / "mpirun", tmp_path / "pids"
    fake.write_text(FAKE_MPIRUN)
    fake.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    argv = [sys.executable, "-m", "commaware.cli", "measure", "cosched", "--jobs", "3", "--mpirun", str(fake), "--json"]
    proc = subprocess.Popen(argv, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=with_default_sigint,
                            env={**os.environ, "FAKE_MPIRUN_PIDS": str(pids)})
    launched: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(launched) < 6:  # three launchers, each with its rank
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
            launched = [int(p) for p in pids.read_text().split()] if pids.exists() else []
        stdout, stderr, took = interrupt(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in launched:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 130, (proc.returncode, stderr[-2000:])
    assert took < STOP_LIMIT, f"{took:.2f} s to stop"
    assert stderr.endswith("\nerror: interrupted (Ctrl-C)\n") and "Traceback" not in stderr, stderr[-2000:]
    assert stdout == ""
    assert left_running(launched) == []
    assert files_under(work) == []
