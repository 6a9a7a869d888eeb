"""Hypothesis state machines that drive the step interpreter (`model.system.System`).

A `FencingMachine` walks one random run of a design within bounds. Its one Hypothesis
rule, `step`, first draws *who* moves (the clock, the coordinator, a worker, the receiver,
or a fault) with the odds of `model.check.random_search.WEIGHTS` (the product's random search
uses the same odds and groups), then which of that actor's currently enabled action
instances it takes. The weights keep `Tick` and faults rarer than the other actors, which
lets random runs reach the interleavings where a paused worker's write lands late. The
machine only ever takes actions that `System.enabled` lists, and it records each one as a
`model.rules.Action`, so every failure names its run in readable labels (`Acquire(W1)`,
`Send(W1)`, `Tick`, ...), both in its message and in Hypothesis' report (`took Send(W1)`).

Two things are checked on every transition:

- a property the machine is told *must hold* is never violated (an `AssertionError`);
- reaching the machine's *target* property raises `ViolationFound`, carrying the run.

`find_violation` runs a target machine under Hypothesis and returns the run that reached
the target (shrunk, if the settings include the shrink phase), so a test can replay it
through `model.formats.trace.replay`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

from hypothesis import HealthCheck, Phase, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)

from model.check.explorer import Exploration, explore
from model.check.random_search import GROUPS, WEIGHTS, group_of, max_run_length
from model.design import Bounds, Design
from model.rules import Action, Rule
from model.system import State, System


def labels(actions: Sequence[Action]) -> str:
    """A run as one line of action labels."""
    return ", ".join(action.label() for action in actions)


def step_note(move: Move) -> str:
    """The line Hypothesis prints for a step taken, e.g. `took Deliver(W1) (P1, P2)`."""
    broken = f" ({', '.join(move.violations)})" if move.violations else ""
    return f"took {move.rule.action.label()}{broken}"


@dataclass(frozen=True)
class Move:
    """One enabled transition: the rule, the state it leads to, the properties it violates."""

    rule: Rule
    after: State
    violations: tuple[str, ...]


Moves = dict[str, dict[str, Move]]
"""The enabled transitions of a state, by group, then by action label."""


@cache
def system_of(design: Design, bounds: Bounds) -> System:
    """One shared step interpreter per design and bounds (building the rules is not free)."""
    return System(design, bounds)


@cache
def _moves_cache(design: Design, bounds: Bounds) -> dict[State, Moves]:
    """Per design and bounds, the moves of every state met so far (runs revisit states)."""
    return {}


def moves_of(design: Design, bounds: Bounds, state: State) -> Moves:
    """The enabled transitions of a state, computed by the step interpreter once per state."""
    cache_ = _moves_cache(design, bounds)
    found = cache_.get(state)
    if found is None:
        system = system_of(design, bounds)
        found = {group: {} for group in GROUPS}
        columns = system.layout.columns
        for successor in system.successors(state):
            move = Move(successor.rule, successor.state, successor.violations)
            changed = [c for c, a, b in zip(columns, state, successor.state, strict=True) if a != b]
            found[group_of(successor.rule, changed)][successor.rule.action.label()] = move
        cache_[state] = found
    return found


@cache
def one_of_these(options: tuple[str, ...]) -> st.SearchStrategy[str]:
    """`sampled_from` over fixed options, built once (building strategies is not free)."""
    return st.sampled_from(options)


@cache
def exploration_of(design: Design, bounds: Bounds) -> Exploration:
    """The explorer's exhaustive verdicts for a design within bounds (cached per session)."""
    return explore(design, bounds)


def search_settings(max_examples: int, steps: int = 50) -> settings:
    """Deterministic settings: a fixed budget, derandomised, no database, no deadline.

    The `explain` phase is left out: on these machines it costs ten times the shrinking.
    """
    return settings(
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        max_examples=max_examples,
        stateful_step_count=steps,
        derandomize=True,
        database=None,
        deadline=None,
        report_multiple_bugs=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


class ViolationFound(Exception):
    """A random run reached the target property's violation; `actions` is that run."""

    def __init__(self, target: str, actions: Sequence[Action], violations: tuple[str, ...]):
        self.target = target
        self.actions = tuple(actions)
        self.violations = violations
        super().__init__(
            f"{target} violated at step {len(self.actions)} "
            f"(that step violates {', '.join(violations)}): {labels(self.actions)}"
        )


class FencingMachine(RuleBasedStateMachine):
    """One random run of `design` within `bounds`; subclasses set the class attributes.

    `must_hold`: properties whose violation fails the run. `target`: a property whose
    violation ends the run with `ViolationFound`. `check_state`: an optional invariant on
    every reached state (a named-value dict), returning a problem description or None.
    `replay_at_end`: replay the recorded run through `model.formats.trace.replay` at teardown and
    compare every state and violation with what the machine saw. `weights`: the odds of
    each group when several can move. The class collects every state its runs reach in
    `visited`, how many runs it started in `runs`, the length of its longest run in
    `longest`, and the last run that reached the target in `last_failure`.
    """

    design: ClassVar[Design]
    bounds: ClassVar[Bounds]
    must_hold: ClassVar[frozenset[str]] = frozenset()
    target: ClassVar[str | None] = None
    weights: ClassVar[Mapping[str, int]] = WEIGHTS
    check_state: ClassVar[Callable[[dict[str, int]], str | None] | None] = None
    replay_at_end: ClassVar[bool] = False
    visited: ClassVar[set[State]]
    longest: ClassVar[int] = 0
    runs: ClassVar[int] = 0
    last_failure: ClassVar[tuple[Action, ...] | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.system = system_of(self.design, self.bounds)
        self.state: State = self.system.initial()
        self.actions: list[Action] = []
        self.states: list[State] = [self.state]
        self.seen: list[tuple[str, ...]] = []
        self.moves: Moves = moves_of(self.design, self.bounds, self.state)
        self.visited.add(self.state)
        type(self).runs += 1

    # ----- choosing and taking a move -----------------------------------------------------

    def _choose(self, data: st.DataObject) -> Move:
        """Let Hypothesis pick who moves (by weight), then one of its enabled actions by label."""
        groups = tuple(group for group in GROUPS if self.moves[group])
        odds = tuple(group for group in groups for _ in range(self.weights[group]))
        who = odds[0] if odds else groups[0]
        if len(set(odds)) > 1:
            who = data.draw(one_of_these(odds), label="who")
        options = self.moves[who]
        if len(options) == 1:
            return next(iter(options.values()))
        return options[data.draw(one_of_these(tuple(sorted(options))), label="action")]

    def _take(self, move: Move) -> None:
        """Take an enabled move, record it, and check the properties on the transition."""
        assert self.system.is_enabled(self.state, move.rule), move.rule.action.label()
        self.state = move.after
        self.actions.append(move.rule.action)
        self.states.append(self.state)
        self.seen.append(move.violations)
        note(step_note(move))
        self.moves = moves_of(self.design, self.bounds, self.state)
        self.visited.add(self.state)
        type(self).longest = max(type(self).longest, len(self.actions))
        broken = sorted(self.must_hold.intersection(move.violations))
        assert not broken, (
            f"{', '.join(broken)} must hold but step {len(self.actions)} violates it: "
            f"{labels(self.actions)}"
        )
        if self.target is not None and self.target in move.violations:
            type(self).last_failure = tuple(self.actions)
            raise ViolationFound(self.target, self.actions, move.violations)

    # ----- the one rule: take an enabled action ---------------------------------------------

    @rule(data=st.data())
    def step(self, data: st.DataObject) -> None:
        """Take one enabled action instance; once none is enabled the run has ended (a no-op).

        docs/model.md#actions calls a state without enabled actions a normal end of a run;
        Hypothesis still asks for steps up to `stateful_step_count`, and they do nothing.
        """
        if any(self.moves.values()):
            self._take(self._choose(data))

    # ----- checks -----------------------------------------------------------------------

    @invariant()
    def state_is_consistent(self) -> None:
        """The machine's optional invariant on every reached state, the initial one included."""
        check = type(self).check_state
        if check is not None:
            problem = check(self.system.layout.as_dict(self.state))
            assert problem is None, f"after {labels(self.actions) or 'no step'}: {problem}"

    def teardown(self) -> None:
        """Optionally replay the run through the explorer's trace interpreter and compare."""
        if self.replay_at_end:
            compare_with_replay(self.design, self.bounds, self.actions, self.states, self.seen)


def compare_with_replay(
    design: Design,
    bounds: Bounds,
    actions: Sequence[Action],
    states: Sequence[State],
    seen: Sequence[tuple[str, ...]],
) -> None:
    """Assert that `model.formats.trace.replay` of the run gives the same states and violations."""
    from model.formats.trace import replay

    trace = replay(design, bounds, actions)
    assert trace.states() == list(states), f"replay reaches other states: {labels(actions)}"
    assert [step.violations for step in trace.steps] == list(seen), (
        f"replay reports other violations: {labels(actions)}"
    )


def machine_for(
    design: Design,
    bounds: Bounds,
    *,
    must_hold: frozenset[str] = frozenset(),
    target: str | None = None,
    check_state: Callable[[dict[str, int]], str | None] | None = None,
    replay_at_end: bool = False,
    name: str = "Machine",
) -> type[FencingMachine]:
    """A concrete machine class for one design, bounds and set of checks."""
    attributes = {
        "design": design,
        "bounds": bounds,
        "must_hold": must_hold,
        "target": target,
        "check_state": staticmethod(check_state) if check_state else None,
        "replay_at_end": replay_at_end,
        "visited": set(),
    }
    return type(name, (FencingMachine,), attributes)


@dataclass(frozen=True)
class Found:
    """What a Hypothesis search found: the run, and the properties its last step violates."""

    actions: tuple[Action, ...]
    violations: tuple[str, ...]


def find_violation(machine: type[FencingMachine], budget: settings) -> Found | None:
    """Run the target machine under Hypothesis; the violating run it reports, or None.

    Any other failure (a must-hold property broken, an invariant) propagates.
    """
    try:
        run_state_machine_as_test(machine, settings=budget)
    except ViolationFound as found:
        return Found(found.actions, found.violations)
    return None


__all__ = ["GROUPS", "WEIGHTS", "group_of", "max_run_length"]
