"""AppTest: every run shown with the step player (a counterexample on Explore, Compare,
Check my stack, Proofs; a chapter's run) links to the scheduler on that run at the step
shown, and the scheduler opens there, able to go back, forth and elsewhere."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qsl

from streamlit.testing.v1 import AppTest

from model.check.explorer import explore
from model.design import REFERENCE_BOUNDS
from model.presets import PRESETS
from tests.app.helpers import all_text, page_alone
from webapp.content import player
from webapp.show.chapters import choice_traces
from webapp.show.playground import decode_actions, encode_actions, run_from_params
from webapp.show.views import opening_step

Opener = Callable[..., AppTest]


def scheduler_links(at: AppTest) -> list[dict[str, str]]:
    """The query of every "step it yourself" link on the page."""
    return [
        dict(parse_qsl(link.proto.query_string))
        for link in at.get("page_link")
        if link.proto.label == player.STEP_IT_YOURSELF
    ]


def test_an_explore_counterexample_opens_in_the_scheduler_at_its_step(open_page: Opener) -> None:
    at = open_page("explore", receiver="none", run="1", cex="P2", step="3")
    (link,) = scheduler_links(at)
    expected = explore(PRESETS["lease-only"].design, REFERENCE_BOUNDS).verdicts["P2"]
    assert decode_actions(link["a"]) == expected.actions and link["at"] == "3"
    assert link["d"] == "lease-only"
    at.button(key="explore-P2-last").click().run()
    (last,) = scheduler_links(at)
    assert "at" not in last  # the run's end: the scheduler opens at its end
    scheduler = page_alone("playground", default_timeout=60)
    for name, value in link.items():
        scheduler.query_params[name] = value
    scheduler.run()
    assert not scheduler.exception
    assert f"Step 3 of {len(expected.actions or ())}" in all_text(scheduler)
    run = run_from_params(link)
    assert run.actions == expected.actions


def test_a_compare_cell_and_a_chapter_run_link_to_the_scheduler(open_page: Opener) -> None:
    at = open_page("compare")
    at.selectbox(key="cell").select("fencing · P2").run()
    (link,) = scheduler_links(at)
    shortest = explore(PRESETS["fencing"].design, REFERENCE_BOUNDS).verdicts["P2"]
    assert decode_actions(link["a"]) == shortest.actions and link["d"] == "fencing"
    chapter = open_page("chapter-1")
    links = scheduler_links(chapter)
    assert len(links) == 2  # both runs side by side, each at the shared step
    traces = choice_traces(1, 0)
    step = str(opening_step(traces))
    assert [(link["d"], link["at"]) for link in links] == [("lease-only", step), ("fencing", step)]
    assert {link["a"] for link in links} == {encode_actions(traces[0].actions)}
