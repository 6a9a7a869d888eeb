"""Candidate strengthening invariants, each a z3 formula builder with the reason it holds.

The induction prover (`proofs.induction`) starts from every candidate that applies to a
design, keeps the largest subset that z3 shows is inductive (Houdini), and reports the
few that a property's proof needs. A candidate that is wrong for a design is simply
dropped by z3, so a docstring here is an explanation, never an assumption.

Each builder reads the state through the model's own `Vars` and uses the model's own
`lease_is_current`, so the invariants speak about the same variables the rules change.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import z3

from model.design import Design, Workload
from model.layout import GRANT_STATE, Vars, slot
from model.rules import lease_is_current


@dataclass(frozen=True)
class Context:
    """What a builder may branch on: the design (a constant) and the worker ids."""

    design: Design
    workers: int
    used: frozenset[str]
    """Columns that can take more than one value (the others are always 0)."""
    lease: int = 1
    """The lease length L (grants last L ticks)."""

    @property
    def ids(self) -> range:
        """Worker ids 1..W."""
        return range(1, self.workers + 1)


Builder = Callable[[Vars, Context], z3.BoolRef | None]

SPECIFIC: Final[dict[str, set[str]]] = {"token": set(), "receiver": set()}
"""Candidates that hold only for some values of an option (a token source, a receiver rule):
each applies to a design exactly when that value's row (`model.options.TOKEN_TABLE`,
`RECEIVER_TABLE`, field `candidates`) names it."""
TOKEN_SPECIFIC: Final = SPECIFIC["token"]
RECEIVER_SPECIFIC: Final = SPECIFIC["receiver"]


def specific_to(option: str) -> Callable[[Builder], Builder]:
    """Mark a candidate as one that the option value's row decides: it is tried only for the
    values whose row names it, so a new value opts into candidates in its row."""

    def mark(builder: Builder) -> Builder:
        SPECIFIC[option].add(builder.__name__)

        @functools.wraps(builder)
        def applies(s: Vars, c: Context) -> z3.BoolRef | None:
            if builder.__name__ not in getattr(c.design, option).row.candidates:
                return None
            return builder(s, c)

        return applies

    return mark


token_specific: Final = specific_to("token")
receiver_specific: Final = specific_to("receiver")


def hwm_covers_last(s: Vars, c: Context) -> z3.BoolRef | None:
    """An accepted write sets hwm and last to the same token and hwm never falls: last <= hwm."""
    if not c.design.receiver.keeps_high_water_mark:
        return None
    return s.last <= s.hwm


@receiver_specific
def mark_is_last(s: Vars, c: Context) -> z3.BoolRef | None:
    """An equality receiver sets its mark and last to the accepted token together: mark = last."""
    return s.mark == s.last


@token_specific
def counter_is_grants(s: Vars, c: Context) -> z3.BoolRef | None:
    """Every Acquire adds one to both the token counter and the grant count; nothing else does."""
    return s.issued == s.grants


@token_specific
def token_is_grant(s: Vars, c: Context) -> z3.BoolRef | None:
    """With counter tokens, Acquire sets a worker's token and grant number to the same new count."""
    return z3.And([s.tok[w] == s.gid[w] for w in c.ids])


@token_specific
def last_is_lastg(s: Vars, c: Context) -> z3.BoolRef | None:
    """An accepted write copies its writer's token and grant number, equal with counter tokens."""
    return s.last == s.lastg


def grants_bound_gids(s: Vars, c: Context) -> z3.BoolRef | None:
    """Grant numbers come from the grant count, which only grows, so none exceeds it."""
    return z3.And([s.gid[w] <= s.grants for w in c.ids] + [s.lastg <= s.grants])


@token_specific
def grants_bound_tokens(s: Vars, c: Context) -> z3.BoolRef | None:
    """With counter tokens every token and mark handed out is at most the number of grants."""
    marks = [s.hwm <= s.grants] if c.design.receiver.keeps_high_water_mark else []
    return z3.And([s.tok[w] <= s.grants for w in c.ids] + [s.last <= s.grants, *marks])


def idle_worker_is_blank(s: Vars, c: Context) -> z3.BoolRef | None:
    """A worker gets a non-zero token only with a grant, and drops all its variables at once."""
    facts = []
    for w in c.ids:
        others = [slot(f, w) for f in GRANT_STATE if f not in ("tok", "gid")]
        blank = z3.And([s[column] == 0 for column in others if column in c.used])
        facts.append((s.tok[w] == 0) == (s.gid[w] == 0))
        facts.append(z3.Implies(s.gid[w] == 0, blank))
    return z3.And(facts)


def holder_has_newest_grant(s: Vars, c: Context) -> z3.BoolRef | None:
    """Only Acquire names a holder, giving it the newest grant; a later grant changes the holder."""
    return z3.And(
        [z3.Implies(z3.And(s.holder == w, s.gid[w] != 0), s.gid[w] == s.grants) for w in c.ids]
    )


def no_holder_no_lease(s: Vars, c: Context) -> z3.BoolRef | None:
    """Release clears holder and expiry together and Acquire sets both: no holder, no lease."""
    return z3.Implies(s.holder == 0, s.expires == 0)


@receiver_specific
def current_reader_saw_latest(s: Vars, c: Context) -> z3.BoolRef | None:
    """While w's lease is current a lease-aware receiver takes no other write: w's read is fresh."""
    if c.design.workload is not Workload.RMW:
        return None
    return z3.And(
        [
            z3.Implies(z3.And(s.phase[w] == 1, _bool(lease_is_current(s, w))), s.rv[w] == s.version)
            for w in c.ids
        ]
    )


def one_current_lease(s: Vars, c: Context) -> z3.BoolRef | None:
    """Grant numbers are unique, so at most one worker's grant is the newest one."""
    pairs = [(v, w) for v in c.ids for w in c.ids if v < w]
    return z3.And(
        [z3.Not(z3.And(s.gid[v] == s.grants, s.gid[w] == s.grants, s.grants > 0)) for v, w in pairs]
    )


def distinct_grants(s: Vars, c: Context) -> z3.BoolRef | None:
    """Each Acquire hands out a new grant number (one more than any before): no two match."""
    pairs = [(v, w) for v in c.ids for w in c.ids if v < w]
    return z3.And([z3.Or(s.gid[v] == 0, s.gid[v] != s.gid[w]) for v, w in pairs])


def read_raised_the_mark(s: Vars, c: Context) -> z3.BoolRef | None:
    """A fenced read sets hwm to the reader's token, and hwm only grows: tok ≤ hwm after it."""
    if c.design.workload is not Workload.RMW or not c.design.fenced_reads:
        return None
    if not c.design.receiver.keeps_high_water_mark:
        return None
    return z3.And([z3.Implies(s.phase[w] == 1, s.tok[w] <= s.hwm) for w in c.ids])


def stale_reader_is_fenced(s: Vars, c: Context) -> z3.BoolRef | None:
    """A write accepted after w's fenced read carried a higher token, which fences w out."""
    if c.design.workload is not Workload.RMW or not c.design.fenced_reads:
        return None
    if not c.design.receiver.keeps_high_water_mark:
        return None
    return z3.And(
        [z3.Implies(s.phase[w] == 1, z3.Or(s.rv[w] == s.version, s.tok[w] < s.hwm)) for w in c.ids]
    )


@token_specific
def tokens_follow_grants(s: Vars, c: Context) -> z3.BoolRef | None:
    """A later grant carries a higher token (so far), and the last write's token tops older ones."""
    held = [
        z3.Implies(z3.And(s.gid[v] != 0, s.gid[v] < s.gid[w]), s.tok[v] < s.tok[w])
        for v in c.ids
        for w in c.ids
        if v != w
    ]
    last = [z3.Implies(z3.And(s.gid[w] != 0, s.gid[w] < s.lastg), s.tok[w] < s.last) for w in c.ids]
    return z3.And(held + last)


@token_specific
def clock_token_dates_the_grant(s: Vars, c: Context) -> z3.BoolRef | None:
    """A clock token is the grant's time + 1 + skew: the newest grant's lease ends L later, an
    older grant was superseded only after its lease ended, and no grant is in the future."""
    facts = []
    for w, skew in zip(c.ids, c.design.skews(c.workers), strict=True):
        granted_at = s.tok[w] - 1 - skew
        facts.append(
            z3.Implies(
                s.gid[w] != 0,
                z3.And(
                    granted_at <= s.now,
                    z3.Implies(
                        s.gid[w] == s.grants,
                        z3.And(s.holder == w, s.expires == granted_at + c.lease),
                    ),
                    z3.Implies(s.gid[w] < s.grants, granted_at + c.lease <= s.now),
                ),
            )
        )
    return z3.And(facts)


def lease_ends_within_l(s: Vars, c: Context) -> z3.BoolRef | None:
    """Acquire and Renew set the lease's end to L ticks from now, and time only moves on:
    no lease ends more than L ticks from now."""
    if "expires" not in c.used:
        return None
    return s.expires <= s.now + c.lease


def crashed_holders_lease_ends_in_time(s: Vars, c: Context) -> z3.BoolRef | None:
    """A crashed worker neither acquires nor renews, so while it is still the holder its lease
    ends at most L ticks after its crash at tick down − 1: expires < down + L."""
    if not c.design.crashes or "expires" not in c.used:
        return None
    return z3.And(
        [
            z3.Implies(z3.And(s.down[w] != 0, s.holder == w), s.expires < s.down[w] + c.lease)
            for w in c.ids
        ]
    )


CATALOG: Final[tuple[Builder, ...]] = (
    hwm_covers_last,
    mark_is_last,
    counter_is_grants,
    token_is_grant,
    last_is_lastg,
    grants_bound_gids,
    grants_bound_tokens,
    idle_worker_is_blank,
    holder_has_newest_grant,
    no_holder_no_lease,
    current_reader_saw_latest,
    one_current_lease,
    distinct_grants,
    read_raised_the_mark,
    stale_reader_is_fenced,
    tokens_follow_grants,
    clock_token_dates_the_grant,
    lease_ends_within_l,
    crashed_holders_lease_ends_in_time,
)
"""Every candidate, in the order they are tried and reported."""


def why(builder: Builder) -> str:
    """The one-sentence reason a candidate holds (its docstring)."""
    return (builder.__doc__ or "").strip()


def _bool(cond: object) -> z3.BoolRef:
    """A model condition as a z3 Bool (the rules fold constants to Python bools)."""
    return z3.BoolVal(cond) if isinstance(cond, bool) else cond  # type: ignore[return-value]
