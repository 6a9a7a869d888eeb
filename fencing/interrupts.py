"""Ctrl-C stops a command as an interrupt: never as an `unknown` verdict or a normal report.

Two things could swallow it. z3 catches SIGINT itself during a check and answers `unknown`
(the prover switches that off, see `proofs.report.let_ctrl_c_through`); and Python drops a
KeyboardInterrupt raised while a finalizer runs (z3's objects release their terms in
`__del__`), so the command would go on as if nothing happened. Hence the interrupt is also
recorded (`sigint_recorded`), and a recorded interrupt stops the command wherever it next
checks: before any output is written and when the command returns. While a proof runs
inside `z3_stops_on_ctrl_c`, the interrupt also stops z3's running check at once, and
whatever the proof raises once it was interrupted is the interrupt.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Final

RETRY_SECONDS: Final = 0.05
"""How often z3 is told again to stop until the proof has stopped."""


@dataclass(frozen=True)
class Interrupts:
    """Whether Ctrl-C arrived during a command (set by the handler, read anywhere)."""

    received: threading.Event = field(default_factory=threading.Event)

    def check(self) -> None:
        """Raise KeyboardInterrupt if Ctrl-C arrived, even if its first one was dropped."""
        if self.received.is_set():
            raise KeyboardInterrupt


@contextmanager
def sigint_recorded() -> Iterator[Interrupts]:
    """Within the block, Ctrl-C is recorded as well as raised as KeyboardInterrupt.

    Only where Python's own handler is in place, in the main thread: an interrupt that the
    caller ignores (a background job) or handles itself is left to it. Once interrupted,
    the complaints of finalizers cut short (objects half made when the interrupt landed)
    are not printed: the one line the command prints says what happened.
    """
    interrupts = Interrupts()
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield interrupts
        return

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        interrupts.received.set()
        raise KeyboardInterrupt

    def unraisable(report: Any) -> None:
        if not interrupts.received.is_set():
            previous_hook(report)

    previous_hook = sys.unraisablehook
    sys.unraisablehook = unraisable
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield interrupts
    finally:
        signal.signal(signal.SIGINT, previous)
        if not interrupts.received.is_set():  # else the process is stopping: keep it quiet
            sys.unraisablehook = previous_hook


@contextmanager
def z3_stops_on_ctrl_c() -> Iterator[None]:
    """Within the block, SIGINT stops z3's running check at once (main thread only).

    Python's SIGINT handler writes the signal's number to a wakeup pipe; a watcher thread
    reads it and interrupts z3's context (z3's one call meant for another thread), again
    every `RETRY_SECONDS` until the block ends, so the proof ends at once even if its
    KeyboardInterrupt is dropped; the block then raises KeyboardInterrupt itself, also in
    place of any error the stopped proof raised (z3 refuses a model it was stopped making).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    import z3

    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    seen, done = threading.Event(), threading.Event()
    watcher = threading.Thread(
        target=_interrupt_z3_on_sigint,
        args=(read_end, z3.main_ctx(), seen, done),
        daemon=True,
    )
    watcher.start()
    previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    try:
        yield
    except Exception:
        if seen.is_set():
            raise KeyboardInterrupt from None
        raise
    finally:
        signal.set_wakeup_fd(previous)
        done.set()
        os.close(write_end)  # the watcher reads the end of the pipe and stops
        watcher.join(timeout=5)
        os.close(read_end)
    if seen.is_set():
        raise KeyboardInterrupt


def _interrupt_z3_on_sigint(
    read_end: int, context: Any, seen: threading.Event, done: threading.Event
) -> None:
    """Until the pipe closes: after a SIGINT, interrupt z3's context until `done`."""
    while received := os.read(read_end, 64):
        if signal.SIGINT in received:
            seen.set()
            context.interrupt()
            while not done.wait(RETRY_SECONDS):
                context.interrupt()
