"""The private folder for compiled code: owned by this user, writable by nobody else.

Compiled loops (`model.check.kernels`) are Python modules, and numba's cache of machine code is
pickled: loading either runs code. So both are kept only in a folder this user owns and
no group or other user can write (created with mode 0700). A folder that exists but fails
that test (another owner, group or other write bits, a symbolic link, or a parent folder
another user could rename it in) is refused with a warning and nothing is cached: the
loops are compiled again in memory. numba is told to cache there too (`NUMBA_CACHE_DIR`),
so its index is never read from a shared folder either.
"""

from __future__ import annotations

import functools
import os
import stat
import tempfile
import warnings
from pathlib import Path
from typing import Final

CACHE_ENV: Final = "FENCING_LAB_CACHE"
"""Environment variable naming the folder for compiled code (default: ~/.cache)."""

NUMBA_ENV: Final = "NUMBA_CACHE_DIR"
"""numba's own setting for where its cache of machine code lives."""

FOLDER_MODE: Final = 0o700
OPEN_BITS: Final = stat.S_IWGRP | stat.S_IWOTH
"""Write bits for the group and other users: a private folder has neither."""


class CacheWarning(UserWarning):
    """A cache folder was refused, so compiled code is not cached."""


def refusal(path: Path, info: os.stat_result, uid: int) -> str | None:
    """Why this folder may not hold compiled code, or None when it is private to `uid`."""
    if stat.S_ISLNK(info.st_mode):
        return f"{path} is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a folder"
    if info.st_uid != uid:
        return f"{path} is owned by user {info.st_uid}, not by this user ({uid})"
    if info.st_mode & OPEN_BITS:
        return f"{path} can be written by other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def parent_refusal(path: Path, info: os.stat_result, uid: int) -> str | None:
    """Why a parent folder lets another user swap the folder under it, or None.

    A parent is safe when this user or root owns it and nobody else can write in it, or
    when it is sticky (like /tmp): there only an entry's owner can rename or remove it.
    """
    if info.st_uid not in (uid, 0):
        return f"{path} is owned by user {info.st_uid}"
    if info.st_mode & OPEN_BITS and not info.st_mode & stat.S_ISVTX:
        return f"{path} can be written by other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def check_private(folder: Path) -> str | None:
    """Why this existing folder is not private to the current user, or None if it is."""
    uid = os.geteuid()
    try:
        reason = refusal(folder, os.lstat(folder), uid)
        parents = dict.fromkeys([*folder.absolute().parents, *folder.resolve().parents])
        for parent in parents:
            reason = reason or parent_refusal(parent, os.stat(parent), uid)
    except OSError as error:
        return f"{folder} cannot be checked ({error.strerror})"
    return reason


def ensure_private(folder: Path) -> str | None:
    """Create the folder with mode 0700 when missing; why it may not be used, or None."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir(mode=FOLDER_MODE)
    except FileExistsError:
        pass
    except OSError as error:
        return f"{folder} cannot be created ({error.strerror})"
    return check_private(folder)


def _preferred_folder() -> Path:
    """The configured cache folder: $FENCING_LAB_CACHE, else $XDG_CACHE_HOME or ~/.cache."""
    root = os.environ.get(CACHE_ENV) or os.environ.get("XDG_CACHE_HOME")
    base = Path(root) if root else Path.home() / ".cache"
    return base / "fencing-lab" / "kernels"


def _refuse(reason: str) -> None:
    """Say that a folder was refused and that compiled code will not be cached."""
    warnings.warn(
        f"not caching compiled code: {reason}; compiling in memory instead "
        "(remove that folder, or make it yours with mode 700)",
        CacheWarning,
        stacklevel=3,
    )


def private_folder() -> Path | None:
    """This user's private folder for compiled code, or None (with a warning) if none.

    When the configured folder cannot be created (a home that cannot be written), a folder
    named after the user id in the temporary directory is used, under the same checks: one
    planted there beforehand by someone else is refused, not used.
    """
    preferred = _preferred_folder()
    reason = ensure_private(preferred)
    if reason is None:
        return preferred
    if preferred.exists():
        _refuse(reason)
        return None
    fallback = Path(tempfile.gettempdir()) / f"fencing-lab-{os.geteuid()}"
    reason = ensure_private(fallback)
    if reason is None:
        return fallback
    _refuse(reason)
    return None


@functools.cache
def numba_cache() -> bool:
    """Point numba's cache at a private folder (before any function is compiled).

    Returns whether caching is on. A `NUMBA_CACHE_DIR` the user chose is kept when it is
    private (it is created with mode 0700 when missing) and replaced by ours, with a
    warning, when it is not; with no private folder at all, numba caches nothing. Called
    once per process, by the modules that compile, before their functions are decorated.
    """
    chosen = os.environ.get(NUMBA_ENV)
    if chosen:
        reason = ensure_private(Path(chosen))
        if reason is None:
            return True
        warnings.warn(f"{NUMBA_ENV} refused: {reason}", CacheWarning, stacklevel=2)
    folder = private_folder()
    own = folder / "numba" if folder is not None else None
    if own is not None and ensure_private(own) is None:
        os.environ[NUMBA_ENV] = str(own)
        _reload_numba_config()
        return True
    os.environ.pop(NUMBA_ENV, None)
    _reload_numba_config()
    return False


def _reload_numba_config() -> None:
    """Make numba read its settings from the environment again (if it is imported)."""
    from numba.core import config

    config.reload_config()
