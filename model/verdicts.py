"""One verdict vocabulary for every engine: the explorer, the prover, the CLI, JSON and pages.

A property's outcome is one `Status`; a `PropertyVerdict` adds the evidence (the shortest
counterexample's length and actions). `holds` is only said of a check that finished, and
`vacuous` is kept apart from it: a property nothing in the run ever spoke of has been
checked against nothing (docs/model.md, "Verdicts").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

from model.properties import BY_NAME
from model.rules import Action

if TYPE_CHECKING:
    from model.design import Design


class Status(StrEnum):
    """What an engine can say about a property."""

    HOLDS = "holds"
    """Checked on every reachable transition within the bounds, and never violated."""
    VIOLATED = "violated"
    """Some run breaks it; the verdict carries a shortest one."""
    UNKNOWN = "unknown"
    """The check stopped (a budget, a solver limit) before it could say."""
    VACUOUS = "vacuous"
    """No violation, but only because no transition it speaks of ever happens."""
    PROVED = "proved"
    """z3 proved it for every horizon and grant count, not just within the bounds."""

    @property
    def holds(self) -> bool | None:
        """True when nothing breaks it, False when something does, None when unknown."""
        if self is Status.VIOLATED:
            return False
        if self is Status.UNKNOWN:
            return None
        return True

    @property
    def word(self) -> str:
        """The status as a short phrase for people."""
        return _WORDS[self]


_WORDS = {
    Status.HOLDS: "holds",
    Status.VIOLATED: "violated",
    Status.UNKNOWN: "unknown (not finished)",
    Status.VACUOUS: "holds vacuously (never exercised)",
    Status.PROVED: "proved for every horizon",
}


@dataclass(frozen=True)
class PropertyVerdict:
    """A property's status, with a shortest counterexample when it is violated."""

    name: str
    status: Status
    shortest: int | None = None
    actions: tuple[Action, ...] | None = None

    @property
    def violated(self) -> bool:
        """Whether some run breaks the property."""
        return self.status is Status.VIOLATED

    @property
    def holds(self) -> bool | None:
        """True (holds, vacuous, proved), False (violated) or None (unknown)."""
        return self.status.holds

    def to_dict(self, design: Design | None = None) -> dict[str, Any]:
        """The verdict as JSON: status, holds (null when unknown) and shortest; given the
        design, a vacuous verdict also says why it was never exercised (`never_exercised`)."""
        found: dict[str, Any] = {
            "status": str(self.status),
            "holds": self.holds,
            "shortest": self.shortest,
        }
        if design is not None and self.status is Status.VACUOUS:
            found["never_exercised"] = BY_NAME[self.name].vacuity(design)
        return found


def exploration_status(violated: bool, complete: bool, exercised: bool) -> Status:
    """An explorer's status for a property from what the search saw.

    A violation found is final even in an incomplete run; otherwise an unfinished search
    knows nothing, and a finished one holds, or holds vacuously when no transition ever
    triggered the property.
    """
    if violated:
        return Status.VIOLATED
    if not complete:
        return Status.UNKNOWN
    return Status.HOLDS if exercised else Status.VACUOUS


VACUOUS_LEAD: Final = "holds vacuously, never exercised"
"""How every surface begins a vacuous verdict that names its reason: `holds vacuously,
never exercised: <why>`."""


def vacuous_words(name: str, design: Design) -> str:
    """`holds vacuously, never exercised: nothing in this design ever crashes`: the vacuous
    verdict with what was never exercised and why, read off the design (`Property.vacuity`)."""
    return f"{VACUOUS_LEAD}: {BY_NAME[name].vacuity(design)}"


def verdict_words(verdict: PropertyVerdict, design: Design) -> str:
    """A verdict in the one vocabulary every page and command speaks: `violated (shortest
    run: 5 steps)`, `holds`, `holds vacuously, never exercised: <why>`, `unknown (not
    finished)` or `proved for every horizon`."""
    if verdict.status is Status.VIOLATED and verdict.shortest:
        return f"violated (shortest run: {verdict.shortest} steps)"
    if verdict.status is Status.VACUOUS:
        return vacuous_words(verdict.name, design)
    return verdict.status.word


def never_exercised_notes(
    designs: Sequence[tuple[str, Design, Mapping[str, PropertyVerdict]]],
) -> list[str]:
    """One line per property and reason for a table of several designs, naming the rows
    whose verdict is vacuous: `P6 holds vacuously, never exercised in lease-only, fencing:
    nothing in this design ever crashes`. `designs` are (row label, design, verdicts)."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for label, design, found in designs:
        for name, verdict in found.items():
            if verdict.status is Status.VACUOUS:
                grouped.setdefault((name, BY_NAME[name].vacuity(design)), []).append(label)
    return [
        f"{name} {VACUOUS_LEAD} in {', '.join(labels)}: {reason}"
        for (name, reason), labels in sorted(grouped.items(), key=lambda item: item[0][0])
    ]


def vacuity_sentence(name: str, design: Design) -> str:
    """`P6 holds vacuously: nothing in this design ever crashes, so P6 is never put to the
    test.` The reason is the property's own, read off the design (`Property.vacuity`)."""
    reason = BY_NAME[name].vacuity(design)
    return f"{name} holds vacuously: {reason}, so {name} is never put to the test"
