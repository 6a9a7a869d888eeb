"""Traces: a run as a list of action instances, replayed into states, actors and sentences.

A counterexample is only its actions; `replay` runs them through the step interpreter to
get every state, which properties each step violates and a sentence per step. Trace
files embed the design and bounds, so a file is self-describing; importing one replays
it and names the first step that is malformed, not enabled, or differs from the record.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Final

import msgspec

from model.actions import Action, ActionKind
from model.design import Bounds, Design, DesignError
from model.explain.narration import (
    Reason,
    delay_note,
    describe_step,
    explain_violation,
    reception_outcome,
)
from model.formats.reading import MAX_TRACE_BYTES as MAX_TRACE_BYTES
from model.formats.reading import MAX_TRACE_STEPS as MAX_TRACE_STEPS
from model.formats.reading import (
    TRACE_LIMITS,
    Limits,
    ReadError,
    load_json,
    quoted,
    read_file,
    shown,
)
from model.formats.schemas import SchemaError, Words, refusing
from model.properties import BY_NAME
from model.rules import Rule
from model.system import State, System

TRACE_FORMAT: Final = "fencing-lab/trace"
TRACE_VERSION: Final = 1
MAX_TITLE_CHARS: Final = 200


class TraceError(ValueError):
    """A trace that cannot be replayed; the message names the first bad step."""


class StepRecord(msgspec.Struct, forbid_unknown_fields=True):
    """One step as a trace file records it (the action is checked by `Action.from_dict`)."""

    action: dict[str, Any]
    actor: str = ""
    state: dict[str, Any] | None = None
    violations: list[str] | msgspec.UnsetType = msgspec.UNSET
    """Left out: not compared; given: equal to the replay's."""
    sentence: str = ""


class TraceFile(msgspec.Struct, forbid_unknown_fields=True):
    """A trace file: its design and bounds (checked by the model's own types) and steps."""

    format: str
    version: int
    design: dict[str, Any]
    bounds: dict[str, Any]
    steps: Annotated[list[StepRecord], msgspec.Meta(max_length=MAX_TRACE_STEPS)]
    title: Annotated[str, msgspec.Meta(max_length=MAX_TITLE_CHARS)] = ""


TRACE_WORDS: Final = {
    "title": Words(f"text of at most {MAX_TITLE_CHARS} characters"),
    "steps": Words("a list of steps", f"a list of at most {MAX_TRACE_STEPS} steps"),
    "design": Words("an object"),
    "bounds": Words("an object"),
    "action": Words("an object"),
    "actor": Words("text"),
    "state": Words("an object"),
    "violations": Words("a list of names"),
    "sentence": Words("text"),
}
"""What each field of a trace file takes, in the words of a refusal."""


def _trace_refusal(error: SchemaError) -> TraceError:
    """A schema refusal as a trace's sentence: the step, then the field."""
    path = error.path
    if len(path) >= 2 and path[0] == "steps" and isinstance(path[1], int):
        if len(path) == 2 or (path[2:] == ("action",) and "no field" in error.problem):
            return TraceError(f"step {path[1] + 1}: each step must be an object with an 'action'")
        return TraceError(f"step {path[1] + 1}: {error.problem}")
    return TraceError(f"the trace file: {error.problem}")


_as_trace: Final = refusing(_trace_refusal)


@dataclass(frozen=True)
class Step:
    """One transition of a trace: the action, who took it, the state after, what it broke."""

    number: int
    action: Action
    actor: str
    before: State
    after: State
    violations: tuple[str, ...]
    sentence: str
    reasons: tuple[Reason, ...]
    outcome: str | None = None
    """What the receiver did: `accepted`, `rejected`, `checked`, `read`; None if nothing."""

    def reason(self, name: str) -> str | None:
        """Why this step violates property `name`, or None if it does not."""
        return next((r.text for r in self.reasons if r.prop == name), None)


@dataclass(frozen=True)
class Trace:
    """A replayed run of a design within bounds."""

    design: Design
    bounds: Bounds
    steps: tuple[Step, ...]
    title: str = ""

    @cached_property
    def system(self) -> System:
        """The step interpreter the trace was replayed with."""
        return System(self.design, self.bounds)

    @property
    def initial(self) -> State:
        """The state before the first step."""
        return self.system.initial()

    @property
    def actions(self) -> tuple[Action, ...]:
        """The action instances, in order."""
        return tuple(step.action for step in self.steps)

    def states(self) -> list[State]:
        """Every state of the run: the initial one, then one per step."""
        return [self.initial, *(step.after for step in self.steps)]

    def state_at(self, position: int) -> dict[str, int]:
        """Named values of the state after `position` steps (0: the initial state)."""
        return self.system.layout.as_dict(self.states()[position])

    def first_violation(self, name: str) -> Step | None:
        """The first step that violates property `name`, if any."""
        return next((step for step in self.steps if name in step.violations), None)

    def exercised(self, name: str) -> int:
        """How many steps put a property to the test (its trigger holds: an accepted write
        for P1, a rejected request for P4, …), by the property's own predicate."""
        prop = BY_NAME[name]
        system = self.system
        return sum(
            1
            for step in self.steps
            if prop.triggered(system.view(step.before), system.rule_for(step.action))
        )

    def violated(self) -> tuple[str, ...]:
        """Names of every property some step violates, in order P1..P6."""
        names = {name for step in self.steps for name in step.violations}
        return tuple(sorted(names))


class StepMaker:
    """Makes a run's steps one after another: a step's sentence, reasons and outcome need
    what came before it in the run (when each request was sent, the state in which a split
    receiver checked it). Without `narrate` a step carries its violations only."""

    def __init__(self, system: System, narrate: bool = True) -> None:
        self.system = system
        self.narrate = narrate
        self.sent_at: dict[int, int] = {}
        self.checked_in: dict[int, State] = {}
        """The state in which a split receiver checked each worker's request."""

    def step(self, number: int, action: Action, rule: Rule, state: State, after: State) -> Step:
        """The step that takes `rule` (the action's) from `state` to `after`."""
        system = self.system
        violations = system.violations(state, rule)
        decided = (
            self.checked_in.pop(action.worker, None) if action.name is ActionKind.APPLY else None
        )
        if action.name is ActionKind.CHECK:
            self.checked_in[action.worker] = state
        sentence, reasons, outcome = "", tuple[Reason, ...](), None
        if self.narrate:
            sentence = describe_step(system, state, rule, after, decided)
            now = system.view(state).now
            if action.row.sends:
                self.sent_at[action.worker] = now
            elif action.row.arrival and self.sent_at.get(action.worker, now) < now:
                sentence += delay_note(self.sent_at[action.worker], now)
            reasons = tuple(explain_violation(system, state, rule, v, decided) for v in violations)
            outcome = reception_outcome(system, state, rule)
        return Step(
            number=number,
            action=action,
            actor=rule.actor,
            before=state,
            after=after,
            violations=violations,
            sentence=sentence,
            reasons=reasons,
            outcome=outcome,
        )


def replay(design: Design, bounds: Bounds, actions: Iterable[Action], title: str = "") -> Trace:
    """Run the actions from the initial state; refuse the first one that is not enabled."""
    actions = list(actions)
    if len(actions) > MAX_TRACE_STEPS:
        raise TraceError(f"a trace may have at most {MAX_TRACE_STEPS} steps, not {len(actions)}")
    try:
        system = System(design, bounds)
    except DesignError as error:
        raise TraceError(f"the trace's design cannot be replayed at its bounds: {error}") from None
    state = system.initial()
    steps: list[Step] = []
    maker = StepMaker(system)
    for number, action in enumerate(actions, start=1):
        rule = system.rule_of.get(action)
        if rule is None:
            raise TraceError(
                f"step {number}: {action.label()} is not an action of this design and bounds"
            )
        if not system.is_enabled(state, rule):
            raise TraceError(f"step {number}: {action.label()} is not enabled in the state reached")
        after = system.apply(state, rule)
        steps.append(maker.step(number, action, rule, state, after))
        state = after
    return Trace(design, bounds, tuple(steps), title)


def trace_to_dict(trace: Trace) -> dict[str, Any]:
    """A self-describing JSON object: design, bounds, and each step's action and state."""
    layout = trace.system.layout
    return {
        "format": TRACE_FORMAT,
        "version": TRACE_VERSION,
        "title": trace.title,
        "design": trace.design.to_dict(),
        "bounds": trace.bounds.to_dict(),
        "steps": [
            {
                "action": step.action.to_dict(),
                "actor": step.actor,
                "state": layout.as_dict(step.after),
                "violations": list(step.violations),
                "sentence": step.sentence,
            }
            for step in trace.steps
        ],
    }


def trace_to_json(trace: Trace) -> str:
    """The trace as indented JSON text."""
    return json.dumps(trace_to_dict(trace), indent=2, ensure_ascii=False)


def read_limited(path: Path, limits: Limits = TRACE_LIMITS) -> bytes:
    """A regular file's bytes, at most the limits' size of them read; anything else is a
    TraceError (see `model.formats.reading.read_file`)."""
    try:
        return read_file(path, limits)
    except ReadError as error:
        raise TraceError(str(error)) from None


def decode_json(text: str | bytes) -> Any:
    """A trace file's JSON text as data, measured before it is decoded (size, nesting, values,
    numbers: `TRACE_LIMITS`), or a TraceError saying what is wrong."""
    try:
        return load_json(text, TRACE_LIMITS)
    except ReadError as error:
        raise TraceError(str(error)) from None


def trace_from_json(text: str | bytes) -> Trace:
    """Parse, validate and replay a trace file; errors name the field or the first bad step."""
    return trace_from_dict(decode_json(text))


def read_design_and_bounds(design_data: object, bounds_data: object) -> tuple[Design, Bounds]:
    """A trace file's design and bounds, validated together; a TraceError says what is wrong."""
    try:
        design = Design.from_dict(design_data)
        bounds = Bounds.from_dict(bounds_data)
        design.check_fits(bounds)
    except DesignError as error:
        raise TraceError(f"the trace's design or bounds are invalid: {error}") from None
    return design, bounds


def trace_from_dict(data: Any) -> Trace:
    """Validate a decoded trace object and replay it against its recorded states."""
    if not isinstance(data, dict):
        raise TraceError("a trace must be a JSON object")
    if data.get("format") != TRACE_FORMAT:
        raise TraceError(f"not a Fencing Lab trace: field 'format' must be {TRACE_FORMAT!r}")
    version = data.get("version")
    if type(version) is not int or version != TRACE_VERSION:
        raise TraceError(
            f"unsupported trace version {quoted(version, 20)}: expected {TRACE_VERSION}"
        )
    record = _as_trace(data, TraceFile, TRACE_WORDS)
    design, bounds = read_design_and_bounds(record.design, record.bounds)
    records = record.steps
    actions = [_action_of(number, step) for number, step in enumerate(records, start=1)]
    title = record.title
    trace = replay(design, bounds, actions, title=title)
    _compare_records(trace, records)
    return trace


def _action_of(number: int, record: StepRecord) -> Action:
    """The action of one recorded step, or an error naming the step."""
    try:
        return Action.from_dict(record.action)
    except DesignError as error:
        raise TraceError(f"step {number}: {error}") from None


def _compare_records(trace: Trace, records: Sequence[StepRecord]) -> None:
    """Refuse a file whose recorded states or violations differ from the replay."""
    layout = trace.system.layout
    for step, record in zip(trace.steps, records, strict=True):
        recorded = record.state
        if recorded is not None:
            actual = layout.as_dict(step.after)
            for column, value in recorded.items():
                if type(value) is not int or actual.get(column) != value:
                    raise TraceError(
                        f"step {step.number} ({step.action.label()}): the file says "
                        f"{shown(column)}={shown(value)} but replaying gives "
                        f"{actual.get(column)!r}"
                    )
        recorded_violations = record.violations
        if recorded_violations is msgspec.UNSET:
            continue
        if recorded_violations != list(step.violations):
            raise TraceError(
                f"step {step.number} ({step.action.label()}): the file says it violates "
                f"{shown(recorded_violations)} but replaying gives {list(step.violations)!r}"
            )
