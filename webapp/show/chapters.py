"""The walkthrough chapters: each a few runs of the model, scripted or found by the explorer.

A chapter only names designs, bounds and action lists (or asks the explorer for a
property's shortest counterexample); every state, verdict and sentence shown comes from
replaying those actions through the model, so a chapter cannot claim what the model does
not do. The tests check that each run shows the violation or rejection its caption names.
A run may have another beside it (the same actions under another design), stepped together.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from fencing.stories import (
    KEEPALIVE_FENCING_ACTIONS,
    KEEPALIVE_LEASE_ACTIONS,
    LOCK_WITHOUT_LEASE_ACTIONS,
    PAUSED_WORKER_ACTIONS,
    PAUSED_WORKER_BOUNDS,
    WHY_A_LEASE_BOUNDS,
)
from model.actions import Action, ActionKind
from model.check.explorer import explore
from model.claims import render_citations
from model.design import REFERENCE_BOUNDS, Bounds, Design, Receiver
from model.formats.trace import Trace, replay
from model.presets import PRESETS


@dataclass(frozen=True)
class RunSpec:
    """How to obtain one run: scripted actions, or a preset's shortest counterexample."""

    label: str
    caption: str
    design: Design
    bounds: Bounds
    actions: tuple[Action, ...] = ()
    counterexample_of: tuple[str, str] | None = None
    """(preset, property): use the explorer's shortest counterexample instead of `actions`."""
    in_one_step: bool = False
    """Handle each request in one step: every Check becomes a Deliver, every Apply goes
    (the same requests, for a receiver that checks and writes atomically)."""
    beside: RunSpec | None = None
    """A run shown next to this one, stepped with it by one stepper."""
    short: str = ""
    """A shorter name for a tab, when the runs stepped together are tabs (else the label)."""

    @property
    def tab(self) -> str:
        """The run's name on its tab: the short name, or the label."""
        return self.short or self.label

    @property
    def replays_another_design(self) -> bool:
        """Whether the run replays a preset's counterexample on a design other than its own."""
        if self.counterexample_of is None:
            return False
        return PRESETS[self.counterexample_of[0]].design != self.design

    def shown(self) -> tuple[RunSpec, ...]:
        """This run and the ones beside it (a run beside may have one beside it in turn):
        what one choice of the chapter shows, stepped together."""
        return (self,) if self.beside is None else (self, *self.beside.shown())


@dataclass(frozen=True)
class Chapter:
    """A chapter: its number, title, the question it answers, its runs and its compared presets."""

    number: int
    title: str
    question: str
    runs: tuple[RunSpec, ...]
    """The runs a reader chooses between (each perhaps with a run beside it)."""
    presets: tuple[str, ...]
    properties: tuple[str, ...]
    takeaway_template: str
    """The lesson, citing presets' claims as `{preset:P2}` (rendered as `(P2 fails)`)."""

    @property
    def all_runs(self) -> tuple[RunSpec, ...]:
        """Every run the chapter shows, each followed by the run beside it."""
        return tuple(spec for choice in self.runs for spec in choice.shown())

    @property
    def takeaway(self) -> str:
        """The lesson with its verdict notes rendered from the cited presets' claims."""
        return render_citations(
            self.takeaway_template, {name: PRESETS[name].claims for name in self.presets}
        )


def counterexample_actions(preset_name: str, prop: str, bounds: Bounds) -> tuple[Action, ...]:
    """The explorer's shortest counterexample to `prop` for a preset (empty if none)."""
    verdict = explore(PRESETS[preset_name].design, bounds).verdicts.get(prop)
    if verdict is None or not verdict.violated or verdict.actions is None:
        return ()
    return verdict.actions


def in_one_step(actions: tuple[Action, ...]) -> tuple[Action, ...]:
    """The same requests handled atomically: each Check becomes a Deliver (the check and the
    write in one step) and each Apply, now part of it, is dropped."""
    return tuple(
        Action(ActionKind.DELIVER, a.worker) if a.name is ActionKind.CHECK else a
        for a in actions
        if a.name is not ActionKind.APPLY
    )


def run_actions(spec: RunSpec) -> tuple[Action, ...]:
    """The action list of a run, asking the explorer when the run is a counterexample."""
    if spec.counterexample_of is None:
        actions = spec.actions
    else:
        preset_name, prop = spec.counterexample_of
        actions = counterexample_actions(preset_name, prop, spec.bounds)
    return in_one_step(actions) if spec.in_one_step else actions


def build_run(spec: RunSpec) -> Trace:
    """Replay a run through the model."""
    return replay(spec.design, spec.bounds, run_actions(spec), title=spec.label)


def _same_as(
    base: RunSpec, label: str, caption: str, design: Design, in_one_step: bool = False
) -> RunSpec:
    """The actions of another run (found by the explorer) replayed on a different design."""
    return RunSpec(
        label, caption, design, base.bounds, base.actions, base.counterexample_of, in_one_step
    )


def _with_beside(spec: RunSpec, beside: RunSpec) -> RunSpec:
    """A run with another shown next to it."""
    return replace(spec, beside=beside)


_WORKER_CHECKS_P1 = RunSpec(
    "Worker checks its lease",
    "The worker checks its lease before each send, and sends while the lease still runs; the "
    "write is delayed in the network past the lease, and the receiver checks nothing.",
    PRESETS["worker-checks-lease"].design,
    REFERENCE_BOUNDS,
    counterexample_of=("worker-checks-lease", "P1"),
)
_NONATOMIC_P3 = RunSpec(
    "Check, then write: two steps",
    "This receiver compares the token in one step and stores the write in a later one. Both "
    "writes pass the check against the same mark before either is stored, and the older "
    "write is stored last.",
    PRESETS["nonatomic-receiver"].design,
    REFERENCE_BOUNDS,
    counterexample_of=("nonatomic-receiver", "P3"),
)
_STALE_AFTER_EXPIRY = (
    Action(ActionKind.ACQUIRE, 1),
    Action(ActionKind.SEND, 1),
    Action(ActionKind.TICK),
    Action(ActionKind.TICK),
    Action(ActionKind.ACQUIRE, 2),
    Action(ActionKind.DELIVER, 1),
    Action(ActionKind.SEND, 2),
    Action(ActionKind.DELIVER, 2),
)
"""W1 sends, its write is delayed past its lease; W2 is granted the lock; W1's write lands
before W2's first."""

_KEY_VERSION_P3 = RunSpec(
    "Key version",
    "The explorer's shortest run in which an older grant's write lands after a newer grant's: "
    "both carry token 1.",
    PRESETS["key-version-token"].design,
    REFERENCE_BOUNDS,
    counterexample_of=("key-version-token", "P3"),
)
_LOST_UPDATE = RunSpec(
    "Read-modify-write, reads without token",
    "The explorer's shortest run in which an accepted write was based on an outdated read. "
    "The new holder's read carries no token, so the receiver's mark stays where it was.",
    PRESETS["rmw-fencing-unfenced-reads"].design,
    REFERENCE_BOUNDS,
    counterexample_of=("rmw-fencing-unfenced-reads", "P5"),
)
_GAP = RunSpec(
    "Fencing: the stale write lands in the gap",
    "W1 sends its write while its lease runs; the write is delayed in the network past the "
    "lease. W2 is granted the lock, and W1's write arrives before W2 has sent anything: the "
    "receiver has seen no newer token, so it accepts.",
    Design(),
    REFERENCE_BOUNDS,
    _STALE_AFTER_EXPIRY,
)

ATOMIC: Final = (
    "Atomic means the receiver compares the token and stores the write as one indivisible "
    "step, so nothing can happen between the check and the write."
)

_NO_LEASE_RUN: Final = RunSpec(
    "No lease",
    "A lock that never expires (`lock-without-lease`). While W1 pauses, nobody else can "
    "take the lock, so when W1 wakes its write is the only one and lands in order. W2 "
    "then takes the lock, writes and crashes without releasing it: the lock stays "
    "with W2 for ever, and nobody can take it again.",
    PRESETS["lock-without-lease"].design,
    WHY_A_LEASE_BOUNDS,
    LOCK_WITHOUT_LEASE_ACTIONS,
    short="No lease",
)

_KEEPALIVE_RUN: Final = RunSpec(
    "A lease with keepalives",
    "A lease of L ticks that a running holder renews (`keepalive-lease`), and a plain "
    "store. W1 pauses, renews nothing, and its lease runs out; W2 is granted the lock "
    "and writes; W1 wakes and sends its late write, which the store accepts after "
    "W2's. W2 renews, then crashes: its renewals stop, its lease runs out L ticks "
    "after the last one, and W1 is granted the lock again.",
    PRESETS["keepalive-lease"].design,
    WHY_A_LEASE_BOUNDS,
    KEEPALIVE_LEASE_ACTIONS,
    short="Keepalives",
)

_KEEPALIVE_FENCING_RUN: Final = RunSpec(
    "A lease with keepalives and fencing",
    "The same lease with a receiver that checks the fencing token "
    "(`keepalive-fencing`). W1's late write carries token 1 after token 2 has been "
    "seen, and is rejected. W2's crash frees the lock as before.",
    PRESETS["keepalive-fencing"].design,
    WHY_A_LEASE_BOUNDS,
    KEEPALIVE_FENCING_ACTIONS,
    short="Keepalives + fencing",
)

_WHY_A_LEASE: Final = Chapter(
    number=0,
    title="Why a lease at all",
    question="A worker that holds the lock goes silent. Either it has crashed and will never "
    "come back, or it is only paused (a GC pause, a stalled VM) and will wake up still "
    "believing it holds the lock. Should the lock service wait for ever, or give the lock to "
    "somebody else after a while? Three designs, stepped together: in each, W1 takes the lock "
    "and pauses, and later W2 takes it and crashes.",
    runs=(_with_beside(_NO_LEASE_RUN, _with_beside(_KEEPALIVE_RUN, _KEEPALIVE_FENCING_RUN)),),
    presets=("lock-without-lease", "keepalive-lease", "keepalive-fencing"),
    properties=("P1", "P2", "P3", "P6"),
    takeaway_template="A lock without a lease is safe against a pause "
    "{lock-without-lease:P1,P2,P3}, but a holder that crashes keeps it for ever "
    "{lock-without-lease:P6}. A lease frees a crashed holder's lock {keepalive-lease:P6}, and "
    "the same expiry takes the lock from a holder that is only paused, whose late write then "
    "lands {keepalive-lease:P1,P2,P3}. The coordinator cannot tell a crash from a pause: both "
    "are a holder that has gone silent, so whatever frees a crashed holder's lock also frees "
    "a paused one's. Fencing lets the receiver refuse the late write once something newer "
    "has landed {keepalive-fencing:P1,P3} and keeps the lease's promise after a crash "
    "{keepalive-fencing:P6}; a late write that arrives before anything newer still lands "
    "{keepalive-fencing:P2}, which chapter 3 takes up.",
)
"""Chapter 0: why a lock needs a lease, and why a lease alone is not enough."""

CHAPTERS: Final = (
    _WHY_A_LEASE,
    Chapter(
        1,
        "The paused worker",
        "Chapter 0 showed why a lock needs a lease, and that a lease also takes the lock from a "
        "holder that is only paused; this chapter follows that paused holder. "
        "W1 takes the lock, pauses past its lease, and wakes up after W2 has been granted the "
        "lock and has written. What happens to W1's late write with a lease alone, and with "
        "fencing tokens checked by the receiver?",
        (
            _with_beside(
                RunSpec(
                    "Lease only",
                    "The paused worker's run with a plain store, which checks nothing.",
                    Design(receiver=Receiver.NONE),
                    PAUSED_WORKER_BOUNDS,
                    PAUSED_WORKER_ACTIONS,
                ),
                RunSpec(
                    "Fencing",
                    "The same actions with a receiver that compares each write's token with "
                    "the highest it has seen.",
                    Design(),
                    PAUSED_WORKER_BOUNDS,
                    PAUSED_WORKER_ACTIONS,
                ),
            ),
        ),
        ("lease-only", "fencing"),
        ("P1", "P2", "P3"),
        "A lease gives the lock back when a worker stops, but it cannot stop a paused worker "
        "from writing later {lease-only:P1,P2,P3}. The receiver's check of the token is what "
        "refuses the late write {fencing:P1,P3}. Fencing still lets through a late write that "
        "arrives before the receiver has seen a newer token {fencing:P2}: chapter 3 "
        "shows that gap.",
    ),
    Chapter(
        2,
        "The receiver must check",
        "With a plain store the coordinator still issues increasing tokens and every write "
        "carries one. Does that help, if nobody compares them? Does it help if the worker "
        "checks its own lease before sending? And must the receiver's check happen in the "
        "same step as the write?",
        (
            _with_beside(
                _WORKER_CHECKS_P1,
                _same_as(
                    _WORKER_CHECKS_P1,
                    "Receiver checks the token",
                    "The same actions, with the worker still checking its lease and a receiver "
                    "that compares tokens.",
                    Design(worker_check=True),
                ),
            ),
            _with_beside(
                _NONATOMIC_P3,
                _same_as(
                    _NONATOMIC_P3,
                    "Check and write: one atomic step",
                    f"The same requests, each checked and stored in one step. {ATOMIC}",
                    PRESETS["fencing"].design,
                    in_one_step=True,
                ),
            ),
        ),
        ("lease-only", "worker-checks-lease", "fencing", "nonatomic-receiver"),
        ("P1", "P2", "P3"),
        "A token that nobody checks changes nothing {lease-only:P1,P3}: only the receiver sees "
        "every write, so only the receiver can refuse the stale one {fencing:P1,P3}. A check "
        "at the worker cannot: the write can be delayed in the network between the check and "
        "the delivery {worker-checks-lease:P1,P3}. And the receiver's check must be atomic "
        "with the write: checked in one step and stored in a later one, two writes pass the "
        "check against the same mark and land in the wrong order {nonatomic-receiver:P1,P3}.",
    ),
    Chapter(
        3,
        "The gap after expiry",
        "Fencing refuses a write whose token is lower than one the receiver has seen. But "
        "from W1's lease expiring until the receiver sees a newer token, nothing at the "
        "receiver refuses W1's token. What does it do with W1's write then, and what does "
        "that cost a read-modify-write workload?",
        (
            _with_beside(
                _GAP,
                RunSpec(
                    "Lease-aware receiver",
                    "The same actions with a receiver that asks the lock service whether the "
                    "writer's lease is current.",
                    PRESETS["lease-aware-receiver"].design,
                    REFERENCE_BOUNDS,
                    _STALE_AFTER_EXPIRY,
                ),
            ),
            _with_beside(
                _LOST_UPDATE,
                _same_as(
                    _LOST_UPDATE,
                    "Fix 1: reads carry the token",
                    "The same actions, but the new holder's read carries its token and raises "
                    "the receiver's mark.",
                    PRESETS["rmw-fencing-fenced-reads"].design,
                ),
            ),
            _same_as(
                _LOST_UPDATE,
                "Fix 2: a lease-aware receiver",
                "The lost update's actions, with a receiver that checks the live lease on every "
                "request. The price: every read and write must ask the lock service whether "
                "the lease is current, in the same transaction as the write (an etcd "
                "transaction comparing the lock key, say).",
                PRESETS["rmw-lease-aware"].design,
            ),
        ),
        (
            "fencing",
            "rmw-fencing-unfenced-reads",
            "rmw-fencing-fenced-reads",
            "lease-aware-receiver",
            "rmw-lease-aware",
        ),
        ("P2", "P5"),
        "Fencing orders writes; it does not know about time. A write that arrives after its "
        "lease but before the receiver has seen a newer token is accepted {fencing:P2}. When "
        "writes depend on reads, that stale write can land between the new holder's read and "
        "its write; the new holder's write, computed from the value before it, then erases "
        "it: a lost update {rmw-fencing-unfenced-reads:P5}. Fencing the reads too closes the "
        "lost update {rmw-fencing-fenced-reads:P5}; checking the live lease closes both "
        "{rmw-lease-aware:P2,P5}, at a price: the receiver must ask the lock service, in the "
        "same transaction as the write.",
    ),
    Chapter(
        4,
        "Where tokens come from",
        "The receiver compares numbers. What if the numbers do not grow with every grant: "
        "etcd's per-key version (always 1 for a fresh key), a lease ID, each worker's own "
        "clock, or a counter that a failover loses? And what does a good source look like?",
        (
            _with_beside(
                _KEY_VERSION_P3,
                _same_as(
                    _KEY_VERSION_P3,
                    "A counter that grows with every grant",
                    "The same actions with the lock key's creation revision as the token "
                    "(etcd's create revision, ZooKeeper's zxid): it grows with every grant, so "
                    "the older grant's late write is refused.",
                    PRESETS["fencing"].design,
                ),
            ),
            RunSpec(
                "A lease ID",
                "etcd's lease ID is unique, but nothing promises that it grows with every "
                "grant: like a random value, the older grant's number can be the larger "
                "one, and then its stale write passes the check.",
                PRESETS["random-token"].design,
                REFERENCE_BOUNDS,
                counterexample_of=("random-token", "P3"),
            ),
            RunSpec(
                "Each worker's clock",
                "Each worker makes its token from its own clock. W1's clock runs one tick "
                "ahead, so its token is newer than the next grant's, and the legitimate "
                "holder after it is refused.",
                PRESETS["local-clock-token"].design,
                REFERENCE_BOUNDS,
                counterexample_of=("local-clock-token", "P4"),
            ),
            RunSpec(
                "A counter lost in a failover",
                "The coordinator keeps its counter in memory only. It restarts (a failover) "
                "and counts from 0 again: the next grant gets a token the old holder already "
                "has, and the old holder's write passes the check. A durable counter is "
                "stored (on disk, or replicated) before a token is handed out, so a restart "
                "goes on from where it was.",
                PRESETS["volatile-counter"].design,
                REFERENCE_BOUNDS,
                counterexample_of=("volatile-counter", "P3"),
            ),
        ),
        ("fencing", "key-version-token", "random-token", "local-clock-token", "volatile-counter"),
        ("P1", "P3", "P4"),
        "The receiver can only check the numbers it is given {key-version-token:P1}. Those "
        "numbers protect grant order only if they grow with every grant, across failovers "
        "too: a durable counter does {fencing:P3}; a key version {key-version-token:P3}, a "
        "random value such as a lease ID {random-token:P3} and a counter lost in a failover "
        "{volatile-counter:P3} do not. A worker's clock that runs ahead gets the "
        "legitimate holder refused {local-clock-token:P4}.",
    ),
)

BY_NUMBER: Final = {chapter.number: chapter for chapter in CHAPTERS}


def chapter_traces(number: int) -> tuple[Trace, ...]:
    """Every run of a chapter, replayed, each followed by the run beside it."""
    return tuple(build_run(spec) for spec in BY_NUMBER[number].all_runs)


def choice_traces(number: int, index: int) -> tuple[Trace, ...]:
    """The runs of one choice of a chapter (a run and the one beside it), replayed."""
    return tuple(build_run(spec) for spec in BY_NUMBER[number].runs[index].shown())
