"""Proofs for every horizon and grant count: 1-step induction with explicit invariants.

Time and grants are unbounded (`RuleBuilder.of(..., unbounded=True)`); the number of
workers is fixed. The invariant is the largest inductive subset (Houdini) of the column
domains and the candidates of `proofs.invariants`; a property is proved when no state
satisfying the invariant has an enabled transition that breaks it. The report names the
few candidates the proof needs. When this does not close, z3's Spacer (constrained Horn
clauses) may find an invariant itself; otherwise the answer is `unknown`, with the
counterexample to induction: a state that keeps the invariant and the action that breaks
the property from it (it may or may not be reachable).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

import z3

from model.design import Bounds, Design
from model.properties import BY_NAME, Property
from model.rules import Action
from model.verdicts import Status
from proofs.encoding import DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS, Encoding, SymState, solver
from proofs.invariants import CATALOG, Builder, Context, why
from proofs.readable import conjuncts, readable

PROVED: Final = Status.PROVED
UNKNOWN: Final = Status.UNKNOWN
INDUCTION: Final = "induction"
SPACER: Final = "spacer"

DEFAULT_SPACER_TIMEOUT_MS: Final = 20_000
"""Wall-clock budget of one Spacer (CHC) query."""


DOMAIN_REASON: Final = "Every rule keeps each variable within its range."


@dataclass(frozen=True)
class Lemma:
    """One conjunct of a candidate invariant, built on the pre- and post-state of a step."""

    name: str
    why: str
    text: str
    pre: z3.BoolRef
    post: z3.BoolRef
    domain: bool


@dataclass(frozen=True)
class Cti:
    """A counterexample to induction: a state keeping the invariant, and the breaking action."""

    state: dict[str, int]
    action: Action

    def describe(self) -> str:
        """The pre-state's non-zero variables and the action, in one line."""
        values = ", ".join(f"{k}={v}" for k, v in self.state.items() if v) or "all variables 0"
        return f"from {values}: {self.action.label()}"


@dataclass(frozen=True)
class InductionResult:
    """A property's unbounded verdict: proved (with its invariant) or unknown (with why)."""

    prop: str
    status: Status
    method: str
    invariant: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    cti: Cti | None = None
    reason: str | None = None
    seconds: float = 0.0

    @property
    def invariant_text(self) -> str | None:
        """The invariant as one readable formula (conjuncts in parentheses), or None."""
        if self.status != PROVED:
            return None
        *lemmas, domains = self.invariant
        return "; and ".join(part for part in (" ∧ ".join(lemmas), domains) if part)


class Prover:
    """Houdini over one design's unbounded transition relation, shared by its properties."""

    def __init__(
        self,
        design: Design,
        bounds: Bounds,
        *,
        catalog: tuple[Builder, ...] = CATALOG,
        rlimit: int = DEFAULT_RLIMIT,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
    ) -> None:
        self.encoding = Encoding(design, bounds, unbounded=True)
        self.rlimit, self.timeout_ms = rlimit, timeout_ms
        self.pre, self.post = self.encoding.state(0), self.encoding.state(1)
        self.lemmas = _lemmas(self.encoding, catalog, self.pre, self.post)
        self.flags = [z3.Bool(f"use:{i}") for i in range(len(self.lemmas))]
        self.failure: str | None = _missing_actions(design, bounds, self.encoding)
        self.kept = [] if self.failure else self._houdini()

    # ----- the inductive invariant --------------------------------------------------

    def _houdini(self) -> list[int]:
        """Indices of the largest inductive subset of the lemmas that hold initially."""
        kept = [i for i, lemma in enumerate(self.lemmas) if _initially(self.encoding, lemma)]
        step = self._step_solver()
        while True:
            verdict = step.check(*self._assume(kept))
            if verdict == z3.unsat:
                return kept
            if verdict == z3.unknown:
                self.failure = f"z3 gave up finding the invariant: {step.reason_unknown()}"
                return []
            model = step.model()
            kept = [i for i in kept if z3.is_true(model.eval(self.lemmas[i].post, True))]

    def _step_solver(self) -> z3.Solver:
        """A solver asking: can a step from a state keeping the used lemmas break one of them?"""
        step = solver(self.rlimit, self.timeout_ms)
        step.add(self.encoding.transition(self.pre, self.post))
        for flag, lemma in zip(self.flags, self.lemmas, strict=True):
            step.add(z3.Implies(flag, lemma.pre))
        pairs = zip(self.flags, self.lemmas, strict=True)
        step.add(z3.Or([z3.And(flag, z3.Not(lemma.post)) for flag, lemma in pairs]))
        return step

    def _assume(self, used: list[int]) -> list[z3.BoolRef]:
        """Assumptions switching exactly the used lemmas on."""
        on = set(used)
        return [f if i in on else z3.Not(f) for i, f in enumerate(self.flags)]

    # ----- one property -------------------------------------------------------------

    def prove(self, prop: Property) -> InductionResult:
        """Prove a property with the inductive invariant, and name the lemmas it needs."""
        started = time.perf_counter()
        if self.failure:
            return self._unknown(prop, self.failure, None, started)
        check = solver(self.rlimit, self.timeout_ms)
        for flag, lemma in zip(self.flags, self.lemmas, strict=True):
            check.add(z3.Implies(flag, lemma.pre))
        check.add(self.encoding.violation(prop, self.pre))
        verdict = check.check(*self._assume(self.kept))
        if verdict == z3.unknown:
            return self._unknown(prop, f"z3 gave up: {check.reason_unknown()}", None, started)
        if verdict == z3.sat:
            cti = self._cti(check.model())
            reason = "the invariant does not exclude a breaking step"
            return self._unknown(prop, reason, cti, started)
        needed = self._minimise(check)
        return InductionResult(
            prop.name,
            PROVED,
            INDUCTION,
            invariant=(*(self.lemmas[i].text for i in needed), self.domains()),
            reasons=(*(self.lemmas[i].why for i in needed), DOMAIN_REASON),
            seconds=time.perf_counter() - started,
        )

    def never_triggered(self, prop: Property) -> bool:
        """Whether the inductive invariant rules out every transition the property speaks of.

        Then a proof of it is vacuous for every horizon: nothing it checks ever happens.
        """
        if self.failure:
            return False
        check = solver(self.rlimit, self.timeout_ms)
        for flag, lemma in zip(self.flags, self.lemmas, strict=True):
            check.add(z3.Implies(flag, lemma.pre))
        check.add(self.encoding.trigger(prop, self.pre))
        return check.check(*self._assume(self.kept)) == z3.unsat

    def domains(self) -> str:
        """The kept column domains in one line: `every variable ≥ 0, holder ≤ 2, ...`."""
        tops = []
        for i in self.kept:
            lemma = self.lemmas[i]
            if lemma.domain and "≤" in lemma.text:
                tops.append(lemma.text.split(" ∧ ")[-1])
        return ", ".join(["every variable ≥ 0", *tops])

    def _minimise(self, check: z3.Solver) -> list[int]:
        """Drop strengthening lemmas one by one while the rest stays inductive and proves it.

        Column domains are kept (they are always part of the invariant, stated once)."""
        used = list(self.kept)
        step = self._step_solver()
        for i in reversed(self.kept):
            if self.lemmas[i].domain:
                continue
            trial = [j for j in used if j != i]
            if check.check(*self._assume(trial)) != z3.unsat:
                continue
            if step.check(*self._assume(trial)) == z3.unsat:
                used = trial
        return [i for i in used if not self.lemmas[i].domain]

    def _cti(self, model: z3.ModelRef) -> Cti:
        """The counterexample to induction in a model: the pre-state and the chosen action."""
        values = self.encoding.concrete(model, self.pre)
        state = self.encoding.layout.as_dict(values)
        used = self.encoding.layout.used_columns()
        shown = {k: v for k, v in state.items() if k in used}
        return Cti(shown, self.encoding.action(model, self.pre))

    def _unknown(
        self, prop: Property, reason: str, cti: Cti | None, started: float
    ) -> InductionResult:
        """An open verdict with its reason (and counterexample to induction, if any)."""
        return InductionResult(
            prop.name,
            UNKNOWN,
            INDUCTION,
            cti=cti,
            reason=reason,
            seconds=time.perf_counter() - started,
        )


def _lemmas(
    encoding: Encoding, catalog: tuple[Builder, ...], pre: SymState, post: SymState
) -> list[Lemma]:
    """Column domains and the applicable catalog candidates, each on both states."""
    layout, named = encoding.layout, encoding.named_state()
    lemmas = []
    for i, column in enumerate(layout.columns):
        if z3.is_int_value(pre.values[i]):
            continue
        text = readable(encoding.column_domain(column, named[column]))
        lemmas.append(
            Lemma(
                f"domain of {column}",
                DOMAIN_REASON,
                text,
                encoding.column_domain(column, pre.values[i]),
                encoding.column_domain(column, post.values[i]),
                domain=True,
            )
        )
    pairs = zip(layout.columns, pre.values, strict=True)
    used = frozenset(c for c, v in pairs if not z3.is_int_value(v))
    context = Context(encoding.design, encoding.bounds.workers, used, encoding.bounds.lease)
    for builder in catalog:
        shown = builder(named, context)
        if shown is None:
            continue
        lemmas.append(
            Lemma(
                builder.__name__,
                why(builder),
                " ∧ ".join(_grouped(line) for line in conjuncts(shown)),
                builder(pre.vars(layout), context),  # type: ignore[arg-type]
                builder(post.vars(layout), context),  # type: ignore[arg-type]
                domain=False,
            )
        )
    return lemmas


def _missing_actions(design: Design, bounds: Bounds, encoding: Encoding) -> str | None:
    """Why induction would be unsound here: lifting the bounds dropped some action kinds.

    (With random tokens the model makes one Acquire per token value up to G, so without a
    grant bound it makes none, and a proof would be about a system that never grants.)"""
    bounded = {rule.action.name for rule in Encoding(design, bounds).rules}
    lifted = {rule.action.name for rule in encoding.rules}
    lost = sorted(bounded - lifted)
    if not lost:
        return None
    return f"with time and grants unbounded the model has no {', '.join(lost)} action"


def _grouped(line: str) -> str:
    """A conjunct in parentheses when it is an implication, equivalence or disjunction."""
    return f"({line})" if any(symbol in line for symbol in "⇒⇔∨") else line


def _initially(encoding: Encoding, lemma: Lemma) -> bool:
    """Whether a lemma holds in the initial state (every variable 0)."""
    zero = encoding.term(0)
    pairs = [(v, zero) for v in encoding.state(0).values if not z3.is_int_value(v)]
    return z3.is_true(z3.simplify(z3.substitute(lemma.pre, *pairs)))


def prove_by_induction(
    design: Design,
    bounds: Bounds,
    names: tuple[str, ...],
    *,
    rlimit: int = DEFAULT_RLIMIT,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
) -> dict[str, InductionResult]:
    """Induction verdicts for the named properties, for every horizon and grant count."""
    prover = Prover(design, bounds, rlimit=rlimit, timeout_ms=timeout_ms)
    return {name: prover.prove(BY_NAME[name]) for name in names}


def prove_by_spacer(
    design: Design,
    bounds: Bounds,
    name: str,
    *,
    rlimit: int = DEFAULT_RLIMIT,
    timeout_ms: int = DEFAULT_SPACER_TIMEOUT_MS,
) -> InductionResult:
    """Ask z3's Spacer (constrained Horn clauses) for an invariant that proves the property.

    The clauses say: the initial state is in Inv; Inv is closed under every step; no state
    in Inv has an enabled step that breaks the property. A model of Inv is an inductive
    invariant, printed as the proof's invariant.
    """
    started = time.perf_counter()
    encoding = Encoding(design, bounds, unbounded=True)
    lost = _missing_actions(design, bounds, encoding)
    if lost:
        reason = f"Spacer not tried: {lost}, so a proof would be about a different system"
        return InductionResult(
            name, UNKNOWN, SPACER, reason=reason, seconds=time.perf_counter() - started
        )
    pre, post = encoding.state(0), encoding.state(1)
    free = [i for i, v in enumerate(pre.values) if not z3.is_int_value(v)]
    inv = z3.Function("Inv", *([z3.IntSort()] * len(free)), z3.BoolSort())
    now = inv(*[pre.values[i] for i in free])
    nxt = inv(*[post.values[i] for i in free])
    pre_vars = [pre.values[i] for i in free]
    every = [*pre_vars, *(post.values[i] for i in free), pre.act]
    horn = z3.SolverFor("HORN")
    horn.set("rlimit", rlimit)
    horn.set("timeout", timeout_ms)
    horn.add(z3.ForAll(pre_vars, z3.Implies(encoding.initial(pre), now)))
    horn.add(z3.ForAll(every, z3.Implies(z3.And(now, encoding.transition(pre, post)), nxt)))
    horn.add(
        z3.ForAll(
            [*pre_vars, pre.act],
            z3.Implies(z3.And(now, encoding.violation(BY_NAME[name], pre)), z3.BoolVal(False)),
        )
    )
    verdict = horn.check()
    seconds = time.perf_counter() - started
    if verdict == z3.sat:
        named = encoding.named_state()
        shown = horn.model().eval(inv(*[named[encoding.layout.columns[i]] for i in free]))
        lines = tuple(_grouped(line) for line in conjuncts(shown))
        return InductionResult(name, PROVED, SPACER, invariant=(*lines, ""), seconds=seconds)
    reason = (
        "Spacer found a counterexample from the initial state with time and grants unbounded"
        if verdict == z3.unsat
        else f"Spacer gave up: {horn.reason_unknown()}"
    )
    return InductionResult(name, UNKNOWN, SPACER, reason=reason, seconds=seconds)
