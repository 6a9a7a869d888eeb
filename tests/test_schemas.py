"""The file schemas, one catalogue per kind of file: a valid file is read; each refusal is one
sentence naming the place and the field (never the library's own words); unknown fields are
refused; the bounded reader's limits are hit before any schema sees the file."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from fencing.stories import paused_worker_story
from lab.history import history_from_dict, history_from_json, history_to_json
from lab.history_schema import EVENT_FIELDS, SETTINGS_SCHEMA, settings_of
from lab.settings import LabInputError, Settings
from model.formats.itf import trace_from_any_json, trace_to_itf
from model.formats.reading import MAX_HISTORY_VALUES, MAX_TRACE_STEPS
from model.formats.schemas import SchemaError, Words, convert
from model.formats.trace import TraceError, trace_from_json, trace_to_dict
from tests.lab.histories import paused_worker

Change = Callable[[dict[str, Any]], None]
LIBRARY_WORDS = ("Expected `", "Object missing", "Object contains", "$.", "Invalid enum", "`$")


def _library_free(message: str) -> bool:
    """Whether a refusal is free of the library's own phrasing and paths."""
    return not any(words in message for words in LIBRARY_WORDS)


# ----- the converter ------------------------------------------------------------------------


class _Point(msgspec.Struct, forbid_unknown_fields=True):
    x: int
    label: str = ""


@pytest.mark.parametrize(
    ("data", "path", "problem"),
    [
        ({"x": "1"}, ("x",), "field 'x' must be a whole number, not '1'"),
        ({"x": True}, ("x",), "field 'x' must be a whole number, not True"),
        ({}, ("x",), "it has no field 'x'"),
        ({"x": 1, "y": 2}, ("y",), "it has an unknown field 'y'"),
        ({"x": 1, "label": [1, 2]}, ("label",), "field 'label' must be text, not a list of 2"),
        ([1], (), "it must be an object, not a list of 1 entries"),
    ],
)
def test_the_converter_says_where_and_what_the_field_takes(
    data: Any, path: tuple[str, ...], problem: str
) -> None:
    words = {"x": Words("a whole number"), "label": Words("text")}
    with pytest.raises(SchemaError) as refused:
        convert(data, _Point, words)
    assert refused.value.path == path
    assert refused.value.problem.startswith(problem)
    assert _library_free(refused.value.problem)
    assert convert({"x": 3}, _Point, words) == _Point(3)


# ----- trace files (JSON) ---------------------------------------------------------------------


def _trace(change: Change) -> str:
    data = trace_to_dict(paused_worker_story("fenced").trace())
    change(data)
    return json.dumps(data)


def test_a_valid_trace_file_is_read() -> None:
    trace = trace_from_json(_trace(lambda d: None))
    assert len(trace.steps) == len(paused_worker_story("fenced").trace().steps)


TRACE_CATALOGUE: dict[str, tuple[Change, str]] = {
    "unknown top field": (lambda d: d.update(colour=1), "it has an unknown field 'colour'"),
    "unknown step field": (
        lambda d: d["steps"][1].update(note="x"),
        "step 2: it has an unknown field 'note'",
    ),
    "title too long": (lambda d: d.update(title="t" * 201), "'title' must be text of at most 200"),
    "title a number": (lambda d: d.update(title=3), "'title' must be text of at most 200"),
    "steps an object": (lambda d: d.update(steps={}), "'steps' must be a list of steps"),
    "too many steps": (
        lambda d: d.update(steps=d["steps"] * 100),
        f"'steps' must be a list of at most {MAX_TRACE_STEPS} steps",
    ),
    "step without action": (
        lambda d: d["steps"][2].pop("action"),
        "step 3: each step must be an object with an 'action'",
    ),
    "violations not names": (
        lambda d: d["steps"][0].update(violations=[1]),
        "step 1: field 'violations' must be a list of names",
    ),
    "state a list": (
        lambda d: d["steps"][0].update(state=[1]),
        "step 1: field 'state' must be an object",
    ),
    "design missing": (lambda d: d.pop("design"), "it has no field 'design'"),
}


@pytest.mark.parametrize("name", sorted(TRACE_CATALOGUE))
def test_each_trace_refusal_names_the_step_and_field(name: str) -> None:
    change, message = TRACE_CATALOGUE[name]
    with pytest.raises(TraceError) as refused:
        trace_from_json(_trace(change))
    assert message in str(refused.value) and _library_free(str(refused.value))


def test_the_trace_limits_are_hit_before_the_schema() -> None:
    """A file too deep is refused by the reader (its words), not by the schema."""
    deep = _trace(lambda d: d.update(title=None)).replace(
        '"title": null', '"title": ' + "[" * 40 + "]" * 40
    )
    with pytest.raises(TraceError, match="nests lists or objects too deeply"):
        trace_from_json(deep)


# ----- ITF traces -----------------------------------------------------------------------------


def _itf(change: Change) -> str:
    document = trace_to_itf(paused_worker_story("fenced").trace())
    change(document["#meta"]["fencing-lab"])
    return json.dumps(document)


def test_a_valid_itf_trace_is_read() -> None:
    assert trace_from_any_json(_itf(lambda m: None)).steps


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m.update(colour=1), "'#meta.fencing-lab' entry: it has an unknown field"),
        (lambda m: m.update(version=2), "field 'version' must be the trace version 1, not 2"),
        (lambda m: m.update(title="t" * 300), "field 'title' must be text of at most 200"),
        (lambda m: m.pop("bounds"), "it has no field 'bounds'"),
    ],
)
def test_each_itf_meta_refusal_names_the_field(change: Change, message: str) -> None:
    with pytest.raises(TraceError) as refused:
        trace_from_any_json(_itf(change))
    assert message in str(refused.value) and _library_free(str(refused.value))


# ----- lab settings -------------------------------------------------------------------------


def test_the_settings_schema_has_every_settings_field() -> None:
    """A field added to `Settings` is read at once; a history without it takes its default."""
    assert SETTINGS_SCHEMA.__struct_fields__ == tuple(Settings().to_dict())
    assert settings_of({}) == Settings()
    assert settings_of(Settings(receiver="fenced", workers=3).to_dict()) == Settings(
        receiver="fenced", workers=3
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"colour": "red"}, "it has an unknown field 'colour'"),
        ({"workers": 2.0}, "field 'workers' must be a whole number, not 2.0"),
        ({"worker_check": "yes"}, "field 'worker_check' must be true or false"),
        ({"receiver": "r" * 41}, "field 'receiver' must be a name of at most 40 characters"),
        ({"receiver": "\x1b[2J"}, "field 'receiver' holds control characters"),
        ({"workers": 99}, "out of range"),
        ({"receiver": "quorum"}, "receiver 'quorum' is not known"),
    ],
)
def test_each_settings_refusal_names_the_field(data: dict[str, Any], message: str) -> None:
    with pytest.raises(LabInputError) as refused:
        settings_of(data)
    assert message in str(refused.value) and _library_free(str(refused.value))


# ----- lab histories ------------------------------------------------------------------------


def _history(change: Change) -> dict[str, Any]:
    data = json.loads(history_to_json(paused_worker("none", "accepted")))
    change(data)
    return data


def test_a_valid_history_is_read_with_its_events_as_written() -> None:
    history = history_from_dict(_history(lambda d: None))
    assert history.events == paused_worker("none", "accepted").events


def test_every_event_field_the_lab_writes_has_a_row() -> None:
    written = {name for event in paused_worker("none", "accepted").events for name in event}
    assert written <= set(EVENT_FIELDS)


HISTORY_CATALOGUE: dict[str, tuple[Change, str]] = {
    "unknown top field": (lambda d: d.update(colour=1), "the history: it has an unknown field"),
    "unknown event field": (
        lambda d: d["events"][2].update(colour=1),
        "event 3 (grant) of the history: it has an unknown field 'colour'",
    ),
    "unknown measured figure": (
        lambda d: d.update(measured={"latency": 1}),
        "the history's measured figures: it has an unknown field 'latency'",
    ),
    "event worker as text": (
        lambda d: d["events"][2].update(worker="W1"),
        "event 3 (grant) of the history: field 'worker' must be a whole number, not 'W1'",
    ),
    "event time out of range": (
        lambda d: d["events"][7].update(t=4000),
        "event 8 (grant) of the history: field 't' must be from 0 to 3600 seconds, not 4000",
    ),
    "event kind unknown": (
        lambda d: d["events"][2].update(kind="teleport"),
        "event 3 of the history: it has an unknown kind 'teleport'",
    ),
    "started with an escape": (
        lambda d: d.update(started="\x1b[31m"),
        "the history: field 'started' holds control characters",
    ),
    "prediction verdict count as text": (
        lambda d: d.update(
            prediction={
                "summary": "s",
                "accepted": 0,
                "rejected": 0,
                "sentences": [],
                "properties": {f"P{n}": {"violated": False, "count": "1"} for n in range(1, 7)},
            }
        ),
        "the history's prediction: field 'count' must be a whole number",
    ),
}


@pytest.mark.parametrize("name", sorted(HISTORY_CATALOGUE))
def test_each_history_refusal_names_the_event_and_field(name: str) -> None:
    change, message = HISTORY_CATALOGUE[name]
    with pytest.raises(LabInputError) as refused:
        history_from_dict(_history(change))
    assert message in str(refused.value) and _library_free(str(refused.value))


def test_the_history_limits_are_hit_before_the_schema() -> None:
    """Too many values for the reader: refused by counting, before a schema sees the file."""
    events = ",".join(["{}"] * (MAX_HISTORY_VALUES // 2 + 1))
    text = json.dumps(_history(lambda d: d.update(events=[]))).replace(
        '"events": []', f'"events": [{events}]'
    )
    with pytest.raises(LabInputError, match="holds too many values"):
        history_from_json(text)
