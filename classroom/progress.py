"""A student's progress through a set: attempts, what is solved, and its summaries.

The summary rows, Markdown and JSON a student or teacher downloads are made here from the
attempts. Nothing here imports Streamlit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from classroom.data import Exercise, ExerciseSet
from model.design import BOUND_LIMITS


@dataclass(frozen=True)
class Attempt:
    """One answer a student gave, and its verdict."""

    exercise_id: str
    answer: str
    correct: bool
    message: str


@dataclass(frozen=True)
class Progress:
    """A session's answers, oldest first (a new value per answer; never mutated)."""

    attempts: tuple[Attempt, ...] = ()

    def record(self, attempt: Attempt) -> Progress:
        """The progress with one more answer."""
        return Progress((*self.attempts, attempt))

    def of(self, exercise_id: str) -> tuple[Attempt, ...]:
        """The answers given to one exercise."""
        return tuple(a for a in self.attempts if a.exercise_id == exercise_id)

    def solved(self, exercise_id: str) -> bool:
        """Whether some answer to the exercise was right."""
        return any(a.correct for a in self.of(exercise_id))

    def wrong(self, exercise_id: str) -> int:
        """How many wrong answers were given before the first right one."""
        count = 0
        for attempt in self.of(exercise_id):
            if attempt.correct:
                break
            count += 1
        return count

    def hints(self, exercise: Exercise) -> tuple[str, ...]:
        """The hints earned so far: one more after each wrong answer."""
        return exercise.hints[: self.wrong(exercise.id)]


def summary_rows(exercise_set: ExerciseSet, progress: Progress) -> list[dict[str, Any]]:
    """One row per exercise: id, title, kind, solved, attempts, hints used, last answer."""
    rows = []
    for exercise in exercise_set.exercises:
        attempts = progress.of(exercise.id)
        rows.append(
            {
                "id": exercise.id,
                "title": exercise.title,
                "kind": exercise.kind,
                "solved": progress.solved(exercise.id),
                "attempts": len(attempts),
                "hints_used": len(progress.hints(exercise)),
                "last_answer": attempts[-1].answer if attempts else "",
            }
        )
    return rows


def summary_markdown(exercise_set: ExerciseSet, progress: Progress, student: str = "") -> str:
    """A student's summary as markdown: a table of exercises and every answer given."""
    rows = summary_rows(exercise_set, progress)
    solved = sum(1 for r in rows if r["solved"])
    lines = [
        f"# {exercise_set.title}: summary" + (f" for {student}" if student else ""),
        "",
        f"Solved {solved} of {len(rows)} exercises.",
        "",
        "| exercise | kind | solved | attempts | hints used |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        mark = "yes" if row["solved"] else "no"
        lines.append(
            f"| {_cell(row['title'])} | {row['kind']} | {mark} | {row['attempts']} | "
            f"{row['hints_used']} |"
        )
    lines += ["", "## Answers", ""]
    for attempt in progress.attempts:
        verdict = "right" if attempt.correct else "wrong"
        lines.append(f"- `{attempt.exercise_id}` ({verdict}): {_cell(attempt.answer)}")
    return "\n".join(lines) + "\n"


def summary_json(exercise_set: ExerciseSet, progress: Progress, student: str = "") -> str:
    """The same summary as JSON, for a teacher's scripts."""
    return json.dumps(
        {
            "set": exercise_set.title,
            "student": student,
            "exercises": summary_rows(exercise_set, progress),
            "answers": [vars(a) for a in progress.attempts],
        },
        indent=2,
        ensure_ascii=False,
    )


def _cell(text: str) -> str:
    """Text made safe for one markdown table cell or list item (no pipes, no newlines)."""
    return text.replace("|", "/").replace("\n", " ")[:300]


def bound_help() -> str:
    """The allowed range of each bound, for teachers writing a set."""
    return ", ".join(f"{name} {low}..{high}" for name, (low, high) in BOUND_LIMITS.items())
