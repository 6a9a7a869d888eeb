"""The step interpreter: one design's transition system evaluated on concrete states.

`System` is the small interface every engine shares (after Stateright): the initial
state, the enabled actions of a state, the next state, and the properties a step breaks.
States are tuples of ints laid out by `Layout`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from model.design import Bounds, Design, DesignError
from model.layout import Layout, Vars
from model.properties import PROPERTIES, Property
from model.rules import Action, Rule, RuleBuilder

State = tuple[int, ...]


@dataclass(frozen=True)
class Successor:
    """One enabled transition out of a state: the rule taken, the next state, what it breaks."""

    rule: Rule
    state: State
    violations: tuple[str, ...]


@dataclass(frozen=True)
class System:
    """A design within bounds: its layout, its action instances and its properties."""

    design: Design
    bounds: Bounds
    layout: Layout = field(init=False, repr=False, compare=False)
    builder: RuleBuilder = field(init=False, repr=False, compare=False)
    rules: tuple[Rule, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "layout", Layout.of(self.design, self.bounds))
        object.__setattr__(self, "builder", RuleBuilder.of(self.design, self.bounds))
        object.__setattr__(self, "rules", self.builder.rules())

    @property
    def properties(self) -> tuple[Property, ...]:
        """The properties P1..P6 (P5 cannot fail without read-modify-write, P6 without crashes)."""
        return PROPERTIES

    @cached_property
    def rule_of(self) -> dict[Action, Rule]:
        """The rule of each action instance."""
        return {rule.action: rule for rule in self.rules}

    def initial(self) -> State:
        """The initial state: every variable 0."""
        return self.layout.initial()

    def view(self, state: State) -> Vars:
        """Named read access to a concrete state."""
        return Vars(self.layout, state)

    def is_enabled(self, state: State, rule: Rule) -> bool:
        """Whether the rule's guard holds in the state."""
        return bool(rule.guard(self.view(state)))

    def enabled(self, state: State) -> list[Rule]:
        """The action instances enabled in the state, in the fixed rule order."""
        view = self.view(state)
        return [rule for rule in self.rules if rule.guard(view)]

    def apply(self, state: State, rule: Rule) -> State:
        """The state after taking an enabled rule."""
        values = list(state)
        index = self.layout.index
        for column, value in rule.effect(self.view(state)).items():
            values[index[column]] = int(value)
        return tuple(values)

    def violations(self, state: State, rule: Rule) -> tuple[str, ...]:
        """Names of the properties that taking the rule from this state violates."""
        view = self.view(state)
        return tuple(p.name for p in self.properties if p.violated(view, rule))

    def successors(self, state: State) -> list[Successor]:
        """Every enabled transition with its next state and violations."""
        return [
            Successor(rule, self.apply(state, rule), self.violations(state, rule))
            for rule in self.enabled(state)
        ]

    def rule_for(self, action: Action) -> Rule:
        """The rule of an action instance, or a clear error if this design has none such."""
        try:
            return self.rule_of[action]
        except KeyError:
            raise DesignError(
                f"{action.label()} is not an action of this design and bounds"
            ) from None
