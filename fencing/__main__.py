"""The `fencing` command's entry point: Ctrl-C while it starts is one line and exit 130.

Loading the engines takes a moment (numpy, numba, z3); an interrupt then would end in a
traceback from whichever import it cut short (or an import error), so until the command
line is loaded the interrupt ends the process at once: nothing has been done yet.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

from fencing import EXIT_INTERRUPTED, INTERRUPTED


def _stop_while_starting(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C before the command has started: say so and stop at once."""
    os.write(sys.stderr.fileno(), f"{INTERRUPTED}\n".encode())
    os._exit(EXIT_INTERRUPTED)


def main() -> int:
    """Load the command line with Ctrl-C ending the start, then run the command."""
    starting = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if starting:
        signal.signal(signal.SIGINT, _stop_while_starting)
    from fencing.cli import main as run_command

    if starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return run_command()


if __name__ == "__main__":
    sys.exit(main())
