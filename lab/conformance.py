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
A history larger than the model's bounds (grants, horizon, steps) is cut into segments
where nothing of its past matters to the model any more, each replayed from the model's
initial state (lab.segments); a stretch with no such point inside the bounds is checked as
far as they go, and the result says how much of the run (grants and writes) was covered.

A write of unknown outcome (its reply never came and the store's log never decided it) is
replayed both ways: received by the model's receiver just before the store was killed (or
the worker heard the request fail), and never received (the model's request stays in
flight; the real worker retired, so it takes no further step either). The history is
allowed when a way that agrees with what the witnesses decided is; the result says which
ways the model allows.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from lab.checker import CHECKED, check_properties
from lab.describe import describe
from lab.history import Happening, Timeline
from lab.segments import Coverage, coverage_of, plan_segments, sub_timeline
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
from model.formats.trace import MAX_TRACE_STEPS, Trace, replay
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


@dataclass(frozen=True)
class Refusal:
    """The first history event the model does not allow, and the model's reason."""

    event: Happening
    action: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the event (position, time, kind, worker, sentence) and the reason."""
        return {
            "event": {
                "index": self.event.index,
                "t": self.event.t,
                "kind": self.event.kind,
                "worker": self.event.worker,
                "what": describe(self.event),
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
                f"{self.refused.event.t:.3f} s ({describe(self.refused.event)}): "
                f"{self.refused.reason}"
            )
        if self.complete:
            either = [u for u in self.unknown if u.applied and u.not_applied]
            if either:
                writes = ", ".join(f"W{u.write.worker}'s write {u.write.request}" for u in either)
                return f"the model allows this history whether or not {writes} was applied."
            if self.coverage is not None and self.coverage.segments > 1:
                return f"the model allows this history, cut into {self.coverage.segments} segments."
            return "the model allows this history."
        if self.coverage is not None and self.coverage.segments > 1:
            return (
                f"the model allows every segment it checked ({self.coverage.segments}); the "
                f"rest holds stretches beyond the model's bounds ({self.mapping.limit} "
                "before the run could be cut again), so it was not checked."
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

    def __init__(self, line: Timeline, lease_ticks: int, tick_seconds: float) -> None:
        self.line = line
        self.lease_ticks = lease_ticks
        self.tick = tick_seconds
        self.now = 0
        # Model time starts at the first grant: before it, nothing the model tracks happens.
        first = next((e for e in line.events if e.kind == "grant"), None)
        self.anchor = (first.t if first else 0.0, 0)
        self.lease: tuple[float, int, float | None, int] | None = None
        """The live lease: its start (the grant or the last keepalive mapped to Renew) time
        and tick, its end time (if etcd revoked it after this start), its grant's revision."""
        self.leased = line.history.settings.expiry != "never"
        self.renewed = False
        """Whether the last event was a keepalive that moved the lease's end (a Renew)."""

    def _end_after(self, revision: int, start: float) -> float | None:
        """When etcd revoked the grant's lease, if no keepalive it took came after `start`."""
        info = self.line.grants[revision]
        later = any(t > start for t in self.line.renewals.get(revision, ()))
        return info.ended if info.ended_by == "revoked" and not later else None

    def _target(self, t: float) -> int:
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
            target = max(self.now, self._target(event.t))
            revision = int(event.get("revision"))
            if self.leased:
                self.lease = (event.t, target, self._end_after(revision, event.t), revision)
            return target
        if event.kind == "renew":
            target = max(self.now, self._target(event.t))
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
        target = max(self.now, self._target(event.t))
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


def map_history(
    line: Timeline, lease_ticks: int, applied: dict[int, list[Happening]] | None = None
) -> Mapping:
    """The model actions of the history, stopping before the first event beyond the bounds.

    `applied` takes writes of unknown outcome as applied: each send listed under an event
    index is received (as the model's receiver does it) just before that event; under -1,
    at the end of the history."""
    applied = applied or {}
    settings = line.history.settings
    clock = _Clock(line, lease_ticks, _tick_seconds(line, lease_ticks))
    ranks = _random_values(line)
    actions: list[Mapped] = []
    grants = restarts = crashes = checked = 0
    limit = None
    for event in line.events:
        action = _simple_action(event)
        more_grants, more_restarts, more_crashes = grants, restarts, crashes
        optional = False
        if event.kind == "crash":
            more_crashes += 1
            action, optional = Action(ActionKind.CRASH, event.worker), True
        elif event.kind == "grant":
            more_grants += 1
            picks = MODEL_TOKEN[settings.token].row.picks_unused_value
            value = ranks.get(int(event.get("revision")), 0) if picks else 0
            action = Action(ActionKind.ACQUIRE, event.worker, value)
        elif event.kind == "storage-kill" and _restart_counts(settings):
            more_restarts += 1
            action = Action(ActionKind.STORAGE_RESTART)
        saved = (clock.now, clock.anchor, clock.lease)
        tick = clock.ticks_for(event)
        if clock.renewed:
            action = Action(ActionKind.RENEW, event.worker)
        inserted = [m for send in applied.get(event.index, []) for m in _receptions(settings, send)]
        steps = len(actions) + (tick - clock.now) + (1 if action else 0) + len(inserted)
        limit = _beyond(more_grants, tick, steps, more_restarts, more_crashes) or _too_many_states(
            settings, lease_ticks, tick, more_grants, more_restarts, more_crashes
        )
        if limit:
            clock.now, clock.anchor, clock.lease = saved
            break
        actions.extend(Mapped(Action(ActionKind.TICK), None) for _ in range(tick - clock.now))
        clock.now = tick
        actions.extend(inserted)
        if action is not None:
            actions.append(Mapped(action, event, optional=optional))
        grants, restarts, crashes = more_grants, more_restarts, more_crashes
        checked += 1
    if limit is None:
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
    )


def _beyond(grants: int, ticks: int, steps: int, restarts: int, crashes: int = 0) -> str | None:
    """Which of the model's bounds an event would cross, in words (None: none)."""
    if grants > MAX_GRANTS:
        return f"more than {MAX_GRANTS} grants"
    if ticks > MAX_HORIZON:
        return f"more than {MAX_HORIZON} ticks of model time"
    if steps > MAX_TRACE_STEPS:
        return f"more than {MAX_TRACE_STEPS} model steps"
    if restarts > MAX_RESTARTS:
        return f"more than {MAX_RESTARTS} storage restarts"
    if crashes > MAX_CRASHES:
        return f"more than {MAX_CRASHES} workers killed"
    return None


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
    """With lease-ID tokens: each grant's model token, the rank of its ID among the run's grants.

    Only the first MAX_GRANTS grants are ranked (the model checks no more).
    """
    first = list(line.grants.values())[:MAX_GRANTS]
    ordered = sorted(first, key=lambda g: g.token)
    return {g.revision: rank for rank, g in enumerate(ordered, start=1)}


def choose_mapping(line: Timeline, applied: dict[int, list[Happening]] | None = None) -> Mapping:
    """The mapping with the finest lease ticks that covers the most events."""
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
    pairs: Sequence[tuple[int, int, int]], real: int, model: int, w: int
) -> str | None:
    """Why the new grant's real token compares with an earlier one unlike its model token."""
    for worker, earlier_real, earlier_model in pairs:
        real_sign = (real > earlier_real) - (real < earlier_real)
        model_sign = (model > earlier_model) - (model < earlier_model)
        if real_sign != model_sign:
            words = {-1: "lower than", 0: "equal to", 1: "higher than"}
            return (
                f"W{w}'s token {real} is {words[real_sign]} W{worker}'s earlier token "
                f"{earlier_real}, but the model's token for this grant is {words[model_sign]} "
                f"the earlier one ({model} against {earlier_model})"
            )
    return None


def _check_steps(system: System, mapped: Sequence[Mapped]) -> tuple[list[Mapped], Refusal | None]:
    """Walk the actions through the interpreter; the ones taken (optional ones the model
    does not allow there are skipped), and the first refusal."""
    state = system.initial()
    tokens: list[tuple[int, int, int]] = []
    taken: list[Mapped] = []
    for item in mapped:
        action, event = item.action, item.event
        rule = system.rule_of.get(action)
        if rule is None or not system.is_enabled(state, rule):
            if item.optional:
                continue
            reason = (
                why_not_enabled(system, state, action) if rule else "the model has no such action"
            )
            assert event is not None  # ticks always fit the horizon chosen
            return taken, Refusal(event, action.label(), reason)
        after = system.apply(state, rule)
        if event is not None and (item.outcome is not None or event.kind in RECEPTIONS):
            model = reception_outcome(system, state, rule)
            real = item.outcome or _real_outcome(event)
            if model != real:
                sentence = describe_step(system, state, rule, after)
                return taken, Refusal(
                    event,
                    action.label(),
                    f"the store's outcome was '{real}', but the model's receiver gives "
                    f"'{model}': {sentence}",
                )
        if event is not None and action.name is ActionKind.ACQUIRE:
            model_token = int(system.view(after).tok[action.worker])
            problem = _token_order(tokens, int(event.get("token")), model_token, action.worker)
            if problem:
                return taken, Refusal(event, action.label(), problem)
            tokens.append((action.worker, int(event.get("token")), model_token))
        state = after
        taken.append(item)
    return taken, None


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


def _replay_piece(line: Timeline, applied: dict[int, list[Happening]]) -> _Piece:
    """Map one timeline (a whole history or a segment of it) and replay it."""
    settings = line.history.settings
    mapping = choose_mapping(line, applied)
    design = model_design(settings, mapping.restarts, mapping.crashes)
    bounds = Bounds(
        workers=settings.workers,
        lease=mapping.lease_ticks,
        horizon=mapping.ticks,
        grants=max(1, mapping.grants),
        writes=settings.writes,
    )
    system = System(design, bounds)
    kept, refused = _check_steps(system, mapping.actions)
    title = f"Live lab: {line.history.scenario} ({settings.label()})"
    trace = replay(design, bounds, [m.action for m in kept], title=title)
    start = line.events[0].index if line.events else 0
    stop = refused.event.index if refused else start + mapping.checked
    return _Piece(design, bounds, mapping, refused, trace, tuple(kept), start, stop)


def _pieces(
    line: Timeline, applied: dict[int, list[Happening]], landing: dict[str, int]
) -> list[_Piece]:
    """The history replayed whole if it fits the bounds, else segment by segment (up to
    the first refusal)."""
    whole = _replay_piece(line, applied)
    if whole.mapping.limit is None or whole.refused is not None:
        return [whole]
    total = len(line.events)

    def applied_in(stop: int) -> dict[int, list[Happening]]:
        return {k: v for k, v in applied.items() if k >= 0 or stop == total}

    def fits(start: int, stop: int) -> int:
        return choose_mapping(sub_timeline(line, start, stop), applied_in(stop)).checked

    pieces = []
    for start, stop, whole_piece in plan_segments(line, fits, landing):
        piece = _replay_piece(sub_timeline(line, start, stop), applied_in(stop))
        if not whole_piece:
            rest = choose_mapping(sub_timeline(line, start, total), applied_in(total))
            piece = replace(piece, mapping=replace(piece.mapping, limit=rest.limit))
        pieces.append(piece)
        if piece.refused is not None:
            break
    return pieces


def _conformance(
    line: Timeline, applied: dict[int, list[Happening]], landing: dict[str, int]
) -> Conformance:
    """One replay of the history, with these writes of unknown outcome taken as applied."""
    pieces = _pieces(line, applied, landing)
    shown = next((p for p in pieces if p.refused is not None), pieces[0])
    ranges = [(p.start, p.stop) for p in pieces]
    coverage = coverage_of(line, ranges)
    limits = [p.mapping.limit for p in pieces if p.mapping.limit]
    limit = limits[0] if limits else None
    history_counts = check_properties(line, ranges[-1][1] if ranges else None, against_last=True)
    agreement = {
        name: (
            sum(
                1
                for v in history_counts[name].violations
                if any(start <= v.event < stop for start, stop in ranges)
            ),
            sum(model_count(p.trace, name) for p in pieces),
        )
        for name in CHECKED
    }
    mapping = replace(shown.mapping, checked=coverage.events[0], limit=limit)
    return Conformance(
        shown.design,
        shown.bounds,
        mapping,
        len(line.events),
        shown.refused,
        shown.trace,
        tuple(m.event.index if m.event else None for m in shown.kept),
        agreement,
        coverage=coverage,
    )
