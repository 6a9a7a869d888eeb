"""The exercise-set format: one field table drives the checks and docs/exercises.md, every
problem of a file is reported at once in plain words, and the template set is good."""

from __future__ import annotations

from pathlib import Path

import pytest

from classroom.data import ExerciseSetError
from classroom.schema import (
    EXERCISE_FIELDS,
    KINDS,
    SET_FIELDS,
    TEMPLATE_SET,
    reference_markdown,
)
from classroom.sets import parse_set
from model.properties import PROPERTY_NAMES

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "exercises.md"

FIVE_GUESSES = """title = "Guesses"

[[exercise]]
type = "break"
question = "Break P2"
title = "B"
prompt = "p"
design = { receiver = "teapot" }
property = "P2"
"""
"""A first attempt at a set: `type` and `question` instead of `kind` and `prompt`, a wrong
design value, no `id` and no `max_steps`."""


def problems(text: str) -> list[str]:
    """The problem texts of a set that must be refused."""
    with pytest.raises(ExerciseSetError) as caught:
        parse_set(text)
    return [p.text() for p in caught.value.problems]


def test_the_committed_doc_is_the_generated_one() -> None:
    assert DOC.read_text(encoding="utf-8") == reference_markdown(), (
        "docs/exercises.md is stale: write it with `fencing exercises doc > docs/exercises.md`"
    )


def test_the_doc_lists_every_field_property_and_kind() -> None:
    doc = reference_markdown()
    for spec in (*SET_FIELDS, *EXERCISE_FIELDS):
        assert f"| `{spec.name}` |" in doc, spec.name
    for name in PROPERTY_NAMES:
        assert f"| `{name}` |" in doc, name
    for kind in KINDS:
        assert f'kind = "{kind}"' in doc, kind


def test_the_template_has_one_good_exercise_of_each_kind() -> None:
    found = parse_set(TEMPLATE_SET.read_text(encoding="utf-8"))
    assert sorted(e.kind for e in found.exercises) == sorted(KINDS)


def test_every_problem_of_a_first_attempt_is_reported_at_once() -> None:
    found = problems(FIVE_GUESSES)
    joined = "\n".join(found)
    assert "field `type`: is not a known field" in joined
    assert "field `question`: is not a known field" in joined
    assert "field `design.receiver`" in joined and "teapot" in joined
    assert "`kind` is missing: every exercise needs it" in joined
    assert "`id` is missing: every exercise needs it" in joined
    assert all("None" not in text for text in found), found


def test_missing_fields_of_a_kind_say_which_kind_needs_them() -> None:
    text = FIVE_GUESSES.replace("type =", 'id = "b"\nkind =').replace("question =", "hint =")
    found = problems(text.replace('design = { receiver = "teapot" }', 'preset = "lease-only"'))
    assert any("`max_steps` is missing: break exercises need it" in t for t in found), found
    assert any("field `hint`: is not a known field" in t for t in found), found
    assert all("None" not in t for t in found), found


def test_a_missing_design_and_a_missing_property_are_named() -> None:
    text = 'title = "x"\n\n[[exercise]]\nid = "f"\nkind = "fix"\ntitle = "t"\nprompt = "p"\n'
    found = problems(text)
    assert any("`preset` or `design` is missing" in t for t in found), found
    assert any("`property` is missing: fix exercises need it" in t for t in found), found
    assert all(t.startswith("line 3: exercise 1") for t in found), found


def test_values_the_model_refuses_are_shown_as_the_file_writes_them() -> None:
    text = (
        'title = "x"\n\n[[exercise]]\nid = "a"\nkind = "predict"\ntitle = "t"\nprompt = "p"\n'
        'design = { receiver = true }\nbounds = { workers = "two" }\n'
    )
    found = problems(text)
    assert any("receiver = true is not known" in t for t in found), found
    assert any('not "two"' in t for t in found), found
    assert all("True" not in t and "'two'" not in t for t in found), found
