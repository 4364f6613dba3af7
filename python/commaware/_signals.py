"""Ctrl-C seen at once, whichever thread the kernel gives it to.

Python runs its signal handlers in the main thread, when that thread runs Python code. The
kernel may hand a process's SIGINT to any of its threads; when it goes to another thread while
the main thread waits (on a lock, as Dask's `sync` does while a local cluster starts, or inside
a C library's call, as DuckDB's), the handler waits too, for seconds. `Watch(callback)` runs
`callback` in a watcher thread at each SIGINT the process gets, through Python's wakeup fd
(written by the C-level handler in whichever thread took the signal). One watcher thread and
one wakeup fd serve every open watch. Only the main thread can watch (it alone may set the
wakeup fd); elsewhere a watch does nothing. Base layer: imports nothing of commaware.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from typing import Callable

#: The open watches' callbacks, the newest first.
_callbacks: list[Callable[[], None]] = []
#: While any watch is open: (reader, writer, the wakeup fd found, the watcher thread).
_watcher: tuple[socket.socket, socket.socket, int, threading.Thread] | None = None


def _watch(reader: socket.socket, found: int) -> None:
    while True:
        try:
            data = reader.recv(64)
        except OSError:
            return
        if not data or _watcher is None or _watcher[0] is not reader:
            return
        if found >= 0:  # whoever had the wakeup fd before still hears of every signal
            with contextlib.suppress(OSError):
                os.write(found, data)
        for _ in range(data.count(signal.SIGINT)):
            for callback in list(_callbacks):
                callback()


class Watch:
    """`callback()` runs in the watcher thread at each SIGINT until `close()`."""

    def __init__(self, callback: Callable[[], None]) -> None:
        global _watcher
        self._callback: Callable[[], None] | None = None
        if threading.current_thread() is not threading.main_thread():
            return
        if _watcher is None:
            reader, writer = socket.socketpair()
            writer.setblocking(False)
            found = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
            thread = threading.Thread(target=_watch, args=(reader, found), name="ctrl-c watcher", daemon=True)
            _watcher = (reader, writer, found, thread)
            thread.start()
        self._callback = callback
        _callbacks.insert(0, callback)

    def close(self) -> None:
        """Stop watching (main thread); the last watch closed puts the wakeup fd found back."""
        global _watcher
        if self._callback is None:
            return
        _callbacks.remove(self._callback)
        self._callback = None
        if _callbacks or _watcher is None:
            return
        reader, writer, found, thread = _watcher
        signal.set_wakeup_fd(found)
        _watcher = None
        with contextlib.suppress(OSError):
            writer.send(b"\0")  # wakes the watcher, which sees it is done with
        thread.join()
        reader.close()
        writer.close()
