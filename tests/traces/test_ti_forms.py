"""The argument forms `smpirun -trace-ti` (SimGrid 3.32) writes for real MPI programs: derived
datatypes, MPI_IN_PLACE, zero counts, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_PROC_NULL, several
communicators, MPI_Ssend, non-blocking collectives, MPI_Waitany.

Each section of tests/peers/ti_forms.c is run once by SMPI on a star of 4 or 5 hosts, with the
configuration SMPI's replay is compared under elsewhere (tests/peers/smpi_replay.py) and traced
with ``-trace-ti``. Its makespan is the reference for commaware's replay of the trace: SMPI's
own run of the program (deterministic: its compute is ``smpi_execute_flops``), and SMPI's replay
of the trace where that replay works. Where SMPI's replay fails, the test says how, as the
evidence docs/formats.md cites ("What smpirun writes").

Needs ``smpirun`` and ``smpicc`` (Debian package ``simgrid``): without them these tests skip,
unless ``COMMAWARE_REQUIRE_SIMGRID=1`` (set by ``.ci/run``): then they fail with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commaware import _core, load_platform, load_trace, simulate
from conftest import requires_smpi_mark, run_cli

import smpi_replay

SMPI_OK, SMPI_REASON = smpi_replay.smpi_available()
pytestmark = requires_smpi_mark((SMPI_OK, SMPI_REASON), "smpirun TI forms")

PROGRAM = Path(__file__).resolve().parents[1] / "peers" / "ti_forms.c"
#: The size of each derived datatype of the `derived` section (MPI_Type_size).
DERIVED_BYTES = 1600


def cluster(n: int) -> dict:
    return {"cluster": {"count": n, "speed": 1e9, "prefix": "n"}, "network": {"bandwidth": 1.25e8, "latency": 1e-4}}


def algorithms(section: str, n: int) -> dict[str, str]:
    """SMPI's algorithms that are commaware's defaults; in `derived`, gather's basic linear
    algorithm: SMPI's replay of the binomial one deadlocks when the blocks have 0 bytes (a
    derived datatype read as SimGrid reads it, or a count of 0)."""
    algos = smpi_replay.default_algorithms(n)
    return {**algos, "gather": "ompi_basic_linear"} if section == "derived" else algos


def coll(section: str, n: int) -> str:
    """commaware's --coll for the algorithms SMPI runs."""
    names = {**algorithms(section, n), "alltoall": "pairwise", "alltoallv": "pairwise"}
    return ",".join([smpi_replay.SCAN_COLL, *(f"{k}={v}" for k, v in names.items())])


_RUNS: dict[tuple[str, int], tuple[Path, smpi_replay.SmpiRun]] = {}


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """(index, SMPI's run) of a section on n ranks, run once per module."""
    assert SMPI_OK, SMPI_REASON
    base = tmp_path_factory.mktemp("forms")

    def get(section: str, n: int = 4) -> tuple[Path, smpi_replay.SmpiRun]:
        if (section, n) not in _RUNS:
            _RUNS[section, n] = smpi_replay.run_program(PROGRAM, n, cluster(n), base / f"{section}-{n}", args=[section],
                                                        collectives=algorithms(section, n))
        return _RUNS[section, n]

    return get


def ours(index: Path, section: str, n: int, smpi: str | None = None, **load) -> float:
    platform = {**cluster(n), "network": {**cluster(n)["network"], "envelope_bytes": smpi_replay.SMPI_ENVELOPE_BYTES}}
    return simulate(load_platform(platform), load_trace(index, format="ti", **load), coll=coll(section, n),
                    smpi=smpi).makespan


@pytest.mark.parametrize("n", [4, 5])
@pytest.mark.parametrize("section", ["derived", "inplace", "zero", "anytag", "comms"])
def test_smpis_replay_and_commaware_agree(traced, section, n):
    """Forms both replays read: a derived datatype is 0 bytes in both."""
    index, _ = traced(section, n)
    smpi = smpi_replay.run_smpi_replay(cluster(n), index, collectives=algorithms(section, n)).makespan
    assert smpi > 5e-4
    assert ours(index, section, n) == pytest.approx(smpi, rel=1e-9), (section, n)


@pytest.mark.parametrize("n", [4, 5])
@pytest.mark.parametrize("section", ["derived", "inplace", "zero", "anytag", "comms"])
def test_smpis_replay_in_its_default_configuration_and_commaware_with_the_preset_agree(traced, section, n):
    """The same traces replayed by SMPI with SimGrid 3.32's default bandwidth and latency
    factors and overheads, and by commaware with `--smpi simgrid-3.32`."""
    index, _ = traced(section, n)
    smpi = smpi_replay.run_smpi_replay(cluster(n), index, collectives=algorithms(section, n), smpi_timing=[]).makespan
    neutral = smpi_replay.run_smpi_replay(cluster(n), index, collectives=algorithms(section, n)).makespan
    assert smpi != pytest.approx(neutral, rel=1e-6), "the default configuration must change the makespan"
    assert ours(index, section, n, smpi="simgrid-3.32") == pytest.approx(smpi, rel=1e-9), (section, n)


@pytest.mark.parametrize("n", [4, 5])
@pytest.mark.parametrize("section", ["derived", "inplace", "zero", "anytag", "gather_recv0", "anysource", "procnull",
                                     "ssend"])
def test_commaware_replays_what_smpi_ran(traced, section, n):
    """SMPI's run of the program is commaware's replay of its trace, given the derived
    datatype's size (all of the section's derived datatypes have 1600 bytes)."""
    index, run = traced(section, n)
    assert len(run.rank_ends) == n and run.makespan > 5e-4
    load = {"derived_datatype_bytes": DERIVED_BYTES} if section == "derived" else {}
    assert ours(index, section, n, **load) == pytest.approx(run.makespan, rel=1e-9), (section, n)


#: What SMPI 3.32's replay does with the trace of a section it cannot replay.
SMPI_REPLAY_FAILS = {
    # `-333`, as smpirun writes MPI_ANY_SOURCE, is taken for a rank: the receive never matches.
    "anysource": "Deadlock detected",
    # `-333`, as smpirun writes MPI_PROC_NULL, is taken for a rank: the send aborts.
    "procnull": "SendAction::kernel",
    # A receive count of 0 is left out of the line, and the replay reads the root as the count.
    "gather_recv0": "Deadlock detected",
    # smpirun writes nothing for an MPI_Sendrecv with an MPI_PROC_NULL side, though the other side moves data.
    "sendrecv_procnull": "Deadlock detected",
    "ssend": "action Ssend is unknown",
    "icoll": "action ibcast is unknown",
    "waitany": "action waitAny is unknown",
}


@pytest.mark.parametrize("section", sorted(SMPI_REPLAY_FAILS))
def test_what_smpis_replay_cannot_replay(traced, section):
    index, _ = traced(section)
    with pytest.raises(smpi_replay.SmpiError, match=SMPI_REPLAY_FAILS[section]):
        smpi_replay.run_smpi_replay(cluster(4), index, collectives=algorithms(section, 4), timeout=120)


@pytest.mark.parametrize("section, error, words", [
    ("icoll", "TraceError", ["line 3", "`ibcast` (a non-blocking collective", "SimGrid's replay does not read it either"]),
    ("waitany", "TraceError", ["line 4", "`waitAny` (MPI_Waitany", "which request completed"]),
    # The receive of the message smpirun did not write never matches.
    ("sendrecv_procnull", "DeadlockError", ["deadlocks", "rank 1 blocked", "sendrecv(dst=2"]),
])
def test_what_commaware_cannot_replay(traced, section, error, words):
    index, _ = traced(section)
    with pytest.raises(getattr(_core, error)) as info:
        ours(index, section, 4)
    assert all(w in str(info.value) for w in words), str(info.value)


def test_a_trace_has_no_communicators(traced):
    """smpirun writes no comm_split or comm_dup line and a collective's root in its
    communicator's ranks: both replays run every collective on all ranks, which is not the run."""
    index, run = traced("comms")
    assert "comm_split" not in "".join(p.read_text() for p in (index.parent / "ti.txt_files").iterdir())
    replayed = ours(index, "comms", 4)
    assert abs(replayed - run.makespan) > 0.1 * run.makespan, (replayed, run.makespan)


def test_the_cli_warns_once_about_derived_datatypes(traced, tmp_path):
    index, run = traced("derived")
    platform = tmp_path / "platform.json"
    platform.write_text(json.dumps(
        {**cluster(4), "network": {**cluster(4)["network"], "envelope_bytes": smpi_replay.SMPI_ENVELOPE_BYTES}}))
    args = ("simulate", platform, index, "--format", "ti", "--coll", coll("derived", 4), "--json")
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr
    # Per rank: isend, send, sendRecv, bcast, gather, alltoall, allgather (not the receives).
    doc = json.loads(proc.stdout)
    assert doc["derived_datatype_ops"] == 7 * 4
    warnings = [line for line in proc.stderr.splitlines() if "derived datatype" in line]
    assert len(warnings) == 1 and "28 messages" in warnings[0] and "--derived-datatype-bytes N" in warnings[0], proc.stderr
    proc = run_cli(*args, "--derived-datatype-bytes", str(DERIVED_BYTES))
    assert proc.returncode == 0 and "derived" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["derived_datatype_ops"] == 28
    assert doc["makespan"] == pytest.approx(run.makespan, rel=1e-9)
