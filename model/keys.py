"""State keys for the explorer: one int64 word when the state space allows, several when not.

A state's key is its mixed-radix number (`Layout.pack`). When that number fits in 63
bits the key is one int64 (the fast, common case); when it does not, the columns are
split into groups whose numbers each fit, and the key is a row of int64 words, the most
significant group first, so that comparing rows word by word orders them exactly as the
whole numbers. Nothing is hashed away: two states share a key only if they are equal.

`Keys` are a 1-D int64 array (one word) or a 2-D array with one row per state.
`SeenSet` is the set of keys found so far, an open-addressing hash table on the words
themselves, so that each level is checked against it without re-sorting what was seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Final

import numpy as np

from model.layout import INT64_LIMIT, Layout

Keys = np.ndarray
"""Packed states: shape (n,) for one-word keys, (n, words) for wider ones."""

EMPTY: Final = -1
"""A free slot of the hash table (keys are never negative)."""
MAX_LOAD: Final = 0.7
"""The table grows by half once it is this full."""
GROWTH: Final = 1.5
PIECE: Final = 1 << 15
ROUNDS_PER_PIECE: Final = 3
"""Keys probed together: small enough for their arrays to stay in the processor's cache."""
SPILL: Final = 1 << 12
"""Slots past the end of the table where probing continues instead of wrapping around."""
_MULTIPLIERS: Final = (
    np.uint64(0x9E3779B97F4A7C15),
    np.uint64(0xC2B2AE3D27D4EB4F),
    np.uint64(0x165667B19E3779F9),
    np.uint64(0xD6E8FEB86659FD93),
)


@dataclass(frozen=True)
class KeyCodec:
    """Which word each column lives in, and its place value there."""

    layout: Layout
    word_of: tuple[int, ...]
    strides: tuple[int, ...]
    words: int

    @staticmethod
    def of(layout: Layout) -> KeyCodec:
        """Group the columns, least significant first, into words that each fit in 63 bits."""
        word_of = [0] * len(layout.sizes)
        strides = [0] * len(layout.sizes)
        word, place = 0, 1
        for i in range(len(layout.sizes) - 1, -1, -1):
            if place * layout.sizes[i] > INT64_LIMIT:
                word, place = word + 1, 1
            word_of[i], strides[i] = word, place
            place *= layout.sizes[i]
        words = word + 1
        # Word numbers were counted from the least significant end: flip them.
        flipped = tuple(words - 1 - w for w in word_of)
        return KeyCodec(layout, flipped, tuple(strides), words)

    @property
    def wide(self) -> bool:
        """Whether keys need more than one word."""
        return self.words > 1

    @cached_property
    def bits(self) -> int:
        """Bits of the most significant word's largest value (one-word keys: the whole key)."""
        top = 1
        for size, word in zip(self.layout.sizes, self.word_of, strict=True):
            if word == 0:
                top *= size
        return (top - 1).bit_length()

    def pack(self, state: tuple[int, ...] | list[int]) -> Keys:
        """The key of one state, as a one-element Keys array."""
        words = [0] * self.words
        for value, word, stride in zip(state, self.word_of, self.strides, strict=True):
            words[word] += value * stride
        if not self.wide:
            return np.array(words, dtype=np.int64)
        return np.array([words], dtype=np.int64)

    def pack_columns(self, columns: list[np.ndarray]) -> Keys:
        """Keys of states given as one array per column."""
        count = len(columns[0]) if columns else 0
        words = np.zeros((count, self.words), dtype=np.int64)
        for values, word, stride in zip(columns, self.word_of, self.strides, strict=True):
            words[:, word] += np.asarray(values, dtype=np.int64) * stride
        return words[:, 0] if not self.wide else words

    def word(self, keys: Keys, word: int) -> np.ndarray:
        """One word of every key."""
        return keys if keys.ndim == 1 else keys[:, word]

    def column(self, keys: Keys, index: int) -> np.ndarray:
        """One column's values for every key."""
        stride, size = self.strides[index], self.layout.sizes[index]
        if size == 1:
            return np.zeros(len(keys), dtype=np.int64)
        values = self.word(keys, self.word_of[index])
        if stride > 1:
            values = values // stride
        return values % size if self.below_top[index] else values

    @cached_property
    def below_top(self) -> tuple[bool, ...]:
        """Whether a column has others above it in its word (else no modulo is needed)."""
        return tuple(
            stride * size < self._word_capacity(word)
            for stride, size, word in zip(
                self.strides, self.layout.sizes, self.word_of, strict=True
            )
        )

    def whole(self, keys: Keys) -> list[int]:
        """The keys as Python integers (the layout's mixed-radix numbers)."""
        if not self.wide:
            return [int(k) for k in keys.tolist()]
        places = [0] * self.words
        place = 1
        for word in range(self.words - 1, -1, -1):
            places[word] = place
            place *= self._word_capacity(word)
        return [sum(int(w) * p for w, p in zip(row, places, strict=True)) for row in keys.tolist()]

    def _word_capacity(self, word: int) -> int:
        """How many values one word's columns span together."""
        total = 1
        for size, owner in zip(self.layout.sizes, self.word_of, strict=True):
            if owner == word:
                total *= size
        return total


def take(keys: Keys, rows: np.ndarray | slice) -> Keys:
    """The keys at these positions."""
    return keys[rows]


def concat(parts: list[Keys], codec: KeyCodec) -> Keys:
    """Keys of several batches, in order."""
    if not parts:
        shape = (0,) if not codec.wide else (0, codec.words)
        return np.zeros(shape, dtype=np.int64)
    return np.concatenate(parts)


def first_occurrences(keys: Keys, codec: KeyCodec) -> tuple[Keys, np.ndarray]:
    """The distinct keys in ascending order, each with the position of its first occurrence.

    (The explorer finds first occurrences with `SeenSet.add`; this sorting form is the
    plain statement of the same thing, kept for checking it.)

    The first occurrence decides a new state's parent ("first parent wins"), so it must be
    the smallest position, whatever the sort does with ties.
    """
    count = len(keys)
    if count == 0:
        return keys, np.zeros(0, dtype=np.int64)
    if codec.wide:
        order = np.lexsort(tuple(keys[:, w] for w in range(codec.words - 1, -1, -1)))
        ordered = keys[order]
        starts = np.ones(count, dtype=bool)
        starts[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
        return ordered[starts], order[starts]
    position_bits = (count - 1).bit_length()
    if codec.bits + position_bits <= 63:
        packed = np.sort((keys << position_bits) | np.arange(count, dtype=np.int64))
        ordered = packed >> position_bits
        starts = np.ones(count, dtype=bool)
        np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
        return ordered[starts], packed[starts] & ((1 << position_bits) - 1)
    order = np.argsort(keys)
    ordered = keys[order]
    starts = np.ones(count, dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    first = np.minimum.reduceat(order, np.flatnonzero(starts))
    return ordered[starts], first


class SeenSet:
    """The keys of every state found so far: a linear-probing hash table on the key words.

    `add` takes a level's successor keys in the search's order, copies included, and
    returns the position of the first occurrence of every key not seen before, so the
    first parent wins without sorting the batch. The probing loop is compiled (numba);
    the table grows by half whenever it is `MAX_LOAD` full, so it holds between 11 and 17
    bytes per one-word key.
    """

    def __init__(self, codec: KeyCodec, expected: int = 1 << 12) -> None:
        self.codec = codec
        self.count = 0
        self.table = self._empty(max(1024, int(expected / MAX_LOAD) + 1))

    def _empty(self, size: int) -> np.ndarray:
        """A table of free slots."""
        shape = (size,) if not self.codec.wide else (size, self.codec.words)
        return np.full(shape, EMPTY, dtype=np.int64)

    @property
    def size(self) -> int:
        """Number of slots."""
        return len(self.table)

    @property
    def nbytes(self) -> int:
        """Memory held by the table."""
        return int(self.table.nbytes)

    def add(self, keys: Keys) -> np.ndarray:
        """Insert a batch; the positions of the first occurrences of keys not seen before."""
        from model import probing

        fresh = np.empty(len(keys), dtype=np.int64)
        found = 0
        done = 0
        while done < len(keys):
            room = int(MAX_LOAD * self.size) - self.count
            if room <= 0:
                self._rehash(int(self.size * GROWTH) + 1)
                continue
            insert = probing.insert_wide if self.codec.wide else probing.insert_narrow
            done, added = insert(self.table, keys, done, room, fresh[found:])
            found += added
            self.count += added
        return fresh[:found]

    def _rehash(self, size: int) -> None:
        """Move every key into a new table of `size` slots."""
        from model import probing

        old = self.table
        self.table = self._empty(size)
        if self.codec.wide:
            probing.rehash_wide(old, self.table)
        else:
            probing.rehash_narrow(old, self.table)
