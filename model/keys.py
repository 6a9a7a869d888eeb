"""State keys for the explorer: one int64 word when the state space allows, several when not.

A state's key packs its columns into bit fields, the first column most significant. When
they fit in 63 bits the key is one int64 (the fast, common case); when only the
mixed-radix number (`Layout.pack`) fits, the key is that number; when neither fits, the
columns are split into groups that each fit, and the key is a row of int64 words, the
most significant group first, so that comparing rows word by word orders states exactly
as comparing their mixed-radix numbers does. Nothing is hashed away: two states share a
key only if they are equal.

`Keys` are a 1-D int64 array (one word) or a 2-D array with one row per state.
`SeenSet` is the set of keys found so far, open-addressing hash tables on the words
themselves, so that each level is checked against it without re-sorting what was seen.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass
from functools import cached_property
from typing import Final

import numpy as np

from model.layout import INT64_LIMIT, Layout

Keys = np.ndarray
"""Packed states: shape (n,) for one-word keys, (n, words) for wider ones."""

WORD_BITS: Final = INT64_LIMIT.bit_length()
"""Bits of one key word (63: keys stay non-negative)."""
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


@dataclass(frozen=True)
class KeyCodec:
    """Where each column lives in a key: its word and its place value there.

    Columns are ordered first column most significant, so comparing keys compares states
    column by column exactly as the layout's mixed-radix numbers do (the same order,
    hence the same first parents and orbit representatives). Where they fit in 63 bits,
    each column gets a bit field (decoding is a shift and a mask); where only the
    mixed-radix number fits, the key is that number (decoding divides); where neither
    fits, the columns are split into several words of bit fields.
    """

    layout: Layout
    word_of: tuple[int, ...]
    strides: tuple[int, ...]
    words: int
    bit_fields: bool

    @staticmethod
    def of(layout: Layout) -> KeyCodec:
        """Bit fields in one word, else the mixed-radix number, else bit fields in several."""
        count = len(layout.sizes)
        widths = [(size - 1).bit_length() for size in layout.sizes]
        if sum(widths) > WORD_BITS and layout.capacity <= INT64_LIMIT:
            return KeyCodec(layout, (0,) * count, layout.strides, 1, bit_fields=False)
        word_of, shifts = [0] * count, [0] * count
        word, used = 0, 0
        for i in range(count - 1, -1, -1):
            if used + widths[i] > WORD_BITS:
                word, used = word + 1, 0
            word_of[i], shifts[i] = word, used
            used += widths[i]
        words = word + 1
        # Word numbers were counted from the least significant end: flip them.
        flipped = tuple(words - 1 - w for w in word_of)
        return KeyCodec(layout, flipped, tuple(1 << s for s in shifts), words, bit_fields=True)

    @property
    def wide(self) -> bool:
        """Whether keys need more than one word."""
        return self.words > 1

    @cached_property
    def on_top(self) -> tuple[bool, ...]:
        """Whether a column is the most significant of its word (no modulo needed)."""
        top = [0] * self.words
        for stride, size, word in zip(self.strides, self.layout.sizes, self.word_of, strict=True):
            top[word] = max(top[word], stride * size)
        return tuple(
            stride * size == top[word]
            for stride, size, word in zip(
                self.strides, self.layout.sizes, self.word_of, strict=True
            )
        )

    def decoder(self, index: int, word: str) -> str:
        """Python text that decodes column `index` from the word named `word`."""
        stride, size = self.strides[index], self.layout.sizes[index]
        if self.bit_fields:
            mask = (1 << (size - 1).bit_length()) - 1
            return f"(({word} >> {stride.bit_length() - 1}) & {mask})"
        if self.on_top[index]:
            return f"({word} // {stride})"
        return f"(({word} // {stride}) % {size})"

    def pack(self, state: tuple[int, ...] | list[int]) -> Keys:
        """The key of one state, as a one-element Keys array."""
        words = [0] * self.words
        for value, word, stride in zip(state, self.word_of, self.strides, strict=True):
            words[word] += value * stride
        if not self.wide:
            return np.array(words, dtype=np.int64)
        return np.array([words], dtype=np.int64)

    def word(self, keys: Keys, word: int) -> np.ndarray:
        """One word of every key."""
        return keys if keys.ndim == 1 else keys[:, word]

    def column(self, keys: Keys, index: int) -> np.ndarray:
        """One column's values for every key."""
        stride, size = self.strides[index], self.layout.sizes[index]
        if size == 1:
            return np.zeros(len(keys), dtype=np.int64)
        values = self.word(keys, self.word_of[index])
        if self.bit_fields:
            if stride > 1:
                values = values >> (stride.bit_length() - 1)
            return values & ((1 << (size - 1).bit_length()) - 1)
        if stride > 1:
            values = values // stride
        return values if self.on_top[index] else values % size

    def numbers(self, keys: Keys) -> np.ndarray:
        """The layout's mixed-radix numbers of these keys (`Layout.pack`), for visitors:
        int64 where they fit, Python ints otherwise."""
        columns = [self.column(keys, i) for i in range(len(self.strides))]
        if self.layout.capacity <= INT64_LIMIT:
            total = np.zeros(len(keys), dtype=np.int64)
            for values, stride in zip(columns, self.layout.strides, strict=True):
                total += values * stride
            return total
        return np.array(
            [self.layout.pack(row) for row in zip(*(c.tolist() for c in columns), strict=True)],
            dtype=object,
        )


def concat(parts: list[Keys], codec: KeyCodec) -> Keys:
    """Keys of several batches, in order."""
    if not parts:
        shape = (0,) if not codec.wide else (0, codec.words)
        return np.zeros(shape, dtype=np.int64)
    return np.concatenate(parts)


def first_occurrences(keys: Keys) -> tuple[Keys, np.ndarray]:
    """The distinct keys in ascending order, each with the position of its first occurrence.

    The plain, sorting statement of what `SeenSet.add` finds by hashing (the tests compare
    the two): a new state's parent is its first occurrence in the search's order.
    """
    unique, first = np.unique(keys, axis=0 if keys.ndim > 1 else None, return_index=True)
    return unique, first


class SeenSet:
    """The keys of every state found so far: hash tables of key words, linear probing.

    `add` takes a level's successor keys in the search's order, copies included, and
    returns the positions of the first occurrences of keys not seen before, so the first
    parent wins without sorting the batch. The set is partitioned by hash into tables
    that grow one at a time (by a quarter, once `MAX_LOAD` full), so growing never holds two
    copies of the whole set; two threads insert into disjoint halves of the tables at
    once. The probing loops are compiled (`model.probing`). A small search of one-word
    keys never needs them: its keys stay in one sorted array (`SORTED_UP_TO`).
    """

    def __init__(self, codec: KeyCodec, threads: int = 1) -> None:
        self.codec = codec
        self.threads = max(1, min(threads, 2))
        self.tables: list[np.ndarray] = []
        self.rooms = np.zeros(0, dtype=np.int64)
        self.count = 0
        self.sorted: np.ndarray | None = None if codec.wide else np.zeros(0, dtype=np.int64)
        if self.sorted is None:
            self._make_tables()

    def _make_tables(self) -> None:
        """Empty hash tables (this loads the compiled probing loops)."""
        from model import probing

        self.tables = [self._empty(INITIAL_SLOTS) for _ in range(probing.PARTS)]
        self.rooms = np.array([self._room(INITIAL_SLOTS)] * probing.PARTS, dtype=np.int64)

    def _add_sorted(self, keys: Keys) -> np.ndarray:
        """`add` on the sorted array: first occurrences of the keys it does not hold."""
        assert self.sorted is not None
        unique, first = first_occurrences(keys)
        place = np.searchsorted(self.sorted, unique)
        held = place < len(self.sorted)
        held[held] = self.sorted[place[held]] == unique[held]
        fresh = first[~held]
        self.sorted = np.union1d(self.sorted, unique[~held])
        self.count += len(fresh)
        return fresh

    def _leave_sorted(self) -> None:
        """Move the sorted array's keys into hash tables."""
        assert self.sorted is not None
        held, self.sorted = self.sorted, None
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

    def add(self, keys: Keys, pool: Executor | None = None) -> np.ndarray:
        """Insert a batch; the positions of the first occurrences of keys not seen before."""
        if not len(keys):
            return np.zeros(0, dtype=np.int64)
        if self.sorted is not None:
            if self.count + len(keys) <= SORTED_UP_TO:
                return self._add_sorted(keys)
            self._leave_sorted()
        from model import probing

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
        from model import probing

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
        from model import probing

        old = self.tables[part]
        size = int(len(old) * GROWTH) + 1
        table = self._empty(size)
        (probing.rehash_wide if self.codec.wide else probing.rehash_narrow)(old, table)
        self.rooms[part] = self._room(size) - (self._room(len(old)) - int(self.rooms[part]))
        self.tables[part] = table
