"""Streamed outputs: the --json document, the --messages table (Parquet, CSV), the API's
columns, progress callbacks, and no partial output when a replay fails."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import commaware
from conftest import EXAMPLES

PLATFORM = EXAMPLES / "cluster16.json"
TRACE = EXAMPLES / "alltoall.json"
DEADLOCK = {"ranks": [[{"op": "recv", "src": 1}], [{"op": "recv", "src": 0}]]}


def key_rows(frame: pd.DataFrame) -> list[tuple]:
    cols = ["src_rank", "dst_rank", "src_host", "dst_host", "bytes", "op", "start", "end"]
    return [tuple(r) for r in frame[cols].astype({"src_host": str, "dst_host": str, "op": str}).itertuples(index=False)]


def test_json_parquet_csv_and_api_hold_the_same_messages(cli, tmp_path):
    parquet, csv = tmp_path / "m.parquet", tmp_path / "m.csv"
    proc = cli("simulate", PLATFORM, TRACE, "--json", "--messages", parquet)
    assert proc.returncode == 0, proc.stderr
    assert cli("simulate", PLATFORM, TRACE, "--messages", csv, check=True).returncode == 0
    from_json = pd.DataFrame(json.loads(proc.stdout)["messages"])
    from_parquet = pd.read_parquet(parquet)
    from_csv = pd.read_csv(csv)
    api = commaware.simulate(PLATFORM, TRACE).messages
    assert len(api) == 304
    expected = key_rows(api)
    for frame in (from_json, from_parquet, from_csv):
        assert key_rows(frame) == expected
    # Collective messages have no tag: null in JSON, missing in the table.
    assert from_parquet["tag"].isna().all() and from_json["tag"].isna().all()
    assert (parquet.stat().st_mode & 0o777) == (csv.stat().st_mode & 0o777)


def test_batches_arrive_in_order_and_cover_every_message():
    batches: list[pd.DataFrame] = []
    res = commaware.simulate(PLATFORM, TRACE, record_messages=False, on_messages=batches.append, batch_size=50)
    assert [len(b) for b in batches] == [50] * 6 + [4]
    joined = pd.concat(batches, ignore_index=True)
    assert joined["end"].is_monotonic_increasing
    assert res.message_stats["count"] == len(joined)
    assert res.message_stats["bytes"] == pytest.approx(joined["bytes"].sum())
    with pytest.raises(commaware.OptionsError, match="not recorded"):
        res.messages  # noqa: B018 - the property raises


def test_progress_callback_is_called_and_can_stop_the_replay():
    trace = {"ranks": [[{"op": "alltoall", "bytes": 1024}] for _ in range(64)]}
    platform = {"cluster": {"count": 64, "speed": 1e9}, "network": {"bandwidth": 1.25e8, "latency": 1e-5}}
    calls: list[tuple] = []
    res = commaware.simulate(platform, trace, record_messages=False, record_timeline=False,
                             on_progress=lambda *a: calls.append(a), progress_every=0.0)
    assert calls, "progress is reported"
    now, events, messages, done, ranks, elapsed = calls[-1]
    assert ranks == 64 and 0 < now <= res.makespan and 0 < messages <= 64 * 63 and elapsed >= 0

    class Stop(Exception):
        pass

    def stop(*_: object) -> None:
        raise Stop

    with pytest.raises(Stop):
        commaware.simulate(platform, trace, on_progress=stop, progress_every=0.0)


def test_failed_replay_leaves_no_output(cli, tmp_path, write_json):
    trace = write_json("deadlock.json", DEADLOCK)
    table = tmp_path / "m.parquet"
    proc = cli("simulate", PLATFORM, trace, "--json", "--messages", table)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "deadlocks" in proc.stderr and "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == [trace], "no table and no partial file"


def test_unwritable_message_table_is_a_clear_error(cli, tmp_path):
    proc = cli("simulate", PLATFORM, TRACE, "--messages", tmp_path / "missing" / "m.parquet")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    proc = cli("simulate", PLATFORM, TRACE, "--messages", tmp_path / "m.txt")
    assert proc.returncode == 2 and ".parquet or .csv" in proc.stderr


def test_json_document_matches_in_memory_document(cli):
    proc = cli("simulate", PLATFORM, TRACE, "--json", check=True)
    assert json.loads(proc.stdout) == commaware.simulate(PLATFORM, TRACE).to_dict()


def test_pair_bandwidth_unused_under_maxmin_is_a_warning(cli, write_json):
    platform = {"cluster": {"count": 2, "speed": 1e9},
                "network": {"model": "contention_free", "bandwidth": 1e6, "pair_bandwidth": [[0, 2e6], [2e6, 0]]}}
    trace = {"ranks": [[{"op": "send", "dst": 1, "bytes": 1e6}], [{"op": "recv", "src": 0}]]}
    assert commaware.simulate(platform, trace).warnings == []
    res = commaware.simulate(platform, trace, model="maxmin")
    assert len(res.warnings) == 1 and "pair_bandwidth" in res.warnings[0] and "maxmin" in res.warnings[0]
    proc = cli("simulate", write_json("p.json", platform), write_json("t.json", trace), "--model", "maxmin", "--json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["warnings"] == res.warnings
    assert "warning:" in proc.stderr and "pair_bandwidth" in proc.stderr
