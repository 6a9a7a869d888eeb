"""The bounded system in z3: its inductive invariant, and k-induction within the bounds.

The bounded system is the design's bit-vector encoding within its bounds: the initial
state (every variable 0), the bounded rules, and every state inside the layout's column
domains (the model's state space: the explorer refuses any state outside it, so no
reachable state is lost by requiring them). Its verdicts are about exactly the runs the
explorer enumerates, so "holds" here equals the explorer's "holds" at these bounds.

Two ways to conclude that a property holds without unrolling to the explorer's depth:

* *Induction*: Houdini keeps the largest subset of `proofs.invariants`' candidates that
  holds initially and is closed under every bounded step (checked here, on the bounded
  system itself, so no claim about the unbounded system is needed). No state keeping it
  has an enabled step that breaks the property: the property holds in every reachable
  state.
* *k-induction*: the property cannot break right after k consecutive non-breaking steps
  between states that keep the invariant (the step case), and BMC found no violation in
  the first k steps from the initial state (the base case, see `proofs.bmc`). Together:
  no run of any length breaks it. The step case ranges over arbitrary invariant states,
  not just reachable ones, so it is a proof, never a guess.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import z3

from model.properties import Property
from proofs.encoding import Encoding, SymState, solver
from proofs.invariants import CATALOG, Builder, Context

INDUCTION: Final = "induction"
K_INDUCTION: Final = "k-induction"


@dataclass(frozen=True)
class Invariant:
    """The candidates kept by Houdini on the bounded system (conjoined, an inductive invariant)."""

    encoding: Encoding
    builders: tuple[Builder, ...]
    context: Context
    failure: str | None = None

    def holds(self, state: SymState) -> z3.BoolRef:
        """The invariant (and the column domains) on one symbolic state."""
        view = state.vars(self.encoding.layout)
        kept = [_lemma(builder, view, self.context) for builder in self.builders]
        return z3.And(self.encoding.domain(state), *kept)

    @property
    def names(self) -> tuple[str, ...]:
        """The kept candidates' names, in catalog order."""
        return tuple(builder.__name__ for builder in self.builders)


def context_of(encoding: Encoding) -> Context:
    """The builders' context: the design, the workers and the columns that can vary."""
    sample = encoding.state(0, tag="ctx:")
    pairs = zip(encoding.layout.columns, sample.values, strict=True)
    used = frozenset(c for c, v in pairs if not z3.is_bv_value(v) and not z3.is_int_value(v))
    return Context(encoding.design, encoding.bounds.workers, used, encoding.bounds.lease)


def bounded_invariant(
    encoding: Encoding,
    rlimit: int,
    timeout_ms: int,
    catalog: tuple[Builder, ...] = CATALOG,
) -> Invariant:
    """Houdini on the bounded system: drop candidates until the rest is closed under a step.

    A candidate that fails in the initial state is dropped first; then, while some step
    from a state keeping every remaining candidate breaks one of them, the broken ones are
    dropped. If z3 gives up, the invariant is just the domains (still sound, only weaker).
    """
    context = context_of(encoding)
    pre, post = encoding.state(0, tag="inv:"), encoding.state(1, tag="inv:")
    views = pre.vars(encoding.layout), post.vars(encoding.layout)
    usable = [b for b in catalog if b(views[0], context) is not None]
    befores = [_lemma(b, views[0], context) for b in usable]
    afters = [_lemma(b, views[1], context) for b in usable]
    zero = [(v, encoding.term(0)) for v in pre.values if not z3.is_bv_value(v)]
    kept = [i for i, f in enumerate(befores) if z3.is_true(z3.simplify(z3.substitute(f, *zero)))]
    flags = [z3.Bool(f"inv:use:{i}") for i in range(len(usable))]
    step = solver(rlimit, timeout_ms)
    step.add(encoding.domain(pre), encoding.domain(post), encoding.transition(pre, post))
    for flag, before in zip(flags, befores, strict=True):
        step.add(z3.Implies(flag, before))
    step.add(z3.Or([z3.And(f, z3.Not(a)) for f, a in zip(flags, afters, strict=True)] or [False]))
    while kept:
        on = set(kept)
        verdict = step.check(*[f if i in on else z3.Not(f) for i, f in enumerate(flags)])
        if verdict == z3.unsat:
            break
        if verdict == z3.unknown:
            reason = f"z3 gave up finding the invariant: {step.reason_unknown()}"
            return Invariant(encoding, (), context, reason)
        model = step.model()
        kept = [i for i in kept if z3.is_true(model.eval(afters[i], True))]
    return Invariant(encoding, tuple(usable[i] for i in kept), context)


def proved_by_invariant(
    invariant: Invariant, prop: Property, rlimit: int, timeout_ms: int
) -> z3.CheckSatResult:
    """unsat when no state keeping the invariant has an enabled step breaking the property."""
    state = invariant.encoding.state(0, tag="ind:")
    check = solver(rlimit, timeout_ms)
    check.add(invariant.holds(state), invariant.encoding.violation(prop, state))
    return check.check()


def step_case(
    invariant: Invariant, prop: Property, k: int, rlimit: int, timeout_ms: int
) -> z3.CheckSatResult:
    """k-induction's step case: unsat when k non-breaking steps cannot be followed by a break.

    The states are arbitrary states keeping the invariant (not only reachable ones) and
    pairwise distinct (a run that repeats a state has a shorter one with the same end), so
    each larger k is a strictly stronger attempt.
    """
    encoding = invariant.encoding
    states = encoding.run(k, tag=f"kind{k}:")
    check = solver(rlimit, timeout_ms)
    for state in states:
        check.add(invariant.holds(state))
    for pre, post in itertools.pairwise(states):
        check.add(encoding.transition(pre, post), z3.Not(encoding.violation(prop, pre)))
    check.add(encoding.violation(prop, states[-1]))
    check.add(_distinct(states))
    return check.check()


def _distinct(states: Sequence[SymState]) -> z3.BoolRef:
    """Every two states differ in some column (a simple path)."""
    facts = []
    for first, second in itertools.combinations(states, 2):
        pairs = zip(first.values, second.values, strict=True)
        facts.append(z3.Or([a != b for a, b in pairs if not z3.is_bv_value(a)] or [False]))
    return z3.And(facts)


def _lemma(builder: Builder, view: object, context: Context) -> z3.BoolRef:
    """A candidate on one state (every catalog builder used here applies to the design)."""
    result = builder(view, context)  # type: ignore[arg-type]
    return z3.BoolVal(True) if result is None else result
