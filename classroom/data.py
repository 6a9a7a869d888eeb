"""Classroom exercises as data: an exercise, a set of them, and what is wrong with a set file.

Plain frozen values made by `classroom.sets` (reading a set) and read by grading,
solvability and progress; nothing here explores, reads files or imports Streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from model.design import Bounds, Design
from model.options import BY_OPTION
from model.presets import matching

MAX_PROBLEM_CHARS: Final = 400


@dataclass(frozen=True)
class Exercise:
    """One exercise, validated: what to show, the design and bounds, what counts as right."""

    id: str
    kind: str
    title: str
    prompt: str
    design: Design
    design_name: str
    bounds: Bounds
    hints: tuple[str, ...] = ()
    prop: str = ""
    max_steps: int = 0
    options: tuple[str, ...] = ()
    keep: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ExerciseSet:
    """A titled list of exercises from one TOML file."""

    title: str
    description: str
    exercises: tuple[Exercise, ...]
    source: str = ""

    def by_id(self, exercise_id: str) -> Exercise | None:
        """The exercise with this id, if any."""
        return next((e for e in self.exercises if e.id == exercise_id), None)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a set file: where (line, field) and what to change."""

    line: int | None
    where: str
    message: str

    def text(self) -> str:
        """`line 12: exercise 3 ('x'), field 'max_steps': must be …` (at most 400 characters)."""
        place = f"line {self.line}: " if self.line else ""
        whole = f"{place}{self.where}: {self.message}"
        return whole if len(whole) <= MAX_PROBLEM_CHARS else whole[: MAX_PROBLEM_CHARS - 1] + "…"


class ExerciseSetError(ValueError):
    """A set file that cannot be used; `problems` lists each error with its line."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(p.text() for p in self.problems))

    def __reduce__(self) -> tuple[type[ExerciseSetError], tuple[tuple[Problem, ...]]]:
        """Pickle with the problems themselves (the pages cache refused sets too)."""
        return (ExerciseSetError, (self.problems,))


def design_name(design: Design) -> str:
    """A design for a sentence: its preset's name when it is one, else its options in words
    (plain text: feedback is shown as written, never as Markdown)."""
    preset = matching(design)
    return f"the preset {preset.name}" if preset else design.in_words()


def options_in_words(values: Mapping[str, Any]) -> str:
    """Option values in words: `What the resource checks: fencing token (≥); Reads carry the
    token too: yes` (`no change` for none)."""
    said = [
        f"{BY_OPTION[name].label}: {BY_OPTION[name].word(value)}" for name, value in values.items()
    ]
    return "; ".join(said) or "no change"


def changes_in_words(before: Design, after: Design, options: Sequence[str]) -> str:
    """What a fix changed, option by option in words (`no change` when it changed nothing)."""
    return options_in_words(
        {
            name: getattr(after, name)
            for name in options
            if getattr(before, name) != getattr(after, name)
        }
    )
