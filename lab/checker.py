"""The properties read off a history alone, without the model: P1, P2, P3 and P5.

Each is checked on every write the store accepted, with what had happened before it in
the merged order, stated as the model states it so the two can be compared step by step:

- P1 monotonic acceptance: the write's token is not lower than any earlier accepted
  write's (the highest accepted before it);
- P2 no write outside its lease: the writer's grant is etcd's newest grant and its key had
  not been deleted yet (revoked by etcd's sweep, or released);
- P3 grant order: the writer's grant is not older (lower create revision) than the newest
  grant any earlier accepted write came from;
- P5 no lost update: in read-modify-write, the version the worker read is still the
  store's version when its write lands.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from lab.history import Happening, Timeline

CHECKED: Final = ("P1", "P2", "P3", "P5")
TITLES: Final = {
    "P1": "monotonic acceptance",
    "P2": "no write outside its lease",
    "P3": "grant order",
    "P5": "no lost update",
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


def count_writes(events: Sequence[Happening]) -> Counts:
    """How many writes the store decided, accepted and rejected, and how many reads it served."""
    decided = [e for e in events if e.is_write_decision]
    accepted = sum(1 for e in decided if e.is_write_accepted)
    reads = sum(1 for e in events if e.kind == "deliver" and e.get("op") == "read")
    return Counts(len(decided), accepted, len(decided) - accepted, reads)


def check_properties(
    line: Timeline, upto: int | None = None, against_last: bool = False
) -> dict[str, PropertyVerdict]:
    """P1, P2, P3 and P5 over the first `upto` events of the timeline (all by default).

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
    for event in line.events[:upto]:
        if event.kind == "grant":
            newest = int(event.get("revision"))
        elif event.kind == "revoked":
            ended[int(event.get("grant"))] = f"etcd revoked its lease at {event.t:.3f} s"
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
    return {name: PropertyVerdict(name, tuple(found[name])) for name in CHECKED}
