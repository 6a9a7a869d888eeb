"""A class in headless Chromium: a teacher creates it, two students (two browsers) join from
the students' link and answer, a reload keeps a student's answers, and the teacher's live
dashboard counts them. Screenshots go to test-artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.app.test_class_app import kept_by_lease_only
from tests.browser.conftest import WAIT_MS, ConsoleLog, open_tab, screenshot, wait_idle

pytestmark = pytest.mark.browser

LIVE_MS = 20_000
"""How long the dashboard may take to show new answers (it reads them every 3 s)."""


@pytest.fixture
def contexts(browser: Any) -> Iterator[list[Any]]:
    """Three separate browsers: the teacher's and two students'."""
    opened = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(3)]
    yield opened
    for context in opened:
        context.close()


def _metrics(tab: Any) -> list[str]:
    """The values of the page's metric boxes, in order."""
    return [m.inner_text() for m in tab.get_by_test_id("stMetricValue").all()]


def _wait_metrics(tab: Any, expected: list[str]) -> None:
    """Wait until the dashboard's figures are the expected ones (it refreshes by itself)."""
    waited = 0
    while _metrics(tab) != expected and waited < LIVE_MS:
        tab.wait_for_timeout(500)
        waited += 500
    assert _metrics(tab) == expected


def _student(context: Any, link: str, nickname: str, ticks: list[str]) -> tuple[Any, ConsoleLog]:
    """A student opens the link, joins with a nickname and predicts the first exercise."""
    tab, console = open_tab(context)
    tab.goto(link)
    tab.get_by_text("Join the class").first.wait_for(timeout=WAIT_MS)
    field = tab.get_by_label("A nickname your teacher will see (optional)")
    field.fill(nickname)
    field.press("Enter")
    wait_idle(tab)
    tab.get_by_role("button", name="Join the class").click()
    tab.get_by_text("You are in the class").first.wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    for name in ticks:
        tab.get_by_test_id("stCheckbox").filter(has_text=f"{name},").click()
        wait_idle(tab)
    tab.get_by_role("button", name="Check my prediction").click()
    wait_idle(tab)
    return tab, console


def test_a_teacher_and_two_students(app_url: str, contexts: list[Any]) -> None:
    teacher_browser, first_browser, second_browser = contexts
    teacher, teacher_console = open_tab(teacher_browser)
    teacher.goto(f"{app_url}/class")
    teacher.get_by_text("Create a class", exact=True).wait_for(timeout=WAIT_MS)
    title = teacher.get_by_label("Name of the class")
    title.fill("Tuesday, room 4")
    title.press("Enter")
    wait_idle(teacher)
    teacher.get_by_role("button", name="Create the class").click()
    teacher.get_by_text("For the students").first.wait_for(timeout=WAIT_MS)
    wait_idle(teacher)
    teacher.get_by_test_id("stCode").nth(1).wait_for(timeout=WAIT_MS)
    codes = [c.inner_text().strip() for c in teacher.get_by_test_id("stCode").all()]
    students_link, teacher_link = codes[0], codes[1]
    assert students_link.startswith(f"{app_url}/exercises?class=")
    assert teacher_link.startswith(f"{app_url}/class?class=") and "&key=" in teacher_link
    assert "key=" not in students_link
    _wait_metrics(teacher, ["0", "0", "0", "0"])

    kept = kept_by_lease_only()
    ada, ada_console = _student(first_browser, students_link, "Ada", kept)
    # P4, P5 and P6 are never put to the test in this design: ticking them is neither right
    # nor wrong, and the answer says why instead of saying the design keeps them
    ada.get_by_text("Right: the design keeps none of them").wait_for(timeout=WAIT_MS)
    assert ada.get_by_text("are never put to the test in this design").count() == 1
    bob, bob_console = _student(second_browser, students_link, "Bob", ["P1"])
    bob.get_by_text("Not quite").first.wait_for(timeout=WAIT_MS)
    assert "student=" in bob.url
    bob.get_by_text("Tuesday, room 4").first.wait_for(timeout=WAIT_MS)
    screenshot(bob, "class-student-wrong-answer")

    bob.reload()  # F5: the answers come back from the class's database
    bob.get_by_text("You are in the class").first.wait_for(timeout=WAIT_MS)
    bob.get_by_text("Not quite").first.wait_for(timeout=WAIT_MS)
    bob.get_by_text("Hint 1").first.wait_for(timeout=WAIT_MS)
    assert bob.get_by_text("Join the class").count() == 0

    _wait_metrics(teacher, ["2", "2", "1", "2"])  # joined, tried, solved, answers
    teacher.locator(".js-plotly-plot").first.wait_for(timeout=WAIT_MS)
    wait_idle(teacher)
    screenshot(teacher, "class-teacher-dashboard")

    stranger, stranger_console = open_tab(teacher_browser)
    stranger.goto(teacher_link.split("&key=")[0])
    stranger.get_by_text("has no teacher's key").first.wait_for(timeout=WAIT_MS)
    assert stranger.get_by_test_id("stMetricValue").count() == 0
    for console in (teacher_console, ada_console, bob_console, stranger_console):
        assert console.errors == []


def test_a_reload_keeps_the_set_the_exercise_and_the_answers(
    app_url: str, page: tuple[Any, ConsoleLog]
) -> None:
    tab, _ = page
    tab.goto(f"{app_url}/exercises?set=default&exercise=fencing-predict")
    tab.get_by_text("5. What does fencing keep?").first.wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    tab.get_by_test_id("stCheckbox").filter(has_text="P2,").click()
    wait_idle(tab)
    tab.get_by_role("button", name="Check my prediction").click()
    tab.get_by_text("Not quite").first.wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    url = tab.url
    assert "set=default" in url and "exercise=fencing-predict" in url and "student=" in url
    tab.reload()  # F5
    tab.get_by_text("5. What does fencing keep?").first.wait_for(timeout=WAIT_MS)
    tab.get_by_text("Not quite").first.wait_for(timeout=WAIT_MS)
    tab.get_by_text("Hint 1").first.wait_for(timeout=WAIT_MS)
    assert tab.url == url
    tab.get_by_text("Write your own set").click()
    tab.get_by_role("button", name="Download the template (one exercise of each kind)").wait_for(
        timeout=WAIT_MS
    )
    wait_idle(tab)
    screenshot(tab, "exercises-after-reload")
