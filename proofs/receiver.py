"""The receiver's rule alone: why an atomic fenced check keeps accepted tokens in order.

The proof is built from the same `Deliver` rule the explorer runs: its guard, its effect on
`hwm` and `last`, and P1's own violation condition. The incoming token is an arbitrary
symbolic integer and the receiver's state an arbitrary pair with `last <= hwm`, so one
inductive step covers every sequence of incoming tokens; it is checked for every worker
of every team size the model allows, and no other action writes `hwm` or `last`.

For the non-atomic receiver (`fenced-nonatomic`), z3 searches the receiver's `Check` and
`Apply` steps alone, from a fresh receiver and two in-flight writes with arbitrary tokens,
and finds the interleaving where both checks pass before either write lands.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Final

import z3

from model.actions import Action, ActionKind
from model.design import MAX_WORKERS, Bounds, Design, Receiver
from model.layout import slot
from model.properties import BY_NAME
from proofs.encoding import DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS, Encoding, SymState, solver

RECEIVER_COLUMNS: Final = ("hwm", "last")
"""The receiver's state in the proof: its high-water mark and the last accepted token."""

NONATOMIC_MAX_STEPS: Final = 6
"""Receiver steps searched for the non-atomic counterexample."""

_BASE: Final = Bounds(workers=1, lease=1, horizon=1, grants=1, writes=1)


@dataclass(frozen=True)
class Obligation:
    """One claim of the receiver proof and z3's answer for it."""

    claim: str
    status: str
    detail: str = ""


@dataclass(frozen=True)
class Step:
    """One receiver step of the non-atomic counterexample, with the receiver state after it."""

    action: Action
    token: int
    hwm: int
    last: int
    breaks_p1: bool


@dataclass(frozen=True)
class ReceiverReport:
    """The fenced receiver's P1 proof and the non-atomic receiver's counterexample."""

    obligations: tuple[Obligation, ...]
    tokens: dict[int, int]
    steps: tuple[Step, ...]
    seconds: float

    @property
    def proved(self) -> bool:
        """Every obligation of the atomic receiver's proof was discharged."""
        return all(o.status == "proved" for o in self.obligations)


def _verdict(claim: str, negation: z3.BoolRef, rlimit: int, timeout_ms: int) -> Obligation:
    """Prove a claim by showing its negation unsatisfiable (within budget)."""
    check = solver(rlimit, timeout_ms)
    check.add(negation)
    answer = check.check()
    if answer == z3.unsat:
        return Obligation(claim, "proved")
    if answer == z3.sat:
        return Obligation(claim, "refuted", str(check.model()))
    return Obligation(claim, "unknown", f"z3 gave up: {check.reason_unknown()}")


def _delivery_obligations(workers: int, rlimit: int, timeout_ms: int) -> list[Obligation]:
    """Each Deliver(w) keeps last <= hwm and never accepts a token below last."""
    bounds = Bounds(workers=workers, lease=1, horizon=1, grants=1, writes=1)
    encoding = Encoding(Design(), bounds, unbounded=True, only=(ActionKind.DELIVER,))
    pre, post = encoding.state(0), encoding.state(1)
    s, p1 = pre.vars(encoding.layout), BY_NAME["P1"]
    keeps = z3.And(s.last <= s.hwm, s.hwm >= 0, s.last >= 0)
    found = []
    for number, rule in enumerate(encoding.rules):
        w = rule.action.worker
        start = z3.And(keeps, s.tok[w] >= 0, pre.act == number)
        after = post.vars(encoding.layout)
        step = z3.And(start, encoding.transition(pre, post))
        found.append(
            _verdict(
                f"W={workers}: {rule.action.label()} keeps last ≤ hwm",
                z3.And(step, z3.Not(after.last <= after.hwm)),
                rlimit,
                timeout_ms,
            )
        )
        claim = f"W={workers}: {rule.action.label()} never accepts a token below last (P1)"
        obligation = _verdict(claim, z3.And(start, encoding.violation(p1, pre)), rlimit, timeout_ms)
        accepting = z3.And(start, _as_bool(rule.write_accepted(s)))
        found.append(_unless_vacuous(obligation, accepting, rlimit, timeout_ms))
    return found


def _as_bool(cond: object) -> z3.BoolRef:
    """A rule's condition as a z3 formula (constants included)."""
    return cond if isinstance(cond, z3.BoolRef) else z3.BoolVal(bool(cond))


def _unless_vacuous(
    obligation: Obligation, premise: z3.BoolRef, rlimit: int, timeout_ms: int
) -> Obligation:
    """A proved "never" claim is vacuous when no step it speaks of is possible at all."""
    if obligation.status != "proved":
        return obligation
    check = solver(rlimit, timeout_ms)
    check.add(premise)
    answer = check.check()
    if answer == z3.sat:
        return obligation
    detail = (
        "no step it speaks of is possible, so the proof says nothing"
        if answer == z3.unsat
        else f"z3 could not find a step it speaks of: {check.reason_unknown()}"
    )
    return Obligation(obligation.claim, "vacuous" if answer == z3.unsat else "unknown", detail)


def _others_leave_receiver(workers: int) -> Obligation:
    """No action but the receiver's writes `hwm` or `last` (read off the rules' effects)."""
    bounds = Bounds(workers=workers, lease=1, horizon=1, grants=1, writes=1)
    encoding = Encoding(Design(), bounds, unbounded=True)
    view = encoding.state(0).vars(encoding.layout)
    writers = sorted(
        rule.action.label()
        for rule in encoding.rules
        if not rule.action.row.reception and set(rule.effect(view)) & set(RECEIVER_COLUMNS)
    )
    claim = f"W={workers}: only the receiver writes hwm and last"
    if writers:
        return Obligation(claim, "refuted", ", ".join(writers))
    return Obligation(claim, "proved")


def prove_fenced_receiver(
    rlimit: int = DEFAULT_RLIMIT, timeout_ms: int = DEFAULT_TIMEOUT_MS
) -> list[Obligation]:
    """The atomic fenced receiver keeps accepted tokens non-decreasing, for every team size."""
    encoding = Encoding(Design(), _BASE, unbounded=True)
    start = encoding.state(0)
    s = start.vars(encoding.layout)
    found = [
        _verdict(
            "initially last ≤ hwm",
            z3.And(encoding.initial(start), z3.Not(s.last <= s.hwm)),
            rlimit,
            timeout_ms,
        )
    ]
    for workers in range(1, MAX_WORKERS + 1):
        found.append(_others_leave_receiver(workers))
        found.extend(_delivery_obligations(workers, rlimit, timeout_ms))
    return found


def nonatomic_counterexample(
    rlimit: int = DEFAULT_RLIMIT, timeout_ms: int = DEFAULT_TIMEOUT_MS
) -> tuple[dict[int, int], tuple[Step, ...]]:
    """The shortest run of Check/Apply steps alone that breaks P1 at a non-atomic receiver."""
    bounds = Bounds(workers=2, lease=1, horizon=1, grants=1, writes=1)
    encoding = Encoding(
        Design(receiver=Receiver.FENCED_NONATOMIC),
        bounds,
        unbounded=True,
        only=(ActionKind.CHECK, ActionKind.APPLY),
    )
    for length in range(1, NONATOMIC_MAX_STEPS + 1):
        states = encoding.run(length - 1, tag="na:")
        check = solver(rlimit, timeout_ms)
        check.add(_in_flight(encoding, states[0]))
        for pre, post in itertools.pairwise(states):
            check.add(encoding.transition(pre, post))
        check.add(encoding.violation(BY_NAME["P1"], states[-1]))
        if check.check() == z3.sat:
            return _story(encoding, check.model(), states)
    return {}, ()


def _in_flight(encoding: Encoding, state: SymState) -> z3.BoolRef:
    """A fresh receiver (hwm = last = 0) and one write in flight per worker, any tokens >= 1."""
    s = state.vars(encoding.layout)
    facts = [s.hwm == 0, s.last == 0]
    for w in encoding.layout.workers:
        facts += [s.tok[w] >= 1, s.pending[w] == 1, s.gid[w] == s.tok[w]]
    others = {
        "hwm",
        "last",
        *(slot(f, w) for w in encoding.layout.workers for f in ("tok", "pending", "gid")),
    }
    facts += [
        v == 0
        for c, v in zip(encoding.layout.columns, state.values, strict=True)
        if c not in others
    ]
    return z3.And(facts)


def _story(
    encoding: Encoding, model: z3.ModelRef, states: list[SymState]
) -> tuple[dict[int, int], tuple[Step, ...]]:
    """The tokens in flight and each step with the receiver state after it."""
    layout, p1 = encoding.layout, BY_NAME["P1"]
    first = layout.as_dict(encoding.concrete(model, states[0]))
    tokens = {w: first[slot("tok", w)] for w in layout.workers}
    steps = []
    for pre in states:
        action = encoding.action(model, pre)
        rule = encoding.rules[_value(model, pre.act)]
        breaks = z3.is_true(model.eval(encoding.violation(p1, pre), True))
        after = dict(zip(layout.columns, encoding.after(rule, pre.values), strict=True))
        hwm, last = (_value(model, after[column]) for column in RECEIVER_COLUMNS)
        steps.append(Step(action, tokens[action.worker], hwm, last, breaks))
    return tokens, tuple(steps)


def _value(model: z3.ModelRef, term: z3.ExprRef) -> int:
    """A model's value of a term."""
    return int(model.eval(term, model_completion=True).as_long())


def prove_receiver(
    rlimit: int = DEFAULT_RLIMIT, timeout_ms: int = DEFAULT_TIMEOUT_MS
) -> ReceiverReport:
    """The receiver-only report: the atomic proof and the non-atomic counterexample."""
    started = time.perf_counter()
    obligations = tuple(prove_fenced_receiver(rlimit, timeout_ms))
    tokens, steps = nonatomic_counterexample(rlimit, timeout_ms)
    return ReceiverReport(obligations, tokens, steps, time.perf_counter() - started)
