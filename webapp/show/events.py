"""What a trace looks like on a timeline: where each step sits, what it did, who held a lease.

These are plain functions of a replayed `Trace` (no plotting), so the figure builder, the
narration and the state table all read the same facts, and the tests can check them
without drawing anything. Every fact is read off the states the model produced, and every
judgement (is a lease current, could a worker act, did the receiver handle a request) is
asked of the model's own predicates, guards and outcomes.

Time is the x axis: tick `t` is the band from x = t to x = t + 1. The steps taken while the
clock reads `t` are spread left to right inside that band, in order; a Tick sits on the
boundary where the new tick begins. A lease granted at tick `t` covers exactly the bands
t .. t + L - 1, as the model's `now < expires` says.

Each function takes the number of steps shown (`upto`, all when None), so the figure of one
step of the player is drawn from the facts known at that step: a message not yet delivered
is in flight up to the current step, a lease not yet ended runs to its expiry.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Final

from model.actions import Action, ActionKind, Actor
from model.design import Expiry
from model.explain.narration import carries_token
from model.formats.trace import Step, Trace
from model.layout import Vars
from model.rules import lease_is_current
from model.system import State
from webapp.show.style import (
    ACCEPTED,
    CHECKED,
    COORDINATOR,
    READ,
    RECEIVER,
    REJECTED,
    VIOLATING,
    Outcome,
)

LEASE_ACTIVE: Final = "active"
"""A worker holds the coordinator's current, unexpired lease."""
LEASE_PAST: Final = "past"
"""A worker still holds a token although its lease is no longer the current, unexpired one."""
GAP_CLOSED_BY_NEWER: Final = "newer"
GAP_CLOSED_BY_GIVING_UP: Final = "gave up"
GAP_CLOSED_WITH_NOTHING_TO_SEND: Final = "nothing to send"


@dataclass(frozen=True)
class Event:
    """One step placed on the timeline: its lane, x position, clock time and outcome."""

    step: Step
    lane: str
    x: float
    time: int
    worker: int
    token: int
    outcome: Outcome | None
    carries_token: bool = True
    """Whether the step's request carries the token (an unfenced read does not)."""


@dataclass(frozen=True)
class Message:
    """A request from its Send to the reception that handled it (None while in flight)."""

    worker: int
    token: int
    is_read: bool
    sent_step: int
    sent_x: float
    sent_time: int
    received_step: int | None
    received_x: float | None
    received_time: int | None
    outcome: Outcome | None
    carries_token: bool = True
    """Whether the request carries the token to the receiver (an unfenced read does not)."""

    @property
    def in_flight(self) -> bool:
        """Whether the request is still in the network (not yet handled by the receiver)."""
        return self.received_step is None


@dataclass(frozen=True)
class Segment:
    """A stretch of x during which a worker held a token, either within its lease or past it."""

    worker: int
    grant: int
    token: int
    start: float
    end: float
    status: str


@dataclass(frozen=True)
class Pause:
    """A stretch of x during which a worker that could act took no step while time passed."""

    worker: int
    start: float
    end: float
    ticks: tuple[int, ...]
    """The ticks (clock readings) that passed while the worker was paused."""


@dataclass(frozen=True)
class Gap:
    """The gap: an old grant's lease is over while its worker still has a request to go, and
    the receiver would still take it (its mark has seen no newer token, or it already
    checked the request and applies it without checking again).

    `end_step` is None while the gap is still open at the end of what is shown (then `end`
    is the x of the current step); `closed_by` says how it ended.
    """

    worker: int
    grant: int
    start_step: int
    start: float
    end_step: int | None
    end: float
    closed_by: str | None

    @property
    def open(self) -> bool:
        """Whether the gap is still open at the step shown."""
        return self.end_step is None


def lanes(trace: Trace) -> tuple[str, ...]:
    """Lane names from top to bottom: coordinator, W1..Wn, receiver."""
    return (COORDINATOR, *(f"W{w}" for w in range(1, trace.bounds.workers + 1)), RECEIVER)


def time_x(time: int) -> float:
    """The x at which tick `time` begins (its band runs to `time + 1`)."""
    return float(time)


def _lane(step: Step) -> str:
    """The lane a step is drawn on: the clock's, a crashed worker's own, or its actor's."""
    lane = step.action.row.drawn_on
    return f"W{step.action.worker}" if lane is Actor.WORKER else lane.value


def _is_tick(step: Step) -> bool:
    """Whether the step is the clock advancing."""
    return step.action.name is ActionKind.TICK


def _value(trace: Trace, state: State, column: str) -> int:
    """One named value of a state of the trace (0 for a column the design lacks)."""
    index = trace.system.layout.index.get(column)
    return 0 if index is None else int(state[index])


def _worker_value(trace: Trace, state: State, family: str, w: int) -> int:
    """A per-worker value such as `tok[w]`."""
    return _value(trace, state, f"{family}[{w}]")


def _count(trace: Trace, upto: int | None) -> int:
    """How many steps to show: all, or `upto` clamped to the trace."""
    if upto is None:
        return len(trace.steps)
    return max(0, min(upto, len(trace.steps)))


def believes_it_holds(s: Vars, w: int) -> bool:
    """Whether worker w holds a token, i.e. believes it holds the lock (`tok[w]` is not 0)."""
    return bool(s.tok[w] != 0)


@lru_cache(maxsize=64)
def step_positions(trace: Trace) -> tuple[float, ...]:
    """x of each step: a Tick on the boundary where its new tick begins, every other step
    inside the band of the tick it happens in, those of one tick spread evenly in order."""
    in_tick: dict[int, list[int]] = {}
    positions = [0.0] * len(trace.steps)
    for index, step in enumerate(trace.steps):
        if _is_tick(step):
            positions[index] = time_x(_value(trace, step.after, "now"))
        else:
            in_tick.setdefault(_value(trace, step.before, "now"), []).append(index)
    for time, indices in in_tick.items():
        for k, index in enumerate(indices):
            positions[index] = time_x(time) + (k + 1) / (len(indices) + 1)
    return tuple(positions)


def current_x(trace: Trace, upto: int | None = None) -> float:
    """The x of the last step shown (0 before the first step): where "now" is drawn."""
    count = _count(trace, upto)
    return step_positions(trace)[count - 1] if count else 0.0


def last_time(trace: Trace) -> int:
    """The clock reading at the end of the run: the last tick the axis shows."""
    return _value(trace, trace.steps[-1].after, "now") if trace.steps else 0


def x_extent(trace: Trace) -> tuple[float, float]:
    """The x range of the whole run: from the start of tick 0 to the end of its last tick."""
    return (time_x(0), time_x(last_time(trace) + 1))


def time_ticks(trace: Trace) -> tuple[list[float], list[str]]:
    """Axis labels `t=0`, `t=1`, ... in the middle of each tick's band."""
    times = range(last_time(trace) + 1)
    return [time_x(t) + 0.5 for t in times], [f"t={t}" for t in times]


STEP_OUTCOMES: Final = {"rejected": REJECTED, "checked": CHECKED, "read": READ}
"""The look of each receiver outcome the model reports (accepted is split below)."""


def reception_outcome(trace: Trace, step: Step) -> Outcome | None:
    """How the receiver handled the request of a step (the model's outcome), as drawn."""
    if step.outcome is None:
        return None
    if step.outcome == "accepted":
        return VIOLATING if step.violations else ACCEPTED
    return STEP_OUTCOMES[step.outcome]


def is_read(trace: Trace, state: State, w: int) -> bool:
    """Whether w's request (about to be sent, or in flight) in this state is a read."""
    return not trace.system.builder.is_write(trace.system.view(state), w)


@lru_cache(maxsize=64)
def _all_events(trace: Trace) -> tuple[Event, ...]:
    """Every step of the trace as a timeline event."""
    found = []
    for step, x in zip(trace.steps, step_positions(trace), strict=True):
        w = step.action.worker
        token_state = step.after if step.action.name is ActionKind.ACQUIRE else step.before
        request = step.action.row.request and w
        found.append(
            Event(
                step=step,
                lane=_lane(step),
                x=x,
                time=_value(trace, step.before, "now"),
                worker=w,
                token=_worker_value(trace, token_state, "tok", w) if w else 0,
                outcome=reception_outcome(trace, step),
                carries_token=not request
                or carries_token(trace.system, trace.system.view(step.before), w),
            )
        )
    return tuple(found)


def events(trace: Trace, upto: int | None = None) -> tuple[Event, ...]:
    """The first `upto` steps (all by default) as timeline events."""
    return _all_events(trace)[: _count(trace, upto)]


@lru_cache(maxsize=64)
def _all_messages(trace: Trace) -> tuple[Message, ...]:
    """Every request of the run, from its Send to the reception that handled it, if any."""
    sent: dict[int, Message] = {}
    found: list[Message] = []
    for event in _all_events(trace):
        row, w = event.step.action.row, event.worker
        if row.sends:
            sent[w] = Message(
                worker=w,
                token=event.token,
                is_read=is_read(trace, event.step.before, w),
                sent_step=event.step.number,
                sent_x=event.x,
                sent_time=event.time,
                received_step=None,
                received_x=None,
                received_time=None,
                outcome=None,
                carries_token=event.carries_token,
            )
            found.append(sent[w])
        elif row.arrival and w in sent and event.outcome is not None:
            message = sent.pop(w)
            found[found.index(message)] = replace(
                message,
                received_step=event.step.number,
                received_x=event.x,
                received_time=event.time,
                outcome=event.outcome,
            )
    return tuple(found)


def messages(trace: Trace, upto: int | None = None) -> tuple[Message, ...]:
    """Every request sent within the first `upto` steps; those not yet handled are in flight."""
    count = _count(trace, upto)
    return tuple(
        m if m.received_step is not None and m.received_step <= count else _in_flight(m)
        for m in _all_messages(trace)
        if m.sent_step <= count
    )


def _in_flight(message: Message) -> Message:
    """The message as seen before its reception."""
    return replace(message, received_step=None, received_x=None, received_time=None, outcome=None)


@dataclass(frozen=True)
class _Grant:
    """One grant's life on its worker's lane: granted, lease over, token given up (step numbers)."""

    worker: int
    grant: int
    token: int
    start: float
    expiry: float | None
    """Where the lease ends (its last renewal's end); None for a lock without a lease."""
    granted: int
    lease_over: int | None
    given_up: int | None
    renewals: tuple[tuple[int, float], ...] = ()
    """(step number, new end) of each renewal before the lease stopped, in order."""
    crashed: int | None = None
    """The step at which the worker crashed while holding this grant, if it did."""
    granted_expiry: float = 0.0
    """The end of the lease as granted, before any renewal."""

    def expiry_after(self, count: int) -> float | None:
        """Where the lease ends as known after `count` steps: a renewal not made yet does
        not move it (None for a lock without a lease)."""
        if self.expiry is None:
            return None
        known = [end for number, end in self.renewals if number <= count]
        return known[-1] if known else self.granted_expiry


@lru_cache(maxsize=64)
def _grants(trace: Trace) -> tuple[_Grant, ...]:
    """Every grant of the run with the steps at which its lease stopped and its worker let go."""
    states = trace.states()
    system = trace.system
    found: list[_Grant] = []
    last_end: dict[int, float] = {}
    positions = step_positions(trace)
    for step in trace.steps:
        if step.action.name is not ActionKind.ACQUIRE:
            continue
        w = step.action.worker
        after = system.view(step.after)
        grant = int(after.gid[w])
        lease_over = given_up = crashed = None
        granted_expiry = expiry = int(after.expires)
        renewals: list[tuple[int, float]] = []
        for number in range(step.number + 1, len(states)):
            s = system.view(states[number])
            holds = believes_it_holds(s, w) and int(s.gid[w]) == grant
            if lease_over is None and not (holds and lease_is_current(s, w)):
                lease_over = number
            if lease_over is None and int(s.expires) > expiry:
                expiry = int(s.expires)
                renewals.append((number, time_x(expiry)))
            if crashed is None and holds and trace.steps[number - 1].action == _crash_of(w):
                crashed = number
            if not holds:
                given_up = number
                break
        start = max(time_x(int(system.view(step.before).now)), last_end.get(w, 0.0))
        if system.design.expiry is Expiry.NEVER:  # no lease counted in ticks: held from the grant
            start = positions[step.number - 1]
        found.append(
            _Grant(
                worker=w,
                grant=grant,
                token=int(after.tok[w]),
                start=start,
                expiry=None if system.design.expiry is Expiry.NEVER else time_x(expiry),
                granted=step.number,
                lease_over=lease_over,
                given_up=given_up,
                renewals=tuple(renewals),
                crashed=crashed,
                granted_expiry=time_x(granted_expiry),
            )
        )
        if given_up:
            last_end[w] = positions[given_up - 1]
    return tuple(found)


def lease_segments(trace: Trace, upto: int | None = None) -> tuple[Segment, ...]:
    """The lease bars known after `upto` steps: each grant's lease, then any stretch past it.

    A lease runs from the start of the tick it was granted in to its expiry (exactly L
    ticks), unless it ended earlier (release, restart, the token given up). Past its lease,
    a worker that still holds the token is drawn to the step it let go, or to "now".
    """
    count = _count(trace, upto)
    positions = step_positions(trace)
    now = current_x(trace, upto)

    def ended(number: int | None) -> bool:
        return number is not None and number <= count

    found: list[Segment] = []
    for g in _grants(trace):
        if g.granted > count:
            continue
        over = positions[g.lease_over - 1] if g.lease_over and ended(g.lease_over) else None
        expiry = g.expiry_after(count)
        end = (now if expiry is None else expiry) if over is None else over
        found.append(Segment(g.worker, g.grant, g.token, g.start, end, LEASE_ACTIVE))
        if over is not None and g.lease_over != g.given_up:
            let_go = positions[g.given_up - 1] if g.given_up and ended(g.given_up) else now
            if g.crashed is not None and ended(g.crashed):  # a crashed worker uses nothing
                let_go = min(let_go, positions[g.crashed - 1])
            if let_go > over or not (g.crashed is not None and ended(g.crashed)):
                found.append(Segment(g.worker, g.grant, g.token, over, let_go, LEASE_PAST))
    return tuple(found)


@dataclass(frozen=True)
class Crashed:
    """A crashed worker's lane from its crash on: it takes no step again."""

    worker: int
    step: int
    start: float
    end: float
    time: int


def _crash_of(w: int) -> Action:
    """The action of worker w crashing."""
    return Action(ActionKind.CRASH, w)


def crashes(trace: Trace, upto: int | None = None) -> tuple[Crashed, ...]:
    """Every crash within the first `upto` steps, its lane ended from the crash to now."""
    now = current_x(trace, upto)
    return tuple(
        Crashed(e.worker, e.step.number, e.x, now, e.time)
        for e in events(trace, upto)
        if e.step.action.name is ActionKind.CRASH
    )


def _request_rules_enabled(trace: Trace, state: State, w: int) -> bool:
    """Whether the guard of one of w's request steps holds, sending or handling one (the
    model decides)."""
    system = trace.system
    return any(
        system.is_enabled(state, rule)
        for rule in system.rules
        if rule.action.worker == w and rule.action.row.request
    )


@lru_cache(maxsize=64)
def _pause_pieces(trace: Trace) -> tuple[tuple[int, Pause], ...]:
    """(Tick step number, pause) for every worker paused across every Tick of the run.

    A worker is paused across a tick when, as time passes, it believes it holds the lock
    and has work it would do if it ran (`_stopped_with_work`), yet takes no step: the pause
    starts after its last event within that tick. A holder with nothing left to do (its
    writes sent, its lease not about to run out) is idle, not paused.
    """
    found: list[tuple[int, Pause]] = []
    last_seen: dict[int, float] = {}
    for event in _all_events(trace):
        step = event.step
        if not _is_tick(step):
            if event.worker:
                last_seen[event.worker] = event.x
            continue
        s = trace.system.view(step.before)
        for w in range(1, trace.bounds.workers + 1):
            if believes_it_holds(s, w) and _stopped_with_work(trace, step.before, w):
                start = max(time_x(event.time), last_seen.get(w, 0.0))
                found.append((step.number, Pause(w, start, event.x, (event.time,))))
    return tuple(found)


def pauses(trace: Trace, upto: int | None = None) -> tuple[Pause, ...]:
    """Every pause known after `upto` steps, one per worker and unbroken stretch."""
    count = _count(trace, upto)
    merged: list[Pause] = []
    for number, piece in _pause_pieces(trace):
        if number > count:
            break
        previous = next((p for p in reversed(merged) if p.worker == piece.worker), None)
        if previous is not None and previous.end == piece.start:
            merged[merged.index(previous)] = replace(
                previous, end=piece.end, ticks=previous.ticks + piece.ticks
            )
        else:
            merged.append(piece)
    return tuple(merged)


def _stopped_with_work(trace: Trace, state: State, w: int) -> bool:
    """Whether w, letting this tick pass, leaves undone what a running holder would do: it
    could send a request, or renew a lease that runs out with this tick (the model's own
    guards decide what w could do)."""
    system = trace.system
    s = system.view(state)
    for rule in system.rules:
        if rule.action.worker != w or not system.is_enabled(state, rule):
            continue
        if rule.action.row.sends:
            return True
        if rule.action.name is ActionKind.RENEW and int(s.expires) == int(s.now) + 1:
            return True
    return False


def _has_request_to_go(trace: Trace, state: State, w: int) -> bool:
    """Whether w can still send a request, or has one in the network or half handled."""
    return _request_rules_enabled(trace, state, w)


def receiver_would_take(trace: Trace, state: State, w: int) -> bool:
    """Whether the receiver, in this state, would still take w's request: its own test
    passes w's token (its mark has seen nothing newer, no live-lease check refuses it), or
    it has already checked the request and will apply it without checking again."""
    s = trace.system.view(state)
    return bool(s.pending[w] == 2) or bool(trace.system.builder.admits(s, w))


def _in_gap(trace: Trace, state: State, w: int) -> bool:
    """Whether w's grant is in the gap: its lease is over (expired or superseded), w still
    believes it holds the lock and has a request to go, and the receiver would still take
    that request (the model's own test, on this state)."""
    s = trace.system.view(state)
    return (
        believes_it_holds(s, w)
        and not lease_is_current(s, w)
        and _has_request_to_go(trace, state, w)
        and receiver_would_take(trace, state, w)
    )


@lru_cache(maxsize=64)
def _all_gaps(trace: Trace) -> tuple[Gap, ...]:
    """Every gap of the whole run (the last may still be open when the run ends)."""
    positions = step_positions(trace)
    open_gaps: dict[int, Gap] = {}
    found: list[Gap] = []
    for step in trace.steps:
        x = positions[step.number - 1]
        for w in range(1, trace.bounds.workers + 1):
            inside = _in_gap(trace, step.after, w)
            if inside and w not in open_gaps:
                grant = _worker_value(trace, step.after, "gid", w)
                open_gaps[w] = Gap(w, grant, step.number, x, None, x, None)
            elif not inside and w in open_gaps:
                gap = open_gaps.pop(w)
                found.append(
                    replace(gap, end_step=step.number, end=x, closed_by=_closed_by(trace, step, w))
                )
    found.extend(open_gaps.values())
    return tuple(sorted(found, key=lambda gap: (gap.start_step, gap.worker)))


def _closed_by(trace: Trace, step: Step, w: int) -> str:
    """Why w's gap closed at this step: the receiver now refuses w's token (it has seen a
    newer one), w let go, or w has nothing more to send."""
    if not believes_it_holds(trace.system.view(step.after), w):
        return GAP_CLOSED_BY_GIVING_UP
    if not receiver_would_take(trace, step.after, w):
        return GAP_CLOSED_BY_NEWER
    return GAP_CLOSED_WITH_NOTHING_TO_SEND


def gaps(trace: Trace, upto: int | None = None) -> tuple[Gap, ...]:
    """The gaps known after `upto` steps; one still open then ends at the current step."""
    count = _count(trace, upto)
    now = current_x(trace, upto)
    found = []
    for gap in _all_gaps(trace):
        if gap.start_step > count:
            continue
        if gap.end_step is None or gap.end_step > count:
            gap = replace(gap, end_step=None, end=now, closed_by=None)
        found.append(gap)
    return tuple(found)


def forget_cached_facts() -> None:
    """Forget every memoised fact about traces (positions, events, grants, pauses, gaps)."""
    for cached in (step_positions, _all_events, _all_messages, _grants, _pause_pieces, _all_gaps):
        cached.cache_clear()


def lane_names_y(trace: Trace) -> dict[str, float]:
    """The y of each lane (coordinator on top, receiver at the bottom) and of the clock row."""
    names = lanes(trace)
    top = len(names) - 1
    positions = {name: float(top - i) for i, name in enumerate(names)}
    positions["clock"] = -0.8
    return positions
