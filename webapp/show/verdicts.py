"""Verdicts in words: one cell per property, rows per design, and a with-versus-without diff."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from model.check.explorer import Exploration
from model.properties import BY_NAME, PROPERTY_NAMES
from model.verdicts import Status, never_exercised_notes
from webapp.show.style import STATUS_GLYPHS, verdict_label


def cell(exploration: Exploration, name: str) -> str:
    """`✔ holds`, `✘ violated (n steps)`, `? unknown (not finished)` or `○ holds vacuously,
    never exercised: <why>` (the design's own reason, `Property.vacuity`)."""
    verdict = exploration.verdicts.get(name)
    if verdict is None:
        return "—"
    why = BY_NAME[name].vacuity(exploration.design) if verdict.status is Status.VACUOUS else ""
    return verdict_label(exploration.status(name), verdict.shortest, why)


def property_rows(
    explorations: Mapping[str, Exploration], properties: Sequence[str] = PROPERTY_NAMES
) -> list[dict[str, str]]:
    """A table row per property (its name and title), a verdict cell per named design: the
    shape for one or two designs, where every cell has room to say why it holds vacuously."""
    return [
        {"property": f"{name}, {BY_NAME[name].title}"}
        | {label: cell(exploration, name) for label, exploration in explorations.items()}
        for name in properties
    ]


def never_exercised(explorations: Mapping[str, Exploration]) -> list[str]:
    """Why each vacuous cell of a table of designs was never exercised, one line per reason."""
    return never_exercised_notes(
        [(label, found.design, found.verdicts) for label, found in explorations.items()]
    )


def verdict_rows(
    explorations: Mapping[str, Exploration], properties: Sequence[str] = PROPERTY_NAMES
) -> list[dict[str, str]]:
    """A table row per named design: its verdict cells, states explored and completeness."""
    rows = []
    for label, exploration in explorations.items():
        row = {"design": label}
        row.update({name: cell(exploration, name) for name in properties})
        row["states"] = f"{exploration.states:,}"
        row["complete"] = "yes" if exploration.complete else f"no ({exploration.stopped_by})"
        rows.append(row)
    return rows


def violated(exploration: Exploration) -> tuple[str, ...]:
    """Names of the properties the exploration found violated."""
    return tuple(name for name, v in exploration.verdicts.items() if v.violated)


@dataclass(frozen=True)
class Difference:
    """What changes from design A to design B at the same bounds."""

    disappear: tuple[str, ...]
    appear: tuple[str, ...]
    remain: tuple[str, ...]
    states_a: int
    states_b: int
    complete: bool
    vacuous_a: tuple[str, ...] = ()
    """Properties A never exercises (they hold only vacuously there)."""
    vacuous_b: tuple[str, ...] = ()
    """Properties B never exercises: a violation that disappears into one of these is not
    fixed, only no longer put to the test."""

    @property
    def untested_not_fixed(self) -> tuple[str, ...]:
        """Violations of A that disappear in B only because B never exercises them."""
        return tuple(name for name in self.disappear if name in self.vacuous_b)

    @property
    def state_change(self) -> str:
        """The change in reachable states, in words with a sign and a percentage."""
        delta = self.states_b - self.states_a
        percent = f" ({delta / self.states_a:+.0%})" if self.states_a else ""
        return f"{self.states_a:,} → {self.states_b:,} states: {delta:+,}{percent}"


def difference(a: Exploration, b: Exploration) -> Difference:
    """Violations that disappear, appear and remain going from A to B, and the state counts."""
    va, vb = set(violated(a)), set(violated(b))
    order = list(PROPERTY_NAMES)
    return Difference(
        disappear=tuple(n for n in order if n in va - vb),
        appear=tuple(n for n in order if n in vb - va),
        remain=tuple(n for n in order if n in va & vb),
        states_a=a.states,
        states_b=b.states,
        complete=a.complete and b.complete,
        vacuous_a=_vacuous(a),
        vacuous_b=_vacuous(b),
    )


def _vacuous(exploration: Exploration) -> tuple[str, ...]:
    """The properties an exploration found never exercised, in P1..P6 order."""
    return tuple(n for n, v in exploration.verdicts.items() if v.status is Status.VACUOUS)


def compact_cell(exploration: Exploration, name: str) -> str:
    """A short cell for wide tables: `✘ 8`, `✔`, `○` (vacuous) or `?` (unknown)."""
    verdict = exploration.verdicts[name]
    glyph = STATUS_GLYPHS[verdict.status]
    return f"{glyph} {verdict.shortest}" if verdict.violated else glyph
