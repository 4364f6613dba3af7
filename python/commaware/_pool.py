"""The thread pool of the commands that run many core calls at once (the core releases the GIL).

`with thread_pool(n) as pool:` is `ThreadPoolExecutor(n)`, except when the block raises (Ctrl-C
above all): the runs not yet started are cancelled and the block's exception goes on at once,
instead of waiting for every queued run to finish (what `ThreadPoolExecutor.__exit__` does),
and the core calls of its threads are stopped (Python delivers Ctrl-C to the main thread
only): those running, and those a thread between two calls begins afterwards.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator

from . import _core


@contextlib.contextmanager
def thread_pool(workers: int) -> Iterator[ThreadPoolExecutor]:
    """A pool of `workers` threads; on an exception in the block, queued runs are dropped and
    running core calls stopped."""
    pool = ThreadPoolExecutor(max_workers=workers, initializer=_core.stop_with_calls_since,
                              initargs=(_core.stop_epoch(),))
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        _core.stop_running_calls()
        raise
    pool.shutdown(wait=True)
