"""AppTest: the home page and chapter 1, the paused worker under both receivers at once."""

from __future__ import annotations

from collections.abc import Callable

from streamlit.testing.v1 import AppTest

from fencing.stories import paused_worker_story
from tests.app.helpers import all_text


def test_home_says_what_the_app_is_for_and_links_every_page(
    open_page: Callable[..., AppTest],
) -> None:
    at = open_page("home")
    text = all_text(at)
    assert "Fencing Lab" in text
    assert "fencing tokens" in text.lower()
    assert "P5, no lost update" in text
    assert "however the server was started" not in text  # no stray text from the entry script


def test_chapter_1_shows_both_runs_and_their_verdicts(open_page: Callable[..., AppTest]) -> None:
    at = open_page("chapter-1")
    text = all_text(at)
    assert "violates P1, P2, P3" in text
    assert "no property violated in this run" in text
    assert "Step 8 of 9" in text  # opens on the late write, where lease-only breaks


def test_chapter_1_steps_forward_through_the_url_and_highlights_the_step(
    open_page: Callable[..., AppTest],
) -> None:
    at = open_page("chapter-1", step="7")
    at.button(key="chapter1-0-next").click().run()
    assert at.query_params["step"] in ("8", ["8"])
    text = all_text(at)
    assert "Step 8 of 9" in text
    fenced = paused_worker_story("fenced").trace().steps[7].sentence
    late = paused_worker_story("none").trace().steps[7].sentence
    highlighted = [m.value for m in at.markdown if ":orange-background[" in m.value]
    assert any(fenced in h for h in highlighted) and any(late in h for h in highlighted)
    at.button(key="chapter1-0-last").click().run()
    assert "Step 9 of 9" in all_text(at)
    at.button(key="chapter1-0-first").click().run()
    assert "Step 0 of 9" in all_text(at)


def test_chapter_1_answers_a_malformed_step_in_the_url(open_page: Callable[..., AppTest]) -> None:
    at = open_page("chapter-1", step="__import__('os')")
    text = all_text(at)
    assert "Step 8 of 9" in text
    assert "This link was partly not understood: the step must be a whole number" in text
    assert "__import__" not in text
