"""State keys for the explorer: one int64 word when the state space allows, several when not.

A state's key packs its columns into bit fields, the first column most significant. When
they fit in 63 bits the key is one int64 (the fast, common case); when only the
mixed-radix number (`Layout.pack`) fits, the key is that number; when neither fits, the
columns are split into groups that each fit, and the key is a row of int64 words, the
most significant group first, so that comparing rows word by word orders states exactly
as comparing their mixed-radix numbers does. Nothing is hashed away: two states share a
key only if they are equal.

`Keys` are a 1-D int64 array (one word) or a 2-D array with one row per state; the set of
keys found so far is `model.check.seen`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Final

import numpy as np

from model.layout import INT64_LIMIT, Layout

Keys = np.ndarray
"""Packed states: shape (n,) for one-word keys, (n, words) for wider ones."""

WORD_BITS: Final = INT64_LIMIT.bit_length()
"""Bits of one key word (63: keys stay non-negative)."""


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


UNSIGNED_BITS: Final = 64
"""Bits of one of the native engine's unsigned words."""
WORD_LIMIT: Final = 2**64 - 2
"""The largest key of one unsigned word (2^64 - 1 stays free: the native engine's hash of a
key is never 0 then)."""
PAIR_LIMIT: Final = 2**76 - 2
"""The largest key of two words: the native engine stores 64 bits of a two-word key's
hash and tells the others (at most 12) by which of its tables holds it."""


@dataclass(frozen=True)
class WordCodec:
    """States as one or two unsigned 64-bit words: the native engine's keys.

    One word of bit fields where they fit in 64 bits, else one word holding the layout's
    mixed-radix number where it fits, else two words: the mixed-radix number of the first
    columns and that of the others, for state spaces of up to 2^76 states. The first
    column is always the most significant, so the words order states exactly as `KeyCodec`
    keys do (the same rows, the same first parents); `span` is the low word's share of a
    two-word key's number (high word x span + low word).
    """

    layout: Layout
    word_of: tuple[int, ...]
    strides: tuple[int, ...]
    words: int
    bit_fields: bool
    span: int

    @staticmethod
    def of(layout: Layout) -> WordCodec | None:
        """The layout's codec, or None when its states need more than two words."""
        count = len(layout.sizes)
        widths = [(size - 1).bit_length() for size in layout.sizes]
        if sum(widths) <= UNSIGNED_BITS:
            strides, used = [0] * count, 0
            for i in range(count - 1, -1, -1):
                strides[i] = 1 << used
                used += widths[i]
            return WordCodec(layout, (0,) * count, tuple(strides), 1, True, 1)
        if layout.capacity - 1 <= WORD_LIMIT:
            return WordCodec(layout, (0,) * count, layout.strides, 1, False, 1)
        if layout.capacity - 1 > PAIR_LIMIT:
            return None
        word_of, strides, span, first_low = [0] * count, [0] * count, 1, count
        for i in range(count - 1, -1, -1):
            if span * layout.sizes[i] - 1 > WORD_LIMIT:
                break
            word_of[i], strides[i], span, first_low = 1, span, span * layout.sizes[i], i
        place = 1
        for i in range(first_low - 1, -1, -1):
            strides[i], place = place, place * layout.sizes[i]
        return WordCodec(layout, tuple(word_of), tuple(strides), 2, False, span)

    def top(self, index: int) -> bool:
        """Whether the column is the most significant of its word (no remainder needed)."""
        return index == self.word_of.index(self.word_of[index])

    def decoder(self, index: int, word: str) -> str:
        """C text that decodes column `index` from the unsigned word named `word`."""
        stride, size = self.strides[index], self.layout.sizes[index]
        if self.bit_fields:
            mask = (1 << (size - 1).bit_length()) - 1
            return f"(int64_t)(({word} >> {stride.bit_length() - 1}) & {mask}u)"
        if self.top(index):
            return f"(int64_t)({word} / {stride}u)"
        return f"(int64_t)(({word} / {stride}u) % {size}u)"

    def encode(self, codec: KeyCodec, keys: Keys) -> np.ndarray:
        """The words of states given by their `codec` keys (unsigned, in the same order):
        one per state, or a row of two."""
        total = np.zeros((len(keys), self.words), dtype=np.uint64)
        for i, (word, stride) in enumerate(zip(self.word_of, self.strides, strict=True)):
            if self.layout.sizes[i] > 1:
                total[:, word] += codec.column(keys, i).astype(np.uint64) * np.uint64(stride)
        return total[:, 0] if self.words == 1 else total


def concat(parts: list[Keys], codec: KeyCodec) -> Keys:
    """Keys of several batches, in order."""
    if not parts:
        shape = (0,) if not codec.wide else (0, codec.words)
        return np.zeros(shape, dtype=np.int64)
    return np.concatenate(parts)
