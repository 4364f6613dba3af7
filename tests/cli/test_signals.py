"""`_signals.Watch`: a callback at each SIGINT, whichever thread the kernel gave it to, through
Python's wakeup fd (issue 45: the handler waited while the main thread waited)."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

from commaware._signals import Watch


def wait_until(condition, seconds: float = 2.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.005)
    return condition()


def test_every_open_watch_hears_each_sigint_given_to_any_thread_and_the_wakeup_fd_comes_back():
    handler = signal.signal(signal.SIGINT, lambda *_: None)  # no KeyboardInterrupt here
    reader, writer = socket.socketpair()  # a wakeup fd set before (asyncio's, say)
    writer.setblocking(False)
    before = signal.set_wakeup_fd(writer.fileno())
    try:
        heard: list[str] = []
        first, second = Watch(lambda: heard.append("first")), Watch(lambda: heard.append("second"))
        other = threading.Thread(target=time.sleep, args=(0.3,))
        other.start()
        signal.pthread_kill(other.ident, signal.SIGINT)
        assert wait_until(lambda: len(heard) == 2), heard
        assert heard == ["second", "first"]  # the newest watch first
        second.close()
        os.kill(os.getpid(), signal.SIGINT)
        assert wait_until(lambda: len(heard) == 3) and heard[2] == "first"
        first.close()
        first.close()  # twice is harmless
        assert signal.set_wakeup_fd(writer.fileno()) == writer.fileno()  # the one found is back
        reader.settimeout(1)
        assert reader.recv(8) == bytes([signal.SIGINT, signal.SIGINT])  # it heard of both meanwhile
        other.join()
    finally:
        signal.set_wakeup_fd(before)
        signal.signal(signal.SIGINT, handler)
        reader.close()
        writer.close()


def test_a_watch_made_off_the_main_thread_watches_nothing():
    made: list[Watch] = []
    thread = threading.Thread(target=lambda: made.append(Watch(lambda: None)))
    thread.start()
    thread.join()
    assert made[0]._callback is None
    made[0].close()
