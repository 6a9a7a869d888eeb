"""The seen-set's probing loops, compiled: linear probing on int64 key words.

A key's home slot is a multiplicative hash of its words scaled to the table size; probing
walks on one slot at a time, wrapping around. Keys are taken in the batch's order, so of
several copies of a new key the first one is inserted and reported: the first parent
wins. `EMPTY` (-1) marks a free slot; keys are never negative.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_EMPTY = -1
_MIX = np.uint64(0x9E3779B97F4A7C15)
_MIX_WORD = np.uint64(0xC2B2AE3D27D4EB4F)
_HALF = np.uint64(32)
_BLOCK = 1024


@njit(cache=True)
def _home(mixed: np.uint64, size: int) -> int:
    """Scale a 64-bit hash to a slot: the top 32 bits times the size, over 2^32."""
    return np.int64(((mixed >> _HALF) * np.uint64(size)) >> _HALF)  # type: ignore[return-value]


@njit(cache=True)
def insert_narrow(
    table: np.ndarray, keys: np.ndarray, start: int, room: int, fresh: np.ndarray
) -> tuple[int, int]:
    """Insert keys[start:] until `room` new keys are added; (next position, keys added).

    `fresh` receives the positions of the keys that were new. Keys go in blocks: first
    every home slot of the block is read (independent loads the processor overlaps),
    then the block is probed one key after the other, mostly from the cache.
    """
    size = table.shape[0]
    homes = np.empty(_BLOCK, dtype=np.int64)
    added = 0
    position = start
    while position < keys.shape[0] and added < room:
        end = min(keys.shape[0], position + min(_BLOCK, room - added))
        touched = 0
        for i in range(position, end):
            home = _home(np.uint64(keys[i]) * _MIX, size)
            homes[i - position] = home
            touched += table[home]
        for i in range(position, end):
            key = keys[i]
            slot = homes[i - position]
            while True:
                found = table[slot]
                if found == key:
                    break
                if found == _EMPTY:
                    table[slot] = key
                    fresh[added] = i
                    added += 1
                    break
                slot = slot + 1 if slot + 1 < size else 0
        position = end
        if touched == 7:  # keeps the reads above from being optimised away
            homes[0] = homes[0]
    return position, added


@njit(cache=True)
def _wide_home(row: np.ndarray, size: int) -> int:
    """Home slot of a key of several words."""
    mixed = np.uint64(0)
    for word in range(row.shape[0]):
        mixed = (mixed ^ (np.uint64(row[word]) * _MIX_WORD)) * _MIX
    return _home(mixed, size)


@njit(cache=True)
def _same_row(table: np.ndarray, slot: int, row: np.ndarray) -> bool:
    """Whether the slot holds exactly this key (a plain loop: numba compiles it)."""
    for word in range(row.shape[0]):  # noqa: SIM110
        if table[slot, word] != row[word]:
            return False
    return True


@njit(cache=True)
def insert_wide(
    table: np.ndarray, keys: np.ndarray, start: int, room: int, fresh: np.ndarray
) -> tuple[int, int]:
    """`insert_narrow` for keys of several words (one row each)."""
    size = table.shape[0]
    added = 0
    position = start
    while position < keys.shape[0] and added < room:
        row = keys[position]
        slot = _wide_home(row, size)
        while True:
            if table[slot, 0] == _EMPTY:
                table[slot, :] = row
                fresh[added] = position
                added += 1
                break
            if _same_row(table, slot, row):
                break
            slot = slot + 1 if slot + 1 < size else 0
        position += 1
    return position, added


@njit(cache=True)
def rehash_narrow(old: np.ndarray, table: np.ndarray) -> None:
    """Move every key of the old table into the (larger, empty) new one."""
    size = table.shape[0]
    for i in range(old.shape[0]):
        key = old[i]
        if key == _EMPTY:
            continue
        slot = _home(np.uint64(key) * _MIX, size)
        while table[slot] != _EMPTY:
            slot = slot + 1 if slot + 1 < size else 0
        table[slot] = key


@njit(cache=True)
def rehash_wide(old: np.ndarray, table: np.ndarray) -> None:
    """`rehash_narrow` for keys of several words."""
    size = table.shape[0]
    for i in range(old.shape[0]):
        if old[i, 0] == _EMPTY:
            continue
        slot = _wide_home(old[i], size)
        while table[slot, 0] != _EMPTY:
            slot = slot + 1 if slot + 1 < size else 0
        table[slot, :] = old[i]
