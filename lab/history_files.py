"""Where lab histories are written: a target checked before the run, names that never clash.

`--history` names a file or a folder (nothing: the current folder). `history_target`
checks it before any process starts, so a path that cannot be written is refused in one
line instead of after the whole run: the folder must exist and take a new file, a file
must not be a folder or a device. In a folder each run gets a name of its own, made of its
scenario, receiver and start time to the microsecond, created exclusively (`-2`, `-3`
added if another run took the name first), so two runs never overwrite each other. A file
is written next to its final place and renamed over it, so a reader never sees half of one.
"""

from __future__ import annotations

import datetime
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lab.history import History, history_to_json
from lab.settings import LabError, LabInputError

NAME_ATTEMPTS: Final = 1000
"""Numbered names tried in a folder before giving up (a folder that full is a mistake)."""


@dataclass(frozen=True)
class HistoryTarget:
    """Where histories go: a folder (each run its own new file) or one named file."""

    folder: Path
    file: Path | None = None
    per_receiver: bool = False
    """With several receivers compared and one file named, `<name>-<receiver>.<suffix>`."""

    def describe(self) -> str:
        """The target in words, for messages."""
        return str(self.file) if self.file is not None else f"a new file in {self.folder}"


def _refuse(given: Path | str, why: str) -> LabInputError:
    """The one-line refusal of a --history path."""
    return LabInputError(f"--history {str(given)[:200]!r} {why}")


def _probe_folder(given: Path | str, folder: Path) -> None:
    """Make sure a new file can be created in `folder` (by creating and removing one)."""
    try:
        handle, name = tempfile.mkstemp(prefix=".fencing-lab-probe-", dir=folder)
    except OSError as error:
        raise _refuse(
            given, f"cannot be written: creating a file in {folder} fails ({error.strerror})"
        ) from None
    os.close(handle)
    Path(name).unlink(missing_ok=True)


def named_file(base: Path, receiver: str, several: bool) -> Path:
    """The file of one receiver's history when --history names a file (with several
    receivers compared, the receiver goes into the name)."""
    return base.with_name(f"{base.stem}-{receiver}{base.suffix}") if several else base


def _check_file(given: str, path: Path) -> None:
    """Refuse a history file path that exists but is not a writable regular file."""
    if path.exists() and not stat.S_ISREG(path.stat().st_mode):
        raise _refuse(given, f"would write {path}, which is not a regular file")
    if path.exists() and not os.access(path, os.W_OK):
        raise _refuse(given, f"would write {path}, which cannot be written")


def history_target(text: str | None, receivers: tuple[str, ...] = ()) -> HistoryTarget:
    """Check `--history` before the run: a writable folder, or a file in a writable folder
    (with several `receivers`, each receiver's file). A path ending in `/` is a folder."""
    if text is None:
        folder = Path(".")
        _probe_folder(".", folder)
        return HistoryTarget(folder)
    if not text.strip():
        raise _refuse(text, "is empty: give a file or a folder")
    given = Path(text)
    if given.is_dir():
        _probe_folder(text, given)
        return HistoryTarget(given)
    if text.endswith(("/", os.sep)):
        raise _refuse(text, "names a folder that does not exist")
    parent = given.parent
    if not parent.exists():
        raise _refuse(text, f"is in a folder that does not exist ({parent})")
    if not parent.is_dir():
        raise _refuse(text, f"is inside {parent}, which is not a folder")
    several = len(receivers) > 1
    for receiver in receivers or ("",):
        _check_file(text, named_file(given, receiver, several))
    _probe_folder(text, parent)
    return HistoryTarget(parent, given, several)


def as_target(where: HistoryTarget | Path | None) -> HistoryTarget | None:
    """A target from what a caller gave: a target, a file path (used as given), or None."""
    if where is None or isinstance(where, HistoryTarget):
        return where
    return HistoryTarget(where.parent, where)


def _stamp(history: History) -> str:
    """The run's start time for a file name: `20261201-095350-123456` (UTC)."""
    try:
        when = datetime.datetime.fromisoformat(history.started)
    except ValueError:
        when = datetime.datetime.now(datetime.UTC)
    return when.strftime("%Y%m%d-%H%M%S-%f")


def unique_name(history: History) -> str:
    """`lab-<scenario>-<receiver>-<start time>.json`."""
    safe = re.sub(r"[^a-z0-9-]", "-", history.scenario.lower())[:40]
    return f"lab-{safe}-{history.settings.receiver}-{_stamp(history)}.json"


def _claim(folder: Path, name: str) -> Path:
    """Create a new empty file for `name` in `folder` (numbered if the name is taken)."""
    stem, suffix = name.rsplit(".", 1)
    for number in range(1, NAME_ATTEMPTS + 1):
        path = folder / (name if number == 1 else f"{stem}-{number}.{suffix}")
        try:
            with open(path, "x"):
                return path
        except FileExistsError:
            continue
    raise LabError(f"no free history file name in {folder} after {NAME_ATTEMPTS} tries")


def _replace(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path` and rename it over `path` (which
    exists by then: its permissions, set by the umask when it was created, are kept)."""
    with open(path, "a"):
        mode = stat.S_IMODE(path.stat().st_mode)
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(handle, mode)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def write_history(history: History, target: HistoryTarget) -> Path:
    """Write the history to its target; the path written."""
    claimed: Path | None = None
    try:
        if target.file is None:
            path = claimed = _claim(target.folder, unique_name(history))
        else:
            path = named_file(target.file, history.settings.receiver, target.per_receiver)
        _replace(path, history_to_json(history))
    except OSError as error:
        if claimed is not None:
            claimed.unlink(missing_ok=True)
        raise LabError(
            f"cannot write the history to {target.describe()}: {error.strerror}"
        ) from None
    return path
