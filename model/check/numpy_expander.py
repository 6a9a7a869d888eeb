"""The numpy level expander: each rule applied to a whole chunk of states at once.

Each state column is a numpy array, so a guard is one vectorised comparison and an effect
one vectorised update. A chunk's columns are decoded from the keys only when a rule reads
them; a successor's key is its parent's plus the weighted change of the columns the rule
writes; a property is only evaluated on the rules that can violate it (`RulePlan`). It is
the one expander that can report every transition to an edge visitor.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from model.check.expanders import Chunk, RulePlan, Settled
from model.check.keys import KeyCodec, Keys
from model.check.search import EdgeBatch
from model.layout import Vars
from model.properties import Property


class _Columns(Sequence[np.ndarray]):
    """Columns of a chunk's states, decoded from their keys on first use and cached."""

    def __init__(self, codec: KeyCodec, keys: Keys) -> None:
        self._codec = codec
        self._keys = keys
        self.cache: dict[int, np.ndarray] = {}

    def __getitem__(self, i: int) -> np.ndarray:  # type: ignore[override]
        if i not in self.cache:
            self.cache[i] = self._codec.column(self._keys, i)
        return self.cache[i]

    def __len__(self) -> int:
        return len(self._codec.strides)


class _Rows(Sequence[np.ndarray]):
    """Columns of the chunk's states selected by `rows`: taken from the chunk's decoded
    columns when present, else decoded from the selected keys alone."""

    def __init__(self, whole: _Columns, codec: KeyCodec, keys: Keys, rows: np.ndarray) -> None:
        self._whole = whole
        self._codec = codec
        self.keys = keys[rows]
        self._rows = rows
        self._cache: dict[int, np.ndarray] = {}

    def __getitem__(self, i: int) -> np.ndarray:  # type: ignore[override]
        if i not in self._cache:
            if i in self._whole.cache:
                self._cache[i] = self._whole.cache[i][self._rows]
            else:
                self._cache[i] = self._codec.column(self.keys, i)
        return self._cache[i]

    def __len__(self) -> int:
        return len(self._whole)


def as_mask(condition: object, count: int) -> np.ndarray:
    """A guard's value as a boolean array over the states (constants broadcast)."""
    return np.broadcast_to(np.asarray(condition, dtype=bool), (count,))


def successor_keys(codec: KeyCodec, parents: Keys, view: Vars, changes: dict[str, object]) -> Keys:
    """Parent keys plus each changed column's stride x (new - old), in its word."""
    index = codec.layout.index
    if not codec.wide:
        total: np.ndarray | int = 0
        for column, value in changes.items():
            i = index[column]
            if codec.layout.sizes[i] > 1:
                change = codec.strides[i] * (np.asarray(value, dtype=np.int64) - view[column])
                total = total + change
        return parents + total
    keys = parents.copy()
    for column, value in changes.items():
        i = index[column]
        if codec.layout.sizes[i] > 1:
            change = codec.strides[i] * (np.asarray(value, dtype=np.int64) - view[column])
            keys[:, codec.word_of[i]] += change
    return keys


class NumpyExpander:
    """Expands chunks of a level by numpy, rule by rule (`LevelExpander`)."""

    def __init__(
        self,
        codec: KeyCodec,
        plans: tuple[RulePlan, ...],
        properties: Sequence[Property],
        edges: bool = False,
    ) -> None:
        self.codec = codec
        self.layout = codec.layout
        self.plans = plans
        self.properties = tuple(properties)
        self.edges = edges

    def expand(self, level: Keys, begin: int, end: int, settled: Settled) -> Chunk:
        """Apply every rule to rows `begin:end` of the level."""
        keys = level[begin:end]
        columns = _Columns(self.codec, keys)
        whole = Vars(self.layout, columns)
        chunk = Chunk(begin)
        for plan in self.plans:
            rows = np.flatnonzero(as_mask(plan.rule.guard(whole), len(keys)))
            if not rows.size:
                continue
            selected = _Rows(columns, self.codec, keys, rows)
            view = Vars(self.layout, selected)
            targets = successor_keys(self.codec, selected.keys, view, plan.rule.effect(view))
            chunk.successors[plan.rule_id] = (targets, (rows + begin).astype(np.int32))
            chunk.transitions += int(rows.size)
            self._note_properties(chunk, plan, view, rows + begin, settled)
            if self.edges:
                chunk.edges.append(self._edge_batch(plan, view, selected.keys, targets))
        return chunk

    def _note_properties(
        self, chunk: Chunk, plan: RulePlan, view: Vars, rows: np.ndarray, settled: Settled
    ) -> None:
        """Record the chunk's first violation of each property, and which were exercised."""
        for prop in plan.triggerable:
            if prop.name in settled.exercised or prop.name in chunk.exercised:
                continue
            if as_mask(prop.triggered(view, plan.rule), rows.size).any():
                chunk.exercised.add(prop.name)
        for prop in plan.violable:
            if prop.name in settled.violated or prop.name in chunk.violations:
                continue
            hits = np.flatnonzero(as_mask(prop.violated(view, plan.rule), rows.size))
            if hits.size:
                chunk.violations[prop.name] = (plan.rule_id, int(rows[hits[0]]))

    def _edge_batch(self, plan: RulePlan, view: Vars, sources: Keys, targets: Keys) -> EdgeBatch:
        """One rule's transitions out of a chunk, for edge visitors."""
        count = len(sources)
        violations = {
            prop.name: (
                as_mask(prop.violated(view, plan.rule), count).copy()
                if prop in plan.violable
                else np.zeros(count, dtype=bool)
            )
            for prop in self.properties
        }
        return EdgeBatch(
            plan.rule, self.codec.numbers(sources), self.codec.numbers(targets), violations
        )
