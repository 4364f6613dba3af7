"""`commaware measure interference` (paper 000 §2): the compute kernel in the core, a short real
measurement against a local TCP peer process, the platform `interference` output, bad options."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import commaware
from commaware import _core
from commaware.measure import interference as mi
from commaware.cli.measure import measure

PLATFORM = {"cluster": {"count": 2, "speed": 1e9, "cores": 1, "memory": 1e9},
            "network": {"bandwidth": 1.25e8, "latency": 1e-5}}


@pytest.mark.parametrize("n,k,first", [(2, 1, 0), (7, 3, 5), (16, 4, 13), (33, 33, 2)])
def test_kernel_checksum_against_numpy(n: int, k: int, first: int) -> None:
    raw, checksum = _core.kernel_task(n, k, first, 7)
    a = np.frombuffer(raw, dtype="<i4").reshape(n, n).astype(np.int64)
    p = a @ a  # int64 wraps mod 2^64, so its low 32 bits are the wrapping i32 result
    i = np.arange(n)
    total = sum(int(p[i, (i + d) % n].sum()) for d in range(first, first + k))
    want = (total + 2**31) % 2**32 - 2**31
    assert checksum == want


def test_kernel_run_reports_increasing_times() -> None:
    raw, _ = _core.kernel_run(0.2, 64, 2)
    t = np.frombuffer(raw, dtype="<f8")
    assert len(t) > 10 and np.all(np.diff(t) >= 0) and t[-1] >= 0.2
    with pytest.raises(_core.OptionsError, match="k"):
        _core.kernel_run(0.1, 8, 9)


def _check_doc(doc: dict, direction: str) -> None:
    s = doc["samples"]
    col = f"{direction}:localhost"
    assert list(s) == ["time", "compute_rate", col]
    rates = np.array(s["compute_rate"])
    # Two 1 s phases in 0.25 s intervals: about 8 samples (timing on a shared machine varies).
    assert 6 <= len(rates) <= 10 and np.all(np.isfinite(rates)) and np.all(rates > 0)
    tr = np.array(s[col])
    t = np.array(s["time"])
    assert np.all(tr[t < 0.75] == 0)  # the unloaded phase (its last interval may touch the next)
    loaded = float(np.median(tr[t >= 1.25]))
    assert 20 / 3 < loaded < 20 * 1.5, tr  # generous: the machine is shared
    fitted = doc["fit"]["columns"][col]["linear"]
    assert math.isfinite(fitted["ir"]) and math.isfinite(fitted["const"])
    assert set(doc["interference"]) == {direction} and doc["interference"][direction] >= 0
    assert "not a NIC" in doc["note"]


def test_cli_measures_receiving(tmp_path: Path) -> None:
    out, csv = tmp_path / "ir.json", tmp_path / "samples.csv"
    res = CliRunner().invoke(measure, ["interference", "--rates", "0,20", "--seconds", "1", "--n", "256",
                                       "--interval", "0.25", "-o", str(out), "--samples", str(csv), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    _check_doc(doc, "recv")
    fragment = json.loads(out.read_text())
    assert fragment == {"interference": doc["interference"]}
    platform = commaware.load_platform({**PLATFORM, "cluster": {**PLATFORM["cluster"], **fragment}})
    assert len(platform.host_names) == 2
    assert csv.read_text().splitlines()[0] == "time,compute_rate,recv:localhost"
    assert commaware.interference.fit(csv).columns["recv:localhost"].ir == pytest.approx(
        doc["fit"]["columns"]["recv:localhost"]["linear"]["ir"])


def test_api_measures_sending() -> None:
    doc = mi.measure_interference(rates_mb_s=(0, 20), seconds_per_rate=1, direction="send", n=256, interval=0.25)
    _check_doc(doc, "send")


@pytest.mark.parametrize("args,option", [
    (["--rates", "0,-2"], "--rates"), (["--rates", "3,3"], "--rates"), (["--rates", "a,b"], "--rates"),
    (["--seconds", "0"], "--seconds"), (["--n", "1"], "--n"), (["--k", "0"], "--k"),
    (["--n", "8", "--k", "9"], "--k"), (["--interval", "0"], "--interval"),
])
def test_bad_options_exit_2_without_a_peer(monkeypatch: pytest.MonkeyPatch, args: list[str], option: str) -> None:
    def no_peer(*a: object, **k: object) -> None:
        raise AssertionError("a peer was started")

    monkeypatch.setattr(mi.subprocess, "Popen", no_peer)
    res = CliRunner().invoke(measure, ["interference", *args])
    assert res.exit_code == 2, res.output
    assert option in res.output
