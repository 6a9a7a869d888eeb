"""Unit tests of the exercises: the TOML schema with line numbers, grading, progress, summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from classroom import grading as exercise_grading
from classroom.data import Exercise, ExerciseSetError
from classroom.grading import (
    check_break,
    check_break_trace,
    check_fix,
    check_predict,
    fixed_design,
    offered_values,
    verdicts,
)
from classroom.progress import Attempt, Progress, summary_json, summary_markdown
from classroom.sets import (
    DEFAULT_SET,
    MAX_SET_BYTES,
    decode_upload,
    folder_sets,
    key_line,
    load_set,
    parse_set,
)
from model.check.explorer import explore
from model.design import Bounds, Design, DesignError
from model.formats.trace import replay
from model.options import BY_OPTION, Kind
from model.rules import Action

GOOD = """title = "Mini"

[[exercise]]
id = "p"
kind = "predict"
title = "Predict"
prompt = "Which hold?"
preset = "fencing"
hints = ["one", "two"]

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
options = ["receiver"]

[exercise.design]
receiver = "none"
"""

SEED = (
    Action("Acquire", 1),
    Action("Send", 1),
    Action("Tick"),
    Action("Tick"),
    Action("Deliver", 1),
)


def problems(text: str) -> list[str]:
    """The problem texts of a set that must be refused."""
    with pytest.raises(ExerciseSetError) as caught:
        parse_set(text)
    return [p.text() for p in caught.value.problems]


def test_a_good_set_parses() -> None:
    found = parse_set(GOOD)
    assert [e.kind for e in found.exercises] == ["predict", "break", "fix"]
    fix = found.by_id("f")
    assert (
        fix is not None and fix.design == Design(receiver="none") and fix.options == ("receiver",)
    )


def test_syntax_errors_carry_the_line() -> None:
    broken = GOOD.replace("max_steps = 6", "max_steps = = 6")
    [text] = problems(broken)
    assert text.startswith("line 18: TOML syntax")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "max_steps = 6",
            "max_steps = 600",
            'line 18: exercise 2 ("b"), field `max_steps`: must be a whole number from 1 to 60',
        ),
        ('kind = "break"', 'kind = "guess"', 'line 13: exercise 2 ("b"), field `kind`: is "guess"'),
        ('property = "P2"', 'property = "P9"', 'line 17: exercise 2 ("b"), field `property`'),
        (
            "workers = 2, horizon",
            "workers = 9, horizon",
            'line 19: exercise 2 ("b"), field `bounds.workers`: workers = 9 is out of range',
        ),
        (
            'receiver = "none"',
            'receiver = "teapot"',
            'line 30: exercise 3 ("f"), field `design.receiver`',
        ),
        (
            'preset = "fencing"',
            'preset = "fencin"',
            'line 8: exercise 1 ("p"), field `preset`: "fencin" is not a preset',
        ),
        ('hints = ["one", "two"]', 'hints = "one"', 'line 9: exercise 1 ("p"), field `hints`'),
        (
            'prompt = "Fix P1"',
            'promtp = "Fix P1"',
            'exercise 3 ("f"): `prompt` is missing: every exercise needs it',
        ),
        (
            'options = ["receiver"]',
            'options = ["__import__"]',
            'line 27: exercise 3 ("f"), field `options`',
        ),
        ('id = "b"', 'id = "p"', 'line 12: exercise 2 ("p"), field `id`: "p" is used twice'),
        ('title = "Mini"', "title = 3", "line 1: field `title`: must be text in quotes"),
    ],
)
def test_schema_errors_name_the_line_and_field(old: str, new: str, expected: str) -> None:
    assert old in GOOD
    found = problems(GOOD.replace(old, new, 1))
    assert any(expected in text for text in found), found


def test_unknown_fields_and_empty_sets_are_refused() -> None:
    found = problems(GOOD.replace("max_steps = 6", 'max_steps = 6\ncode = "os.system(1)"'))
    assert any("line 19" in t and "`code`: is not a known field" in t for t in found)
    assert any("add at least one [[exercise]]" in t for t in problems('title = "x"\n'))


def test_uploads_too_large_or_not_utf8_are_refused() -> None:
    with pytest.raises(ExerciseSetError, match=f"limit is {MAX_SET_BYTES:,} bytes"):
        decode_upload(b"#" * (MAX_SET_BYTES + 1))
    with pytest.raises(ExerciseSetError, match="not UTF-8"):
        decode_upload(b"title = '\xff'")
    assert decode_upload(b"title = 'x'") == "title = 'x'"


def test_key_line_finds_inline_and_sub_table_keys() -> None:
    assert key_line(GOOD, 1, "horizon") == 19
    assert key_line(GOOD, 2, "receiver") == 30
    assert key_line(GOOD, 0, "missing") == 3
    assert key_line(GOOD, None, "title") == 1


def test_predict_is_graded_by_the_explorer() -> None:
    exercise = parse_set(GOOD).exercises[0]
    found = verdicts(exercise.design, exercise.bounds)
    assert found.holds == ("P1", "P3", "P4") and found.vacuous == ("P5", "P6")
    right = check_predict(exercise, ["P1", "P3", "P4"], found)
    assert right.correct and right.message.startswith(
        "Right: the design keeps P1, P3, P4; P2 fails."
    )
    # a property nothing puts to the test is its own answer: ticking it is not wrong, and why
    assert check_predict(exercise, ["P1", "P3", "P4", "P5", "P6"], found).correct
    assert (
        "P5 and P6 are never put to the test in this design (the workers write blind (they "
        "never read before they write); nothing in this design ever crashes), so they hold "
        "only vacuously." in right.message
    )
    wrong = check_predict(exercise, ["P1", "P2", "P3", "P4", "P5", "P6"], found)
    assert not wrong.correct
    assert "1 of the 4 properties this design puts to the test is misjudged" in wrong.message
    only_p4 = check_predict(exercise, ["P4"], found)
    assert "2 of the 4 properties this design puts to the test are misjudged" in only_p4.message


def test_break_replays_the_run() -> None:
    exercise = parse_set(GOOD).exercises[1]
    right = check_break(exercise, SEED)
    assert right.correct and "step 5" in right.message
    assert not check_break(exercise, SEED[:4]).correct
    assert "at most 6" in check_break(exercise, SEED + (Action("Tick"),) * 2).message
    assert "cannot be replayed" in check_break(exercise, (Action("Deliver", 1),)).message
    assert check_break_trace(exercise, replay(exercise.design, exercise.bounds, SEED)).correct
    other = replay(Design(), exercise.bounds, SEED)
    assert "another design" in check_break_trace(exercise, other).message


def test_fix_is_graded_and_only_allowed_options_change() -> None:
    exercise = parse_set(GOOD).exercises[2]
    before = verdicts(exercise.design, exercise.bounds)
    fenced = fixed_design(exercise, {"receiver": "fenced"})
    assert check_fix(exercise, fenced, before, verdicts(fenced, exercise.bounds)).correct
    strict = fixed_design(exercise, {"receiver": "fenced-strict"})
    lost = check_fix(exercise, strict, before, verdicts(strict, exercise.bounds))
    assert not lost.correct and "loses what held before: P4" in lost.message
    assert "original design" in check_fix(exercise, exercise.design, before, before).message
    with pytest.raises(DesignError, match="only receiver"):
        fixed_design(exercise, {"token": "random"})


def test_progress_reveals_a_hint_per_wrong_answer_and_summarises() -> None:
    found = parse_set(GOOD)
    exercise = found.exercises[0]
    progress = Progress()
    assert progress.hints(exercise) == ()
    progress = progress.record(Attempt("p", "P1", False, "no"))
    assert progress.hints(exercise) == ("one",)
    progress = progress.record(Attempt("p", "P1 | P3", False, "no"))
    progress = progress.record(Attempt("p", "P1, P3, P4, P5", True, "yes"))
    assert progress.solved("p") and progress.wrong("p") == 2
    text = summary_markdown(found, progress, student="Ada")
    assert "Solved 1 of 3" in text and "| Predict | predict | yes | 3 | 2 |" in text
    assert "P1 / P3" in text
    data = json.loads(summary_json(found, progress, student="Ada"))
    assert data["exercises"][0]["solved"] and len(data["answers"]) == 3


def test_the_default_set_is_valid_and_every_exercise_is_solvable() -> None:
    found = load_set(DEFAULT_SET)
    assert len(found.exercises) >= 9
    assert {e.kind for e in found.exercises} == {"predict", "break", "fix"}
    answers = {
        "lease-fix-p1": {"receiver": "fenced"},
        "key-version-fix-p3": {"token": "counter"},
        "rmw-fix-p5": {"fenced_reads": True},
        "no-lease-fix-p6": {"expiry": "lease", "receiver": "lease-aware"},
    }
    for exercise in found.exercises:
        truth = verdicts(exercise.design, exercise.bounds)
        assert truth.complete
        if exercise.kind == "break":
            result = explore(exercise.design, exercise.bounds)
            actions = result.verdicts[exercise.prop].actions
            assert actions is not None and len(actions) <= exercise.max_steps
            assert check_break(exercise, actions).correct
        if exercise.kind == "fix":
            design = fixed_design(exercise, answers[exercise.id])
            assert check_fix(exercise, design, truth, verdicts(design, exercise.bounds)).correct


def test_folder_sets_load_each_file_or_report_it(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "b.toml").write_text("title = ", encoding="utf-8")
    loaded = folder_sets(tmp_path)
    assert [p.name for p, _ in loaded] == ["a.toml", "b.toml"]
    assert not isinstance(loaded[0][1], ExerciseSetError)
    assert isinstance(loaded[1][1], ExerciseSetError)


UNSOLVABLE = """title = "Broken on purpose"

[[exercise]]
id = "break-p1-fencing"
kind = "break"
title = "Break P1 under fencing"
prompt = "Make a lower token land after a higher one."
preset = "fencing"
property = "P1"
max_steps = 20

[[exercise]]
id = "fix-p4-fencing"
kind = "fix"
title = "Fix P4 in fencing"
prompt = "Stop refusing the holder."
preset = "fencing"
property = "P4"

[[exercise]]
id = "too-few-steps"
kind = "break"
title = "P1 in four steps"
prompt = "Violate P1."
preset = "lease-only"
property = "P1"
max_steps = 4

[[exercise]]
id = "no-fix-from-the-worker"
kind = "fix"
title = "Fix P1 from the worker side"
prompt = "Make P1 hold by changing only what the worker does."
preset = "lease-only"
property = "P1"
options = ["worker_check"]
"""


def test_unsolvable_exercises_are_refused_at_load_with_the_model_reason() -> None:
    """Every exercise is checked with the model when the set loads; all reasons at once."""
    found = problems(UNSOLVABLE)
    expected = {
        "break-p1-fencing": "P1 holds in this design at these bounds, so there is no run",
        "fix-p4-fencing": "P4 already holds in this design at these bounds: nothing to fix",
        "too-few-steps": "the shortest run that breaks P1 has 8 steps, more than max_steps = 4",
        "no-fix-from-the-worker": "no change of worker_check makes P1 hold",
    }
    for exercise_id, reason in expected.items():
        assert any(exercise_id in text and reason in text for text in found), (exercise_id, found)
    assert len(found) == 4


def test_a_duplicate_id_is_reported_even_with_other_errors() -> None:
    """The duplicate is named although the second exercise has another error too."""
    text = GOOD.replace('id = "b"', 'id = "p"', 1).replace("max_steps = 6", "max_steps = 600")
    found = problems(text)
    assert any('"p" is used twice' in t for t in found), found
    assert any("max_steps" in t for t in found), found


def test_the_default_set_passes_the_solvability_check() -> None:
    """Loading the default set runs the same check (it would raise otherwise)."""
    assert len(load_set(DEFAULT_SET).exercises) == 14


def test_the_p6_exercises_strand_a_crashed_holder_and_need_more_than_fencing_to_fix() -> None:
    """Predict: a lock without a lease keeps P1..P5 and loses only P6. Break: the model's
    shortest stranding (Acquire, Crash, L + 1 Ticks) is accepted. Fix: a lease with a fencing
    receiver frees the lock but loses P2; a receiver that checks the live lease keeps it all."""
    found = load_set(DEFAULT_SET)
    predict = found.by_id("no-lease-predict")
    strand = found.by_id("no-lease-break-p6")
    fix = found.by_id("no-lease-fix-p6")
    assert predict is not None and strand is not None and fix is not None
    truth = verdicts(predict.design, predict.bounds)
    assert check_predict(predict, ["P1", "P2", "P3", "P4", "P5"], truth).correct
    assert not check_predict(predict, ["P1", "P2", "P3", "P4", "P5", "P6"], truth).correct
    stranding = (
        Action("Acquire", 1),
        Action("Crash", 1),
        *(Action("Tick") for _ in range(strand.bounds.lease + 1)),
    )
    assert len(stranding) == strand.max_steps
    feedback = check_break(strand, stranding)
    assert feedback.correct and "step 5 (Tick) violates P6" in feedback.message
    assert not check_break(strand, stranding[:-1]).correct  # L ticks: not yet overdue
    original = verdicts(fix.design, fix.bounds)
    fenced = fixed_design(fix, {"expiry": "lease", "receiver": "fenced"})
    lost = check_fix(fix, fenced, original, verdicts(fenced, fix.bounds))
    assert not lost.correct and "loses what held before: P2 in 5 steps" in lost.message
    lease_only = fixed_design(fix, {"expiry": "lease"})
    assert (
        "P1 in 8 steps"
        in check_fix(fix, lease_only, original, verdicts(lease_only, fix.bounds)).message
    )
    live = fixed_design(fix, {"expiry": "lease", "receiver": "lease-aware"})
    assert check_fix(fix, live, original, verdicts(live, fix.bounds)).correct
    with pytest.raises(DesignError, match="not crashes"):
        fixed_design(fix, {"crashes": 0})  # a crash cannot be fixed away by forbidding it


def _usable_values(exercise: Exercise, name: str) -> list[str]:
    """The values of an offered option that the model accepts with the exercise's design and
    that change it (a flag tried both ways, a choice every way)."""
    option = BY_OPTION[name]
    usable = []
    for value in option.values or (False, True):
        try:
            changed = exercise.design.with_changes({name: value})
        except DesignError:
            continue
        if changed != exercise.design:
            usable.append(str(value))
    return usable


def test_no_default_fix_exercise_offers_an_option_that_cannot_be_used() -> None:
    """A wrong answer costs a hint, so every option a fix exercise offers must change its
    design in some way the model accepts: never one refused for every value (renew on a lock
    without a lease) or one that changes nothing."""
    fixes = [e for e in load_set(DEFAULT_SET).exercises if e.kind == "fix"]
    assert fixes
    useless = [(e.id, name) for e in fixes for name in e.options if not _usable_values(e, name)]
    assert useless == []
    no_lease = load_set(DEFAULT_SET).by_id("no-lease-fix-p6")
    assert no_lease is not None and _usable_values(no_lease, "renew") == []


def test_an_answer_the_budget_cannot_grade_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    exercise = load_set(DEFAULT_SET).exercises[0]
    monkeypatch.setattr(exercise_grading, "_KNOWN", {})  # nothing known: the budget applies
    stopped = verdicts(exercise.design, Bounds(3, 3, 9, 4, 2), max_seconds=0.0)
    feedback = check_predict(exercise, [], stopped)
    assert not feedback.correct
    assert feedback.message.startswith(
        "This answer cannot be graded: the model check stopped at its budget of 300,000 states "
        "and 10 s (time budget of 0 s reached)"
    )


def test_a_fix_exercise_offers_only_the_values_an_answer_can_use() -> None:
    """Exercise 8's token chooser leaves out the volatile counter, refused without the
    coordinator restarts the exercise does not offer; every offered value is accepted by the
    model with some values of the other offered options, and the design's own is offered."""
    found = load_set(DEFAULT_SET)
    tokens = found.by_id("key-version-fix-p3")
    assert tokens is not None
    offered = offered_values(tokens, "token")
    assert "counter-volatile" not in offered and {"counter", "key-version"} <= set(offered)
    with pytest.raises(DesignError, match="coordinator_restarts"):
        tokens.design.with_changes({"token": "counter-volatile"})
    for exercise in (e for e in found.exercises if e.kind == "fix"):
        for name in exercise.options:
            if BY_OPTION[name].kind is not Kind.CHOICE:
                assert offered_values(exercise, name) == ()
                continue
            values = offered_values(exercise, name)
            assert str(getattr(exercise.design, name)) in values
            assert set(values) <= set(BY_OPTION[name].values)
