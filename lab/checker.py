"""The properties read off a history alone, without the model: P1, P2, P3, P5 and P6.

Each is checked on every write the store accepted, with what had happened before it in
the merged order, stated as the model states it so the two can be compared step by step:

- P1 monotonic acceptance: the write's token is not lower than any earlier accepted
  write's (the highest accepted before it);
- P2 no write outside its lease: the writer's grant is the lock service's newest grant and
  its lock had not ended yet (its lease run out, or released);
- P3 grant order: the writer's grant is not older than the newest grant any earlier
  accepted write came from;
- P5 no lost update: in read-modify-write, the version the worker read is still the
  store's version when its write lands;
- P6 lock freed after a crash: when the nemesis kills (SIGKILL) the worker whose key is the
  lock key, the service deletes that key within the lease: the TTL plus the run's lease
  allowance (`lab.allowances`) after the kill. A run that goes on past that
  deadline with the key still there violates it; a run that ends before it decides nothing
  (as the model's P6 near its horizon). Each crash is reported with the time from the kill
  to the next grant, or how long the run waited in vain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from lab.allowances import allowances
from lab.history import Happening, Timeline
from lab.lock_table import SERVICES

CHECKED: Final = ("P1", "P2", "P3", "P5", "P6")
TITLES: Final = {
    "P1": "monotonic acceptance",
    "P2": "no write outside its lease",
    "P3": "grant order",
    "P5": "no lost update",
    "P6": "lock freed after a crash",
}


@dataclass(frozen=True)
class Violation:
    """One accepted write that breaks a property, and why in words."""

    prop: str
    event: int
    t: float
    reason: str


@dataclass(frozen=True)
class PropertyVerdict:
    """A property over the whole history: each violating write."""

    name: str
    violations: tuple[Violation, ...]
    exercised: int = 0
    """How many events put it to the test (an accepted write; for P5 one computed from a
    read; for P6 a killed holder): with none, it holds only vacuously."""

    @property
    def vacuous(self) -> bool:
        """Whether nothing in the history ever put the property to the test."""
        return not self.exercised

    @property
    def violated(self) -> bool:
        """Whether any accepted write breaks it."""
        return bool(self.violations)

    @property
    def count(self) -> int:
        """How many accepted writes break it."""
        return len(self.violations)


@dataclass(frozen=True)
class Counts:
    """Write decisions in a history."""

    operations: int
    accepted: int
    rejected: int
    reads: int


@dataclass(frozen=True)
class CrashOutcome:
    """A holder killed by the nemesis, and what became of its lock."""

    worker: int
    killed: float
    grant: int
    """The create revision of the lock key the worker held when it was killed."""
    deadline: float
    """The latest time its lease allows the key to be deleted at."""
    freed: float | None
    """When etcd deleted the key (None: it was still there when the run ended)."""
    next_grant: float | None
    next_worker: int
    ended: float
    """When the run's history ends."""

    @property
    def violated(self) -> bool:
        """P6 broken: the key outlived the deadline while the run watched."""
        if self.freed is not None:
            return self.freed > self.deadline
        return self.ended > self.deadline

    def sentence(self) -> str:
        """The outcome in words, with the times measured."""
        killed = f"W{self.worker} was killed at {self.killed:.3f} s holding grant {self.grant}"
        if self.next_grant is not None:
            waited = self.next_grant - self.killed
            deleted = (self.freed or self.next_grant) - self.killed
            return (
                f"{killed}; W{self.next_worker} got the lock {waited:.3f} s after the kill "
                f"(its key was deleted {deleted:.3f} s after the kill)"
            )
        if self.freed is not None:
            return f"{killed}; its key was deleted {self.freed - self.killed:.3f} s after the kill"
        return (
            f"{killed}; nobody got the lock in the {self.ended - self.killed:.3f} s the run "
            "waited after the kill: its key was never deleted"
        )

    def to_dict(self) -> dict[str, object]:
        """JSON form, with the measured kill-to-grant time."""
        return {
            "worker": self.worker,
            "killed": self.killed,
            "grant": self.grant,
            "deadline": round(self.deadline, 6),
            "freed": self.freed,
            "next_grant": self.next_grant,
            "next_worker": self.next_worker or None,
            "kill_to_grant_seconds": (
                round(self.next_grant - self.killed, 6) if self.next_grant is not None else None
            ),
            "waited_seconds": round(self.ended - self.killed, 6),
            "violated": self.violated,
        }


def crash_outcomes(line: Timeline, upto: int | None = None) -> tuple[CrashOutcome, ...]:
    """Every kill of a worker whose key was the lock key (`crash` runner events), with
    what became of the key, over the first `upto` events."""
    events = line.events[:upto]
    allowance = allowances(line).lease_end
    ttl = float(line.history.settings.ttl)
    ended = events[-1].t if events else 0.0
    found = []
    live: dict[int, Happening] = {}
    for position, event in enumerate(events):
        if event.kind == "grant":
            live = {int(event.get("revision")): event}
        elif event.kind == "revoked" or (event.kind == "release" and event.get("deleted")):
            live.pop(int(event.get("grant")), None)
        elif event.kind == "crash":
            held = [g for g in live.values() if g.worker == event.worker]
            if not held:
                continue
            revision = int(held[0].get("revision"))
            freed = next(
                (
                    e.t
                    for e in events[position:]
                    if e.kind in ("revoked", "release") and int(e.get("grant", 0)) == revision
                ),
                None,
            )
            after = next((e for e in events[position:] if e.kind == "grant"), None)
            found.append(
                CrashOutcome(
                    event.worker,
                    event.t,
                    revision,
                    event.t + ttl + allowance,
                    freed,
                    after.t if after else None,
                    after.worker if after else 0,
                    ended,
                )
            )
    return tuple(found)


def _crash_violations(line: Timeline, upto: int | None) -> list[Violation]:
    """P6: one violation per killed holder whose key outlived its lease."""
    return [
        Violation(
            "P6",
            next(e.index for e in line.events if e.kind == "crash" and e.t == crash.killed),
            crash.killed,
            f"{crash.sentence()} (a lease would have freed it within "
            f"{crash.deadline - crash.killed:.3f} s of the kill)",
        )
        for crash in crash_outcomes(line, upto)
        if crash.violated
    ]


def count_writes(events: Sequence[Happening]) -> Counts:
    """How many writes the store decided, accepted and rejected, and how many reads it served."""
    decided = [e for e in events if e.is_write_decision]
    accepted = sum(1 for e in decided if e.is_write_accepted)
    reads = sum(1 for e in events if e.kind == "deliver" and e.get("op") == "read")
    return Counts(len(decided), accepted, len(decided) - accepted, reads)


def check_properties(
    line: Timeline, upto: int | None = None, against_last: bool = False
) -> dict[str, PropertyVerdict]:
    """P1, P2, P3, P5 and P6 over the first `upto` events of the timeline (all by default).

    P1 and P3 count against the highest token and the newest grant accepted before, as the
    properties' sentences say; `against_last` counts them against the last accepted write
    instead, as the model's ghost variables `last` and `lastg` do. The two agree on whether
    a property is violated (they differ only once a write has already broken it), not
    always on how many writes break it, so the model's counts are compared with the latter."""
    found: dict[str, list[Violation]] = {name: [] for name in CHECKED}
    rank, grants = line.grant_rank, line.grants
    newest: int | None = None
    ended: dict[int, str] = {}
    highest: Happening | None = None
    """The accepted write with the highest token so far (the first of equals)."""
    newest_write: Happening | None = None
    """The accepted write from the newest grant so far."""
    lapsed = SERVICES[line.history.settings.lock_service].lapsed
    for event in line.events[:upto]:
        if event.kind == "grant":
            newest = int(event.get("revision"))
        elif event.kind == "revoked":
            ended[int(event.get("grant"))] = f"{lapsed} at {event.t:.3f} s"
        elif event.kind == "release" and event.get("deleted"):
            ended[int(event.get("grant"))] = f"it was released at {event.t:.3f} s"
        if not event.is_write_accepted:
            continue
        token, grant = int(event.get("token")), int(event.get("grant"))
        who = f"W{event.worker}'s write at {event.t:.3f} s"
        if highest is not None and token < int(highest.get("token")):
            found["P1"].append(
                Violation(
                    "P1",
                    event.index,
                    event.t,
                    f"{who} carries token {token}, lower than token {highest.get('token')} "
                    f"accepted before (W{highest.worker} at {highest.t:.3f} s)",
                )
            )
        if grant != newest or grant in ended:
            if grant in ended:
                why = ended[grant]
            else:
                later = grants.get(newest or 0)
                why = f"W{later.worker if later else '?'} was granted the lock after it"
            found["P2"].append(
                Violation("P2", event.index, event.t, f"{who} lands outside its lease: {why}")
            )
        newest_rank = rank.get(int(newest_write.get("grant")), 0) if newest_write else 0
        if newest_write is not None and rank.get(grant, 0) < newest_rank:
            found["P3"].append(
                Violation(
                    "P3",
                    event.index,
                    event.t,
                    f"{who} comes from grant #{rank.get(grant)}, older than grant "
                    f"#{newest_rank} whose write was accepted before",
                )
            )
        read = event.get("read_version")
        if read is not None and int(read) != int(event.get("version_before", read)):
            found["P5"].append(
                Violation(
                    "P5",
                    event.index,
                    event.t,
                    f"{who} was computed from version {read}, but the data was at version "
                    f"{event.get('version_before')}: the update in between is lost",
                )
            )
        if against_last or highest is None or token > int(highest.get("token")):
            highest = event
        if against_last or newest_write is None or rank.get(grant, 0) > newest_rank:
            newest_write = event
    found["P6"] = _crash_violations(line, upto)
    accepted = [e for e in line.events[:upto] if e.is_write_accepted]
    tested = {
        "P1": len(accepted),
        "P2": len(accepted),
        "P3": len(accepted),
        "P5": sum(1 for e in accepted if e.get("read_version") is not None),
        "P6": len(crash_outcomes(line, upto)),
    }
    return {name: PropertyVerdict(name, tuple(found[name]), tested[name]) for name in CHECKED}
