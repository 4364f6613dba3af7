"""Files and documents a command writes: `deliver` and `put_in_place`, which put an output in
place only once it is complete, and `Delivery`, which holds a command's outputs back until they
are all complete and then delivers them in one step that a Ctrl-C cannot split (issue 45). The
base of the package: it imports nothing of commaware.

Outside a command (the API), `put_in_place` renames at once. Inside one (`commaware ...`: the
CLI's top-level group opens a `Delivery` around the command), every output waits, complete,
under its partial name, and what the command prints on stdout waits in a spool; when the
command ends they are all renamed and copied out together, with SIGINT held off meanwhile: the
user gets every output and exit 0, or, on a Ctrl-C before delivery, none and exit 130.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from pathlib import Path
from typing import IO, Any, Callable, Iterator


def partial_path(path: Path) -> Path:
    """Where `path` is written until it is complete (same folder, so the rename is atomic).

    Created with the usual mode (umask applies), unlike `tempfile`'s 0600 files.
    """
    return path.with_name(f".{path.name}.{os.getpid()}.partial")


def requested_names(text: str) -> str:
    """`text` (an error message) with each partial file's name (`partial_path`) replaced by the
    name of the file the user asked for: `/d/.out.parquet.4242.partial` -> `/d/out.parquet`."""
    import re

    return re.sub(r"\.([^/\\\s'\"]+)\.[0-9]+\.partial\b", r"\1", text)


def remove_path(path: Path) -> None:
    """Remove a file or a folder (with what it holds), if it exists."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


#: Seconds after a Ctrl-C during which another SIGINT is not raised again (`Delivery`).
REPEAT_SECONDS = 1.0

#: The delivery of the command running in this process, if any (`Delivery.begin`).
_active: Delivery | None = None


def on_delivery(commit: Callable[[], None], discard: Callable[[], None]) -> None:
    """An output is complete: `commit` puts it in place. Outside a command that happens now;
    inside one it waits for the command's delivery, and `discard` runs instead if the command
    ends without delivering (Ctrl-C, bad input, an error)."""
    if _active is None:
        commit()
    else:
        _active.actions.append((commit, discard))


@contextlib.contextmanager
def at_once() -> Iterator[None]:
    """Inside the block, outputs are put in place at once even inside a command: for the parts
    of a larger output that is itself delivered whole (a report's figures in its staging
    folder) and for intermediate files read back before the command ends."""
    global _active
    held, _active = _active, None
    try:
        yield
    finally:
        _active = held


def put_in_place(partial: Path, final: str | Path) -> None:
    """Rename the complete output `partial` (a file or a folder) to `final`, now or at the
    command's delivery (`on_delivery`)."""
    on_delivery(lambda: os.replace(partial, final), lambda: remove_path(partial))


def deliver(write: Callable[[Path], None], output: str | Path | None) -> None:
    """Write a document with `write(path)` into a partial file, then put it at `output`, or on
    stdout when `output` is None (`put_in_place`, `Delivery`). Nothing appears unless `write`
    succeeded."""
    import sys
    import tempfile

    # A file that does not exist yet, in a private folder: an existing one (mkstemp's) would be
    # truncated on open, and ext4 then writes all its data back when it is closed, which kept
    # a Ctrl-C of `simulate --json` waiting for the disk (0.2 s for 450 MB here, 1.5 s on CI).
    folder = Path(tempfile.mkdtemp(prefix="commaware-")) if output is None else None
    partial = folder / "document.json" if folder is not None else partial_path(Path(output))  # type: ignore[arg-type]
    try:
        write(partial)
    except BaseException:
        remove_path(folder or partial)
        raise
    if folder is None:
        put_in_place(partial, output)  # type: ignore[arg-type]
    elif isinstance(sys.stdout, _Spool):
        sys.stdout.insert(folder, partial)
    else:
        try:
            with open(partial, "rb") as doc:
                _copy_bytes(doc, sys.stdout)
        finally:
            remove_path(folder)


def _copy_bytes(source: IO[bytes], target: IO[str], end: int | None = None) -> None:
    """Copy `source` from where it stands (to offset `end`) onto the text stream `target`:
    through its binary buffer when it has one, else decoded as UTF-8."""
    import codecs

    target.flush()
    sink = getattr(target, "buffer", None)
    decoder = codecs.getincrementaldecoder("utf-8")("replace") if sink is None else None
    left = None if end is None else end - source.tell()
    while left is None or left > 0:
        chunk = source.read(1 << 20 if left is None else min(1 << 20, left))
        if not chunk:
            break
        if left is not None:
            left -= len(chunk)
        if sink is not None:
            _write_all(sink, chunk)
        else:
            target.write(decoder.decode(chunk))  # type: ignore[union-attr]
    if sink is not None:
        sink.flush()
    target.flush()


def _write_all(sink: IO[bytes], data: bytes) -> None:
    """All of `data` to the binary stream `sink`. A write that a signal interrupts once part of
    it is in a pipe returns the part's length (a Ctrl-C held during delivery did that: a 1 MiB
    chunk came out as its first 64 KiB); the rest is written on."""
    view = memoryview(data)
    while view:
        written = sink.write(view)
        view = view[len(view) if written is None else written:]


class _Spool(io.TextIOBase):
    """Stands for stdout while a command runs: what it prints is kept (in memory, on disk past
    1 MiB) and copied to the real stdout at delivery, with the documents `deliver` wrote
    inserted where they were printed. It answers `isatty` and `encoding` as the real stdout
    does, so rich and click format for the terminal or pipe the output will reach."""

    def __init__(self, real: IO[str]) -> None:
        import tempfile

        super().__init__()
        self.real = real
        self.text = tempfile.SpooledTemporaryFile(max_size=1 << 20, mode="w+b")
        #: Documents to insert: (offset in `text`, their private folder, the file).
        self.documents: list[tuple[int, Path, Path]] = []

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.real, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]
        return getattr(self.real, "errors", None) or "strict"

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        self.text.write(s.encode(self.encoding, self.errors))
        return len(s)

    def isatty(self) -> bool:
        try:
            return bool(self.real.isatty())
        except (AttributeError, ValueError):
            return False

    def insert(self, folder: Path, document: Path) -> None:
        """The file `document` (in its own `folder`) goes out here, after what was printed so far."""
        self.documents.append((self.text.tell(), folder, document))

    def copy_out(self) -> None:
        """Everything, in order, onto the real stdout."""
        self.text.seek(0)
        for offset, _, document in self.documents:
            _copy_bytes(self.text, self.real, offset)  # type: ignore[arg-type]
            with open(document, "rb") as doc:
                _copy_bytes(doc, self.real)
        _copy_bytes(self.text, self.real)  # type: ignore[arg-type]

    def drop(self) -> None:
        """Forget it all: the documents' folders removed, the spool closed."""
        for _, folder, _ in self.documents:
            remove_path(folder)
        self.documents.clear()
        self.text.close()


class Delivery:
    """The outputs of one command, delivered together when it ends (see the module's doc).

    `begin()` makes it the process's delivery and puts a `_Spool` in place of `sys.stdout`;
    then `commit()` delivers, or `discard()` drops everything; `end()` (always, last) puts
    stdout back and drops whatever was not delivered. Used by the CLI's top-level group.

    Meanwhile Ctrl-C raises KeyboardInterrupt as usual (once: another SIGINT within
    `REPEAT_SECONDS` is not raised again while the command stops; one the kernel gave another
    thread is sent on to the main thread, `_signals.Watch`), and `interrupted` records that it came:
    a C extension that turns the KeyboardInterrupt raised inside it into another error
    (matplotlib drawing a figure gives "ValueError: Invalid affine transformation matrix")
    is still known for a Ctrl-C."""

    def __init__(self) -> None:
        import sys

        self.real = sys.stdout
        self.spool = _Spool(sys.stdout)
        #: (commit, discard) of each output, in the order they were completed (`on_delivery`).
        self.actions: list[tuple[Callable[[], None], Callable[[], None]]] = []
        #: Whether a Ctrl-C came while the command ran (`begin` to `end`).
        self.interrupted = False
        self._previous_handler: Any = None
        self._previous_hook: Callable[[Any], None] = sys.unraisablehook
        #: The signal `_unraisable` sends again, due in a moment (cancelled by `end`).
        self._resend: Any = None
        #: SIGINTs the process got (`_seen`, counted by the watcher), those the main thread
        #: handled (`_handled`), and those the watcher sent on to it itself (`_sent_on`).
        self._seen = self._handled = self._sent_on = 0
        #: When the last KeyboardInterrupt was raised; whether `_unraisable` wants one more.
        self._raised_at = 0.0
        self._raise_again = False
        self._watch: Any = None
        self._ending = False

    def begin(self) -> Delivery:
        import signal
        import sys
        import threading

        global _active
        if _active is not None:
            raise RuntimeError("a delivery is already open in this process")
        if threading.current_thread() is threading.main_thread():
            self._previous_handler = signal.signal(signal.SIGINT, self._on_ctrl_c)
            self._previous_hook = sys.unraisablehook
            sys.unraisablehook = self._unraisable
            from ._signals import Watch

            self._watch = Watch(self._send_on_to_main_thread)
        _active = self
        sys.stdout = self.spool
        return self

    def _on_ctrl_c(self, signum: int, frame: Any) -> None:
        if self._ending:  # the command is over (`end`): nothing left to stop
            self.interrupted = True
            return
        import time

        self._handled += 1
        now = time.monotonic()
        if self.interrupted and now - self._raised_at < REPEAT_SECONDS and not self._raise_again:
            # The command is stopping: the watcher's copy of this Ctrl-C (it may come after the
            # main thread handled the original), or a second press. Raised again, it could cut
            # short the clean-up the first one started (killing a pool's mpiruns).
            return
        self._raise_again = False
        self.interrupted = True
        self._raised_at = now
        raise KeyboardInterrupt

    def _send_on_to_main_thread(self) -> None:
        """In the watcher thread, at each SIGINT: the kernel may have given it to another
        thread while the main thread waits (Dask's `sync` while a local cluster starts), and
        then the handler would wait as long. Unless the main thread handles it within 50 ms,
        send it on to the main thread itself, whose wait the signal then interrupts."""
        import signal
        import threading
        import time

        if self._sent_on:  # the copy sent on below, not a new Ctrl-C
            self._sent_on -= 1
            return
        self._seen += 1
        deadline = time.monotonic() + 0.05
        while self._handled < self._seen and time.monotonic() < deadline:
            time.sleep(0.005)
        if self._handled < self._seen and _active is self:
            self._sent_on += 1
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    def _unraisable(self, unraisable: Any) -> None:
        """A KeyboardInterrupt raised where Python cannot pass it on (a weakref callback or a
        __del__ that matplotlib runs while it draws) would be printed with its traceback and
        lost: send the signal again instead, from a thread a moment later, to be handled in
        ordinary code (sent from here, it would be handled in this hook, and lost again)."""
        import signal
        import threading

        if unraisable.exc_type is KeyboardInterrupt and self.interrupted:
            self._raise_again = True
            if self._resend is None or not self._resend.is_alive():
                self._resend = threading.Timer(0.01, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
                self._resend.start()
        else:
            self._previous_hook(unraisable)

    def _stop_spooling(self) -> None:
        import sys

        global _active
        if sys.stdout is self.spool:
            sys.stdout = self.real
        if _active is self:
            _active = None

    def commit(self, ignore_ctrl_c_after: bool = False) -> bool:
        """Deliver: every file put in place, then stdout written, with SIGINT held off until all
        is done; returns whether a Ctrl-C came meanwhile (the delivery went on: it counts as
        success). With `ignore_ctrl_c_after` (the process exits next), SIGINT stays ignored
        after, so no later Ctrl-C turns a delivered result into exit 130; otherwise the
        previous handler comes back. A KeyboardInterrupt raised by this call comes before
        anything was delivered. An OSError leaves the outputs not yet put in place to `end`."""
        import signal
        import threading

        caught: list[int] = []
        main_thread = threading.current_thread() is threading.main_thread()
        # signal.signal runs any pending handler first: a Ctrl-C that came just before raises
        # KeyboardInterrupt here, with nothing delivered yet.
        previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum)) if main_thread else None
        try:
            self._stop_spooling()
            while self.actions:
                commit, _ = self.actions[0]
                commit()
                self.actions.pop(0)
            self.spool.copy_out()
        finally:
            if main_thread:
                signal.signal(signal.SIGINT, signal.SIG_IGN if ignore_ctrl_c_after
                              else previous if previous is not None else signal.SIG_DFL)
        return bool(caught)

    def discard(self) -> None:
        """Drop every output not delivered, and what was printed."""
        self._stop_spooling()
        actions, self.actions = self.actions, []
        for _, discard in actions:
            discard()
        self.spool.drop()

    def end(self) -> None:
        """Stdout back, anything not delivered dropped, a signal `_unraisable` was to send again
        cancelled, the SIGINT handler `begin` found back (unless `commit` left SIGINT ignored),
        and Python's unraisable hook."""
        import signal
        import sys

        self._ending = True
        self.discard()
        if self._resend is not None:  # the command ended first: no signal after the handler is back
            self._resend.cancel()
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        if self._previous_handler is not None and signal.getsignal(signal.SIGINT) == self._on_ctrl_c:
            signal.signal(signal.SIGINT, self._previous_handler)
        self._previous_handler = None
        if sys.unraisablehook == self._unraisable:
            sys.unraisablehook = self._previous_hook


def write_delivered(path: str | Path, write: Callable[[str], None]) -> Path:
    """`write(scratch)` writes the file beside `path` under a partial name, which is renamed onto
    `path` when the command delivers its outputs (removed on an error). Returns `path`."""
    target = Path(path)
    scratch = partial_path(target)
    try:
        write(str(scratch))
    except BaseException:
        remove_path(scratch)
        raise
    on_delivery(lambda: os.replace(scratch, target), lambda: remove_path(scratch))
    return target
