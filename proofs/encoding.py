"""The z3 encoding of a design: symbolic states, the transition relation and violations.

Nothing here restates the rules. A symbolic state is one z3 `Int` per layout column,
wrapped in the same `Vars` the step interpreter and the explorer use, and the transition
relation is built by calling each `Rule`'s own guard and effect on it. A change to a rule
in `model/rules.py` therefore changes every engine at once.

Each step also has an action-choice variable `act@k` (the index of the rule taken), so a
model names the action instance of every transition, and a counterexample is a list of
`Action`s that replays through `System`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Final

import z3

from model.actions import Action, ActionKind
from model.design import Bounds, Design
from model.layout import Layout, Vars
from model.properties import PROPERTIES, Property
from model.rules import Rule, RuleBuilder

DEFAULT_RLIMIT: Final = 50_000_000
"""Deterministic z3 resource budget of one solver call (z3's `rlimit`)."""

DEFAULT_TIMEOUT_MS: Final = 60_000
"""Wall-clock budget of one solver call, in milliseconds."""

_PROBE_SMALL: Final = (2, 2)
_PROBE_LARGE: Final = (3, 3)
"""Two (horizon, grants) settings: a column whose domain differs between them grows with T or G."""


@dataclass(frozen=True)
class SymState:
    """One step of a symbolic run: a z3 term per column and the choice of the next action."""

    step: int
    values: tuple[z3.ExprRef, ...]
    act: z3.ExprRef

    def vars(self, layout: Layout) -> Vars:
        """The state seen through the rules' own accessor (`s.now`, `s.tok[w]`)."""
        return Vars(layout, self.values)


def growing_columns(design: Design, bounds: Bounds) -> frozenset[str]:
    """Columns whose domain depends on the horizon T or the grant bound G.

    These are the columns left unbounded above when time and grants are lifted; the others
    (holder, sent, pending, phase, restart counters, unused columns) keep their exact range.
    """
    small = Layout.of(design, replace(bounds, horizon=_PROBE_SMALL[0], grants=_PROBE_SMALL[1]))
    large = Layout.of(design, replace(bounds, horizon=_PROBE_LARGE[0], grants=_PROBE_LARGE[1]))
    sizes_small = dict(zip(small.columns, small.sizes, strict=True))
    sizes_large = dict(zip(large.columns, large.sizes, strict=True))
    columns = Layout.of(design, bounds).columns
    return frozenset(c for c in columns if sizes_small.get(c) != sizes_large.get(c))


def solver(rlimit: int = DEFAULT_RLIMIT, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> z3.Solver:
    """A fresh solver with a deterministic resource limit and a wall-clock timeout per call."""
    result = z3.Solver()
    result.set("rlimit", rlimit)
    result.set("timeout", timeout_ms)
    return result


@dataclass(frozen=True)
class Encoding:
    """The z3 view of one design within bounds (or with time and grants lifted)."""

    design: Design
    bounds: Bounds
    unbounded: bool = False
    only: tuple[ActionKind, ...] | None = None
    """If given, keep only the rules whose action name is listed (e.g. the receiver's)."""
    bitvectors: bool = False
    """Encode columns as small bit-vectors (bounded only): z3 bit-blasts them, which is much
    faster for bounded model checking than integer arithmetic."""
    layout: Layout = field(init=False, repr=False, compare=False)
    rules: tuple[Rule, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "layout", Layout.of(self.design, self.bounds))
        every = RuleBuilder.of(self.design, self.bounds, unbounded=self.unbounded).rules()
        if self.only is not None:
            every = tuple(rule for rule in every if rule.action.name in self.only)
        object.__setattr__(self, "rules", every)
        if self.bitvectors and self.unbounded:
            raise ValueError("bit-vectors need bounded domains: use integers with unbounded=True")

    @cached_property
    def width(self) -> int:
        """Bits per column: room for the largest domain value plus a sum, as a signed number."""
        return max(self.layout.sizes).bit_length() + 2

    @cached_property
    def act_width(self) -> int:
        """Bits of the action-choice variable (unsigned, one value per rule)."""
        return max(1, len(self.rules).bit_length())

    @cached_property
    def properties(self) -> tuple[Property, ...]:
        """The properties P1..P6, as the step interpreter checks them."""
        return tuple(PROPERTIES)

    @cached_property
    def unbounded_columns(self) -> frozenset[str]:
        """Columns with no upper bound in this encoding (none unless time and grants are lifted)."""
        return growing_columns(self.design, self.bounds) if self.unbounded else frozenset()

    # ----- states -------------------------------------------------------------------

    def state(self, step: int, tag: str = "") -> SymState:
        """Fresh symbolic state number `step`; `tag` keeps several runs apart in one solver."""
        values = tuple(self._variable(f"{tag}{c}@{step}", c) for c in self.layout.columns)
        if self.bitvectors:
            return SymState(step, values, z3.BitVec(f"{tag}act@{step}", self.act_width))
        return SymState(step, values, z3.Int(f"{tag}act@{step}"))

    def _variable(self, name: str, column: str) -> z3.ExprRef:
        """A column's term: a fresh variable, or the constant 0 for a column the design never
        uses (domain of size 1), which lets z3 fold away whatever reads it."""
        if column not in self.unbounded_columns and self.size(column) == 1:
            return self.term(0)
        return z3.BitVec(name, self.width) if self.bitvectors else z3.Int(name)

    def size(self, column: str) -> int:
        """Number of values a column takes within the bounds."""
        return self.layout.sizes[self.layout.index[column]]

    def run(self, length: int, tag: str = "") -> list[SymState]:
        """States 0..length of one symbolic run."""
        return [self.state(step, tag) for step in range(length + 1)]

    def named_state(self) -> Vars:
        """A state whose variables are named by column only, for printing formulas."""
        return Vars(self.layout, [z3.Int(column) for column in self.layout.columns])

    def column_domain(self, column: str, value: z3.ExprRef) -> z3.BoolRef:
        """The range of one column: 0..size-1, or just >= 0 for a lifted column."""
        if column in self.unbounded_columns:
            return value >= 0
        size = self.size(column)
        if size == 1:
            return value == 0
        if self.bitvectors:
            return z3.ULT(value, size)
        return z3.And(value >= 0, value <= size - 1)

    def domain(self, state: SymState) -> z3.BoolRef:
        """Every column of the state lies in its domain."""
        pairs = zip(self.layout.columns, state.values, strict=True)
        return z3.And([self.column_domain(c, v) for c, v in pairs])

    def initial(self, state: SymState) -> z3.BoolRef:
        """The initial state: every variable 0."""
        return z3.And([value == 0 for value in state.values])

    def equals(self, state: SymState, concrete: Sequence[int]) -> z3.BoolRef:
        """The symbolic state takes exactly these concrete values."""
        return z3.And([v == int(c) for v, c in zip(state.values, concrete, strict=True)])

    # ----- transitions --------------------------------------------------------------

    def choice(self, state: SymState) -> z3.BoolRef:
        """The action choice names one of this encoding's rules."""
        if self.bitvectors:
            return z3.ULT(state.act, len(self.rules))
        return z3.And(state.act >= 0, state.act < len(self.rules))

    def transition(self, pre: SymState, post: SymState) -> z3.BoolRef:
        """One step: the chosen rule's guard holds and every column takes its effect or keeps.

        Written functionally: each post column equals an if-then-else over the rules that
        write it, which z3 handles better than a disjunction of whole frames.
        """
        view = pre.vars(self.layout)
        guards = []
        writes: dict[str, list[tuple[int, z3.ExprRef]]] = {c: [] for c in self.layout.columns}
        for number, rule in enumerate(self.rules):
            guards.append(z3.Implies(pre.act == number, _as_bool(rule.guard(view))))
            for column, value in rule.effect(view).items():
                writes[column].append((number, self.term(value)))
        frame = []
        for column, old, new in zip(self.layout.columns, pre.values, post.values, strict=True):
            term: z3.ExprRef = old
            for number, value in reversed(writes[column]):
                term = z3.If(pre.act == number, value, term)
            frame.append(new == term)
        return z3.And(self.choice(pre), *guards, *frame)

    def fires(self, state: SymState, number: int) -> z3.BoolRef:
        """Rule `number` is the one taken from this state, and its guard holds."""
        rule = self.rules[number]
        return z3.And(state.act == number, _as_bool(rule.guard(state.vars(self.layout))))

    def violation(self, prop: Property, state: SymState) -> z3.BoolRef:
        """The transition chosen at this state is enabled and breaks the property."""
        return self._any_rule(state, prop.violated)

    def trigger(self, prop: Property, state: SymState) -> z3.BoolRef:
        """The transition chosen at this state is enabled and is one the property speaks of."""
        return self._any_rule(state, prop.triggered)

    def _any_rule(self, state: SymState, condition: Callable[[Vars, Rule], object]) -> z3.BoolRef:
        """Some enabled rule, the one chosen at this state, meets the condition."""
        view = state.vars(self.layout)
        cases = []
        for number, rule in enumerate(self.rules):
            met = condition(view, rule)
            if isinstance(met, bool) and not met:
                continue
            cases.append(z3.And(self.fires(state, number), _as_bool(met)))
        return z3.Or(cases) if cases else z3.BoolVal(False)

    # ----- reading models -----------------------------------------------------------

    def concrete(self, model: z3.ModelRef, state: SymState) -> tuple[int, ...]:
        """The values a model gives a symbolic state."""
        return tuple(_model_int(model, v) for v in state.values)

    def action(self, model: z3.ModelRef, state: SymState) -> Action:
        """The action instance a model chooses at this state."""
        return self.rules[_model_int(model, state.act)].action

    def term(self, value: object) -> z3.ExprRef:
        """An effect value as a term of this encoding's sort (rules leave constants as ints)."""
        if isinstance(value, int):
            return z3.BitVecVal(value, self.width) if self.bitvectors else z3.IntVal(value)
        if self.bitvectors and z3.is_int(value):
            return z3.Int2BV(value, self.width)  # e.g. `select(c, 0, 0)` folds to an Int term
        return value  # type: ignore[return-value]

    def after(self, rule: Rule, values: Sequence[z3.ExprRef]) -> tuple[z3.ExprRef, ...]:
        """The column values after a rule's effect (no guard), for commutation checks."""
        changes = rule.effect(Vars(self.layout, values))
        return tuple(
            self.term(changes[c]) if c in changes else v
            for c, v in zip(self.layout.columns, values, strict=True)
        )

    def guard(self, rule: Rule, values: Sequence[z3.ExprRef]) -> z3.BoolRef:
        """A rule's guard on these column values."""
        return _as_bool(rule.guard(Vars(self.layout, values)))


def _model_int(model: z3.ModelRef, term: z3.ExprRef) -> int:
    """An integer value from a model (unconstrained terms read as 0)."""
    value = model.eval(term, model_completion=True)
    return int(value.as_long())


def _as_bool(cond: object) -> z3.BoolRef:
    """A rule's condition as a z3 Bool (rules fold constants to Python bools)."""
    if isinstance(cond, bool):
        return z3.BoolVal(cond)
    return cond  # type: ignore[return-value]
