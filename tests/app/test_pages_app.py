"""AppTest: every walkthrough chapter, the explore page and the compare page."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest

from model.check.explorer import explore
from model.design import REFERENCE_BOUNDS
from model.presets import PRESETS
from tests.app.helpers import all_text, shown, verdict_cells
from webapp.screens.chapter_page import MOST_SIDE_BY_SIDE, next_page
from webapp.show.chapters import BY_NUMBER, chapter_traces, choice_traces
from webapp.show.views import opening_step

Opener = Callable[..., AppTest]


@pytest.mark.parametrize("number", [0, 1, 2, 3, 4])
def test_chapter_runs_and_steps_to_the_end(open_page: Opener, number: int) -> None:
    at = open_page(f"chapter-{number}")
    chapter = BY_NUMBER[number]
    text = all_text(at)
    assert chapter.title in text
    assert chapter.takeaway in text
    traces = choice_traces(number, 0)
    last = max(len(t.steps) for t in traces)
    start = opening_step(traces)
    assert start > 0 and f"Step {start} of {last}" in text  # opens on the step that matters
    at.button(key=f"chapter{number}-0-first").click().run()
    assert f"Step 0 of {last}" in all_text(at)
    at.button(key=f"chapter{number}-0-last").click().run()
    assert not at.exception
    text = all_text(at)
    assert f"Step {last} of {last}" in text
    shown = traces[:1] if len(traces) > MOST_SIDE_BY_SIDE else traces  # tabs: the first open
    longest = max(shown, key=lambda trace: len(trace.steps))
    final = longest.steps[-1].sentence
    assert any(final in m.value and ":orange-background[" in m.value for m in at.markdown)
    table = at.table[-2 if number == 0 else -1].value
    assert list(table["design"]) == list(chapter.presets)
    (onward,) = [link.proto for link in at.get("page_link") if link.proto.label.startswith("Next")]
    expected = f"chapter-{number + 1}" if number < 4 else "exercises"
    assert onward.label == f"Next: {next_page(number).title}" and next_page(number).url_path == (
        expected
    )
    assert onward.page.endswith(expected)


@pytest.mark.parametrize("number", [2, 3, 4])
def test_chapter_every_run_can_be_chosen(open_page: Opener, number: int) -> None:
    at = open_page(f"chapter-{number}")
    chapter = BY_NUMBER[number]
    for index, choice in enumerate(chapter.runs):
        at.radio(key="chapter-run").set_value(choice.label).run()
        assert not at.exception
        traces = choice_traces(number, index)
        for spec in choice.shown():
            assert spec.caption in all_text(at)
        start = opening_step(traces)
        assert f"Step {start} of " in all_text(at)  # a new run opens on its step that matters
        at.button(key=f"chapter{number}-{index}-first").click().run()
        at.button(key=f"chapter{number}-{index}-last").click().run()
        for trace in traces:
            assert trace.steps[-1].sentence in all_text(at)


def test_chapter_0_ends_with_the_table_to_take_away(open_page: Opener) -> None:
    """The lesson table's cells are the explorer's verdicts on the three designs."""
    at = open_page("chapter-0")
    assert not at.exception
    verdicts = at.table[-2].value.set_index("design")
    assert verdicts.loc["lock-without-lease", "P6"] == "✘ violated (5 steps)"
    assert verdicts.loc["keepalive-lease", "P2"] == "✘ violated (5 steps)"
    assert verdicts.loc["keepalive-fencing", "P1"] == "✔ holds"
    assert "The table to take away" in all_text(at)
    lesson = at.table[-1].value
    assert [name.split(":")[0] for name in lesson["design"]] == list(BY_NUMBER[0].presets)
    pause, crash = lesson.columns[1], lesson.columns[2]
    assert list(lesson[pause]) == [
        "✔ P1, P2, P3 hold",
        "✘ P1, P2, P3 fail (8, 5, 8 steps)",
        "✔ P1, P3 hold · ✘ P2 fails (5 steps)",
    ]
    stranded, *freed = list(lesson[crash])
    assert stranded == "✘ the crashed holder keeps the lock: P6 fails (5 steps)"
    assert freed and all(cell.endswith("P6 holds") for cell in freed)
    assert "cannot tell a crash from a pause" in all_text(at)


def test_chapter_0_reopens_at_the_step_in_its_link_and_clamps_a_bad_one(open_page: Opener) -> None:
    """A copied link reopens all three runs at its step; a step that is no number is named
    as not understood, and the runs open on the step that matters."""
    count = max(len(trace.steps) for trace in chapter_traces(0))
    at = open_page("chapter-0", step="11")
    assert f"Step 11 of {count}" in all_text(at)
    crash = chapter_traces(0)[0].steps[10].sentence  # the eleventh step: W2 crashes
    assert any(crash in m.value and ":orange-background[" in m.value for m in at.markdown)
    start = opening_step(chapter_traces(0))
    for bad in ("1e400", "__import__('os')"):
        text = all_text(open_page("chapter-0", step=bad))
        assert "partly not understood" in text and f"Step {start} of {count}" in text


def test_chapter_3_table_shows_the_fixes(open_page: Opener) -> None:
    at = open_page("chapter-3")
    table = at.table[-1].value.set_index("design")
    assert table.loc["rmw-fencing-unfenced-reads", "P5"].startswith("✘ violated")
    assert table.loc["rmw-fencing-fenced-reads", "P5"] == "✔ holds"
    assert table.loc["rmw-lease-aware", "P2"] == "✔ holds"
    assert table.loc["fencing", "P2"].startswith("✘ violated (5")


def test_explore_a_preset_and_open_its_counterexamples(open_page: Opener) -> None:
    at = open_page("explore")
    at.selectbox(key="preset_choice").select("rmw-fencing-unfenced-reads").run()
    assert at.selectbox(key="workload").value == "rmw"
    for name, value in REFERENCE_BOUNDS.to_dict().items():
        at.number_input(key=name).set_value(value)
    at.run()
    at.button(key="run-button").click().run()
    assert not at.exception
    expected = explore(PRESETS["rmw-fencing-unfenced-reads"].design, REFERENCE_BOUNDS)
    row = verdict_cells(at, "verdict")
    assert row["P5"] == f"✘ violated ({expected.verdicts['P5'].shortest} steps)"
    assert row["P1"] == "✔ holds"
    assert row["P6"] == "○ holds vacuously, never exercised: nothing in this design ever crashes"
    assert at.radio(key="cex").options == [
        "P2, no write outside its lease (7 steps)",
        "P5, no lost update (12 steps)",
    ]
    at.radio(key="cex").set_value("P5").run()
    assert any("P5 violated" in e.value for e in at.error)
    at.button(key="explore-P5-last").click().run()
    assert "Step 12 of 12" in all_text(at)
    assert at.get("download_button")


def test_explore_shows_an_invalid_design_as_an_error(open_page: Opener) -> None:
    at = open_page("explore")
    at.selectbox(key="hwm").select("volatile").run()
    assert not at.exception
    assert [shown(e.value) for e in at.error] == [
        "This design is not valid: hwm volatile needs storage_restarts of at least 1 "
        "(without a restart it behaves exactly as durable)"
    ]
    at.text_input(key="skew").input("__import__('os').system('true')").run()
    assert not at.exception and at.error


def test_explore_says_incomplete_when_the_budget_is_hit(open_page: Opener) -> None:
    at = open_page("explore")
    at.number_input(key="budget").set_value(1_000)
    at.number_input(key="horizon").set_value(6)
    at.number_input(key="grants").set_value(3)
    at.number_input(key="writes").set_value(2).run()
    at.button(key="run-button").click().run()
    assert any("Incomplete" in w.value for w in at.warning)
    assert verdict_cells(at, "verdict")["P1"] == "? unknown (not finished)"
    assert "P2" in at.radio(key="cex").options[0]  # what was found is still shown


def test_explore_reopens_from_url_parameters(open_page: Opener) -> None:
    at = open_page("explore", receiver="none", run="1")
    assert at.selectbox(key="receiver").value == "none"
    assert "the preset `lease-only`" in all_text(at)
    assert verdict_cells(at, "verdict")["P1"].startswith("✘ violated (8")


def test_compare_matrix_and_with_versus_without(open_page: Opener) -> None:
    at = open_page("compare")
    matrix = at.dataframe[0].value.set_index("design")
    assert len(matrix) == len(PRESETS)
    assert matrix.loc["fencing", "P1"] == "✔" and matrix.loc["fencing", "P5"] == "○"
    assert matrix.loc["lease-only", "P1"] == "✘ 8"
    at.selectbox(key="cell").select("key-version-token · P3").run()
    assert not at.exception
    assert any("P3 violated" in e.value for e in at.error)
    text = all_text(at)
    assert "**Disappear** going from A to B: P1, P3" in text
    at.selectbox(key="b-preset").select("lease-aware-receiver").run()
    assert "**Disappear** going from A to B: P1, P2, P3" in all_text(at)


def test_explore_runs_the_widest_bounds_within_the_budget(open_page: Opener) -> None:
    at = open_page(
        "explore",
        token="random",
        workers="5",
        lease="12",
        horizon="30",
        grants="8",
        writes="4",
        budget="1000",
        run="1",
    )
    assert not at.exception and not at.error
    assert any("Incomplete" in w.value for w in at.warning)
    assert "? unknown (not finished)" in verdict_cells(at, "verdict").values()


def test_compare_takes_a_custom_design_from_its_link_and_keeps_it(open_page: Opener) -> None:
    from model.design import Design, Receiver
    from webapp.show.links import decode_design

    at = open_page("compare", a="receiver:none~worker_check:1", b="token:random")
    assert at.selectbox(key="a-preset").value == "worker-checks-lease"
    assert at.selectbox(key="b-preset").value == "random-token"
    at.selectbox(key="b-option-receiver").set_value("lease-aware").run()
    assert not at.exception
    assert at.selectbox(key="b-preset").value == "(custom)"
    assert decode_design(at.query_params["b"]) == Design(token="random", receiver="lease-aware")
    table = verdict_cells(at, "B: your design", index=-1)
    fresh = explore(Design(token="random", receiver=Receiver.LEASE_AWARE), REFERENCE_BOUNDS)
    for name, verdict in fresh.verdicts.items():
        assert table[name].startswith("✘") == verdict.violated
    assert any("fencing check --token random --receiver lease-aware" in c.value for c in at.code)


def test_a_link_to_a_chapters_run_opens_that_run_beside_its_companion(open_page: Opener) -> None:
    at = open_page("chapter-2", **{"chapter-run": BY_NUMBER[2].runs[1].label})
    text = all_text(at)
    split, atomic = BY_NUMBER[2].runs[1].shown()
    assert split.caption in text and atomic.caption in text
    assert "partly not understood" not in text
    assert [h.value for h in at.subheader][:2] == [split.label, atomic.label]
