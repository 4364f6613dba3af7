"""Parameter sweeps (`commaware sweep`) and the results store (`commaware results`): Dask and
serial runs agree row by row, a killed sweep resumes without losing or doubling a row, the
store answers SQL and draws charts, and bad input is one line and exit 2."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import jsonschema
import pandas as pd
import pyarrow.parquet as pq
import pytest

from commaware.experiments import results, sweep
from commaware.experiments.results import EXECUTION_COLUMNS, META_COLUMNS
from commaware.experiments.sweepable import commands
from conftest import EXAMPLES, ROOT, run_cli

SWEEPS = EXAMPLES / "sweeps"


def write_spec(folder: Path, text: str, name: str = "spec.toml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def output_columns(frame: pd.DataFrame) -> list[str]:
    """Every column but the execution ones (wall time, host, finish time)."""
    return [c for c in frame.columns if c not in EXECUTION_COLUMNS]


def stored_files(out: Path) -> tuple[list[Path], list[Path]]:
    """(the Parquet files, the leftover partial files) of a results directory."""
    rows = out / "rows"
    return sorted(rows.glob("*.parquet")), sorted(p for p in rows.iterdir() if p.name.endswith(".partial"))


def stored_run_ids(out: Path) -> list[str]:
    """Every run_id of every file, as the files hold them (no de-duplication)."""
    files, _ = stored_files(out)
    return [rid for f in files for rid in pq.read_table(f, columns=["run_id"]).column("run_id").to_pylist()]


# --- Dask and serial agree ----------------------------------------------------------------------

GRID54 = """
command = "cosched.run"
[fixed]
jobs = 10
interarrival_s = 100
[grid]
policy = ["batch-easy", "nls", "hybrid"]
seed = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]
"""


def test_local_dask_cluster_equals_serial_row_by_row(tmp_path):
    spec = write_spec(tmp_path, GRID54)
    serial = sweep.run(spec, tmp_path / "serial", serial=True)
    dask = sweep.run(spec, tmp_path / "dask", workers=2)
    assert len(serial) == len(dask) == 54
    assert serial["run_id"].is_unique
    cols = output_columns(serial)
    assert set(commands()["cosched.run"].outputs) <= set(cols)
    pd.testing.assert_frame_equal(serial[cols], dask[cols])
    # The rows are the spec's, in the grid's order (last key fastest), and really differ.
    assert list(serial["policy"][:2]) == ["batch-easy", "batch-easy"] and list(serial["seed"][:3]) == [1, 2, 3]
    assert serial["avg_response_s"].nunique() > 40
    assert (serial["wall_s"] > 0).all()
    # Compacted at the end: one merged file each, no per-run file left.
    assert [f.name.startswith("part-") for f in stored_files(tmp_path / "dask")[0]] == [True]
    # A second sweep runs nothing and gives the same table.
    again = sweep.run(spec, tmp_path / "dask", serial=True)
    assert again.attrs["ran"] == 0 and again.attrs["stored"] == 54
    pd.testing.assert_frame_equal(again[cols], dask[cols])


# --- SIGKILL of the driver, then resume ----------------------------------------------------------

GRID60 = """
command = "cosched.run"
[fixed]
jobs = 12
policy = "nls"
[grid]
interarrival_s = [100, 150, 200]
seed = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]
"""


def test_sigkill_of_the_driver_then_resume_gives_the_same_table(tmp_path):
    spec = write_spec(tmp_path, GRID60)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "commaware.cli", "sweep", str(spec), "--out", str(out), "--workers", "2", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(list((out / "rows").glob("*.parquet")) if (out / "rows").exists() else []) < 12:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the sweep stored too few rows in 60 s"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)  # the driver only: its Dask workers notice and stop
        proc.wait(timeout=10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of the session
        except ProcessLookupError:
            pass
    files, _ = stored_files(out)
    interrupted = stored_run_ids(out)
    assert 12 <= len(interrupted) < 60, len(interrupted)  # the workers stopped with the driver
    assert len(set(interrupted)) == len(interrupted)
    for f in files:  # every visible file is complete
        assert pq.read_table(f).num_rows >= 1

    resumed = run_cli("sweep", spec, "--out", out, "--workers", "2", "--json", check=True)
    table = pd.DataFrame(json.loads(resumed.stdout))
    files, partials = stored_files(out)
    assert partials == []
    ids = stored_run_ids(out)
    assert len(ids) == len(set(ids)) == 60
    assert set(interrupted) <= set(ids)
    reference = sweep.run(spec, tmp_path / "reference", serial=True)
    assert list(table["run_id"]) == list(reference["run_id"])
    for col in [*commands()["cosched.run"].outputs, "seed", "interarrival_s", "params_json"]:
        # --json prints a missing value as null: read it in the reference's dtype (NaN for a
        # float output, null without a platform), where NaN equals NaN.
        assert table[col].astype(reference[col].dtype).equals(reference[col]), col


def test_stale_partial_files_of_dead_processes_are_removed(tmp_path):
    spec = write_spec(tmp_path, GRID54.replace("jobs = 10", "jobs = 5").replace('"nls", "hybrid"', '"batch"'))
    out = tmp_path / "out"
    sweep.run(spec, out, serial=True, compact=False)
    store = results.open_store(out)
    # A dead process's half-written file (pid 2^22 + 1 is above Linux's pid_max limit).
    stale = out / "rows" / f".x.parquet.{os.uname().nodename}.{2**22 + 1}.partial"
    stale.write_bytes(b"PAR1 half")
    mine = out / "rows" / f".y.parquet.{os.uname().nodename}.{os.getpid()}.partial"
    mine.write_bytes(b"PAR1 half")
    assert store.remove_stale_partials() == 1
    assert not stale.exists() and mine.exists()
    mine.unlink()


# --- compaction ---------------------------------------------------------------------------------


def test_compact_never_loses_or_doubles_a_row(tmp_path):
    spec = write_spec(tmp_path, GRID54.replace('"nls", "hybrid"', '"batch"'))
    out = tmp_path / "out"
    before = sweep.run(spec, out, serial=True, compact=False)
    files, _ = stored_files(out)
    assert len(files) == 36 and not any(f.name.startswith("part-") for f in files)
    leftover = files[0].read_bytes()
    proc = run_cli("results", "compact", out, "--json", check=True)
    assert json.loads(proc.stdout) == {"merged": 36}
    files, _ = stored_files(out)
    assert len(files) == 1 and files[0].name.startswith("part-")
    # A crash after the merged file's rename but before the deletions leaves a per-run file:
    # it is read once, and the next compaction removes it.
    (out / "rows" / f"{before['run_id'][0]}.parquet").write_bytes(leftover)
    assert len(results.load(out)) == 36
    assert results.open_store(out).compact() == 0
    assert len(stored_files(out)[0]) == 1
    after = results.load(out).set_index("run_id").loc[before["run_id"]].reset_index()
    cols = output_columns(before)
    pd.testing.assert_frame_equal(after[cols], before[cols], check_dtype=False)


# --- every sweepable command ---------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    'command = "simulate"\n[fixed]\nplatform = "EX/cluster16.json"\n[grid]\ntrace = ["EX/ring.json", "EX/alltoall.json"]\n'
    'placement = ["rrn", "random"]\n',
    'command = "tiling.analyze"\n[fixed]\nspace = "16x16x1024"\nprocs = "4x4"\n[grid]\ntile_height = [16, 64]\nsci = [true, false]\n',
    'command = "multicast"\n[fixed]\nnodes = 8\n[grid]\nalgorithm = ["ecf", "rrs"]\nseed = [1, 2]\nexecute = ["maxmin"]\n',
    'command = "multicast"\n[fixed]\ninstance = "EX/multicast/random12.json"\n[grid]\nalgorithm = ["ecf", "ecfp"]\n',
    'command = "penalties"\n[fixed]\nscheme = "EX/schemes/fig4.json"\n[grid]\nmodel = ["gige", "infiniband", "maxmin"]\n',
    'command = "taskfarm"\n[fixed]\ntasks = 100\n[grid]\nalgorithm = ["ia-multi", "fcfs"]\nsend_mb = [1.0, 2.0]\n',
    'command = "taskfarm"\n[fixed]\ntree = "EX/interference/tree_small.json"\ntasks = 50\n',
])
def test_each_command_gives_its_outputs(tmp_path, text):
    spec = write_spec(tmp_path, text.replace("EX/", f"{EXAMPLES.as_posix()}/"))
    frame = sweep.run(spec, tmp_path / "out", serial=True)
    command = commands()[frame["command"][0]]
    assert len(frame) == len(sweep.load_spec(spec).runs) >= 1
    must = [name for name in command.outputs if name not in ("T_sci", "makespan", "ratio")]
    assert frame[must].notna().all().all(), frame[must]


def test_columns_have_one_kind_across_commands():
    kinds: dict[str, str] = dict(META_COLUMNS) | dict(EXECUTION_COLUMNS)
    for command in commands().values():
        names = [p.name for p in command.params] + list(command.outputs)
        assert len(names) == len(set(names)), command.name
        for name, kind in [(p.name, "str" if p.kind == "file" else p.kind) for p in command.params] + list(command.outputs.items()):
            assert kinds.setdefault(name, kind) == kind, (command.name, name)


def test_file_content_is_part_of_the_run_id(tmp_path):
    scheme = tmp_path / "scheme.json"
    scheme.write_text((EXAMPLES / "schemes" / "fig4.json").read_text())
    spec = write_spec(tmp_path, 'command = "penalties"\n[fixed]\nscheme = "scheme.json"\n')
    first = sweep.load_spec(spec).runs[0].run_id
    assert sweep.load_spec(spec).runs[0].run_id == first  # deterministic
    scheme.write_text(scheme.read_text() + "\n ")
    assert sweep.load_spec(spec).runs[0].run_id != first
    # 100 and 100.0 are the same float parameter; identical runs are run once.
    a = sweep.load_spec({"command": "cosched.run", "runs": [{"interarrival_s": 100}, {"interarrival_s": 100.0}]})
    assert len(a.runs) == 1


# --- queries and plots ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example_store(tmp_path_factory):
    out = tmp_path_factory.mktemp("store") / "cosched-results"
    run_cli("sweep", SWEEPS / "cosched.toml", "--out", out, "--serial", check=True)
    return out


def test_query_from_cli_and_api(example_store):
    sql = "SELECT policy, count(*) AS n, avg(avg_response_s) AS resp FROM runs GROUP BY policy ORDER BY policy"
    proc = run_cli("results", "query", example_store, sql, "--json", check=True)
    rows = json.loads(proc.stdout)
    assert [r["policy"] for r in rows] == ["batch-easy", "hybrid", "nls"] and {r["n"] for r in rows} == {4}
    api = results.query(example_store, sql)
    assert list(api["resp"]) == pytest.approx([r["resp"] for r in rows], rel=1e-12)
    table = run_cli("results", "query", example_store, sql, check=True).stdout
    assert "batch-easy" in table and "resp" in table
    # Every column, missing values (mpl, workload) included, as a table and as JSON.
    assert "12 row(s)" in run_cli("results", "query", example_store, "SELECT * FROM runs", check=True).stdout
    every = json.loads(run_cli("results", "query", example_store, "SELECT *, [1, 2] AS l FROM runs", "--json",
                               check=True).stdout)
    assert every[0]["mpl"] is None and every[0]["l"] == [1, 2] and len(every) == 12
    everything = results.load(example_store)
    assert len(everything) == 12 and everything["run_id"].is_unique
    assert {"params_json", "inputs_hash", "code_version", "seed", "wall_s", "host"} <= set(everything.columns)
    assert everything["code_version"].str.startswith("0.").all()


def test_plot_from_cli_and_api(example_store, tmp_path):
    png = tmp_path / "resp.png"
    run_cli("results", "plot", example_store, "--x", "interarrival_s", "--y", "avg_response_s", "--hue", "policy",
            "-o", png, check=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = results.plot(example_store, x="policy", y="utilization", hue="seed", output=tmp_path / "util.svg",
                       where="interarrival_s = 100")
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "utilization" in text
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


# --- bad input -----------------------------------------------------------------------------------

BAD_SPECS = [
    ('command = "nope"\n', "command", "unknown command"),
    ('command = "cosched.run"\n[fixed]\nbogus = 1\n', "fixed.bogus", "unknown parameter"),
    ('command = "cosched.run"\n[grid]\npolicy = []\n', "grid.policy", "empty list"),
    ('command = "cosched.run"\n[fixed]\njobs = "many"\n', "fixed.jobs", "must be an integer"),
    ('command = "cosched.run"\n[grid]\npolicy = ["nls", "fifo"]\n', "grid.policy[1]", "unknown value 'fifo'"),
    ('command = "penalties"\n[fixed]\nscheme = "missing.json"\n', "fixed.scheme", "no such file"),
    ('command = "penalties"\n', "fixed.scheme", "required by penalties"),
    ('command = "cosched.run"\n[grid]\nseed = [1]\n[[runs]]\nseed = 2\n', "grid", "not both"),
    ('command = "cosched.run"\nseeds = 3\n', "seeds", "unknown key"),
    ('command = "cosched.run"\n[[runs]]\njobs = 0\n', "runs[0].jobs", "must be >= 1"),
    ('command = "cosched.run\n', "", "not valid TOML"),
]


@pytest.mark.parametrize("text,field,reason", BAD_SPECS)
def test_bad_spec_is_one_line_and_exit_2(tmp_path, text, field, reason):
    spec = write_spec(tmp_path, text)
    out = tmp_path / "out"
    proc = run_cli("sweep", spec, "--out", out, "--serial")
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    line = " ".join(proc.stderr.split())
    assert f"{spec}: {field}: " in line if field else f"{spec}: " in line, line
    assert reason in line, line
    assert not out.exists()  # nothing is created for a bad spec


def test_bad_specs_are_rejected_by_the_schema_too():
    schema = json.loads((ROOT / "docs" / "sweep.schema.json").read_text())
    for text, _, _ in BAD_SPECS:
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            continue
        if "missing.json" in text:
            continue  # a file's existence is not the schema's business
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(doc, schema)


def limited_cli(*args: object, memory_gb: float = 2.0, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`commaware ARGS` under an address-space limit, killed after `timeout` s (a regression fails,
    it neither hangs nor takes the machine's memory)."""
    import resource

    limit = int(memory_gb * 2**30)
    return subprocess.run([sys.executable, "-m", "commaware.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))


def test_a_huge_grid_is_refused_before_it_is_built(tmp_path):
    values = ", ".join(str(i) for i in range(1, 1001))
    spec = write_spec(tmp_path, f'command = "cosched.run"\n[grid]\nseed = [{values}]\njobs = [{values}]\n'
                                f'interarrival_s = [{values}]\nprocessors = [{values}]\n')
    started = time.monotonic()
    proc = limited_cli("sweep", spec, "--out", tmp_path / "out", "--serial")
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert " ".join(proc.stderr.split()) == (
        f"error: {spec}: grid: 1,000,000,000,000 runs (a 1,000 × 1,000 × 1,000 × 1,000 grid) is more than the "
        f"limit of 1,000,000 runs (split the sweep, or raise the limit with --max-runs)")
    assert time.monotonic() - started < 30
    assert not (tmp_path / "out").exists()


def test_max_runs_moves_the_limit(tmp_path):
    proc = run_cli("sweep", SWEEPS / "cosched.toml", "--out", tmp_path / "out", "--serial", "--max-runs", "11")
    assert proc.returncode == 2 and "grid: 12 runs (a 3 × 2 × 2 grid) is more than the limit of 11 runs" in \
        " ".join(proc.stderr.split())
    assert not (tmp_path / "out").exists()
    run_cli("sweep", SWEEPS / "cosched.toml", "--out", tmp_path / "out", "--serial", "--max-runs", "12", check=True)
    with pytest.raises(Exception, match=r"<dict>: runs: 3 runs \(a list of runs\) is more than the limit of 2 runs"):
        sweep.load_spec({"command": "cosched.run", "runs": [{"seed": 1}, {"seed": 2}, {"seed": 3}]}, max_runs=2)
    assert len(sweep.load_spec({"command": "cosched.run", "runs": [{"seed": 1}, {"seed": 2}]}, max_runs=2).runs) == 2


DEEP = 100_000
DEEP_SPECS = {
    "arrays": f'command = "cosched.run"\n[fixed]\njobs = {"[" * DEEP}{"]" * DEEP}\n',
    "inline tables": f'command = "cosched.run"\n[fixed]\njobs = {"{a = " * DEEP}1{"}" * DEEP}\n',
    "dotted keys": f'command = "cosched.run"\n[fixed]\n{"a." * DEEP}b = 1\n',
    "table headers": f'command = "cosched.run"\n[{".".join(["fixed"] * DEEP)}]\njobs = 1\n',
}


@pytest.mark.parametrize("kind", list(DEEP_SPECS))
def test_a_spec_nested_100000_levels_is_one_line(tmp_path, kind):
    spec = write_spec(tmp_path, DEEP_SPECS[kind])
    started = time.monotonic()
    proc = limited_cli("sweep", spec, "--out", tmp_path / "out", "--serial", memory_gb=1.5)
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    line = 2 if kind == "table headers" else 3
    assert " ".join(proc.stderr.split()) == \
        f"error: {spec}: line {line}: nested more than {sweep.MAX_SPEC_DEPTH} levels deep (a sweep spec needs 3)"
    assert time.monotonic() - started < 20
    assert not (tmp_path / "out").exists()


def test_nesting_is_counted_outside_strings_and_comments_only(tmp_path):
    deep = sweep.MAX_SPEC_DEPTH + 5
    text = f"""# a comment with {"[" * deep} and a.b.c.d.e.f
command = "cosched.run"  # {"{" * deep}
description = \"\"\"brackets {"[" * deep} and "quotes" \\\\ in text\"\"\"\"
[fixed]
classes = '{"[" * deep}'
mix = "nas"
[grid]
seed = [  # {"[" * deep}
  1, 2,
  3,
]
policy = ["nls", 'hybrid']
"""
    spec = write_spec(tmp_path, text)
    loaded = sweep.load_spec(spec)  # valid TOML, 3 levels deep: no refusal
    assert tomllib.loads(text)["description"].startswith("brackets [")
    assert [r.params["seed"] for r in loaded.runs] == [1, 1, 2, 2, 3, 3]
    assert {r.params["classes"] for r in loaded.runs} == {"[" * deep}
    # Just under the limit a value is checked as usual; just over it, the nesting is refused.
    for levels, reason in ((sweep.MAX_SPEC_DEPTH - 2, "fixed.jobs: must be an integer, got list"),
                           (sweep.MAX_SPEC_DEPTH - 1, "line 3: nested more than")):
        nested = write_spec(tmp_path, f'command = "cosched.run"\n[fixed]\njobs = {"[" * levels}1{"]" * levels}\n',
                            name=f"n{levels}.toml")
        with pytest.raises(Exception, match=re.escape(reason)):
            sweep.load_spec(nested)
    deep_dict: list = []
    for _ in range(DEEP):
        deep_dict = [deep_dict]
    with pytest.raises(Exception, match=rf"<dict>: fixed\.jobs[\[\]0]+(… \(\d+ characters\))?: nested more than {sweep.MAX_SPEC_DEPTH} levels"):
        sweep.load_spec({"command": "cosched.run", "fixed": {"jobs": deep_dict}})


def test_a_run_that_fails_names_its_parameters_and_input(tmp_path):
    (tmp_path / "w.json").write_text('{"jobs": [{"id": 1}]}')
    spec = write_spec(tmp_path, 'command = "cosched.run"\n[fixed]\nworkload = "w.json"\n')
    proc = run_cli("sweep", spec, "--out", tmp_path / "out", "--serial")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "w.json" in proc.stderr and "run " in proc.stderr


@pytest.mark.parametrize("args,expected", [
    (["results", "query", "DIR", "SELECT nope FROM runs"], "DIR: SQL: "),
    (["results", "query", "DIR", "SELEC 1"], "DIR: SQL: "),
    (["results", "plot", "DIR", "--x", "nope", "--y", "avg_response_s"], "DIR: x: unknown column `nope`"),
    (["results", "plot", "DIR", "--x", "seed", "--y", "policy"], "DIR: y: column `policy` is VARCHAR, not a number"),
    (["results", "plot", "DIR", "--x", "seed", "--y", "avg_wait_s", "--hue", "colour"], "DIR: hue: unknown column"),
    (["results", "plot", "DIR", "--x", "seed", "--y", "avg_wait_s", "-o", "chart.pdf"], "chart.pdf: the chart must be"),
])
def test_bad_query_or_plot_is_exit_2(example_store, args, expected):
    proc = run_cli(*[str(example_store) if a == "DIR" else a for a in args])
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert expected.replace("DIR", str(example_store)) in " ".join(proc.stderr.split())


def test_a_directory_that_is_not_ours_is_refused(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "thesis.tex").write_text("keep me")
    for args in (["sweep", SWEEPS / "cosched.toml", "--out", theirs, "--serial"], ["results", "query", theirs, "SELECT 1"],
                 ["results", "compact", theirs]):
        proc = run_cli(*args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert f"{theirs}: exists and is not a commaware results directory" in " ".join(proc.stderr.split())
    assert sorted(p.name for p in theirs.iterdir()) == ["thesis.tex"]
    (tmp_path / "newer").mkdir()
    (tmp_path / "newer" / "commaware-results.json").write_text('{"format": "commaware-results", "version": 9}')
    proc = run_cli("results", "query", tmp_path / "newer", "SELECT 1")
    assert proc.returncode == 2 and "commaware-results.json: version: " in " ".join(proc.stderr.split())


@pytest.mark.parametrize("args,expected", [
    (["--serial", "--scheduler", "tcp://127.0.0.1:1"], "--serial and --scheduler: give one place to run"),
    (["--jobqueue", "slurm", "--jobqueue-option", "cores"], "--jobqueue-option: expected KEY=VALUE"),
    (["--jobs", "2"], "--jobs: goes with --jobqueue"),
    (["--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], "--workers: sizes the local cluster only"),
])
def test_bad_option_combinations_are_exit_2(tmp_path, args, expected):
    proc = run_cli("sweep", SWEEPS / "cosched.toml", "--out", tmp_path / "out", *args)
    assert proc.returncode == 2 and expected in " ".join(proc.stderr.split())
    assert not (tmp_path / "out").exists()


# --- schema, examples, start-up ------------------------------------------------------------------


def test_docs_schema_up_to_date_and_examples_validate():
    path = ROOT / "docs" / "sweep.schema.json"
    proc = run_cli("schema", "sweep", check=True)
    assert json.loads(path.read_text()) == json.loads(proc.stdout) == sweep.spec_schema(), (
        f"{path} is stale: regenerate with `commaware schema sweep > {path}`")
    schema = json.loads(proc.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    examples = sorted(SWEEPS.glob("*.toml"))
    assert examples
    for example in examples:
        jsonschema.validate(tomllib.loads(example.read_text()), schema)
        assert sweep.load_spec(example).runs


def test_the_cli_does_not_import_dask_or_duckdb():
    probe = "import sys; from commaware import cli; print(sorted({m.split('.')[0] for m in sys.modules} & " \
            "{'dask', 'distributed', 'duckdb', 'dask_jobqueue', 'pandas', 'pyarrow'}))"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "[]"


def test_jobqueue_options_parse():
    assert sweep.parse_option("cores=8") == ("cores", 8)
    assert sweep.parse_option("memory=16GB") == ("memory", "16GB")
    assert sweep.parse_option("job_extra_directives=[\"--exclusive\"]") == ("job_extra_directives", ["--exclusive"])
    with pytest.raises(Exception, match="expected KEY=VALUE"):
        sweep.parse_option("cores")


def test_dask_loggers_are_quiet_only_while_an_error_unwinds():
    """A Dask cluster shut down after Ctrl-C logs its cancelled handlers with tracebacks: while
    the error unwinds, Dask's loggers are silent; once the cluster is gone their levels are back
    (an API user's logging is left as it was); a run without error changes nothing."""
    import contextlib
    import logging

    logger = logging.getLogger("distributed.scheduler")
    before = logging.getLogger("distributed").level
    seen: list[bool] = []
    with pytest.raises(KeyboardInterrupt):
        with contextlib.ExitStack() as stack:
            quiet_on_error = sweep._quiet_while_failing(stack.enter_context(contextlib.ExitStack()))
            stack.push(lambda *_: seen.append(logger.isEnabledFor(logging.CRITICAL)))  # the cluster closing
            stack.push(quiet_on_error)
            stack.push(quiet_on_error)  # pushed twice, as the sweep does: silenced once, restored once
            raise KeyboardInterrupt
    assert seen == [False]
    assert logging.getLogger("distributed").level == before and logger.isEnabledFor(logging.CRITICAL)
    with contextlib.ExitStack() as stack:
        quiet_on_error = sweep._quiet_while_failing(stack.enter_context(contextlib.ExitStack()))
        stack.push(lambda *_: seen.append(logger.isEnabledFor(logging.CRITICAL)))
        stack.push(quiet_on_error)
    assert seen == [False, True]
