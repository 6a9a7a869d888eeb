"""Every sentence agrees with the step it tells: narrated outcomes against the model's own.

Each preset's shortest counterexample to each property, at the reference bounds and at a
smaller one, is narrated step by step; the step's recorded `outcome` (what the receiver's
rule did) is the independent witness every sentence and every violation reason is checked
against, and every comparison a sentence quotes is recomputed from its own numbers.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import cache

import pytest

from fencing.stories import paused_worker_story
from model.check.explorer import explore
from model.design import REFERENCE_BOUNDS, Bounds
from model.formats.trace import Step, Trace, replay
from model.presets import PRESETS_LIST
from model.properties import BY_NAME
from webapp.show.chapters import CHAPTERS, RunSpec, build_run

SMALL_BOUNDS = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)
BOUNDS = {"reference": REFERENCE_BOUNDS, "small": SMALL_BOUNDS}

COMPARISON = re.compile(
    r"(passes|passed|fails): token (\d+) (≥|>|=) (?:highest token seen|mark) (\d+)( is false)?"
)
"""`test passes: token 2 ≥ highest token seen 1` or `test fails: token 1 ≥ … 2 is false`."""
OPERATORS: dict[str, Callable[[int, int], bool]] = {
    "≥": operator.ge,
    ">": operator.gt,
    "=": operator.eq,
}
ACCEPTED_WORDS = (" is accepted at",)
REJECTED_WORDS = (" is rejected at",)
FAILED_TEST_WORDS = ("test fails", "is false", "and it is not")
PASSED_TEST_WORDS = ("test passes", "test passed", ": passes")
LANDING_WORDS = ("lands", "applies it")
PROPERTY_OUTCOMES = {"P1": "accepted", "P2": "accepted", "P3": "accepted", "P4": "rejected"}
"""The receiver's outcome each property's violation is about (P5 is about an accepted write;
a property checked on every Tick is about no reception at all)."""


@cache
def _counterexamples(bounds_name: str) -> tuple[tuple[str, Trace], ...]:
    """(label, trace) for every preset's shortest counterexample to every property."""
    bounds = BOUNDS[bounds_name]
    found = []
    for preset in PRESETS_LIST:
        for name, verdict in explore(preset.design, bounds).verdicts.items():
            if verdict.violated and verdict.actions is not None:
                trace = replay(preset.design, bounds, verdict.actions)
                found.append((f"{preset.name} {name} at {bounds.short()}", trace))
    return tuple(found)


def contradictions(trace: Trace) -> Iterator[str]:
    """Every place where a step's sentence or reasons say something its outcome denies."""
    for step in trace.steps:
        yield from (f"step {step.number}: {problem}" for problem in _step_problems(trace, step))


def _step_problems(trace: Trace, step: Step) -> Iterator[str]:
    """What is wrong with one step's words, given the model's outcome of that step."""
    text = step.sentence
    told = " ".join([text, *(reason.text for reason in step.reasons)])
    outcome = step.outcome
    says_accepted = any(word in text for word in ACCEPTED_WORDS)
    says_rejected = any(word in told for word in REJECTED_WORDS)
    if (outcome == "accepted") != says_accepted:
        yield f"outcome {outcome}, yet the sentence says accepted={says_accepted}: {text}"
    if (outcome == "rejected") != says_rejected:
        yield f"outcome {outcome}, yet the words say rejected={says_rejected}: {told}"
    if (outcome == "read") != ("returns version" in text):
        yield f"outcome {outcome}, yet the sentence says a read returned or not: {text}"
    if outcome in ("accepted", "checked", "read") and any(w in told for w in FAILED_TEST_WORDS):
        yield f"outcome {outcome}, yet a test is said to fail: {told}"
    if outcome == "rejected" and any(w in told for w in (*PASSED_TEST_WORDS, *LANDING_WORDS)):
        yield f"a rejected request said to pass its test or land: {told}"
    if outcome == "checked" and "test passes" not in text and "binds itself" not in text:
        yield f"a checked request without the test it passed: {text}"
    for verb, token, test, mark, false in COMPARISON.findall(told):
        holds = OPERATORS[test](int(token), int(mark))
        if holds != (verb != "fails") or holds == bool(false):
            yield f"`{verb}: token {token} {test} {mark}{false}` contradicts its numbers"
    for reason in step.reasons:
        on_tick = BY_NAME[reason.prop].on_tick  # a Tick is no reception: it has no outcome
        wanted = None if on_tick else PROPERTY_OUTCOMES.get(reason.prop, "accepted")
        if outcome != wanted:
            yield f"{reason.prop} reason on a step whose outcome is {outcome}: {reason.text}"
    yield from _token_problems(trace, step)


def _token_problems(trace: Trace, step: Step) -> Iterator[str]:
    """A request that carries no token (an unfenced read) is never said to carry one."""
    w = step.action.worker
    if step.action.name not in ("Send", "Deliver") or not w:
        return
    system = trace.system
    s = system.view(step.before)
    carries = system.builder.checks_reads() or bool(system.builder.is_write(s, w))
    if carries != ("carrying token" in step.sentence):
        yield f"carries a token={carries}, yet the sentence says otherwise: {step.sentence}"


@pytest.mark.parametrize("bounds_name", sorted(BOUNDS))
def test_no_counterexample_step_contradicts_its_own_outcome(bounds_name: str) -> None:
    runs = _counterexamples(bounds_name)
    assert len(runs) > 30  # every preset that fails something, at both bounds
    problems = [f"{label}, {p}" for label, trace in runs for p in contradictions(trace)]
    assert problems == []


def test_every_outcome_is_narrated_somewhere() -> None:
    """The counterexamples exercise every outcome, so the check above checks each of them."""
    runs = [trace for name in BOUNDS for _, trace in _counterexamples(name)]
    outcomes = {step.outcome for trace in runs for step in trace.steps}
    assert outcomes == {None, "accepted", "rejected", "checked", "read"}


@pytest.mark.parametrize(
    "spec", [spec for chapter in CHAPTERS for spec in chapter.runs], ids=lambda spec: spec.label
)
def test_no_walkthrough_step_contradicts_its_own_outcome(spec: RunSpec) -> None:
    assert list(contradictions(build_run(spec))) == []


def _with_sentence(trace: Trace, step: Step, sentence: str) -> Trace:
    """The trace with one step's sentence replaced (what a wrong narration would produce)."""
    steps = tuple(replace(s, sentence=sentence) if s is step else s for s in trace.steps)
    return replace(trace, steps=steps)


def test_the_checker_catches_the_inversions_it_is_for() -> None:
    """A served read told as rejected, an acceptance whose test fails, a rejection told with
    an acceptance's words: each is found, and the true sentences are not."""
    runs = dict(_counterexamples("reference"))
    lost_update = runs[f"rmw-fencing-unfenced-reads P5 at {REFERENCE_BOUNDS.short()}"]
    assert list(contradictions(lost_update)) == []
    read = next(step for step in lost_update.steps if step.outcome == "read")
    told_rejected = "W1's read carrying token 2 is rejected at t=2: the receiver's test fails."
    assert list(contradictions(_with_sentence(lost_update, read, told_rejected)))
    accepted = next(step for step in lost_update.steps if step.outcome == "accepted")
    inverted = accepted.sentence.replace("test passes", "test fails")
    assert inverted != accepted.sentence
    assert list(contradictions(_with_sentence(lost_update, accepted, inverted)))
    numbers_wrong = re.sub(r"seen \d", "seen 9", accepted.sentence)
    assert list(contradictions(_with_sentence(lost_update, accepted, numbers_wrong)))
    fixed = paused_worker_story("fenced").trace()
    rejected = next(step for step in fixed.steps if step.outcome == "rejected")
    landing = rejected.sentence + " The write lands though its grant was superseded."
    assert list(contradictions(_with_sentence(fixed, rejected, landing)))
