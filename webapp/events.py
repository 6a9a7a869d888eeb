"""What a trace looks like on a timeline: where each step sits, what it did, who held a lease.

These are plain functions of a replayed `Trace` (no plotting), so the figure builder, the
narration and the state table all read the same facts, and the tests can check them
without drawing anything. Every fact is read off the states the model produced.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from model.trace import Step, Trace
from webapp.style import (
    ACCEPTED,
    CHECKED,
    COORDINATOR,
    READ,
    RECEIVER,
    REJECTED,
    VIOLATING,
    Outcome,
)

"""Actions in which the receiver handles a request."""

LEASE_ACTIVE: Final = "active"
LEASE_PAST: Final = "past"
MIN_SLOT: Final = 0.42
"""Smallest x distance between two steps within one tick."""
"""A worker still holds a token although its lease is no longer the current, unexpired one."""


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


@dataclass(frozen=True)
class Message:
    """A request from its Send to the reception that consumed it."""

    worker: int
    token: int
    sent_x: float
    received_x: float
    outcome: Outcome
    is_read: bool


@dataclass(frozen=True)
class Segment:
    """A stretch of x during which a worker held a token, either within its lease or past it."""

    worker: int
    grant: int
    token: int
    start: float
    end: float
    status: str


def lanes(trace: Trace) -> tuple[str, ...]:
    """Lane names from top to bottom: coordinator, W1..Wn, receiver."""
    return (COORDINATOR, *(f"W{w}" for w in range(1, trace.bounds.workers + 1)), RECEIVER)


@lru_cache(maxsize=64)
def _groups(trace: Trace) -> list[list[int]]:
    """Step indices grouped by tick: each Tick alone, then the run of steps that follow it."""
    groups: list[list[int]] = []
    for index, step in enumerate(trace.steps):
        if _is_tick(step) or not groups or _is_tick(trace.steps[groups[-1][0]]):
            groups.append([index])
        else:
            groups[-1].append(index)
    return groups


@lru_cache(maxsize=64)
def tick_widths(trace: Trace) -> dict[int, float]:  # read-only: shared by the cache
    """How wide each tick is drawn: 1, or wider when many steps happen within it."""
    widths: dict[int, float] = {}
    for group in _groups(trace):
        first = trace.steps[group[0]]
        if not _is_tick(first):
            time = _value(trace, first.before, "now")
            widths[time] = max(1.0, MIN_SLOT * (len(group) + 1))
    return widths


def time_x(trace: Trace, time: int) -> float:
    """The x at which integer time `time` is drawn (ticks with many steps are wider)."""
    widths = tick_widths(trace)
    return float(sum(widths.get(t, 1.0) for t in range(time)))


@lru_cache(maxsize=64)
def step_positions(trace: Trace) -> tuple[float, ...]:
    """x of each step: a Tick sits on its integer time, the other steps share the tick after it.

    Several steps within one tick are spread left to right inside it, in order, so the x
    axis reads as the clock and the order of events within a tick stays visible.
    """
    widths = tick_widths(trace)
    positions = [0.0] * len(trace.steps)
    for group in _groups(trace):
        first = trace.steps[group[0]]
        if _is_tick(first):
            positions[group[0]] = time_x(trace, _value(trace, first.after, "now"))
            continue
        time = _value(trace, first.before, "now")
        base, width = time_x(trace, time), widths[time]
        for k, index in enumerate(group):
            positions[index] = base + width * (k + 1) / (len(group) + 1)
    return tuple(positions)


def _is_tick(step: Step) -> bool:
    """Whether the step is the clock advancing."""
    return step.action.name == "Tick"


def _value(trace: Trace, state: tuple[int, ...], column: str) -> int:
    """One named value of a state of the trace (0 for a column the design lacks)."""
    index = trace.system.layout.index.get(column)
    return 0 if index is None else int(state[index])


def _worker_value(trace: Trace, state: tuple[int, ...], family: str, w: int) -> int:
    """A per-worker value such as `tok[w]`."""
    return _value(trace, state, f"{family}[{w}]")


STEP_OUTCOMES: Final = {"rejected": REJECTED, "checked": CHECKED, "read": READ}
"""The look of each receiver outcome the model reports (accepted is split below)."""


def reception_outcome(trace: Trace, step: Step) -> Outcome | None:
    """How the receiver handled the request of a step (the model's outcome), as drawn."""
    if step.outcome is None:
        return None
    if step.outcome == "accepted":
        return VIOLATING if step.violations else ACCEPTED
    return STEP_OUTCOMES[step.outcome]


def is_read(trace: Trace, step: Step) -> bool:
    """Whether the request the step handles is a read (read-modify-write, phase 0)."""
    w = step.action.worker
    return trace.design.workload == "rmw" and _worker_value(trace, step.before, "phase", w) == 0


@lru_cache(maxsize=64)
def events(trace: Trace, upto: int | None = None) -> tuple[Event, ...]:
    """The first `upto` steps (all by default) as timeline events."""
    positions = step_positions(trace)
    count = _count(trace, upto)
    found = []
    for step, x in zip(trace.steps[:count], positions, strict=False):
        w = step.action.worker
        lane = "clock" if _is_tick(step) else step.actor
        token_state = step.after if step.action.name == "Acquire" else step.before
        found.append(
            Event(
                step=step,
                lane=lane,
                x=x,
                time=_value(trace, step.before, "now"),
                worker=w,
                token=_worker_value(trace, token_state, "tok", w) if w else 0,
                outcome=reception_outcome(trace, step),
            )
        )
    return tuple(found)


def _count(trace: Trace, upto: int | None) -> int:
    """How many steps to show: all, or `upto` clamped to the trace."""
    if upto is None:
        return len(trace.steps)
    return max(0, min(upto, len(trace.steps)))


def messages(trace: Trace, upto: int | None = None) -> tuple[Message, ...]:
    """Every request sent and received within the first `upto` steps, paired send to reception."""
    in_flight: dict[int, Event] = {}
    found = []
    for event in events(trace, upto):
        name = event.step.action.name
        if name == "Send":
            in_flight[event.worker] = event
        elif name in ("Deliver", "Check") and event.worker in in_flight and event.outcome:
            sent = in_flight.pop(event.worker)
            found.append(
                Message(
                    worker=event.worker,
                    token=sent.token,
                    sent_x=sent.x,
                    received_x=event.x,
                    outcome=event.outcome,
                    is_read=is_read(trace, event.step),
                )
            )
    return tuple(found)


def lease_status(trace: Trace, state: tuple[int, ...], w: int) -> str | None:
    """`active`, `past` (holds a token outside its current, unexpired lease), or None."""
    if not _worker_value(trace, state, "tok", w):
        return None
    current = (
        _value(trace, state, "holder") == w
        and _value(trace, state, "grants") == _worker_value(trace, state, "gid", w)
        and _value(trace, state, "now") < _value(trace, state, "expires")
    )
    return LEASE_ACTIVE if current else LEASE_PAST


@lru_cache(maxsize=64)
def lease_segments(trace: Trace, upto: int | None = None) -> tuple[Segment, ...]:
    """Stretches during which each worker held a token, split where its lease stops being current.

    An active stretch that is still running at the end of the whole trace is drawn to the
    lease's expiry; a partial view (`upto`) ends every open stretch just after the last step.
    """
    positions = step_positions(trace)
    count = _count(trace, upto)
    states = trace.states()
    finished = count == len(trace.steps)
    last_x = positions[count - 1] if count else 0.0
    found: list[Segment] = []
    for w in range(1, trace.bounds.workers + 1):
        open_start: float | None = None
        open_key: tuple[str, int, int] | None = None
        for i in range(count):
            state = states[i + 1]
            status = lease_status(trace, state, w)
            key = (
                (
                    status,
                    _worker_value(trace, state, "gid", w),
                    _worker_value(trace, state, "tok", w),
                )
                if status
                else None
            )
            if key != open_key:
                if open_key is not None and open_start is not None:
                    found.append(
                        Segment(w, open_key[1], open_key[2], open_start, positions[i], open_key[0])
                    )
                open_start, open_key = positions[i], key
        if open_key is not None and open_start is not None:
            end = last_x + 0.1
            if finished and open_key[0] == LEASE_ACTIVE:
                end = max(end, time_x(trace, _value(trace, states[count], "expires")))
            found.append(Segment(w, open_key[1], open_key[2], open_start, end, open_key[0]))
    return tuple(found)


def last_time(trace: Trace) -> int:
    """The last integer time the axis shows: past every step and every lease bar."""
    positions = step_positions(trace)
    right = max([1.0, *positions]) + 0.3
    for segment in lease_segments(trace):
        right = max(right, segment.end + 0.2)
    time = 0
    while time_x(trace, time) < right:
        time += 1
    return time


def x_extent(trace: Trace) -> tuple[float, float]:
    """The x range that fits the whole trace, so every frame of an animation shares one axis."""
    return (-0.2, time_x(trace, last_time(trace)) + 0.1)


def time_ticks(trace: Trace) -> tuple[list[float], list[str]]:
    """Axis tick positions and labels: every integer time, at its (possibly stretched) x."""
    times = range(last_time(trace) + 1)
    return [time_x(trace, t) for t in times], [str(t) for t in times]


def lane_names_y(trace: Trace) -> dict[str, float]:
    """The y of each lane (coordinator on top, receiver at the bottom) and of the clock row."""
    names = lanes(trace)
    top = len(names) - 1
    positions = {name: float(top - i) for i, name in enumerate(names)}
    positions["clock"] = -0.8
    return positions
