"""The verdict matrix: every preset explored at the same bounds, P1..P5 per row."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from model.design import REFERENCE_BOUNDS, Bounds
from model.explorer import DEFAULT_MAX_SECONDS, DEFAULT_MAX_STATES, Exploration, explore
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
    return row.exploration.verdicts[name].to_dict()


def verdict_matrix(
    bounds: Bounds = REFERENCE_BOUNDS,
    presets: Iterable[Preset] = PRESETS_LIST,
    *,
    max_states: int = DEFAULT_MAX_STATES,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    on_row: Callable[[MatrixRow], None] | None = None,
) -> Matrix:
    """Explore each preset at the bounds; `on_row` is told as each row finishes."""
    rows = []
    for preset in presets:
        exploration = explore(preset.design, bounds, max_states=max_states, max_seconds=max_seconds)
        row = MatrixRow(preset, exploration)
        rows.append(row)
        if on_row:
            on_row(row)
    return Matrix(bounds, tuple(rows))
