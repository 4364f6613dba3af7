"""`output.Delivery`: a command's outputs held back until it ends, then delivered in one step
that a Ctrl-C cannot split (issue 45). In-process; tests/cli/test_interrupt.py has the commands."""

from __future__ import annotations

import io
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from commaware import output
from commaware.cli import main


def staged(tmp_path: Path, name: str, text: str) -> tuple[Path, Path]:
    """A complete output `name` under its partial name, put in place (staged inside a delivery)."""
    final = tmp_path / name
    partial = output.partial_path(final)
    partial.write_text(text)
    output.put_in_place(partial, final)
    return partial, final


@pytest.fixture
def delivery():
    d = output.Delivery().begin()
    try:
        yield d
    finally:
        d.end()


def test_outputs_wait_for_the_delivery_then_all_appear(tmp_path, delivery):
    first, first_final = staged(tmp_path, "a.json", "A")
    second, second_final = staged(tmp_path, "b.csv", "B")
    assert not first_final.exists() and not second_final.exists() and first.exists() and second.exists()
    assert delivery.commit() is False
    assert first_final.read_text() == "A" and second_final.read_text() == "B"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.csv"]


def test_a_ctrl_c_during_the_delivery_is_held_until_it_ends(tmp_path, delivery):
    """The signal lands between the first output and the second: both appear, no
    KeyboardInterrupt, and commit says a Ctrl-C came; the handler is back afterwards."""
    staged(tmp_path, "a.json", "A")
    output.on_delivery(lambda: os.kill(os.getpid(), signal.SIGINT), lambda: None)
    staged(tmp_path, "b.json", "B")
    print("the summary")
    assert delivery.commit() is True
    assert (tmp_path / "a.json").read_text() == "A" and (tmp_path / "b.json").read_text() == "B"
    assert signal.getsignal(signal.SIGINT) == delivery._on_ctrl_c  # the command's handler, until it ends
    found = delivery._previous_handler  # Python's default, or SIG_IGN when started in the background
    delivery.end()
    assert signal.getsignal(signal.SIGINT) == found


def test_a_ctrl_c_after_a_delivery_that_ends_the_process_is_ignored(tmp_path, delivery):
    staged(tmp_path, "a.json", "A")
    found = delivery._previous_handler
    try:
        assert delivery.commit(ignore_ctrl_c_after=True) is False
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGINT)  # would raise KeyboardInterrupt at the next bytecode
        assert (tmp_path / "a.json").exists()
    finally:
        signal.signal(signal.SIGINT, found)


def test_discard_leaves_nothing_behind(tmp_path, delivery):
    staged(tmp_path, "a.json", "A")
    output.deliver(lambda path: path.write_text("{}"), tmp_path / "doc.json")
    output.deliver(lambda path: path.write_text('{"to": "stdout"}'), None)
    print("printed")
    delivery.discard()
    assert list(tmp_path.iterdir()) == []
    assert sys.stdout is delivery.real


def test_stdout_holds_prints_and_documents_in_their_order(tmp_path):
    real = io.StringIO()
    saved = sys.stdout
    sys.stdout = real
    try:
        d = output.Delivery().begin()
        try:
            print("before é")
            output.deliver(lambda path: path.write_text('{"doc": 1}\n'), None)
            print("between")
            output.deliver(lambda path: path.write_text('{"doc": 2}\n'), None)
            print("after")
            assert real.getvalue() == ""
            d.commit()
        finally:
            d.end()
    finally:
        sys.stdout = saved
    assert real.getvalue() == 'before é\n{"doc": 1}\nbetween\n{"doc": 2}\nafter\n'


def test_the_spool_answers_isatty_as_the_real_stdout():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    spool = output._Spool(Terminal())
    assert spool.isatty() and not output._Spool(io.StringIO()).isatty()
    with pytest.raises(TypeError):
        spool.write(b"bytes")  # type: ignore[arg-type]


def test_at_once_and_outside_a_command_put_in_place_at_once(tmp_path, delivery):
    with output.at_once():
        _, final = staged(tmp_path, "now.json", "N")
        assert final.exists()
    _, later = staged(tmp_path, "later.json", "L")
    assert not later.exists()
    delivery.end()
    assert not later.exists()  # never delivered: dropped
    _, api = staged(tmp_path, "api.json", "X")  # no delivery open: the API's case
    assert api.exists()


def test_a_command_with_bad_input_delivers_nothing_it_staged(tmp_path, monkeypatch):
    """Exit 2 after an output was complete: the output is dropped (no partial output)."""
    from commaware.cli import simulate as simulate_cli

    def bad_gantt(*args, **kwargs):
        from commaware.cli.common import fail

        fail("the Gantt chart: bad input")

    monkeypatch.setattr("commaware.gantt.write_gantt", bad_gantt)
    examples = Path(simulate_cli.__file__).resolve().parents[3] / "examples"
    result = CliRunner().invoke(main, ["simulate", str(examples / "cluster16.json"), str(examples / "ring.json"),
                                       "--messages", str(tmp_path / "m.parquet"), "--gantt", str(tmp_path / "g.svg")])
    assert result.exit_code == 2, result.output
    assert list(tmp_path.iterdir()) == []


def test_a_ctrl_c_is_recorded_even_when_a_library_turns_it_into_another_error(delivery):
    with pytest.raises(ValueError):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            signal.raise_signal  # a bytecode or two: the handler runs here
        except KeyboardInterrupt:
            raise ValueError("Invalid affine transformation matrix") from None
    assert delivery.interrupted


def test_a_command_whose_ctrl_c_a_library_turned_into_another_error_exits_130(tmp_path, monkeypatch):
    """As matplotlib does when the signal lands inside its drawing code: the command still
    ends as interrupted, with nothing delivered and no traceback."""
    from commaware.cli import simulate as simulate_cli

    def mangled_gantt(*args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            signal.raise_signal
        except KeyboardInterrupt:
            raise ValueError("Invalid affine transformation matrix") from None

    monkeypatch.setattr("commaware.gantt.write_gantt", mangled_gantt)
    examples = Path(simulate_cli.__file__).resolve().parents[3] / "examples"
    found = signal.getsignal(signal.SIGINT)  # Python's default, or SIG_IGN when started in the background
    result = CliRunner().invoke(main, ["simulate", str(examples / "cluster16.json"), str(examples / "ring.json"),
                                       "--messages", str(tmp_path / "m.parquet"), "--gantt", str(tmp_path / "g.svg")])
    assert result.exit_code == 130, (result.exit_code, result.output, result.exception)
    assert "interrupted (Ctrl-C)" in result.output and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGINT) == found


def test_a_ctrl_c_that_a_callback_swallowed_is_raised_again_in_ordinary_code(delivery, capsys):
    """Raised inside __del__ (matplotlib's weakref callbacks), a KeyboardInterrupt is
    'ignored' by Python with a traceback on stderr; the delivery raises the signal again."""
    class Holder:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGINT)
            signal.raise_signal  # the handler runs here, inside __del__

    with pytest.raises(KeyboardInterrupt):
        Holder()
        for _ in range(100):  # the signal sent again is handled here
            time.sleep(0.01)
    assert delivery.interrupted
    assert "Traceback" not in capsys.readouterr().err


def test_a_ctrl_c_sent_again_after_a_library_swallowed_it_is_dropped_when_the_command_ends_first():
    """`_unraisable` sends the signal again 10 ms later; a command that ends meanwhile must not
    get it after its handler is gone (a second KeyboardInterrupt after the exit-130 line)."""
    from types import SimpleNamespace

    found = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a foreground shell
    try:
        d = output.Delivery().begin()
        d.interrupted = True
        d._unraisable(SimpleNamespace(exc_type=KeyboardInterrupt))
        d._unraisable(SimpleNamespace(exc_type=KeyboardInterrupt))  # once is enough
        d.end()
        time.sleep(0.1)  # a signal sent now would raise KeyboardInterrupt here
        assert not d._resend.is_alive()
    finally:
        signal.signal(signal.SIGINT, found)


def test_a_ctrl_c_the_kernel_gives_to_another_thread_interrupts_the_main_thread_at_once(delivery):
    """The kernel may hand SIGINT to any thread; Python runs its handler in the main thread,
    which, waiting on a lock (Dask's `sync` while a local cluster starts), would not look for
    seconds: the delivery's watcher sends the signal on to the main thread."""
    import threading

    other = threading.Thread(target=time.sleep, args=(1.0,))
    other.start()
    threading.Timer(0.1, signal.pthread_kill, (other.ident, signal.SIGINT)).start()
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        threading.Event().wait(5)
    assert time.monotonic() - began < 1.0
    assert delivery.interrupted
    other.join()


def test_a_second_sigint_while_the_command_stops_is_not_raised_again(delivery, monkeypatch):
    """The watcher may send on a copy of a Ctrl-C the main thread has just handled, and a user
    may press twice: raised again, it would cut short the clean-up the first one started."""
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.1)  # within REPEAT_SECONDS: not raised
    assert delivery.interrupted
    monkeypatch.setattr(output, "REPEAT_SECONDS", 0.0)
    with pytest.raises(KeyboardInterrupt):  # later on, Ctrl-C stops again
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1.0)
