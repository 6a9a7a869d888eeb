"""Random search: Hypothesis drives random runs of the step interpreter, for large bounds.

Breadth-first search settles every property but needs every reachable state; past a few
tens of millions of states it stops at its budget and leaves properties unknown. A random
run needs memory for one run only, so it reaches deep interleavings at any bounds, and
Hypothesis' `find` turns the run that broke a property into a short one (it shrinks the
choices that made the run). What a random search can say is one-sided: a property it
breaks is violated, with a run that replays through the step interpreter; any other
property is unknown, with the runs and steps tried. It never says a property holds.

Each step first chooses *who* moves (the clock, the coordinator, a worker, the receiver,
or a fault), with the odds of `WEIGHTS`, then one of that actor's enabled actions. The
odds keep Tick and faults rarer than the others, which lets a paused worker's write land
late; a *futile* restart (one that changes nothing but its own counter) is never chosen
while anything else can move, so the run's restarts are kept for when they matter.

Each property gets its own search of up to `runs` runs, ending each run at the
property's first violation; Hypothesis is seeded, so a search is repeated exactly by
giving the same seed (unless the time budget cuts it short).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import TYPE_CHECKING, Any, Final

from model.design import Bounds, Design
from model.rules import Action, Rule
from model.system import State, System
from model.verdicts import PropertyVerdict, Status

if TYPE_CHECKING:
    from hypothesis import strategies as st

GROUPS: Final = ("clock", "coordinator", "worker", "receiver", "fault", "futile")
"""Who may move next: the clock, the coordinator, a worker, the receiver, or a fault
(`futile`: a restart that would change nothing but its restart counter)."""

WEIGHTS: Final[Mapping[str, int]] = {
    "clock": 1,
    "coordinator": 2,
    "worker": 2,
    "receiver": 2,
    "fault": 1,
    "futile": 0,
}
"""Odds of each group when several can move: Tick and faults half as often as the
coordinator, workers and receiver, futile restarts never (unless nothing else can move)."""

DEFAULT_RUNS: Final = 1000
"""Random runs per property unless told otherwise."""
MOVES_KEPT: Final = 100_000
"""States whose enabled moves are remembered (runs revisit states); beyond, forgotten."""
STATES_COUNTED: Final = 2_000_000
"""Distinct states met are counted up to this many (a bound on the memory counting takes)."""


def group_of(rule: Rule, changed: Sequence[str] = ()) -> str:
    """The group of a rule: workers W1, W2, ... are one group; restarts are faults.

    `changed` names the variables the transition changes; a restart that changes only
    restart counters is futile.
    """
    if rule.action.row.fault:
        return "futile" if all(name.endswith("restarts") for name in changed) else "fault"
    return rule.action.row.actor.value


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
class Move:
    """One enabled transition: the rule, the state it leads to, the properties it violates."""

    rule: Rule
    after: State
    violations: tuple[str, ...]


Moves = dict[str, dict[str, Move]]
"""The enabled transitions of a state, by group, then by action label."""


@dataclass(frozen=True)
class Tried:
    """How much random searching a property got: runs started, steps taken, seconds spent."""

    runs: int
    steps: int
    seconds: float


@dataclass(frozen=True)
class RandomSearch:
    """What a random search found: a verdict per property (violated or unknown), each with
    the runs and steps spent on it, and totals over the whole search."""

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

    def status(self, name: str) -> Status:
        """The property's status: violated, or unknown."""
        return self.verdicts[name].status


class _Stop(KeyboardInterrupt):
    """Ends a Hypothesis search from inside a run. Hypothesis lets an interruption through
    at once, without recording the cut-short run as one that ended there (a run that
    ends for a reason outside its choices would otherwise be reported as inconsistent)."""


class _OutOfTime(_Stop):
    """The time budget ran out inside a run."""


class _RunsSpent(_Stop):
    """A property's runs were all spent without a violation."""


@dataclass
class _Walker:
    """Takes random runs of one system, remembering moves, states met and violations seen."""

    system: System
    max_steps: int
    deadline: float
    moves: dict[State, Moves] = field(default_factory=dict)
    met: set[int] = field(default_factory=set)
    seen: dict[str, tuple[Action, ...]] = field(default_factory=dict)
    """Per property, the shortest run prefix seen to violate it, whatever was searched."""
    runs: int = 0
    steps: int = 0
    longest: int = 0

    def moves_of(self, state: State) -> Moves:
        """The enabled transitions of a state, by group (computed once per state)."""
        found = self.moves.get(state)
        if found is None:
            found = {group: {} for group in GROUPS}
            columns = self.system.layout.columns
            for successor in self.system.successors(state):
                changed = [
                    c for c, a, b in zip(columns, state, successor.state, strict=True) if a != b
                ]
                move = Move(successor.rule, successor.state, successor.violations)
                found[group_of(successor.rule, changed)][successor.rule.action.label()] = move
            if len(self.moves) >= MOVES_KEPT:
                self.moves.clear()
            self.moves[state] = found
            if len(self.met) < STATES_COUNTED:
                self.met.add(hash(state))
        return found

    def walk(self, draw: st.DrawFn, target: str) -> tuple[Action, ...] | None:
        """One random run, ended at `target`'s first violation (the run) or its end (None)."""
        self.runs += 1
        state = self.system.initial()
        actions: list[Action] = []
        for _ in range(self.max_steps):
            moves = self.moves_of(state)
            groups = tuple(group for group in GROUPS if moves[group])
            if not groups:
                break
            move = _choose(draw, moves, groups)
            state = move.after
            actions.append(move.rule.action)
            self.steps += 1
            self.longest = max(self.longest, len(actions))
            for name in move.violations:
                known = self.seen.get(name)
                if known is None or len(known) > len(actions):
                    self.seen[name] = tuple(actions)
            if target in move.violations:
                return tuple(actions)
            if time.perf_counter() > self.deadline:
                raise _OutOfTime
        return None


def _choose(draw: st.DrawFn, moves: Moves, groups: tuple[str, ...]) -> Move:
    """Draw who moves (by weight), then one of its enabled actions by label."""
    odds = tuple(group for group in groups for _ in range(WEIGHTS[group]))
    who = odds[0] if odds else groups[0]
    if len(set(odds)) > 1:
        who = draw(_sampled(odds))
    options = moves[who]
    if len(options) == 1:
        return next(iter(options.values()))
    return options[draw(_sampled(tuple(sorted(options))))]


_STRATEGIES: dict[tuple[str, ...], Any] = {}


def _sampled(options: tuple[str, ...]) -> st.SearchStrategy[str]:
    """`sampled_from` over fixed options, built once (building strategies is not free)."""
    found = _STRATEGIES.get(options)
    if found is None:
        from hypothesis import strategies as st

        found = _STRATEGIES[options] = st.sampled_from(options)
    return found  # type: ignore[no-any-return]


def _search_one(walker: _Walker, target: str, runs: int, seed: int) -> tuple[Action, ...] | None:
    """Hypothesis' search for a run violating `target`, shrunk; None if none was found.

    At most `runs` runs are tried before one violates the property; shrinking it then
    takes more (Hypothesis bounds those, and so does the time budget). The shortest
    violating run met is kept aside, so a search cut short while shrinking still returns
    the best run it had.
    """
    from hypothesis import HealthCheck, Phase, Verbosity, find, settings
    from hypothesis import strategies as st
    from hypothesis.errors import NoSuchExample

    best: list[tuple[Action, ...]] = []
    started = walker.runs

    @st.composite
    def runs_of(draw: st.DrawFn) -> tuple[Action, ...] | None:
        if not best and walker.runs - started >= runs:
            raise _RunsSpent
        found = walker.walk(draw, target)
        if found is not None and (not best or len(found) < len(best[0])):
            best[:] = [found]
        return found

    budget = settings(
        max_examples=runs,
        phases=(Phase.generate, Phase.shrink),
        database=None,
        deadline=None,
        verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
    )
    try:
        return find(runs_of(), lambda run: run is not None, settings=budget, random=Random(seed))
    except (NoSuchExample, _RunsSpent):
        return None
    except _OutOfTime:
        if best:
            return best[0]
        raise


def _seed_of(seed: int, name: str) -> int:
    """Each property's own seed, so the searches of different properties try other runs."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{name}".encode()).digest()[:8], "big")


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


def shorten(
    system: System, actions: tuple[Action, ...], target: str, deadline: float = math.inf
) -> tuple[Action, ...]:
    """Drop single steps from a violating run while it still violates `target` (at its
    last step): Hypothesis shrinks the choices, this shrinks the run they made. Passes from
    the last step to the first, until a pass drops nothing or the deadline passes."""
    changed = True
    while changed:
        changed = False
        i = len(actions) - 1
        while i >= 0:
            if time.perf_counter() > deadline:
                return actions
            candidate = actions[:i] + actions[i + 1 :]
            end = first_violation_at(system, candidate, target)
            if end is not None:
                actions, changed = candidate[:end], True
            i = min(i, len(actions)) - 1
    return actions


def random_search(
    design: Design,
    bounds: Bounds,
    *,
    runs: int = DEFAULT_RUNS,
    max_steps: int | None = None,
    max_seconds: float = 60.0,
    seed: int = 0,
) -> RandomSearch:
    """Search each property with up to `runs` random runs of at most `max_steps` steps
    (default: as long as any run can be), within `max_seconds` for the whole search."""
    started = time.perf_counter()
    system = System(design, bounds)
    steps_cap = max_steps if max_steps is not None else max_run_length(design, bounds) + 1
    walker = _Walker(system, steps_cap, started + max_seconds)
    found: dict[str, tuple[Action, ...]] = {}
    tried: dict[str, Tried] = {}
    stopped_by = None
    for prop in system.properties:
        before = (walker.runs, walker.steps, time.perf_counter())
        if stopped_by is None:
            try:
                run = _search_one(walker, prop.name, runs, _seed_of(seed, prop.name))
                if run is not None:
                    found[prop.name] = run
            except _OutOfTime:
                stopped_by = f"time budget of {max_seconds:g} s reached"
        spent = time.perf_counter() - before[2]
        tried[prop.name] = Tried(walker.runs - before[0], walker.steps - before[1], spent)
    verdicts = {}
    for prop in system.properties:
        run = found.get(prop.name, walker.seen.get(prop.name))
        if run is not None:
            run = shorten(system, run, prop.name, walker.deadline)
        if run is None:
            verdicts[prop.name] = PropertyVerdict(prop.name, Status.UNKNOWN)
        else:
            verdicts[prop.name] = PropertyVerdict(prop.name, Status.VIOLATED, len(run), run)
    return RandomSearch(
        design,
        bounds,
        seed,
        runs,
        steps_cap,
        verdicts,
        tried,
        len(walker.met),
        walker.steps,
        walker.longest,
        time.perf_counter() - started,
        stopped_by,
    )
