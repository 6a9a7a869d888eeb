"""The Class page's words: what a class is and keeps, the creation form, and the teacher's
dashboard (its links, figures and the students' predictions and wrong answers)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from classroom.grading import Verdicts
from model.verdicts import Status
from webapp.show.style import STATUS_GLYPHS

TITLE: Final = "Class"


def intro(most_classes: int) -> str:
    """What the page is for, and how many classes one server holds at once."""
    return (
        "Run the exercises with a class: create a class on a set, give the students their "
        "link (no account needed, a nickname if they like), and follow their answers live. "
        f"One server holds at most {most_classes} classes at once."
    )


NO_TEACHER_KEY: Final = (
    "This link has no teacher's key, so nothing of the class is shown. Students: "
    "open the student link your teacher gave you (it goes to the Exercises page)."
)
"""What a class link without the key shows instead of the class."""

# ----- creating a class ---------------------------------------------------------------------

CREATE_TITLE: Final = "Create a class"
CLASS_NAME: Final = "Name of the class"
"""The label of the class's name field."""
CHECKING_SET: Final = "The model checks that every exercise can be solved…"
"""The spinner while the model checks a set before a class is made on it."""
SET_NOT_CHECKED_YET: Final = (
    "The model has not finished checking this set yet: try again in a moment."
)


def class_terms(hours: int, most_students: int, most_answers: int, folder: str) -> str:
    """How long a class lasts, how many students and answers it keeps, and where (`folder`
    as the page escaped it)."""
    return (
        f"A class lasts **{hours} hours**; then it and every answer in it are deleted. Up to "
        f"{most_students} students can join, each with up to {most_answers} answers "
        f"kept. Answers are kept in {folder} on this server."
    )


def set_cannot_be_used(name: str, problems: Sequence[str]) -> str:
    """Every problem of a set a class cannot be made on, as a Markdown list (`name` and the
    problems as the page escaped them)."""
    return f"**{name} cannot be used:**\n\n" + "\n".join(f"- {p}" for p in problems)


# ----- the dashboard ------------------------------------------------------------------------

CHECKING_EXERCISE: Final = "the model check of this exercise"
"""The work revealing an exercise's answer waits for, as the busy message names it."""
PREDICTED: Final = "**What the class predicted** (each student's first answer)"


def revealed(name: str, truth: Verdicts) -> str:
    """A property's answer once revealed, in the verdicts' own words: it holds, it is
    violated, or it holds vacuously (never put to the test; the caption says why)."""
    if name in truth.vacuous:
        return f"{STATUS_GLYPHS[Status.VACUOUS]} holds vacuously"
    if name in truth.holds:
        return f"{STATUS_GLYPHS[Status.HOLDS]} holds"
    return f"{STATUS_GLYPHS[Status.VIOLATED]} violated"


WRONG_ANSWERS: Final = "**Most common wrong answers**"
NO_WRONG_ANSWER: Final = "No wrong answer yet."
"""Shown under an exercise while no student has given a wrong answer."""
LOOK_AT_ONE: Final = "Look at one exercise"
TO_THIS_EXERCISE: Final = (
    "The students' link, opened on this exercise (share it to move the class on):"
)
"""The caption over a link that takes the students to the chosen exercise."""
"""The label of the menu of the set's exercises."""
DOWNLOAD_ANSWERS: Final = "Download every answer (CSV)"
FOR_STUDENTS: Final = "**For the students** (share it):"
FOR_TEACHER: Final = "**For you only** (it holds the class's key; keep it to come back):"
SET_STILL_CHECKED: Final = "The model is still checking the class's set: look again in a moment."


def nothing_shown(problem: str) -> str:
    """Why a dashboard link opens nothing of its class (`problem` as the page escaped it)."""
    return f"Nothing of this class can be shown: {problem}."


def class_ends(set_name: str, ends: str) -> str:
    """The class's set, when it ends, and that the figures follow the answers live (both
    names as the page escaped them)."""
    return (
        f"Set: {set_name}. The class ends at {ends}, "
        "and its answers are deleted then. The figures below follow the answers as students "
        "give them."
    )
