"""The words of the Explore, State space, Be the scheduler and Live lab pages (and the step
player, design picker and search progress they share) are made from the model's results:
each sentence that depends on a count, a verdict or a run says what that result says."""

from __future__ import annotations

import pytest

from lab.nemesis import PAUSE_TTLS
from model.check.explorer import explore
from model.check.random_search import random_search
from model.check.search import OnLevel, Progress, SearchOptions
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.formats.trace import replay
from model.presets import PRESETS
from model.properties import PROPERTY_NAMES
from webapp.content import design_picker, lab, player, playground, scheduler, searching, state_space
from webapp.content import explore as explore_words
from webapp.content.common import link_not_understood
from webapp.show.state_space import GRAPH_NODE_LIMIT, count_space
from webapp.show.style import HOLDS_GLYPH, VIOLATED_GLYPH

SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)
"""The State space page's starting bounds: every design here finishes in well under a second."""
BROKEN = PRESETS["lease-only"].design
"""Violates P1, P2 and P3 at SMALL (shortest runs of 8, 5 and 8 steps)."""
SAFE = PRESETS["lease-aware-receiver"].design
"""Violates no property at SMALL."""


def test_the_progress_bar_names_the_level_the_explorer_reached() -> None:
    seen: list[Progress] = []
    explore(BROKEN, SMALL, visitors=[OnLevel(seen.append)])
    last = seen[-1]
    words = searching.exploring(last)
    assert words.startswith(f"Exploring: depth {last.depth}, ")
    assert f"{last.states:,} states" in words and f"{last.transitions:,} transitions" in words
    assert searching.searching_at_random(1_500) == (
        "Searching at random: up to 1,500 runs per property…"
    )


def test_an_exploration_that_stopped_says_how_far_it_got_and_a_finished_one_says_nothing() -> None:
    stopped = explore(PRESETS["fencing"].design, REFERENCE_BOUNDS, SearchOptions(max_states=1000))
    assert not stopped.complete
    sentence = explore_words.incomplete(stopped)
    assert sentence is not None
    assert f"({stopped.stopped_by}) after {stopped.states:,} states." in sentence
    assert explore_words.incomplete(explore(BROKEN, SMALL)) is None


def test_no_violation_is_claimed_only_when_the_verdicts_show_none() -> None:
    assert explore_words.none_violated(explore(BROKEN, SMALL).verdicts) is None
    assert explore_words.none_violated(explore(SAFE, SMALL).verdicts) == (
        "No property is violated in the explored runs."
    )


def test_a_violated_property_is_offered_with_its_shortest_runs_length() -> None:
    verdicts = explore(BROKEN, SMALL).verdicts
    assert explore_words.violated_choice("P2", verdicts["P2"]).endswith(" (5 steps)")
    assert explore_words.violated_choice("P1", verdicts["P1"]).endswith(" (8 steps)")


def test_a_random_search_says_why_it_is_not_complete() -> None:
    found = random_search(BROKEN, SMALL, runs=5, seed=1)
    assert found.stopped_by is None and explore_words.random_stopped(found) is None
    assert explore_words.random_not_complete(found.stopped_by) == (
        "Not complete: a random search never shows a property holds."
    )
    late = "time budget of 1 s reached"
    assert explore_words.random_not_complete(late) == f"Not complete: {late}."


def test_the_design_is_named_by_its_preset_or_else_by_its_options() -> None:
    assert explore_words.this_is("lease-only", BROKEN, SMALL) == (
        f"This is the preset `lease-only` at {SMALL.in_words()}."
    )
    custom = Design(token="random", receiver="none")
    assert f"a custom design ({custom.in_words()})" in explore_words.this_is(None, custom, SMALL)


def test_a_preset_caption_says_what_it_mirrors_then_its_lesson() -> None:
    preset = PRESETS["fencing"]
    caption = explore_words.preset_caption(preset, "The lesson.")
    assert caption == f"Mirrors {preset.mirrors}. The lesson."


def test_a_property_holds_in_the_graph_only_when_the_finished_count_found_no_violating_run() -> (
    None
):
    counts = count_space(BROKEN, SMALL)
    assert state_space.holds_in_graph("P2", counts) is None
    assert state_space.holds_in_graph("P4", counts) == (
        "P4 holds vacuously, never exercised: the resource checks nothing, so it never rejects "
        "a request. No state has a violating step leaving it, but only because no step ever "
        "puts it to the test: choose another property or design."
    )
    fenced = count_space(PRESETS["fencing"].design, SMALL)
    assert state_space.holds_in_graph("P4", fenced) == (
        "P4 holds within these bounds: no state has a violating step leaving it."
    )
    stopped = count_space(PRESETS["fencing"].design, REFERENCE_BOUNDS, max_states=1000)
    assert not stopped.complete
    assert state_space.holds_in_graph("P1", stopped) is None


def test_a_count_that_stopped_says_which_steps_it_covers() -> None:
    finished = count_space(BROKEN, SMALL)
    assert state_space.count_stopped(finished) is None
    assert state_space.not_drawn(finished) == (
        f"The whole graph is not drawn: {finished.states:,} states is more than the "
        f"{GRAPH_NODE_LIMIT:,} this page draws."
    )
    stopped = count_space(BROKEN, REFERENCE_BOUNDS, max_states=1000)
    sentence = state_space.count_stopped(stopped)
    assert sentence is not None and f"in the first {stopped.depth} steps" in sentence
    assert state_space.not_drawn(stopped) == (
        "The whole graph is not drawn: the count did not finish."
    )


def test_a_highlighted_run_is_named_with_its_length_and_its_steps() -> None:
    actions = count_space(BROKEN, SMALL).counterexamples["P2"]
    line = state_space.purple_line("P2", actions)
    assert "**P2** (5 steps): " in line
    assert line.endswith(" → ".join(a.label() for a in actions))
    assert "(5 steps): " in state_space.run_and_neighbours("P2", actions)
    assert state_space.kinds_line({"safe": 1_234, "violating": 2}) == (
        "1,234 states: safe · 2 states: violating"
    )


def test_the_starting_bounds_are_named_beside_the_other_pages() -> None:
    sentence = state_space.smaller_start(SMALL, REFERENCE_BOUNDS)
    assert f"smaller bounds ({SMALL.short()})" in sentence
    assert f"({REFERENCE_BOUNDS.short()}, where" in sentence


def test_a_bad_step_in_a_link_is_the_shared_link_sentence_with_the_step_shown() -> None:
    problem = player.step_out_of_range(7)
    assert problem == "the step must be a whole number from 0 to 7"
    assert player.bad_step_link(problem, 3) == link_not_understood(f"{problem}; showing step 3")
    assert player.bad_step_link(problem, 3).endswith("0 to 7; showing step 3.")
    assert player.step_of(2, 7) == "**Step 2 of 7**"


def test_an_unknown_property_in_a_link_lists_every_property() -> None:
    sentence = design_picker.property_not_known(PROPERTY_NAMES)
    assert sentence.endswith(", ".join(PROPERTY_NAMES))


def test_the_board_names_the_step_to_choose_and_the_loaded_run() -> None:
    trace = replay(BROKEN, SMALL, explore(BROKEN, SMALL).verdicts["P2"].actions or ())
    assert playground.your_move(len(trace.steps) + 1) == "**Your move** (step 6):"
    assert playground.loaded(len(trace.steps)) == "Loaded a run of 5 steps."
    assert playground.loaded(1) == "Loaded a run of 1 step."
    assert scheduler.state_after(len(trace.steps)) == "**State of every actor after step 5**"
    caption = playground.design_caption("lease-only", SMALL)
    assert caption.startswith(f"Design: lease-only; {SMALL.in_words()}. ")
    assert playground.file_too_large(2_000_000, 1_000_000) == (
        "The trace file is 2,000,000 bytes; the limit is 1,000,000 bytes."
    )


@pytest.mark.parametrize(
    ("count", "name", "exercised", "cell"),
    [
        (0, "P1", 4, f"{HOLDS_GLYPH} holds"),
        (1, "P1", 4, f"{VIOLATED_GLYPH} 1 violation"),
        (3, "P3", 4, f"{VIOLATED_GLYPH} 3 violations"),
        (0, "P5", 0, "○ holds vacuously: no accepted write that follows its worker's read"),
        (0, "P6", 0, "○ holds vacuously: no tick while a crashed worker holds the lock"),
    ],
)
def test_a_lab_verdict_cell_says_holds_only_when_put_to_the_test(
    count: int, name: str, exercised: int, cell: str
) -> None:
    assert lab.verdict_cell(count, name, exercised) == cell


def test_the_randomized_runs_caption_is_made_from_its_writes_and_the_nemesis_pauses() -> None:
    low, high = PAUSE_TTLS
    assert lab.random_run(3, PAUSE_TTLS) == (
        "Each worker loops: take the lock, three writes, release. The nemesis pauses workers "
        f"(mostly the lock's holder) for {low:g} to {high:g} lease TTLs."
    )
    assert "take the lock, two writes, release" in lab.random_run(2, (1.0, 2.0))
    assert "for 1 to 2 lease TTLs" in lab.random_run(2, (1.0, 2.0))
    assert "take the lock, 12 writes, release" in lab.random_run(12, PAUSE_TTLS)


def test_the_witnesses_contradiction_is_said_only_with_its_reasons() -> None:
    assert lab.witnesses_contradict([]) is None
    said = lab.witnesses_contradict(["first reason", "second reason"])
    assert said is not None
    assert said.endswith("\n- first reason\n- second reason")


def test_the_lab_says_whether_reality_agreed_with_the_prediction() -> None:
    assert "agreed" in lab.prediction_verdict(True)
    assert "differed" in lab.prediction_verdict(False)


def test_the_models_run_of_a_history_names_its_design_bounds_and_tick() -> None:
    trace = replay(BROKEN, SMALL, ())
    heading = lab.model_run(trace, 0.254)
    assert f"({BROKEN.in_words()}; {SMALL.in_words()}; one tick ≈ 0.25 s)" in heading


def test_the_lab_counts_the_runs_ahead_and_the_events_kept() -> None:
    assert lab.busy(2, 1) == (
        "The lab is busy: 2 runs are in progress and 1 is waiting. Try again in a minute."
    )
    assert lab.busy(1, 3).startswith("The lab is busy: 1 run is in progress and 3 are waiting.")
    assert lab.queued(1, 0).startswith("Queued: 1 lab run is in progress and 0 waiting")
    assert lab.queued(2, 1).startswith("Queued: 2 lab runs are in progress and 1 waiting")
    assert lab.stopped_early("a reason", 1_234).count("(1,234 events)") == 1
