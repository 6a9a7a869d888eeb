"""Hypothesis stateful testing with one Hypothesis rule per rule of the model.

`rules_machine` builds a `RuleBasedStateMachine` from the step interpreter: every action
instance of a design within bounds (`System.rules`: `Acquire(W1)`, `Send(W2)`, `Tick`, …)
becomes a Hypothesis rule named after it (`Acquire_W1`), whose precondition is the rule's
guard and whose body takes the step. A step must never violate a property the explorer
says holds, and the property under test fails the run at its first violation. Hypothesis
picks among the enabled rules by itself, with its own odds, so these tests share nothing
with the product's searches but the step interpreter. A failure is reported as a program,
one call per step (`state.Acquire_W1()`); read back, it must replay through
`model.formats.trace.replay` to the violation, no shorter than the explorer's shortest run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import ClassVar

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule, run_state_machine_as_test

from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.formats.trace import replay
from model.presets import PRESETS
from model.rules import Action, Rule
from model.system import State, System
from tests.machines import exploration_of, max_run_length, search_settings, system_of

SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)


def method_name(action: Action) -> str:
    """A rule's name as a Python method: `Acquire(W1)` → `Acquire_W1`, `Tick` → `Tick`."""
    return re.sub(r"\W+", "_", action.label()).strip("_")


class ModelRules(RuleBasedStateMachine):
    """One run of a design within bounds; `rules_machine` adds a Hypothesis rule per rule."""

    system: ClassVar[System]
    must_hold: ClassVar[frozenset[str]]
    target: ClassVar[str | None]
    visited: ClassVar[set[State]]

    def __init__(self) -> None:
        super().__init__()
        self.state = self.system.initial()
        self.actions: list[Action] = []
        self.visited.add(self.state)

    def take(self, model_rule: Rule) -> None:
        """Take an enabled rule; check the properties the step breaks."""
        broken = set(self.system.violations(self.state, model_rule))
        self.state = self.system.apply(self.state, model_rule)
        self.actions.append(model_rule.action)
        self.visited.add(self.state)
        assert not broken & self.must_hold, f"{sorted(broken & self.must_hold)} must hold"
        assert self.target not in broken, f"{self.target} violated at step {len(self.actions)}"

    def nothing_enabled(self) -> bool:
        """Whether the run has ended: no rule of the model is enabled."""
        return not self.system.enabled(self.state)

    @precondition(nothing_enabled)
    @rule()
    def run_has_ended(self) -> None:
        """Hypothesis may ask for more steps than a run has: then nothing happens."""


def _rule_method(model_rule: Rule) -> Callable[[ModelRules], None]:
    """The Hypothesis rule of one rule of the model: enabled when its guard holds."""

    def step(self: ModelRules) -> None:
        self.take(model_rule)

    step.__name__ = step.__qualname__ = method_name(model_rule.action)
    step.__doc__ = f"Take {model_rule.action.label()}."
    enabled = precondition(lambda self: self.system.is_enabled(self.state, model_rule))
    return enabled(rule()(step))  # type: ignore[no-any-return]


def rules_machine(
    design: Design, bounds: Bounds, *, target: str | None = None, must_hold: frozenset[str]
) -> type[ModelRules]:
    """The machine of a design within bounds, with one Hypothesis rule per rule."""
    system = system_of(design, bounds)
    methods = {method_name(r.action): _rule_method(r) for r in system.rules}
    attributes = {"system": system, "must_hold": must_hold, "target": target, "visited": set()}
    return type("Model", (ModelRules,), {**attributes, **methods})


def holding(design: Design, bounds: Bounds) -> frozenset[str]:
    """The properties the explorer says hold."""
    verdicts = exploration_of(design, bounds).verdicts
    return frozenset(name for name, verdict in verdicts.items() if verdict.holds)


def test_every_rule_of_the_model_is_a_hypothesis_rule() -> None:
    """One Hypothesis rule per action instance, named after it (the restarts of a volatile
    mark included)."""
    system = system_of(PRESETS["volatile-hwm"].design, REFERENCE_BOUNDS)
    machine = rules_machine(system.design, REFERENCE_BOUNDS, must_hold=frozenset())
    names = {method_name(r.action) for r in system.rules}
    assert len(names) == len(system.rules) and {"Acquire_W1", "Send_W2", "Tick"} <= names
    assert all(callable(vars(machine)[name]) for name in names)
    assert [vars(machine)[name].__doc__ for name in sorted(names)] == [
        f"Take {r.action.label()}."
        for r in sorted(system.rules, key=lambda r: method_name(r.action))
    ]


def program_of(error: BaseException, system: System) -> list[Action]:
    """The run of the program Hypothesis printed for a failure, as actions."""
    action_of = {method_name(r.action): r.action for r in system.rules}
    calls = re.findall(r"^state\.(\w+)\(\)$", "\n".join(getattr(error, "__notes__", [])), re.M)
    return [action_of[call] for call in calls if call in action_of]


@pytest.mark.parametrize(
    ("preset", "target", "bounds"),
    [
        ("lease-only", "P1", SMALL),
        ("fencing-strict", "P4", REFERENCE_BOUNDS),
        ("volatile-counter", "P2", SMALL),
    ],
    ids=["lease-only-P1", "fencing-strict-P4", "volatile-counter-P2"],
)
@pytest.mark.slow
def test_hypothesis_finds_the_violation_and_its_program_replays(
    preset: str, target: str, bounds: Bounds
) -> None:
    """The printed program is the run: replayed, its last step is its first violation of
    the property, no property the explorer says holds breaks on the way, and it is no
    shorter than the explorer's shortest run."""
    design = PRESETS[preset].design
    shortest = exploration_of(design, bounds).verdicts[target].shortest
    assert shortest is not None
    machine = rules_machine(design, bounds, target=target, must_hold=holding(design, bounds))
    budget = search_settings(400, steps=max_run_length(design, bounds) + 1)
    with pytest.raises(AssertionError, match=f"{target} violated at step") as failed:
        run_state_machine_as_test(machine, settings=budget)
    run = program_of(failed.value, machine.system)
    steps = int(re.search(r"at step (\d+)", str(failed.value)).group(1))  # type: ignore[union-attr]
    assert len(run) == steps >= shortest
    trace = replay(design, bounds, run)
    first = trace.first_violation(target)
    assert first is not None and first.number == len(run)
    assert not set().union(*(step.violations for step in trace.steps)) & holding(design, bounds)


@pytest.mark.parametrize("preset", ["fencing", "keepalive-fencing"])
@pytest.mark.slow
def test_properties_that_hold_never_fail_whatever_rule_hypothesis_takes(preset: str) -> None:
    """Runs whose every step is a rule Hypothesis picked never break a property that
    holds, and they are not trivial: together they reach at least 300 distinct states."""
    design = PRESETS[preset].design
    machine = rules_machine(design, REFERENCE_BOUNDS, must_hold=holding(design, REFERENCE_BOUNDS))
    budget = settings(
        search_settings(60, steps=max_run_length(design, REFERENCE_BOUNDS) + 1),
        phases=[Phase.generate],
    )
    run_state_machine_as_test(machine, settings=budget)
    assert len(machine.visited) >= 300, len(machine.visited)


def test_a_property_that_fails_fails_the_machine() -> None:
    """The never-fails test above can fail: demanding P1 of receiver none fails a run."""
    design = Design(receiver="none")
    machine = rules_machine(design, SMALL, must_hold=frozenset({"P1"}))
    budget = settings(search_settings(300, steps=20), phases=[Phase.generate])
    with pytest.raises(AssertionError, match=r"\['P1'\] must hold"):
        run_state_machine_as_test(machine, settings=budget)
