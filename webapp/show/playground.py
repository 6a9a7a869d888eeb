"""The scheduler playground's logic: the student picks every step, the model checks it.

Nothing here imports Streamlit. A run is a design, bounds and a list of action instances;
everything shown (the state, the enabled actions, each property's status) is computed by
replaying that list through the step interpreter. A run travels in a URL as compact text
(`a=A1.S1.T.T.D1`), which `decode_actions` validates so a bad link gives a message, never
a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from model.actions import ACTION_ROWS, BY_CODE, Action
from model.check.explorer import explore
from model.check.search import SearchOptions
from model.design import Bounds, Design, DesignError
from model.formats.trace import MAX_TRACE_STEPS, Trace, TraceError, replay
from model.properties import PROPERTIES, Property
from webapp.show.links import LinkError, decode_bounds, decode_design, encode_bounds, encode_design

MAX_PLAY_STEPS: Final = 200
"""Most steps a playground run (and so a link) may have; far above any shortest violation."""

MAX_LINK_CHARS: Final = 2_000
"""Longest `a=` text accepted from a URL."""

FINISH_MAX_STATES: Final = 400_000
FINISH_MAX_SECONDS: Final = 10.0
"""Budget of one "finish with the shortest violation" search, so no page waits long."""

DEFAULT_PRESET: Final = "lease-only"
DEFAULT_BOUNDS: Final = Bounds(workers=2, lease=2, horizon=6, grants=3, writes=2)

CODES: Final = {row.kind: row.code for row in ACTION_ROWS}
"""The one- or two-letter code of each action name in a link (model.actions.ACTION_ROWS)."""

TOKEN: Final = re.compile(
    "^(" + "|".join(sorted(map(re.escape, BY_CODE), key=len, reverse=True)) + r")(\d*)(?:v(\d+))?$"
)
"""One step of a link: a code, the worker's number (if any), `v` and a chosen token value."""
_WRITTEN: Final = [row.code + "1" for row in ACTION_ROWS if row.takes_worker] + [
    row.code for row in ACTION_ROWS if not row.takes_worker
]
STEP_EXAMPLES: Final = ", ".join(_WRITTEN[:-1]) + " or " + _WRITTEN[-1]
"""Every code as a link writes it, those taking a worker first: `A1, S1, …, T, RS or RC`."""


# ----- links ------------------------------------------------------------------------------


def encode_action(action: Action) -> str:
    """The compact code of one action, e.g. `A2`, `T`, `A1v3` (random token 3), `RS`."""
    code = CODES[action.name] + (str(action.worker) if action.worker else "")
    return code + (f"v{action.value}" if action.value else "")


def encode_actions(actions: Sequence[Action]) -> str:
    """A run as dot-separated codes, the `a=` parameter of a playground link."""
    return ".".join(encode_action(action) for action in actions)


def decode_action(text: str, position: int) -> Action:
    """One step of a link, or a `LinkError` naming the step and what a step looks like."""
    match = TOKEN.match(text)
    if match is None:
        raise LinkError(
            f"step {position} of the link, {text[:20]!r}, is not an action code: use "
            f"{STEP_EXAMPLES} (a letter and a worker number)"
        )
    code, worker, value = match.groups()
    name = BY_CODE[code]
    if not name.row.takes_worker and worker:
        raise LinkError(f"step {position} of the link, {text!r}: {name} takes no worker number")
    if name.row.takes_worker and not worker:
        raise LinkError(f"step {position} of the link, {text!r}: {name} needs a worker number")
    if len(worker) > 2 or (value and len(value) > 2):
        raise LinkError(f"step {position} of the link, {text!r}: the number is too large")
    return Action(name, int(worker or 0), int(value or 0))


def decode_actions(text: str) -> tuple[Action, ...]:
    """The actions of an `a=` parameter, validated (length, codes); empty text is no steps."""
    text = text.strip()
    if not text:
        return ()
    if len(text) > MAX_LINK_CHARS:
        raise LinkError(f"the link's run is longer than {MAX_LINK_CHARS:,} characters")
    parts = text.split(".")
    if len(parts) > MAX_PLAY_STEPS:
        raise LinkError(f"a run may have at most {MAX_PLAY_STEPS} steps, not {len(parts)}")
    return tuple(decode_action(part, number) for number, part in enumerate(parts, start=1))


@dataclass(frozen=True)
class Run:
    """A playground run: the design, the bounds and the actions taken so far."""

    design: Design
    bounds: Bounds
    actions: tuple[Action, ...] = ()

    def link_params(self) -> dict[str, str]:
        """The URL parameters that reopen this run: `d` design, `b` bounds, `a` actions."""
        return {
            "d": encode_design(self.design),
            "b": encode_bounds(self.bounds),
            "a": encode_actions(self.actions),
        }


AT_PARAM: Final = "at"
"""The link's step of the run the scheduler stands at (none: its end)."""


def scheduler_params(trace: Trace, at: int) -> dict[str, str] | None:
    """The scheduler's link parameters that open this run standing at step `at` (None when
    the run is too long for a link), so any run shown anywhere can be stepped and changed."""
    if len(trace.steps) > MAX_PLAY_STEPS or len(encode_actions(trace.actions)) > MAX_LINK_CHARS:
        return None
    params = Run(trace.design, trace.bounds, trace.actions).link_params()
    if at < len(trace.steps):
        params[AT_PARAM] = str(max(at, 0))
    return params


def run_from_params(params: Mapping[str, str]) -> Run:
    """A run from URL parameters (missing ones take defaults); raises `LinkError` when bad."""
    design = decode_design(params.get("d", DEFAULT_PRESET) or DEFAULT_PRESET)
    bounds = decode_bounds(params["b"]) if params.get("b") else DEFAULT_BOUNDS
    try:
        design.check_fits(bounds)
    except DesignError as error:
        raise LinkError(str(error)) from None
    actions = decode_actions(params.get("a", ""))
    play(Run(design, bounds, actions))
    return Run(design, bounds, actions)


# ----- playing ------------------------------------------------------------------------------


def play(run: Run) -> Trace:
    """Replay the run; a step that is not possible becomes a `LinkError` naming it."""
    if len(run.actions) > min(MAX_PLAY_STEPS, MAX_TRACE_STEPS):
        raise LinkError(f"a run may have at most {MAX_PLAY_STEPS} steps")
    try:
        return replay(run.design, run.bounds, run.actions, title="Your run")
    except TraceError as error:
        raise LinkError(f"this run cannot be replayed: {error}") from None


@dataclass(frozen=True)
class Choice:
    """An enabled action as a button: the action, its label and who takes it."""

    action: Action
    label: str
    actor: str


def action_label(trace: Trace, action: Action) -> str:
    """A button label in words: `Tick`, `Acquire W2`, `Deliver W1's write`, `Restart storage`."""
    request = _request_kind(trace, action.worker) if action.row.request else ""
    return action.button(request)


def _request_kind(trace: Trace, worker: int) -> str:
    """`read` or `write`: the kind of request worker sends next or has in flight."""
    if trace.design.workload != "rmw":
        return "write"
    state = trace.system.view(trace.states()[-1])
    return "write" if state.phase[worker] else "read"


def run_in_words(trace: Trace) -> str:
    """A run as its steps in words, for a person reading an answer: `Acquire W1 → Send W1's
    write → Tick → Tick → Deliver W1's write` (`no steps` for an empty run)."""
    said = []
    for step in trace.steps:
        action = step.action
        request = ""
        if action.row.request:
            kind = trace.system.builder.is_write(trace.system.view(step.before), action.worker)
            request = "write" if kind or trace.design.workload != "rmw" else "read"
        said.append(action.button(request).removesuffix(" (time passes)"))
    return " → ".join(said) or "no steps"


def choices(trace: Trace) -> tuple[Choice, ...]:
    """Every action enabled at the end of the run, as buttons, in the model's rule order."""
    system = trace.system
    last = trace.states()[-1]
    return tuple(
        Choice(rule.action, action_label(trace, rule.action), rule.actor)
        for rule in system.enabled(last)
    )


@dataclass(frozen=True)
class PropertyStatus:
    """One property at the end of a run: violated at a step (with why), holding so far, or
    not put to the test yet (holding then says nothing)."""

    name: str
    title: str
    violated: bool
    step: int | None
    reason: str
    exercised: bool = True
    """Whether some step of the run is one the property speaks of."""
    never: bool = False
    """Whether the design itself rules out every step the property speaks of."""

    def line(self) -> str:
        """A one-line status: `✘ P2 violated at step 5: …`, `✔ P1 holds so far` or
        `○ P4 not put to the test yet: …`."""
        if self.violated:
            return f"✘ {self.name} violated at step {self.step} ({self.title}): {self.reason}"
        if self.never:
            return (
                f"○ {self.name} never put to the test in this design ({self.title}): {self.reason}"
            )
        if not self.exercised:
            return f"○ {self.name} not put to the test yet ({self.title}): {self.reason}"
        return f"✔ {self.name} holds so far ({self.title})"


def exercised(trace: Trace, prop: Property) -> bool:
    """Whether some step of the run is a transition the property speaks of (its trigger)."""
    system = trace.system
    return any(
        bool(prop.triggered(system.view(step.before), system.rule_for(step.action)))
        for step in trace.steps
    )


def property_statuses(trace: Trace) -> tuple[PropertyStatus, ...]:
    """Each property's status after the run: its first violating step and reason, holds so
    far (put to the test), or not put to the test yet (and why)."""
    found = []
    for prop in PROPERTIES:
        step = trace.first_violation(prop.name)
        if step is None:
            tested = exercised(trace, prop)
            never = prop.never_exercised(trace.design)
            why = f"no step so far has {prop.exercised_by}" if never is None else never
            if tested:
                why = "no step broke it"
            found.append(
                PropertyStatus(prop.name, prop.title, False, None, why, tested, never is not None)
            )
            continue
        reason = step.reason(prop.name) or step.sentence
        reason = reason.removeprefix(f"{prop.name} violated: ")
        found.append(PropertyStatus(prop.name, prop.title, True, step.number, reason))
    return tuple(found)


def take(run: Run, action: Action) -> Run:
    """The run with one more step, refused when the step is not enabled or the run is full."""
    if len(run.actions) >= MAX_PLAY_STEPS:
        raise LinkError(f"a run may have at most {MAX_PLAY_STEPS} steps")
    extended = Run(run.design, run.bounds, (*run.actions, action))
    play(extended)
    return extended


def undo(run: Run) -> Run:
    """The run without its last step (unchanged when empty)."""
    return Run(run.design, run.bounds, run.actions[:-1])


@dataclass(frozen=True)
class Completion:
    """The answer to "finish with the shortest violation of P from here"."""

    prop: str
    actions: tuple[Action, ...]
    message: str

    @property
    def found(self) -> bool:
        """Whether a violating completion exists (an empty one means the search found none)."""
        return bool(self.actions)


def finish(
    run: Run,
    prop: str,
    max_states: int = FINISH_MAX_STATES,
    max_seconds: float = FINISH_MAX_SECONDS,
) -> Completion:
    """The shortest continuation of the run whose last step violates `prop`, from the explorer."""
    state = play(run).states()[-1]
    result = explore(
        run.design,
        run.bounds,
        SearchOptions(start=state, max_states=max_states, max_seconds=max_seconds),
    )
    verdict = result.verdicts[prop]
    if verdict.violated and verdict.actions:
        count = len(verdict.actions)
        return Completion(
            prop,
            tuple(verdict.actions),
            f"Added the shortest way to violate {prop} from here: {count} more "
            f"step{'s' if count != 1 else ''}.",
        )
    if result.complete:
        return Completion(
            prop, (), f"No continuation of this run violates {prop} within these bounds."
        )
    return Completion(
        prop,
        (),
        f"The search stopped at its budget of {max_states:,} states and {max_seconds:g} s "
        f"({result.stopped_by}) before finding a violation of {prop} from here: undo some "
        "steps or choose smaller bounds to search again.",
    )
