"""The web app's plain functions: chapters' claims, the design form, verdicts, views."""

from __future__ import annotations

import pytest

from fencing.stories import paused_worker_story
from model.claims import citations
from model.design import REFERENCE_BOUNDS, Design, DesignError
from model.explorer import explore
from model.presets import PRESETS
from webapp.chapters import BY_NUMBER, CHAPTERS, chapter_traces
from webapp.design_form import (
    bounds_from_values,
    design_from_values,
    parse_skew,
    values_of,
)
from webapp.links import matching_preset
from webapp.story import run_summary
from webapp.verdicts import cell, difference, verdict_rows
from webapp.views import actor_rows, clamp_step, narration


def _verdicts(preset: str) -> dict[str, bool]:
    """Whether each property is violated for a preset at the reference bounds."""
    exploration = explore(PRESETS[preset].design, REFERENCE_BOUNDS)
    return {name: v.violated for name, v in exploration.verdicts.items()}


def test_every_chapter_run_replays_and_has_steps() -> None:
    for chapter in CHAPTERS:
        traces = chapter_traces(chapter.number)
        assert len(traces) == len(chapter.runs)
        assert all(trace.steps for trace in traces)


def test_chapter_1_lease_only_breaks_and_fencing_refuses() -> None:
    lease_only, fencing = chapter_traces(1)
    assert lease_only.violated() == ("P1", "P2", "P3")
    assert fencing.violated() == ()
    assert "rejected" in fencing.steps[7].sentence


def test_chapter_2_unchecked_tokens_do_nothing() -> None:
    worker_checks, checked = chapter_traces(2)
    assert "P1" in worker_checks.violated()
    assert checked.actions == worker_checks.actions
    assert checked.violated() == ()
    assert "rejected" in checked.steps[-1].sentence
    # The worker's own check passed: it sent while its lease ran; the write was delayed.
    send = next(step for step in worker_checks.steps if step.action.name == "Send")
    assert "delayed in the network" in worker_checks.steps[-1].sentence
    assert send.number < worker_checks.steps[-1].number


def test_chapter_3_claims_match_the_explorer() -> None:
    gap, lost, fenced_reads, lease_aware, lease_aware_gap = chapter_traces(3)
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


def test_chapter_4_numbers_keep_p1_but_lose_p3() -> None:
    key_version, random_token, counter = chapter_traces(4)
    for trace in (key_version, random_token):
        assert "P3" in trace.violated() and "P1" not in trace.violated()
    assert counter.actions == key_version.actions and counter.violated() == ()
    assert counter.steps[-1].outcome == "rejected"
    for preset in ("key-version-token", "random-token"):
        verdicts = _verdicts(preset)
        assert not verdicts["P1"] and verdicts["P3"]
    assert not _verdicts("fencing")["P3"]


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
    partial = explore(Design(), REFERENCE_BOUNDS, max_states=50)
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
    from webapp.compare_page import cell_at, matrix_cells

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
