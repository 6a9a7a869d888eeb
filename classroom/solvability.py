"""Whether an exercise can be solved at all, asked of the model before a set is offered.

A *break* needs a violation within its step allowance and a *fix* needs some allowed change
that works; a deadline bounds the whole check of a set. Nothing here imports Streamlit.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any, Final

from classroom.data import Exercise
from classroom.grading import (
    CHECK_MAX_SECONDS,
    Verdicts,
    known_verdicts,
    lost_properties,
    required_properties,
    verdicts,
)
from model.design import Bounds, Design, DesignError
from model.options import BY_OPTION, Kind, Option

MAX_FIX_CANDIDATES: Final = 200
"""Most designs tried when checking that a *fix* exercise has a fix."""


class OutOfBudget(Exception):
    """The deadline of a set's check came before the model finished checking an exercise."""


def verdicts_by(design: Design, bounds: Bounds, deadline: float | None) -> Verdicts:
    """The grading verdicts, given only the time left before the deadline (if any).

    Verdicts known already are given at once. Raises `OutOfBudget` when no time is left, or
    when the exploration stopped because the deadline came (not because the design is too
    large for the grading budget).
    """
    known = known_verdicts(design, bounds)
    if known is not None or deadline is None:
        return known or verdicts(design, bounds)
    left = deadline - time.perf_counter()
    if left <= 0:
        raise OutOfBudget
    found = verdicts(design, bounds, max_seconds=min(CHECK_MAX_SECONDS, left))
    if not found.complete and time.perf_counter() >= deadline:
        raise OutOfBudget
    return found


def unsolvable(exercise: Exercise, deadline: float | None = None) -> str | None:
    """Why no answer can be right, asked of the model at the exercise's bounds; None if one can.

    A *break* needs a violation within its step allowance; a *fix* needs its property broken
    today and some allowed change that makes it hold while keeping what must be kept. With a
    deadline (a `time.perf_counter()` value), `OutOfBudget` says the check did not finish.
    """
    found = verdicts_by(exercise.design, exercise.bounds, deadline)
    if not found.complete:
        return (
            f"the model cannot finish checking this design at these bounds ({found.stopped_by}): "
            "lower the bounds"
        )
    if exercise.kind == "break":
        shortest = found.shortest[exercise.prop]
        if exercise.prop in found.vacuous:
            return (
                f"{exercise.prop} is never put to the test in this design "
                f"({found.untested_because[exercise.prop]}), so no run can break it"
            )
        if shortest is None:
            return (
                f"{exercise.prop} holds in this design at these bounds, so there is no run "
                "that breaks it"
            )
        if shortest > exercise.max_steps:
            return (
                f"the shortest run that breaks {exercise.prop} has {shortest} steps, more "
                f"than max_steps = {exercise.max_steps}"
            )
    if exercise.kind == "fix":
        if exercise.prop in found.holds:
            return f"{exercise.prop} already holds in this design at these bounds: nothing to fix"
        if exercise.prop in found.vacuous:
            return (
                f"{exercise.prop} is never put to the test in this design "
                f"({found.untested_because[exercise.prop]}): nothing to fix"
            )
        return _no_fix(exercise, found, deadline)
    return None


def _no_fix(exercise: Exercise, original: Verdicts, deadline: float | None) -> str | None:
    """None when some allowed change is a fix; otherwise why none is."""
    required = required_properties(exercise, original)
    candidates = list(itertools.islice(candidate_designs(exercise), MAX_FIX_CANDIDATES + 1))
    if len(candidates) > MAX_FIX_CANDIDATES:
        return None  # too many combinations to try them all: assume the teacher knows one
    for design in candidates:
        found = verdicts_by(design, exercise.bounds, deadline)
        if found.complete and not lost_properties(exercise, original, found):
            return None
    return (
        f"no change of {', '.join(exercise.options)} makes {exercise.prop} hold while "
        f"keeping {', '.join(name for name in required if name != exercise.prop) or 'nothing'}"
    )


def candidate_designs(exercise: Exercise) -> Iterator[Design]:
    """Every valid design the student could reach by changing the allowed options."""
    choices = [_option_values(BY_OPTION[name]) for name in exercise.options]
    for values in itertools.product(*choices):
        try:
            design = exercise.design.with_changes(dict(zip(exercise.options, values, strict=True)))
            design.check_fits(exercise.bounds)
        except DesignError:
            continue
        if design != exercise.design:
            yield design


def _option_values(option: Option) -> tuple[Any, ...]:
    """Every value of a choice, count or flag option."""
    if option.kind is Kind.FLAG:
        return (False, True)
    if option.kind is Kind.COUNT:
        return tuple(range(option.low, option.high + 1))
    return option.values
