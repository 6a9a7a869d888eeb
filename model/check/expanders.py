"""Level expanders: the one interface the breadth-first search expands a level through.

An expander applies every rule to a chunk of a level's states (packed keys, sorted) and
returns a `Chunk`: each rule's successor keys with the rows they came from, the chunk's
first violation of each property and the properties it exercised. Two implement it: numpy
(`model.check.numpy_expander`, a rule on a whole chunk at once) and compiled loops
(`model.check.compiled_expander`, one loop per rule); the tests check each against the reference
search. `expand_level` splits a level into chunks (on two threads where it pays) and joins
the successors in the search's order, rule by rule then row by row, whatever the chunks
and threads, so neither changes a first parent or a first violation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from model.check.keys import KeyCodec, Keys
from model.check.search import EdgeBatch, Tuning
from model.layout import symbolic_view
from model.properties import Property
from model.rules import Rule
from model.system import System


@dataclass(frozen=True)
class RulePlan:
    """A rule with the properties it can violate and those it can exercise at all.

    Found once per design by evaluating each property on the rule with symbolic state
    variables: where the term helpers fold the condition to False, the design makes it
    impossible, and no expander evaluates it there.
    """

    rule_id: int
    rule: Rule
    violable: tuple[Property, ...]
    triggerable: tuple[Property, ...]


def rule_plans(system: System) -> tuple[RulePlan, ...]:
    """The plan of every rule that can ever be enabled, in rule order."""
    view = symbolic_view(system.layout)
    plans = []
    for rule_id, rule in enumerate(system.rules):
        if rule.guard(view) is False:
            continue
        violable = tuple(p for p in system.properties if p.violated(view, rule) is not False)
        triggerable = tuple(p for p in system.properties if p.triggered(view, rule) is not False)
        plans.append(RulePlan(rule_id, rule, violable, triggerable))
    return tuple(plans)


@dataclass(frozen=True)
class Settled:
    """What earlier levels already found, so an expander need not look for it again."""

    violated: frozenset[str]
    exercised: frozenset[str]


@dataclass
class Chunk:
    """What expanding one chunk of a level found (merged in a fixed order afterwards)."""

    start: int
    successors: dict[int, tuple[Keys, np.ndarray]] = field(default_factory=dict)
    """Per rule id, the successor keys and the level rows they came from."""
    transitions: int = 0
    violations: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per property, the first violating (rule id, level row) in this chunk."""
    exercised: set[str] = field(default_factory=set)
    edges: list[EdgeBatch] = field(default_factory=list)


class LevelExpander(Protocol):
    """Applies every planned rule to rows `begin:end` of a level (the interface)."""

    def expand(self, level: Keys, begin: int, end: int, settled: Settled) -> Chunk:
        """Successors of each rule in row order, first violations, properties exercised."""
        ...


@dataclass(frozen=True)
class Level:
    """A level's successors in the search's order: keys, source rows and rule ids."""

    keys: Keys
    sources: np.ndarray
    rule_ids: np.ndarray


@dataclass(frozen=True)
class NewStates:
    """A level's new states in key order, each with its first parent's row in the level
    and the rule that first reached it."""

    keys: Keys
    sources: np.ndarray
    rule_ids: np.ndarray


def chunk_ranges(size: int, chunk_states: int) -> Iterator[tuple[int, int]]:
    """Row ranges of a level, in order."""
    for begin in range(0, size, chunk_states):
        yield begin, min(size, begin + chunk_states)


def expand_chunks(
    expander: LevelExpander,
    level: Keys,
    settled: Settled,
    tuning: Tuning,
    pool: Executor | None,
    out_of_time: Callable[[], bool],
) -> list[Chunk] | None:
    """Every chunk of the level, in row order (None if time ran out before one began)."""

    def work(bounds: tuple[int, int]) -> Chunk | None:
        if out_of_time():
            return None
        return expander.expand(level, bounds[0], bounds[1], settled)

    ranges = list(chunk_ranges(len(level), tuning.chunk_states))
    if pool is not None and len(level) >= tuning.parallel_from:
        chunks = list(pool.map(work, ranges))
    else:
        chunks = [work(r) for r in ranges]
    done = [chunk for chunk in chunks if chunk is not None]
    return done if len(done) == len(chunks) else None


def join_successors(
    chunks: list[Chunk], plans: tuple[RulePlan, ...], codec: KeyCodec, action_type: np.dtype
) -> Level:
    """The chunks' successors in rule order, then row order.

    Each chunk's successors are copied into the level's arrays and dropped at once, so the
    level is never held twice.
    """
    total = sum(chunk.transitions for chunk in chunks)
    shape = (total,) if not codec.wide else (total, codec.words)
    keys = np.empty(shape, dtype=np.int64)
    sources = np.empty(total, dtype=np.int32)
    rule_ids = np.empty(total, dtype=action_type)
    filled = 0
    for plan in plans:
        for chunk in chunks:
            found = chunk.successors.pop(plan.rule_id, None)
            if found is not None:
                end = filled + len(found[1])
                keys[filled:end], sources[filled:end] = found
                rule_ids[filled:end] = plan.rule_id
                filled = end
    return Level(keys, sources, rule_ids)
