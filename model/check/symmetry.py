"""Symmetry reduction over worker ids: exact orbits, never a heuristic.

Workers are interchangeable when nothing in the design tells them apart; with per-worker
clock skews only workers of equal skew may be swapped. A permutation renames the holder
and moves every per-worker column; the canonical form of a state is its smallest key
among all renamings, so two states share a canonical form exactly when they are in the
same orbit.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations

import numpy as np

from model.layout import PER_WORKER, Layout, slot

Renaming = tuple[int, ...]
"""new id of each worker: renaming[w - 1] is the id worker w gets."""


def renamings(layout: Layout) -> list[Renaming]:
    """Worker renamings that preserve the design (only equal skews may be swapped)."""
    skews = layout.design.skews(layout.bounds.workers)
    ids = tuple(layout.workers)
    return [
        perm
        for perm in permutations(ids)
        if all(skews[w - 1] == skews[perm[w - 1] - 1] for w in ids)
    ]


def column_destinations(layout: Layout, renaming: Renaming) -> list[int]:
    """For each column, the column its value moves to under the renaming."""
    destination = list(range(len(layout.columns)))
    for family in PER_WORKER:
        for w in layout.workers:
            destination[layout.index[slot(family, w)]] = layout.index[slot(family, renaming[w - 1])]
    return destination


def rename_state(layout: Layout, state: Sequence[int], renaming: Renaming) -> tuple[int, ...]:
    """The state as it looks after renaming the workers."""
    renamed = [0] * len(state)
    for column, target in enumerate(column_destinations(layout, renaming)):
        renamed[target] = state[column]
    holder = layout.index["holder"]
    renamed[holder] = renaming[state[holder] - 1] if state[holder] else 0
    return tuple(renamed)


def canonical_state(layout: Layout, state: Sequence[int], group: list[Renaming]) -> tuple[int, ...]:
    """The orbit representative: the renaming of the state with the smallest key."""
    return min((rename_state(layout, state, r) for r in group), key=layout.pack)


class Canonicalizer:
    """Vectorised canonical keys for many states at once (used by the explorer).

    Keys may be one int64 word or several (`model.check.keys`); the smallest key among the
    renamings is then the smallest row of words, compared most significant word first.
    """

    def __init__(self, layout: Layout) -> None:
        from model.check.keys import KeyCodec

        self.layout = layout
        self.codec = KeyCodec.of(layout)
        self.group = renamings(layout)
        holder = layout.index["holder"]
        self.holder_column = holder
        self.holder_word = self.codec.word_of[holder]
        self.holder_stride = self.codec.strides[holder]
        self.weights: list[np.ndarray] = []
        self.holder_maps = []
        for renaming in self.group:
            weights = np.zeros((len(layout.columns), self.codec.words), dtype=np.int64)
            for column, target in enumerate(column_destinations(layout, renaming)):
                weights[column, self.codec.word_of[target]] = self.codec.strides[target]
            weights[holder, :] = 0
            self.weights.append(weights)
            self.holder_maps.append(np.array((0, *renaming), dtype=np.int64))

    def keys(self, rows: np.ndarray) -> np.ndarray:
        """Canonical key of each row of a (states x columns) array."""
        holders = rows[:, self.holder_column]
        best: np.ndarray | None = None
        for weights, holder_map in zip(self.weights, self.holder_maps, strict=True):
            keys = rows @ weights
            keys[:, self.holder_word] += self.holder_stride * holder_map[holders]
            best = keys if best is None else _smaller_rows(best, keys)
        assert best is not None
        return best[:, 0] if self.codec.words == 1 else best


def _smaller_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise the smaller of two arrays of key words, most significant word first."""
    if a.shape[1] == 1:
        return np.minimum(a, b)
    b_smaller = np.zeros(len(a), dtype=bool)
    decided = np.zeros(len(a), dtype=bool)
    for word in range(a.shape[1]):
        differ = ~decided & (a[:, word] != b[:, word])
        b_smaller |= differ & (b[:, word] < a[:, word])
        decided |= differ
    return np.where(b_smaller[:, None], b, a)
