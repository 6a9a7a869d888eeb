"""Hypothesis search: Hypothesis draws random runs of the model and shrinks what breaks.

Each property gets its own search. Hypothesis draws up to `runs` runs (its examples), each
ended at the property's first violation, a state where nothing is enabled, or its most
steps. At every step Hypothesis chooses *who* moves, one of `model.check.random_walk.GROUPS` with
the odds of `WEIGHTS` (the random walk's table), then one of that group's enabled steps in
rule order, each as likely; a choice with one option is not drawn. The steps themselves are
taken on the rules compiled for the random walk (`model.check.compiled_walk`), or by the step
interpreter when the compiler is unavailable: both give the same steps, so the same search.

Once a run breaks the property, Hypothesis' own shrinker minimises the choices that made it
(shorter runs need fewer choices), at most `SHRINK_CALLS` runs. The shortest violating run
Hypothesis met then goes through the random search's shrinker (`shrink_violation`: steps
dropped and moved, random runs from each point) and is checked by the step interpreter.

Like the random search it is one-sided: a property it breaks is violated, with a run that
replays; any other property is unknown, with the runs (examples) and steps tried. Every
part is bounded by counts. Hypothesis is seeded from the search's seed, derandomised and
without an example database, so a seed gives the same answer on any machine, in any
process. The time budget is only a safety stop: what it cuts short is unknown.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import math
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np

from model.check.random_search import (
    OutOfTime,
    RandomSearch,
    Shrunk,
    Tried,
    max_run_length,
    seed_of,
    shrink_violation,
    walker_for,
)
from model.check.random_walk import (
    GROUPS,
    MOVES_KEPT,
    STATES_COUNTED,
    WEIGHTS,
    InterpretedWalker,
    Options,
    Walker,
    group_of,
)
from model.design import Bounds, Design
from model.system import State, System
from model.verdicts import PropertyVerdict, Status

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy

    from model.check.compiled_walk import WalkModule

STRATEGY: Final = "hypothesis"
"""The strategy's name on the command line and in reports."""
DEFAULT_RUNS: Final = 500
"""Runs (Hypothesis' examples) per property unless told otherwise."""
SHRINK_CALLS: Final = 1_000
"""Runs Hypothesis' shrinker may take per violation; it stops there with the shortest
violating run it met."""
HYPOTHESIS_SHRINK_SECONDS: Final = 240.0
"""Hypothesis ends its own shrinking after five minutes by the clock; the search stops
before (and says unknown), so that no answer depends on the clock."""
SIMPLEST_FIRST: Final = ("coordinator", "worker", "receiver", "clock", "fault", "futile")
"""The order of the groups in Hypothesis' draw of who moves. Hypothesis shrinks every
choice towards the first option, so the steps it prefers are the coordinator's, the
workers' and the receiver's, and a run it shrinks lets time pass or a fault happen only
where the violation needs it (with the clock first, shrinking filled runs with Ticks)."""
REDRAWS: Final = 8
"""Draws of who moves from the whole table before drawing from the groups that can move
(Hypothesis' simplest runs draw the same number again and again)."""
FEW_OPTIONS: Final = 64
"""Most options one draw chooses among; more are chosen digit by digit. Hypothesis draws
a number from so small a range evenly, and the constants it mixes into its draws (its
own, from 50,000 up, and those it collects from the code loaded, from 100 up) never fall
in it: every option keeps its odds, and a search does not depend on what else is loaded."""
BATCH_STEPS: Final = 200_000
"""Steps (at most) of the runs one Hypothesis search draws before the next batch starts
afresh: Hypothesis remembers every run of a search, about 200 bytes a step."""
MOST_STEPS: Final = 8_192 // (REDRAWS + 2)
"""Steps a run may take: Hypothesis draws at most 8,192 choices a run, and a step takes
at most `REDRAWS` + 2 of them (no design within the bounds' limits has more than
`FEW_OPTIONS` steps enabled for one group)."""

clock: Callable[[], float] = time.perf_counter
"""The clock the safety stop reads (a test makes it run faster)."""

_ONE_AT_A_TIME = threading.Lock()
"""Hypothesis sandboxes the process's random generators while it runs: one search at a
time (sessions of the web app share the process)."""


class Steps(Protocol):
    """The enabled steps of a state by group (`model.check.random_walk.Options`)."""

    engine: str

    def options(self, state: State) -> Options:
        """(rule number, violations, next state) per group, in rule order."""
        ...


class CompiledSteps:
    """The enabled steps of states, from the rules compiled for the random walk (the
    states met last are remembered: runs and Hypothesis' shrinking revisit them)."""

    engine = "compiled"

    def __init__(self, system: System, module: WalkModule) -> None:
        self.module = module
        self.names = tuple(prop.name for prop in system.properties)
        self.state = np.zeros(len(system.layout.columns), dtype=np.int64)
        self.enabled = np.zeros(len(system.rules), dtype=np.bool_)
        self.groups = np.zeros(len(system.rules), dtype=np.int64)
        self.moves: dict[State, Options] = {}
        self.broken: dict[int, tuple[str, ...]] = {}

    def violated(self, bits: int) -> tuple[str, ...]:
        """The names of the properties set in `bits`."""
        found = self.broken.get(bits)
        if found is None:
            found = tuple(name for i, name in enumerate(self.names) if bits >> i & 1)
            self.broken[bits] = found
        return found

    def options(self, state: State) -> Options:
        """(rule number, violations, next state) per group, in rule order."""
        found = self.moves.get(state)
        if found is not None:
            return found
        current = self.state
        current[:] = state
        self.module.enabled(current, self.enabled, self.groups)
        options: Options = [[] for _ in GROUPS]
        for number in np.flatnonzero(self.enabled).tolist():
            broken = self.violated(int(self.module.violations(current, number)))
            after = current.copy()
            self.module.apply(after, number)
            options[int(self.groups[number])].append((number, broken, tuple(after.tolist())))
        if len(self.moves) >= MOVES_KEPT:
            self.moves.clear()
        self.moves[state] = options
        return options


def steps_of(system: System, walker: Walker) -> Steps:
    """What takes the steps of Hypothesis' runs: the compiled rules of the walker's module,
    or the step interpreter when the walker interprets."""
    from model.check.compiled_walk import CompiledWalker

    if isinstance(walker, InterpretedWalker):
        return walker
    if isinstance(walker, CompiledWalker):
        return CompiledSteps(system, walker.module)
    raise TypeError(f"no steps for a walker of type {type(walker).__name__}")


class _Stop(KeyboardInterrupt):
    """Ends a Hypothesis search from inside a run: Hypothesis lets an interruption through
    at once, and records nothing about the run it cut."""


class _OutOfTime(_Stop):
    """The safety stop: the time budget ran out, or Hypothesis' shrinking neared the time at
    which Hypothesis would end it by itself."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _ShrinkingSpent(_Stop):
    """Hypothesis' shrinker took all the runs it may take."""


class _Violation(Exception):
    """A run broke the property: the failure Hypothesis looks for, then shrinks."""


_NUMBERS: dict[int, Any] = {}


def _numbers_below(count: int) -> SearchStrategy[int]:
    """Hypothesis' strategy for a number from 0 to count - 1 (built once per count)."""
    found = _NUMBERS.get(count)
    if found is None:
        from hypothesis import strategies as st

        found = _NUMBERS[count] = st.integers(0, count - 1)
    return found  # type: ignore[no-any-return]


def choose_index(draw: DrawFn, count: int) -> int:
    """A number from 0 to count - 1, each as likely, drawn by Hypothesis (no draw when
    there is one option; digit by digit, and again when out of range, past `FEW_OPTIONS`)."""
    if count <= FEW_OPTIONS:
        return draw(_numbers_below(count)) if count > 1 else 0
    digits = math.ceil(math.log(count, FEW_OPTIONS))
    span = FEW_OPTIONS**digits
    while True:
        number = 0
        for _ in range(digits):
            number = number * FEW_OPTIONS + draw(_numbers_below(FEW_OPTIONS))
        if number < span - span % count:
            return number % count


def groups_of(system: System) -> frozenset[str]:
    """The groups the system's steps can be in (a fault's step in `fault` or `futile`)."""
    groups = set()
    for rule in system.rules:
        groups |= {"fault", "futile"} if rule.action.row.fault else {group_of(rule)}
    return frozenset(groups)


def who_table(groups: Collection[str], weights: Mapping[str, int] = WEIGHTS) -> tuple[int, ...]:
    """The table Hypothesis draws *who* from: each of the `groups` in the order of
    `SIMPLEST_FIRST`, as many times as its weight (as numbers of `GROUPS`)."""
    return tuple(
        GROUPS.index(group)
        for group in SIMPLEST_FIRST
        if group in groups
        for _ in range(weights[group])
    )


def choose_group(draw: DrawFn, counts: Sequence[int], table: Sequence[int]) -> int:
    """Who moves: one of the groups that can (`counts`: enabled steps per group), with the
    odds of their weights in `table`; a group of weight 0 moves only when no other can, and
    there is no draw when one group has all the odds.

    Hypothesis draws from the whole table, again while the group drawn cannot move, so a
    number means the same group at every step (Hypothesis' shrinking can then keep a step's
    meaning while it changes the steps before). After `REDRAWS` tries it draws from the
    groups that can move alone. Either way each group that can move has its odds."""
    able = [group for group in table if counts[group]]
    if not able:
        return next(group for group, count in enumerate(counts) if count)
    if len(set(able)) == 1:
        return able[0]
    for _ in range(REDRAWS):
        group = table[choose_index(draw, len(table))]
        if counts[group]:
            return group
    return able[choose_index(draw, len(able))]


@dataclass(frozen=True)
class _Budget:
    """What every property's search shares: the system, its walker and steps, the step cap,
    the table of who moves, the deadline and the states met so far."""

    system: System
    walker: Walker
    steps: Steps
    max_steps: int
    table: tuple[int, ...]
    deadline: float
    budget_words: str
    met: set[State]


@dataclass
class _Hunt:
    """One property's Hypothesis search: its runs, what they found and what they cost."""

    budget: _Budget
    target: str
    runs: int = 0
    walked: int = 0
    shrink_runs: int = 0
    shrink_steps: int = 0
    longest: int = 0
    first: int | None = None
    best: list[int] | None = None
    shrinking_since: float | None = None

    def look_at_the_clock(self) -> None:
        """The safety stops: the time budget, and Hypothesis' own limit on shrinking."""
        now = clock()
        if now > self.budget.deadline:
            raise _OutOfTime(self.budget.budget_words)
        if (
            self.shrinking_since is not None
            and now - self.shrinking_since > HYPOTHESIS_SHRINK_SECONDS
        ):
            raise _OutOfTime(
                f"Hypothesis' shrinking ran past {HYPOTHESIS_SHRINK_SECONDS:g} s "
                "(it stops itself by the clock)"
            )

    def walk(self, draw: DrawFn) -> bool:
        """One run whose choices Hypothesis draws; whether it broke the target."""
        if self.first is not None and self.shrink_runs >= SHRINK_CALLS:
            raise _ShrinkingSpent
        self.look_at_the_clock()
        path, violated = self._take_steps(draw)
        if self.first is None:
            self.runs += 1
            self.walked += len(path)
        else:
            self.shrink_runs += 1
            self.shrink_steps += len(path)
        self.longest = max(self.longest, len(path))
        if violated:
            if self.first is None:
                self.first, self.shrinking_since = len(path), clock()
            if self.best is None or len(path) < len(self.best):
                self.best = path
        return violated

    def _take_steps(self, draw: DrawFn) -> tuple[list[int], bool]:
        """The run's rule numbers, and whether its last step broke the target."""
        budget = self.budget
        state, path = budget.system.initial(), list[int]()
        met = budget.met
        while len(path) < budget.max_steps:
            options = budget.steps.options(state)
            counts = [len(steps) for steps in options]
            if not any(counts):
                break
            steps = options[choose_group(draw, counts, budget.table)]
            number, broken, state = steps[choose_index(draw, len(steps))]
            path.append(number)
            if len(met) < STATES_COUNTED:
                met.add(state)
            if self.target in broken:
                return path, True
        return path, False


def hypothesis_settings(runs: int) -> Any:
    """Hypothesis' settings for one property: `runs` examples, then shrinking; derandomised,
    no example database, no deadline or health checks (runs are long by design), quiet."""
    from hypothesis import HealthCheck, Phase, Verbosity, settings

    return settings(
        max_examples=runs,
        phases=(Phase.generate, Phase.shrink),
        derandomize=True,
        database=None,
        deadline=None,
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )


@functools.cache
def keep_notes_private() -> None:
    """Point Hypothesis' folder at this user's private cache folder (once per process).

    Hypothesis writes notes there (the constants it collects from the code it runs), and
    by default that is `.hypothesis` in the current folder: a search would leave it
    wherever it was started. A folder named by `HYPOTHESIS_STORAGE_DIRECTORY` is kept;
    with no private folder, a temporary one is used and removed at exit.
    """
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    from hypothesis.configuration import set_hypothesis_home_dir

    from model.check.private_cache import private_folder

    folder = private_folder()
    if folder is None:
        folder = Path(tempfile.mkdtemp(prefix="fencing-lab-hypothesis-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    set_hypothesis_home_dir(folder / "hypothesis")


def _hunt(hunt: _Hunt, runs: int, seed: int) -> None:
    """Let Hypothesis draw up to `runs` runs and shrink the first that breaks the target;
    the hunt keeps the counts and the shortest violating run met.

    Hypothesis remembers every run it draws (so as not to draw one again), so the runs are
    drawn in batches of at most `BATCH_STEPS` steps, each by a fresh Hypothesis search
    seeded from `seed` and its number: the memory a search takes stays bounded, whatever
    its budget. A batch that ends before its count has drawn every run there is."""
    batch = max(1, BATCH_STEPS // hunt.budget.max_steps)
    number = 0
    while hunt.first is None and hunt.runs < runs:
        count = min(batch, runs - hunt.runs)
        before = hunt.runs
        _one_batch(hunt, count, seed if number == 0 else seed_of(seed, f"batch {number}"))
        if hunt.first is None and hunt.runs - before < count:
            return
        number += 1


def _one_batch(hunt: _Hunt, runs: int, seed: int) -> None:
    """One Hypothesis search: up to `runs` runs, then the shrinking of the first that
    breaks the target."""
    from hypothesis import given
    from hypothesis import seed as seeded
    from hypothesis import strategies as st

    keep_notes_private()

    @st.composite
    def run(draw: DrawFn) -> bool:
        return hunt.walk(draw)

    @seeded(seed)
    @hypothesis_settings(runs)
    @given(run())
    def never_violated(violated: bool) -> None:
        if violated:
            raise _Violation

    with contextlib.suppress(_Violation, _ShrinkingSpent):
        never_violated()


def hypothesis_search(
    design: Design,
    bounds: Bounds,
    *,
    runs: int = DEFAULT_RUNS,
    max_steps: int | None = None,
    max_seconds: float = 60.0,
    seed: int = 0,
) -> RandomSearch:
    """Search each property with up to `runs` runs drawn by Hypothesis, of at most
    `max_steps` steps (default, and at most: as long as any run can be), then shrink each
    violation found (Hypothesis, then `shrink_violation`). `max_seconds` is a safety stop:
    what it cuts short is unknown."""
    with _ONE_AT_A_TIME:
        return _search(design, bounds, runs, max_steps, max_seconds, seed)


def _search(
    design: Design,
    bounds: Bounds,
    runs: int,
    max_steps: int | None,
    max_seconds: float,
    seed: int,
) -> RandomSearch:
    """`hypothesis_search`, one at a time."""
    started, real_start = clock(), time.perf_counter()
    system = System(design, bounds)
    longest_run = min(max_run_length(design, bounds) + 1, MOST_STEPS)
    steps_cap = min(max_steps, longest_run) if max_steps is not None else longest_run
    walker = walker_for(system, 0)
    budget = _Budget(
        system,
        walker,
        steps_of(system, walker),
        steps_cap,
        who_table(groups_of(system)),
        started + max_seconds,
        f"time budget of {max_seconds:g} s reached",
        {system.initial()},
    )
    verdicts: dict[str, PropertyVerdict] = {}
    tried: dict[str, Tried] = {}
    hunts: list[_Hunt] = []
    shrink_steps = 0
    stopped_by: str | None = None
    for prop in system.properties:
        began = time.perf_counter()
        hunt = _Hunt(budget, prop.name)
        hunts.append(hunt)
        shrunk = None
        if stopped_by is None:
            try:
                shrunk = _violation_of(budget, hunt, runs, seed)
            except _OutOfTime as stop:
                stopped_by = stop.reason
            except OutOfTime:
                stopped_by = budget.budget_words
        shrink_steps += hunt.shrink_steps + (shrunk.steps if shrunk else 0)
        tried[prop.name] = Tried(
            hunt.runs,
            hunt.walked,
            time.perf_counter() - began,
            hunt.first if shrunk else None,
            len(hunt.best) if shrunk and hunt.best is not None else None,
        )
        verdicts[prop.name] = (
            PropertyVerdict(prop.name, Status.VIOLATED, len(shrunk.actions), shrunk.actions)
            if shrunk
            else PropertyVerdict(prop.name, Status.UNKNOWN)
        )
    return RandomSearch(
        design,
        bounds,
        seed,
        runs,
        steps_cap,
        verdicts,
        tried,
        len(budget.met),
        sum(hunt.walked for hunt in hunts),
        max(hunt.longest for hunt in hunts),
        time.perf_counter() - real_start,
        stopped_by,
        shrink_steps,
        budget.steps.engine,
        STRATEGY,
    )


def _violation_of(budget: _Budget, hunt: _Hunt, runs: int, seed: int) -> Shrunk | None:
    """Hypothesis' search for a violation of the hunt's property, and the shortest run it
    met, shrunk by `shrink_violation` (None: no run broke the property)."""
    _hunt(hunt, runs, seed_of(seed, hunt.target))
    if hunt.best is None:
        return None
    system = budget.system
    found = [system.rules[number].action for number in hunt.best]
    return shrink_violation(
        system,
        budget.walker,
        found,
        hunt.target,
        seed=seed,
        deadline=budget.deadline,
        clock=clock,
    )
