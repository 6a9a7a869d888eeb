"""The System V shared-memory segment a killed PostgreSQL server leaves behind, released.

A PostgreSQL server keeps a small System V segment as an interlock and names it in its data
folder's `postmaster.pid` (line 7: the key and the id). A fast shutdown removes it; a server
killed outright (the lab's store-kill, a killed lab) cannot, and the segment would outlive
the temporary folder. Before such a folder is removed, its segment is released, once no
process is attached to it; a segment with the same id but another key is someone else's and
is left alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from pathlib import Path
from typing import Final

PID_FILE: Final = "postmaster.pid"
SEGMENT_LINE: Final = 6
"""`postmaster.pid`'s line (counted from 0) that holds the segment's key and id."""
IPC_RMID: Final = 0


def segment_named_in(pid_file: Path) -> tuple[int, int] | None:
    """The (key, id) of the segment a `postmaster.pid` names, or None when it names none."""
    try:
        key, shmid = pid_file.read_text(encoding="ascii").splitlines()[SEGMENT_LINE].split()
        return int(key), int(shmid)
    except (OSError, UnicodeDecodeError, IndexError, ValueError):
        return None


def _libc() -> ctypes.CDLL:
    """The C library, with errno kept."""
    return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def release_segment(key: int, shmid: int) -> bool:
    """Mark the segment for removal if `key` still names it (it goes when the last process
    detaches); False when it is gone or is no longer that key's."""
    libc = _libc()
    if libc.shmget(ctypes.c_int(key), ctypes.c_size_t(0), ctypes.c_int(0)) != shmid:
        return False
    return bool(libc.shmctl(ctypes.c_int(shmid), ctypes.c_int(IPC_RMID), None) == 0)


def release_segments_under(folder: Path) -> int:
    """Release the segment of every `postmaster.pid` left in `folder`; how many were released."""
    released = 0
    for pid_file in folder.glob(f"**/{PID_FILE}"):
        found = segment_named_in(pid_file)
        if found is not None and release_segment(*found):
            released += 1
    return released
