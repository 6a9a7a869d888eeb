"""Bounded model checking: the shortest run that breaks each property, found by z3.

States are bit-vectors (z3 bit-blasts them to SAT, far faster here than integer
arithmetic). One incremental solver holds a single run from the initial state, one step
longer at each depth, and asks at depth n (under an assumption, so the run is kept):
"can an open property break on transition n + 1?". Depths grow one by one, so the first
satisfiable query gives the shortest violation, with its run from the model's action
choices. Every state of the run is also required to keep the bounded system's inductive
invariant (`proofs.bounded`): it holds in every reachable state, so no run is lost, and it
lets the solver refute long runs early. Two reductions prune runs that have an equivalent
run of the same length and end (see `commuting_pairs` and `first_acquire_order`).

A property holds within the bounds when one of three proofs closes it, named in
`BmcResult.method`:

* `induction`: the bounded inductive invariant excludes every breaking step;
* `k-induction`: k-induction's step case on the bounded system (`proofs.bounded.step_case`),
  with BMC's first k depths as the base case;
* `bmc`: no violation in runs up to the bound, which covers every reachable transition
  when it is the explorer's depth + 1 (`safe_length`, the default).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

import z3

from model.actions import Action, ActionKind
from model.design import Bounds, Design
from model.properties import Property
from proofs.bounded import (
    INDUCTION,
    K_INDUCTION,
    Invariant,
    bounded_invariant,
    proved_by_invariant,
    step_case,
)
from proofs.encoding import DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS, Encoding, SymState, solver
from proofs.invariants import CATALOG, Builder

VIOLATED: Final = "violated"
HOLDS_WITHIN_BOUNDS: Final = "holds-within-bounds"
UNKNOWN: Final = "unknown"
BMC: Final = "bmc"

K_SCHEDULE: Final = (4, 8)
"""Induction depths k tried for a property still open once BMC has searched `K_AFTER` steps."""

K_AFTER: Final = 12
"""BMC depth after which k-induction is tried: properties still open then are likely to
hold, and a step case is cheaper than unrolling to the explorer's depth; earlier, a failed
attempt on a property that breaks a few steps later would be wasted."""

DEFAULT_K_TIMEOUT_MS: Final = 5_000
"""Wall-clock budget of one k-induction step case (a failed attempt costs at most this)."""


@dataclass(frozen=True)
class BmcResult:
    """One property's bounded verdict: violated (with a shortest run), holds, or unknown.

    `method` names the proof that settled it: `bmc` (a run, or none up to `max_length`),
    `induction` or `k-induction` (holds for runs of every length within the bounds; `k`
    is the induction depth).
    """

    prop: str
    status: str
    max_length: int
    shortest: int | None = None
    actions: tuple[Action, ...] | None = None
    reason: str | None = None
    seconds: float = 0.0
    method: str = BMC
    k: int | None = None


def diameter(design: Design, bounds: Bounds) -> int:
    """The largest BFS distance from the initial state, from the explorer (exact, no symmetry)."""
    from model.check.explorer import explore

    exploration = explore(design, bounds)
    if not exploration.complete:
        raise RuntimeError(
            f"the explorer stopped early ({exploration.stopped_by}); pass max_length explicitly"
        )
    return exploration.depth


def safe_length(design: Design, bounds: Bounds) -> int:
    """A run length that covers every reachable transition: the diameter plus one step."""
    return diameter(design, bounds) + 1


def commuting_pairs(
    encoding: Encoding, rlimit: int = DEFAULT_RLIMIT, timeout_ms: int = DEFAULT_TIMEOUT_MS
) -> frozenset[tuple[int, int]]:
    """Rule pairs (a, b), a later in rule order than b, such that `a; b` can always be swapped.

    For every state in the domain: if a is enabled and then b, then b is enabled first, a
    after it, and both orders end in the same state. Every run can then be rearranged,
    with the same length and end state, so that no such pair appears in that order (each
    swap removes one inversion of the rule order); BMC forbids those adjacent pairs in a
    run's prefix, which loses no shortest violation. Each claim is proved by z3 (one
    solver, one assumption per pair); a pair whose proof fails or runs out is not used.
    """
    pre = encoding.state(0, tag="swap:")
    check = solver(rlimit, timeout_ms)
    check.add(encoding.domain(pre))
    found = set()
    for a, rule_a in enumerate(encoding.rules):
        for b, rule_b in enumerate(encoding.rules[:a]):
            after_a = encoding.after(rule_a, pre.values)
            after_b = encoding.after(rule_b, pre.values)
            after_ab = encoding.after(rule_b, after_a)
            after_ba = encoding.after(rule_a, after_b)
            claim = z3.Implies(
                z3.And(encoding.guard(rule_a, pre.values), encoding.guard(rule_b, after_a)),
                z3.And(
                    encoding.guard(rule_b, pre.values),
                    encoding.guard(rule_a, after_b),
                    *[x == y for x, y in zip(after_ab, after_ba, strict=True)],
                ),
            )
            flag = z3.Bool(f"swap:{a}:{b}")
            check.add(z3.Implies(flag, z3.Not(claim)))
            if check.check(flag) == z3.unsat:
                found.add((a, b))
    return frozenset(found)


def interchangeable(encoding: Encoding) -> tuple[tuple[int, int], ...]:
    """Pairs (v, w) of workers, v < w, of equal clock skew with none of that skew between.

    The rules treat every worker alike except for its skew (the criterion of
    `model.check.symmetry.renamings`), and P1..P6 are stated alike for every worker, so renaming
    workers of equal skew maps runs to runs of the same length that break the same
    properties.
    """
    skews = encoding.design.skews(encoding.bounds.workers)
    pairs = []
    for w in range(2, len(skews) + 1):
        earlier = [v for v in range(1, w) if skews[v - 1] == skews[w - 1]]
        if earlier:
            pairs.append((earlier[-1], w))
    return tuple(pairs)


def first_acquire_order(encoding: Encoding) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """For each interchangeable pair (v, w): v's Acquire rules and w's (rule numbers).

    BMC requires that w acquires only after v has acquired once: renaming interchangeable
    workers by the order of their first Acquire makes any run satisfy this. Rearranging
    commuting pairs afterwards keeps it: a swap only moves a lower-numbered rule before a
    higher-numbered one, and all of v's rules come before w's in rule order, so w's first
    Acquire never moves ahead of v's. The two reductions therefore combine.
    """

    def acquires(worker: int) -> tuple[int, ...]:
        return tuple(
            number
            for number, rule in enumerate(encoding.rules)
            if rule.action.name is ActionKind.ACQUIRE and rule.action.worker == worker
        )

    return tuple((acquires(v), acquires(w)) for v, w in interchangeable(encoding))


def bmc(
    design: Design,
    bounds: Bounds,
    max_length: int | None = None,
    *,
    properties: Iterable[str] | None = None,
    rlimit: int = DEFAULT_RLIMIT,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    reduce: bool = True,
    induction: bool = True,
    k_timeout_ms: int = DEFAULT_K_TIMEOUT_MS,
    catalog: tuple[Builder, ...] = CATALOG,
    deadline: float | None = None,
    covers_all: bool = True,
) -> dict[str, BmcResult]:
    """Shortest violation of each property up to `max_length` transitions (default: safe).

    `reduce` forbids swappable adjacent action pairs out of rule order (see
    `commuting_pairs`) and orders interchangeable workers' first Acquires (see
    `first_acquire_order`); it keeps every shortest violation and prunes equivalent runs.
    `induction` tries to close each property by induction and k-induction on the bounded
    system before unrolling to the bound (the default bound then is computed only if
    needed, from the explorer). `deadline` (a `time.perf_counter()` value) stops the search
    between depths, leaving open properties unknown; `covers_all=False` says the bound may
    not reach every reachable transition, so a clean search up to it is unknown, not holds.
    """
    encoding = Encoding(design, bounds, bitvectors=True)
    wanted = [p for p in encoding.properties if properties is None or p.name in set(properties)]
    pairs = commuting_pairs(encoding, rlimit, timeout_ms) if reduce else frozenset()
    invariant = bounded_invariant(encoding, rlimit, timeout_ms, catalog) if induction else None
    limit = _Limit(design, bounds, max_length)
    budget = _Budget(rlimit, timeout_ms, k_timeout_ms, deadline, covers_all)
    order = first_acquire_order(encoding) if reduce else ()
    search = _Search(encoding, limit, budget, pairs, invariant, order)
    return search.run(wanted)


@dataclass
class _Limit:
    """The run length BMC must reach: given, or the explorer's depth + 1 computed on demand."""

    design: Design
    bounds: Bounds
    given: int | None
    found: int | None = None

    def value(self) -> int:
        """The bound in transitions."""
        if self.found is None:
            self.found = safe_length(self.design, self.bounds) if self.given is None else self.given
        return self.found


@dataclass(frozen=True)
class _Budget:
    """z3 budgets: per BMC query and Houdini (`rlimit`, `timeout_ms`), per k-induction step."""

    rlimit: int
    timeout_ms: int
    k_timeout_ms: int
    deadline: float | None = None
    covers_all: bool = True

    def out_of_time(self) -> bool:
        """Whether the overall deadline has passed."""
        return self.deadline is not None and time.perf_counter() > self.deadline

    def describe(self) -> str:
        """The budget, for `unknown` reasons."""
        return f"rlimit {self.rlimit}, timeout {self.timeout_ms} ms"


@dataclass
class _Search:
    """One incremental run from the initial state, grown a step per depth (private to `bmc`)."""

    encoding: Encoding
    limit: _Limit
    budget: _Budget
    pairs: frozenset[tuple[int, int]]
    invariant: Invariant | None
    order: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    started: float = field(default_factory=time.perf_counter)
    states: list[SymState] = field(default_factory=list)
    acquired: list[z3.BoolRef] = field(default_factory=list)
    """Per interchangeable pair: the earlier worker has acquired before the newest state."""
    results: dict[str, BmcResult] = field(default_factory=dict)

    def run(self, wanted: list[Property]) -> dict[str, BmcResult]:
        """Settle every property: by induction, a shortest violation, k-induction, or the bound."""
        open_props = [p for p in wanted if not self._closed_without_runs(p)]
        check = solver(self.budget.rlimit, self.budget.timeout_ms)
        depth = 0
        while open_props and depth < self.limit.value():
            if self.budget.out_of_time():
                reason = f"the time budget ran out after runs of {depth} transitions"
                for prop in open_props:
                    self._record(prop, UNKNOWN, BMC, reason=reason)
                return {p.name: self.results[p.name] for p in wanted}
            self._extend(check, depth)
            open_props = self._depth(check, depth, open_props)
            if depth + 1 == K_AFTER:
                open_props = [p for p in open_props if not self._k_induction(p)]
            depth += 1
        for prop in open_props:
            if self.budget.covers_all:
                self._record(prop, HOLDS_WITHIN_BOUNDS, BMC)
            else:
                reason = (
                    f"no violation in runs of up to {depth} transitions, but longer runs "
                    "were not searched (the explorer did not finish, so the bound is not known "
                    "to cover every reachable step)"
                )
                self._record(prop, UNKNOWN, BMC, reason=reason)
        return {p.name: self.results[p.name] for p in wanted}

    # ----- proofs that need no run --------------------------------------------------

    def _closed_without_runs(self, prop: Property) -> bool:
        """Record a property no step can break, or one the bounded invariant proves."""
        never = z3.simplify(self.encoding.violation(prop, self.encoding.state(0, tag="never:")))
        if z3.is_false(never):
            self._record(
                prop,
                HOLDS_WITHIN_BOUNDS,
                INDUCTION,
                k=0,
                reason="no transition of this design can break it",
            )
            return True
        if self.invariant is None or self.invariant.failure:
            return False
        verdict = proved_by_invariant(
            self.invariant, prop, self.budget.rlimit, self.budget.timeout_ms
        )
        if verdict != z3.unsat:
            return False
        names = ", ".join(self.invariant.names) or "the column domains"
        self._record(
            prop,
            HOLDS_WITHIN_BOUNDS,
            INDUCTION,
            k=0,
            reason=f"the bounded system's inductive invariant excludes it ({names})",
        )
        return True

    def _k_induction(self, prop: Property) -> bool:
        """Try k-induction's step case for each k of the schedule; the base case is BMC's
        depths 0..k-1, all clean (this runs once BMC has searched `K_AFTER` >= k steps)."""
        if self.invariant is None:
            return False
        for k in K_SCHEDULE:
            budget = self.budget
            if step_case(self.invariant, prop, k, budget.rlimit, budget.k_timeout_ms) == z3.unsat:
                self._record(
                    prop,
                    HOLDS_WITHIN_BOUNDS,
                    K_INDUCTION,
                    k=k,
                    reason=f"{k}-induction on the bounded system",
                )
                return True
        return False

    # ----- the run ------------------------------------------------------------------

    def _extend(self, check: z3.Solver, depth: int) -> None:
        """Add state `depth` (its step from the previous one, the invariant, the order)."""
        state = self.encoding.state(depth)
        if depth == 0:
            check.add(self.encoding.initial(state))
        else:
            check.add(self.encoding.transition(self.states[-1], state))
        check.add(self._holds(state))
        if depth >= 2:
            check.add(self._in_order(self.states[-2], self.states[-1]))
        check.add(*self._first_acquires(state, depth))
        self.states.append(state)

    def _first_acquires(self, state: SymState, depth: int) -> list[z3.BoolRef]:
        """w's Acquire at this state only once v has acquired, per interchangeable (v, w)."""
        facts: list[z3.BoolRef] = []
        for number, (earlier, later) in enumerate(self.order):
            seen = z3.Bool(f"acquired{number}@{depth}")
            before = self.acquired[number] if depth else z3.BoolVal(False)
            took = z3.Or([self.states[-1].act == r for r in earlier]) if depth else False
            facts.append(seen == z3.Or(before, took))
            facts.append(z3.Implies(z3.Or([state.act == r for r in later]), seen))
            if depth:
                self.acquired[number] = seen
            else:
                self.acquired.append(seen)
        return facts

    def _holds(self, state: SymState) -> z3.BoolRef:
        """The facts every reachable state keeps: the invariant, or just the domains."""
        if self.invariant is None:
            return self.encoding.domain(state)
        return self.invariant.holds(state)

    def _depth(self, check: z3.Solver, depth: int, open_props: list[Property]) -> list[Property]:
        """Find every open property broken by transition depth + 1; return those still open."""
        last = self.states[-1]
        violations = {p.name: self.encoding.violation(p, last) for p in open_props}
        remaining = list(open_props)
        while remaining:
            query = z3.Bool(f"query@{depth}:{len(remaining)}")
            check.add(z3.Implies(query, z3.Or([violations[p.name] for p in remaining])))
            verdict = check.check(query)
            if verdict == z3.unknown:
                reason = f"z3 gave up: {check.reason_unknown()} ({self.budget.describe()})"
                for prop in remaining:
                    self._record(prop, UNKNOWN, BMC, reason=reason)
                return []
            if verdict == z3.unsat:
                break
            model = check.model()
            actions = self._actions(model)
            for prop in list(remaining):
                if z3.is_true(model.eval(violations[prop.name], True)):
                    self._record(prop, VIOLATED, BMC, shortest=len(actions), actions=actions)
                    remaining.remove(prop)
        for prop in remaining:
            check.add(z3.Not(violations[prop.name]))
        return remaining

    def _actions(self, model: z3.ModelRef) -> tuple[Action, ...]:
        """The run's action instances in a model, the breaking one last."""
        return tuple(self.encoding.rules[_model_value(model, s.act)].action for s in self.states)

    def _in_order(self, first: SymState, second: SymState) -> z3.BoolRef:
        """Two consecutive prefix actions are no swappable pair out of rule order."""
        forbidden = [z3.And(first.act == a, second.act == b) for a, b in self.pairs]
        return z3.Not(z3.Or(forbidden)) if forbidden else z3.BoolVal(True)

    def _record(self, prop: Property, status: str, method: str, **extra: object) -> None:
        """Store a property's verdict with the time since the search started."""
        reached = self.limit.found or self.limit.given or len(self.states)
        self.results[prop.name] = BmcResult(
            prop.name,
            status,
            reached,
            method=method,
            seconds=time.perf_counter() - self.started,
            **extra,  # type: ignore[arg-type]
        )


def _model_value(model: z3.ModelRef, term: z3.ExprRef) -> int:
    """A model's value of a term as a Python int."""
    return int(model.eval(term, model_completion=True).as_long())
