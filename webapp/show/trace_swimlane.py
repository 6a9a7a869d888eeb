"""A model run as swimlane facts: one lane per actor, time in ticks, one picture per step.

`trace_facts(trace, upto)` says what is known after the first `upto` steps of a replayed
trace (the whole run when None): leases as bars (past their end, faint), pauses and crashes
on the worker's lane, each request in the network from its send to its reception, each step
as a mark with the model's own sentence, and the gap as a stretch across every lane. Every
fact is read from `webapp.show.events`, which asks the model's own predicates; the legend
is the same at every step of a run. `webapp.draw.swimlane` draws the facts.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from model.actions import ActionKind
from model.design import Expiry
from model.formats.trace import Trace
from webapp.show.events import (
    LEASE_PAST,
    Crashed,
    Event,
    Gap,
    Message,
    Pause,
    Segment,
    crashes,
    current_x,
    events,
    gaps,
    lane_names_y,
    lease_segments,
    messages,
    pauses,
    time_ticks,
    x_extent,
)
from webapp.show.looks import ACTION_LOOKS, MARK_LOOKS, TICK, Look, outcome_look
from webapp.show.style import RECEIVER, actor_colour
from webapp.show.swimlane import (
    CRASH_BAR,
    LEASE_BAR,
    LOCK_BAR,
    PAST_LEASE_BAR,
    PAST_LOCK_BAR,
    PAUSE_BAR,
    Bar,
    Lane,
    Mark,
    MarkGroup,
    Request,
    Span,
    Swimlane,
    TimeAxis,
    legend_of,
)

TIME_TITLE: Final = "time (ticks)"
GAP_LABEL: Final = "gap: old lease over, the receiver would still take its token"
GAP_LABEL_LINES: Final = "gap: old lease over,<br>the receiver would still take its token"
LATER_GAP_LABEL: Final = "gap"
"""A later gap's label (the first gap's words in full would overlap)."""
PAUSED_LABEL: Final = "❚❚ paused"
CRASHED_LABEL: Final = "✖ crashed"


def hover_text(event: Event) -> str:
    """The hover label of a step: number, time, the model's sentence, and any violation."""
    lines = [f"Step {event.step.number} (t={event.time}): {event.step.sentence}"]
    lines.extend(reason.text for reason in event.step.reasons)
    return "<br>".join(lines)


def marker_label(event: Event) -> str:
    """Short text next to a marker: the token carried or granted, and the outcome glyph."""
    name = event.step.action.name
    if name is ActionKind.ACQUIRE:
        return f"W{event.worker}: tok {event.token}"
    if event.outcome is not None:
        return (
            f"{event.outcome.glyph} {event.token}" if event.carries_token else event.outcome.glyph
        )
    if name is ActionKind.SEND:
        return f"tok {event.token}" if event.carries_token else "no tok"
    return ""


def look_of(event: Event) -> Look:
    """The look of a step's marker."""
    if event.outcome is not None:
        return outcome_look(event.outcome)
    return ACTION_LOOKS.get(event.step.action.name, Look(event.step.action.name, "circle"))


def marker_colour(event: Event) -> str:
    """Outcomes and ticks in their own colour; grants, sends and releases in the worker's."""
    look = look_of(event)
    if event.outcome is not None or look is TICK:
        return look.colour
    return actor_colour(f"W{event.worker}" if event.worker else event.lane)


def _mark(event: Event) -> Mark:
    """A step as a mark on its lane."""
    return Mark(event.lane, event.x, marker_colour(event), hover_text(event), marker_label(event))


def lease_label(segment: Segment, right: float, expires: bool = True) -> str:
    """The words on a bar: its grant and, when it runs past the axis, where it ends; for a
    lock that never `expires`, the grant alone (there is no lease to name)."""
    if not expires:
        return "lock lost" if segment.status == LEASE_PAST else f"grant #{segment.grant}"
    if segment.status == LEASE_PAST:
        return "past its lease"
    if segment.end > right:
        return f"lease #{segment.grant} → t={segment.end:g}"
    return f"lease #{segment.grant}"


def _bar_kind(segment: Segment, expires: bool) -> str:
    """A segment's bar kind: a lease (or past it), or for a lock that never expires, the
    lock held (or lost)."""
    past = segment.status == LEASE_PAST
    if not expires:
        return PAST_LOCK_BAR if past else LOCK_BAR
    return PAST_LEASE_BAR if past else LEASE_BAR


def lease_words(trace: Trace) -> str:
    """How long the lock is held: `a lease lasts 2 ticks`, or that it never expires."""
    if trace.design.expiry is Expiry.NEVER:
        return "the lock never expires"
    lease = trace.bounds.lease
    return f"a lease lasts {lease} tick{'s' if lease != 1 else ''}"


def pause_hover(pause: Pause) -> str:
    """What hovering a pause says: who, and while which ticks passed."""
    ticks = ", ".join(f"t={t}" for t in pause.ticks)
    return (
        f"W{pause.worker} is paused: it believes it holds the lock and could act, "
        f"but takes no step while time passes ({ticks})"
    )


def crash_hover(crash: Crashed) -> str:
    """What hovering a crashed lane says: who, since when, and that nobody is told."""
    return (
        f"W{crash.worker} crashed at t={crash.time} and takes no step again: no write, no "
        "release, no renewal. Nobody is told; to the coordinator it looks like a pause."
    )


def _kind(message: Message) -> str:
    """`read` or `write`."""
    return "read" if message.is_read else "write"


def message_hover(message: Message) -> str:
    """What hovering a request's path says: whose, which token, how long, what became of it."""
    head = (
        f"W{message.worker}'s {_kind(message)} carrying token {message.token}"
        if message.carries_token
        else f"W{message.worker}'s {_kind(message)}, without a token"
    )
    if message.outcome is None or message.received_time is None:
        return f"{head}, sent at t={message.sent_time}: still in the network"
    ticks = message.received_time - message.sent_time
    waited = f", {ticks} tick{'s' if ticks != 1 else ''} in the network" if ticks else ""
    return f"{head}, sent at t={message.sent_time}{waited}: {message.outcome.word}"


def gap_hover(gap: Gap) -> str:
    """What the gap's label says on hover: whose lease, since when, and how it ended."""
    head = (
        f"W{gap.worker}'s grant #{gap.grant} is no longer the current lease, yet W{gap.worker} "
        "still believes it holds the lock and has a request to go, and the receiver would "
        "still take it: it has seen no newer token"
    )
    endings = {
        "newer": "until the receiver saw a newer token and would refuse the old one",
        "gave up": f"until W{gap.worker} gave up its token",
        "nothing to send": f"until W{gap.worker} had nothing more to send",
    }
    tail = "still open" if gap.closed_by is None else endings.get(gap.closed_by, "")
    return f"{head}: {tail}."


def subtitle(trace: Trace, upto: int | None) -> str:
    """Where the player is, in time and steps, and how long a lease lasts."""
    total = len(trace.steps)
    lease = lease_words(trace)
    if upto is None:
        return f"the whole run: {total} steps, t=0 to t={x_extent(trace)[1] - 1:g} · {lease}"
    count = max(0, min(upto, total))
    now = trace.state_at(count)["now"]
    where = "before the first step" if count == 0 else f"after {count} of {total} steps"
    return f"{where} · now t={now} · {lease}"


def _bars(trace: Trace, upto: int | None) -> tuple[Bar, ...]:
    """Leases (current, then outlived), pauses and crashes known after `upto` steps."""
    right = x_extent(trace)[1]
    expires = trace.design.expiry is not Expiry.NEVER
    leases = [
        Bar(f"W{s.worker}", s.start, s.end, _bar_kind(s, expires), lease_label(s, right, expires))
        for s in lease_segments(trace, upto)
    ]
    paused = [
        Bar(f"W{p.worker}", p.start, p.end, PAUSE_BAR, PAUSED_LABEL, pause_hover(p))
        for p in pauses(trace, upto)
    ]
    crashed = [
        Bar(f"W{c.worker}", c.start, max(c.end, c.start), CRASH_BAR, CRASHED_LABEL, crash_hover(c))
        for c in crashes(trace, upto)
    ]
    return (*leases, *paused, *crashed)


def _groups(shown: tuple[Event, ...]) -> tuple[MarkGroup, ...]:
    """The steps' marks, one group per look in the legend's order."""
    by_look: dict[Look, list[Mark]] = {}
    for event in shown:
        by_look.setdefault(look_of(event), []).append(_mark(event))
    return tuple(MarkGroup(look, tuple(by_look[look])) for look in MARK_LOOKS if look in by_look)


def _requests(trace: Trace, upto: int | None) -> tuple[Request, ...]:
    """Every request sent so far: in the network until it was handled (or until now)."""
    now = current_x(trace, upto)
    return tuple(
        Request(
            lane=f"W{m.worker}",
            sent=m.sent_x,
            end=now if m.received_x is None else m.received_x,
            to_lane=RECEIVER,
            outcome=m.outcome,
            is_read=m.is_read,
            hover=message_hover(m),
            in_flight=m.in_flight,
            flight_label=f"✉ {_kind(m)} in flight",
        )
        for m in messages(trace, upto)
    )


def _spans(trace: Trace, upto: int | None) -> tuple[Span, ...]:
    """The gaps known so far: the first labelled in full, later ones as `gap`."""
    return tuple(
        Span(g.start, g.end, GAP_LABEL_LINES if i == 0 else LATER_GAP_LABEL, gap_hover(g))
        for i, g in enumerate(gaps(trace, upto))
    )


@lru_cache(maxsize=64)
def _whole_run_legend(trace: Trace, stepping: bool) -> tuple[Look, ...]:
    """The legend of a run: every look its whole run draws (the same at every step)."""
    return legend_of(
        _bars(trace, None),
        _groups(events(trace)),
        _requests(trace, None),
        _spans(trace, None),
        stepping,
    )


def legend_looks(trace: Trace, stepping: bool = True) -> tuple[Look, ...]:
    """One legend entry per meaning the whole run draws, in reading order: the same at every
    step (the current-step ring only while `stepping`)."""
    return _whole_run_legend(trace, stepping)


def trace_facts(trace: Trace, upto: int | None = None) -> Swimlane:
    """The swimlane facts after the trace's first `upto` steps (the whole run when None)."""
    shown = events(trace, upto)
    left, right = x_extent(trace)
    ticks = time_ticks(trace)
    stepping = upto is not None
    return Swimlane(
        title=trace.title or trace.design.label(),
        subtitle=subtitle(trace, upto),
        lanes=tuple(Lane(name, y) for name, y in lane_names_y(trace).items()),
        bars=_bars(trace, upto),
        groups=_groups(shown),
        requests=_requests(trace, upto),
        spans=_spans(trace, upto),
        axis=TimeAxis(left, right, TIME_TITLE, tuple(zip(*ticks, strict=True))),
        legend=legend_looks(trace, stepping),
        now=current_x(trace, upto) if stepping else None,
        current=_mark(shown[-1]) if stepping and shown else None,
        span_room=bool(gaps(trace)),
    )


def forget_cached_legends() -> None:
    """Forget every run's memoised legend (with `events.forget_cached_facts`: a cold build)."""
    _whole_run_legend.cache_clear()
