"""Serve the web app: one process (`make run`, `make serve-class`), or a class server of
several processes behind a proxy (`make serve-class WORKERS=N`).

    python -m fencing.serve [--workers N] [--address A] [--port P] [--database-folder D]

Without `--workers` this becomes `streamlit run webapp/app.py` with the served settings:
one process, no proxy. With `--workers N` it starts N Streamlit processes behind HAProxy
and watches them (`fencing.hall`); with two or more, their classes are kept in PostgreSQL.
Every server shares its heavy-work slots and results with the other servers this user runs
on the machine (`FENCING_LAB_SHARED=machine`, unless the environment names other sharers).
A problem at start is one line on standard error and exit status 2; Ctrl-C or SIGTERM stops
everything (exit status 0: a server stopped when asked has done its job).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Final

from fencing import EXIT_USAGE

MOST_WORKERS: Final = 64
SHARED_ENV: Final = "FENCING_LAB_SHARED"


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line (a bad value: one line and exit 2, by argparse)."""
    parser = argparse.ArgumentParser(
        prog="python -m fencing.serve",
        description="Serve Fencing Lab: one process, or several behind a proxy for a class.",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="server processes behind HAProxy (default: one process and no proxy); with 2 or "
        "more, classes are kept in PostgreSQL",
    )
    parser.add_argument("--address", default="localhost", help="where to listen (localhost)")
    parser.add_argument("--port", type=int, default=8501, help="the port to listen on (8501)")
    parser.add_argument(
        "--database-folder",
        type=Path,
        help="where PostgreSQL keeps the classes (default: postgres in the class folder)",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.workers <= MOST_WORKERS:
        parser.error(f"--workers takes 1 to {MOST_WORKERS} processes")
    if not 1 <= args.port <= 65535:
        parser.error("--port takes a port number, 1 to 65535")
    return args


def one_process(address: str, port: int) -> None:
    """Become `streamlit run webapp/app.py` with the served settings (never returns)."""
    from fencing.hall import APP, STREAMLIT_FLAGS

    os.environ.setdefault(SHARED_ENV, "machine")
    argv = [sys.executable, "-m", "streamlit", "run", str(APP)]
    argv += ["--server.address", address, "--server.port", str(port), *STREAMLIT_FLAGS]
    os.execv(sys.executable, argv)


def _interrupted(signum: int, frame: FrameType | None) -> None:
    """SIGTERM stops the class server as Ctrl-C does."""
    raise KeyboardInterrupt


def class_server(args: argparse.Namespace) -> int:
    """Start the processes, the database and the proxy, watch them until interrupted."""
    from classroom.class_store import classes_folder
    from fencing.hall import Hall, HallError, HallSettings

    settings = HallSettings(
        workers=args.workers,
        address=args.address,
        port=args.port,
        classes=classes_folder(),
        database_folder=args.database_folder,
        shared=os.environ.get(SHARED_ENV, "").strip() or "machine",
    )
    signal.signal(signal.SIGTERM, _interrupted)
    hall = Hall(settings, say=lambda line: print(line, flush=True))
    try:
        print(f"Starting {args.workers} server process(es) behind HAProxy…", flush=True)
        hall.start()
        print(f"Serving the class at {hall.students_address()} (Ctrl-C stops it)", flush=True)
        for line in hall.describe():
            print(line, flush=True)
        hall.run()
    except HallError as error:
        print(f"fencing: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("Stopping the class server…", flush=True)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        hall.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `python -m fencing.serve`."""
    args = parse(argv)
    if args.workers == 0:
        one_process(args.address, args.port)
    return class_server(args)


if __name__ == "__main__":
    sys.exit(main())
