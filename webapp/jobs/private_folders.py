"""This user's private folders for what the server's processes share on one machine.

The heavy-work slots' lock files and the shared results of explorations, proofs and advice
are shared when `FENCING_LAB_SHARED` says with whom: `machine` (what `make run` and
`make serve-class` set) for every server this user runs on this machine, a folder's path for
the processes that name it, and nothing for a process alone (tests, a bare `streamlit run`:
slots of its own and results in its memory only).

The machine's folders live beside the compiled loops' (`model.check.private_cache`), under
the same rules:
created with mode 0700, and refused (with a warning, and nothing read or written there) when
it is a symbolic link, not this user's, writable by others, or under a parent another user
could rename it in. `FENCING_LAB_CACHE` or `XDG_CACHE_HOME` moves them with the kernels;
when the home cannot be written, a folder named after the user id in the temporary
directory is used, under the same checks.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from model.check.private_cache import CACHE_ENV, CacheWarning, ensure_private

PROJECT_FOLDER: Final = "fencing-lab"
SHARED_ENV: Final = "FENCING_LAB_SHARED"
"""`machine`, a folder, or nothing: which processes share slots and results."""
MACHINE: Final = "machine"


def preferred_folder(name: str) -> Path:
    """Where the folder `name` goes: $FENCING_LAB_CACHE, else $XDG_CACHE_HOME or ~/.cache,
    then `fencing-lab/<name>`."""
    root = os.environ.get(CACHE_ENV) or os.environ.get("XDG_CACHE_HOME")
    base = Path(root) if root else Path.home() / ".cache"
    return base / PROJECT_FOLDER / name


def private_folder(name: str, what: str) -> Path | None:
    """This user's private folder `name`, or None with a warning saying `what` goes unshared."""
    preferred = preferred_folder(name)
    reason = ensure_private(preferred)
    if reason is None:
        return preferred
    if not preferred.exists():
        fallback = Path(tempfile.gettempdir()) / f"{PROJECT_FOLDER}-{os.geteuid()}-{name}"
        reason = ensure_private(fallback)
        if reason is None:
            return fallback
    refuse(what, reason)
    return None


def refuse(what: str, reason: str) -> None:
    """Say that a folder was refused and that `what` is therefore not shared."""
    warnings.warn(
        f"{what} not shared between the server's processes: {reason} "
        "(remove that folder, or make it yours with mode 700)",
        CacheWarning,
        stacklevel=3,
    )


def shared_folder(name: str, what: str, environ: Mapping[str, str] = os.environ) -> Path | None:
    """The folder `name` shared by the processes `FENCING_LAB_SHARED` names, or None (with a
    warning when a folder was refused) for a process alone."""
    named = environ.get(SHARED_ENV, "").strip()
    if not named:
        return None
    if named == MACHINE:
        return private_folder(name, what)
    for folder in (Path(named), Path(named) / name):
        reason = ensure_private(folder)
        if reason is not None:
            refuse(what, reason)
            return None
    return Path(named) / name
