"""Claims: what the product says about a design, as data that the explorer can check.

A sentence such as "a paused holder writes after its lease (P2 fails)" is stored as a
template and a list of claims, each a property, a status and the bounds where it is
true (with a violation's shortest length). The "(P2 fails)" is rendered from the claim,
and tests explore every claim's design at its bounds, so a lesson cannot drift from the
model. Shown at other bounds, a lesson says where its claims were checked (`lesson_caption`,
one sentence shared by the web pages and the command line).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from model.design import Bounds, Design
from model.properties import PROPERTY_NAMES
from model.verdicts import PropertyVerdict, Status

CLAIM_STATUSES: Final = (Status.HOLDS, Status.VIOLATED, Status.VACUOUS)
PLACEHOLDER: Final = re.compile(r"\{(P\d(?:,P\d)*)\}")
"""Where a lesson template shows claims: `{P2}` or `{P1,P3}`."""


@dataclass(frozen=True)
class Claim:
    """A property's status for one design at one bounds (with the shortest violation)."""

    prop: str
    status: Status
    bounds: Bounds
    shortest: int | None = None

    def __post_init__(self) -> None:
        if self.prop not in PROPERTY_NAMES or self.status not in CLAIM_STATUSES:
            raise ValueError(f"a claim is about P1..P6 and holds, violated or vacuous: {self}")
        if (self.status is Status.VIOLATED) != (self.shortest is not None):
            raise ValueError(f"a violation claim, and only one, has a shortest length: {self}")

    def matches(self, verdict: PropertyVerdict) -> bool:
        """Whether an explorer's verdict (at the claim's bounds) says exactly this."""
        return verdict.status is self.status and verdict.shortest == self.shortest

    @property
    def fails(self) -> bool:
        """Whether the claim is that the property is violated."""
        return self.status is Status.VIOLATED

    def to_dict(self, design: Design | None = None) -> dict[str, Any]:
        """The claim as JSON in the verdicts' own vocabulary: property, status (holds,
        violated, vacuous), holds, shortest, bounds; given the design, a vacuous claim also
        says why it is never exercised (`never_exercised`)."""
        verdict = PropertyVerdict(self.prop, self.status, self.shortest).to_dict(design)
        return {"property": self.prop, **verdict, "bounds": self.bounds.to_dict()}


def claims_at(bounds: Bounds, **verdicts: int | str) -> tuple[Claim, ...]:
    """Claims at one bounds: `P2=5` (violated, shortest 5), `P1="holds"`, `P5="vacuous"`."""
    found = []
    for prop, value in verdicts.items():
        if isinstance(value, int):
            found.append(Claim(prop, Status.VIOLATED, bounds, value))
        else:
            found.append(Claim(prop, Status(value), bounds))
    return tuple(found)


NOTE_VERBS: Final = {
    Status.VIOLATED: ("fails", "fail"),
    Status.HOLDS: ("holds", "hold"),
    Status.VACUOUS: ("holds vacuously", "hold vacuously"),
}
"""A note's verb for one property and for several, by their shared status."""


def note(names: Sequence[str], claims: Mapping[str, Claim]) -> str:
    """`(P2 fails)`, `(P1, P3 fail)`, `(P1 holds)` or `(P5 holds vacuously)` for properties
    with the same status: a property never exercised is never said simply to hold."""
    statuses = {claims[name].status for name in names}
    if len(statuses) != 1:
        raise ValueError(f"one note cannot mix properties of different verdicts: {names}")
    one, several = NOTE_VERBS[statuses.pop()]
    return f"({', '.join(names)} {one if len(names) == 1 else several})"


def render(template: str, claims: Sequence[Claim]) -> str:
    """A template with every `{P…}` replaced by the note its claims make."""
    by_name = {claim.prop: claim for claim in claims}
    return PLACEHOLDER.sub(lambda m: note(m.group(1).split(","), by_name), template)


CITATION: Final = re.compile(r"\{([a-z0-9-]+):(P\d(?:,P\d)*)\}")
"""Where a text cites another design's claims: `{fencing:P2}` or `{rmw-lease-aware:P2,P5}`."""


def render_citations(template: str, claims_of: Mapping[str, Sequence[Claim]]) -> str:
    """A text with every `{design:P…}` replaced by that design's note, e.g. `(P2 fails)`."""

    def cite(match: re.Match[str]) -> str:
        claims = {claim.prop: claim for claim in claims_of[match.group(1)]}
        return note(match.group(2).split(","), claims)

    return CITATION.sub(cite, template)


def citations(template: str) -> tuple[tuple[str, str], ...]:
    """The (design, property) pairs a text cites, in order."""
    return tuple(
        (name, prop) for name, group in CITATION.findall(template) for prop in group.split(",")
    )


def mentioned(template: str) -> tuple[str, ...]:
    """The properties a template shows, in order of first mention."""
    names = [name for group in PLACEHOLDER.findall(template) for name in group.split(",")]
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class Lesson:
    """A sentence about one design whose verdict notes come from claims."""

    design: Design
    template: str
    claims: tuple[Claim, ...]

    @property
    def text(self) -> str:
        """The sentence with its verdict notes."""
        return render(self.template, self.claims)

    @property
    def bounds(self) -> Bounds:
        """The bounds where the claims were checked (all claims share them)."""
        return self.claims[0].bounds

    def shown_claims(self) -> tuple[Claim, ...]:
        """The claims the sentence itself shows."""
        names = mentioned(self.template)
        return tuple(claim for claim in self.claims if claim.prop in names)

    def disagreements(self, verdicts: Mapping[str, PropertyVerdict]) -> tuple[str, ...]:
        """Properties the sentence shows whose verdict at other bounds says otherwise.

        Only the direction matters here (fails or not); a different shortest length at
        other bounds does not contradict the sentence.
        """
        return tuple(
            claim.prop
            for claim in self.shown_claims()
            if (verdicts[claim.prop].status is Status.VIOLATED) != claim.fails
            or verdicts[claim.prop].status is Status.UNKNOWN
        )


def lesson_caption(
    lesson: Lesson,
    bounds: Bounds,
    verdicts: Mapping[str, PropertyVerdict] | None,
    checker: str = "the exploration",
) -> str:
    """The lesson, with a note whenever the verdicts beside it do not show what it says.

    A lesson was checked at its claims' bounds; shown at other bounds it must not contradict
    the table beside it, so the note says which verdicts differ here, or which ones an
    unfinished check could not decide, and names the bounds where the lesson appears.
    `verdicts` are the verdicts at `bounds` (None before anything was checked); `checker`
    names what stopped early, e.g. "the exploration" or "z3".
    """
    if verdicts is None:
        if bounds == lesson.bounds:
            return lesson.text
        return (
            f"{lesson.text} (Verdicts checked at {lesson.bounds.in_words()}; run the explorer "
            "to see them at these bounds.)"
        )
    differing = lesson.disagreements(verdicts)
    if not differing:
        if bounds == lesson.bounds:
            return lesson.text
        return (
            f"{lesson.text} (The same verdicts hold at these bounds; checked at "
            f"{lesson.bounds.in_words()}.)"
        )
    unfinished = [name for name in differing if verdicts[name].status is Status.UNKNOWN]
    if unfinished:
        return (
            f"{lesson.text} At these bounds {checker} stopped before it could say "
            f"whether {', '.join(unfinished)} {'holds' if len(unfinished) == 1 else 'hold'}: "
            f"the lesson's verdicts were checked at {lesson.bounds.in_words()}."
        )
    words = ", ".join(f"{name} {verdicts[name].status.word}" for name in differing)
    return (
        f"{lesson.text} At these bounds the lesson does not show ({words}): it appears at "
        f"{lesson.bounds.in_words()}."
    )
