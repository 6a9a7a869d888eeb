"""Lab histories: the versioned JSON file, and the one order in which its events happened.

A history file holds the raw events each process recorded (worker, storage, nemesis, and
the controller's watch on the lock key). `timeline()` merges them into one ordered list,
the only order the checker, the conformance replay and the figures use:

- a grant is seen by its worker (the create's answer) and by the watch (the key's PUT);
  a release that deleted the key by its worker and by the watch (or by the watch alone,
  when the worker invoked the release and was stopped before it heard the answer); a lease
  that etcd revoked only by the watch (a DELETE nobody asked for);
- every time recorded for an etcd event is an upper bound of when etcd did it (it is taken
  after etcd answered), so an event's time is the earliest of its own observations and the
  observations of every event etcd ordered after it (etcd's revision order is authoritative
  among lock events; this moves a time back by at most the latency of one request);
- everything else keeps the time its process recorded before acting on it.

Reading a history file checks it like a trace file: its size, nesting and values are
measured before it is decoded (`model.formats.reading`), then it is converted through its schema
(`lab.history_schema`): every field of every event has its type and range checked, a field
the schema does not have is refused, and every text must be printable (a name from a file
can never put a terminal escape on the screen). A bad file gets one line naming the event
and field.

Each happening keeps the earliest time a witness recorded (`observed`); lab.witness refuses
a history in which etcd's order would move a time back by more than one request's latency,
instead of letting this merge repair it silently. Besides the processes' events, a history
holds the controller's final reads (`final-read`: the data row and the lock key) and what
the run measured on its etcd (`measured`); lab.witness cross-checks them all.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Final

from lab.events import Event
from lab.history_schema import MAX_EVENT_SECONDS as MAX_EVENT_SECONDS
from lab.history_schema import MAX_FINAL_LOCKS as MAX_FINAL_LOCKS
from lab.history_schema import MAX_MEASURED_SECONDS as MAX_MEASURED_SECONDS
from lab.history_schema import history_record, settings_of
from lab.lock_table import recorded_token
from lab.nemesis import Fault, faults_from_data, faults_to_data
from lab.settings import LabInputError, Settings
from model.formats import reading
from model.formats.reading import quoted

HISTORY_FORMAT: Final = "fencing-lab/lab-history"
HISTORY_VERSION: Final = 1
MEASURED_FIGURES: Final = ("request_seconds", "revocation_seconds", "observer_seconds")
"""The figures a run measures (lab.allowances reads them)."""


@dataclass(frozen=True)
class History:
    """One lab run as recorded: what was run, on which etcd, and every event."""

    scenario: str
    settings: Settings
    events: tuple[Event, ...]
    etcd: Mapping[str, Any] = field(default_factory=dict)
    started: str = ""
    seconds: float = 0.0
    prediction: Mapping[str, Any] | None = None
    partial: str = ""
    """Why the run stopped before its end (interrupted, a process died); '' when it did not."""
    measured: Mapping[str, float] = field(default_factory=dict)
    """Figures the run measured: `request_seconds` (the slowest status request to etcd),
    `revocation_seconds` (how long after its TTL etcd revoked the latest of the run's probe
    leases) and
    `observer_seconds` (the slowest look of a polled lock service's observer)."""
    nemesis: tuple[Fault, ...] = ()
    """A randomized run's fault schedule, drawn before it started (lab.nemesis)."""
    nemesis_given: bool = False
    """Whether the schedule was given by the caller (the lab's Python interface) rather than
    drawn from the settings' seed; a drawn one is drawn again when the history is read."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the history file (`partial` only in a run that stopped early)."""
        ending = {"partial": self.partial} if self.partial else {}
        return {
            "format": HISTORY_FORMAT,
            "version": HISTORY_VERSION,
            "scenario": self.scenario,
            "settings": self.settings.to_dict(),
            "etcd": dict(self.etcd),
            "started": self.started,
            "seconds": round(self.seconds, 3),
            "prediction": dict(self.prediction) if self.prediction is not None else None,
            **ending,
            **({"measured": dict(self.measured)} if self.measured else {}),
            **({"nemesis": faults_to_data(self.nemesis)} if self.nemesis else {}),
            **({"nemesis_given": True} if self.nemesis_given else {}),
            "events": list(self.events),
        }


EVENT_SEPARATORS: Final = (",", ":")
"""Events are written without blanks after commas and colons: a 60-second run's history
is about 13% smaller, and still one event per line."""


def history_to_json(history: History) -> str:
    """The history file's text (one event per line, to keep it readable and diffable)."""
    head = history.to_dict()
    events = head.pop("events")
    text = json.dumps(head, indent=2)[:-2]
    lines = ",\n    ".join(json.dumps(event, separators=EVENT_SEPARATORS) for event in events)
    return (
        f'{text},\n  "events": [\n    {lines}\n  ]\n}}\n'
        if events
        else text + ',\n  "events": []\n}\n'
    )


def looks_like_history(data: Any) -> bool:
    """Whether decoded JSON claims to be a lab history (its `format` field)."""
    return isinstance(data, dict) and data.get("format") == HISTORY_FORMAT


def looks_like_history_file(raw: bytes) -> bool:
    """Whether a file's bytes, not yet decoded, hold the lab history format's name as a whole
    JSON value (then the file is read with the history's limits and checks; a trace file
    would hold it only as a title of exactly that text)."""
    return f'"{HISTORY_FORMAT}"'.encode() in raw


# ----- validation: every field of a history file, before anything reads it ----------------------

MAX_HISTORY_BYTES: Final = reading.MAX_HISTORY_BYTES
"""A history file's size limit: a 60-second randomized run writes about 1 MB."""
MAX_EVENTS: Final = reading.MAX_HISTORY_EVENTS


def history_from_dict(data: Any) -> History:
    """Validate a decoded history object through its schema (`lab.history_schema`): every
    field's type and range, every text printable (a name shown on a terminal can never carry
    an escape code), unknown fields refused; errors name the event or part, and the field."""
    if not looks_like_history(data):
        raise LabInputError(f"not a lab history: field 'format' must be {HISTORY_FORMAT!r}")
    version = data.get("version")
    if type(version) is not int or version != HISTORY_VERSION:
        raise LabInputError(
            f"unsupported lab history version {quoted(version, 20)}: expected {HISTORY_VERSION}"
        )
    settings = settings_of(data.get("settings"))
    record = history_record(data, settings)
    measured = record.measured
    return History(
        scenario=record.scenario,
        settings=settings,
        events=tuple(sorted(data["events"], key=lambda e: e["t"])),
        etcd=data.get("etcd") or {},
        started=record.started,
        seconds=record.seconds,
        prediction=data.get("prediction"),
        partial=record.partial,
        measured={
            name: value
            for name in MEASURED_FIGURES
            if (value := getattr(measured, name, None)) is not None
        },
        nemesis=faults_from_data(data.get("nemesis"), settings.workers, settings.members),
        nemesis_given=record.nemesis_given,
    )


def history_from_json(text: str | bytes) -> History:
    """Measure, decode and validate a history file's text (limits: `model.formats.reading`)."""
    try:
        data = reading.load_json(text, reading.HISTORY_LIMITS)
    except reading.ReadError as error:
        raise LabInputError(str(error)) from None
    return history_from_dict(data)


def read_bounded(path: Path) -> bytes:
    """A history file's bytes: a regular file within the size limit, or a LabInputError."""
    try:
        return reading.read_file(path, reading.HISTORY_LIMITS)
    except reading.ReadError as error:
        raise LabInputError(str(error)) from None


def load_history(path: Path) -> History:
    """Read and validate a history file."""
    return history_from_json(read_bounded(path))


# ----- the merged order ---------------------------------------------------------------


@dataclass(frozen=True)
class Happening:
    """One event in the merged order: its position, time, kind, worker and recorded fields."""

    index: int
    t: float
    kind: str
    worker: int
    data: Mapping[str, Any]
    observed: float | None = None
    """The earliest time a witness recorded it, before etcd's order moved it back (None: as t)."""

    def get(self, name: str, default: Any = None) -> Any:
        """A recorded field."""
        return self.data.get(name, default)

    @property
    def is_write_accepted(self) -> bool:
        """A write that took effect at the store (a deliver accepted, or an apply)."""
        return (
            self.kind == "deliver"
            and self.get("op") == "write"
            and self.get("outcome") == "accepted"
        ) or self.kind == "apply"

    @property
    def is_write_decision(self) -> bool:
        """A decision on a write: accepted, rejected at delivery, or refused at the check."""
        if self.kind == "deliver":
            return self.get("op") == "write"
        return self.kind == "apply" or (self.kind == "check" and not self.get("passed"))


@dataclass(frozen=True)
class GrantInfo:
    """A grant of the lock: who, its token, when it was made and when its lease ended."""

    revision: int
    worker: int
    token: int
    lease: int
    t: float
    ended: float | None
    ended_by: str | None
    """`revoked` (etcd's sweep), `released`, or None (still live when the run stopped)."""


@dataclass(frozen=True)
class Timeline:
    """A history's events in the one order they happened, with its grants."""

    history: History
    events: tuple[Happening, ...]

    @cached_property
    def grants(self) -> dict[int, GrantInfo]:
        """Every grant by its create revision, in revision order."""
        ends = {
            e.get("grant"): (e.t, "revoked" if e.kind == "revoked" else "released")
            for e in self.events
            if e.kind == "revoked" or (e.kind == "release" and e.get("deleted"))
        }
        found = {}
        for e in self.events:
            if e.kind == "grant":
                end = ends.get(e.get("revision"), (None, None))
                found[int(e.get("revision"))] = GrantInfo(
                    int(e.get("revision")),
                    e.worker,
                    int(e.get("token")),
                    int(e.get("lease", 0)),
                    e.t,
                    end[0],
                    end[1],
                )
        return dict(sorted(found.items()))

    @cached_property
    def grant_rank(self) -> dict[int, int]:
        """Each grant's number in grant order (1 for the first)."""
        return {revision: rank for rank, revision in enumerate(self.grants, start=1)}

    @cached_property
    def renewals(self) -> dict[int, tuple[float, ...]]:
        """The times of each grant's keepalives that etcd took (`renew` ok), by revision."""
        found: dict[int, list[float]] = {}
        for e in self.events:
            if e.kind == "renew":
                found.setdefault(int(e.get("grant")), []).append(e.t)
        return {revision: tuple(times) for revision, times in found.items()}

    def lease_start(self, revision: int, before: float) -> float:
        """When the grant's lease last started before a time: its last keepalive etcd took
        before then, or the grant."""
        grant = self.grants[revision]
        return max((t for t in self.renewals.get(revision, ()) if t <= before), default=grant.t)

    def lease_seconds(self) -> list[float]:
        """How long each revoked lease lived, from the grant (or its last keepalive) to
        etcd's revocation."""
        return [
            g.ended - self.lease_start(g.revision, g.ended)
            for g in self.grants.values()
            if g.ended is not None and g.ended_by == "revoked"
        ]


def etcd_order_key(event: Event, kind: str) -> tuple[int, int] | None:
    """Where etcd ordered an event: (revision, 0) for a change, (revision, 1) for a read at it."""
    if kind == "grant":  # etcd's lock API grants when the keys queued before are gone
        return (int(event.get("order_revision") or event["revision"]), 0)
    if kind == "revoked":
        return (int(event["revision"]), 0)
    if kind == "release":
        if event.get("ordered") is False:  # a service that gives it no place in its order
            return None
        return (int(event["etcd_revision"]), 0 if event.get("deleted") else 1)
    if kind == "deliver" and event.get("etcd_revision") is not None:
        return (int(event["etcd_revision"]), 1 if event.get("etcd_after") else 0)
    return None


def _merge_lock_events(events: Sequence[Event], settings: Settings) -> list[tuple[Event, str]]:
    """Join each grant and each deletion seen twice; a deletion nobody asked for is `revoked`."""
    puts = {int(e["revision"]): e for e in events if e["kind"] == "lock-put"}
    deletes = {int(e["revision"]): e for e in events if e["kind"] == "lock-delete"}
    merged: list[tuple[Event, str]] = []
    granted: dict[int, int] = {}
    seen_puts: set[int] = set()
    for event in events:
        kind = event["kind"]
        if kind == "grant":
            revision = int(event["revision"])
            seen_puts.add(revision)
            put = puts.get(revision)
            t = min(event["t"], put["t"]) if put else event["t"]
            granted[revision] = int(event["worker"])
            merged.append(({**event, "t": t}, "grant"))
        elif kind == "release" and event.get("deleted"):
            gone = deletes.pop(int(event["etcd_revision"]), None)
            t = min(event["t"], gone["t"]) if gone else event["t"]
            merged.append(({**event, "t": t}, "release"))
        elif kind not in ("lock-put", "lock-delete"):
            merged.append((event, kind))
    for revision, put in puts.items():
        if revision not in seen_puts and put.get("create_revision") == revision:
            worker = int(str(put.get("holder", "W0"))[1:] or 0)
            granted[revision] = worker
            merged.append((_grant_seen_by_etcd(put, worker, settings), "grant"))
    released = {int(e.get("grant", 0)) for e in events if e["kind"] == "release"}
    releasing = {
        int(e.get("grant", 0)): e
        for e in events
        if e["kind"] == "invoke" and e.get("op") == "release"
    }
    for gone in deletes.values():
        grant = int(gone.get("grant", 0))
        asked = releasing.get(grant)
        if asked is not None and grant not in released and asked["t"] <= gone["t"]:
            merged.append((_release_seen_by_etcd(gone, asked), "release"))
            continue
        merged.append(
            (
                {**gone, "kind": "revoked", "grant": grant, "worker": granted.get(grant, 0)},
                "revoked",
            )
        )
    return merged


def _release_seen_by_etcd(gone: Event, asked: Event) -> Event:
    """A release whose worker asked for it but was stopped before it recorded the answer:
    the watch saw its key deleted, so the release took effect."""
    return {
        "t": gone["t"],
        "source": "etcd",
        "kind": "release",
        "worker": asked.get("worker", 0),
        "grant": int(gone.get("grant", 0)),
        "deleted": True,
        "etcd_revision": int(gone["revision"]),
        "unanswered": True,
    }


def _grant_seen_by_etcd(put: Event, worker: int, settings: Settings) -> Event:
    """A grant that only the service's observer saw (its worker never heard the answer):
    its token is the one the observer's record holds for the run's token source."""
    token = recorded_token(put, settings.lock_service, settings.token)
    return {
        "t": put["t"],
        "source": "etcd",
        "kind": "grant",
        "worker": worker,
        "revision": int(put["revision"]),
        "version": int(put.get("version", 1)),
        "lease": int(put.get("lease", 0)),
        "token": token if token is not None else 0,
        **{name: put[name] for name in ("order_revision", "node", "lock_value") if name in put},
        "unanswered": True,
    }


def timeline(history: History) -> Timeline:
    """The history's events merged into one order (see the module docstring)."""
    merged = _merge_lock_events(history.events, history.settings)
    keyed = sorted(
        (key, position)
        for position, (event, kind) in enumerate(merged)
        if (key := etcd_order_key(event, kind))
    )
    times = [event["t"] for event, _ in merged]
    for (_, earlier), (_, later) in zip(reversed(keyed[:-1]), reversed(keyed[1:]), strict=True):
        times[earlier] = min(times[earlier], times[later])
    big = (2**63, 0)
    order = sorted(
        range(len(merged)),
        key=lambda i: (times[i], etcd_order_key(merged[i][0], merged[i][1]) or big, i),
    )
    happenings = tuple(
        Happening(
            index,
            round(times[i], 6),
            merged[i][1],
            int(merged[i][0].get("worker") or 0),
            {k: v for k, v in merged[i][0].items() if k not in ("t", "kind", "worker")},
            round(merged[i][0]["t"], 6),
        )
        for index, i in enumerate(order)
    )
    return Timeline(history, happenings)
