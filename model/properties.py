"""The safety properties P1..P6: which transitions each speaks of, and what they must satisfy.

A property is checked on every transition that accepts a write (P4: that rejects a
request; P6: on every Tick, for each worker in turn), with the variables' values *before*
the transition (docs/model.md#properties).
`violated(s, rule)` is the condition under which taking `rule` from `s` breaks it;
`triggered(s, rule)` tells a property that holds from one that was never exercised
(vacuous).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from model.actions import ActionKind
from model.design import Design, Workload
from model.layout import Vars
from model.rules import Rule, holds_current_grant, lease_is_current, lock_free_at
from model.terms import Cond, all_of, any_of, not_


@dataclass(frozen=True)
class Property:
    """A named safety property: which transitions it speaks of, and what they must satisfy.

    `trigger(s, rule, w)` says whether taking `rule` from `s` is a transition the property
    is about, concerning worker w (an accepted write of w; for P4 a rejected request; for
    P6 a Tick while w, crashed, holds the current grant); `requirement(s, w)` is what such
    a transition must satisfy. The worker is the action's own, or with `on_tick` each
    worker in turn on every Tick. A violation is a triggered transition whose requirement
    fails for some worker; a property never triggered in a finished run is vacuous.
    """

    name: str
    title: str
    statement: str
    trigger: Callable[[Vars, Rule, int], Cond]
    requirement: Callable[[Vars, int], Cond]
    exercised_by: str
    """What puts the property to the test, as a noun phrase (`an accepted write`)."""
    never_exercised: Callable[[Design], str | None]
    """Why a design can never put the property to the test (None when it can): the
    reason a vacuous verdict is vacuous by construction, said in words."""
    on_tick: bool = False

    def applies(self, design: Design) -> bool:
        """Whether the design can put the property to the test at all (P5 only where
        workers read before they write, P6 only where something crashes)."""
        return self.never_exercised(design) is None

    def vacuity(self, design: Design) -> str:
        """Why the property was never put to the test in this design: the design's own
        reason, or that no run within the bounds made the transition it speaks of."""
        reason = self.never_exercised(design)
        if reason is not None:
            return reason
        return f"no run within the bounds has {self.exercised_by}"

    def subjects(self, s: Vars, rule: Rule) -> tuple[int, ...]:
        """The workers a transition concerns: its own, or every worker on a Tick (`on_tick`)."""
        if self.on_tick:
            return tuple(s.layout.workers) if rule.action.name is ActionKind.TICK else ()
        return (rule.action.worker,) if rule.action.worker else ()

    def triggered(self, s: Vars, rule: Rule) -> Cond:
        """Whether the transition is one this property speaks of."""
        return any_of(*(self.trigger(s, rule, w) for w in self.subjects(s, rule)))

    def violated(self, s: Vars, rule: Rule) -> Cond:
        """Whether taking `rule` from `s` breaks the property."""
        return any_of(
            *(
                all_of(self.trigger(s, rule, w), not_(self.requirement(s, w)))
                for w in self.subjects(s, rule)
            )
        )

    def violated_by(self, s: Vars, rule: Rule) -> tuple[int, ...]:
        """The workers for which taking `rule` from concrete state `s` breaks the property."""
        return tuple(
            w
            for w in self.subjects(s, rule)
            if all_of(self.trigger(s, rule, w), not_(self.requirement(s, w)))
        )


def _accepts_write(s: Vars, rule: Rule, w: int) -> Cond:
    """The transition accepts a write at the receiver."""
    return rule.write_accepted(s)


def _rejects_request(s: Vars, rule: Rule, w: int) -> Cond:
    """The transition rejects a request at the receiver."""
    return rule.request_rejected(s)


def _accepts_write_after_read(s: Vars, rule: Rule, w: int) -> Cond:
    """The transition accepts a write that follows the worker's read (read-modify-write).

    Without read-modify-write `phase` is always 0, so this never happens.
    """
    return all_of(rule.write_accepted(s), s.phase[w] == 1)


def _token_not_lower(s: Vars, w: int) -> Cond:
    return s.tok[w] >= s.last


def _within_its_lease(s: Vars, w: int) -> Cond:
    return lease_is_current(s, w)


def _grant_not_older(s: Vars, w: int) -> Cond:
    return s.gid[w] >= s.lastg


def _lease_not_current(s: Vars, w: int) -> Cond:
    return not_(lease_is_current(s, w))


def _read_is_current(s: Vars, w: int) -> Cond:
    return s.rv[w] == s.version


def crashed_holder(s: Vars, w: int) -> Cond:
    """Worker w has crashed while its grant is still the coordinator's current one.

    Without crashes `down` is always 0, so this never happens.
    """
    return all_of(s.down[w] != 0, holds_current_grant(s, w))


def _tick_with_crashed_holder(s: Vars, rule: Rule, w: int) -> Cond:
    """A Tick while crashed worker w holds the coordinator's current grant."""
    return crashed_holder(s, w)


def freed_within_lease(s: Vars, w: int) -> Cond:
    """After the Tick the lock is free, or at most L ticks have passed since w crashed.

    w crashed at tick `down[w] - 1`; the Tick makes it `now + 1`.
    """
    lease = s.layout.bounds.lease
    return any_of(lock_free_at(s, s.now + 1), s.now + 2 - s.down[w] <= lease)


def _always_possible(design: Design) -> str | None:
    """Every design accepts writes: nothing rules them out by construction."""
    return None


def _receiver_never_rejects(design: Design) -> str | None:
    """A resource that checks nothing never rejects a request."""
    if design.receiver.checks_anything:
        return None
    return "the resource checks nothing, so it never rejects a request"


def _no_reads(design: Design) -> str | None:
    """Blind writes read nothing, so no update can be lost between a read and a write."""
    if design.workload is Workload.RMW:
        return None
    return "the workers write blind (they never read before they write)"


def _nobody_crashes(design: Design) -> str | None:
    """Without crashes no holder's lock waits for a crashed holder."""
    if design.crashes:
        return None
    return "nothing in this design ever crashes"


PROPERTIES: Final = (
    Property(
        "P1",
        "monotonic acceptance",
        "No accepted write carries a lower token than a prior accepted one.",
        _accepts_write,
        _token_not_lower,
        "an accepted write",
        _always_possible,
    ),
    Property(
        "P2",
        "no write outside its lease",
        "Every accepted write lands while its grant is the current, unexpired lease.",
        _accepts_write,
        _within_its_lease,
        "an accepted write",
        _always_possible,
    ),
    Property(
        "P3",
        "grant order",
        "No write from an older grant is accepted after a write from a newer grant.",
        _accepts_write,
        _grant_not_older,
        "an accepted write",
        _always_possible,
    ),
    Property(
        "P4",
        "no false rejection",
        "A request is never rejected while its lease is the current, unexpired one.",
        _rejects_request,
        _lease_not_current,
        "a rejected request",
        _receiver_never_rejects,
    ),
    Property(
        "P5",
        "no lost update",
        "An accepted write was read-modified at the current version: nobody wrote in between "
        "(vacuous without read-modify-write, where nothing is read).",
        _accepts_write_after_read,
        _read_is_current,
        "an accepted write that follows its worker's read",
        _no_reads,
    ),
    Property(
        "P6",
        "lock freed after a crash",
        "The lock of a holder that crashed is free again at most one lease (L ticks) after "
        "the crash (vacuous without crashes, where nobody crashes).",
        _tick_with_crashed_holder,
        freed_within_lease,
        "a tick while a crashed worker holds the lock",
        _nobody_crashes,
        on_tick=True,
    ),
)

PROPERTY_NAMES: Final = tuple(p.name for p in PROPERTIES)
BY_NAME: Final = {p.name: p for p in PROPERTIES}
