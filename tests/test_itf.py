"""ITF traces: every counterexample round-trips, and tampered documents are refused clearly."""

from __future__ import annotations

import json
from typing import Any

import pytest

from model.check.explorer import explore
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.formats.itf import is_itf, trace_from_any_json, trace_to_itf, trace_to_itf_json
from model.formats.trace import MAX_TRACE_BYTES, TraceError, replay, trace_to_json
from model.presets import PRESETS, PRESETS_LIST
from model.rules import Action


@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_every_counterexample_round_trips_through_itf(preset) -> None:
    """Each shortest counterexample, written as ITF and read back, is the same run."""
    result = explore(preset.design, REFERENCE_BOUNDS)
    for name, verdict in result.verdicts.items():
        if verdict.actions is None:
            continue
        trace = replay(preset.design, REFERENCE_BOUNDS, verdict.actions, f"Shortest {name}")
        document = trace_to_itf(trace)
        assert len(document["states"]) == verdict.shortest + 1
        assert document["states"][-1]["action"]["tag"] == verdict.actions[-1].name
        assert name in document["states"][-1]["violations"]["#set"]
        back = trace_from_any_json(json.dumps(document))
        assert back.actions == trace.actions and back.title == f"Shortest {name}"
        assert back.violated() == trace.violated()


def test_itf_document_shape() -> None:
    """`#meta`, `vars` and `states`; integers as #bigint; per-worker variables as maps."""
    trace = replay(Design(), Bounds(), [Action("Acquire", 1), Action("Send", 1)])
    document = trace_to_itf(trace)
    assert is_itf(document) and document["#meta"]["format"] == "ITF"
    assert document["vars"][:3] == ["action", "actor", "violations"]
    assert "hwm" in document["vars"] and "mark" not in document["vars"]  # unused: left out
    first, last = document["states"][0], document["states"][-1]
    assert first["action"] == {"tag": "Init", "value": None}
    assert last["action"]["tag"] == "Send" and last["actor"] == "W1"
    assert last["action"]["value"]["worker"] == {"#bigint": "1"}
    assert last["pending"] == {
        "#map": [[{"#bigint": "1"}, {"#bigint": "1"}], [{"#bigint": "2"}, {"#bigint": "0"}]]
    }
    assert [s["#meta"]["index"] for s in document["states"]] == [0, 1, 2]


def _document() -> dict[str, Any]:
    design = PRESETS["lease-only"].design
    actions = explore(design, REFERENCE_BOUNDS).verdicts["P2"].actions
    assert actions is not None
    return trace_to_itf(replay(design, REFERENCE_BOUNDS, actions))


def _set_now(document: dict[str, Any]) -> None:
    document["states"][2]["now"] = {"#bigint": "5"}


def _rename_action(document: dict[str, Any]) -> None:
    document["states"][2]["action"]["tag"] = "Teleport"


def _claim_violation(document: dict[str, Any]) -> None:
    document["states"][1]["violations"] = {"#set": ["P1"]}


def _drop_meta(document: dict[str, Any]) -> None:
    del document["#meta"]["fencing-lab"]


def _bad_field_name(document: dict[str, Any]) -> None:
    document["states"][1]["tok"] = {"not an identifier": 1}


def _start_elsewhere(document: dict[str, Any]) -> None:
    document["states"][0]["holder"] = {"#bigint": "1"}


def _skip_a_step(document: dict[str, Any]) -> None:
    del document["states"][1]


def _bad_bounds(document: dict[str, Any]) -> None:
    document["#meta"]["fencing-lab"]["bounds"]["workers"] = 50


@pytest.mark.parametrize(
    "change, message",
    [
        (_set_now, r"state 2 \(.*\): the file says now=5 but replaying gives"),
        (_rename_action, "state 2: unknown action 'Teleport'"),
        (_claim_violation, "state 1 .* violations=frozenset"),
        (_drop_meta, "no '#meta.fencing-lab' entry"),
        (_bad_field_name, "the ITF trace is malformed"),
        (_start_elsewhere, r"state 0 \(initial state\): the file says holder=1"),
        (_skip_a_step, "is not enabled"),
        (_bad_bounds, "design or bounds are invalid: workers = 50"),
    ],
)
def test_tampered_itf_is_refused_naming_the_state(change, message: str) -> None:
    """A document that differs from the model's replay names the first state that differs."""
    document = _document()
    change(document)
    with pytest.raises(TraceError, match=message):
        trace_from_any_json(json.dumps(document))


def test_both_formats_are_read_with_the_same_bounds() -> None:
    """The project's own format still loads; oversized or non-JSON input is refused first."""
    trace = replay(Design(), Bounds(), [Action("Acquire", 1)])
    assert trace_from_any_json(trace_to_json(trace)).actions == trace.actions
    assert trace_from_any_json(trace_to_itf_json(trace)).actions == trace.actions
    with pytest.raises(TraceError, match="the limit is 1,000,000 bytes"):
        trace_from_any_json(b" " * (MAX_TRACE_BYTES + 1))
    with pytest.raises(TraceError, match="not valid JSON"):
        trace_from_any_json("{states:")
    with pytest.raises(TraceError, match="too deeply"):
        trace_from_any_json("[" * 100_000 + "]" * 100_000)
