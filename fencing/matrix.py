"""The verdict matrix: every preset explored at the same bounds, P1..P6 per row."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from model.check.explorer import DEFAULT_MAX_SECONDS, DEFAULT_MAX_STATES, Exploration, explore
from model.check.search import SearchOptions
from model.design import REFERENCE_BOUNDS, Bounds, DesignError
from model.presets import PRESETS_LIST, Preset
from model.properties import PROPERTY_NAMES


@dataclass(frozen=True)
class MatrixRow:
    """One preset's exploration at the matrix's bounds."""

    preset: Preset
    exploration: Exploration

    def cell(self, name: str) -> str:
        """The shortest violation's length, or the status: holds, vacuous, unknown."""
        verdict = self.exploration.verdicts[name]
        return str(verdict.shortest) if verdict.violated else str(verdict.status)


@dataclass(frozen=True)
class Matrix:
    """Presets x properties at one bounds."""

    bounds: Bounds
    rows: tuple[MatrixRow, ...]

    def to_dict(self) -> dict[str, object]:
        """The `fencing matrix --json` object."""
        return {
            "bounds": self.bounds.to_dict(),
            "rows": [
                {
                    "preset": row.preset.name,
                    "states": row.exploration.states,
                    "complete": row.exploration.complete,
                    "seconds": round(row.exploration.seconds, 4),
                    "properties": {name: _verdict_json(row, name) for name in PROPERTY_NAMES},
                }
                for row in self.rows
            ],
        }


def _verdict_json(row: MatrixRow, name: str) -> dict[str, object]:
    """One cell as JSON: status, holds (null when unknown) and shortest."""
    return row.exploration.verdicts[name].to_dict(row.exploration.design)


def verdict_matrix(
    bounds: Bounds = REFERENCE_BOUNDS,
    presets: Iterable[Preset] = PRESETS_LIST,
    *,
    max_states: int = DEFAULT_MAX_STATES,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    on_row: Callable[[MatrixRow], None] | None = None,
) -> Matrix:
    """Explore each preset at the bounds within one budget for the whole table.

    Each preset gets what the rows before it left of the states and seconds; a row that
    runs out reports its unfinished properties as unknown. `on_row` is told as each row
    finishes. A preset that cannot be explored at these bounds is named in the error.
    """
    rows = []
    started, states_left = time.perf_counter(), max_states
    for preset in presets:
        seconds_left = max_seconds - (time.perf_counter() - started)
        try:
            exploration = explore(
                preset.design,
                bounds,
                SearchOptions(max_states=max(1, states_left), max_seconds=max(0.001, seconds_left)),
            )
        except DesignError as error:
            raise DesignError(
                f"preset {preset.name} cannot be explored at these bounds: {error}"
            ) from None
        states_left -= exploration.states
        row = MatrixRow(preset, exploration)
        rows.append(row)
        if on_row:
            on_row(row)
    return Matrix(bounds, tuple(rows))
