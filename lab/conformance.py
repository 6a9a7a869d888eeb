"""Conformance: a lab history mapped to the model's actions and replayed by its interpreter.

The mapping (documented in docs/lab.md):

- design: etcd-txn ↔ receiver lease-aware, create-revision ↔ token counter, key version ↔
  key-version, lease ID ↔ random (every lock service's token sources map as
  `lab.lock_table` says: ZooKeeper's sequence and Redis's counter ↔ counter, Redis's random
  value ↔ random), the mark ↔ hwm (a volatile mark with its restarts),
  read-modify-write ↔ workload rmw, worker checks ↔ worker_check;
- events: a grant ↔ Acquire(w) (with random tokens, the value is the rank of the lease
  ID among the run's grants), a send ↔ Send(w), a delivery ↔ Deliver(w), the non-atomic
  store's check and apply ↔ Check(w) and Apply(w), a release ↔ Release(w), the kill of a
  store with a volatile mark ↔ StorageRestart, a keepalive etcd took (`renew` ok) ↔
  Renew(w) when it moves the model's lease end (a later tick than the lease's last start),
  the nemesis's kill of a worker (`crash`) ↔ Crash(w) when the model's worker holds a grant;
  expiry and keepalives ↔ the options `expiry` and `renew`, the kills ↔ `crashes`; pauses,
  holds and replies are no actions (in the model a worker that takes no step while the
  clock ticks is paused);
- time: each lease, from its grant (or the last keepalive mapped to Renew) to etcd's
  revocation, spans exactly L ticks (so a tick is a lease's real length / L, about
  1.4 s / L for a 1 s TTL); a lock without a lease has no such span; an event inside a lease
  gets the tick of its share of that lease, and time outside leases is cut into ticks of
  the median lease's length / L. Ticks never go backwards and never reorder events.

The replay walks the mapped actions through `model.system.System`: an action that is not
enabled, a reception whose outcome differs from the store's, or a token order that
differs from the model's tokens is the first refused event, named with the model's reason.
A history larger than the model's bounds (grants, horizon, steps) is replayed in segments,
each as long as the bounds allow and each starting from the state the model reached at the
end of the one before, renamed to fit (lab.rebuild): a stale holder, a request in flight,
the mark, the last accepted token and a running lease all cross the cut, so every event of
the run is checked, and the result says how much was (lab.segments). A grant that only the
lock service's record shows, made to a worker asking for the lock that never heard of it
(a queued ZooKeeper contender paused past its session), is mapped to Acquire(w): the
model's lock is that worker's until its lease ends; a segment ends before the worker's next
step, and the next starts with the worker holding nothing, as it believes.

A write of unknown outcome (its reply never came and the store's log never decided it) is
replayed both ways: received by the model's receiver just before the store was killed (or
the worker heard the request fail), and never received (the model's request stays in
flight; the real worker retired, so it takes no further step either). The history is
allowed when a way that agrees with what the witnesses decided is; the result says which
ways the model allows.
"""

from __future__ import annotations

import bisect
import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Final

from lab.checker import CHECKED, check_properties
from lab.describe import describe
from lab.history import Happening, Timeline
from lab.rebuild import Carried, ClockState, Names, carry, names_for, replay_from, start_state
from lab.segments import MODEL_KINDS, Coverage, coverage_of
from lab.settings import MODEL_EXPIRY, MODEL_RECEIVER, MODEL_TOKEN, Settings
from lab.witness import UnknownWrite
from model.actions import Action, ActionKind
from model.design import (
    MAX_CRASHES,
    MAX_GRANTS,
    MAX_HORIZON,
    MAX_LEASE,
    MAX_RESTARTS,
    Bounds,
    Design,
)
from model.explain.narration import describe_step, reception_outcome
from model.formats.trace import MAX_TRACE_STEPS, Trace
from model.layout import INT64_LIMIT, domain_sizes
from model.options import MarkStore, Workload
from model.system import State, System

LEASE_TICK_CHOICES: Final = (2, 1)
"""Ticks per lease tried, finest first: the finest whose horizon fits is used."""
RECEPTIONS: Final = ("deliver", "check", "apply")


@dataclass(frozen=True)
class Mapped:
    """A model action and the history event it stands for (None: a tick of the clock)."""

    action: Action
    event: Happening | None
    outcome: str | None = None
    """For a reception the store never logged (a write of unknown outcome taken as applied):
    the outcome it must have had."""
    optional: bool = False
    """A step the model may not take here without the history being refused (a kill of a
    worker the model sees holding nothing): skipped when not enabled."""


@dataclass(frozen=True)
class UnknownOutcome:
    """A write of unknown outcome: what decided it, and which possibilities the model allows."""

    write: UnknownWrite
    applied: bool | None
    """Whether the model allows the history with the write applied (None: not tried, the
    write is known not to have been applied)."""
    not_applied: bool | None
    """Whether the model allows it with the write never applied (None: not tried)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            **self.write.to_dict(),
            "model_allows_applied": self.applied,
            "model_allows_not_applied": self.not_applied,
        }

    def sentence(self) -> str:
        """What the model allows of this write, and what decided it."""
        w = self.write
        allows = [
            words
            for words, ok in (("applied", self.applied), ("not applied", self.not_applied))
            if ok
        ]
        model = f"the model allows it {' or '.join(allows)}" if allows else "neither is allowed"
        decided = f"; {w.by} says it was {w.decided}" if w.decided else "; nothing decided which"
        return f"W{w.worker}'s write {w.request} of unknown outcome: {model}{decided}"


MAX_UNKNOWN_BRANCHES: Final = 4
"""Undecided writes whose two possibilities are both tried (2**4 replays at most); beyond
that, later undecided writes are taken as not applied."""


@dataclass(frozen=True)
class Mapping:
    """A history (or its longest prefix within the bounds) as model actions."""

    actions: tuple[Mapped, ...]
    checked: int
    """How many history events (from the start) the actions cover."""
    ticks: int
    grants: int
    restarts: int
    crashes: int
    lease_ticks: int
    tick_seconds: float
    limit: str | None
    """Why the mapping stopped before the end of the history (None: it did not)."""
    begin: int = 0
    """The index of the first event mapped (a segment's start)."""
    positions: tuple[int, ...] = ()
    """For each event mapped, where its actions (its ticks first) start."""
    clocks: tuple[ClockState, ...] = ()
    """For each event mapped, the clock just before it."""
    tallies: tuple[tuple[int, int, int], ...] = ()
    """For each event mapped, the grants, restarts and kills mapped before it."""
    forced: bool = False
    """Whether the mapping stopped at a worker's next step after a grant it never heard of
    (a segment must end there: the worker does not hold that grant)."""
    final_clock: ClockState | None = None
    """The clock after the last event mapped."""


@dataclass(frozen=True)
class Refusal:
    """The first history event the model does not allow, and the model's reason."""

    event: Happening
    action: str
    reason: str
    service: str = "etcd"
    """The lock service of the run (the event is told in its words)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the event (position, time, kind, worker, sentence) and the reason."""
        return {
            "event": {
                "index": self.event.index,
                "t": self.event.t,
                "kind": self.event.kind,
                "worker": self.event.worker,
                "what": describe(self.event, self.service),
                "model_action": self.action,
            },
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Conformance:
    """Whether the model allows a history, how it was mapped, and the model's trace of it."""

    design: Design
    bounds: Bounds
    mapping: Mapping
    total: int
    refused: Refusal | None
    trace: Trace | None
    step_events: tuple[int | None, ...]
    """The history event index of each trace step (None for a tick)."""
    agreement: dict[str, tuple[int, int]]
    """Per property: violations counted by the history checker and by the model's replay
    (P1 and P3 counted by the checker against the last accepted write, as the model's ghost
    variables count them)."""
    unknown: tuple[UnknownOutcome, ...] = ()
    coverage: Coverage | None = None
    """How much of the history the model checked (lab.segments)."""
    segment: tuple[int, Trace] | None = None
    """A later segment the model refused: the index of its first event, and the model's run
    of it from the state the segment before ended in (lab.rebuild)."""

    @property
    def complete(self) -> bool:
        """Whether the whole history was checked (it fits the model's bounds)."""
        return self.mapping.limit is None

    @property
    def allowed(self) -> bool:
        """The model allows the whole history: nothing refused, nothing left unchecked."""
        return self.refused is None and self.complete

    @property
    def properties_agree(self) -> bool:
        """Whether the model's flags and the history checker count the same violations."""
        return all(history == model for history, model in self.agreement.values())

    def verdict(self) -> str:
        """One sentence: allowed, refused (which event, why), or checked as far as it fits."""
        if self.refused is not None:
            return (
                f"the model refuses event {self.refused.event.index + 1} at "
                f"{self.refused.event.t:.3f} s "
                f"({describe(self.refused.event, self.refused.service)}): "
                f"{self.refused.reason}"
            )
        if self.complete:
            either = [u for u in self.unknown if u.applied and u.not_applied]
            if either:
                writes = ", ".join(f"W{u.write.worker}'s write {u.write.request}" for u in either)
                return f"the model allows this history whether or not {writes} was applied."
            if self.coverage is not None and self.coverage.segments > 1:
                return (
                    f"the model allows this history, replayed in {self.coverage.segments} "
                    "segments, each from the state the one before ended in."
                )
            return "the model allows this history."
        if self.coverage is not None and self.coverage.segments > 1:
            return (
                f"the model allows every segment it checked ({self.coverage.segments}); the "
                f"rest is beyond the model's bounds ({self.mapping.limit}) where the run "
                "could not be cut, so it was not checked."
            )
        last = self.mapping.checked
        return (
            f"the model allows the first {last} of {self.total} events; the rest is beyond the "
            f"model's bounds ({self.mapping.limit}), so it was not checked."
        )

    def to_dict(self) -> dict[str, Any]:
        """The `conformance` object of the lab's JSON output."""
        return {
            "allowed": self.allowed,
            "first_refused": self.refused.to_dict() if self.refused else None,
            "complete": self.complete,
            "checked_events": self.mapping.checked,
            "total_events": self.total,
            "limit": self.mapping.limit,
            "verdict": self.verdict(),
            "design": self.design.to_dict(),
            "bounds": self.bounds.to_dict(),
            "lease_ticks": self.mapping.lease_ticks,
            "tick_seconds": round(self.mapping.tick_seconds, 4),
            "model_steps": len(self.trace.steps) if self.trace else 0,
            "properties_agree": self.properties_agree,
            "unknown_writes": [u.to_dict() for u in self.unknown],
            "agreement": {
                name: {"history": pair[0], "model": pair[1]}
                for name, pair in self.agreement.items()
            },
            "coverage": self.coverage.to_dict() if self.coverage else None,
            "refused_segment_from_event": self.segment[0] if self.segment else None,
        }


def model_design(settings: Settings, restarts: int, crashes: int = 0) -> Design:
    """The model's design for a lab run with `restarts` storage restarts and `crashes` kills
    of workers."""
    volatile = settings.hwm == "volatile" and settings.keeps_mark and restarts > 0
    return Design(
        token=MODEL_TOKEN[settings.token],
        receiver=MODEL_RECEIVER[settings.receiver],
        hwm=MarkStore.VOLATILE if volatile else MarkStore.DURABLE,
        storage_restarts=min(restarts, MAX_RESTARTS) if volatile else 0,
        worker_check=settings.worker_check,
        workload=Workload(settings.workload),
        expiry=MODEL_EXPIRY[settings.expiry],
        renew=settings.renews,
        crashes=min(crashes, MAX_CRASHES),
    )


def _restart_counts(settings: Settings) -> bool:
    """Whether a storage restart is a model action (a volatile mark forgets it)."""
    return settings.hwm == "volatile" and settings.keeps_mark


def _simple_action(event: Happening) -> Action | None:
    """The model action of a worker or store event (grants and restarts aside)."""
    names = {
        "send": ActionKind.SEND,
        "deliver": ActionKind.DELIVER,
        "check": ActionKind.CHECK,
        "apply": ActionKind.APPLY,
        "release": ActionKind.RELEASE,
    }
    name = names.get(event.kind)
    return Action(name, event.worker) if name else None


class _Clock:
    """Model time for real time: L ticks per lease, the median lease's tick elsewhere."""

    def __init__(
        self,
        line: Timeline,
        lease_ticks: int,
        tick_seconds: float,
        start: ClockState | None = None,
    ) -> None:
        self.line = line
        self.lease_ticks = lease_ticks
        self.tick = tick_seconds
        self.lease: tuple[float, int, float | None, int] | None = None
        """The live lease: its start (the grant or the last keepalive mapped to Renew) time
        and tick, its end time (if the service ended it after this start), its grant's
        revision."""
        if start is None:
            # Model time starts at the first grant: before it, nothing the model tracks happens.
            first = next((e for e in line.events if e.kind == "grant"), None)
            self.now = 0
            self.anchor = (first.t if first else 0.0, 0)
        else:
            self.now, self.anchor, self.lease = start
        self.leased = line.history.settings.expiry != "never"
        self.renewed = False
        """Whether the last event was a keepalive that moved the lease's end (a Renew)."""

    def snapshot(self) -> ClockState:
        """The clock's state now (to start a segment from)."""
        return (self.now, self.anchor, self.lease)

    def _end_after(self, revision: int, start: float) -> float | None:
        """When the service ended the grant's lease, if no keepalive it took came after
        `start`."""
        info = self.line.grants[revision]
        later = any(t > start for t in self.line.renewals.get(revision, ()))
        return info.ended if info.ended_by == "revoked" and not later else None

    def target(self, t: float) -> int:
        """The tick of time t: a share of the live lease, or counted from the last anchor."""
        if self.lease is not None:
            start, tick, end, _ = self.lease
            span = (end - start) / self.lease_ticks if end is not None else self.tick
            share = math.floor((t - start) / span) if span > 0 else 0
            return tick + min(self.lease_ticks - 1, max(0, share))
        since, tick = self.anchor
        return tick + max(0, math.floor((t - since) / self.tick))

    def _end_lease(self, t: float, tick: int) -> None:
        """The live lease is over at time t, tick `tick`."""
        self.lease = None
        self.anchor = (t, tick)

    def ticks_for(self, event: Happening) -> int:
        """The tick this event happens at (never earlier than the last one)."""
        self.renewed = False
        if event.kind == "grant":
            if self.lease is not None:  # the previous key must have gone: its lease ran out
                self._end_lease(event.t, self.lease[1] + self.lease_ticks)
            target = max(self.now, self.target(event.t))
            revision = int(event.get("revision"))
            if self.leased:
                self.lease = (event.t, target, self._end_after(revision, event.t), revision)
            return target
        if event.kind == "renew":
            target = max(self.now, self.target(event.t))
            live = self.lease
            if live is not None and live[3] == int(event.get("grant")) and target > live[1]:
                self.lease = (event.t, target, self._end_after(live[3], event.t), live[3])
                self.renewed = True
            return target
        if event.kind == "revoked":
            if self.lease is not None and self.lease[3] == int(event.get("grant")):
                target = self.lease[1] + self.lease_ticks
                self._end_lease(event.t, target)
                return max(self.now, target)
            return self.now
        target = max(self.now, self.target(event.t))
        live = self.lease
        if (
            event.kind == "release"
            and event.get("deleted")
            and live
            and live[3] == int(event.get("grant"))
        ):
            self._end_lease(event.t, target)
        return target


def _tick_seconds(line: Timeline, lease_ticks: int) -> float:
    """The length of a tick outside leases: the median revoked lease's length / L."""
    lives = line.lease_seconds()
    lease = statistics.median(lives) if lives else float(line.history.settings.ttl)
    return max(lease, 1e-3) / lease_ticks


def _receptions(settings: Settings, send: Happening) -> list[Mapped]:
    """The model's reception of a write the store never logged, taken as applied."""
    w = send.worker
    if settings.receiver == "fenced-nonatomic":
        return [
            Mapped(Action(ActionKind.CHECK, w), send, "checked"),
            Mapped(Action(ActionKind.APPLY, w), send, "accepted"),
        ]
    return [Mapped(Action(ActionKind.DELIVER, w), send, "accepted")]


def _grant_bound(settings: Settings, grants: int, names: Names | None, top: int) -> int:
    """The model's G for a piece: its grants and the grants still held or remembered where
    it starts, and room for every token value it uses (a counter's next values, or the
    random values' ranks)."""
    model = MODEL_TOKEN[settings.token]
    held = names.top_grant if names else 0
    bound = held + grants
    if model.row.uses_counter:
        bound = max(bound, (names.top_token if names else 0) + grants)
    if model.row.picks_unused_value:
        bound = max(bound, top, names.top_token if names else 0)
    return max(1, bound)


def map_history(
    line: Timeline,
    lease_ticks: int,
    applied: dict[int, list[Happening]] | None = None,
    begin: int = 0,
    carried: Carried | None = None,
    names: Names | None = None,
    tick_seconds: float | None = None,
) -> Mapping:
    """The model actions of the history from event `begin` (the whole history by default,
    from the model's initial state; a segment from a `carried` state), stopping before the
    first event beyond the bounds, or before the next step of a worker after a grant it
    never heard of (there the segment must end: lab.rebuild).

    `applied` takes writes of unknown outcome as applied: each send listed under an event
    index is received (as the model's receiver does it) just before that event; under -1,
    at the end of the history."""
    applied = applied or {}
    settings = line.history.settings
    tick = tick_seconds if tick_seconds is not None else _tick_seconds(line, lease_ticks)
    clock = _Clock(line, lease_ticks, tick, carried.clock if carried else None)
    ranks = names.ranks if names is not None else _random_values(line)
    picks = MODEL_TOKEN[settings.token].row.picks_unused_value
    kept_crashed = carried.crashed if carried else 0
    unheard: set[int] = set()
    actions: list[Mapped] = []
    positions: list[int] = []
    clocks: list[ClockState] = []
    tallies: list[tuple[int, int, int]] = []
    grants = restarts = crashes = checked = top = 0
    limit, forced = None, False
    for event in line.events[begin:]:
        action = _simple_action(event)
        more_grants, more_restarts, more_crashes, more_top = grants, restarts, crashes, top
        optional = False
        if event.kind == "crash":
            more_crashes += 1
            action, optional = Action(ActionKind.CRASH, event.worker), True
        elif event.kind == "grant":
            more_grants += 1
            value = ranks.get(int(event.get("revision")), 0) if picks else 0
            more_top = max(top, value)
            action = Action(ActionKind.ACQUIRE, event.worker, value)
        elif event.kind == "storage-kill" and _restart_counts(settings):
            more_restarts += 1
            action = Action(ActionKind.STORAGE_RESTART)
        if action is not None and event.kind != "crash" and event.worker in unheard:
            forced = True  # its next step after a grant it never heard of
            break
        saved = clock.snapshot()
        tick = clock.ticks_for(event)
        if clock.renewed:
            action, optional = Action(ActionKind.RENEW, event.worker), True
        inserted = [m for send in applied.get(event.index, []) for m in _receptions(settings, send)]
        steps = len(actions) + (tick - clock.now) + (1 if action else 0) + len(inserted)
        bound = _grant_bound(settings, more_grants, names, more_top)
        down = more_crashes + kept_crashed
        limit = _beyond(bound, tick, steps, more_restarts, down) or _too_many_states(
            settings, lease_ticks, tick, bound, more_restarts, down
        )
        if limit:
            clock.now, clock.anchor, clock.lease = saved
            break
        positions.append(len(actions))
        clocks.append(saved)
        tallies.append((grants, restarts, crashes))
        actions.extend(Mapped(Action(ActionKind.TICK), None) for _ in range(tick - clock.now))
        clock.now = tick
        actions.extend(inserted)
        if action is not None:
            actions.append(Mapped(action, event, optional=optional))
        if event.kind == "grant" and event.get("unanswered"):
            unheard.add(event.worker)
        grants, restarts, crashes, top = more_grants, more_restarts, more_crashes, more_top
        checked += 1
    if limit is None and not forced:
        actions.extend(m for send in applied.get(-1, []) for m in _receptions(settings, send))
    return Mapping(
        tuple(actions),
        checked,
        clock.now,
        grants,
        restarts,
        crashes,
        lease_ticks,
        clock.tick,
        limit,
        begin,
        tuple(positions),
        tuple(clocks),
        tuple(tallies),
        forced,
        clock.snapshot(),
    )


def _beyond(grants: int, ticks: int, steps: int, restarts: int, crashes: int = 0) -> str | None:
    """Which of the model's bounds an event would cross, in words (None: none)."""
    if grants > MAX_GRANTS:
        return f"more than {MAX_GRANTS} grants and tokens in play"
    if ticks > MAX_HORIZON:
        return f"more than {MAX_HORIZON} ticks of model time"
    if steps > MAX_TRACE_STEPS:
        return f"more than {MAX_TRACE_STEPS} model steps"
    if restarts > MAX_RESTARTS:
        return f"more than {MAX_RESTARTS} storage restarts"
    if crashes > MAX_CRASHES:
        return f"more than {MAX_CRASHES} workers killed"
    return None


@functools.lru_cache(maxsize=4096)
def _too_many_states(
    settings: Settings, lease_ticks: int, ticks: int, grants: int, restarts: int, crashes: int
) -> str | None:
    """Whether the model could not number the states of bounds this large (its int64 keys)."""
    design = model_design(settings, restarts, crashes)
    bounds = Bounds(settings.workers, lease_ticks, ticks, max(1, grants), settings.writes)
    if math.prod(domain_sizes(design, bounds).values()) > INT64_LIMIT:
        return (
            f"more states than the model can number with {settings.workers} workers, "
            f"{ticks} ticks and {grants} grants"
        )
    return None


def _random_values(line: Timeline) -> dict[int, int]:
    """With random tokens: each grant's model token, the rank of its ID among the run's grants.

    Only the first MAX_GRANTS grants are ranked (the model checks no more)."""
    first = list(line.grants.values())[:MAX_GRANTS]
    ordered = sorted(first, key=lambda g: g.token)
    return {g.revision: rank for rank, g in enumerate(ordered, start=1)}


def choose_mapping(line: Timeline, applied: dict[int, list[Happening]] | None = None) -> Mapping:
    """The mapping of the whole history with the finest lease ticks that covers the most
    events."""
    best: Mapping | None = None
    for lease_ticks in LEASE_TICK_CHOICES:
        if lease_ticks > MAX_LEASE:
            continue
        mapping = map_history(line, lease_ticks, applied)
        if best is None or mapping.checked > best.checked:
            best = mapping
    assert best is not None
    return best


def _real_outcome(event: Happening) -> str:
    """What the store did, in the model's words: accepted, rejected, checked or read."""
    if event.kind == "check":
        return "checked" if event.get("passed") else "rejected"
    if event.kind == "apply":
        return "accepted"
    return str(event.get("outcome"))


def why_not_enabled(system: System, state: State, action: Action) -> str:
    """Why the model does not allow this action here, from the state's own values."""
    s, w, name = system.view(state), action.worker, action.name
    writes = system.bounds.writes
    if name is ActionKind.ACQUIRE:
        if s.tok[w] != 0 and s.pending[w]:
            return (
                f"in the model W{w}'s request under grant #{s.gid[w]} (token {s.tok[w]}) is "
                f"still in flight, so W{w} still holds that grant; a worker whose request "
                "never got its answer takes no step after it (it retires)"
            )
        if s.tok[w] != 0:
            return (
                f"in the model W{w} still holds grant #{s.gid[w]} (token {s.tok[w]}), and a "
                "model worker drops a grant only when the store rejects its request or it "
                "releases; a worker that gives up after failing its own lease check is "
                "not a step of the model"
            )
        if s.holder and s.now < s.expires:
            return (
                f"the model's lock is still W{s.holder}'s: its lease runs until tick "
                f"{s.expires} and it is tick {s.now}"
            )
        return "the model does not grant the lock here"
    if name is ActionKind.SEND:
        if s.tok[w] == 0:
            return f"in the model W{w} holds no grant"
        if s.pending[w]:
            return f"in the model W{w} already has a request in flight"
        if s.sent[w] >= writes:
            return f"in the model W{w} has already sent its {writes} writes under this grant"
        return (
            f"W{w} checks its lease, which ended at tick {s.until[w]} in the model (it is tick "
            f"{s.now}): the model's worker checks and sends in one step, so it would not send"
        )
    if action.row.reception:
        return f"in the model no request of W{w} is in flight"
    if name is ActionKind.RELEASE:
        if s.tok[w] == 0:
            return f"in the model W{w} holds no grant to release"
        return f"in the model W{w} has sent {s.sent[w]} of its {writes} writes, or one is in flight"
    return "the model allows no more storage restarts"


def _token_order(
    pairs: Sequence[tuple[str, int, int]], real: int, model: int, w: int
) -> str | None:
    """Why the new grant's real token compares with an earlier one unlike its model token."""
    for whose, earlier_real, earlier_model in pairs:
        real_sign = (real > earlier_real) - (real < earlier_real)
        model_sign = (model > earlier_model) - (model < earlier_model)
        if real_sign != model_sign:
            words = {-1: "lower than", 0: "equal to", 1: "higher than"}
            return (
                f"W{w}'s token {real} is {words[real_sign]} {whose} earlier token "
                f"{earlier_real}, but the model's token for this grant is {words[model_sign]} "
                f"the earlier one ({model} against {earlier_model})"
            )
    return None


def _landing_point(line: Timeline, send: Happening) -> int:
    """Where a write of unknown outcome would have been received at the latest: before the
    store was killed (the first kill after the send), before the worker heard it failed,
    or at the end of the history (-1)."""
    request = send.get("request")
    for e in line.events[send.index + 1 :]:
        if e.kind == "storage-kill" or (e.kind == "info" and e.get("request") == request):
            return e.index
    return -1


def _choices(unknown: Sequence[UnknownWrite]) -> list[tuple[bool, ...]]:
    """Every combination of applied (True) or not for the writes of unknown outcome (both
    ways for up to MAX_UNKNOWN_BRANCHES of them; later ones as a witness decided them, or
    not applied)."""
    combos: list[tuple[bool, ...]] = [()]
    for position, write in enumerate(unknown):
        both = position < MAX_UNKNOWN_BRANCHES
        options = [False, True] if both else [write.decided == "applied"]
        combos = [(*combo, option) for combo in combos for option in options]
    return combos


def _consistent(combo: tuple[bool, ...], unknown: Sequence[UnknownWrite]) -> bool:
    """Whether a combination agrees with what the witnesses decided."""
    return all(
        write.decided is None or (write.decided == "applied") == taken
        for write, taken in zip(unknown, combo, strict=True)
    )


def check_conformance(line: Timeline, unknown: Sequence[UnknownWrite] = ()) -> Conformance:
    """Map the history to model actions and replay them; the first refused event, if any.

    A write of unknown outcome is tried both ways (applied just before the store was killed
    or the worker heard it fail, or never applied); the history is allowed when some way
    that agrees with what the witnesses decided (the data versions, the final read) is, and
    the result says which ways the model allows."""
    sends = {str(e.get("request")): e for e in line.events if e.kind == "send"}
    writes = [w for w in unknown if w.request in sends]
    landing = {w.request: _landing_point(line, sends[w.request]) for w in writes}
    results = []
    for combo in _choices(writes):
        applied: dict[int, list[Happening]] = {}
        for write, taken in zip(writes, combo, strict=True):
            if taken:
                send = sends[write.request]
                applied.setdefault(_landing_point(line, send), []).append(send)
        results.append((combo, _conformance(line, applied, landing)))
    agreeing = [r for combo, r in results if _consistent(combo, writes)]
    chosen = next((r for r in agreeing if r.allowed), agreeing[0])
    outcomes = []
    for position, write in enumerate(writes):
        tried: dict[bool, list[bool]] = {combo[position]: [] for combo, _ in results}
        for combo, result in results:
            tried[combo[position]].append(result.allowed)
        outcomes.append(
            UnknownOutcome(
                write,
                any(tried[True]) if True in tried else None,
                any(tried[False]) if False in tried else None,
            )
        )
    return replace(chosen, unknown=tuple(outcomes))


def start_words(trace: Trace) -> str:
    """What a segment's rebuilt starting state holds, in words: each worker's grant and
    token, a request in flight, the receiver's mark (the model's renamed numbers)."""
    if not trace.steps:
        return "nothing"
    system = trace.system
    s = system.view(trace.steps[0].before)
    parts = []
    for w in range(1, system.bounds.workers + 1):
        if s.tok[w]:
            flight = " with a request in flight" if s.pending[w] else ""
            parts.append(f"W{w} holds grant #{s.gid[w]} (token {s.tok[w]}){flight}")
    if system.design.receiver.keeps_high_water_mark and s.hwm:
        parts.append(f"the receiver's mark is {s.hwm}")
    if s.holder and s.expires > s.now:
        parts.append(f"W{s.holder}'s lease runs until t={s.expires}")
    return "; ".join(parts) or "no grant held, no mark"


def crashed_holders(system: System, state: State) -> set[tuple[int, int]]:
    """The crashed workers that still hold the coordinator's current grant (worker, grant)."""
    s = system.view(state)
    if not system.design.crashes:
        return set()
    return {
        (w, int(s.gid[w]))
        for w in range(1, system.bounds.workers + 1)
        if s.down[w] != 0 and s.holder == w and s.grants == s.gid[w]
    }


def model_count(trace: Trace, name: str) -> int:
    """Violations of a property in the model's trace, counted as the lab's checker counts
    them: per violating step, but P6 once per crashed holder (the model flags every Tick
    its lock stays taken past the deadline; the lab, each holder whose lock stayed taken)."""
    steps = [step for step in trace.steps if name in step.violations]
    if name != "P6":
        return len(steps)
    return len(set().union(*(crashed_holders(trace.system, step.before) for step in steps)))


@dataclass(frozen=True)
class _Piece:
    """One replayed segment of a history: the model's run of it, and where it refused."""

    design: Design
    bounds: Bounds
    mapping: Mapping
    refused: Refusal | None
    trace: Trace
    kept: tuple[Mapped, ...]
    start: int
    stop: int
    """The index after the last event the replay covered."""
    counts: dict[str, int]
    """Violations per property (P6: none; the crashed holders are in `flagged`)."""
    flagged: frozenset[int]
    """The real grants of the crashed holders the model flagged for P6."""
    carried: Carried | None = None
    """The state the piece starts from (None: the model's initial state)."""
    system: System | None = None
    """The interpreter it was replayed with."""


def _acting(line: Timeline, applied: dict[int, list[Happening]]) -> dict[int, int]:
    """The index of each worker's last step of the model (or of the landing of a write of
    its, taken as applied: the end of the history for -1)."""
    last: dict[int, int] = {}
    for e in line.events:
        if e.kind in (*MODEL_KINDS, "renew", "crash"):
            last[e.worker] = e.index
    for index, sends in applied.items():
        for send in sends:
            at = len(line.events) if index < 0 else index
            last[send.worker] = max(last.get(send.worker, -1), at)
    return last


@dataclass(frozen=True)
class _Segmenter:
    """What every piece of one replay shares: the history, its writes taken as applied, the
    lease ticks and tick length, and who acts when."""

    line: Timeline
    applied: dict[int, list[Happening]]
    lease_ticks: int
    tick_seconds: float
    last_step: dict[int, int]
    unheard: frozenset[int]
    """The real grants only the lock service's record shows (their workers never heard)."""

    @cached_property
    def grant_list(self) -> tuple[tuple[int, int, int], ...]:
        """(index, revision, token) of every grant, in order."""
        return tuple(
            (e.index, int(e.get("revision")), int(e.get("token")))
            for e in self.line.events
            if e.kind == "grant"
        )

    def window(self, begin: int) -> list[tuple[int, int]]:
        """(revision, token) of the grants from `begin` that a segment there may map."""
        first = bisect.bisect_left(self.grant_list, (begin,))
        return [
            (revision, token) for _, revision, token in self.grant_list[first : first + MAX_GRANTS]
        ]

    def piece(
        self,
        mapping: Mapping,
        cut: int,
        carried: Carried | None,
        names: Names | None,
        narrate: bool = True,
    ) -> _Piece | None:
        """The replay of the mapped events before `cut` (None when the carried state does
        not fit this piece's bounds); `narrate` False leaves its steps without sentences."""
        line, settings = self.line, self.line.history.settings
        k = cut - mapping.begin
        whole = k >= mapping.checked
        items = mapping.actions if whole else mapping.actions[: mapping.positions[k]]
        grants, restarts, crashes = (
            (mapping.grants, mapping.restarts, mapping.crashes) if whole else mapping.tallies[k]
        )
        ticks = sum(1 for m in items if m.action.name is ActionKind.TICK)
        picks = MODEL_TOKEN[settings.token].row.picks_unused_value
        top = max((m.action.value for m in items if picks), default=0)
        kept_crashed = carried.crashed if carried else 0
        design = model_design(settings, restarts, crashes + kept_crashed)
        bounds = Bounds(
            workers=settings.workers,
            lease=mapping.lease_ticks,
            horizon=ticks,
            grants=_grant_bound(settings, grants, names, top),
            writes=settings.writes,
        )
        system = System(design, bounds)
        try:
            start = (
                start_state(system, carried, names)
                if carried is not None and names is not None
                else system.initial()
            )
        except ValueError:
            return None
        pairs: list[tuple[str, int, int]] = []
        if carried is not None and names is not None:
            for h in carried.held:
                pairs.append((f"W{h.worker}'s", h.real_token, names.tokens[h.token]))
            if carried.mark is not None:
                pairs.append(("the mark's", carried.mark[1], names.tokens[carried.mark[0]]))
        service = settings.lock_service

        def check(sys_: System, before: State, rule: Any, after: State, position: int) -> str:
            item = items[position]
            event = item.event
            if event is not None and (item.outcome is not None or event.kind in RECEPTIONS):
                model = reception_outcome(sys_, before, rule)
                real = item.outcome or _real_outcome(event)
                if model != real:
                    sentence = describe_step(sys_, before, rule, after)
                    return (
                        f"the store's outcome was '{real}', but the model's receiver gives "
                        f"'{model}': {sentence}"
                    )
            if event is not None and item.action.name is ActionKind.ACQUIRE:
                token = int(sys_.view(after).tok[item.action.worker])
                real_token = int(event.get("token"))
                problem = _token_order(pairs, real_token, token, item.action.worker)
                if problem:
                    return problem
                pairs.append((f"W{item.action.worker}'s", real_token, token))
            return ""

        title = f"Live lab: {line.history.scenario} ({settings.label()})"
        walk = replay_from(
            system,
            start,
            [m.action for m in items],
            [m.optional for m in items],
            title,
            check,
            narrate,
        )
        kept = tuple(items[i] for i in walk.taken)
        refused = None
        stop = cut
        if walk.refused_at is not None:
            item = items[walk.refused_at]
            assert item.event is not None  # ticks always fit the horizon chosen
            rule = system.rule_of.get(item.action)
            reason = walk.reason or (
                why_not_enabled(system, walk.final, item.action)
                if rule
                else "the model has no such action"
            )
            refused = Refusal(item.event, item.action.label(), reason, service)
            stop = item.event.index
        revision_of = self._revisions(system, walk.trace, kept, names)
        flagged = frozenset(
            revision_of.get(gid, 0)
            for step in walk.trace.steps
            if "P6" in step.violations
            for _, gid in crashed_holders(system, step.before)
        ) | (carried.flagged if carried else frozenset())
        counts = {
            name: sum(1 for step in walk.trace.steps if name in step.violations)
            for name in CHECKED
            if name != "P6"
        }
        piece = _Piece(
            design,
            bounds,
            replace(mapping, checked=k if not whole else mapping.checked),
            refused,
            walk.trace,
            kept,
            mapping.begin,
            stop,
            counts,
            flagged,
            carried,
            system,
        )
        return replace(piece, mapping=replace(piece.mapping, ticks=ticks))

    def _revisions(
        self, system: System, trace: Trace, kept: Sequence[Mapped], names: Names | None
    ) -> dict[int, int]:
        """Each model grant number of the piece, as the real grant revision it stands for."""
        found = {number: revision for revision, number in (names.grants if names else {}).items()}
        for step, item in zip(trace.steps, kept, strict=True):
            if step.action.name is ActionKind.ACQUIRE and item.event is not None:
                gid = int(system.view(step.after).gid[step.action.worker])
                found[gid] = int(item.event.get("revision"))
        return found

    def carry_from(self, piece: _Piece, cut: int, names: Names | None) -> Carried | None:
        """The state at the end of a piece, carried into the next segment (None when the run
        cannot be cut there)."""
        system = piece.system or piece.trace.system
        starting = (
            start_state(system, piece.carried, names)
            if piece.carried is not None and names is not None
            else system.initial()
        )
        final = piece.trace.steps[-1].after if piece.trace.steps else starting
        real_of: dict[int, int] = {}
        if piece.carried is not None and names is not None:
            for value, real in piece.carried.real_tokens():
                real_of[names.tokens[value]] = real
        for step, item in zip(piece.trace.steps, piece.kept, strict=True):
            if step.action.name is ActionKind.ACQUIRE and item.event is not None:
                token = int(system.view(step.after).tok[step.action.worker])
                real_of[token] = int(item.event.get("token"))
        revision_of = self._revisions(system, piece.trace, piece.kept, names)
        k = cut - piece.mapping.begin
        clocks = piece.mapping.clocks
        clock = clocks[k] if k < len(clocks) else piece.mapping.final_clock
        if clock is None:
            return None
        acting = {w for w, last in self.last_step.items() if last >= cut}
        carried = carry(
            system,
            final,
            cut,
            clock,
            real_of,
            revision_of,
            acting,
            set(self.unheard),
            piece.flagged,
        )
        if carried is None:
            return None
        return self._reanchored(carried, cut)

    def _reanchored(self, carried: Carried, cut: int) -> Carried:
        """With no lease running, time before the segment's first event is not counted: the
        segment's clock starts at that event (and a worker's own deadline comes that much
        nearer)."""
        now, anchor, lease = carried.clock
        if lease is not None:
            return carried
        first = self.line.events[cut]
        skipped = max(0, anchor[1] + math.floor((first.t - anchor[0]) / self.tick_seconds))
        held = tuple(replace(h, until=max(0, h.until - skipped)) for h in carried.held)
        return replace(carried, held=held, clock=(now, (first.t, 0), None))


def _pieces(line: Timeline, applied: dict[int, list[Happening]]) -> tuple[list[_Piece], str | None]:
    """The history replayed whole if it fits the bounds, else segment by segment, each from
    the state the one before ended in (lab.rebuild), up to the first refusal; and why the
    rest was not checked, if a point came where the run could not be cut."""
    whole = choose_mapping(line, applied)
    total = len(line.events)
    unheard = frozenset(
        int(e.get("revision")) for e in line.events if e.kind == "grant" and e.get("unanswered")
    )
    lease_ticks = whole.lease_ticks if whole.limit is None and not whole.forced else 2
    segments = _Segmenter(
        line,
        applied,
        lease_ticks,
        _tick_seconds(line, lease_ticks),
        _acting(line, applied),
        unheard,
    )
    if whole.limit is None and not whole.forced:
        piece = segments.piece(whole, total, None, None)
        assert piece is not None
        return [piece], None
    pieces: list[_Piece] = []
    begin, carried, names = 0, None, None
    while begin < total:
        mapping = map_history(
            line, lease_ticks, applied, begin, carried, names, segments.tick_seconds
        )
        stop = begin + mapping.checked
        narrate = not pieces  # the first segment's run is shown; a later one if refused
        if stop >= total and not mapping.forced:
            final = segments.piece(mapping, total, carried, names, narrate)
            if final is not None:
                if final.refused is not None and not narrate:
                    final = segments.piece(mapping, total, carried, names) or final
                pieces.append(final)
                return pieces, None
        following: tuple[Carried, Names] | None = None
        for cut in range(min(stop, total - 1), begin, -1):
            piece = segments.piece(mapping, cut, carried, names, narrate)
            if piece is None:
                continue
            if piece.refused is not None:
                if not narrate:
                    piece = segments.piece(mapping, cut, carried, names) or piece
                pieces.append(piece)
                return pieces, None
            nxt = segments.carry_from(piece, cut, names)
            if nxt is None:
                continue
            random = MODEL_TOKEN[line.history.settings.token].row.picks_unused_value
            following = (nxt, names_for(nxt, random, segments.window(cut)))
            pieces.append(piece)
            begin = cut
            break
        if following is None:
            piece = segments.piece(mapping, stop, carried, names, narrate)
            if piece is not None:
                pieces.append(piece)
            return pieces, mapping.limit or "no point where the run could be cut"
        carried, names = following
    return pieces, None


def _conformance(
    line: Timeline, applied: dict[int, list[Happening]], landing: dict[str, int]
) -> Conformance:
    """One replay of the history, with these writes of unknown outcome taken as applied."""
    pieces, limit = _pieces(line, applied)
    shown = pieces[0]
    refused = next((p for p in pieces if p.refused is not None), None)
    ranges = [(p.start, p.stop) for p in pieces]
    coverage = coverage_of(line, ranges)
    history_counts = check_properties(line, ranges[-1][1] if ranges else None, against_last=True)
    flagged = frozenset().union(*(p.flagged for p in pieces))
    agreement = {
        name: (
            sum(
                1
                for v in history_counts[name].violations
                if any(start <= v.event < stop for start, stop in ranges)
            ),
            len(flagged) if name == "P6" else sum(p.counts[name] for p in pieces),
        )
        for name in CHECKED
    }
    mapping = replace(shown.mapping, checked=coverage.events[0], limit=limit)
    later = refused if refused is not None and refused is not shown else None
    return Conformance(
        shown.design,
        shown.bounds,
        mapping,
        len(line.events),
        refused.refused if refused is not None else None,
        shown.trace,
        tuple(m.event.index if m.event else None for m in shown.kept),
        agreement,
        coverage=coverage,
        segment=(later.start, later.trace) if later is not None else None,
    )
