"""Every sentence agrees with the step it tells: narrated outcomes against the model's own.

Each preset's shortest counterexample to each property, at the reference bounds and at a
smaller one, is narrated step by step; the step's recorded `outcome` (what the receiver's
rule did) is the independent witness every sentence and every violation reason is checked
against, and every comparison a sentence quotes is recomputed from its own numbers.
"""

from __future__ import annotations

import operator
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import cache

import pytest

from fencing.stories import paused_worker_story
from model.actions import ActionKind
from model.check.explorer import explore
from model.design import REFERENCE_BOUNDS, Bounds, Expiry
from model.explain.narration import carries_token
from model.formats.trace import Step, Trace, replay
from model.layout import Vars
from model.presets import PRESETS_LIST
from model.properties import BY_NAME
from model.rules import lease_is_current
from webapp.show.chapters import CHAPTERS, RunSpec, build_run
from webapp.show.events import step_positions
from webapp.show.looks import PAUSED
from webapp.show.swimlane import (
    BAR_LOOKS,
    CRASH_BAR,
    LEASE_BAR,
    LOCK_BAR,
    PAST_LEASE_BAR,
    PAST_LOCK_BAR,
    PAUSE_BAR,
    Bar,
    Swimlane,
)
from webapp.show.trace_swimlane import trace_facts
from webapp.show.trace_swimlane import trace_facts as real_trace_facts

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


# ----- every label and legend entry of every chapter figure ---------------------------------

TOKEN_LABEL = re.compile(r"^(?:W(\d+): )?tok (\d+)$")
"""`W1: tok 1` on a grant, `tok 2` on a send."""
OUTCOME_LABEL = re.compile(r"^([✔✘!↩…]) ?(\d*)$")
"""`✔ 2` on an accepted write, `✘ 1` on a rejected one, `!` on a violating acceptance."""
GLYPH_OUTCOMES = {"✔": "accepted", "!": "accepted", "✘": "rejected", "↩": "read", "…": "checked"}
LEASE_WORDS = re.compile(r"\blease\b", re.IGNORECASE)


def _chapter_specs() -> list[RunSpec]:
    """Every run any chapter shows (a run beside another included)."""
    return [spec for chapter in CHAPTERS for spec in chapter.all_runs]


def _steps_within(trace: Trace, start: float, end: float, upto: int) -> list[Step]:
    """The steps shown (the first `upto`) drawn strictly inside the x range (start, end)."""
    positions = step_positions(trace)
    return [s for s in trace.steps[:upto] if start < positions[s.number - 1] < end]


def _steps_of(trace: Trace, kind: ActionKind, w: int, upto: int) -> list[Step]:
    """The shown steps of one kind taken by (or for) worker w."""
    return [s for s in trace.steps[:upto] if s.action.name is kind and s.action.worker == w]


def _has_work(trace: Trace, s: Vars, w: int) -> bool:
    """Whether worker w, in state s, has something a running worker would do before the
    next tick: a write (or read) still to send, or a lease to renew that runs out with it."""
    to_send = int(s.sent[w]) < trace.bounds.writes and not int(s.pending[w])
    renewal_due = trace.design.renew and int(s.expires) == int(s.now) + 1
    return to_send or bool(renewal_due and lease_is_current(s, w))


def _bar_problems(trace: Trace, facts: Swimlane, upto: int) -> Iterator[str]:
    """Each bar against the states it spans: a lease is current, a past lease is not, a lock
    without a lease says no lease, a pause is a holder with work it does not do, a crash is
    a worker that is down."""
    system = trace.system
    expires = trace.design.expiry is not Expiry.NEVER
    for bar in facts.bars:
        w = int(bar.lane.removeprefix("W"))
        inside = _steps_within(trace, bar.start, bar.end, upto)
        if not expires and LEASE_WORDS.search(bar.label):
            yield f"a lock without a lease has a bar saying {bar.label!r}"
        if bar.kind in (LEASE_BAR, LOCK_BAR):
            grant = re.search(r"#(\d+)", bar.label)
            if grant is None:
                yield f"a held lock's bar names no grant: {bar.label!r}"
                continue
            granted = [
                s
                for s in _steps_of(trace, ActionKind.ACQUIRE, w, upto)
                if int(system.view(s.after).gid[w]) == int(grant[1])
            ]
            if not granted:
                yield f"W{w}'s bar {bar.label!r} names a grant W{w} was never given"
                continue
            since = granted[-1].number if expires else 0  # a lease counts from its tick
            for step in (s for s in inside if s.number >= since):
                if not lease_is_current(system.view(step.after), w):
                    yield f"W{w}'s {bar.label!r} spans step {step.number}, where it is not current"
        elif bar.kind in (PAST_LEASE_BAR, PAST_LOCK_BAR):
            for step in inside:
                s = system.view(step.after)
                if lease_is_current(s, w) or not int(s.tok[w]):
                    yield f"W{w}'s {bar.label!r} spans step {step.number}, where that is untrue"
        elif bar.kind == PAUSE_BAR:
            ending = _steps_within(trace, bar.end - 1e-9, bar.end + 1e-9, upto)
            ticks = [s for s in (*inside, *ending) if s.action.name is ActionKind.TICK]
            if not ticks:
                yield f"W{w} drawn paused while no time passes"
            for step in ticks:
                s = system.view(step.before)
                if not int(s.tok[w]) or int(s.down[w]) or not _has_work(trace, s, w):
                    yield f"W{w} drawn paused across step {step.number}, where it has no work"
            worked = [s for s in inside if s.action.worker == w]
            if worked:
                yield f"W{w} drawn paused over its own step {worked[0].number}"
        elif bar.kind == CRASH_BAR and not _steps_of(trace, ActionKind.CRASH, w, upto):
            yield f"W{w} drawn crashed, yet it never crashed"


def _mark_problems(trace: Trace, facts: Swimlane, upto: int) -> Iterator[str]:
    """Each step's mark label against its step: the token granted or sent, the outcome."""
    system = trace.system
    positions = step_positions(trace)
    by_x = {positions[s.number - 1]: s for s in trace.steps[:upto]}
    for group in facts.groups:
        for mark in group.marks:
            step = by_x[mark.x]
            w = step.action.worker
            if token := TOKEN_LABEL.match(mark.label):
                state = step.after if step.action.name is ActionKind.ACQUIRE else step.before
                worker = int(token[1] or w)
                if worker != w or int(system.view(state).tok[w]) != int(token[2]):
                    yield f"step {step.number} labelled {mark.label!r}: W{w} holds another token"
            elif outcome := OUTCOME_LABEL.match(mark.label):
                if GLYPH_OUTCOMES[outcome[1]] != step.outcome:
                    yield f"step {step.number} labelled {mark.label!r}, outcome {step.outcome}"
                if (outcome[1] == "!") != bool(step.violations and step.outcome == "accepted"):
                    yield f"step {step.number} labelled {mark.label!r}: {step.violations}"
                if outcome[2] and int(system.view(step.before).tok[w]) != int(outcome[2]):
                    yield f"step {step.number} labelled {mark.label!r}: another token was sent"
            elif mark.label == "no tok" and carries_token(system, system.view(step.before), w):
                yield f"step {step.number} says no token, yet the request carries one"
            elif mark.label not in ("", "no tok"):
                yield f"step {step.number} has a label this check cannot read: {mark.label!r}"


def _legend_problems(trace: Trace, facts: Swimlane) -> Iterator[str]:
    """The legend against the whole run: each entry names something the run draws, and a lock
    without a lease has no lease in its legend or subtitle."""
    whole = trace_facts(trace)
    drawn = {BAR_LOOKS[bar.kind].name for bar in whole.bars}
    drawn |= {group.look.name for group in whole.groups if group.marks}
    drawn |= {"in the network"} if whole.requests else set()
    drawn |= {"gap"} if whole.spans else set()
    drawn |= {"current step"}
    for look in facts.legend:
        if look.name not in drawn:
            yield f"the legend has {look.name!r}, which the run never draws"
    if trace.design.expiry is Expiry.NEVER:
        for text in (facts.subtitle, *(look.name for look in facts.legend)):
            if LEASE_WORDS.search(text.replace("no lease", "")):
                yield f"a lock without a lease says {text!r}"
    elif f"a lease lasts {trace.bounds.lease} tick" not in facts.subtitle:
        yield f"the subtitle misstates the lease: {facts.subtitle!r}"


def figure_contradictions(trace: Trace) -> Iterator[str]:
    """Every label and legend entry of the run's figure, at every step, that its states deny."""
    for upto in range(len(trace.steps) + 1):
        facts = trace_facts(trace, upto)
        for problem in (
            *_bar_problems(trace, facts, upto),
            *_mark_problems(trace, facts, upto),
            *_legend_problems(trace, facts),
        ):
            yield f"after {upto} steps: {problem}"


@pytest.mark.parametrize("spec", _chapter_specs(), ids=lambda spec: spec.label)
def test_no_label_or_legend_entry_of_a_chapter_figure_contradicts_its_state(spec: RunSpec) -> None:
    assert list(figure_contradictions(build_run(spec))) == []


def _with_bars(trace: Trace, bars: Sequence[Bar]) -> Callable[[Trace, int | None], Swimlane]:
    """A facts builder that adds planted bars to every step's figure."""

    def planted(run: Trace, upto: int | None = None) -> Swimlane:
        facts = real_trace_facts(run, upto)
        return replace(facts, bars=(*facts.bars, *bars))

    return planted


def test_the_figure_checker_catches_what_it_is_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lease on a lock without one, a pause of an idle worker, a wrong token label and a
    legend entry the run never draws are each found; the true figure is not faulted."""
    no_lease = next(spec for spec in _chapter_specs() if spec.label == "No lease")
    trace = build_run(no_lease)
    assert list(figure_contradictions(trace)) == []
    module = sys.modules[__name__]
    monkeypatch.setattr(
        module, "trace_facts", _with_bars(trace, [Bar("W1", 0.0, 3.0, LEASE_BAR, "lease #1")])
    )
    assert any("without a lease" in p for p in figure_contradictions(trace))
    idle = Bar("W2", 4.0, 6.0, PAUSE_BAR, "❚❚ paused")  # W2 has crashed by then
    monkeypatch.setattr(module, "trace_facts", _with_bars(trace, [idle]))
    assert any("W2 drawn paused" in p for p in figure_contradictions(trace))
    monkeypatch.setattr(module, "trace_facts", real_trace_facts)
    fenced = build_run(next(spec for spec in _chapter_specs() if spec.label == "Fencing"))
    facts = real_trace_facts(fenced, None)
    grant = facts.groups[0]
    wrong = replace(grant, marks=(replace(grant.marks[0], label="W1: tok 7"), *grant.marks[1:]))

    def wrong_token(run: Trace, upto: int | None = None) -> Swimlane:
        shown = real_trace_facts(run, upto)
        return (
            replace(shown, groups=(wrong, *shown.groups[1:])) if upto == len(run.steps) else shown
        )

    monkeypatch.setattr(module, "trace_facts", wrong_token)
    assert any("W1: tok 7" in p for p in figure_contradictions(fenced))

    def extra_legend(run: Trace, upto: int | None = None) -> Swimlane:
        shown = real_trace_facts(run, upto)
        return replace(shown, legend=(*shown.legend, PAUSED)) if upto is not None else shown

    monkeypatch.setattr(module, "trace_facts", extra_legend)
    chapter_3 = build_run(CHAPTERS[3].runs[0])
    assert any("'paused'" in p for p in figure_contradictions(chapter_3))
