"""Several TI traces replayed in one SMPI simulation, each job from its start time on its hosts:
SimGrid 3.32's setting of ``examples/smpi/replay_multiple_manual_deploy``, through our own program
``smpi_replay_jobs.cpp`` (its docstring says how it differs from the example).

    run_smpi_jobs(platform, platform_file, jobs, collectives=...) -> {job name: [rank ends]}

SMPI is configured as :func:`smpi_replay.run_smpi_replay` configures it (``_model_cfg``: CM02,
crosstraffic off, SMPI's factors and overheads neutral, the platform's eager threshold), so that
one job alone gives that replay's rank ends.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peer_build import build_peer
from simgrid_peer import CXXFLAGS, INSTALL_HINT, LIBS
from smpi_replay import SmpiError, _model_cfg

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "smpi_replay_jobs.cpp"

_END = re.compile(r"COMMAWARE_JOB_RANK_END (\S+) (\d+) (\S+)")


@dataclass(frozen=True)
class PeerJob:
    """A job of the workload: its name, its TI index file, its start (whole seconds, as SimGrid's
    example reads it) and the index of each rank's host in SimGrid's host order (sorted by name)."""
    name: str
    index: Path
    start: int
    hosts: Sequence[int]


def build_jobs_peer() -> Path:
    return build_peer(SOURCE, "g++", CXXFLAGS, libs=LIBS, error=SmpiError, hint=INSTALL_HINT)


def run_smpi_jobs(platform: dict[str, Any], platform_file: str | Path, jobs: Sequence[PeerJob], *,
                  collectives: dict[str, str] | None = None, smpi_timing: Sequence[str] | None = None,
                  timeout: float = 300) -> dict[str, list[float]]:
    """Each job's rank ends (simulated seconds, 17 digits) when `jobs` run together on the SimGrid
    file `platform_file`; `platform` (commaware's JSON) gives the MPI settings (eager threshold)."""
    program = build_jobs_peer()
    with tempfile.TemporaryDirectory(prefix="commaware-smpi-jobs-") as tmp:
        workload = Path(tmp) / "workload"
        lines = []
        for job in jobs:
            n = sum(1 for line in Path(job.index).read_text().splitlines() if line.strip())
            if n != len(job.hosts):
                raise SmpiError(f"job {job.name}: {n} rank files but {len(job.hosts)} hosts")
            lines.append(f"{job.name} {Path(job.index).resolve()} {n} {int(job.start)} {','.join(map(str, job.hosts))}\n")
        workload.write_text("".join(lines))
        # smpirun's own options first (its SIMOPTS), then those smpi_replay gives smpirun.
        cfg = ["surf/precision:1e-9", "network/model:SMPI", *_model_cfg(platform, collectives, smpi_timing)]
        cmd = [str(program), str(Path(platform_file).resolve()), str(workload), *(f"--cfg={c}" for c in cfg),
               "--log=root.thres:warning"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise SmpiError(f"{program.name} did not finish within {timeout} s") from None
    ends: dict[str, dict[int, float]] = {job.name: {} for job in jobs}
    for m in _END.finditer(proc.stdout):
        ends[m.group(1)][int(m.group(2))] = float(m.group(3))
    missing = [job.name for job in jobs if len(ends[job.name]) != len(job.hosts)]
    if proc.returncode != 0 or missing:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise SmpiError(f"{program.name} failed (exit code {proc.returncode}; jobs not ended: {missing}):\n{tail}")
    return {name: [by_rank[r] for r in range(len(by_rank))] for name, by_rank in ends.items()}
