"""The web app's plain functions: chapters' claims, the design form, verdicts, views."""

from __future__ import annotations

import pytest

from fencing.stories import paused_worker_story
from model.check.explorer import explore
from model.check.search import SearchOptions
from model.claims import citations
from model.design import REFERENCE_BOUNDS, Design, DesignError, Receiver
from model.presets import PRESETS
from model.rules import Action, lease_is_current
from webapp.content.chapters import source_line
from webapp.show.chapters import ATOMIC, BY_NUMBER, CHAPTERS, chapter_traces, choice_traces
from webapp.show.design_form import (
    bounds_from_values,
    design_from_values,
    parse_skew,
    values_of,
)
from webapp.show.events import pauses
from webapp.show.links import matching_preset
from webapp.show.story import run_summary
from webapp.show.verdicts import cell, difference, verdict_rows
from webapp.show.views import actor_rows, clamp_step, narration, opening_step


def _verdicts(preset: str) -> dict[str, bool]:
    """Whether each property is violated for a preset at the reference bounds."""
    exploration = explore(PRESETS[preset].design, REFERENCE_BOUNDS)
    return {name: v.violated for name, v in exploration.verdicts.items()}


def test_every_chapter_run_replays_and_has_steps() -> None:
    for chapter in CHAPTERS:
        traces = chapter_traces(chapter.number)
        assert len(traces) == len(chapter.all_runs) >= len(chapter.runs)
        assert all(trace.steps for trace in traces)
        for index, choice in enumerate(chapter.runs):
            shown = choice_traces(chapter.number, index)
            assert [t.title for t in shown] == [spec.label for spec in choice.shown()]


def test_chapter_1_lease_only_breaks_and_fencing_refuses() -> None:
    lease_only, fencing = chapter_traces(1)
    assert lease_only.violated() == ("P1", "P2", "P3")
    assert fencing.violated() == ()
    assert "rejected" in fencing.steps[7].sentence
    assert [spec.label for spec in BY_NUMBER[1].runs[0].shown()] == ["Lease only", "Fencing"]


def test_chapter_2_unchecked_tokens_do_nothing_and_the_worker_check_is_overtaken() -> None:
    worker_checks, checked, _, _ = chapter_traces(2)
    assert "P1" in worker_checks.violated()
    assert checked.actions == worker_checks.actions
    assert checked.violated() == ()
    assert "rejected" in checked.steps[-1].sentence
    # What the takeaway says: the worker's own check passed (it sent while its lease ran),
    # and the write was delayed in the network, not by a pause of the worker.
    late = worker_checks.first_violation("P1")
    assert late is not None and late.action.name == "Deliver"
    send = next(s for s in worker_checks.steps if s.action == Action("Send", late.action.worker))
    assert lease_is_current(worker_checks.system.view(send.before), send.action.worker)
    assert not lease_is_current(worker_checks.system.view(late.before), late.action.worker)
    assert "delayed in the network" in late.sentence
    assert not [p for p in pauses(worker_checks) if p.worker == late.action.worker]
    assert "delayed in the network between the check and the delivery" in BY_NUMBER[2].takeaway
    assert "pause" not in BY_NUMBER[2].takeaway


def test_chapter_2_teaches_atomicity_two_checks_against_one_mark_land_in_the_wrong_order() -> None:
    _, _, split, atomic = chapter_traces(2)
    assert split.design.receiver is Receiver.FENCED_NONATOMIC
    assert atomic.design == PRESETS["fencing"].design
    checks = [s for s in split.steps if s.outcome == "checked"]
    assert len(checks) == 2  # both writes pass the check...
    marks = {split.system.view(s.before).hwm for s in checks}
    assert len(marks) == 1  # ...against the same mark...
    applies = [s for s in split.steps if s.action.name == "Apply"]
    assert all(a.number > checks[-1].number for a in applies)  # ...before either is stored
    stored = [split.system.view(a.before).tok[a.action.worker] for a in applies]
    assert stored == sorted(stored, reverse=True)  # and the older token lands last
    assert {"P1", "P3"} <= set(split.violated())
    assert atomic.violated() == () and atomic.steps[-1].outcome == "rejected"
    words = BY_NUMBER[2].takeaway + " ".join(s.caption for s in BY_NUMBER[2].all_runs)
    assert "atomic" in words and ATOMIC in words
    assert ATOMIC.count(".") == 1  # one sentence


def test_chapter_3_claims_match_the_explorer() -> None:
    gap, lease_aware_gap, lost, fenced_reads, lease_aware = chapter_traces(3)
    assert gap.violated() == ("P2",)
    assert "P5" in lost.violated()
    assert fenced_reads.violated() == () and lease_aware.violated() == ()
    assert fenced_reads.actions == lost.actions == lease_aware.actions
    assert lease_aware_gap.violated() == ()
    assert _verdicts("fencing")["P2"]
    assert _verdicts("rmw-fencing-unfenced-reads")["P5"]
    fixed_reads = _verdicts("rmw-fencing-fenced-reads")
    assert not fixed_reads["P5"] and fixed_reads["P2"]  # fenced reads close P5, not P2
    both = _verdicts("rmw-lease-aware")
    assert not both["P2"] and not both["P5"]


def test_chapter_3_narration_matches_its_labels() -> None:
    """Reads without token are sent without one and leave the mark; fenced reads raise it."""
    _, _, lost, fenced_reads, _ = chapter_traces(3)
    reads = [s for s in lost.steps if s.outcome == "read"]
    sends = [s for s in lost.steps if s.action.name == "Send" and s.after != s.before]
    assert reads and all("carrying token" not in s.sentence for s in reads)
    assert any("without its token" in s.sentence for s in sends)
    assert all("stays at" in s.sentence for s in reads)
    new_holder_read = next(
        s for s in fenced_reads.steps if s.outcome == "read" and s.action.worker == 1
    )
    before, after = (
        fenced_reads.system.view(x).hwm for x in (new_holder_read.before, new_holder_read.after)
    )
    assert before < after and f"rises from {before} to {after}" in new_holder_read.sentence
    same = next(s for s in lost.steps if s.number == new_holder_read.number)
    assert same.sentence != new_holder_read.sentence


def test_chapter_4_numbers_keep_p1_but_lose_p3() -> None:
    key_version, counter, random_token, _, volatile = chapter_traces(4)
    for trace in (key_version, random_token, volatile):
        assert "P3" in trace.violated() and "P1" not in trace.violated()
    assert counter.actions == key_version.actions and counter.violated() == ()
    assert counter.steps[-1].outcome == "rejected"
    for preset in ("key-version-token", "random-token", "volatile-counter"):
        verdicts = _verdicts(preset)
        assert not verdicts["P1"] and verdicts["P3"]
    assert not _verdicts("fencing")["P3"]


def test_chapter_4_captions_say_what_their_runs_show() -> None:
    _, _, random_token, clock, volatile = chapter_traces(4)
    # a lease ID: the older grant's number is the larger one, and its stale write passes
    stale = random_token.first_violation("P3")
    assert stale is not None
    grants = [s for s in random_token.steps if s.action.name == "Acquire"]
    tokens = [random_token.system.view(g.after).tok[g.action.worker] for g in grants]
    assert tokens[0] > tokens[1]
    # a clock one tick ahead: W1's token is newer than the next grant's; the holder refused
    refused = clock.first_violation("P4")
    assert refused is not None and refused.outcome == "rejected"
    grants = [s for s in clock.steps if s.action.name == "Acquire"]
    first, second = (clock.system.view(g.after).tok[g.action.worker] for g in grants[:2])
    assert grants[0].action.worker == 1 and first > second
    assert clock.design.skews(clock.bounds.workers)[0] == 1  # W1's clock: one tick ahead
    # a failover: the counter starts again and the next grant reuses the old holder's token
    restart = next(s for s in volatile.steps if s.action.name == "CoordinatorRestart")
    assert volatile.system.view(restart.after).issued == 0
    grants = [s for s in volatile.steps if s.action.name == "Acquire"]
    old, new = (volatile.system.view(g.after).tok[g.action.worker] for g in grants[:2])
    assert old == new and grants[0].number < restart.number < grants[1].number
    stale = volatile.first_violation("P3")
    assert stale is not None and stale.outcome == "accepted"
    words = " ".join(s.caption for s in BY_NUMBER[4].all_runs)
    assert "durable" in words.lower() and "lease ID" in words and "clock" in words


def test_every_run_opens_on_the_step_that_matters() -> None:
    for chapter in CHAPTERS:
        for index in range(len(chapter.runs)):
            traces = choice_traces(chapter.number, index)
            start = opening_step(traces)
            assert start > 0
            violating = [t.first_violation(p) for t in traces for p in t.violated()]
            firsts = [s.number for s in violating if s is not None]
            if firsts:
                assert traces[0].steps[start - 1].violations or not traces[0].violated()
                assert start in firsts
            else:
                assert start == max(len(t.steps) for t in traces)


def test_a_replayed_run_says_what_it_replays_and_what_it_violates_there() -> None:
    for chapter in CHAPTERS:
        for spec, trace in zip(chapter.all_runs, chapter_traces(chapter.number), strict=True):
            line = source_line(spec, trace)
            assert "`" not in line
            if spec.replays_another_design or spec.in_one_step:
                assert line.startswith("The actions of the explorer's shortest counterexample")
                assert "replayed on this design" in line
                broken = trace.violated()
                assert (f"violate {', '.join(broken)}" if broken else "violate nothing") in line
            elif spec.counterexample_of is not None:
                assert line.startswith("The explorer's shortest counterexample")
                assert trace.first_violation(spec.counterexample_of[1]) is not None


def test_chapter_presets_exist() -> None:
    for chapter in CHAPTERS:
        assert all(name in PRESETS for name in chapter.presets)
    assert set(BY_NUMBER) == {0, 1, 2, 3, 4}


def test_design_form_round_trips_every_preset() -> None:
    for preset in PRESETS.values():
        assert design_from_values(values_of(preset.design)) == preset.design
        assert matching_preset(preset.design) == preset.name


def test_design_form_reports_bad_combinations_with_the_model_message() -> None:
    with pytest.raises(DesignError, match="storage_restarts"):
        design_from_values({"hwm": "volatile"})


@pytest.mark.parametrize("text", ["__import__('os')", "1;2", "1e3", "-1", "9999"])
def test_skew_text_is_parsed_never_evaluated(text: str) -> None:
    with pytest.raises(DesignError):
        parse_skew(text)


def test_skew_parses_numbers() -> None:
    assert parse_skew(" 1, 0 ") == (1, 0)
    assert parse_skew("") == ()
    assert design_from_values({"token": "local-clock", "skew": "2,0"}).skew == (2, 0)


def test_bounds_from_values_uses_defaults_and_limits() -> None:
    assert bounds_from_values({}).short() == "W=2 L=2 T=4 G=2 K=1"
    with pytest.raises(DesignError):
        bounds_from_values({"workers": 99})


def test_verdict_cells_and_difference() -> None:
    lease_only = explore(PRESETS["lease-only"].design, REFERENCE_BOUNDS)
    fencing = explore(PRESETS["fencing"].design, REFERENCE_BOUNDS)
    assert cell(fencing, "P2").startswith("✘ violated (5")
    assert cell(fencing, "P1") == "✔ holds"
    diff = difference(lease_only, fencing)
    assert diff.disappear == ("P1", "P3") and diff.remain == ("P2",) and diff.appear == ()
    assert f"{fencing.states:,}" in diff.state_change
    rows = verdict_rows({"a": lease_only})
    assert rows[0]["complete"] == "yes"


def test_incomplete_exploration_says_so() -> None:
    partial = explore(Design(), REFERENCE_BOUNDS, SearchOptions(max_states=50))
    assert not partial.complete
    assert cell(partial, "P1") == "? unknown (not finished)"
    assert verdict_rows({"x": partial})[0]["complete"].startswith("no")


@pytest.mark.parametrize(("raw", "expected"), [("3", 3), ("-2", 0), ("99", 9), ("x", 0), (None, 0)])
def test_clamp_step(raw: object, expected: int) -> None:
    assert clamp_step(raw, 9) == expected


def test_narration_marks_the_current_step() -> None:
    trace = paused_worker_story("none").trace()
    lines = narration(trace, 8)
    assert [line.number for line in lines if line.current] == [8]
    assert lines[7].outcome == "violating" and lines[7].reasons


def test_actor_rows_show_every_actor() -> None:
    trace = paused_worker_story("fenced").trace()
    rows = actor_rows(trace, 8)
    assert [r.actor for r in rows] == ["clock", "coordinator", "W1", "W2", "receiver"]
    assert "hwm=2" in rows[-1].variables
    assert rows[-1].words.startswith("highest token seen: 2")
    assert rows[2].words == "does not hold the lock"  # W1 gave up after the rejection
    assert actor_rows(trace, 5)[2].words.startswith(
        "believes it holds token 1 (grant #1), but grant #1 was superseded by grant #2 (W2)"
    )


def test_run_summary_counts_outcomes() -> None:
    assert "1 write accepted, 1 rejected" in run_summary(paused_worker_story("fenced").trace())


def test_matrix_cells_open_only_violations() -> None:
    from fencing.matrix import verdict_matrix
    from webapp.screens.compare_page import cell_at, matrix_cells

    presets = [PRESETS["lease-only"], PRESETS["fencing"]]
    matrix = verdict_matrix(REFERENCE_BOUNDS, presets)
    assert matrix_cells(matrix) == [
        "lease-only · P1",
        "lease-only · P2",
        "lease-only · P3",
        "fencing · P2",
    ]
    assert cell_at(matrix, 1, "P2") == "fencing · P2"
    assert cell_at(matrix, 1, "P1") is None
    assert cell_at(matrix, 0, "states") is None
    assert cell_at(matrix, 5, "P1") is None


def test_every_chapter_takeaway_cites_claims_the_page_shows() -> None:
    """A takeaway's verdict notes come from presets the chapter's table shows, at its bounds,
    and every one agrees with the explorer there."""
    for chapter in CHAPTERS:
        cited = citations(chapter.takeaway_template)
        assert cited, f"chapter {chapter.number} states no checkable verdict"
        assert "{" not in chapter.takeaway
        for preset_name, prop in cited:
            assert preset_name in chapter.presets and prop in chapter.properties
            claim = next(c for c in PRESETS[preset_name].claims if c.prop == prop)
            assert claim.bounds == REFERENCE_BOUNDS
            verdict = explore(PRESETS[preset_name].design, REFERENCE_BOUNDS).verdicts[prop]
            assert claim.matches(verdict), (chapter.number, preset_name, prop)
