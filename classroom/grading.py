"""Grading an answer to an exercise: the model's verdicts on a design and the feedback.

A *predict* answer is compared with the explorer's verdicts, a *break* run is replayed, a
*fix* is explored; complete verdicts are kept for the process, so the set check and the
grading share them. Nothing here imports Streamlit.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from classroom.data import Exercise, design_name
from model.check.explorer import explore
from model.check.search import SearchOptions
from model.design import Bounds, Design, DesignError
from model.formats.trace import Trace, TraceError, replay
from model.options import BY_OPTION, Kind, Option
from model.properties import BY_NAME
from model.rules import Action
from model.verdicts import Status

CHECK_MAX_STATES: Final = 300_000
CHECK_MAX_SECONDS: Final = 10.0
"""Budget of one exploration that grades an answer."""


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer: right or wrong, and a message that says why."""

    correct: bool
    message: str


@dataclass(frozen=True)
class Verdicts:
    """What the explorer says about a design: which properties hold (put to the test),
    which are never put to the test (and why), and the shortest violations."""

    holds: tuple[str, ...]
    shortest: dict[str, int | None]
    complete: bool
    stopped_by: str | None
    vacuous: tuple[str, ...] = ()
    """Properties nothing in the design puts to the test: neither right nor wrong to tick."""
    untested_because: dict[str, str] = field(default_factory=dict)
    """For each vacuous property, the design's own reason it is never put to the test."""
    runs: dict[str, tuple[Action, ...]] = field(default_factory=dict)
    """For each violated property, its shortest violating run (to step through)."""

    @property
    def tested(self) -> tuple[str, ...]:
        """The properties some run puts to the test (they hold or fail for real)."""
        return tuple(name for name in self.shortest if name not in self.vacuous)

    def untested_sentence(self) -> str:
        """`P5 and P6 are never put to the test in this design (…), so they hold only
        vacuously.` ("" when every property is put to the test)."""
        if not self.vacuous:
            return ""
        names = self.vacuous
        one = len(names) == 1
        listed = names[0] if one else f"{', '.join(names[:-1])} and {names[-1]}"
        reasons = "; ".join(dict.fromkeys(self.untested_because[n] for n in names))
        return (
            f"{listed} {'is' if one else 'are'} never put to the test in this design "
            f"({reasons}), so {'it holds' if one else 'they hold'} only vacuously."
        )


MAX_KNOWN: Final = 512
"""Most complete verdicts kept for the process (the oldest is forgotten first)."""
_KNOWN: dict[tuple[Design, Bounds], Verdicts] = {}
_KNOWN_LOCK = threading.Lock()


def known_verdicts(design: Design, bounds: Bounds) -> Verdicts | None:
    """The verdicts of a complete exploration made earlier in this process, if any.

    A complete exploration's verdicts are facts of the design and bounds, whatever budget
    it had, so the set check and the grading share them; a stopped one is never kept.
    """
    with _KNOWN_LOCK:
        return _KNOWN.get((design, bounds))


def verdicts(design: Design, bounds: Bounds, max_seconds: float = CHECK_MAX_SECONDS) -> Verdicts:
    """Explore the design within the grading budget (complete verdicts are kept)."""
    known = known_verdicts(design, bounds)
    if known is not None:
        return known
    result = explore(
        design, bounds, SearchOptions(max_states=CHECK_MAX_STATES, max_seconds=max_seconds)
    )
    vacuous = tuple(n for n, v in result.verdicts.items() if v.status is Status.VACUOUS)
    found = Verdicts(
        holds=tuple(n for n, v in result.verdicts.items() if v.status is Status.HOLDS),
        shortest={name: v.shortest for name, v in result.verdicts.items()},
        complete=result.complete,
        stopped_by=result.stopped_by,
        vacuous=vacuous,
        untested_because={n: BY_NAME[n].vacuity(design) for n in vacuous},
        runs={n: tuple(v.actions) for n, v in result.verdicts.items() if v.actions},
    )
    if found.complete:
        with _KNOWN_LOCK:
            _KNOWN[(design, bounds)] = found
            while len(_KNOWN) > MAX_KNOWN:
                del _KNOWN[next(iter(_KNOWN))]
    return found


def _incomplete(found: Verdicts) -> Feedback:
    """The answer cannot be graded: the exploration ran out of budget."""
    return Feedback(
        False,
        "This answer cannot be graded: the model check stopped at its budget of "
        f"{CHECK_MAX_STATES:,} states and {CHECK_MAX_SECONDS:g} s ({found.stopped_by}) before "
        "it saw every run. Ask your teacher for smaller bounds.",
    )


def check_predict(exercise: Exercise, chosen: Iterable[str], found: Verdicts) -> Feedback:
    """Right when the chosen properties are exactly those the design keeps among the ones it
    puts to the test; a property it never puts to the test is its own answer (it holds only
    vacuously), so ticking it or not is never wrong, and the feedback says why."""
    if not found.complete:
        return _incomplete(found)
    tested = found.tested
    picked = set(chosen) & set(tested)
    truth = set(found.holds)
    aside = f" {found.untested_sentence()}" if found.vacuous else ""
    if picked == truth:
        kept = ", ".join(n for n in tested if n in truth) or "none of them"
        failing = [n for n in tested if n not in truth]
        fails = (
            f"; {', '.join(failing)} {'fails' if len(failing) == 1 else 'fail'}" if failing else ""
        )
        return Feedback(True, f"Right: the design keeps {kept}{fails}.{aside}")
    wrong = len(picked ^ truth)
    return Feedback(
        False,
        f"Not quite: {wrong} of the {len(tested)} properties this design puts to the test "
        f"{'is' if wrong == 1 else 'are'} misjudged. Picture the runs the scheduler could "
        f"choose, and try again.{aside}",
    )


def check_break(exercise: Exercise, actions: Sequence[Action]) -> Feedback:
    """Right when the run replays and violates the property within the allowed steps."""
    if not actions:
        return Feedback(False, "Your run has no steps yet: click actions to build one.")
    if len(actions) > exercise.max_steps:
        return Feedback(
            False,
            f"Your run has {len(actions)} steps; this exercise allows at most "
            f"{exercise.max_steps}. Look for a shorter way.",
        )
    try:
        trace = replay(exercise.design, exercise.bounds, actions)
    except TraceError as error:
        return Feedback(False, f"Your run cannot be replayed: {error}")
    step = trace.first_violation(exercise.prop)
    if step is None:
        broken = ", ".join(trace.violated())
        extra = f" (it does violate {broken})" if broken else ""
        return Feedback(False, f"Your run never violates {exercise.prop}{extra}. Try again.")
    reason = step.reason(exercise.prop) or ""
    why = reason.removeprefix(f"{exercise.prop} violated: ")
    return Feedback(
        True, f"Right: step {step.number} ({step.action.label()}) violates {exercise.prop}: {why}"
    )


def check_break_trace(exercise: Exercise, trace: Trace) -> Feedback:
    """A *break* answer given as a trace file: its design and bounds must be the exercise's."""
    if trace.design != exercise.design or trace.bounds != exercise.bounds:
        return Feedback(
            False,
            "This trace file is for another design or other bounds "
            f"({design_name(trace.design)}, {trace.bounds.in_words()}); this exercise uses "
            f"{design_name(exercise.design)}, {exercise.bounds.in_words()}.",
        )
    return check_break(exercise, trace.actions)


def fixed_design(exercise: Exercise, changes: Mapping[str, Any]) -> Design:
    """The exercise's design with the student's changes to the allowed options only."""
    refused = sorted(set(changes) - set(exercise.options))
    if refused:
        raise DesignError(
            f"this exercise lets you change only {', '.join(exercise.options)}, not {refused[0]}"
        )
    return exercise.design.with_changes(changes)


def offered_values(exercise: Exercise, name: str) -> tuple[str, ...]:
    """The values of a choice option that a fix answer can use: each the model accepts with
    the exercise's design and some values of the other offered choices and flags.

    A wrong answer earns a hint, so a value that no answer can use (a volatile counter where
    the restarts it needs are not offered) is not put before the student.
    """
    option = BY_OPTION[name]
    if option.kind is not Kind.CHOICE:
        return ()
    others = [
        [(other, value) for value in _tried_values(BY_OPTION[other])]
        for other in exercise.options
        if other != name and BY_OPTION[other].kind in (Kind.CHOICE, Kind.FLAG)
    ]
    usable = []
    for value in option.values:
        for rest in itertools.product(*others):
            try:
                exercise.design.with_changes({name: value, **dict(rest)})
            except DesignError:
                continue
            usable.append(value)
            break
    return tuple(usable)


def _tried_values(option: Option) -> tuple[Any, ...]:
    """Every value of a choice or a flag."""
    return option.values if option.kind is Kind.CHOICE else (False, True)


def required_properties(exercise: Exercise, original: Verdicts) -> tuple[str, ...]:
    """What a fix must keep: the target property and the `keep` list (default: every
    property not violated before, put to the test or not)."""
    kept_before = (*original.holds, *original.vacuous)
    keep = exercise.keep if exercise.keep is not None else kept_before
    return tuple(sorted({exercise.prop, *keep}))


def lost_properties(exercise: Exercise, original: Verdicts, found: Verdicts) -> list[str]:
    """What a fix does not achieve: the target property if it does not hold put to the test
    (vacuous fixes nothing), and every other required property it leaves violated."""
    required = required_properties(exercise, original)
    return [
        name
        for name in required
        if (name == exercise.prop and name not in found.holds)
        or (name != exercise.prop and found.shortest.get(name) is not None)
    ]


def check_fix(exercise: Exercise, design: Design, original: Verdicts, found: Verdicts) -> Feedback:
    """Right when the new design makes the property hold, put to the test, and violates
    nothing it must keep."""
    if not found.complete:
        return _incomplete(found)
    if design == exercise.design:
        return Feedback(False, "That is the original design: change at least one option.")
    required = required_properties(exercise, original)
    lost = lost_properties(exercise, original, found)
    if not lost:
        kept = [n for n in required if n != exercise.prop and n in found.holds]
        untested = [n for n in required if n in found.vacuous]
        also = f"; it still keeps {', '.join(kept)}" if kept else ""
        never = f"; {', '.join(untested)} never put to the test" if untested else ""
        return Feedback(
            True,
            f"Right: with {design_name(design)}, {exercise.prop} holds, put to the test, within "
            f"these bounds{also}{never}.",
        )
    if exercise.prop in found.vacuous:
        return Feedback(
            False,
            f"With {design_name(design)}, {exercise.prop} is never put to the test "
            f"({found.untested_because[exercise.prop]}): it holds only vacuously, which fixes "
            "nothing.",
        )
    shortest = ", ".join(f"{name} in {found.shortest[name]} steps" for name in lost)
    if exercise.prop in lost:
        return Feedback(False, f"With {design_name(design)}, the design still violates {shortest}.")
    return Feedback(
        False,
        f"With {design_name(design)}, the design keeps {exercise.prop} but loses what held "
        f"before: {shortest}.",
    )
