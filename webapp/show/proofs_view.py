"""The prover's report made readable: one row per property, each invariant one conjunct a line.

Rows hold only text and actions, so the page can cache them and a proof job can send them
back from its own process. Nothing here imports Streamlit, nor z3 (the prover's types are
for annotations only), so the web server never loads z3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from model.design import Design
from model.properties import BY_NAME
from model.rules import Action
from model.verdicts import Status
from webapp.show.style import verdict_label

if TYPE_CHECKING:
    from proofs.report import ProofReport, PropertyResult

METHOD_WORDS: Final = {
    "induction": "induction (a fact no step can break)",
    "k-induction": "induction over k steps, within the bounds",
    "bmc": "searching every run up to a length",
    "spacer": "Spacer (z3 found the invariant itself)",
}
"""Each proof method in words a student can follow; the code name is the key."""

SUMMARIES: Final = {
    Status.PROVED: "Proved for runs of every length (any horizon, any number of grants), "
    "with these workers, lease and writes.",
    Status.VIOLATED: "Broken: z3 found a run that breaks it, and no shorter one exists.",
    Status.HOLDS: "Holds in every run within these bounds; z3 could not prove it for longer runs.",
    Status.VACUOUS: "Never put to the test: nothing this property checks ever happens in this "
    "design, so its holding says nothing.",
    Status.UNKNOWN: "Not settled: z3 ran out of its time or search budget before it could say.",
}

CONJUNCTION: Final = re.compile(r" ∧ |; and ")
"""Where the prover's invariant text joins its conjuncts."""


@dataclass(frozen=True)
class ProofRow:
    """One property's proof outcome, as text and actions only (cacheable, no z3 objects)."""

    prop: str
    title: str
    status: Status
    method: str
    shortest: int | None
    invariant: tuple[str, ...]
    cti: str
    reason: str
    actions: tuple[Action, ...]
    never_exercised: str = ""
    """Why the property is never put to the test in this design (when it is vacuous)."""

    @property
    def summary(self) -> str:
        """The verdict in one plain sentence."""
        if self.status is Status.VIOLATED and self.shortest is not None:
            return f"Broken: the shortest run that breaks it has {self.shortest} steps (below)."
        if self.status is Status.VACUOUS and self.never_exercised:
            return (
                f"Never put to the test: {self.never_exercised}. Nothing this property checks "
                "ever happens in this design, so its holding says nothing."
            )
        return SUMMARIES[self.status]

    @property
    def status_word(self) -> str:
        """The status with its glyph, e.g. `✔ proved` (colour is never the only cue)."""
        return verdict_label(self.status, self.shortest, self.never_exercised)


def invariant_lines(invariant: str | None) -> tuple[str, ...]:
    """An invariant's text split into one conjunct per line."""
    if not invariant:
        return ()
    return tuple(part.strip() for part in CONJUNCTION.split(invariant) if part.strip())


def row_of(result: PropertyResult, design: Design | None = None) -> ProofRow:
    """One property's result as a row (with the design, a vacuous one says why)."""
    vacuous = result.status is Status.VACUOUS and design is not None
    return ProofRow(
        prop=result.prop,
        title=BY_NAME[result.prop].title,
        status=result.status,
        method=result.method,
        shortest=result.shortest,
        invariant=invariant_lines(result.invariant),
        cti=result.cti or "",
        reason=result.reason or "",
        actions=tuple(result.actions),
        never_exercised=BY_NAME[result.prop].vacuity(design) if vacuous and design else "",
    )


def rows_of(report: ProofReport) -> tuple[ProofRow, ...]:
    """Every property of a report as a row, in P1..P6 order."""
    return tuple(row_of(result, report.design) for result in report.properties.values())
