"""Standard output that says when it cannot be written, and writes nothing after Ctrl-C.

A full device or a failing stream raises OutputError (the command prints one line and
exits with status 74); a broken pipe stays BrokenPipeError, since a reader that went away
(`| head`) is no error. Kept apart from `fencing.cli` so that every engine's command (and
`python -m fencing.cli`) raises the one OutputError the command line catches.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, TextIO, cast

from fencing.interrupts import Interrupts
from model.formats.trace import Trace


class OutputError(Exception):
    """The output could not be written: a full device, a closed or failing stream or file."""


class _CheckedOutput:
    """Standard output that writes nothing after Ctrl-C, and whose failures are OutputError.

    A broken pipe stays BrokenPipeError: the reader went away, which is not an error.
    """

    def __init__(self, stream: TextIO, interrupts: Interrupts) -> None:
        self._stream = stream
        self._interrupts = interrupts

    def write(self, text: str) -> int:
        """Write the text, or raise OutputError saying why it could not be."""
        self._interrupts.check()
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as error:
            raise OutputError(f"cannot write the output: {error.strerror or error}") from None

    def flush(self) -> None:
        """Flush the stream, or raise OutputError saying why it could not be."""
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise OutputError(f"cannot write the output: {error.strerror or error}") from None

    def __getattr__(self, name: str) -> Any:
        """Everything else is the stream's own."""
        return getattr(self._stream, name)


@contextmanager
def checked_stdout(interrupts: Interrupts) -> Iterator[None]:
    """Within the block, write errors on standard output are OutputError; flush at the end.

    Output that was buffered is flushed here (also when argparse exits after `--help`), so
    a full device is found while the command can still say so.
    """
    stream = sys.stdout
    if stream is None:  # closed: nothing is written, and the command is refused
        yield
        return
    sys.stdout = cast(TextIO, _CheckedOutput(stream, interrupts))
    try:
        yield
        sys.stdout.flush()
    except SystemExit:
        sys.stdout.flush()
        raise
    finally:
        sys.stdout = stream


def discard_stdout() -> None:
    """Point standard output at the null device, so nothing left in its buffer fails at exit."""
    if sys.stdout is None:  # closed: nothing is buffered
        return
    # Not a real file (the tests capture it): then nothing is flushed to a descriptor.
    with suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def format_trace(trace: Trace) -> list[str]:
    """Numbered narration of a trace, with each violation's reason under its step."""
    lines = []
    for step in trace.steps:
        lines.append(f"  {step.number:>2}. [{step.actor}] {step.sentence}")
        lines.extend(f"      ✗ {reason.text}" for reason in step.reasons)
    return lines
