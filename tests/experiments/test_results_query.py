"""`commaware results query` only reads the store: one SELECT, no file outside the store, no
write of any kind (the store's files are byte for byte the same after each refused query);
results are streamed with a row limit, so a billion-row query is quick and small; a corrupt
Parquet file of the store is named in a one-line error."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from commaware import _core
from commaware.experiments import results, sweep
from conftest import EXAMPLES, run_cli, run_measured

#: The example sweep stores 12 runs.
RUNS = 12


@pytest.fixture(scope="module")
def built_store(tmp_path_factory):
    out = tmp_path_factory.mktemp("built") / "store"
    sweep.run(EXAMPLES / "sweeps" / "cosched.toml", out, serial=True)
    return out


@pytest.fixture
def store(built_store, tmp_path):
    """A fresh copy of the example store for each test (a test may try to damage it)."""
    return Path(shutil.copytree(built_store, tmp_path / "store"))


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under `folder` by its path, with a hash of its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def stored_rows(store: Path) -> int:
    """The rows `results query` sees (each run_id once), counted without the CLI."""
    return len({rid for f in (store / "rows").glob("*.parquet")
                for rid in pq.read_table(f, columns=["run_id"]).column("run_id").to_pylist()})


def refused(store: Path, *args: str) -> str:
    """Run `results query STORE ARGS`: exit 2, nothing on stdout, one error line; the message."""
    proc = run_cli("results", "query", store, *args)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    message = " ".join(proc.stderr.split())
    assert message.startswith("error: "), message
    return message


# --- nothing but one SELECT over the store --------------------------------------------------------


@pytest.fixture
def outside(tmp_path):
    """Files outside the store a query must not reach: a CSV with a secret, a Parquet file, a database."""
    (tmp_path / "secret.csv").write_text("name,password\nalice,hunter2\n")
    duckdb.sql(f"COPY (SELECT 'hunter2' AS password) TO '{tmp_path / 'secret.parquet'}' (FORMAT parquet)")
    return tmp_path


ABUSE = [
    ("COPY (SELECT * FROM runs) TO '{tmp}/copied.csv'", "COPY is refused", "copied.csv"),
    ("COPY runs TO '{tmp}/copied.parquet' (FORMAT parquet)", "COPY is refused", "copied.parquet"),
    ("ATTACH '{tmp}/attached.db' AS other", "ATTACH is refused", "attached.db"),
    ("EXPORT DATABASE '{tmp}/exported'", "EXPORT is refused", "exported"),
    ("INSTALL httpfs", "INSTALL is refused", None),
    ("LOAD json", "LOAD is refused", None),
    ("DROP VIEW runs", "DROP is refused", None),
    ("CREATE TABLE t AS SELECT * FROM runs", "CREATE is refused", None),
    ("/* a comment first */ create or replace view runs as select 1 as x", "CREATE is refused", None),
    ("INSERT INTO runs SELECT * FROM runs", "INSERT is refused", None),
    ("SET enable_external_access = true", "SET is refused", None),
    ("PRAGMA enable_profiling", "PRAGMA is refused", None),
    ("CALL pragma_version()", "CALL is refused", None),
    ("EXPLAIN ANALYZE DROP VIEW runs", "EXPLAIN is refused", None),
    ("SELECT * FROM read_csv('{tmp}/secret.csv')", "access to '{tmp}/secret.csv' is refused", None),
    ("SELECT * FROM read_parquet('{tmp}/secret.parquet')", "access to '{tmp}/secret.parquet' is refused", None),
    ("SELECT * FROM '{tmp}/secret.csv'", "access to '{tmp}/secret.csv' is refused", None),
    ("SELECT * FROM read_text('{tmp}/secret.csv')", "access to '{tmp}/secret.csv' is refused", None),
    ("SELECT * FROM glob('{tmp}/*')", "access to '{tmp}/*' is refused", None),
    ("SELECT * FROM runs, read_csv('/etc/passwd')", "access to '/etc/passwd' is refused", None),
    ("SELECT 1; DROP VIEW runs", "2 statements: give one SELECT statement", None),
    ("SELECT 1; SELECT 2", "2 statements: give one SELECT statement", None),
    ("", "empty: give one SELECT statement", None),
    ("  -- only a comment\n", "empty: give one SELECT statement", None),
]


@pytest.mark.parametrize("sql,reason,created", ABUSE, ids=[a[0][:40] for a in ABUSE])
def test_a_query_that_would_do_more_than_read_the_store_is_refused(store, outside, sql, reason, created):
    before = snapshot(store)
    message = refused(store, sql.format(tmp=outside), "--json")
    assert f"{store}: SQL: {reason.format(tmp=outside)}" in message
    assert "hunter2" not in message
    assert snapshot(store) == before
    if created:
        assert not (outside / created).exists()
    # The view is still there and whole.
    rows = json.loads(run_cli("results", "query", store, "SELECT count(*) AS n FROM runs", "--json", check=True).stdout)
    assert rows == [{"n": RUNS}]


def test_a_copy_into_the_rows_folder_adds_no_row(store, tmp_path):
    new_row = f"{store / 'rows' / 'bogus.parquet'}"
    sql = f"COPY (SELECT * REPLACE ('bogus' AS run_id) FROM runs LIMIT 1) TO '{new_row}' (FORMAT parquet)"
    before = snapshot(store)
    assert stored_rows(store) == RUNS
    assert "COPY is refused" in refused(store, sql)
    assert snapshot(store) == before and stored_rows(store) == RUNS
    # Had it been written, such a file would have added a row: what the refusal prevents.
    control = Path(shutil.copytree(store, tmp_path / "control"))
    table = pq.read_table(next((control / "rows").glob("*.parquet"))).slice(0, 1)
    table = table.set_column(table.schema.get_field_index("run_id"), "run_id", pa.array(["bogus"]))
    pq.write_table(table, control / "rows" / "bogus.parquet")
    assert json.loads(run_cli("results", "query", control, "SELECT count(*) AS n FROM runs", "--json",
                              check=True).stdout) == [{"n": RUNS + 1}]


def test_plot_where_is_held_to_the_same_rules(store, outside):
    for where, reason in (("true; DROP VIEW runs", "where: 2 statements"),
                          (f"policy IN (SELECT password FROM read_csv('{outside}/secret.csv'))",
                           f"where: access to '{outside}/secret.csv' is refused")):
        before = snapshot(store)
        proc = run_cli("results", "plot", store, "--x", "seed", "--y", "avg_wait_s", "--where", where,
                       "-o", outside / "chart.svg")
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert f"{store}: {reason}" in " ".join(proc.stderr.split())
        assert snapshot(store) == before and not (outside / "chart.svg").exists()


def test_the_python_api_reads_only_the_store(store, outside):
    with pytest.raises(_core.InputError, match="DROP is refused"):
        results.query(store, "DROP VIEW runs")
    with pytest.raises(_core.InputError, match="secret.csv' is refused"):
        results.query(store, f"SELECT * FROM read_csv('{outside}/secret.csv')")
    con = results.connect(store)
    try:  # the connection itself: no file outside, and the lock cannot be lifted
        with pytest.raises(duckdb.PermissionException):
            con.execute(f"SELECT * FROM read_csv('{outside}/secret.csv')")
        with pytest.raises(duckdb.Error, match="locked"):
            con.execute("SET enable_external_access = true")
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (RUNS,)
    finally:
        con.close()
    assert len(results.query(store, "SELECT * FROM runs")) == RUNS


# --- streamed, with a limit -------------------------------------------------------------------------


#: The issue's address-space limit for a query.
FOUR_GB = 4 << 30

BILLION = "SELECT * FROM range(1000000000)"


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_a_billion_row_query_prints_the_first_rows_quickly_and_small(store, tmp_path, fmt):
    code, stdout, stderr, seconds, rss = run_measured(tmp_path, "results", "query", store, BILLION,
                                                      *(["--json"] if fmt == "json" else []), limit_bytes=FOUR_GB)
    assert code == 0, stderr
    assert seconds < 30 and rss < 400 << 20, (seconds, rss)  # before: 68 s and 15.8 GB, or killed
    if fmt == "json":
        assert json.loads(stdout) == [{"range": i} for i in range(20)]
        assert "first 20 rows shown; --limit N or --all for more" in " ".join(stderr.split())
    else:
        assert [line.strip("│ ") for line in stdout.splitlines() if line.startswith("│")] == [str(i) for i in range(20)]
        assert "(first 20 rows shown; --limit N or --all for more)" in stdout and stderr == ""


def test_limit_and_all(store, tmp_path):
    rows = json.loads(run_cli("results", "query", store, BILLION, "--limit", "7", "--json", check=True).stdout)
    assert rows == [{"range": i} for i in range(7)]
    # A result that fits the limit says how many rows it has, and no note.
    proc = run_cli("results", "query", store, "SELECT * FROM range(7)", "--limit", "7", "--json", check=True)
    assert len(json.loads(proc.stdout)) == 7 and proc.stderr == ""
    assert "12 row(s)" in run_cli("results", "query", store, "SELECT * FROM runs", check=True).stdout
    # --all, as a table: every row, in tables of 1,000, then the count.
    table = run_cli("results", "query", store, "SELECT range AS i FROM range(2500)", "--all", check=True).stdout
    assert [line.strip("│ ") for line in table.splitlines() if line.startswith("│")] == [str(i) for i in range(2500)]
    assert table.rstrip().endswith("2500 row(s)")
    message = refused(store, "SELECT 1", "--limit", "3", "--all")
    assert "--limit and --all: give one" in message


def test_all_as_json_is_streamed_in_bounded_memory(store, tmp_path):
    n = 2_000_000
    code, stdout, stderr, seconds, rss = run_measured(tmp_path, "results", "query", store,
                                                      f"SELECT range AS i, range * 0.5 AS half FROM range({n})",
                                                      "--all", "--json", limit_bytes=FOUR_GB)
    assert code == 0 and stderr == "", stderr
    rows = json.loads(stdout)
    assert len(rows) == n and rows[0] == {"i": 0, "half": 0.0} and rows[-1] == {"i": n - 1, "half": (n - 1) / 2}
    # All rows at once would be 2 million dicts (several hundred MB); a batch at a time is small.
    assert rss < 250 << 20, rss


def test_an_error_of_the_query_leaves_stdout_empty(store):
    sql = "SELECT CASE WHEN range < 10 THEN range ELSE error('row ' || range || ' is bad') END AS v FROM range(100)"
    for fmt in ([], ["--json"]):
        message = refused(store, sql, *fmt)
        assert f"{store}: SQL: " in message and "row 10 is bad" in message


def test_json_carries_every_value_type(store):
    sql = ("SELECT 1.5 AS dec, 'nan'::DOUBLE AS nan, 'inf'::DOUBLE AS inf, [1, 2] AS list, {'k': 'v'} AS struct, "
           "DATE '2024-02-29' AS day, NULL AS nothing, true AS yes")
    rows = json.loads(run_cli("results", "query", store, sql, "--json", check=True).stdout)
    assert rows == [{"dec": 1.5, "nan": None, "inf": None, "list": [1, 2], "struct": {"k": "v"}, "day": "2024-02-29",
                     "nothing": None, "yes": True}]


# --- a corrupt Parquet file in rows/ ------------------------------------------------------------------


def corrupt(store: Path, how: str) -> Path:
    """Damage the store: a file that is not Parquet, one cut short, or one whose first data page
    header is overwritten (its footer intact, so only reading the rows finds it)."""
    part = next((store / "rows").glob("part-*.parquet"))
    if how == "garbage":
        bad = store / "rows" / "garbage.parquet"
        bad.write_text("not parquet at all\n")
    elif how == "truncated":
        bad = store / "rows" / "cut.parquet"
        bad.write_bytes(part.read_bytes()[:500])
    else:
        bad = part
        meta = pq.ParquetFile(part).metadata.row_group(0)
        column = next(meta.column(i) for i in range(meta.num_columns) if meta.column(i).path_in_schema == "avg_response_s")
        data = bytearray(part.read_bytes())
        data[column.data_page_offset:column.data_page_offset + 12] = b"\xff" * 12
        part.write_bytes(bytes(data))
    return bad


@pytest.mark.parametrize("how", ["garbage", "truncated", "page"])
def test_a_corrupt_parquet_file_is_named(store, how):
    bad = corrupt(store, how)
    message = refused(store, "SELECT sum(avg_response_s) FROM runs")
    assert f"error: {bad}: not a readable Parquet file (" in message, message
    proc = run_cli("results", "plot", store, "--x", "seed", "--y", "avg_response_s", "-o", store.parent / "c.svg")
    assert proc.returncode == 2 and f"{bad}: not a readable Parquet file" in " ".join(proc.stderr.split())
    with pytest.raises(_core.InputError, match="not a readable Parquet file"):
        results.load(store)


def test_compact_and_resume_name_a_corrupt_file_and_delete_nothing(store):
    bad = corrupt(store, "garbage")
    before = snapshot(store)
    proc = run_cli("results", "compact", store)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{bad}: not a readable Parquet file" in " ".join(proc.stderr.split())
    assert snapshot(store) == before
    (store / "rows" / "part-0000.parquet").write_bytes(b"PAR1 cut")  # a merged file: read by a resumed sweep
    proc = run_cli("sweep", EXAMPLES / "sweeps" / "cosched.toml", "--out", store, "--serial", "--quiet")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{store / 'rows' / 'part-0000.parquet'}: not a readable Parquet file" in " ".join(proc.stderr.split())
