"""The breadth-first search's rules, with the mechanics left to expanders and the seen set.

What the search computes is defined plainly by `model.check.reference`; this module computes
the same with packed keys, one level at a time:

- **Levels.** The states of a level are sorted by key (the order of their packed number),
  expanded by a `LevelExpander` into successors in rule order, then row order
  (`model.check.expanders`), and the successors not seen before form the next level.
- **First parents.** The seen set (`model.check.seen`) returns the first occurrence of each new
  key in that order; its source row is the state's parent and its rule the action that
  reached it. Parent links are kept per level (`ParentLinks`, in a temporary file past
  `Tuning.links_in_memory` states), so a counterexample is the chain of first transitions
  back to the start.
- **First violations.** A property's first violation is the first violating transition in
  the same order: the earliest level, then the smallest (rule, row) (`Findings`). It is a
  shortest counterexample, and the first among the shortest.
- **Vacuity.** A property never violated holds if some transition triggered it (an
  accepted write, a rejected request), and is vacuous if none did; in a search stopped by
  a budget it is unknown (`model.verdicts.exploration_status`).
- **Budgets.** A state budget stops storing states at `max_states` (the new states of the
  last level kept in key order); a time budget is checked before each chunk and after each
  level; a depth limit stops before expanding a level at that depth. A memory budget is a
  state budget (`model.check.search.BYTES_PER_STATE`).
- **Symmetry.** With symmetry, each successor is replaced by its orbit's representative
  (the renaming of workers with the smallest key) before the seen set sees it, and a
  counterexample found on representatives is replayed back into a concrete run.

Visitors (`model.check.search.Visitor`) are told each level, each first violation and, when
they ask, every transition.
"""

from __future__ import annotations

import bisect
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import IO

import numpy as np

from model.check.expanders import (
    Chunk,
    Level,
    LevelExpander,
    NewStates,
    RulePlan,
    Settled,
    chunk_ranges,
    expand_chunks,
    join_successors,
)
from model.check.keys import KeyCodec, Keys, concat
from model.check.memory import release_free_memory
from model.check.native_search import NativeLevels
from model.check.search import Exploration, Progress, SearchOptions, Visitor
from model.check.seen import SeenStates
from model.check.symmetry import Canonicalizer
from model.properties import Property
from model.rules import Action
from model.system import State, System
from model.verdicts import PropertyVerdict, Status, exploration_status


class ParentLinks:
    """Each stored state's first parent and the rule that first reached it, per level.

    The links of the first `in_memory` states stay in memory; past that, every level's
    links go to a temporary file (removed when closed), read back only to trace the
    counterexamples, so a large search holds little more than its seen set and frontier.
    """

    def __init__(self, max_states: int, rule_count: int, in_memory: int) -> None:
        self.parent_type = np.dtype(np.int32 if max_states < 2**31 else np.int64)
        self.action_type = np.min_scalar_type(max(rule_count - 1, 0))
        self.in_memory = in_memory
        self.offsets: list[int] = []
        self.parents: list[np.ndarray] = []
        self.actions: list[np.ndarray] = []
        self.places: list[tuple[int, int]] = []
        """Per level in the file: where its parents and its actions start."""
        self.file: IO[bytes] | None = None

    def add_level(self, offset: int, parents: np.ndarray, actions: np.ndarray) -> None:
        """Links of a level's states, numbered from `offset` (a parent of -1: the start)."""
        self.offsets.append(offset)
        parents = parents.astype(self.parent_type, copy=False)
        actions = actions.astype(self.action_type, copy=False)
        if self.file is None and offset + len(parents) > self.in_memory:
            # Open for the rest of the search: `close` (called by the search) removes it.
            self.file = tempfile.TemporaryFile(prefix="fencing-lab-links-")  # noqa: SIM115
            for kept_parents, kept_actions in zip(self.parents, self.actions, strict=True):
                self._write(kept_parents, kept_actions)
            self.parents, self.actions = [], []
        if self.file is not None:
            self._write(parents, actions)
        else:
            self.parents.append(parents)
            self.actions.append(actions)

    def _write(self, parents: np.ndarray, actions: np.ndarray) -> None:
        """Append a level's links to the file."""
        assert self.file is not None
        start = self.file.tell()
        parents.tofile(self.file)
        self.places.append((start, self.file.tell()))
        actions.tofile(self.file)

    def close(self) -> None:
        """Remove the file (the links cannot be read afterwards)."""
        if self.file is not None:
            self.file.close()
            self.file = None

    def _read(self, index: int, parents: bool) -> int:
        """One state's parent or action, from memory or from the file."""
        level = bisect.bisect_right(self.offsets, index) - 1
        row = index - self.offsets[level]
        if self.file is None:
            return int((self.parents if parents else self.actions)[level][row])
        kind = self.parent_type if parents else np.dtype(self.action_type)
        start = self.places[level][0 if parents else 1] + row * kind.itemsize
        data = os.pread(self.file.fileno(), kind.itemsize, start)
        return int(np.frombuffer(data, dtype=kind)[0])

    def parent(self, index: int) -> int:
        """The parent link of a state (-1 for the start)."""
        return self._read(index, parents=True)

    def action(self, index: int) -> int:
        """The rule id that first reached a state."""
        return self._read(index, parents=False)

    def chain_to(self, index: int) -> list[int]:
        """State indices from the start to `index`."""
        chain = [index]
        while self.parent(chain[-1]) >= 0:
            chain.append(self.parent(chain[-1]))
        return chain[::-1]


class Findings:
    """The first violation of each property and the properties some transition exercised."""

    def __init__(self) -> None:
        self.first_violation: dict[str, tuple[int, int, int]] = {}
        """Per property: (source state index, rule id, counterexample length)."""
        self.exercised: set[str] = set()

    def settled(self) -> Settled:
        """What expanders need not look for again."""
        return Settled(frozenset(self.first_violation), frozenset(self.exercised))

    def note(self, chunk: Chunk, offset: int, depth: int) -> None:
        """Take a chunk's findings: a violation replaces a known one only if it ends on the
        same level and comes first in (rule, row) order."""
        self.exercised |= chunk.exercised
        for name, (rule_id, row) in chunk.violations.items():
            current = self.first_violation.get(name)
            if current is None or (
                current[2] == depth + 1 and (rule_id, offset + row) < (current[1], current[0])
            ):
                self.first_violation[name] = (offset + row, rule_id, depth + 1)


class BreadthFirstSearch:
    """One breadth-first search of a system (make one per run)."""

    def __init__(
        self,
        system: System,
        options: SearchOptions,
        visitors: Sequence[Visitor],
        plans: tuple[RulePlan, ...],
        expander_for: Callable[[int], LevelExpander],
        seen: SeenStates,
        pool: Executor | None = None,
        native_for: Callable[[int], NativeLevels | None] | None = None,
    ) -> None:
        self.system = system
        self.options = options
        self.tuning = options.tuning
        self.visitors = tuple(visitors)
        self.plans = plans
        self.expander_for = expander_for
        self.seen: SeenStates | None = seen
        self.pool = pool
        self.native_for = native_for
        self.codec = KeyCodec.of(system.layout)
        self.canonicalizer = Canonicalizer(system.layout) if options.symmetry else None
        self.start = options.start if options.start is not None else system.initial()
        self.links = ParentLinks(
            options.max_states, len(system.rules), options.tuning.links_in_memory
        )
        self.findings = Findings()
        self.states = 0
        self.transitions = 0
        self.stopped_by: str | None = None
        self.started = 0.0
        self.frontier: Keys = np.zeros(0, dtype=np.int64)
        """The level being expanded: its keys, sorted (the native engine's words once it
        runs the search)."""

    def run(self) -> Exploration:
        """Explore every reachable state (or up to a budget) and collect the verdicts."""
        self.started = time.perf_counter()
        try:
            level_sizes = self._levels()
            self.seen = None
            verdicts = self._verdicts()
        finally:
            self.links.close()
        return Exploration(
            design=self.system.design,
            bounds=self.system.bounds,
            complete=self.stopped_by is None,
            states=self.states,
            transitions=self.transitions,
            depth=len(level_sizes) - 1,
            symmetry=self.options.symmetry,
            seconds=self._seconds(),
            verdicts=verdicts,
            level_sizes=tuple(level_sizes),
            stopped_by=self.stopped_by,
        )

    def _levels(self) -> list[int]:
        """Explore level by level until no new state or a budget; the levels' sizes."""
        first = self.codec.pack(self.start)
        start = self._deduplicate(Level(first, np.full(1, -1), np.zeros(1, np.int64)))
        self.frontier = self._store(start, 0)
        level_sizes = [1]
        while len(self.frontier):
            depth = len(level_sizes) - 1
            if self.options.max_depth is not None and depth >= self.options.max_depth:
                self.stopped_by = f"depth limit of {self.options.max_depth} reached"
                break
            offset = self.states - len(self.frontier)
            native = self.native_for(len(self.frontier)) if self.native_for is not None else None
            if native is not None and self.seen is not None:
                # The engine takes over: it holds every key seen so far, in its own words.
                self.frontier = native.take_over(self.seen.held_keys(), self.frontier)
                self.seen = None
            found = self._next_level(native, offset, depth)
            if found is None:
                break
            self.frontier = self._store(found, offset)
            del found
            if len(self.frontier):
                level_sizes.append(len(self.frontier))
            progress = Progress(
                len(level_sizes) - 1,
                self.states,
                self.transitions,
                len(self.frontier),
                self._seconds(),
            )
            for visitor in self.visitors:
                visitor.on_level(progress)
            if self.stopped_by:
                break
        return level_sizes

    def _seconds(self) -> float:
        """Seconds since the search started."""
        return time.perf_counter() - self.started

    def _out_of_time(self) -> bool:
        """Whether the time budget is spent."""
        return self._seconds() > self.options.max_seconds

    # ----- expanding a level ------------------------------------------------------------

    def _next_level(self, native: NativeLevels | None, offset: int, depth: int) -> NewStates | None:
        """The new states the frontier reaches (None if the time budget ran out): by the
        native engine when it runs the search, else by an expander and the seen set."""
        if native is None:
            level = self._expand(self.frontier, offset, depth)
            if level is None:
                return None
            found = self._deduplicate(level)
            large = len(level.keys) >= self.tuning.trim_from
            del level
            if large:
                release_free_memory()
            return found
        pool = self.pool if len(self.frontier) >= self.tuning.parallel_from else None
        chunk = native.expand(self.frontier, self.findings.settled(), self._out_of_time, pool)
        if chunk is None or self._out_of_time():
            self.stopped_by = f"time budget of {self.options.max_seconds:g} s reached"
            return None
        self.frontier = self.frontier[:0]  # expanded: its memory goes before the sort's
        self._take_findings([chunk], offset, depth)
        found = native.take()
        if chunk.transitions >= self.tuning.trim_from:
            release_free_memory()
        return found

    def _expand(self, frontier: Keys, offset: int, depth: int) -> Level | None:
        """The level's successors in the search's order (None if the time budget ran out)."""
        expander = self.expander_for(len(frontier))
        chunks = expand_chunks(
            expander, frontier, self.findings.settled(), self.tuning, self.pool, self._out_of_time
        )
        if chunks is None or self._out_of_time():
            self.stopped_by = f"time budget of {self.options.max_seconds:g} s reached"
            return None
        self._take_findings(chunks, offset, depth)
        level = join_successors(chunks, self.plans, self.codec, self.links.action_type)
        del chunks
        if len(level.sources) >= self.tuning.trim_from:
            release_free_memory()  # the chunks' buffers, before the seen set needs memory
        return level

    def _take_findings(self, chunks: list[Chunk], offset: int, depth: int) -> None:
        """Count the chunks' transitions, note their findings, tell the visitors."""
        before = set(self.findings.first_violation)
        for chunk in chunks:
            self.transitions += chunk.transitions
            self.findings.note(chunk, offset, depth)
            for batch in chunk.edges:
                for visitor in self.visitors:
                    visitor.on_edges(batch)
        for prop in self.system.properties:
            if prop.name in self.findings.first_violation and prop.name not in before:
                for visitor in self.visitors:
                    visitor.on_violation(prop.name, depth + 1)

    # ----- admitting new states ---------------------------------------------------------

    def _canonical(self, keys: Keys) -> Keys:
        """Canonical keys (smallest among worker renamings), computed in chunks."""
        assert self.canonicalizer is not None
        parts = []
        for begin, end in chunk_ranges(len(keys), self.tuning.chunk_states):
            part = keys[begin:end]
            columns = [self.codec.column(part, i) for i in range(len(self.system.layout.columns))]
            parts.append(self.canonicalizer.keys(np.stack(columns, axis=1)))
        return concat(parts, self.codec)

    def _deduplicate(self, level: Level) -> NewStates:
        """The successors not seen before (first parent wins), sorted by key."""
        assert self.seen is not None
        keys = level.keys
        if self.canonicalizer is not None and len(keys):
            keys = self._canonical(keys)
        pool = self.pool if len(keys) >= self.tuning.parallel_from else None
        first = self.seen.add(keys, pool)
        unique = keys[first]
        order = (
            np.argsort(unique)
            if not self.codec.wide
            else np.lexsort(tuple(unique[:, w] for w in range(self.codec.words - 1, -1, -1)))
        )
        first = first[order]
        return NewStates(unique[order], level.sources[first], level.rule_ids[first])

    def _store(self, found: NewStates, offset: int) -> Keys:
        """Number the new states and link them to their parents; return the new frontier,
        cut at the state budget."""
        unique, parents, rule_ids = found.keys, found.sources, found.rule_ids
        room = self.options.max_states - self.states
        if len(unique) > room:
            unique, parents, rule_ids = unique[:room], parents[:room], rule_ids[:room]
            self.stopped_by = f"state budget of {self.options.max_states:,} states reached"
        numbers = np.where(parents >= 0, parents.astype(self.links.parent_type) + offset, -1)
        self.links.add_level(self.states, numbers, rule_ids)
        self.states += len(unique)
        return unique

    # ----- verdicts and counterexamples -------------------------------------------------

    def _verdicts(self) -> dict[str, PropertyVerdict]:
        """One verdict per property, with the counterexample's actions when violated."""
        complete = self.stopped_by is None
        verdicts = {}
        for prop in self.system.properties:
            found = self.findings.first_violation.get(prop.name)
            if found is None:
                exercised = prop.name in self.findings.exercised
                status = exploration_status(False, complete, exercised)
                verdicts[prop.name] = PropertyVerdict(prop.name, status)
                continue
            source, rule_id, length = found
            chain = self.links.chain_to(source)
            path = [*(self.links.action(i) for i in chain[1:]), rule_id]
            steps = self._realise(path, prop)
            assert len(steps) == length
            verdicts[prop.name] = PropertyVerdict(prop.name, Status.VIOLATED, length, tuple(steps))
        return verdicts

    def _realise(self, rule_ids: list[int], prop: Property) -> list[Action]:
        """Turn a path of rule ids into real actions (under symmetry, undo the renamings).

        Under symmetry each rule id was taken from an orbit's representative; replaying the
        representatives gives the orbit of each step, and from the concrete start one
        enabled step leads into each of them in turn.
        """
        rules = self.system.rules
        if self.canonicalizer is None:
            return [rules[i].action for i in rule_ids]
        representative = self._representative(self.start)
        state = self.start
        steps: list[Action] = []
        for rule_id in rule_ids[:-1]:
            target = self._representative(self.system.apply(representative, rules[rule_id]))
            state, action = self._step_into_orbit(state, target)
            steps.append(action)
            representative = target
        for successor in self.system.successors(state):
            if prop.name in successor.violations:
                steps.append(successor.rule.action)
                return steps
        raise AssertionError("symmetric counterexample could not be realised")

    def _representative(self, state: State) -> State:
        """The orbit representative of a state (the renaming with the smallest key)."""
        assert self.canonicalizer is not None
        key = self.canonicalizer.keys(np.array([state], dtype=np.int64))
        return tuple(int(self.codec.column(key, i)[0]) for i in range(len(state)))

    def _step_into_orbit(self, state: State, target: State) -> tuple[State, Action]:
        """An enabled step from a concrete state into the orbit of `target`."""
        for successor in self.system.successors(state):
            if self._representative(successor.state) == target:
                return successor.state, successor.rule.action
        raise AssertionError("no step reaches the recorded orbit")
