"""A run's folder of evidence beside its history file: every witness, kept small.

`lab-<scenario>-<receiver>-<start>.json` gets the folder `lab-<scenario>-<receiver>-<start>-run/`
holding the history (a hard link to the file, or a copy), a copy of the database as the
final read found it (`store.sqlite`, or PostgreSQL's tables as `store.csv`), and the logs
the processes wrote to standard error (each etcd, worker, storage and PostgreSQL log cut to
its last `LOG_LIMIT_BYTES`). The folder is created exclusively (a
number is added when the name is taken), so two runs never share one; a folder this lab
made for an earlier run of the same named history file is replaced, one it did not make is
never touched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from lab.settings import LabError

LOG_LIMIT_BYTES: Final = 256_000
"""At most this much of each log is kept (its end: the last words matter most)."""
MARKER: Final = ".fencing-lab-run"
"""A file in every run folder, so the lab only ever replaces a folder it made."""
FOLDER_ATTEMPTS: Final = 100


def _claim_folder(history: Path) -> Path:
    """A new folder named after the history file (an earlier run folder of it replaced)."""
    stem = history.with_suffix("").name if history.suffix else history.name
    for number in range(1, FOLDER_ATTEMPTS + 1):
        folder = history.parent / (f"{stem}-run" if number == 1 else f"{stem}-run-{number}")
        if folder.is_dir() and not folder.is_symlink() and (folder / MARKER).is_file():
            shutil.rmtree(folder)
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        (folder / MARKER).write_text("a run folder of the fencing lab\n")
        return folder
    raise LabError(f"no free run folder name beside {history} after {FOLDER_ATTEMPTS} tries")


def _tail(source: Path, target: Path) -> None:
    """Copy the last LOG_LIMIT_BYTES of a log."""
    with open(source, "rb") as log:
        size = log.seek(0, os.SEEK_END)
        log.seek(max(0, size - LOG_LIMIT_BYTES))
        target.write_bytes(log.read())


def keep_evidence(history: Path, database: Path | None, logs: Iterable[Path]) -> Path:
    """Make the run folder of the history written at `history`; its path."""
    try:
        folder = _claim_folder(history)
        try:
            os.link(history, folder / "history.json")
        except OSError:
            shutil.copyfile(history, folder / "history.json")
        if database is not None and database.is_file():
            shutil.copyfile(database, folder / f"store{database.suffix}")
        (folder / "logs").mkdir()
        for log in logs:
            with contextlib.suppress(OSError):
                _tail(log, folder / "logs" / log.name)
    except OSError as error:
        raise LabError(
            f"cannot keep the run's evidence beside {history}: {error.strerror}"
        ) from None
    return folder
