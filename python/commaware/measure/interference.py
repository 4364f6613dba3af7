"""Measure the interference of communication on computation on this machine (paper 000 §2).

The measuring process runs the paper's atomic compute task (k diagonals of the square of an
n×n integer matrix, `commaware._core.kernel_run`, in the Rust core with the GIL released)
back to back, while it receives from and/or sends to a peer over a local TCP socket at a
sweep of throttled rates (a token bucket: the sender sleeps to hold the target MB/s, in
64 KiB chunks of random data). The compute rate (tasks/s) and the transfer rates actually
observed in the measuring process (MB/s, MB = 2^20 bytes) are averaged over regular
intervals (§2.2) and fitted with :func:`commaware.interference.fit`: IR = −slope of the
normalised compute rate (§2.2-§2.4), and the planar fit when both directions are measured
(§2.5).

Design, following §2: the paper's measuring program "performs three activities (compute,
send, or receive) in different threads concurrently", and the other end is another node.
So here the transfers of the measured host are threads of the measuring process (their CPU
and memory traffic is part of what interferes), and the peer, which stands for the other
node, is a separate process (``python -m commaware.measure.interference --peer ...``): a
thread would compete with the measuring side for the GIL and would not be another host.

On one machine this measures the local TCP stack and memory contention, not a NIC (the
output's ``note`` says so).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import _core
from ..interference import FitReport, fit
from .mpi import MeasureError, bad_option

MB = 1 << 20
CHUNK = 64 * 1024
DIRECTIONS = ("recv", "send", "both")
NOTE = ("measured on one machine: the peer is a local process, so this measures the local TCP stack and memory "
        "contention, not a NIC; measure against a peer on another host for a network's interference")

#: One step of the sweep: (receive MB/s, send MB/s, seconds), from the measuring process's view.
Step = tuple[float, float, float]


def check_options(rates_mb_s: Sequence[float], seconds_per_rate: float, direction: str, k: int, n: int,
                  interval: float) -> None:
    """Raise OptionsError naming the option (``--rates``, ``--seconds``, ...) for bad options."""
    if not rates_mb_s:
        raise bad_option("--rates", "needs at least one rate")
    for r in rates_mb_s:
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r) or r < 0:
            raise bad_option("--rates", f"rates must be finite numbers of MB/s >= 0, got {r!r}")
    if len(set(rates_mb_s)) < 2:
        raise bad_option("--rates", "needs at least two different rates (a single rate gives a singular fit)")
    if isinstance(seconds_per_rate, bool) or not isinstance(seconds_per_rate, (int, float)) \
            or not (0 < seconds_per_rate <= 1e5):
        raise bad_option("--seconds", f"must be a number of seconds in (0, 1e5], got {seconds_per_rate!r}")
    if direction not in DIRECTIONS:
        raise bad_option("--direction", f"must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    if isinstance(n, bool) or not isinstance(n, int) or not (2 <= n <= 8192):
        raise bad_option("--n", f"must be an integer in 2..8192, got {n!r}")
    if isinstance(k, bool) or not isinstance(k, int) or not (1 <= k <= n):
        raise bad_option("--k", f"must be an integer in 1..n ({n}), got {k!r}")
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not (0 < interval <= seconds_per_rate):
        raise bad_option("--interval", f"must be a number of seconds in (0, --seconds], got {interval!r}")


def sweep(rates_mb_s: Sequence[float], seconds: float, direction: str) -> list[Step]:
    """The steps: each rate for `seconds` in the direction; for ``both``, the receive sweep,
    the send sweep, then both at once with the send rates reversed (so that the two rates are
    not collinear and the §2.5 planar fit is defined)."""
    rates = [float(r) for r in rates_mb_s]
    recv = [(r, 0.0, seconds) for r in rates]
    send = [(0.0, r, seconds) for r in rates]
    if direction == "recv":
        return recv
    if direction == "send":
        return send
    return recv + send + [(r, s, seconds) for r, s in zip(rates, reversed(rates))]


# -- transfers ------------------------------------------------------------------------------------


def _send_throttled(sock: socket.socket, plan: Sequence[tuple[float, float]], t0: float,
                    record: list[tuple[float, int]] | None = None) -> None:
    """Send random data at each (MB/s, seconds) of `plan` from monotonic time `t0` (token
    bucket: the next chunk waits until the bytes sent so far fit the rate); then shut down."""
    buf = os.urandom(CHUNK)
    start = t0
    try:
        for rate, secs in plan:
            end, sent = start + secs, 0
            while (now := time.monotonic()) < end:
                if rate <= 0:
                    time.sleep(min(end - now, 0.05))
                    continue
                due = start + sent / (rate * MB)
                if due > now:
                    time.sleep(min(due - now, end - now))
                    continue
                if now - due > 0.1:  # fell behind (a busy machine): no burst to catch up
                    sent = int((now - start) * rate * MB)
                sock.sendall(buf)
                sent += CHUNK
                if record is not None:
                    record.append((time.monotonic() - t0, CHUNK))
            start = end
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the other side went away: the measurement notices the missing bytes


def _receive(sock: socket.socket, t0: float, record: list[tuple[float, int]] | None = None) -> None:
    """Receive until EOF, recording (seconds since `t0`, bytes) of every read."""
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    try:
        while (got := sock.recv_into(view)) > 0:
            if record is not None:
                record.append((time.monotonic() - t0, got))
    except OSError:
        pass


def _peer_main(address: str, plan_json: str) -> int:
    """The peer process: connect once per channel, wait for the start byte, then send to the
    measuring process at the receive rates of the plan and drain what it sends."""
    host, _, port = address.rpartition(":")
    steps: list[list[float]] = json.loads(plan_json)
    socks: dict[str, socket.socket] = {}
    for role, col in (("R", 0), ("S", 1)):  # R: the measuring process receives (we send); S: it sends (we drain)
        if any(s[col] > 0 for s in steps):
            socks[role] = socket.create_connection((host, int(port)), timeout=30)
            socks[role].sendall(role.encode())
    threads = []
    for role, sock in socks.items():
        if sock.recv(1) != b"G":
            return 1
        sock.settimeout(None)
        t0 = time.monotonic()
        if role == "R":
            target: Any = _send_throttled
            args: tuple[Any, ...] = (sock, [(s[0], s[2]) for s in steps], t0)
        else:
            target, args = _receive, (sock, t0)
        threads.append(threading.Thread(target=target, args=args, daemon=True))
        threads[-1].start()
    for t in threads:
        t.join()
    return 0


# -- the measurement ------------------------------------------------------------------------------


def _binned(record: list[tuple[float, int]], bins: int, interval: float) -> np.ndarray:
    """MB/s in each interval from (time, bytes) records."""
    out = np.zeros(bins)
    for t, nbytes in record:
        i = int(t // interval)
        if 0 <= i < bins:
            out[i] += nbytes
    return out / interval / MB


def measure_interference(*, rates_mb_s: Sequence[float] = (0, 2, 4, 8, 16), seconds_per_rate: float = 2.0,
                         direction: str = "recv", k: int = 1, n: int = 1024, interval: float = 0.5,
                         peer: str = "localhost", seed: int = 0, timeout: float = 30.0) -> dict[str, Any]:
    """Measure IR_r and/or IR_s of this machine (paper 000 §2); see the module docstring.

    Returns a document: ``samples`` (columns ``time``, ``compute_rate`` in tasks/s,
    ``recv:<peer>`` / ``send:<peer>`` in MB/s), ``fit`` (:meth:`FitReport.to_dict`),
    ``interference`` in the platform file's format (``{"recv": IR_r, "send": IR_s}``, the
    measured directions only; negative fits are clamped to 0 with a warning; with ``both``,
    the §2.5 planar fit as ``synergy``), ``note`` and ``warnings``. `peer` labels the
    columns; the peer is a local process. Raises OptionsError (naming the option) before
    starting anything, MeasureError when the peer or the fit fails.
    """
    check_options(rates_mb_s, seconds_per_rate, direction, k, n, interval)
    steps = sweep(rates_mb_s, float(seconds_per_rate), direction)
    total = sum(s[2] for s in steps)
    bins = int(total // interval + 1e-9)
    recv_rec: list[tuple[float, int]] = []
    send_rec: list[tuple[float, int]] = []
    roles = [r for r, col in (("R", 0), ("S", 1)) if any(s[col] > 0 for s in steps)]
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(timeout)
        port = server.getsockname()[1]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")])
        proc = subprocess.Popen([sys.executable, "-m", "commaware.measure.interference", "--peer",
                                 f"127.0.0.1:{port}", "--plan", json.dumps(steps)], env=env)
        socks: dict[str, socket.socket] = {}
        threads: list[threading.Thread] = []
        try:
            try:
                while len(socks) < len(roles):
                    conn, _ = server.accept()
                    conn.settimeout(timeout)
                    role = conn.recv(1).decode(errors="replace")
                    if role not in roles or role in socks:
                        conn.close()
                        raise MeasureError(f"peer: unexpected channel {role!r}")
                    socks[role] = conn
            except socket.timeout:
                raise MeasureError(f"peer: no connection within {timeout:g} s (exit code {proc.poll()})") from None
            t0 = time.monotonic()
            for role, conn in socks.items():
                conn.sendall(b"G")
                conn.settimeout(None)
                if role == "R":
                    threads.append(threading.Thread(target=_receive, args=(conn, t0, recv_rec), daemon=True))
                else:
                    plan = [(s[1], s[2]) for s in steps]
                    threads.append(threading.Thread(target=_send_throttled, args=(conn, plan, t0, send_rec),
                                                    daemon=True))
            for t in threads:
                t.start()
            kernel_start = time.monotonic()
            raw, checksum = _core.kernel_run(total - (kernel_start - t0), n, k, seed)
            for t in threads:
                t.join(timeout)
            if proc.wait(timeout) != 0:
                raise MeasureError(f"peer: exited with code {proc.returncode}")
        finally:
            for conn in socks.values():
                conn.close()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    times = np.frombuffer(raw, dtype="<f8") + (kernel_start - t0)
    edges = np.arange(bins + 1) * interval
    done = np.interp(edges, np.concatenate([[0.0], times]), np.arange(len(times) + 1, dtype=float))
    samples: dict[str, list[float]] = {"time": edges[:-1].tolist(), "compute_rate": (np.diff(done) / interval).tolist()}
    if direction in ("recv", "both"):
        samples[f"recv:{peer}"] = _binned(recv_rec, bins, interval).tolist()
    if direction in ("send", "both"):
        samples[f"send:{peer}"] = _binned(send_rec, bins, interval).tolist()
    try:
        report = fit(samples)
    except _core.InputError as exc:
        raise MeasureError(f"the measured samples cannot be fitted: {exc}") from None
    interference, warnings = _interference(report, direction, peer)
    return {
        "paper": "000 §2",
        "note": NOTE,
        "options": {"rates_mb_s": [float(r) for r in rates_mb_s], "seconds_per_rate": float(seconds_per_rate),
                    "direction": direction, "k": k, "n": n, "interval": float(interval), "peer": peer},
        "steps": [list(s) for s in steps],
        "tasks": int(len(times)),
        "checksum": int(checksum),
        "samples": samples,
        "fit": report.to_dict(),
        "interference": interference,
        "warnings": warnings,
    }


def _interference(report: FitReport, direction: str, peer: str) -> tuple[dict[str, Any], list[str]]:
    """The platform file's `interference` object from the fit, and warnings."""
    out: dict[str, Any] = {}
    warnings: list[str] = []
    for d in ("recv", "send"):
        col = report.columns.get(f"{d}:{peer}")
        if direction not in (d, "both") or col is None:
            continue
        if col.ir < 0:
            warnings.append(f"{d}: the fit gives IR = {col.ir:.4g} < 0 (computation did not slow down): written as 0")
        out[d] = max(0.0, col.ir)
    p = report.planar
    if p is not None:
        if p.ir_r >= 0 and p.ir_s >= 0 and 0 <= p.const <= 1:
            out["synergy"] = {"constant": p.const, "recv": p.ir_r, "send": p.ir_s}
        else:
            warnings.append(f"planar fit {p.const:.4g} − {p.ir_r:.4g}·recv − {p.ir_s:.4g}·send is not a valid "
                            "synergy (negative rate or constant outside [0, 1]): not written")
    return out, warnings


def platform_fragment(doc: dict[str, Any]) -> dict[str, Any]:
    """``{"interference": {...}}``: paste into a platform's ``cluster`` or a host."""
    return {"interference": doc["interference"]}


def write_samples_csv(doc: dict[str, Any], path: str | Path) -> None:
    """The samples as CSV (the input of `commaware interference fit`), written atomically."""
    from ..output import deliver

    cols = list(doc["samples"])
    rows = zip(*(doc["samples"][c] for c in cols))
    # repr: the shortest text that reads back as the same float (a refit gives the same numbers).
    text = ",".join(cols) + "\n" + "".join(",".join(repr(float(v)) for v in row) + "\n" for row in rows)
    deliver(lambda partial: partial.write_text(text), path)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="The peer process of `commaware measure interference` (internal).")
    ap.add_argument("--peer", required=True, help="HOST:PORT of the measuring process")
    ap.add_argument("--plan", required=True, help="JSON list of [recv MB/s, send MB/s, seconds] steps")
    ns = ap.parse_args()
    sys.exit(_peer_main(ns.peer, ns.plan))
