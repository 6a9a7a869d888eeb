"""Traces in the Informal Trace Format (ITF), the JSON trace format of Apalache and Quint.

A trace becomes one ITF document (written and read with the `itf-py` library): `#meta`
names the format and carries the design and bounds, `vars` lists the variables, and
`states` holds the initial state and the state after each step. Every state records
`action` (a variant: the action's name, with its worker and chosen value; `Init` for the
first state), `actor` and `violations` (the properties that step breaks), then the
state variables: scalars as integers, per-worker variables as maps from worker to value.
Only the variables the design uses are written.

Reading an ITF document validates it like the project's own trace files: the file is
measured before it is decoded (`model.formats.reading`), and before itf-py sees the decoded JSON
its states are counted and so are the records in them (itf-py makes a new class of every
record, about 5 kB each: a megabyte of `{}` would cost 2 GB); then the design and bounds
are checked, the actions are replayed through the step interpreter, and every recorded
value must equal the replay's, or the error names the first state that differs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Final

import itf_py
import msgspec

from model.design import DesignError
from model.formats.reading import MAX_ITF_RECORDS_PER_STATE, MAX_TRACE_STEPS, shown
from model.formats.schemas import Words, refusing
from model.formats.trace import (
    MAX_TITLE_CHARS,
    TRACE_VERSION,
    Trace,
    TraceError,
    decode_json,
    read_design_and_bounds,
    read_limited,
    replay,
    trace_from_dict,
)
from model.layout import PER_WORKER, Layout
from model.rules import Action
from model.system import State

META_KEY: Final = "fencing-lab"
"""The `#meta` entry holding the design, bounds and title."""
FAMILIES: Final = (*PER_WORKER, "used")
"""Variables with one value per worker (`used`: per token value), written as maps."""
INITIAL_ACTION: Final = "Init"
STEP_VARIABLES: Final = ("action", "actor", "violations")


class ItfMeta(msgspec.Struct, forbid_unknown_fields=True):
    """The `#meta.fencing-lab` entry: what the states are replayed against."""

    design: dict[str, Any]
    bounds: dict[str, Any]
    version: Annotated[int, msgspec.Meta(ge=TRACE_VERSION, le=TRACE_VERSION)] = TRACE_VERSION
    title: Annotated[str, msgspec.Meta(max_length=MAX_TITLE_CHARS)] = ""


META_WORDS: Final = {
    "design": Words("an object"),
    "bounds": Words("an object"),
    "version": Words(f"the trace version {TRACE_VERSION}"),
    "title": Words(f"text of at most {MAX_TITLE_CHARS} characters"),
}
"""What each field of the `#meta.fencing-lab` entry takes, in the words of a refusal."""

_as_meta: Final = refusing(
    lambda error: TraceError(f"the ITF trace's '#meta.{META_KEY}' entry: {error.problem}")
)


def _families(layout: Layout) -> dict[str, list[tuple[int, str]]]:
    """Each used per-worker variable with its (index, column) pairs."""
    found: dict[str, list[tuple[int, str]]] = {}
    for column, size in zip(layout.columns, layout.sizes, strict=True):
        if size > 1 and "[" in column:
            family, index = column[:-1].split("[")
            found.setdefault(family, []).append((int(index), column))
    return found


def _scalars(layout: Layout) -> list[str]:
    """The used variables with one value per state."""
    return [c for c, n in zip(layout.columns, layout.sizes, strict=True) if n > 1 and "[" not in c]


def variables(layout: Layout) -> list[str]:
    """The ITF variables of a design: step information, then scalars, then families."""
    return [*STEP_VARIABLES, *_scalars(layout), *_families(layout)]


def _action_value(action: Action | None) -> Any:
    """The step's action as an ITF variant value."""
    if action is None:
        return {"tag": INITIAL_ACTION, "value": None}
    fields = {"worker": action.worker, "value": action.value}
    return {
        "tag": str(action.name),
        "value": {k: itf_py.value_to_json(v) for k, v in fields.items()},
    }


def _state_values(
    layout: Layout, state: State, action: Action | None, actor: str, broken: Sequence[str]
) -> dict[str, Any]:
    """One ITF state's variables (as JSON values)."""
    named = layout.as_dict(state)
    values: dict[str, Any] = {
        "action": _action_value(action),
        "actor": actor,
        "violations": {"#set": sorted(broken)},  # sorted: the same run, the same text
    }
    for column in _scalars(layout):
        values[column] = itf_py.value_to_json(named[column])
    for family, members in _families(layout).items():
        values[family] = itf_py.value_to_json({index: named[c] for index, c in members})
    return values


def trace_to_itf(trace: Trace) -> dict[str, Any]:
    """The trace as one ITF document (a JSON object)."""
    layout = trace.system.layout
    states = [
        itf_py.State(meta={"index": 0}, values=_state_values(layout, trace.initial, None, "", ()))
    ]
    for step in trace.steps:
        values = _state_values(layout, step.after, step.action, step.actor, step.violations)
        states.append(itf_py.State(meta={"index": step.number}, values=values))
    meta = {
        "format": "ITF",
        "format-description": "Informal Trace Format (Apalache ADR-015)",
        "source": "Fencing Lab",
        "description": trace.title or "a run of the Fencing Lab model",
        META_KEY: {
            "version": TRACE_VERSION,
            "title": trace.title,
            "design": trace.design.to_dict(),
            "bounds": trace.bounds.to_dict(),
        },
    }
    document = itf_py.Trace(meta=meta, params=[], vars=variables(layout), states=[], loop=None)
    encoded: dict[str, Any] = itf_py.trace_to_json(document)
    # State values are already JSON: write them as they are (itf-py would encode them again).
    encoded["states"] = [{"#meta": s.meta, **s.values} for s in states]
    return encoded


def trace_to_itf_json(trace: Trace) -> str:
    """The trace as indented ITF JSON text."""
    return json.dumps(trace_to_itf(trace), indent=2, ensure_ascii=False)


def is_itf(data: Any) -> bool:
    """Whether a decoded JSON value has the shape of an ITF document."""
    return isinstance(data, dict) and "states" in data and ("vars" in data or "#meta" in data)


def trace_from_itf(data: Any) -> Trace:
    """Validate an ITF document written by Fencing Lab and replay it against its states."""
    if not is_itf(data):
        raise TraceError("not an ITF trace: it needs 'vars' and 'states'")
    check_itf_size(data)
    try:
        document = itf_py.trace_from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as error:
        raise TraceError(f"the ITF trace is malformed: {error}") from None
    meta = document.meta.get(META_KEY) if isinstance(document.meta, dict) else None
    if not isinstance(meta, dict):
        raise TraceError(
            f"this ITF trace has no '#meta.{META_KEY}' entry with the design and bounds, "
            "so it cannot be replayed against the model"
        )
    record = _as_meta(meta, ItfMeta, META_WORDS)
    design, bounds = read_design_and_bounds(record.design, record.bounds)
    if not document.states:
        raise TraceError("an ITF trace needs at least its initial state")
    recorded = [_action_of(index, state.values) for index, state in enumerate(document.states)]
    actions = [action for action in recorded if action is not None]
    trace = replay(design, bounds, actions, title=record.title)
    _compare_states(trace, [state.values for state in document.states])
    return trace


def check_itf_size(data: dict[str, Any]) -> None:
    """Refuse decoded ITF JSON with more states, or more records, than a trace may hold, before
    itf-py builds anything from it (it makes a class of every record)."""
    states = data["states"]
    if not isinstance(states, list):
        raise TraceError("the ITF trace's 'states' must be a list")
    if len(states) > MAX_TRACE_STEPS + 1:
        raise TraceError(
            f"an ITF trace may hold at most {MAX_TRACE_STEPS + 1} states (the initial one and "
            f"{MAX_TRACE_STEPS} steps), not {len(states):,}"
        )
    allowed = MAX_ITF_RECORDS_PER_STATE * len(states)
    records = _records(states)
    if records > allowed:
        raise TraceError(
            f"the ITF trace holds {records:,} records or variants; a Fencing Lab trace holds "
            f"at most {MAX_ITF_RECORDS_PER_STATE} per state ({allowed:,} here)"
        )


def _records(states: list[Any]) -> int:
    """How many JSON objects in the states' values itf-py would turn into records or variants:
    every object but those whose keys name ITF's own encodings (`#bigint`, `#map`, ...)."""
    found = 0
    pending: list[Any] = [
        value
        for state in states
        if isinstance(state, dict)
        for key, value in state.items()
        if key != "#meta"
    ]
    while pending:
        value = pending.pop()
        if isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, dict):
            if not any(isinstance(key, str) and key.startswith("#") for key in value):
                found += 1
            pending.extend(value.values())
    return found


def _action_of(index: int, values: dict[str, Any]) -> Action | None:
    """The action recorded in state `index` (None for the initial state, which records `Init`)."""
    variant = values.get("action")
    tag = type(variant).__name__ if variant is not None else None
    if index == 0:
        if tag != INITIAL_ACTION:
            raise TraceError(f"state 0: 'action' must be {INITIAL_ACTION}, not {shown(tag)}")
        return None
    if variant is None or not hasattr(variant, "_fields"):
        raise TraceError(f"state {index}: 'action' must be a variant such as Acquire")
    fields = dict(variant._asdict())
    try:
        return Action.from_dict({"name": tag, **fields})
    except DesignError as error:
        raise TraceError(f"state {index}: {error}") from None


def _compare_states(trace: Trace, recorded: list[dict[str, Any]]) -> None:
    """Refuse a document whose recorded variables differ from the replay, naming the state."""
    layout = trace.system.layout
    replayed = [_state_values(layout, trace.initial, None, "", ())]
    replayed += [
        _state_values(layout, s.after, s.action, s.actor, s.violations) for s in trace.steps
    ]
    for index, (mine, theirs) in enumerate(zip(replayed, recorded, strict=True)):
        for name, value in mine.items():
            if name == "action" or name not in theirs:
                continue
            expected = itf_py.value_from_json(value)
            if theirs[name] != expected:
                label = trace.steps[index - 1].action.label() if index else "initial state"
                raise TraceError(
                    f"state {index} ({label}): the file says {name}={_show(theirs[name])} "
                    f"but replaying gives {_show(expected)}"
                )
        unknown = sorted(set(theirs) - set(mine))
        if unknown:
            raise TraceError(f"state {index}: unknown variable '{shown(unknown[0])}'")


def _show(value: Any) -> str:
    """A recorded value in a short, escaped form for an error message."""
    return shown(dict(value) if isinstance(value, dict) else value, 80)


def trace_from_any_data(data: Any) -> Trace:
    """A trace from decoded JSON in the project's own format or in ITF, told apart by fields."""
    if is_itf(data):
        return trace_from_itf(data)
    return trace_from_dict(data)


def trace_from_any_json(text: str | bytes) -> Trace:
    """A trace from the project's own JSON format or from ITF (size checked before parsing);
    both formats get the same validation and replay."""
    return trace_from_any_data(decode_json(text))


def read_trace_file(path: Path) -> Trace:
    """Read at most the size limit (plus one byte) of a regular file, then parse it."""
    return trace_from_any_json(read_limited(path))
