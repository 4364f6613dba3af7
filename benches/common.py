"""What several benchmarks share: the best of repeated timings, and the seeded random trees of
paper 000 (``bench_throughput.py``, ``bench_taskfarm.py``), the RSS probes of the child processes that
``bench_flows.py`` and ``bench_topology.py`` measure memory in, and a whole command's wall time and peak
RSS (``measure_process``), and the results file of ``--save`` (``save_results``). Imported by the benchmarks as
``common`` (a script's own folder is first on ``sys.path``)."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "peers"))
from child_peak import measure  # noqa: E402  (the tests' peak-RSS harness)


def best(fn: Callable[..., Any], repeat: int) -> tuple[float, Any]:
    """The fastest wall time of ``repeat`` calls of ``fn``, and the last call's result."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def random_tree(seed: int, n: int, draw_node: Callable[[random.Random, int], dict[str, Any]]) -> dict[str, Any]:
    """A tree document (``commaware.throughput.load_tree``) of ``n`` nodes ``n0``..: node k's parent
    drawn uniformly among nodes 0..k-1, then its other fields from ``draw_node(rng, k)``, in node
    order from one generator seeded with ``seed`` (the same seed, the same tree); 2 MB tasks."""
    g = random.Random(seed)
    nodes: list[dict[str, Any]] = []
    for k in range(n):
        node: dict[str, Any] = {"id": f"n{k}", "parent": None if k == 0 else f"n{g.randrange(k)}"}
        node.update(draw_node(g, k))
        nodes.append(node)
    return {"task_mb": 2.0, "nodes": nodes}


def proc_status_kb(field: str) -> int | None:
    """A ``kB`` field (``VmRSS``, ``VmHWM``) of ``/proc/self/status``, or None off Linux."""
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    m = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
    return int(m.group(1)) if m else None


def reset_rss_peak() -> bool:
    """Reset this process's RSS high-water mark (``VmHWM``) to its current RSS; False if unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return proc_status_kb("VmHWM") is not None


def run_child(script: str, args: list[str], cwd: Path, timeout: float,
              env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run `script --child ARGS` in a fresh interpreter (this one's, with `env` if given) so its
    memory figures are its own; return the JSON of its last ``CHILD {...}`` line, or a status
    saying why not."""
    import json
    import subprocess
    import sys

    cmd = [sys.executable, str(Path(script).resolve()), "--child", *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
    except subprocess.TimeoutExpired:
        return {"status": f"timeout>{timeout:g}s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("CHILD ")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"status": f"error rc={proc.returncode}: {tail[0][:200]}"}
    result: dict[str, Any] = json.loads(lines[-1][len("CHILD "):])
    return result


def measure_process(cmd: list[str], stdout: str | Path | None = None, timeout: float | None = None) -> dict[str, Any]:
    """Run ``cmd`` (its stdout to the file ``stdout``, or discarded): ``code``, ``wall_s`` (the
    child's, from its start to its end), ``peak_rss_bytes`` (its own, ``tests/peers/child_peak``)
    and ``stderr`` (text)."""
    import os
    import tempfile

    with tempfile.NamedTemporaryFile(prefix="commaware-bench-stderr-") as err:
        code, wall, peak = measure(cmd, stdout or os.devnull, err.name, timeout=timeout)
        return {"code": code, "wall_s": wall, "peak_rss_bytes": peak, "stderr": Path(err.name).read_text(errors="replace")}


def head_commit() -> str:
    """The repository's HEAD commit."""
    root = Path(__file__).resolve().parents[1]
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()


def save_results(name: str, started: Any, doc: dict[str, Any], commit: str | None = None) -> Path:
    """Write `doc` to benches/results/NAME-<started>.json with the run's start (an aware
    datetime) and the commit it measured (default: HEAD now), as benches/recorded/ wants them;
    the path."""
    root = Path(__file__).resolve().parents[1]
    commit = commit or head_commit()
    out = root / "benches" / "results" / f"{name}-{started.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"started": started.isoformat(), "commit": commit, **doc}, indent=1) + "\n")
    return out
