"""Random search: random runs on the compiled rules, for bounds beyond exhaustive reach.

Breadth-first search settles every property but needs every reachable state; past a few
tens of millions of states it stops at its budget and leaves properties unknown. A random
run needs memory for one run only, so it reaches deep interleavings at any bounds. What a
random search can say is one-sided: a property it breaks is violated, with a run that
replays through the step interpreter; any other property is unknown, with the runs and
steps tried. It never says a property holds.

Each property gets its own `runs` random runs (`model.check.random_walk`: who moves is drawn with
the odds of `WEIGHTS`, then one of its enabled steps), each ended at the property's first
violation. The shortest violating run found is then shrunk (`shrink`): steps and blocks of
steps that the violation does not need are dropped, steps are moved where that lets others
go, and from each point of the run more random runs look for a shorter way to the same
violation. Every part of it is bounded by counts (runs, steps, candidates), never by the
clock, so a seed gives the same answer on any machine under any load. The time budget is
only a safety stop: a property whose search or shrinking it cut short is reported unknown,
never with a different run.
"""

from __future__ import annotations

import hashlib
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from model.check.compiled_walk import CompiledWalker
from model.check.random_walk import GROUPS as GROUPS
from model.check.random_walk import (
    STATES_COUNTED,
    InterpretedWalker,
    Walker,
    weights_in_order,
)
from model.check.random_walk import WEIGHTS as WEIGHTS
from model.check.random_walk import group_of as group_of
from model.design import Bounds, Design
from model.rules import Action
from model.system import State, System
from model.verdicts import PropertyVerdict, Status

STRATEGY: Final = "random"
"""The strategy's name on the command line and in reports."""
DEFAULT_RUNS: Final = 100_000
"""Random runs per property unless told otherwise."""
BATCH_STEPS: Final = 1_000_000
"""Steps (at most) the walk takes between two looks at the time budget."""
SHRINK_RUNS: Final = 2_000
"""Random runs that look for a shorter way on from each point of a run being shrunk."""
PAIR_LIMIT: Final = 60
"""Runs longer than this are not shrunk by dropping pairs of steps (their count grows as
the square of the length)."""


def walker_for(system: System, limit: int = STATES_COUNTED) -> Walker:
    """The compiled walker of the system; if the compiler refuses it, the interpreted one
    (the same runs, slower), with a warning."""
    weights = weights_in_order()
    try:
        return CompiledWalker(system, weights, limit)
    except Exception as error:  # whatever the compiler refuses, the interpreter walks
        warnings.warn(f"compiled walk unavailable, interpreting: {error}", stacklevel=2)
        return InterpretedWalker(system, weights, limit)


def max_run_length(design: Design, bounds: Bounds) -> int:
    """An upper bound on the transitions of any run, from the bounds alone.

    Every run is finite: at most T ticks and the allowed restarts and crashes, and per grant
    (at most G) one Acquire, one Release and K writes. A write takes Send and Deliver (Send,
    Check, Apply with a non-atomic receiver), and with read-modify-write a read precedes it,
    taking as many steps again. A renewal must move the lease's end to L ticks from now, so
    there is at most one per tick of the clock (T + 1).
    """
    per_request = 3 if design.receiver.splits_check_and_write else 2
    per_write = per_request * (2 if design.workload == "rmw" else 1)
    faults = design.storage_restarts + design.coordinator_restarts + design.crashes
    renewals = bounds.horizon + 1 if design.renew else 0
    return bounds.horizon + faults + renewals + bounds.grants * (2 + bounds.writes * per_write)


@dataclass(frozen=True)
class Tried:
    """How much random searching a property got: runs and steps walked, seconds spent
    (searching and shrinking), and the length of the violating run found before it was
    shrunk: the shortest of the random runs, or the first run Hypothesis drew that broke
    the property (None: none found, or the search was cut short)."""

    runs: int
    steps: int
    seconds: float
    found: int | None = None
    hypothesis: int | None = None
    """Hypothesis search only: the length of the shortest violating run Hypothesis' own
    shrinking reached, before the shrinking of `shrink` (None: none, or not Hypothesis)."""


@dataclass(frozen=True)
class RandomSearch:
    """What a search by random runs found: a verdict per property (violated or unknown),
    each with the runs and steps spent on it, and totals over the whole search. `strategy`
    says who drew the runs: `random` (the compiled walk, `random_search`) or `hypothesis`
    (Hypothesis, `model.check.hypothesis_search`).

    `steps` counts the steps of the searching runs; `shrink_steps` those of the runs that
    looked for shorter ways while shrinking. `states` is the number of distinct states
    met, counted up to `model.check.random_walk.STATES_COUNTED`. `engine` says what walked:
    `compiled` (loops compiled from the rules) or `interpreted` (the step interpreter,
    when the compiler is unavailable): both take the same runs.
    """

    design: Design
    bounds: Bounds
    seed: int
    runs: int
    max_steps: int
    verdicts: dict[str, PropertyVerdict]
    tried: dict[str, Tried]
    states: int
    steps: int
    longest: int
    seconds: float
    stopped_by: str | None = None
    shrink_steps: int = 0
    engine: str = "compiled"
    strategy: str = STRATEGY

    def status(self, name: str) -> Status:
        """The property's status: violated, or unknown."""
        return self.verdicts[name].status

    @property
    def states_capped(self) -> bool:
        """Whether more distinct states were met than were counted."""
        return self.states >= STATES_COUNTED


class OutOfTime(Exception):
    """The time budget ran out (a safety stop: what it cut short is unknown)."""


def seed_of(seed: int, name: str) -> int:
    """A 64-bit number for one part of the search (a property's runs, its shrinking), so
    each part tries other runs than the others."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{name}".encode()).digest()[:8], "big")


@dataclass
class _Search:
    """One random search's shared parts: the walker, the step cap, the clock's limit, and
    the runs and steps walked so far (searching, and shrinking)."""

    system: System
    walker: Walker
    max_steps: int
    deadline: float
    clock: Callable[[], float] = time.perf_counter
    runs: int = 0
    steps: int = 0
    longest: int = 0
    shrink_steps: int = 0

    def check_time(self) -> None:
        """Stop if the time budget is spent."""
        if self.clock() > self.deadline:
            raise OutOfTime

    def find(self, target: int, runs: int, base: int) -> list[int] | None:
        """Up to `runs` runs for a violation of property number `target`: the shortest
        violating run (the first among equals), or None. The runs and steps walked are
        added to the totals as they go."""
        start = self.system.initial()
        batch = max(1, BATCH_STEPS // max(self.max_steps, 1))
        best: tuple[int, int] | None = None
        done = 0
        while done < runs:
            self.check_time()
            count = min(batch, runs - done)
            found = self.walker.runs(start, base, done, count, self.max_steps, target)
            self.runs, self.steps = self.runs + count, self.steps + found.steps
            self.longest = max(self.longest, found.longest)
            if found.best_length is not None and found.best_run is not None:
                candidate = (found.best_length, found.best_run)
                best = candidate if best is None else min(best, candidate)
            done += count
        if best is None:
            return None
        path = self.walker.path(start, base, best[1], self.max_steps, target)
        assert len(path) == best[0], "a run walked again took other steps"
        return path

    def violates_at(self, path: Sequence[int], target: int) -> int | None:
        """Where the path first violates the target (None: it does not, or cannot be taken)."""
        return self.walker.first_violation(self.system.initial(), path, target)

    def states_along(self, path: Sequence[int]) -> list[State]:
        """The states the path passes through, from the initial state on."""
        states = [self.system.initial()]
        for number in path:
            states.append(self.system.apply(states[-1], self.system.rules[number]))
        return states


def _kept(search: _Search, candidate: list[int], target: int) -> list[int] | None:
    """The candidate cut at its first violation of the target, or None if it has none."""
    end = search.violates_at(candidate, target)
    return candidate[:end] if end is not None else None


def drop_blocks(search: _Search, path: list[int], target: int) -> list[int]:
    """Drop blocks of consecutive steps the violation does not need: blocks of half the run,
    then a quarter, down to single steps, each tried from the end of the run backwards."""
    size = max(1, len(path) // 2)
    while True:
        i = len(path) - size
        while i >= 0:
            kept = _kept(search, path[:i] + path[i + size :], target)
            if kept is not None:
                path = kept
            i = min(i, len(path) - size + 1) - 1
        if size == 1:
            return path
        size //= 2


def drop_pairs(search: _Search, path: list[int], target: int) -> list[int]:
    """Drop two steps at once, wherever they are (a request's Send and its Deliver)."""
    if len(path) > PAIR_LIMIT:
        return path
    j = len(path) - 1
    while j > 0:
        for i in range(j - 1, -1, -1):
            kept = _kept(search, path[:i] + path[i + 1 : j] + path[j + 1 :], target)
            if kept is not None:
                path = kept
                break
        j = min(j, len(path)) - 1
    return path


def move_steps(search: _Search, path: list[int], target: int) -> list[int]:
    """Move one step elsewhere in the run where that ends the violation sooner, or lets
    another step go (a Tick taken early that the violation needs late)."""
    if len(path) > PAIR_LIMIT:
        return path
    improved = True
    while improved:
        improved = False
        for i in range(len(path)):
            for j in range(len(path)):
                if i == j:
                    continue
                rest = path[:i] + path[i + 1 :]
                moved = _kept(search, [*rest[:j], path[i], *rest[j:]], target)
                if moved is None:
                    continue
                if len(moved) >= len(path):
                    moved = _one_dropped(search, moved, target)
                if moved is not None and len(moved) < len(path):
                    path, improved = moved, True
                    break
            if improved:
                break
    return path


def _one_dropped(search: _Search, path: list[int], target: int) -> list[int] | None:
    """The path with the last step it can do without dropped, or None."""
    for i in range(len(path) - 1, -1, -1):
        kept = _kept(search, path[:i] + path[i + 1 :], target)
        if kept is not None:
            return kept
    return None


def resample_suffixes(search: _Search, path: list[int], target: int, base: int) -> list[int]:
    """From each point of the run, from the last backwards, random runs look for a shorter
    way to a violation of the target; the shortest found replaces the rest of the run."""
    next_run = 0
    i = len(path) - 2
    while i >= 0:
        search.check_time()
        states = search.states_along(path[:i])
        room = len(path) - i - 1
        found = search.walker.runs(states[-1], base, next_run, SHRINK_RUNS, room, target)
        search.shrink_steps += found.steps
        if found.best_run is not None:
            rest = search.walker.path(states[-1], base, found.best_run, room, target)
            path = path[:i] + rest
        next_run += SHRINK_RUNS
        i = min(i, len(path) - 1) - 1
    return path


SHRINK_PASSES: Final[tuple[Callable[[_Search, list[int], int], list[int]], ...]] = (
    drop_blocks,
    drop_pairs,
    move_steps,
)
"""The ways of shrinking a run by taking out or moving its own steps, in the order tried."""


def shrink(search: _Search, path: list[int], target: int, base: int) -> list[int]:
    """A shorter run violating the target, found from this one: every pass of
    `SHRINK_PASSES`, then random runs from each of its points, again until a round shortens
    it no more. Each round either shortens the run or ends, so shrinking ends."""
    while True:
        before = len(path)
        for shorten in SHRINK_PASSES:
            search.check_time()
            path = shorten(search, path, target)
        path = resample_suffixes(search, path, target, seed_of(base, f"shrink:{len(path)}"))
        if len(path) >= before:
            return path


def random_search(
    design: Design,
    bounds: Bounds,
    *,
    runs: int = DEFAULT_RUNS,
    max_steps: int | None = None,
    max_seconds: float = 60.0,
    seed: int = 0,
) -> RandomSearch:
    """Search each property with `runs` random runs of at most `max_steps` steps (default,
    and at most: as long as any run can be), then shrink each violation found.
    `max_seconds` is a safety stop: what it cuts short is unknown."""
    started = time.perf_counter()
    system = System(design, bounds)
    longest_run = max_run_length(design, bounds) + 1
    steps_cap = min(max_steps, longest_run) if max_steps is not None else longest_run
    walker = walker_for(system)
    search = _Search(system, walker, steps_cap, started + max_seconds)
    verdicts: dict[str, PropertyVerdict] = {}
    tried: dict[str, Tried] = {}
    stopped_by = None
    for target, prop in enumerate(system.properties):
        began, runs_before, steps_before = time.perf_counter(), search.runs, search.steps
        path, found = None, None
        if stopped_by is None:
            try:
                path = search.find(target, runs, seed_of(seed, prop.name))
                found = len(path) if path is not None else None
                if path is not None:
                    path = shrink(search, path, target, seed_of(seed, prop.name))
            except OutOfTime:
                stopped_by = f"time budget of {max_seconds:g} s reached"
                path, found = None, None
        seconds = time.perf_counter() - began
        walked = (search.runs - runs_before, search.steps - steps_before)
        tried[prop.name] = Tried(*walked, seconds, found)
        if path is None:
            verdicts[prop.name] = PropertyVerdict(prop.name, Status.UNKNOWN)
        else:
            actions = _checked(system, path, prop.name)
            verdicts[prop.name] = PropertyVerdict(prop.name, Status.VIOLATED, len(actions), actions)
    return RandomSearch(
        design,
        bounds,
        seed,
        runs,
        steps_cap,
        verdicts,
        tried,
        walker.states,
        search.steps,
        search.longest,
        time.perf_counter() - started,
        stopped_by,
        search.shrink_steps,
        walker.engine,
    )


@dataclass(frozen=True)
class Shrunk:
    """A violating run after shrinking, and the steps the random runs that looked for
    shorter ways took."""

    actions: tuple[Action, ...]
    steps: int


def shrink_violation(
    system: System,
    walker: Walker,
    actions: Sequence[Action],
    name: str,
    *,
    seed: int = 0,
    deadline: float = math.inf,
    clock: Callable[[], float] = time.perf_counter,
) -> Shrunk:
    """`actions` (which must violate property `name`) cut at its first violation and shrunk
    as a random search shrinks what it finds, on `walker`; the run is checked by the step
    interpreter. Raises `OutOfTime` once `clock()` has passed `deadline`."""
    end = first_violation_at(system, actions, name)
    if end is None:
        raise ValueError(f"the run does not violate {name}")
    path = [system.rules.index(system.rule_for(action)) for action in actions[:end]]
    longest_run = max_run_length(system.design, system.bounds) + 1
    search = _Search(system, walker, longest_run, deadline, clock)
    target = [prop.name for prop in system.properties].index(name)
    shrunk = shrink(search, path, target, seed_of(seed, name))
    return Shrunk(_checked(system, shrunk, name), search.shrink_steps)


def shrink_run(
    design: Design, bounds: Bounds, actions: Sequence[Action], name: str, *, seed: int = 0
) -> tuple[Action, ...]:
    """A run no longer than `actions` that violates property `name` at its last step,
    shrunk as a random search shrinks what it finds (`actions` must violate it)."""
    system = System(design, bounds)
    return shrink_violation(system, walker_for(system), actions, name, seed=seed).actions


def first_violation_at(system: System, actions: Sequence[Action], target: str) -> int | None:
    """How many steps of the run end at its first violation of `target` (None: the run
    has a step that is not enabled, or never violates it)."""
    state = system.initial()
    for number, action in enumerate(actions, start=1):
        rule = system.rule_of.get(action)
        if rule is None or not system.is_enabled(state, rule):
            return None
        if target in system.violations(state, rule):
            return number
        state = system.apply(state, rule)
    return None


def _checked(system: System, path: Sequence[int], name: str) -> tuple[Action, ...]:
    """The run's actions, after the step interpreter confirms that it violates the
    property at its last step and not before."""
    actions = tuple(system.rules[number].action for number in path)
    if first_violation_at(system, actions, name) != len(actions):
        raise AssertionError(f"the random walk's run for {name} does not replay")
    return actions
