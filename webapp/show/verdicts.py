"""Verdicts in words: one cell per property, rows per design, and a with-versus-without diff."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from model.check.explorer import Exploration
from model.properties import PROPERTY_NAMES
from webapp.show.style import STATUS_GLYPHS, verdict_label


def cell(exploration: Exploration, name: str) -> str:
    """`✔ holds`, `✘ violated (n steps)`, `? unknown (not finished)` or `○ holds vacuously …`."""
    verdict = exploration.verdicts.get(name)
    if verdict is None:
        return "—"
    return verdict_label(exploration.status(name), verdict.shortest)


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

    @property
    def state_change(self) -> str:
        """The change in reachable states, in words with a sign and a percentage."""
        delta = self.states_b - self.states_a
        percent = f" ({delta / self.states_a:+.0%})" if self.states_a else ""
        return f"{self.states_a:,} → {self.states_b:,} states: {delta:+,}{percent}"


def difference(a: Exploration, b: Exploration) -> Difference:
    """Violations that disappear, appear and remain going from A to B, and the state counts."""
    va, vb = set(violated(a)), set(violated(b))
    order = [n for n in PROPERTY_NAMES]
    return Difference(
        disappear=tuple(n for n in order if n in va - vb),
        appear=tuple(n for n in order if n in vb - va),
        remain=tuple(n for n in order if n in va & vb),
        states_a=a.states,
        states_b=b.states,
        complete=a.complete and b.complete,
    )


def compact_cell(exploration: Exploration, name: str) -> str:
    """A short cell for wide tables: `✘ 8`, `✔`, `○` (vacuous) or `?` (unknown)."""
    verdict = exploration.verdicts[name]
    glyph = STATUS_GLYPHS[verdict.status]
    return f"{glyph} {verdict.shortest}" if verdict.violated else glyph
