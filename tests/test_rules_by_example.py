"""The rules by example: given one small state, when one action is taken, then this state.

A readable specification of every action and option of docs/model.md, checked against the
step interpreter. Each example names only the variables that matter; every other variable
is 0 before and must be unchanged after, unless the example lists it under `then`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from model.design import Bounds, Design
from model.options import OPTIONS, Kind
from model.rules import ACTION_NAMES, Action, RuleBuilder
from model.system import System

BOUNDS = Bounds(workers=2, lease=2, horizon=5, grants=3, writes=2)


@dataclass(frozen=True)
class Example:
    """One given/when/then: a design, the state's non-zero values, an action, the result.

    `then` is None when the action must not be enabled; otherwise it lists every variable
    whose value changes, with its new value. `breaks` lists the properties violated.
    """

    name: str
    when: Action
    given: dict[str, int] = field(default_factory=dict)
    then: dict[str, int] | None = None
    design: Design = field(default_factory=Design)
    bounds: Bounds = BOUNDS
    breaks: tuple[str, ...] = ()


def holding(w: int, token: int, grant: int, sent: int = 0, pending: int = 0) -> dict[str, int]:
    """A worker's variables while it believes it holds grant `grant` with `token`."""
    return {f"tok[{w}]": token, f"gid[{w}]": grant, f"sent[{w}]": sent, f"pending[{w}]": pending}


def lease(w: int, grant: int, expires: int, now: int = 0) -> dict[str, int]:
    """The coordinator's record of w's grant, `grant` grants made so far."""
    return {"holder": w, "grants": grant, "issued": grant, "expires": expires, "now": now}


def forgets(w: int) -> dict[str, int]:
    """A worker giving up its grant: every per-worker variable returns to 0."""
    return {f"tok[{w}]": 0, f"gid[{w}]": 0, f"sent[{w}]": 0, f"pending[{w}]": 0}


RMW = Design(workload="rmw")
RENEW = Design(renew=True)
CRASH = Design(crashes=1)
NEVER = Design(expiry="never")
NEVER_CRASH = Design(receiver="none", expiry="never", crashes=1)


def granted(w: int, grant: int, now: int = 0) -> dict[str, int]:
    """The coordinator's record of w's grant on a lock without a lease (no expiry)."""
    return {"holder": w, "grants": grant, "issued": grant, "now": now}


GAP = {**lease(2, 2, 4, now=2), **holding(1, 1, 1, sent=1, pending=1), **holding(2, 2, 2)}
"""W1's write is in flight, its lease gone; W2 holds grant 2 and has sent nothing yet."""

EXAMPLES = (
    # ----- Tick --------------------------------------------------------------------------
    Example("time passes", Action("Tick"), {"now": 1}, {"now": 2}),
    Example("the clock stops at the horizon", Action("Tick"), {"now": 5}, None),
    # ----- Acquire -----------------------------------------------------------------------
    Example(
        "a free lock is granted with the next counter token",
        Action("Acquire", 1),
        {"now": 1},
        {"issued": 1, "grants": 1, "holder": 1, "expires": 3, "tok[1]": 1, "gid[1]": 1},
    ),
    Example(
        "an expired lease is granted again; the old holder is not told",
        Action("Acquire", 2),
        {**lease(1, 1, 2, now=2), **holding(1, 1, 1)},
        {"issued": 2, "grants": 2, "holder": 2, "expires": 4, "tok[2]": 2, "gid[2]": 2},
    ),
    Example(
        "a current lease is not granted",
        Action("Acquire", 2),
        {**lease(1, 1, 2, now=1), **holding(1, 1, 1)},
        None,
    ),
    Example(
        "a worker that believes it holds the lock does not ask again",
        Action("Acquire", 1),
        {**lease(1, 1, 2, now=3), **holding(1, 1, 1)},
        None,
    ),
    Example(
        "no more grants than G",
        Action("Acquire", 1),
        {"grants": 3, "issued": 3, "now": 1},
        None,
    ),
    Example(
        "a key version is always 1 and the counter is not used",
        Action("Acquire", 2),
        {"holder": 1, "grants": 1, "expires": 2, "now": 2, "tok[1]": 1, "gid[1]": 1},
        {"grants": 2, "holder": 2, "expires": 4, "tok[2]": 1, "gid[2]": 2},
        design=Design(token="key-version"),
    ),
    Example(
        "a random token is any value not handed out before",
        Action("Acquire", 1, 3),
        {"used[1]": 1, "grants": 1},
        {"grants": 2, "holder": 1, "expires": 2, "tok[1]": 3, "gid[1]": 2, "used[3]": 1},
        design=Design(token="random"),
    ),
    Example(
        "a random token already handed out is not handed out again",
        Action("Acquire", 1, 1),
        {"used[1]": 1, "grants": 1},
        None,
        design=Design(token="random"),
    ),
    Example(
        "a clock token is the worker's time, one tick ahead when skewed",
        Action("Acquire", 1),
        {"now": 2},
        {"grants": 1, "holder": 1, "expires": 4, "tok[1]": 4, "gid[1]": 1},
        design=Design(token="local-clock", skew=(1, 0)),
    ),
    Example(
        "a wrapping token starts again after M values",
        Action("Acquire", 1),
        {"grants": 2},
        {"grants": 3, "holder": 1, "expires": 2, "tok[1]": 1, "gid[1]": 3},
        design=Design(token="wrapping", wrap=2),
    ),
    Example(
        "a volatile counter still counts",
        Action("Acquire", 1),
        {"issued": 1, "grants": 1},
        {"issued": 2, "grants": 2, "holder": 1, "expires": 2, "tok[1]": 2, "gid[1]": 2},
        design=Design(token="counter-volatile", coordinator_restarts=1),
    ),
    Example(
        "a checking worker records the expiry it was granted",
        Action("Acquire", 1),
        {"now": 1},
        {
            "issued": 1,
            "grants": 1,
            "holder": 1,
            "expires": 3,
            "tok[1]": 1,
            "gid[1]": 1,
            "until[1]": 3,
        },
        design=Design(receiver="none", worker_check=True),
    ),
    Example(
        "a grant that fences raises the mark to the new token",
        Action("Acquire", 2),
        {**lease(1, 1, 2, now=2), **holding(1, 1, 1), "hwm": 1},
        {"issued": 2, "grants": 2, "holder": 2, "expires": 4, "tok[2]": 2, "gid[2]": 2, "hwm": 2},
        design=Design(grant_fences=True),
    ),
    Example(
        "a grant that fences never lowers the mark (random tokens)",
        Action("Acquire", 2, 1),
        {
            "holder": 1,
            "grants": 1,
            "expires": 2,
            "now": 2,
            "tok[1]": 3,
            "gid[1]": 1,
            "used[3]": 1,
            "hwm": 3,
        },
        {"grants": 2, "holder": 2, "expires": 4, "tok[2]": 1, "gid[2]": 2, "used[1]": 1},
        design=Design(token="random", grant_fences=True),
    ),
    # ----- Send --------------------------------------------------------------------------
    Example(
        "a holder sends a write, whatever the time",
        Action("Send", 1),
        {**lease(1, 1, 2, now=4), **holding(1, 1, 1)},
        {"pending[1]": 1, "sent[1]": 1},
    ),
    Example(
        "one request in flight at a time",
        Action("Send", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1, sent=1, pending=1)},
        None,
    ),
    Example(
        "at most K writes per grant",
        Action("Send", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1, sent=2)},
        None,
    ),
    Example("a worker without a grant sends nothing", Action("Send", 1), {}, None),
    Example(
        "a checking worker sends while its recorded lease lasts",
        Action("Send", 1),
        {**lease(1, 1, 3, now=2), **holding(1, 1, 1), "until[1]": 3},
        {"pending[1]": 1, "sent[1]": 1},
        design=Design(receiver="none", worker_check=True),
    ),
    Example(
        "a checking worker does not send once its recorded lease is over",
        Action("Send", 1),
        {**lease(1, 1, 3, now=3), **holding(1, 1, 1), "until[1]": 3},
        None,
        design=Design(receiver="none", worker_check=True),
    ),
    Example(
        "a read does not count as one of the K writes",
        Action("Send", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1)},
        {"pending[1]": 1},
        design=RMW,
    ),
    Example(
        "the write after a read counts",
        Action("Send", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1), "phase[1]": 1},
        {"pending[1]": 1, "sent[1]": 1},
        design=RMW,
    ),
    # ----- Deliver: what each receiver accepts ---------------------------------------------
    Example(
        "a plain store accepts a stale write and keeps no mark",
        Action("Deliver", 1),
        {**lease(2, 2, 4, now=2), **holding(1, 1, 1, sent=1, pending=1), "last": 2, "lastg": 2},
        {"pending[1]": 0, "last": 1, "lastg": 1},
        design=Design(receiver="none"),
        breaks=("P1", "P2", "P3"),
    ),
    Example(
        "fencing accepts a token at least the mark and raises the mark",
        Action("Deliver", 2),
        {**GAP, "pending[2]": 1, "sent[2]": 1, "hwm": 1, "last": 1, "lastg": 1},
        {"pending[2]": 0, "hwm": 2, "last": 2, "lastg": 2},
    ),
    Example(
        "fencing accepts a stale write in the gap, before anything newer arrived",
        Action("Deliver", 1),
        GAP,
        {"pending[1]": 0, "hwm": 1, "last": 1, "lastg": 1},
        breaks=("P2",),
    ),
    Example(
        "fencing refuses a token below the mark; the worker gives up",
        Action("Deliver", 1),
        {**GAP, "hwm": 2, "last": 2, "lastg": 2},
        forgets(1),
    ),
    Example(
        "fencing accepts the holder's second write with an equal token",
        Action("Deliver", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1, sent=2, pending=1), "hwm": 1, "last": 1, "lastg": 1},
        {"pending[1]": 0},
    ),
    Example(
        "strict fencing refuses the holder's second write",
        Action("Deliver", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1, sent=2, pending=1), "hwm": 1, "last": 1, "lastg": 1},
        forgets(1),
        design=Design(receiver="fenced-strict"),
        breaks=("P4",),
    ),
    Example(
        "an equality receiver binds itself to the first token",
        Action("Deliver", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1, sent=1, pending=1)},
        {"pending[1]": 0, "mark": 1, "last": 1, "lastg": 1},
        design=Design(receiver="equality"),
    ),
    Example(
        "an equality receiver refuses every other token, even the current holder's",
        Action("Deliver", 2),
        {
            **lease(2, 2, 4, now=2),
            **holding(2, 2, 2, sent=1, pending=1),
            "mark": 1,
            "last": 1,
            "lastg": 1,
        },
        forgets(2),
        design=Design(receiver="equality"),
        breaks=("P4",),
    ),
    Example(
        "a lease-aware receiver accepts during the current lease",
        Action("Deliver", 1),
        {**lease(1, 1, 2, now=1), **holding(1, 1, 1, sent=1, pending=1)},
        {"pending[1]": 0, "last": 1, "lastg": 1},
        design=Design(receiver="lease-aware"),
    ),
    Example(
        "a lease-aware receiver refuses the write in the gap",
        Action("Deliver", 1),
        GAP,
        forgets(1),
        design=Design(receiver="lease-aware"),
    ),
    Example(
        "a lease-aware receiver refuses once the lease has expired, even with no new holder",
        Action("Deliver", 1),
        {**lease(1, 1, 2, now=2), **holding(1, 1, 1, sent=1, pending=1)},
        forgets(1),
        design=Design(receiver="lease-aware"),
    ),
    # ----- the non-atomic receiver ---------------------------------------------------------
    Example(
        "a passing check marks the write checked, nothing else",
        Action("Check", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1, sent=1, pending=1)},
        {"pending[1]": 2},
        design=Design(receiver="fenced-nonatomic"),
    ),
    Example(
        "a failing check refuses the write",
        Action("Check", 1),
        {**GAP, "hwm": 2},
        forgets(1),
        design=Design(receiver="fenced-nonatomic"),
    ),
    Example(
        "apply writes a checked write without checking again",
        Action("Apply", 1),
        {**GAP, "pending[1]": 2, "hwm": 2, "last": 2, "lastg": 2},
        {"pending[1]": 0, "hwm": 1, "last": 1, "lastg": 1},
        design=Design(receiver="fenced-nonatomic"),
        breaks=("P1", "P2", "P3"),
    ),
    Example(
        "a non-atomic receiver lets an unfenced read through without a check",
        Action("Check", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1, sent=1, pending=1)},
        None,
        design=Design(receiver="fenced-nonatomic", workload="rmw"),
    ),
    Example(
        "a non-atomic receiver checks a fenced read like a write",
        Action("Check", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1, sent=1, pending=1)},
        {"pending[1]": 2},
        design=Design(receiver="fenced-nonatomic", workload="rmw", fenced_reads=True),
    ),
    # ----- read-modify-write ---------------------------------------------------------------
    Example(
        "a read returns the version and the next request is the write",
        Action("Deliver", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1, pending=1), "version": 1},
        {"pending[1]": 0, "rv[1]": 1, "phase[1]": 1},
        design=RMW,
    ),
    Example(
        "an unfenced read passes under the mark",
        Action("Deliver", 1),
        {**GAP, "sent[1]": 0, "hwm": 2},
        {"pending[1]": 0, "phase[1]": 1},
        design=RMW,
    ),
    Example(
        "a write counts a version and ends the read-modify-write",
        Action("Deliver", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1, sent=1, pending=1), "phase[1]": 1},
        {"pending[1]": 0, "phase[1]": 0, "version": 1, "hwm": 1, "last": 1, "lastg": 1},
        design=RMW,
    ),
    Example(
        "a write after an outdated read loses an update",
        Action("Deliver", 2),
        {
            **lease(2, 2, 4, now=2),
            **holding(2, 2, 2, sent=1, pending=1),
            "phase[2]": 1,
            "version": 1,
            "hwm": 1,
            "last": 1,
            "lastg": 1,
        },
        {"pending[2]": 0, "phase[2]": 0, "version": 2, "hwm": 2, "last": 2, "lastg": 2},
        design=RMW,
        breaks=("P5",),
    ),
    Example(
        "a fenced read raises the mark",
        Action("Deliver", 2),
        {**GAP, "pending[2]": 1, "sent[1]": 0, "phase[1]": 1},
        {"pending[2]": 0, "rv[2]": 0, "phase[2]": 1, "hwm": 2},
        design=Design(workload="rmw", fenced_reads=True),
    ),
    Example(
        "a fenced read below the mark is refused",
        Action("Deliver", 1),
        {**GAP, "sent[1]": 0, "hwm": 2},
        forgets(1),
        design=Design(workload="rmw", fenced_reads=True),
    ),
    # ----- Release -----------------------------------------------------------------------
    Example(
        "the holder releases its current lease after K writes",
        Action("Release", 1),
        {**lease(1, 1, 2, now=1), **holding(1, 1, 1, sent=2)},
        {"holder": 0, "expires": 0, **forgets(1)},
    ),
    Example(
        "a superseded worker releases nothing at the coordinator",
        Action("Release", 1),
        {**lease(2, 2, 4, now=2), **holding(1, 1, 1, sent=2), **holding(2, 2, 2)},
        forgets(1),
    ),
    Example(
        "a release frees the lock only for the current grant, not just the same holder",
        Action("Release", 1),
        {**lease(1, 2, 4, now=2), **holding(1, 1, 1, sent=2)},
        forgets(1),
    ),
    Example(
        "no release before the K writes are sent",
        Action("Release", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1, sent=1)},
        None,
    ),
    Example(
        "no release while a write is in flight",
        Action("Release", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1, sent=2, pending=1)},
        None,
    ),
    Example(
        "no release between a read and its write",
        Action("Release", 1),
        {**lease(1, 1, 2), **holding(1, 1, 1, sent=2), "phase[1]": 1},
        None,
        design=RMW,
    ),
    # ----- Renew -------------------------------------------------------------------------
    Example(
        "the holder renews its lease to L ticks from now",
        Action("Renew", 1),
        {**lease(1, 1, 2, now=1), **holding(1, 1, 1)},
        {"expires": 3},
        design=RENEW,
    ),
    Example(
        "a renewal also moves the worker's own record of its lease",
        Action("Renew", 1),
        {**lease(1, 1, 2, now=1), **holding(1, 1, 1), "until[1]": 2},
        {"expires": 3, "until[1]": 3},
        design=Design(renew=True, worker_check=True),
    ),
    Example(
        "an expired lease is not renewed",
        Action("Renew", 1),
        {**lease(1, 1, 2, now=2), **holding(1, 1, 1)},
        None,
        design=RENEW,
    ),
    Example(
        "a renewal that would not extend the lease is not taken",
        Action("Renew", 1),
        {**lease(1, 1, 2, now=0), **holding(1, 1, 1)},
        None,
        design=RENEW,
    ),
    Example(
        "a superseded worker does not renew the new holder's lease",
        Action("Renew", 1),
        {**lease(2, 2, 4, now=3), **holding(1, 1, 1), **holding(2, 2, 2)},
        None,
        design=RENEW,
    ),
    Example(
        "the holder's older grant is not renewed",
        Action("Renew", 1),
        {**lease(1, 2, 4, now=3), **holding(1, 1, 1)},
        None,
        design=RENEW,
    ),
    Example(
        "a worker that holds nothing renews nothing",
        Action("Renew", 1),
        lease(1, 1, 2, now=1),
        None,
        design=RENEW,
    ),
    Example(
        "a crashed holder does not renew",
        Action("Renew", 1),
        {**lease(1, 1, 2, now=1), **holding(1, 1, 1), "down[1]": 1},
        None,
        design=Design(renew=True, crashes=1),
    ),
    # ----- Crash -------------------------------------------------------------------------
    Example(
        "a holder crashes and nobody is told",
        Action("Crash", 1),
        {**lease(1, 1, 2, now=1), **holding(1, 1, 1)},
        {"down[1]": 2},
        design=CRASH,
    ),
    Example(
        "a worker holding nothing does not crash",
        Action("Crash", 1),
        {"now": 1},
        None,
        design=CRASH,
    ),
    Example(
        "a crashed worker does not crash again",
        Action("Crash", 1),
        {**lease(1, 1, 2, now=1), **holding(1, 1, 1), "down[1]": 1},
        None,
        design=Design(crashes=2),
    ),
    Example(
        "no more crashes than allowed",
        Action("Crash", 1),
        {**lease(2, 2, 4, now=2), **holding(1, 1, 1), **holding(2, 2, 2), "down[2]": 3},
        None,
        design=CRASH,
    ),
    Example(
        "with two crashes allowed a second worker crashes",
        Action("Crash", 1),
        {**lease(2, 2, 4, now=2), **holding(1, 1, 1), **holding(2, 2, 2), "down[2]": 3},
        {"down[1]": 3},
        design=Design(crashes=2),
    ),
    Example(
        "a crashed worker sends nothing",
        Action("Send", 1),
        {**lease(1, 1, 2, now=1), **holding(1, 1, 1), "down[1]": 1},
        None,
        design=CRASH,
    ),
    Example(
        "a crashed worker releases nothing",
        Action("Release", 1),
        {**lease(1, 1, 2, now=1), **holding(1, 1, 1, sent=2), "down[1]": 1},
        None,
        design=CRASH,
    ),
    Example(
        "a crashed worker acquires nothing",
        Action("Acquire", 1),
        {"now": 3, "grants": 1, "issued": 1, "down[1]": 1},
        None,
        design=CRASH,
    ),
    Example(
        "a crashed worker's write in flight is still delivered and accepted",
        Action("Deliver", 1),
        {**lease(1, 1, 2, now=1), **holding(1, 1, 1, sent=1, pending=1), "down[1]": 1},
        {"pending[1]": 0, "last": 1, "lastg": 1, "hwm": 1},
        design=CRASH,
    ),
    Example(
        "a crashed worker's stale write is rejected; it stays down",
        Action("Deliver", 1),
        {**GAP, "hwm": 2, "down[1]": 1},
        forgets(1),
        design=CRASH,
    ),
    # ----- expiry never --------------------------------------------------------------------
    Example(
        "a lock without a lease is granted with no expiry",
        Action("Acquire", 1),
        {"now": 1},
        {"issued": 1, "grants": 1, "holder": 1, "tok[1]": 1, "gid[1]": 1},
        design=NEVER,
    ),
    Example(
        "a lock without a lease is not granted while held, however late",
        Action("Acquire", 2),
        {**granted(1, 1, now=5), **holding(1, 1, 1)},
        None,
        design=NEVER,
    ),
    Example(
        "a released lock without a lease is granted again",
        Action("Acquire", 2),
        {"now": 4, "grants": 1, "issued": 1},
        {"issued": 2, "grants": 2, "holder": 2, "tok[2]": 2, "gid[2]": 2},
        design=NEVER,
    ),
    Example(
        "the holder's late write lands within its grant: a lock without a lease never runs out",
        Action("Deliver", 1),
        {**granted(1, 1, now=5), **holding(1, 1, 1, sent=1, pending=1)},
        {"pending[1]": 0, "last": 1, "lastg": 1, "hwm": 1},
        design=NEVER,
    ),
    # ----- P6 on Tick ----------------------------------------------------------------------
    Example(
        "time passes past a lease after the crash of its holder: freed in time",
        Action("Tick"),
        {**lease(1, 1, 2, now=1), **holding(1, 1, 1), "down[1]": 1},
        {"now": 2},
        design=CRASH,
    ),
    Example(
        "L ticks after the crash the lock without a lease is still held: within the bound",
        Action("Tick"),
        {**granted(1, 1, now=1), **holding(1, 1, 1), "down[1]": 1},
        {"now": 2},
        design=NEVER_CRASH,
    ),
    Example(
        "L + 1 ticks after the crash the lock without a lease is still held",
        Action("Tick"),
        {**granted(1, 1, now=2), **holding(1, 1, 1), "down[1]": 1},
        {"now": 3},
        design=NEVER_CRASH,
        breaks=("P6",),
    ),
    Example(
        "a crashed worker whose grant was superseded holds up nobody",
        Action("Tick"),
        {**granted(2, 2, now=4), **holding(1, 1, 1), **holding(2, 2, 2), "down[1]": 1},
        {"now": 5},
        design=Design(receiver="none", expiry="never", crashes=1),
    ),
    # ----- faults ------------------------------------------------------------------------
    Example(
        "a storage restart forgets the volatile mark",
        Action("StorageRestart"),
        {"hwm": 2, "last": 2},
        {"hwm": 0, "storage_restarts": 1},
        design=Design(hwm="volatile", storage_restarts=1),
    ),
    Example(
        "no more storage restarts than allowed",
        Action("StorageRestart"),
        {"storage_restarts": 1},
        None,
        design=Design(hwm="volatile", storage_restarts=1),
    ),
    Example(
        "an equality receiver's mark is volatile too",
        Action("StorageRestart"),
        {"mark": 1},
        {"mark": 0, "storage_restarts": 1},
        design=Design(receiver="equality", hwm="volatile", storage_restarts=1),
    ),
    Example(
        "a coordinator restart forgets the counter and the lease; workers are not told",
        Action("CoordinatorRestart"),
        {**lease(1, 1, 2), **holding(1, 1, 1)},
        {"issued": 0, "holder": 0, "expires": 0, "coordinator_restarts": 1},
        design=Design(token="counter-volatile", coordinator_restarts=1),
    ),
)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.name)
def test_rule_by_example(example: Example) -> None:
    """Given the state, when the action is taken, then exactly these variables change."""
    system = System(example.design, example.bounds)
    layout = system.layout
    unknown = set(example.given) | set(example.then or {})
    assert unknown <= set(layout.columns), unknown - set(layout.columns)
    state = tuple(example.given.get(column, 0) for column in layout.columns)
    layout.check_state(state)
    rule = system.rule_for(example.when)
    if example.then is None:
        assert not system.is_enabled(state, rule)
        return
    assert system.is_enabled(state, rule)
    after = layout.as_dict(system.apply(state, rule))
    before = layout.as_dict(state)
    changed = {column: value for column, value in after.items() if value != before[column]}
    expected = {c: v for c, v in example.then.items() if v != before[c]}
    assert changed == expected
    assert system.violations(state, rule) == example.breaks


def test_every_action_and_option_has_an_example() -> None:
    """The examples cover every action name and every value of every choice option."""
    names = {example.when.name for example in EXAMPLES}
    assert names == set(ACTION_NAMES)
    designs = [example.design for example in EXAMPLES]
    for option in OPTIONS:
        if option.kind is Kind.CHOICE:
            assert {str(getattr(d, option.name)) for d in designs} == set(option.values), option
        if option.kind is Kind.FLAG:
            assert any(getattr(d, option.name) for d in designs), option.name
    assert {d.crashes for d in designs} >= {0, 1, 2}


def test_unbounded_rules_let_time_and_grants_run_past_the_bounds() -> None:
    """The prover's rules (time and grants unbounded) still tick and grant where the
    explorer's stop, so a proof for every horizon is not a proof up to the bounds."""
    bounds = Bounds(workers=2, lease=2, horizon=5, grants=2, writes=1)
    system = System(Design(), bounds)
    at_the_bounds = system.view(
        tuple({"now": 5, "grants": 2, "issued": 2}.get(c, 0) for c in system.layout.columns)
    )
    bounded = RuleBuilder.of(Design(), bounds)
    unbounded = RuleBuilder.of(Design(), bounds, unbounded=True)
    assert not bounded.tick().guard(at_the_bounds)
    assert not bounded.acquire(1, 0).guard(at_the_bounds)
    assert unbounded.tick().guard(at_the_bounds)
    assert unbounded.acquire(1, 0).guard(at_the_bounds)


def per_worker(workers: int, *names: str) -> list[str]:
    """The labels of each worker's actions in turn, W1's first."""
    return [f"{name}(W{w})" for w in range(1, workers + 1) for name in names]


@pytest.mark.parametrize(
    "design, bounds, order",
    [
        (
            Design(receiver="fenced-nonatomic", workload="rmw"),
            Bounds(workers=2),
            ["Tick", *per_worker(2, "Acquire", "Send", "Deliver", "Check", "Apply", "Release")],
        ),
        (
            Design(token="random"),
            Bounds(workers=1, grants=2),
            [
                "Tick",
                "Acquire(W1, token 1)",
                "Acquire(W1, token 2)",
                *per_worker(1, "Send", "Deliver", "Release"),
            ],
        ),
        (
            Design(
                token="counter-volatile", hwm="volatile", storage_restarts=1, coordinator_restarts=1
            ),
            Bounds(workers=1),
            [
                "Tick",
                *per_worker(1, "Acquire", "Send", "Deliver", "Release"),
                "StorageRestart",
                "CoordinatorRestart",
            ],
        ),
    ],
    ids=["non-atomic-rmw", "random", "restarts"],
)
def test_actions_are_tried_in_the_documented_order(
    design: Design, bounds: Bounds, order: list[str]
) -> None:
    """The order decides which of equally short counterexamples is shown (docs/model.md)."""
    assert [rule.action.label() for rule in System(design, bounds).rules] == order
