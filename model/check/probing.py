"""The seen-set's compiled loops: partitioning a batch by hash, and linear probing.

The set is split into `PARTS` tables by the top bits of a key's hash; within its table a
key's home slot is the next 32 bits of the hash scaled to the table size, and probing
walks on one slot at a time, wrapping around. A batch is first put in table order by a
stable counting sort, so each table sees its keys in the batch's order and inserts the
first copy of a new key: the first parent wins. The loops release the interpreter's lock,
so two threads can fill disjoint tables at once. `EMPTY` (-1) marks a free slot; keys are
never negative.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from model.check.private_cache import numba_cache

CACHE = numba_cache()
"""Whether numba keeps these loops' machine code (only ever in this user's private folder)."""

PART_BITS = 4
PARTS = 1 << PART_BITS
_EMPTY = -1
_MIX = np.uint64(0x9E3779B97F4A7C15)
_MIX_WORD = np.uint64(0xC2B2AE3D27D4EB4F)
_PART_SHIFT = np.uint64(64 - PART_BITS)
_HOME_SHIFT = np.uint64(PART_BITS)
_HALF = np.uint64(32)


@njit(cache=CACHE, nogil=True)
def _mixed_row(row: np.ndarray) -> np.uint64:
    """A 64-bit hash of a key of several words."""
    mixed = np.uint64(0)
    for word in range(row.shape[0]):
        mixed = (mixed ^ (np.uint64(row[word]) * _MIX_WORD)) * _MIX
    return mixed


@njit(cache=CACHE, nogil=True)
def _home(mixed: np.uint64, size: int) -> int:
    """Home slot in a table of `size` slots: the 32 bits below the table bits, scaled."""
    return np.int64((((mixed << _HOME_SHIFT) >> _HALF) * np.uint64(size)) >> _HALF)  # type: ignore[return-value]


@njit(cache=CACHE, nogil=True)
def partition(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the keys grouped by table, in batch order within a table (a stable
    counting sort), and where each table's group starts (PARTS + 1 bounds)."""
    count = keys.shape[0]
    parts = np.empty(count, dtype=np.int8)
    bounds = np.zeros(PARTS + 1, dtype=np.int64)
    for i in range(count):
        mixed = np.uint64(keys[i]) * _MIX if keys.ndim == 1 else _mixed_row(keys[i])
        home_part = np.int64(mixed >> _PART_SHIFT)
        parts[i] = home_part
        bounds[home_part + 1] += 1
    for part in range(PARTS):
        bounds[part + 1] += bounds[part]
    order = np.empty(count, dtype=np.int32)
    filled = bounds[:-1].copy()
    for i in range(count):
        part = parts[i]
        order[filled[part]] = i
        filled[part] += 1
    return order, bounds


@njit(cache=CACHE, nogil=True)
def insert_narrow(
    table: np.ndarray,
    keys: np.ndarray,
    order: np.ndarray,
    start: int,
    end: int,
    room: int,
    fresh: np.ndarray,
    added: int,
) -> tuple[int, int]:
    """Insert keys[order[start:end]] in that order until `room` new keys went in.

    Writes the batch positions of new keys to fresh[added:] (which may be `order` itself
    when `added` never passes the index being read); returns (next index into `order`,
    added).
    """
    size = table.shape[0]
    index = start
    limit = added + room
    while index < end and added < limit:
        position = order[index]
        key = keys[position]
        slot = _home(np.uint64(key) * _MIX, size)
        while True:
            found = table[slot]
            if found == key:
                break
            if found == _EMPTY:
                table[slot] = key
                fresh[added] = position
                added += 1
                break
            slot += 1
            if slot == size:
                slot = 0
        index += 1
    return index, added


@njit(cache=CACHE, nogil=True)
def _same_row(table: np.ndarray, slot: int, row: np.ndarray) -> bool:
    """Whether the slot holds exactly this key (a plain loop: numba compiles it)."""
    for word in range(row.shape[0]):  # noqa: SIM110
        if table[slot, word] != row[word]:
            return False
    return True


@njit(cache=CACHE, nogil=True)
def insert_wide(
    table: np.ndarray,
    keys: np.ndarray,
    order: np.ndarray,
    start: int,
    end: int,
    room: int,
    fresh: np.ndarray,
    added: int,
) -> tuple[int, int]:
    """`insert_narrow` for keys of several words (one row each)."""
    size = table.shape[0]
    index = start
    limit = added + room
    while index < end and added < limit:
        position = order[index]
        row = keys[position]
        slot = _home(_mixed_row(row), size)
        while True:
            if table[slot, 0] == _EMPTY:
                table[slot, :] = row
                fresh[added] = position
                added += 1
                break
            if _same_row(table, slot, row):
                break
            slot += 1
            if slot == size:
                slot = 0
        index += 1
    return index, added


@njit(cache=CACHE, nogil=True)
def rehash_narrow(old: np.ndarray, table: np.ndarray) -> None:
    """Move every key of an old table into a (larger, empty) new one."""
    size = table.shape[0]
    for i in range(old.shape[0]):
        key = old[i]
        if key == _EMPTY:
            continue
        slot = _home(np.uint64(key) * _MIX, size)
        while table[slot] != _EMPTY:
            slot += 1
            if slot == size:
                slot = 0
        table[slot] = key


@njit(cache=CACHE, nogil=True)
def rehash_wide(old: np.ndarray, table: np.ndarray) -> None:
    """`rehash_narrow` for keys of several words."""
    size = table.shape[0]
    for i in range(old.shape[0]):
        if old[i, 0] == _EMPTY:
            continue
        slot = _home(_mixed_row(old[i]), size)
        while table[slot, 0] != _EMPTY:
            slot += 1
            if slot == size:
                slot = 0
        table[slot, :] = old[i]
