"""Imported by the proof jobs' fork server only: loads the explorer's compiled kernels once.

Every proof starts with an exploration, and the first exploration in a process loads the
explorer's compiled kernels (most of a second). The fork server imports this module once,
so every job, a fork of that server, starts with them loaded. The exploration runs on one
thread and leaves none behind: the fork server must stay single-threaded to fork safely.
"""

from __future__ import annotations

from model.check.explorer import explore
from model.check.search import SearchOptions
from model.design import Bounds
from model.presets import PRESETS

explore(
    PRESETS["fencing"].design,
    Bounds(workers=1, lease=1, horizon=2, grants=1),
    SearchOptions(threads=1),
)
