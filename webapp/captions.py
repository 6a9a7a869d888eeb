"""Captions that state verdicts, rendered from claims and checked against what is on screen.

A preset's lesson was checked by the explorer at its claims' bounds. Shown at other
bounds it must not contradict the verdict table beside it: the caption then says which
verdicts differ here, or which ones an unfinished exploration could not decide, and names
the bounds where the lesson appears.
"""

from __future__ import annotations

from collections.abc import Mapping

from model.claims import Lesson
from model.design import Bounds
from model.verdicts import PropertyVerdict, Status


def lesson_caption(
    lesson: Lesson, bounds: Bounds, verdicts: Mapping[str, PropertyVerdict] | None
) -> str:
    """The lesson, with a note whenever the shown bounds are not the lesson's own.

    `verdicts` are the explorer's verdicts at `bounds` (None before anything was explored).
    """
    if bounds == lesson.bounds:
        return lesson.text
    where = f"checked at {lesson.bounds.in_words()}"
    if verdicts is None:
        return f"{lesson.text} (Verdicts {where}; run the explorer to see them at these bounds.)"
    differing = lesson.disagreements(verdicts)
    if not differing:
        return f"{lesson.text} (The same verdicts hold at these bounds; {where}.)"
    unfinished = [name for name in differing if verdicts[name].status is Status.UNKNOWN]
    if unfinished:
        return (
            f"{lesson.text} At these bounds the exploration stopped before it could say "
            f"whether {', '.join(unfinished)} {'holds' if len(unfinished) == 1 else 'hold'}: "
            f"the lesson's verdicts were {where}."
        )
    words = ", ".join(f"{name} {verdicts[name].status.word}" for name in differing)
    return (
        f"{lesson.text} At these bounds the lesson does not show ({words}): it appears at "
        f"{lesson.bounds.in_words()}."
    )
