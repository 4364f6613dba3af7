"""`cosched run` without `--platform` prints what it printed before jobs could share a network
(issue 41's "Done when": byte-identical output). The digests are of the outputs of commit
1027f10, the last before issue 41's first change, built and run on these inputs (a 40-job NAS
workload written by that commit's `commaware workload nas --jobs 40 --interarrival 30 --seed 7`,
kept in tests/data/cosched/nas40.json, and the Gaia log); every later build must print the same
bytes."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from cosched.test_cosched import gaia  # noqa: F401  (the fixture)

NAS40 = Path(__file__).resolve().parents[1] / "data" / "cosched" / "nas40.json"

#: (arguments after the workload, the output file: stdout or the --jobs-csv file) -> sha256 at 1027f10.
BEFORE = {
    (("--policy", "batch-easy", "--json"), "stdout"): "dd2e5bf2315e81c36dfde8c04c4d7cd90bc08a67bcb47e21080694b480cbc619",
    (("--policy", "batch-conservative", "--json", "--jobs-csv", "cons.csv"), "stdout"):
        "095acf33ef0e3568c014b549e77f4ac21b09e65abe0f9f4934e2ddc5ab15bd83",
    (("--policy", "batch-conservative", "--json", "--jobs-csv", "cons.csv"), "cons.csv"):
        "edd5fa5d2c860f72325fe84a36712f8f2366780dcbc3e4e1d6b393ed42ef04d4",
    (("--policy", "hybrid", "--allocation", "random", "--seed", "3", "--json"), "stdout"):
        "fb7c38952ac32bf9926c9f640230b38fb390592218f238fbdab75ba151992a9c",
    (("--policy", "gang", "--json"), "stdout"): "7bb35b8181f2eed3be8058704a3564844ab3536cdb0702aefa85859731bf92bd",
}
GAIA_EASY = "540d3458e8abd3ac71dca3a4809906d2ebad4f0e68f66f5e42c5205626da27d0"


def sha(data: str) -> str:
    return hashlib.sha256(data.encode()).hexdigest()


@pytest.mark.parametrize("args,output", sorted(BEFORE), ids=lambda x: " ".join(x) if isinstance(x, tuple) else x)
def test_a_run_without_a_platform_prints_what_it_printed_before(cli, tmp_path, monkeypatch, args, output):
    workload = tmp_path / "nas40.json"
    shutil.copy(NAS40, workload)
    monkeypatch.chdir(tmp_path)
    proc = cli("cosched", "run", "nas40.json", *args)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout if output == "stdout" else (tmp_path / output).read_text()
    assert sha(text) == BEFORE[(args, output)]


def test_the_gaia_log_under_easy_prints_what_it_printed_before(cli, gaia):  # noqa: F811
    proc = cli("cosched", "run", gaia, "--policy", "batch-easy", "--json")
    assert proc.returncode == 0, proc.stderr
    assert sha(proc.stdout) == GAIA_EASY
