"""The seen set of the breadth-first search: every state key stored so far.

The search asks one thing of it (`SeenStates`): given a level's successor keys in the
search's order, copies included, which positions hold the first occurrence of a key not
seen before. That is what makes the first parent of a state its first one in the search's
order. `SeenSet` answers it with open-addressing hash tables on the key words themselves,
so each level is checked against everything seen without re-sorting it;
`first_occurrences` is the plain, sorting statement of the same answer (the tests compare
the two).
"""

from __future__ import annotations

from concurrent.futures import Executor
from typing import Final, Protocol

import numpy as np

from model.check.keys import KeyCodec, Keys

EMPTY: Final = -1
"""A free slot of the hash table (keys are never negative)."""
MAX_LOAD: Final = 0.7
"""A table grows by a quarter once it is this full (so it is 56% to 70% full)."""
GROWTH: Final = 1.25
INITIAL_SLOTS: Final = 256
"""Slots of each partition's table at the start (they grow as states are found)."""
SPILL: Final = 1 << 12
"""Slots past the end of the table where probing continues instead of wrapping around."""
SORTED_UP_TO: Final = 1 << 17
"""One-word keys are kept in a sorted array (numpy alone) until this many are seen; then
they move to the hash tables, whose compiled loops are only loaded for such searches."""


def first_occurrences(keys: Keys) -> tuple[Keys, np.ndarray]:
    """The distinct keys in ascending order, each with the position of its first occurrence.

    The plain, sorting statement of what `SeenSet.add` finds by hashing (the tests compare
    the two): a new state's parent is its first occurrence in the search's order.
    """
    unique, first = np.unique(keys, axis=0 if keys.ndim > 1 else None, return_index=True)
    return unique, first


class SeenStates(Protocol):
    """The interface the search uses: first occurrences of unseen keys, a count, and every
    key held (for a search handing its keys to the native engine)."""

    count: int

    def add(self, keys: Keys, pool: Executor | None = None) -> np.ndarray:
        """Insert a batch; the positions of the first occurrences of keys not seen before."""
        ...

    def held_keys(self) -> Keys:
        """Every key held, in no particular order."""
        ...


class SeenSet:
    """The keys of every state found so far: hash tables of key words, linear probing.

    `add` takes a level's successor keys in the search's order, copies included, and
    returns the positions of the first occurrences of keys not seen before, so the first
    parent wins without sorting the batch. The set is partitioned by hash into tables
    that grow one at a time (by a quarter, once `MAX_LOAD` full), so growing never holds two
    copies of the whole set; two threads insert into disjoint halves of the tables at
    once. The probing loops are compiled (`model.check.probing`). A small search never
    needs them: its keys stay in one sorted array (`SORTED_UP_TO`), a key of several words
    as one big-endian string of bytes, which sort as the keys do.
    """

    def __init__(self, codec: KeyCodec, threads: int = 1, sorted_up_to: int | None = None) -> None:
        self.codec = codec
        self.sorted_up_to = SORTED_UP_TO if sorted_up_to is None else sorted_up_to
        self.threads = max(1, min(threads, 2))
        self.tables: list[np.ndarray] = []
        self.rooms = np.zeros(0, dtype=np.int64)
        self.count = 0
        self.sorted: np.ndarray | None = self._comparable(codec.pack(codec.layout.initial()))[:0]

    def _comparable(self, keys: Keys) -> np.ndarray:
        """Keys as the sorted array holds them: one-word keys as they are, wider ones as
        big-endian strings of bytes (non-negative words compare as their bytes do)."""
        if not self.codec.wide:
            return keys
        rows = np.ascontiguousarray(keys, dtype=">i8")
        return rows.view(np.dtype((np.void, 8 * self.codec.words))).ravel()

    def _keys_of(self, held: np.ndarray) -> Keys:
        """The keys of the sorted array's entries."""
        if not self.codec.wide:
            return held
        return held.view(">i8").reshape(-1, self.codec.words).astype(np.int64)

    def _make_tables(self) -> None:
        """Empty hash tables (this loads the compiled probing loops)."""
        from model.check import probing

        self.tables = [self._empty(INITIAL_SLOTS) for _ in range(probing.PARTS)]
        self.rooms = np.array([self._room(INITIAL_SLOTS)] * probing.PARTS, dtype=np.int64)

    def _add_sorted(self, keys: Keys) -> np.ndarray:
        """`add` on the sorted array: first occurrences of the keys it does not hold."""
        assert self.sorted is not None
        unique, first = np.unique(self._comparable(keys), return_index=True)
        place = np.searchsorted(self.sorted, unique)
        held = place < len(self.sorted)
        held[held] = self.sorted[place[held]] == unique[held]
        fresh = first[~held]
        self.sorted = np.insert(self.sorted, place[~held], unique[~held])
        self.count += len(fresh)
        return fresh

    def _leave_sorted(self) -> None:
        """Move the sorted array's keys into hash tables."""
        assert self.sorted is not None
        held, self.sorted = self._keys_of(self.sorted), None
        self._make_tables()
        self.count = 0
        self.add(held)

    def _empty(self, size: int) -> np.ndarray:
        """A table of free slots."""
        shape = (size,) if not self.codec.wide else (size, self.codec.words)
        return np.full(shape, EMPTY, dtype=np.int64)

    @staticmethod
    def _room(size: int) -> int:
        """How many keys a table of this size takes before it grows."""
        return int(MAX_LOAD * size)

    @property
    def nbytes(self) -> int:
        """Memory held by the tables (or the sorted array)."""
        held = int(self.sorted.nbytes) if self.sorted is not None else 0
        return held + sum(int(table.nbytes) for table in self.tables)

    def held_keys(self) -> Keys:
        """Every key held, in no particular order (for a search changing engines)."""
        if self.sorted is not None:
            return self._keys_of(self.sorted)
        held = [
            table[table != EMPTY] if not self.codec.wide else table[table[:, 0] != EMPTY]
            for table in self.tables
        ]
        return np.concatenate(held)

    def add(self, keys: Keys, pool: Executor | None = None) -> np.ndarray:
        """Insert a batch; the positions of the first occurrences of keys not seen before."""
        if not len(keys):
            return np.zeros(0, dtype=np.int64)
        if self.sorted is not None:
            if self.count + len(keys) <= self.sorted_up_to:
                return self._add_sorted(keys)
            self._leave_sorted()
        from model.check import probing

        if len(keys) >= 2**31:
            raise ValueError("a batch of keys must hold fewer than 2^31 keys")
        order, bounds = probing.partition(keys)
        parts = [part for part in range(probing.PARTS) if bounds[part + 1] > bounds[part]]
        if pool is None or self.threads == 1:
            found = [self._insert_parts(keys, order, bounds, parts)]
        else:
            halves = [
                pool.submit(self._insert_parts, keys, order, bounds, parts[i::2]) for i in (0, 1)
            ]
            found = [half.result() for half in halves]
        fresh = np.concatenate(found) if len(found) > 1 else found[0]
        self.count += len(fresh)
        return fresh

    def _insert_parts(
        self, keys: Keys, order: np.ndarray, bounds: np.ndarray, parts: list[int]
    ) -> np.ndarray:
        """Insert the batch's keys of these tables (growing them as needed); the batch
        positions of the new ones. They are written over `order` itself, behind the
        position being read, so no second array of the batch's size is needed."""
        from model.check import probing

        insert = probing.insert_wide if self.codec.wide else probing.insert_narrow
        found = []
        for part in parts:
            index, end = int(bounds[part]), int(bounds[part + 1])
            added = index
            while index < end:
                if self.rooms[part] == 0:
                    self._grow(part)
                before = added
                room = int(self.rooms[part])
                index, added = insert(
                    self.tables[part], keys, order, index, end, room, order, added
                )
                self.rooms[part] -= added - before
            found.append(order[int(bounds[part]) : added])
        return np.concatenate(found) if found else np.zeros(0, dtype=np.int32)

    def _grow(self, part: int) -> None:
        """Move one table's keys into a table a quarter larger."""
        from model.check import probing

        old = self.tables[part]
        size = int(len(old) * GROWTH) + 1
        table = self._empty(size)
        (probing.rehash_wide if self.codec.wide else probing.rehash_narrow)(old, table)
        self.rooms[part] = self._room(size) - (self._room(len(old)) - int(self.rooms[part]))
        self.tables[part] = table
