"""A live-lab history as swimlane facts: seconds on the time axis, etcd on top, one lane per
worker, the store at the bottom; leases as bars, pauses as hatched bars on the paused worker's
lane, requests as arrows from the worker to the store, decisions marked by their outcome.

It reads a `LabReport` (the merged order of a real history) and takes its outcome symbols
and words from `webapp.show.style`, so a rejected write looks the same as in the model's
timeline next to it; `webapp.draw.swimlane` draws the facts.
"""

from __future__ import annotations

from typing import Final

from lab.describe import describe
from lab.history import Happening
from lab.report import LabReport
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
    HOLD,
    LEASE,
    PAST_LEASE,
    PAUSE,
    Arrow,
    Bar,
    Mark,
    MarkGroup,
    Swimlane,
)

ETCD_LANE: Final = "etcd"
STORE_LANE: Final = "store"
DECISIONS: Final = ("deliver", "check", "apply")
Box = tuple[str, float, float]
"""A bar on a lane: lane name, start and end time."""

BAR_LEGENDS: Final = {
    LEASE: "lease",
    PAST_LEASE: "holds token past its lease",
    PAUSE: "paused (SIGSTOP → SIGCONT)",
    HOLD: "request held in flight",
}
PLAIN_EVENTS: Final = "grant / send / release"
TIME_TITLE: Final = "time (seconds since the run started)"


def lanes(report: LabReport) -> tuple[str, ...]:
    """The lanes top to bottom: etcd, the workers, the store."""
    workers = [f"W{w}" for w in range(1, report.history.settings.workers + 1)]
    return (ETCD_LANE, *workers, STORE_LANE)


def _end(report: LabReport) -> float:
    """The time of the last event."""
    return max((e.t for e in report.line.events), default=1.0)


def lease_boxes(report: LabReport) -> tuple[list[Box], list[Box]]:
    """Per grant, its lease (grant to revocation or release), and the time its worker went
    on acting on it after the lease had ended (sends, the release)."""
    end = _end(report)
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
    end = _end(report)
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


def _lane_of(event: Happening) -> str:
    """Where an event's marker goes."""
    if event.kind in ("grant", "revoked"):
        return ETCD_LANE
    if event.kind in (
        "deliver",
        "check",
        "apply",
        "storage-kill",
        "storage-start",
        "hold",
        "unhold",
    ):
        return STORE_LANE
    return f"W{event.worker}" if event.worker else ETCD_LANE


MARKS: Final = {
    "grant": ("diamond", "#444444"),
    "revoked": ("x", "#444444"),
    "send": ("triangle-right", None),
    "release": ("square", None),
    "lease-check": ("hourglass", None),
    "storage-kill": ("bowtie", "#c62828"),
    "storage-start": ("bowtie-open", "#17becf"),
    "error": ("circle-x", "#c62828"),
}
"""Marker symbol and colour of each non-decision event (None: the worker's colour)."""


def _label(event: Happening) -> str:
    """The short text by a marker."""
    if event.kind == "grant":
        return f"W{event.worker}: tok {event.get('token')}"
    if event.kind == "storage-kill":
        return "store killed"
    return ""


def bars(report: LabReport) -> tuple[Bar, ...]:
    """Leases per worker (current, then held past their end), then pauses and holds."""
    live, past = lease_boxes(report)
    found: list[Bar] = []
    for w in range(1, report.history.settings.workers + 1):
        for boxes, kind in ((live, LEASE), (past, PAST_LEASE)):
            found += [Bar(*box, kind, BAR_LEGENDS[kind]) for box in boxes if box[0] == f"W{w}"]
    for boxes, kind in (
        (spans(report, "pause", "resume", "W{w}"), PAUSE),
        (spans(report, "hold", "unhold", STORE_LANE), HOLD),
    ):
        found += [Bar(*box, kind, BAR_LEGENDS[kind]) for box in boxes]
    return tuple(found)


def mark_groups(report: LabReport) -> tuple[MarkGroup, ...]:
    """The etcd and worker events under one legend entry, then the store's decisions, one
    entry per outcome (a decision that violates a property says which and why)."""
    violations = _violations_by_event(report)
    plain = tuple(
        Mark(
            _lane_of(e),
            e.t,
            MARKS[e.kind][0],
            MARKS[e.kind][1] or actor_colour(f"W{e.worker}"),
            describe(e, report.history.settings.lock_service),
            _label(e),
        )
        for e in report.line.events
        if e.kind in MARKS
    )
    groups = [MarkGroup(PLAIN_EVENTS, plain, size=11, labelled=True)]
    decisions = [e for e in report.line.events if e.kind in DECISIONS]
    for look in (ACCEPTED, VIOLATING, REJECTED, READ, CHECKED):
        chosen = [e for e in decisions if outcome_of(e, e.index in violations) == look]
        if chosen:
            marks = tuple(
                Mark(
                    STORE_LANE,
                    e.t,
                    look.symbol,
                    look.colour,
                    "<br>".join(
                        [
                            describe(e, report.history.settings.lock_service),
                            *violations.get(e.index, []),
                        ]
                    ),
                )
                for e in chosen
            )
            groups.append(MarkGroup(f"{look.glyph} {look.word}", marks, size=14))
    return tuple(groups)


def arrows(report: LabReport) -> tuple[Arrow, ...]:
    """Each request from its send to the store's first decision on it, in its outcome's colour."""
    violations = _violations_by_event(report)
    first: dict[str, Happening] = {}
    for event in report.line.events:
        if event.kind in DECISIONS and event.get("request") not in first:
            first[str(event.get("request"))] = event
    found: list[Arrow] = []
    for send in (e for e in report.line.events if e.kind == "send"):
        decision = first.get(str(send.get("request")))
        if decision is None:
            continue
        look = outcome_of(decision, decision.index in violations) or ACCEPTED
        found.append(Arrow(f"W{send.worker}", send.t, STORE_LANE, decision.t, look.colour))
    return tuple(found)


def history_facts(report: LabReport) -> Swimlane:
    """The swimlane facts of a real history."""
    return Swimlane(
        lanes=lanes(report),
        bars=bars(report),
        groups=mark_groups(report),
        arrows=arrows(report),
        end=_end(report),
        time_title=TIME_TITLE,
    )
