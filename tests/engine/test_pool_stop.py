"""A thread pool stopped by an error in its block (Ctrl-C above all) stops its workers' core
calls: those running at the stop, and those a worker begins afterwards, between two calls at the
moment of the stop (issue 45: `reproduce 003` ran on for seconds after Ctrl-C)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from commaware import _core
from commaware._pool import thread_pool

# 300,000 communications counted exactly under myrinet: about a second of core work, or more.
SCHEME = json.dumps({"comms": [{"id": f"c{b}_{i}_{j}", "src": 11 * b + i, "dst": 11 * b + 5 + j}
                               for b in range(10_000) for i in range(5) for j in range(6)]})


def penalties() -> float:
    """One long core call; the seconds it took (whether it ended or was stopped)."""
    began = time.monotonic()
    try:
        _core.scheme_penalties(SCHEME, "scheme.json", model="myrinet", json_only=True)
    finally:
        took[0] = time.monotonic() - began
    return took[0]


took = [0.0]


def test_a_long_call_takes_a_second_or_more_when_nothing_stops_it():
    # What the test below relies on: stopped, the call ends far sooner than it would.
    assert penalties() > 0.3


def test_a_worker_between_two_calls_at_the_stop_does_not_run_its_next_call():
    between = threading.Event()
    go_on = threading.Event()
    outcome: list[BaseException | float] = []

    def two_calls() -> None:
        between.set()  # a first call has ended here; the next one waits for the stop
        go_on.wait(10)
        try:
            outcome.append(penalties())
        except BaseException as exc:
            outcome.append(exc)

    with pytest.raises(KeyboardInterrupt):
        with thread_pool(2) as pool:
            pool.submit(two_calls)
            assert between.wait(10)
            raise KeyboardInterrupt
    go_on.set()
    deadline = time.monotonic() + 30
    while not outcome and time.monotonic() < deadline:
        time.sleep(0.01)
    assert outcome and isinstance(outcome[0], _core.CommawareError), outcome
    assert "stopped" in str(outcome[0])
    assert took[0] < 0.2, f"the call ran {took[0]:.2f} s after the stop"


def test_a_stop_of_one_pool_leaves_the_calls_of_a_later_pool_alone():
    with pytest.raises(KeyboardInterrupt):
        with thread_pool(1):
            raise KeyboardInterrupt
    with thread_pool(1) as pool:
        assert pool.submit(penalties).result(timeout=60) > 0.3
