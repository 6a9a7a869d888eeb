"""Random walks of a system: what one random run is, on the step interpreter and compiled.

A run starts at a state and takes steps until its target property is violated, nothing
is enabled, or it has taken its most steps. Each step draws *who* moves, one of the
groups of `GROUPS` that has an enabled rule, with the odds of `WEIGHTS` (a group of weight
0 moves only when no other group can), then one of that group's enabled rules, in rule
order, each as likely. Both draws come from splitmix64, seeded by the search's base number
and the run's own number, so any run can be walked again alone, and the same run is the
same steps on every machine, under any load.

`InterpretedWalker` walks on the step interpreter (`model.system`): it is the definition.
`model.check.compiled_walk.CompiledWalker` walks the same runs on loops compiled from the rules,
millions of steps a second; the tests check that both take the same steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from model.rules import Rule
from model.system import State, System

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

STATES_COUNTED: Final = 100_000
"""Distinct states met are counted up to this many: beyond, the table that counts them
would outgrow the processor's caches and slow the walk down several times."""

MOVES_KEPT: Final = 100_000
"""States whose enabled steps the interpreted walk remembers (runs revisit states)."""

Options = list[list[tuple[int, tuple[str, ...], State]]]
"""A state's enabled steps by group: (rule number, violations, next state)."""

MASK: Final = 2**64 - 1
GOLDEN: Final = 0x9E3779B97F4A7C15
"""splitmix64's increment (2^64 divided by the golden ratio)."""


def mix(z: int) -> int:
    """splitmix64's finaliser: a well-spread 64-bit number from any other."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def below(z: int, n: int) -> int:
    """A number from 0 to n - 1, from the high 32 bits of the 64-bit number z."""
    return ((z >> 32) * n) >> 32


def group_of(rule: Rule, changed: Sequence[str] = ()) -> str:
    """The group of a rule: workers W1, W2, ... are one group; restarts are faults.

    `changed` names the variables the transition changes; a restart that changes only
    restart counters is futile.
    """
    if rule.action.row.fault:
        return "futile" if all(name.endswith("restarts") for name in changed) else "fault"
    return rule.action.row.actor.value


@dataclass(frozen=True)
class WalkSummary:
    """What some runs found: the shortest run violating the target (its length and run
    number; None if none did, the first such run among equals), the steps taken and the
    longest run."""

    best_length: int | None
    best_run: int | None
    steps: int
    longest: int


class Walker(Protocol):
    """Random runs of one system (`InterpretedWalker`, `CompiledWalker`)."""

    engine: str
    """What walks: `compiled` or `interpreted`."""

    @property
    def states(self) -> int:
        """Distinct states met so far (counted up to the walker's limit)."""
        ...

    def runs(
        self, start: State, base: int, first_run: int, count: int, max_steps: int, target: int
    ) -> WalkSummary:
        """Walk runs first_run .. first_run + count - 1 from `start`, each ended at the
        first violation of property number `target`."""
        ...

    def path(self, start: State, base: int, run: int, max_steps: int, target: int) -> list[int]:
        """The rule numbers one run takes."""
        ...

    def first_violation(self, start: State, path: Sequence[int], target: int) -> int | None:
        """How many steps of the path end at its first violation of property number
        `target` (None: a step is not enabled where it is taken, or none violates it)."""
        ...


@dataclass
class InterpretedWalker:
    """Random runs on the step interpreter: the definition of a walk (slow, plain)."""

    system: System
    weights: Sequence[int]
    limit: int = STATES_COUNTED
    met: set[State] = field(default_factory=set)
    moves: dict[State, Options] = field(default_factory=dict)
    engine: str = "interpreted"

    @property
    def states(self) -> int:
        """Distinct states met so far."""
        return len(self.met)

    def _meet(self, state: State) -> None:
        """Count a state, up to the limit."""
        if len(self.met) < self.limit:
            self.met.add(state)

    def options(self, state: State) -> Options:
        """The enabled steps of a state by group: (rule number, violations, next state),
        in rule order (remembered for the states met last)."""
        found = self.moves.get(state)
        if found is not None:
            return found
        system = self.system
        columns = system.layout.columns
        options: Options = [[] for _ in GROUPS]
        for number, rule in enumerate(system.rules):
            if not system.is_enabled(state, rule):
                continue
            after = system.apply(state, rule)
            changed = [c for c, a, b in zip(columns, state, after, strict=True) if a != b]
            group = GROUPS.index(group_of(rule, changed))
            options[group].append((number, system.violations(state, rule), after))
        if len(self.moves) >= MOVES_KEPT:
            self.moves.clear()
        self.moves[state] = options
        return options

    def step(self, state: State, rng: int) -> tuple[int, int, tuple[str, ...], State, int] | None:
        """One step from `state`: (rule number, group, violations, next state, generator),
        or None when nothing is enabled."""
        options = self.options(state)
        movable = [g for g in range(len(GROUPS)) if options[g]]
        if not movable:
            return None
        total = sum(self.weights[g] for g in movable)
        rng = (rng + GOLDEN) & MASK
        pick = below(mix(rng), max(total, 1))
        chosen = movable[0]
        if total > 0:
            for g in movable:
                if self.weights[g] > 0:
                    if pick < self.weights[g]:
                        chosen = g
                        break
                    pick -= self.weights[g]
        rng = (rng + GOLDEN) & MASK
        number, broken, after = options[chosen][below(mix(rng), len(options[chosen]))]
        return number, chosen, broken, after, rng

    def _run(
        self, start: State, base: int, run: int, max_steps: int, target: int, count: bool
    ) -> tuple[list[int], bool]:
        """One run: its rule numbers, and whether it ended at the target's violation."""
        name = self.system.properties[target].name
        rng = mix((base + run * GOLDEN) & MASK)
        state, path = start, list[int]()
        while len(path) < max_steps:
            found = self.step(state, rng)
            if found is None:
                break
            number, _, broken, state, rng = found
            path.append(number)
            if count:
                self._meet(state)
            if name in broken:
                return path, True
        return path, False

    def runs(
        self, start: State, base: int, first_run: int, count: int, max_steps: int, target: int
    ) -> WalkSummary:
        """Walk runs first_run .. first_run + count - 1 (see `Walker`)."""
        if count > 0:
            self._meet(start)
        best_length: int | None = None
        best_run: int | None = None
        steps = longest = 0
        for run in range(first_run, first_run + count):
            path, violated = self._run(start, base, run, max_steps, target, count=True)
            steps += len(path)
            longest = max(longest, len(path))
            if violated and (best_length is None or len(path) < best_length):
                best_length, best_run = len(path), run
        return WalkSummary(best_length, best_run, steps, longest)

    def path(self, start: State, base: int, run: int, max_steps: int, target: int) -> list[int]:
        """The rule numbers one run takes."""
        return self._run(start, base, run, max_steps, target, count=False)[0]

    def first_violation(self, start: State, path: Sequence[int], target: int) -> int | None:
        """How many steps of the path end at its first violation of `target`."""
        system = self.system
        name = system.properties[target].name
        state = start
        for taken, number in enumerate(path, start=1):
            rule = system.rules[number]
            if not system.is_enabled(state, rule):
                return None
            if name in system.violations(state, rule):
                return taken
            state = system.apply(state, rule)
        return None


def weights_in_order(weights: Mapping[str, int] = WEIGHTS) -> tuple[int, ...]:
    """The odds of each group, in the order of `GROUPS`."""
    return tuple(weights[group] for group in GROUPS)
