"""The safety properties P1..P5, each a condition on one transition that makes it a violation.

A property is checked on every transition that accepts a write (P4: that rejects a
request), with the variables' values *before* the transition, as docs/model.md#properties
states them.
`violated(s, rule)` returns the condition under which taking `rule` from `s` breaks it.
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
    """A named safety property and the condition under which a transition violates it."""

    name: str
    title: str
    statement: str
    violated: Callable[[Vars, Rule], Cond]


def _p1(s: Vars, rule: Rule) -> Cond:
    w = rule.action.worker
    return all_of(rule.write_accepted(s), s.tok[w] < s.last) if w else False


def _p2(s: Vars, rule: Rule) -> Cond:
    w = rule.action.worker
    return all_of(rule.write_accepted(s), not_(lease_is_current(s, w))) if w else False


def _p3(s: Vars, rule: Rule) -> Cond:
    w = rule.action.worker
    return all_of(rule.write_accepted(s), s.gid[w] < s.lastg) if w else False


def _p4(s: Vars, rule: Rule) -> Cond:
    w = rule.action.worker
    return all_of(rule.request_rejected(s), lease_is_current(s, w)) if w else False


def _p5(s: Vars, rule: Rule) -> Cond:
    w = rule.action.worker
    return all_of(rule.write_accepted(s), s.rv[w] != s.version) if w else False


PROPERTIES: Final = (
    Property(
        "P1",
        "monotonic acceptance",
        "No accepted write carries a lower token than a prior accepted one.",
        _p1,
    ),
    Property(
        "P2",
        "no write outside its lease",
        "Every accepted write lands while its grant is the current, unexpired lease.",
        _p2,
    ),
    Property(
        "P3",
        "grant order",
        "No write from an older grant is accepted after a write from a newer grant.",
        _p3,
    ),
    Property(
        "P4",
        "no false rejection",
        "A request is never rejected while its lease is the current, unexpired one.",
        _p4,
    ),
    Property(
        "P5",
        "no lost update",
        "An accepted write was read-modified at the current version: nobody wrote in between "
        "(always true without read-modify-write, where nothing is read).",
        _p5,
    ),
)

PROPERTY_NAMES: Final = tuple(p.name for p in PROPERTIES)
BY_NAME: Final = {p.name: p for p in PROPERTIES}
