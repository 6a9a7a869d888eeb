"""A live-lab history as swimlane facts: seconds on the time axis, the lock service on top,
one lane per worker, the store at the bottom; leases as bars, pauses and crashes on the
worker's lane, each request in the network from its send to the store's decision, decisions
marked by their outcome, and the gap where the model's replay of the history has one (placed
on the real times of the events that opened and closed it).

It reads a `LabReport` (the merged order of a real history) and takes its looks from
`webapp.show.looks`, the same as a model run's, so a rejected write looks the same as in the
model's timeline next to it; `webapp.draw.swimlane` draws the facts.
"""

from __future__ import annotations

from typing import Final

from lab.describe import describe
from lab.history import Happening
from lab.lock_table import SERVICES
from lab.report import LabReport
from model.actions import ActionKind
from webapp.show.events import gaps
from webapp.show.looks import (
    CRASH,
    ERROR,
    GRANT,
    LEASE_CHECK,
    MARK_LOOKS,
    RELEASE,
    RENEWAL,
    REVOKED,
    SEND,
    STORE_KILLED,
    STORE_STARTED,
    Look,
    outcome_look,
)
from webapp.show.style import (
    ACCEPTED,
    CHECKED,
    READ,
    REJECTED,
    VIOLATING,
    Outcome,
    actor_colour,
)
from webapp.show.swimlane import (
    CRASH_BAR,
    HOLD_BAR,
    LEASE_BAR,
    PAST_LEASE_BAR,
    PAUSE_BAR,
    Bar,
    Mark,
    MarkGroup,
    Request,
    Span,
    Swimlane,
    TimeAxis,
    legend_of,
    stacked,
)
from webapp.show.trace_swimlane import (
    CRASHED_LABEL,
    GAP_LABEL_LINES,
    LATER_GAP_LABEL,
    PAUSED_LABEL,
    gap_hover,
)

STORE_LANE: Final = "store"
DECISIONS: Final = ("deliver", "check", "apply")
Box = tuple[str, float, float]
"""A bar on a lane: lane name, start and end time."""

TIME_TITLE: Final = "time (seconds since the run started)"
HELD_LABEL: Final = "held"
PAST_LEASE_LABEL: Final = "past its lease"
EVENT_LOOKS: Final = {
    "grant": (GRANT, True),
    "revoked": (REVOKED, False),
    "send": (SEND, True),
    "release": (RELEASE, True),
    "renew": (RENEWAL, True),
    "crash": (CRASH, True),
    "lease-check": (LEASE_CHECK, True),
    "storage-kill": (STORE_KILLED, False),
    "storage-start": (STORE_STARTED, False),
    "error": (ERROR, False),
}
"""The look of each event that is not a store decision, and whether its marker is drawn in
its worker's colour (otherwise in the look's own)."""
STORE_KINDS: Final = frozenset(
    {"deliver", "check", "apply", "storage-kill", "storage-start", "hold", "unhold"}
)
"""Events whose marker sits on the store's lane."""


START_UP_KINDS: Final = frozenset({"storage-start"})
"""Events that only set the run up (the store starting before any worker acts)."""
FOLD_AT_LEAST: Final = 0.15
"""Start-up is folded away only when it takes at least this share of the run."""
MARGIN: Final = 0.04
"""Room left before the story's first event, as a share of the story's length."""
SHORT_TOKEN_DIGITS: Final = 4
"""Tokens with more digits than this are shown by a short name (the figure's key maps them)."""


def story_start(report: LabReport) -> float:
    """When the story begins: the first event of a worker or of the faults the lab injects
    (the lock service's connections and the store's first start are start-up)."""
    found = [
        e.t
        for e in report.line.events
        if e.kind not in START_UP_KINDS and (e.worker or e.kind in ("pause", "hold"))
    ]
    return min(found, default=0.0)


def axis_start(report: LabReport) -> float:
    """Where the time axis begins: 0, or just before the story when the start-up before it
    would take a large share of the axis (the times on the axis stay the real ones)."""
    begin, end = story_start(report), last_time(report)
    if end <= 0 or begin < FOLD_AT_LEAST * end:
        return 0.0
    return max(0.0, begin - MARGIN * (end - begin))


def short_tokens(report: LabReport) -> dict[str, str]:
    """Each token too long to read on the figure (a lease ID, a random value) by its short
    name, `τ1`, `τ2`, … in the order the run first uses them; none when all are short."""
    names: dict[str, str] = {}
    for event in report.line.events:
        token = event.get("token")
        if token is None or event.kind not in ("grant", *DECISIONS):
            continue
        text = str(token)
        if len(text.lstrip("-")) > SHORT_TOKEN_DIGITS and text not in names:
            names[text] = f"τ{len(names) + 1}"
    return names


def token_key(report: LabReport) -> tuple[str, ...]:
    """The figure's key to its short token names: `τ1 = 1015304295746265375`."""
    return tuple(f"{short} = {token}" for token, short in short_tokens(report).items())


def service_lane(report: LabReport) -> str:
    """The top lane: the run's lock service, by its short name."""
    return SERVICES[report.history.settings.lock_service].short


def lanes(report: LabReport) -> tuple[str, ...]:
    """The lanes top to bottom: the lock service, the workers, the store."""
    workers = [f"W{w}" for w in range(1, report.history.settings.workers + 1)]
    return (service_lane(report), *workers, STORE_LANE)


def last_time(report: LabReport) -> float:
    """The time of the last event."""
    return max((e.t for e in report.line.events), default=1.0)


def lease_boxes(report: LabReport) -> tuple[list[Box], list[Box]]:
    """Per grant, its lease (grant to revocation or release), and the time its worker went
    on acting on it after the lease had ended (sends, the release)."""
    end = last_time(report)
    live: list[Box] = []
    past: list[Box] = []
    for grant in report.line.grants.values():
        lane = f"W{grant.worker}"
        stop = grant.ended if grant.ended is not None else end
        live.append((lane, grant.t, stop))
        later = [
            e.t
            for e in report.line.events
            if e.worker == grant.worker
            and e.get("grant") == grant.revision
            and e.kind in ("send", "release", "deliver", "apply", "check")
            and e.t > stop
        ]
        if later:
            past.append((lane, stop, max(later)))
    return live, past


def spans(report: LabReport, start: str, stop: str, lane_of: str) -> list[Box]:
    """Bars from each `start` event to the next `stop` event of the same worker."""
    opened: dict[int, float] = {}
    found: list[Box] = []
    for event in report.line.events:
        if event.kind == start:
            opened[event.worker] = event.t
        elif event.kind == stop and event.worker in opened:
            lane = lane_of.format(w=event.worker)
            found.append((lane, opened.pop(event.worker), event.t))
    end = last_time(report)
    found += [(lane_of.format(w=w), t, end) for w, t in opened.items()]
    return found


def _violations_by_event(report: LabReport) -> dict[int, list[str]]:
    """The property violations of each history event (by index), as sentences."""
    found: dict[int, list[str]] = {}
    for verdict in report.properties.values():
        for violation in verdict.violations:
            found.setdefault(violation.event, []).append(f"{violation.prop}: {violation.reason}")
    return found


def outcome_of(event: Happening, violating: bool) -> Outcome | None:
    """How a store decision looks: accepted, violating, rejected, read, checked."""
    if event.kind == "check":
        return CHECKED if event.get("passed") else REJECTED
    if event.kind == "apply" or event.get("outcome") == "accepted":
        return VIOLATING if violating else ACCEPTED
    if event.get("outcome") == "rejected":
        return REJECTED
    if event.get("outcome") == "read":
        return READ
    return None


def _lane_of(event: Happening, report: LabReport) -> str:
    """Where an event's marker goes."""
    if event.kind in STORE_KINDS:
        return STORE_LANE
    if event.kind in ("grant", "revoked") or not event.worker:
        return service_lane(report)
    return f"W{event.worker}"


def _token(event: Happening, short: dict[str, str]) -> str:
    """An event's token as the figure shows it: itself, or its short name."""
    token = str(event.get("token"))
    return short.get(token, token)


def _label(event: Happening, short: dict[str, str]) -> str:
    """The short text by a marker."""
    if event.kind == "grant":
        return f"W{event.worker}: tok {_token(event, short)}"
    if event.kind == "storage-kill":
        return "store killed"
    return ""


def _said(report: LabReport, event: Happening) -> str:
    """An event's sentence with its time, as its hover says it."""
    return f"{event.t:.3f} s: {describe(event, report.history.settings.lock_service)}"


def _lease_bars(report: LabReport) -> list[Bar]:
    """Per worker its leases (numbered in grant order), then the time it held a token past one."""
    live, past = lease_boxes(report)
    number = {box: i for i, box in enumerate(live, start=1)}
    found: list[Bar] = []
    for w in range(1, report.history.settings.workers + 1):
        lane = f"W{w}"
        found += [Bar(*b, LEASE_BAR, f"lease #{number[b]}") for b in live if b[0] == lane]
        found += [Bar(*b, PAST_LEASE_BAR, PAST_LEASE_LABEL) for b in past if b[0] == lane]
    return found


def _crash_bars(report: LabReport) -> list[Bar]:
    """A killed worker's lane from its kill to the end of the run."""
    end = last_time(report)
    return [
        Bar(f"W{e.worker}", e.t, max(end, e.t), CRASH_BAR, CRASHED_LABEL, _said(report, e))
        for e in report.line.events
        if e.kind == "crash"
    ]


def bars(report: LabReport) -> tuple[Bar, ...]:
    """Leases per worker (current, then held past their end), pauses, holds and crashes."""
    paused = [
        Bar(lane, start, end, PAUSE_BAR, PAUSED_LABEL, pause_hover(lane, start, end))
        for lane, start, end in spans(report, "pause", "resume", "W{w}")
    ]
    held = [
        Bar(lane, start, end, HOLD_BAR, HELD_LABEL, hold_hover(start, end))
        for lane, start, end in spans(report, "hold", "unhold", STORE_LANE)
    ]
    return (*_lease_bars(report), *paused, *held, *_crash_bars(report))


def pause_hover(lane: str, start: float, end: float) -> str:
    """What hovering a real pause says: who was stopped, and for how long."""
    return (
        f"{lane} is stopped (SIGSTOP) from {start:.3f} s to {end:.3f} s: it takes no step, "
        "and it still believes it holds the lock when it goes on (SIGCONT)"
    )


def hold_hover(start: float, end: float) -> str:
    """What hovering a held request says."""
    return f"the store holds a request in flight from {start:.3f} s to {end:.3f} s"


def _event_groups(report: LabReport) -> dict[Look, list[Mark]]:
    """The lock service's and the workers' events, by look."""
    found: dict[Look, list[Mark]] = {}
    short, left = short_tokens(report), axis_start(report)
    for event in report.line.events:
        if event.kind not in EVENT_LOOKS or event.t < left:
            continue
        look, worker_coloured = EVENT_LOOKS[event.kind]
        colour = actor_colour(f"W{event.worker}") if worker_coloured else look.colour
        label = _label(event, short)
        mark = Mark(_lane_of(event, report), event.t, colour, _said(report, event), label)
        found.setdefault(look, []).append(mark)
    return found


def _decision_groups(report: LabReport) -> dict[Look, list[Mark]]:
    """The store's decisions, by outcome (a decision that violates a property says which and
    why on hover; its label is the outcome's glyph and the token)."""
    violations = _violations_by_event(report)
    short = short_tokens(report)
    found: dict[Look, list[Mark]] = {}
    for event in report.line.events:
        outcome = outcome_of(event, event.index in violations) if event.kind in DECISIONS else None
        if outcome is None:
            continue
        hover = "<br>".join([_said(report, event), *violations.get(event.index, [])])
        label = f"{outcome.glyph} {_token(event, short)}"
        mark = Mark(STORE_LANE, event.t, outcome.colour, hover, label)
        found.setdefault(outcome_look(outcome), []).append(mark)
    return found


def mark_groups(report: LabReport) -> tuple[MarkGroup, ...]:
    """Every marked event, one group per look in the legend's order."""
    by_look = _event_groups(report) | _decision_groups(report)
    return tuple(MarkGroup(look, tuple(by_look[look])) for look in MARK_LOOKS if look in by_look)


def requests(report: LabReport) -> tuple[Request, ...]:
    """Each request from its send to the store's first decision on it (a request the store
    never decided is left out: what became of it is told by the report, not drawn)."""
    violations = _violations_by_event(report)
    first: dict[str, Happening] = {}
    for event in report.line.events:
        if event.kind in DECISIONS and str(event.get("request")) not in first:
            first[str(event.get("request"))] = event
    found: list[Request] = []
    for send in (e for e in report.line.events if e.kind == "send"):
        decision = first.get(str(send.get("request")))
        if decision is None:
            continue
        outcome = outcome_of(decision, decision.index in violations) or ACCEPTED
        hover = f"{_said(report, send)}; {decision.t:.3f} s: {outcome.word}"
        found.append(
            Request(
                lane=f"W{send.worker}",
                sent=send.t,
                end=decision.t,
                to_lane=STORE_LANE,
                outcome=outcome,
                is_read=send.get("op") == "read",
                hover=hover,
            )
        )
    return tuple(found)


def _step_times(report: LabReport) -> list[float | None]:
    """The real time of each step of the model's replay (None for a tick, which no event
    made)."""
    at = {event.index: event.t for event in report.line.events}
    return [None if i is None else at.get(i) for i in report.conformance.step_events]


def _lease_ends(report: LabReport) -> list[float | None]:
    """Per grant of the model's replay, in order, when the real lease of that grant ended."""
    conformance, by_index = report.conformance, {e.index: e for e in report.line.events}
    assert conformance.trace is not None
    ends: list[float | None] = []
    for step, index in zip(conformance.trace.steps, conformance.step_events, strict=True):
        if step.action.name is ActionKind.ACQUIRE:
            event = by_index.get(index) if index is not None else None
            grant = report.line.grants.get(event.get("revision")) if event else None
            ends.append(grant.ended if grant is not None else None)
    return ends


def gap_spans(report: LabReport) -> tuple[Span, ...]:
    """The model's gaps in its replay of this history, placed on the real times: from the
    real end of the old grant's lease to the event of the step that closed the gap (the run's
    end while it is open). None when the model did not replay the whole history."""
    conformance = report.conformance
    if conformance.trace is None or not conformance.allowed:
        return ()
    times, ends, last = _step_times(report), _lease_ends(report), last_time(report)
    found: list[Span] = []
    for gap in gaps(conformance.trace):
        start = ends[gap.grant - 1] if gap.grant <= len(ends) else None
        if start is None:
            continue
        later = [] if gap.end_step is None else [t for t in times[gap.end_step - 1 :] if t]
        end = max(later[0] if later else last, start)
        label = LATER_GAP_LABEL if found else GAP_LABEL_LINES
        found.append(Span(start, end, label, gap_hover(gap)))
    return tuple(found)


def subtitle(report: LabReport) -> str:
    """What the real run was: its lock service, how long, how many grants and requests, and
    the start-up left out of the axis, if any."""
    grants = len(report.line.grants)
    sent = sum(1 for e in report.line.events if e.kind == "send")
    left = axis_start(report)
    folded = f" · the start-up, 0 to {left:.2f} s, is not shown" if left else ""
    return (
        f"a real run on {service_lane(report)}: {last_time(report):.2f} s, "
        f"{grants} grant{'s' if grants != 1 else ''}, {sent} request{'s' if sent != 1 else ''}"
        f"{folded}"
    )


def history_facts(report: LabReport, title: str = "") -> Swimlane:
    """The swimlane facts of a real history."""
    drawn_bars = bars(report)
    groups = mark_groups(report)
    sent = requests(report)
    gapped = gap_spans(report)
    return Swimlane(
        title=title,
        subtitle=subtitle(report),
        lanes=stacked(lanes(report)),
        bars=drawn_bars,
        groups=groups,
        requests=sent,
        spans=gapped,
        axis=TimeAxis(axis_start(report), _axis_end(report), TIME_TITLE),
        legend=legend_of(drawn_bars, groups, sent, gapped, stepping=False),
        span_room=bool(gapped),
        key=token_key(report),
    )


def _axis_end(report: LabReport) -> float:
    """Where the time axis ends: a little after the last event."""
    left, end = axis_start(report), last_time(report)
    return end + 0.03 * (end - left) + 0.05
