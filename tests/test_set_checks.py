"""Unit tests of the set checks: one deadline for a whole set, verdicts kept only when
complete, and the background checker that checks a content once, under the heavy-work limit."""

from __future__ import annotations

import time

import pytest

from classroom import grading as exercise_grading
from classroom.data import ExerciseSet, ExerciseSetError
from classroom.grading import known_verdicts, verdicts
from classroom.sets import check_set_bytes, parse_set
from classroom.solvability import OutOfBudget, verdicts_by
from model.design import REFERENCE_BOUNDS, Bounds
from model.presets import PRESETS
from tests.slots import all_slots_taken
from webapp.jobs.set_checks import SetChecker

HEAVY_BOUNDS = ("horizon = 8", "horizon = 9", "horizon = 10")


def heavy_set(count: int = 3) -> str:
    """*fix* exercises no allowed change solves: checking each explores about forty designs."""
    tables = "".join(
        f"""
[[exercise]]
id = "fix-{number}"
kind = "fix"
title = "Fix {number}"
prompt = "p"
preset = "lease-only"
property = "P2"
options = ["token", "worker_check", "grant_fences", "workload"]
bounds = {{ workers = 3, lease = 3, {HEAVY_BOUNDS[number % 3]}, grants = 4, writes = 2 }}
"""
        for number in range(count)
    )
    return 'title = "Heavy"\n' + tables


SMALL_SET = (
    'title = "Small {n}"\n\n[[exercise]]\nid = "p"\nkind = "predict"\ntitle = "t"\n'
    'prompt = "p"\npreset = "fencing"\n'
)


def small_set(n: int) -> bytes:
    """A quick set whose title tells versions apart."""
    return SMALL_SET.replace("{n}", str(n)).encode()


@pytest.fixture
def no_known_verdicts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start with no verdicts known to the process, so every check explores."""
    monkeypatch.setattr(exercise_grading, "_KNOWN", {})


@pytest.mark.usefixtures("no_known_verdicts")
def test_a_set_past_its_budget_reports_the_unchecked_exercises_in_time() -> None:
    budget = 0.5
    started = time.perf_counter()
    with pytest.raises(ExerciseSetError) as refused:
        parse_set(heavy_set(), "heavy.toml", budget=budget)
    took = time.perf_counter() - started
    assert took < budget + 5.0  # unbounded, the check takes tens of seconds
    unchecked = [p for p in refused.value.problems if "could not be checked" in p.message]
    assert unchecked, [p.text() for p in refused.value.problems]
    assert unchecked[-1].where == 'exercise 3 ("fix-2")'
    assert "within the budget (0.5 s for the whole set)" in unchecked[-1].message
    assert unchecked[-1].line == heavy_set().splitlines().index("[[exercise]]", 20) + 1


@pytest.mark.usefixtures("no_known_verdicts")
def test_a_deadline_that_passed_explores_nothing_and_a_known_verdict_needs_no_time() -> None:
    design = PRESETS["fencing"].design
    with pytest.raises(OutOfBudget):
        verdicts_by(design, REFERENCE_BOUNDS, time.perf_counter() - 1)
    assert known_verdicts(design, REFERENCE_BOUNDS) is None
    found = verdicts(design, REFERENCE_BOUNDS)
    assert found.complete and known_verdicts(design, REFERENCE_BOUNDS) == found
    assert verdicts_by(design, REFERENCE_BOUNDS, time.perf_counter() - 1) == found


@pytest.mark.usefixtures("no_known_verdicts")
def test_a_stopped_exploration_is_not_kept() -> None:
    design, bounds = PRESETS["lease-only"].design, Bounds(3, 3, 9, 4, 2)
    stopped = verdicts(design, bounds, max_seconds=0.0)
    assert not stopped.complete and "time budget" in (stopped.stopped_by or "")
    assert known_verdicts(design, bounds) is None


def counting_checker() -> tuple[SetChecker, list[str]]:
    """A checker making the real check, recording the name of every set it checks."""
    checked: list[str] = []

    def check(data: bytes, source: str) -> ExerciseSet | ExerciseSetError:
        checked.append(source)
        return check_set_bytes(data, source)

    return SetChecker(check), checked


def test_a_content_is_checked_once_and_again_when_it_changes() -> None:
    checker, checked = counting_checker()
    try:
        assert checker.lookup(small_set(1), "a.toml") is None  # queued, not checked here
        assert checker.idle(timeout=60)
        first = checker.lookup(small_set(1), "a.toml")
        assert isinstance(first, ExerciseSet) and first.title == "Small 1"
        renamed = checker.lookup(small_set(1), "b.toml")
        assert isinstance(renamed, ExerciseSet) and renamed.source == "b.toml"
        assert checked == ["a.toml"] and checker.runs == 1
        assert checker.lookup(small_set(2), "a.toml") is None
        changed = checker.wait(small_set(2), "a.toml", timeout=60)
        assert isinstance(changed, ExerciseSet) and changed.title == "Small 2"
        assert checked == ["a.toml", "a.toml"] and checker.runs == 2
    finally:
        checker.close()


def test_a_refused_or_failing_set_is_a_result_too() -> None:
    checker, checked = counting_checker()
    try:
        refused = checker.wait(b'title = "x\n', "broken.toml", timeout=60)
        assert isinstance(refused, ExerciseSetError)
        assert "TOML syntax" in refused.problems[0].text()
        assert checker.lookup(b'title = "x\n', "broken.toml") == refused
        assert checked == ["broken.toml"]
    finally:
        checker.close()
    failing = check_set_bytes(b"\xff", "bad.toml")
    assert isinstance(failing, ExerciseSetError) and "not UTF-8" in failing.problems[0].text()


def test_the_background_check_waits_for_a_heavy_work_slot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checker, checked = counting_checker()
    try:
        with all_slots_taken(monkeypatch):
            assert checker.lookup(small_set(3), "c.toml") is None
            assert not checker.idle(timeout=0.5)
            assert checked == [] and checker.lookup(small_set(3), "c.toml") is None
        assert checker.idle(timeout=60)
        assert checked == ["c.toml"]
    finally:
        checker.close()


def test_close_stops_the_background_thread() -> None:
    checker, _ = counting_checker()
    checker.lookup(small_set(4), "d.toml")
    assert checker.working
    checker.close()
    assert not checker.working
    assert checker.lookup(small_set(5), "e.toml") is None  # closed: nothing more is queued


def test_a_file_changed_while_waiting_is_checked_only_in_its_last_content(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checker, checked = counting_checker()
    try:
        with all_slots_taken(monkeypatch):
            checker.lookup(small_set(6), "f.toml")
            for version in (7, 8, 9):
                assert checker.lookup(small_set(version), "g.toml") is None
        assert checker.idle(timeout=60)
        assert sorted(checked) == ["f.toml", "g.toml"]
        last = checker.lookup(small_set(9), "g.toml")
        assert isinstance(last, ExerciseSet) and last.title == "Small 9"
    finally:
        checker.close()
