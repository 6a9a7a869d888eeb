"""The safety properties P1..P5: which transitions each speaks of, and what they must satisfy.

A property is checked on every transition that accepts a write (P4: that rejects a
request), with the variables' values *before* the transition (docs/model.md#properties).
`violated(s, rule)` is the condition under which taking `rule` from `s` breaks it;
`triggered(s, rule)` tells a property that holds from one that was never exercised
(vacuous).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from model.layout import Vars
from model.rules import Rule, lease_is_current
from model.terms import Cond, all_of, not_


@dataclass(frozen=True)
class Property:
    """A named safety property: which transitions it speaks of, and what they must satisfy.

    `triggered(s, rule)` says whether taking `rule` from `s` is a transition the property
    is about (an accepted write; for P4 a rejected request); `required(s, w)` is what
    such a transition of worker w must satisfy. A violation is a triggered transition
    whose requirement fails; a property never triggered in a finished run is vacuous.
    """

    name: str
    title: str
    statement: str
    trigger: Callable[[Vars, Rule], Cond]
    requirement: Callable[[Vars, int], Cond]

    def triggered(self, s: Vars, rule: Rule) -> Cond:
        """Whether the transition is one this property speaks of."""
        return self.trigger(s, rule) if rule.action.worker else False

    def violated(self, s: Vars, rule: Rule) -> Cond:
        """Whether taking `rule` from `s` breaks the property."""
        w = rule.action.worker
        if not w:
            return False
        return all_of(self.trigger(s, rule), not_(self.requirement(s, w)))


def _accepts_write(s: Vars, rule: Rule) -> Cond:
    """The transition accepts a write at the receiver."""
    return rule.write_accepted(s)


def _rejects_request(s: Vars, rule: Rule) -> Cond:
    """The transition rejects a request at the receiver."""
    return rule.request_rejected(s)


def _accepts_write_after_read(s: Vars, rule: Rule) -> Cond:
    """The transition accepts a write that follows the worker's read (read-modify-write).

    Without read-modify-write `phase` is always 0, so this never happens.
    """
    return all_of(rule.write_accepted(s), s.phase[rule.action.worker] == 1)


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


PROPERTIES: Final = (
    Property(
        "P1",
        "monotonic acceptance",
        "No accepted write carries a lower token than a prior accepted one.",
        _accepts_write,
        _token_not_lower,
    ),
    Property(
        "P2",
        "no write outside its lease",
        "Every accepted write lands while its grant is the current, unexpired lease.",
        _accepts_write,
        _within_its_lease,
    ),
    Property(
        "P3",
        "grant order",
        "No write from an older grant is accepted after a write from a newer grant.",
        _accepts_write,
        _grant_not_older,
    ),
    Property(
        "P4",
        "no false rejection",
        "A request is never rejected while its lease is the current, unexpired one.",
        _rejects_request,
        _lease_not_current,
    ),
    Property(
        "P5",
        "no lost update",
        "An accepted write was read-modified at the current version: nobody wrote in between "
        "(vacuous without read-modify-write, where nothing is read).",
        _accepts_write_after_read,
        _read_is_current,
    ),
)

PROPERTY_NAMES: Final = tuple(p.name for p in PROPERTIES)
BY_NAME: Final = {p.name: p for p in PROPERTIES}
