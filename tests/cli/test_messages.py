"""Each error blames the input that is wrong (issue 30, item 5): the SWF header field and its
line, not --nodes; mpirun's refusal to run as root, not MPI_Init; the file the user asked for,
not its hidden partial name; a huge echoed value cut to about 100 characters with its length.
(A latency too long for any progress is in test_bad_input's platform cases.)"""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from commaware import _core
from commaware.traces import record

from conftest import EXAMPLES

JOB = "1 0 0 10 4 -1 -1 4 10 -1 1 1 1 1 1 1 -1 -1\n"


@pytest.mark.parametrize("command", ["run", "compare"])
@pytest.mark.parametrize("value", ["0", "99999999999", "-4", "many"])
def test_a_bad_maxprocs_header_is_named_with_its_line_not_blamed_on_nodes(cli, tmp_path, command, value):
    log = tmp_path / "log.swf"
    log.write_text(f"; Version: 2.2\n; Computer: test\n; MaxProcs: {value}\n{JOB}")
    proc = cli("cosched", command, log, *(["--seeds", "1"] if command == "compare" else []))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (f"error: {log}: line 3: header MaxProcs: must be a whole number of processors in "
                           f"1..2^24, got '{value}'; or give --nodes\n")
    assert "Traceback" not in proc.stderr


def test_a_good_maxprocs_header_or_nodes_runs(cli, tmp_path):
    log = tmp_path / "log.swf"
    log.write_text(f"; MaxProcs: 0\n{JOB}")
    assert cli("cosched", "run", log, "--nodes", "8", "--json").returncode == 0
    log.write_text(f"; MaxProcs: 8\n{JOB}")
    assert json.loads(cli("cosched", "run", log, "--json", check=True).stdout)["processors"] == 8


def test_a_huge_op_name_is_echoed_cut_with_its_length(cli, tmp_path):
    name = "x" * 2_000_000
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps({"ranks": [[{"op": name}]]}))
    proc = cli("simulate", EXAMPLES / "cluster16.json", trace)
    assert proc.returncode == 2
    assert f"unknown variant `{'x' * 98}… (2000003 characters) expected one of `compute`" in proc.stderr
    assert len(proc.stderr) < 1000


def test_values_echoed_by_python_messages_are_cut_too(cli):
    proc = cli("simulate", EXAMPLES / "cluster16.json", EXAMPLES / "ring.json", "--param", "b=" + "9" * 500 + "z")
    assert proc.returncode == 2
    assert proc.stderr == f"error: --param: expected NAME=VALUE with a number, got 'b={'9' * 96}… (505 characters)\n"
    assert _core.cut_long_values("a " + "é" * 101) == "a " + "é" * 99 + "… (101 characters)"


@pytest.mark.parametrize("args,asked", [
    (["simulate", EXAMPLES / "cluster16.json", EXAMPLES / "ring.json", "--messages", "{d}/out.parquet"], "out.parquet"),
    (["simulate", EXAMPLES / "cluster16.json", EXAMPLES / "ring.json", "--messages", "{d}/out.csv"], "out.csv"),
    (["cosched", "run", EXAMPLES / "cosched/nas_heavy_seed1.json", "--jobs-out", "{d}/jobs.parquet"], "jobs.parquet"),
    (["multicast", "generate", "-q", "-o", "{d}/inst.json"], "inst.json"),
])
def test_a_write_error_names_the_file_asked_for_not_its_partial(cli, tmp_path, args, asked):
    missing = tmp_path / "no-such-dir"
    proc = cli(*[str(a).replace("{d}", str(missing)) for a in args])
    assert proc.returncode != 0
    assert f"{missing}/{asked}" in proc.stderr
    assert ".partial" not in proc.stderr and "error: :" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


OPEN_MPI_ROOT = """--------------------------------------------------------------------------
mpirun has detected an attempt to run as root.

Running as root is *strongly* discouraged as any mistake (e.g., in
defining TMPDIR) or bug can result in catastrophic damage to the OS
file system, leaving your system in an unusable state.

You can override this protection by adding the --allow-run-as-root option
to the cmd line or by setting two environment variables in the following way:
the variable OMPI_ALLOW_RUN_AS_ROOT=1 to indicate the desire to override this
protection, and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 to confirm the choice and
add one more layer of certainty that you want to do so.
--------------------------------------------------------------------------
"""


def fake_launcher(tmp_path, stderr: str, code: int):
    script = tmp_path / "mpirun"
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.stderr.write({stderr!r})\nsys.exit({code})\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_mpirun_refusing_root_is_recognised_and_says_how_to_allow_it(tmp_path, capfd):
    launcher = fake_launcher(tmp_path, OPEN_MPI_ROOT, 1)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    code, stderr = record._run_echoing_stderr([str(launcher), "-np", "2", "./app"], dict(os.environ), 30, "mpirun")
    assert code == 1
    assert capfd.readouterr().err == OPEN_MPI_ROOT  # the launcher's own words still reach the user
    message = record._failure(code, scratch, stderr)
    assert message.startswith("mpirun refused to run as root (exit code 1), so no rank started")
    assert "--allow-run-as-root" in message
    assert "OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" in message
    assert "MPI_Init" not in message


def test_a_program_that_never_started_mpi_is_still_reported_as_such(tmp_path):
    launcher = fake_launcher(tmp_path, "app: segmentation fault\n", 139)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    code, stderr = record._run_echoing_stderr([str(launcher)], dict(os.environ), 30, "mpirun")
    message = record._failure(code, scratch, stderr)
    assert "never called MPI_Init" in message and "root" not in message
