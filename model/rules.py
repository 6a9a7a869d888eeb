"""The transition system: every action as a guard and an effect, written once.

Each rule reads the state through `Vars` and uses only the helpers of `model.terms`, so the
same code runs on Python ints (the step interpreter), numpy arrays (the explorer) and z3
terms (the prover). Branching on the *design* is ordinary Python; branching on a state
value is a `select`. docs/model.md#actions states every rule in mathematical form.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import assert_never

from model.actions import ACTION_NAMES as ACTION_NAMES
from model.actions import Action as Action
from model.actions import ActionKind
from model.design import Bounds, Design, Expiry, Receiver, Token, Workload
from model.layout import GRANT_STATE, Vars, slot
from model.options import AdmissionTest as AdmissionTest
from model.terms import Cond, Term, all_of, any_of, below, larger, not_, select

Changes = dict[str, Term]
"""New values of the columns an action changes; every other column keeps its value."""


def _never(_: Vars) -> Cond:
    """A transition that never accepts or rejects a request."""
    return False


@dataclass(frozen=True)
class Rule:
    """An action instance with its guard, its effect, and what it does to requests.

    `write_accepted` and `request_rejected` are evaluated on the state *before* the
    transition (where the guard holds); the properties are stated in terms of them.
    """

    action: Action
    actor: str
    guard: Callable[[Vars], Cond]
    effect: Callable[[Vars], Changes]
    write_accepted: Callable[[Vars], Cond] = _never
    request_rejected: Callable[[Vars], Cond] = _never


def _rule(
    action: Action,
    guard: Callable[[Vars], Cond],
    effect: Callable[[Vars], Changes],
    write_accepted: Callable[[Vars], Cond] = _never,
    request_rejected: Callable[[Vars], Cond] = _never,
) -> Rule:
    """A rule taken by the actor its action's kind names (`model.actions.ACTION_ROWS`)."""
    return Rule(action, action.actor, guard, effect, write_accepted, request_rejected)


def choose(cond: Cond, when_true: Changes, when_false: Changes, s: Vars) -> Changes:
    """Column-wise select between two sets of changes (a missing column keeps its value)."""
    if isinstance(cond, bool):
        return when_true if cond else when_false
    return {
        column: select(cond, when_true.get(column, s[column]), when_false.get(column, s[column]))
        for column in dict.fromkeys([*when_true, *when_false])
    }


def holds_current_grant(s: Vars, w: int) -> Cond:
    """Worker w's grant is the one the coordinator last made, and w is its holder."""
    return all_of(s.holder == w, s.grants == s.gid[w])


def lease_unexpired(s: Vars) -> Cond:
    """The coordinator's current lease has not run out yet (always, for a lock without one)."""
    if s.layout.design.expiry is Expiry.NEVER:
        return True
    return s.now < s.expires


def lock_free_at(s: Vars, time: Term) -> Cond:
    """Whether the coordinator would grant the lock at `time`: nobody holds it, or its lease
    has run out by then (never, for a lock without a lease, while somebody holds it)."""
    if s.layout.design.expiry is Expiry.NEVER:
        return s.holder == 0
    return any_of(s.holder == 0, time >= s.expires)


def lease_is_current(s: Vars, w: int) -> Cond:
    """Worker w's grant is the coordinator's current lease and it has not expired."""
    return all_of(holds_current_grant(s, w), lease_unexpired(s))


def give_up(w: int) -> Changes:
    """A worker that learns it lost the lock forgets its grant: all its variables return to 0."""
    return {slot(family, w): 0 for family in GRANT_STATE}


@dataclass(frozen=True)
class Admission:
    """How the receiver tests a request: the comparison it makes and whether it passes.

    `test` compares the token with the receiver's mark `against` (`≥`, `>`, `=`), asks
    whether the writer's lease is current, or checks nothing (`AdmissionTest`). Narration
    words this value; it never decides acceptance itself.
    """

    test: AdmissionTest
    token: Term
    against: Term | None
    passed: Cond


@dataclass(frozen=True)
class RuleBuilder:
    """Builds the rules of one design; `horizon`/`grants` of None lift those bounds (proofs)."""

    design: Design
    workers: int
    lease: int
    writes: int
    horizon: int | None
    grants: int | None

    @staticmethod
    def of(design: Design, bounds: Bounds, unbounded: bool = False) -> RuleBuilder:
        """A builder for the design within bounds, or with time and grants unbounded."""
        return RuleBuilder(
            design,
            bounds.workers,
            bounds.lease,
            bounds.writes,
            None if unbounded else bounds.horizon,
            None if unbounded else bounds.grants,
        )

    def rules(self) -> tuple[Rule, ...]:
        """Every action instance, in a fixed order: Tick, then per worker, then faults."""
        found = [self.tick()]
        for w in range(1, self.workers + 1):
            found.extend(self.acquires(w))
            found.append(self.send(w))
            found.extend(self.receptions(w))
            found.append(self.release(w))
            if self.design.renew:
                found.append(self.renew(w))
        if self.design.storage_restarts:
            found.append(self.storage_restart())
        if self.design.coordinator_restarts:
            found.append(self.coordinator_restart())
        if self.design.crashes:
            found.extend(self.crash(w) for w in range(1, self.workers + 1))
        return tuple(found)

    def running(self, s: Vars, w: int) -> Cond:
        """Worker w has not crashed (always, in a design without crashes)."""
        return s.down[w] == 0 if self.design.crashes else True

    # ----- environment and coordinator ------------------------------------------------

    def tick(self) -> Rule:
        """Time passes one tick; a worker that takes no step meanwhile is paused."""
        return _rule(
            Action(ActionKind.TICK),
            guard=lambda s: below(s.now, self.horizon),
            effect=lambda s: {"now": s.now + 1},
        )

    def acquires(self, w: int) -> list[Rule]:
        """Acquire(w): one instance, or one per free token value with random tokens."""
        if self.design.token.row.picks_unused_value:
            limit = self.grants if self.grants is not None else 0
            return [self.acquire(w, value) for value in range(1, limit + 1)]
        return [self.acquire(w, 0)]

    def new_token(self, s: Vars, w: int, value: int) -> Term:
        """The token the coordinator hands out at this Acquire."""
        match self.design.token:
            case Token.COUNTER | Token.COUNTER_VOLATILE:
                return s.issued + 1
            case Token.KEY_VERSION:
                return 1
            case Token.RANDOM:
                return value
            case Token.LOCAL_CLOCK:
                return s.now + 1 + self.design.skews(self.workers)[w - 1]
            case Token.WRAPPING:
                return s.grants % self.design.modulus + 1
            case _:
                assert_never(self.design.token)

    def acquire(self, w: int, value: int) -> Rule:
        """The coordinator grants w the lock if it is free or its lease has expired."""

        def guard(s: Vars) -> Cond:
            free_value = s.used[value] == 0 if value else True
            return all_of(
                s.tok[w] == 0,
                lock_free_at(s, s.now),
                below(s.grants, self.grants),
                free_value,
                self.running(s, w),
            )

        def effect(s: Vars) -> Changes:
            token = self.new_token(s, w, value)
            changes: Changes = {
                "grants": s.grants + 1,
                "holder": w,
                slot("tok", w): token,
                slot("gid", w): s.grants + 1,
                slot("sent", w): 0,
            }
            if self.design.expiry is Expiry.LEASE:
                changes["expires"] = s.now + self.lease
            if self.design.token.row.uses_counter:
                changes["issued"] = s.issued + 1
            if value:
                changes[slot("used", value)] = 1
            if self.design.worker_check:
                changes[slot("until", w)] = s.now + self.lease
            if self.design.grant_fences:
                changes["hwm"] = larger(s.hwm, token)
            return changes

        return _rule(Action(ActionKind.ACQUIRE, w, value), guard, effect)

    def coordinator_restart(self) -> Rule:
        """The coordinator loses its volatile counter and its lease; workers are not told."""
        return _rule(
            Action(ActionKind.COORDINATOR_RESTART),
            guard=lambda s: s.coordinator_restarts < self.design.coordinator_restarts,
            effect=lambda s: {
                "issued": 0,
                "holder": 0,
                "expires": 0,
                "coordinator_restarts": s.coordinator_restarts + 1,
            },
        )

    # ----- workers ----------------------------------------------------------------------

    def is_write(self, s: Vars, w: int) -> Cond:
        """Whether w's next (or in-flight) request is a write rather than a read."""
        if self.design.workload is Workload.RMW:
            return s.phase[w] == 1
        return True

    def send(self, w: int) -> Rule:
        """w sends its next request, believing it still holds the lock."""

        def guard(s: Vars) -> Cond:
            checks_lease = s.now < s.until[w] if self.design.worker_check else True
            return all_of(
                s.tok[w] != 0,
                s.pending[w] == 0,
                s.sent[w] < self.writes,
                checks_lease,
                self.running(s, w),
            )

        def effect(s: Vars) -> Changes:
            counted = s.phase[w] if self.design.workload is Workload.RMW else 1
            return {slot("pending", w): 1, slot("sent", w): s.sent[w] + counted}

        return _rule(Action(ActionKind.SEND, w), guard, effect)

    def release(self, w: int) -> Rule:
        """w is done; the coordinator frees the lock only if w's grant is still its current one."""

        def guard(s: Vars) -> Cond:
            idle = s.phase[w] == 0 if self.design.workload is Workload.RMW else True
            return all_of(
                s.tok[w] != 0,
                s.pending[w] == 0,
                s.sent[w] == self.writes,
                idle,
                self.running(s, w),
            )

        def effect(s: Vars) -> Changes:
            current = all_of(s.holder == w, s.grants == s.gid[w])
            return {
                "holder": select(current, 0, s.holder),
                "expires": select(current, 0, s.expires),
                **give_up(w),
            }

        return _rule(Action(ActionKind.RELEASE, w), guard, effect)

    def renew(self, w: int) -> Rule:
        """w keeps its lease alive: while it runs and its lease is still the current,
        unexpired one, it extends it to L ticks from now (if that extends it at all)."""

        def guard(s: Vars) -> Cond:
            return all_of(
                self.running(s, w),
                s.tok[w] != 0,
                lease_is_current(s, w),
                s.expires < s.now + self.lease,
            )

        def effect(s: Vars) -> Changes:
            changes: Changes = {"expires": s.now + self.lease}
            if self.design.worker_check:
                changes[slot("until", w)] = s.now + self.lease
            return changes

        return _rule(Action(ActionKind.RENEW, w), guard, effect)

    def crash(self, w: int) -> Rule:
        """w stops for ever while it believes it holds a grant; nobody is told."""

        def guard(s: Vars) -> Cond:
            crashed = sum(
                (select(s.down[v] != 0, 1, 0) for v in range(1, self.workers + 1)), start=0
            )
            return all_of(s.down[w] == 0, s.tok[w] != 0, crashed < self.design.crashes)

        return _rule(
            Action(ActionKind.CRASH, w),
            guard=guard,
            effect=lambda s: {slot("down", w): s.now + 1},
        )

    # ----- the receiver -----------------------------------------------------------------

    def checks_reads(self) -> bool:
        """Whether reads carry the token and are checked like writes."""
        return self.design.fenced_reads

    def admission(self, s: Vars, w: int) -> Admission:
        """The receiver's test of a checked request carrying token tok[w], and its outcome."""
        token, test = s.tok[w], self.design.receiver.row.test
        match self.design.receiver:
            case Receiver.NONE:
                return Admission(test, token, None, True)
            case Receiver.FENCED | Receiver.FENCED_NONATOMIC:
                return Admission(test, token, s.hwm, token >= s.hwm)
            case Receiver.FENCED_STRICT:
                return Admission(test, token, s.hwm, token > s.hwm)
            case Receiver.EQUALITY:
                return Admission(test, token, s.mark, any_of(s.mark == 0, token == s.mark))
            case Receiver.LEASE_AWARE:
                return Admission(test, token, None, lease_is_current(s, w))
            case _:
                assert_never(self.design.receiver)

    def admits(self, s: Vars, w: int) -> Cond:
        """The receiver's acceptance rule for a checked request carrying token tok[w]."""
        return self.admission(s, w).passed

    def accepts(self, s: Vars, w: int) -> Cond:
        """Whether the request in flight is accepted (writes always checked; reads if fenced)."""
        if self.checks_reads():
            return self.admits(s, w)
        return select(self.is_write(s, w), self.admits(s, w), True)

    def write_lands(self, s: Vars, w: int) -> Changes:
        """An accepted write takes effect at the receiver."""
        token = s.tok[w]
        changes: Changes = {slot("pending", w): 0, "last": token, "lastg": s.gid[w]}
        if self.design.receiver.keeps_high_water_mark:
            changes["hwm"] = token
        if self.design.receiver.keeps_equality_mark:
            changes["mark"] = token
        if self.design.workload is Workload.RMW:
            changes["version"] = s.version + 1
            changes[slot("phase", w)] = 0
        return changes

    def read_lands(self, s: Vars, w: int) -> Changes:
        """An accepted read returns the current version; a fenced read also raises the mark."""
        changes: Changes = {slot("pending", w): 0, slot("rv", w): s.version, slot("phase", w): 1}
        if self.checks_reads() and self.design.receiver.keeps_high_water_mark:
            changes["hwm"] = s.tok[w]
        return changes

    def request_lands(self, s: Vars, w: int) -> Changes:
        """The effect of w's in-flight request once accepted, read or write."""
        if self.design.workload is not Workload.RMW:
            return self.write_lands(s, w)
        return choose(self.is_write(s, w), self.write_lands(s, w), self.read_lands(s, w), s)

    def receptions(self, w: int) -> list[Rule]:
        """Deliver(w) (check and update in one step), or Check(w) and Apply(w) when split."""
        if not self.design.receiver.splits_check_and_write:
            return [self.deliver(w, only_reads=False)]
        rules = [self.check(w), self.apply(w)]
        if self.design.workload is Workload.RMW and not self.checks_reads():
            rules.insert(0, self.deliver(w, only_reads=True))
        return rules

    def deliver(self, w: int, only_reads: bool) -> Rule:
        """The network delivers w's request and the receiver decides atomically."""

        def guard(s: Vars) -> Cond:
            return all_of(s.pending[w] == 1, s.phase[w] == 0 if only_reads else True)

        def effect(s: Vars) -> Changes:
            return choose(self.accepts(s, w), self.request_lands(s, w), give_up(w), s)

        return _rule(
            Action(ActionKind.DELIVER, w),
            guard,
            effect,
            write_accepted=lambda s: all_of(self.is_write(s, w), self.accepts(s, w)),
            request_rejected=lambda s: not_(self.accepts(s, w)),
        )

    def check(self, w: int) -> Rule:
        """Non-atomic receiver, first half: compare the token, remember the verdict."""

        def guard(s: Vars) -> Cond:
            checked = True if self.checks_reads() else self.is_write(s, w)
            return all_of(s.pending[w] == 1, checked)

        def effect(s: Vars) -> Changes:
            return choose(self.admits(s, w), {slot("pending", w): 2}, give_up(w), s)

        return _rule(
            Action(ActionKind.CHECK, w),
            guard,
            effect,
            request_rejected=lambda s: not_(self.admits(s, w)),
        )

    def apply(self, w: int) -> Rule:
        """Non-atomic receiver, second half: write the checked request, whatever came between."""
        return _rule(
            Action(ActionKind.APPLY, w),
            guard=lambda s: s.pending[w] == 2,
            effect=lambda s: self.request_lands(s, w),
            write_accepted=lambda s: self.is_write(s, w),
        )

    def storage_restart(self) -> Rule:
        """The receiver restarts and loses its in-memory mark."""
        return _rule(
            Action(ActionKind.STORAGE_RESTART),
            guard=lambda s: s.storage_restarts < self.design.storage_restarts,
            effect=lambda s: {"hwm": 0, "mark": 0, "storage_restarts": s.storage_restarts + 1},
        )
