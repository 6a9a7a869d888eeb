"""Exercise sets read through the typed schemas of `model.formats.schemas`: one schema per part of a
set made from the field table, every refusal naming the exercise and the field in the
product's words, every problem of a set at once."""

from __future__ import annotations

import re

import msgspec
import pytest

from classroom.data import ExerciseSetError
from classroom.schema import (
    ANY_EXERCISE_SCHEMA,
    EXERCISE_FIELDS,
    EXERCISE_SCHEMAS,
    KINDS,
    SET_FIELDS,
    SET_SCHEMA,
    TEMPLATE_SET,
    keys_of,
)
from classroom.sets import parse_set
from model.formats.schemas import convert_each_field

GOOD = """title = "Schemas"
description = "Each part typed."

[[exercise]]
id = "p"
kind = "predict"
title = "Predict"
prompt = "Which hold?"
preset = "fencing"
hints = ["look at {fencing:P1}"]

[[exercise]]
id = "b"
kind = "break"
title = "Break"
prompt = "Break P2"
preset = "lease-only"
property = "P2"
max_steps = 6
bounds = { workers = 2, horizon = 6 }

[[exercise]]
id = "f"
kind = "fix"
title = "Fix"
prompt = "Fix P1"
property = "P1"
options = ["receiver", "receiver"]
keep = ["P3", "P2", "P3"]
design = { receiver = "none" }
"""

LIBRARY_WORDS = re.compile(r"Expected|`\$|\$\.|\bstr\b|\bint\b|array|regex|Object|msgspec|None")
"""What the schema library's own messages say: never part of a refusal."""


def problems(text: str) -> list[str]:
    """The problem texts of a set that must be refused."""
    with pytest.raises(ExerciseSetError) as caught:
        parse_set(text)
    return [p.text() for p in caught.value.problems]


def test_the_schemas_are_made_from_the_field_table() -> None:
    assert SET_SCHEMA.__struct_fields__ == tuple(s.name for s in SET_FIELDS)
    assert ANY_EXERCISE_SCHEMA.__struct_fields__ == tuple(s.name for s in EXERCISE_FIELDS)
    for kind in KINDS:
        assert EXERCISE_SCHEMAS[kind].__struct_fields__ == keys_of(kind)
    assert "max_steps" in EXERCISE_SCHEMAS["break"].__struct_fields__
    assert "max_steps" not in EXERCISE_SCHEMAS["fix"].__struct_fields__


def test_a_valid_set_reads_with_typed_values() -> None:
    found = parse_set(GOOD)
    assert found.title == "Schemas" and found.description == "Each part typed."
    assert [e.kind for e in found.exercises] == ["predict", "break", "fix"]
    predict, broken, fix = found.exercises
    assert predict.hints != () and "{fencing:P1}" not in predict.hints[0]
    assert broken.max_steps == 6 and broken.bounds.horizon == 6 and broken.prop == "P2"
    assert fix.options == ("receiver",) and fix.keep == ("P2", "P3")
    assert len(parse_set(TEMPLATE_SET.read_text(encoding="utf-8")).exercises) == 3


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "max_steps = 6",
            "max_steps = true",
            'exercise 2 ("b"), field `max_steps`: must be a whole number from 1 to 60, not true',
        ),
        (
            "max_steps = 6",
            "max_steps = 0",
            'exercise 2 ("b"), field `max_steps`: must be a whole number from 1 to 60, not 0',
        ),
        ('id = "b"', 'id = "B!"', 'exercise 2 ("B!"), field `id`: must be lower-case letters'),
        ('title = "Fix"', "title = 3", 'exercise 3 ("f"), field `title`: must be text in quotes'),
        ('title = "Fix"', "title = [1]", "not a list of 1 entries"),
        ('kind = "break"', 'kind = "guess"', 'exercise 2 ("b"), field `kind`: is "guess": use'),
        ('property = "P2"', 'property = "P0"', 'exercise 2 ("b"), field `property`: is "P0"'),
        ('preset = "fencing"', "preset = 7", 'exercise 1 ("p"), field `preset`: 7 is not a preset'),
        (
            'options = ["receiver", "receiver"]',
            'options = ["receiver", "os"]',
            'exercise 3 ("f"), field `options`: must be a non-empty list drawn from token',
        ),
        ('options = ["receiver", "receiver"]', "options = []", 'exercise 3 ("f"), field `options`'),
        ('keep = ["P3", "P2", "P3"]', 'keep = "P2"', 'exercise 3 ("f"), field `keep`: must be a'),
        (
            'hints = ["look at {fencing:P1}"]',
            "hints = [1]",
            'exercise 1 ("p"), field `hints`: must be a list of at most 10 texts',
        ),
        (
            "bounds = { workers = 2, horizon = 6 }",
            "bounds = 2",
            'exercise 2 ("b"), field `bounds`: must be a table such as',
        ),
        ('description = "Each part typed."', "description = 1", "field `description`: must be"),
    ],
)
def test_each_refusal_names_the_exercise_and_the_field(old: str, new: str, expected: str) -> None:
    assert old in GOOD
    found = problems(GOOD.replace(old, new, 1))
    assert any(expected in text for text in found), found
    assert not any(LIBRARY_WORDS.search(text) for text in found), found


def test_unknown_fields_are_refused_in_each_part() -> None:
    text = GOOD.replace('description = "', 'colour = "red"\ndescription = "', 1)
    text = text.replace("max_steps = 6", "max_steps = 6\nkeep = []\nrun = 1", 1)
    found = problems(text)
    assert any("field `colour`: is not a field of a set file: use title" in t for t in found)
    assert any(
        'exercise 2 ("b"), field `keep`: is not a field of a break exercise: use id' in t
        for t in found
    ), found
    assert any('exercise 2 ("b"), field `run`: is not a known field: use id' in t for t in found)
    assert len(found) == 3, found


def test_several_bad_exercises_give_a_sentence_each() -> None:
    text = (
        GOOD.replace('kind = "predict"', 'kind = "predict"\nmax_step = 3', 1)
        .replace("max_steps = 6", "max_steps = 61", 1)
        .replace('property = "P1"', "property = 1", 1)
    )
    found = problems(text)
    assert [t.split(",")[0].split(": ")[1] for t in found] == [
        'exercise 1 ("p")',
        'exercise 2 ("b")',
        'exercise 3 ("f")',
    ], found
    assert not any(LIBRARY_WORDS.search(text) for text in found), found


def test_every_bad_field_of_one_exercise_is_reported() -> None:
    text = GOOD.replace("max_steps = 6", "max_steps = 0", 1).replace(
        'property = "P2"', 'property = "P9"\nstep = 1', 1
    )
    found = [t for t in problems(text) if 'exercise 2 ("b")' in t]
    assert len(found) == 3, found
    assert {"field `max_steps`", "field `property`", "field `step`"} == {
        t.split(", ")[1].split(":")[0] for t in found
    }


def test_a_field_name_the_library_cannot_quote_is_named_anyway() -> None:
    found = problems(GOOD.replace('kind = "predict"', 'kind = "predict"\n"a`b" = 1', 1))
    assert any('exercise 1 ("p"), field `a`b`: is not a known field' in t for t in found), found


def test_converting_field_by_field_sets_each_refused_field_aside() -> None:
    class Pair(msgspec.Struct, forbid_unknown_fields=True):
        left: int | None = None
        right: int | None = None

    record, refusals = convert_each_field({"left": "x", "right": 2, "up": 1}, Pair, {})
    assert record == Pair(None, 2)
    assert [r.path for r in refusals] == [("left",), ("up",)]
    assert convert_each_field({"left": 1}, Pair, {}) == (Pair(1, None), [])
