"""Bounded model checking: the shortest run that breaks each property, found by z3.

States are bit-vectors (z3 bit-blasts them to SAT, far faster here than integer
arithmetic), and each query is a fresh solver over runs of one length from the initial
state: "can an open property break within n transitions?". Lengths grow until the bound;
a satisfiable query's model gives a run, then bisection gives the shortest one, and the
model's action choices are the counterexample. A property with no violation up to the
bound holds within the bounds, provided the bound covers the diameter (the explorer's BFS
depth + 1, see `safe_length`). Incremental solving was measured slower on these queries.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

import z3

from model.design import Bounds, Design
from model.properties import Property
from model.rules import Action
from proofs.encoding import DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS, Encoding, SymState, solver

VIOLATED: Final = "violated"
HOLDS_WITHIN_BOUNDS: Final = "holds-within-bounds"
UNKNOWN: Final = "unknown"


@dataclass(frozen=True)
class BmcResult:
    """One property's bounded verdict: violated (with a shortest run), holds, or unknown."""

    prop: str
    status: str
    max_length: int
    shortest: int | None = None
    actions: tuple[Action, ...] | None = None
    reason: str | None = None
    seconds: float = 0.0


def diameter(design: Design, bounds: Bounds) -> int:
    """The largest BFS distance from the initial state, from the explorer (exact, no symmetry)."""
    from model.explorer import explore

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
    with the same length and end state, so that no such pair appears in that order; BMC
    forbids those adjacent pairs in a run's prefix, which loses no shortest violation.
    Each claim is proved by z3; a pair whose proof fails or runs out is simply not used.
    """
    pre = encoding.state(0, tag="swap:")
    found = set()
    for a, rule_a in enumerate(encoding.rules):
        for b, rule_b in enumerate(encoding.rules[:a]):
            after_a = encoding.after(rule_a, pre.values)
            after_b = encoding.after(rule_b, pre.values)
            after_ab = encoding.after(rule_b, after_a)
            after_ba = encoding.after(rule_a, after_b)
            claim = z3.Implies(
                z3.And(
                    encoding.domain(pre),
                    encoding.guard(rule_a, pre.values),
                    encoding.guard(rule_b, after_a),
                ),
                z3.And(
                    encoding.guard(rule_b, pre.values),
                    encoding.guard(rule_a, after_b),
                    *[x == y for x, y in zip(after_ab, after_ba, strict=True)],
                ),
            )
            check = solver(rlimit, timeout_ms)
            check.add(z3.Not(claim))
            if check.check() == z3.unsat:
                found.add((a, b))
    return frozenset(found)


def bmc(
    design: Design,
    bounds: Bounds,
    max_length: int | None = None,
    *,
    properties: Iterable[str] | None = None,
    rlimit: int = DEFAULT_RLIMIT,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    reduce: bool = True,
) -> dict[str, BmcResult]:
    """Shortest violation of each property up to `max_length` transitions (default: safe).

    `reduce` forbids swappable adjacent action pairs out of rule order (see
    `commuting_pairs`); it keeps every shortest violation and prunes equivalent runs.
    """
    encoding = Encoding(design, bounds, bitvectors=True)
    limit = safe_length(design, bounds) if max_length is None else max_length
    wanted = [p for p in encoding.properties if properties is None or p.name in set(properties)]
    pairs = commuting_pairs(encoding, rlimit, timeout_ms) if reduce else frozenset()
    unroller = _Unroller(encoding, limit, rlimit, timeout_ms, pairs)
    return unroller.search([p.name for p in wanted])


@dataclass
class _Unroller:
    """Fresh bit-blasted queries over runs of a given length (private bookkeeping of `bmc`).

    A BMC-only stutter step (rule number `len(rules)`, always enabled, changes nothing) lets
    a run of length n end early, so "a violation within n transitions" is one query and is
    monotone in n: the shortest violation is found by bisection, and a property holds within
    the bounds when the query at the full length is unsatisfiable. Stutters are dropped from
    counterexamples and do not count in lengths.
    """

    encoding: Encoding
    max_length: int
    rlimit: int
    timeout_ms: int
    pairs: frozenset[tuple[int, int]]

    def search(self, names: list[str]) -> dict[str, BmcResult]:
        """Settle every property: violated (shortest run), holds within bounds, or unknown.

        Lengths grow by doubling up to the bound, so short violations are found with small
        queries, and only the properties still open pay for the query at the full length.
        """
        started = time.perf_counter()
        props = {p.name: p for p in self.encoding.properties}
        results: dict[str, BmcResult] = {}
        open_names = [n for n in names if not self._never(props[n], results, started)]
        floor = 1
        for length in _lengths(self.max_length):
            while open_names:
                query = self._query(length, [props[n] for n in open_names])
                if query.verdict == z3.unknown:
                    for name in open_names:
                        results[name] = self._unknown(name, query.reason, started)
                    open_names = []
                if query.verdict != z3.sat:
                    break
                name = next(n for n in open_names if n in query.broken)
                results[name] = self._shortest(props[name], floor, query, started)
                open_names.remove(name)
            floor = length + 1
        for name in open_names:
            results[name] = BmcResult(
                name, HOLDS_WITHIN_BOUNDS, self.max_length, seconds=time.perf_counter() - started
            )
        return {name: results[name] for name in names}

    def _never(self, prop: Property, results: dict[str, BmcResult], started: float) -> bool:
        """Record a property no transition can break at all (its condition simplifies to false)."""
        condition = z3.simplify(self.encoding.violation(prop, self.encoding.state(0)))
        if not z3.is_false(condition):
            return False
        results[prop.name] = BmcResult(
            prop.name, HOLDS_WITHIN_BOUNDS, self.max_length,
            reason="no transition of this design can break it",
            seconds=time.perf_counter() - started,
        )
        return True

    def _shortest(
        self, prop: Property, low: int, found: _Answer, started: float
    ) -> BmcResult:
        """Bisect the fewest transitions that break a property, between a length known too
        short for every open property (`low` - 1) and a run `found` that breaks it."""
        best = found
        while low < len(best.actions):
            middle = (low + len(best.actions)) // 2
            query = self._query(middle, [prop])
            if query.verdict == z3.sat:
                best = query
            elif query.verdict == z3.unsat:
                low = middle + 1
            else:
                return self._unknown(prop.name, query.reason, started)
        return BmcResult(
            prop.name, VIOLATED, self.max_length, len(best.actions), best.actions,
            seconds=time.perf_counter() - started,
        )

    def _query(self, length: int, props: list[Property]) -> _Answer:
        """Can one of the properties break within `length` transitions? With the run if so."""
        encoding, stutter = self.encoding, len(self.encoding.rules)
        states = encoding.run(length - 1)
        check = solver(self.rlimit, self.timeout_ms)
        check.add(encoding.initial(states[0]))
        for pre, post in itertools.pairwise(states):
            step = encoding.transition(pre, post)
            check.add(z3.If(pre.act == stutter, _same(pre, post), step), encoding.domain(post))
        for first, second in itertools.pairwise(states[:-1]):
            check.add(self._in_order(first, second))
        last = states[-1]
        violations = {p.name: encoding.violation(p, last) for p in props}
        check.add(z3.Or(list(violations.values())))
        verdict = check.check()
        if verdict != z3.sat:
            return _Answer(verdict, (), frozenset(), _reason(check, verdict))
        model = check.model()
        chosen = [_model_value(model, s.act) for s in states]
        actions = tuple(encoding.rules[c].action for c in chosen if c != stutter)
        broken = frozenset(n for n, v in violations.items() if z3.is_true(model.eval(v, True)))
        return _Answer(verdict, actions, broken, None)

    def _in_order(self, first: SymState, second: SymState) -> z3.BoolRef:
        """Consecutive prefix actions are no swappable pair out of order; stutters go last."""
        stutter = len(self.encoding.rules)
        forbidden = [z3.And(first.act == a, second.act == b) for a, b in self.pairs]
        forbidden.append(z3.And(first.act == stutter, second.act != stutter))
        return z3.Not(z3.Or(forbidden))

    def _unknown(self, name: str, reason: str | None, started: float) -> BmcResult:
        """A property left open because z3 ran out of budget."""
        return BmcResult(
            name,
            UNKNOWN,
            self.max_length,
            reason=f"z3 gave up: {reason} (rlimit {self.rlimit}, timeout {self.timeout_ms} ms)",
            seconds=time.perf_counter() - started,
        )


@dataclass(frozen=True)
class _Answer:
    """One BMC query's outcome: the verdict, and for sat the run and what it breaks."""

    verdict: z3.CheckSatResult
    actions: tuple[Action, ...]
    broken: frozenset[str]
    reason: str | None


def _lengths(limit: int) -> list[int]:
    """Run lengths to try: 1, 2, then every other length to 16, then growing by half, ending
    at `limit`; small steps where violations are cheap to find, few large queries."""
    lengths, length = [], 1
    while length < limit:
        lengths.append(length)
        length = length + 1 if length < 2 else length + 2 if length < 16 else length * 3 // 2
    return [*lengths, limit] if limit >= 1 else []


def _same(pre: SymState, post: SymState) -> z3.BoolRef:
    """The stutter step: every column keeps its value."""
    return z3.And([a == b for a, b in zip(pre.values, post.values, strict=True)])


def _model_value(model: z3.ModelRef, term: z3.ExprRef) -> int:
    """A model's value of a term as a Python int."""
    return int(model.eval(term, model_completion=True).as_long())


def _reason(check: z3.Solver, verdict: z3.CheckSatResult) -> str | None:
    """Why z3 answered unknown (None for a definite answer)."""
    return check.reason_unknown() if verdict == z3.unknown else None
