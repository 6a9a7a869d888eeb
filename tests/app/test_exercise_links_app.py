"""AppTest: the Exercises page keeps the set, the exercise and the student in its link, opens
on a teachers' folder's set, keeps progress across a reload, and offers the format."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from classroom.schema import FOLDER_ENV, TEMPLATE_SET
from tests.app.helpers import all_text, bare_links, page_alone, shown
from webapp.jobs import set_checks

PAGE = "exercises"


def run(**params: str) -> AppTest:
    """The page with query parameters, failing on any exception."""
    at = page_alone(PAGE, default_timeout=60)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def settled(at: AppTest) -> AppTest:
    """The page again once the background checks of the sets are done."""
    assert set_checks.CHECKER.idle(timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_link_opens_the_set_and_the_exercise_and_follows_the_menu() -> None:
    at = run(set="default", exercise="lease-break-p2")
    assert at.selectbox(key="ex-choice").value == "lease-break-p2"
    assert at.query_params["set"] == "default" and at.query_params["exercise"] == "lease-break-p2"
    at.selectbox(key="ex-choice").set_value("lease-fix-p1").run()
    assert at.query_params["exercise"] == "lease-fix-p1"
    assert "/exercises?set=default&exercise=lease-fix-p1" in [str(c.value) for c in at.code]
    missing = run(exercise="no-such-exercise")
    assert missing.selectbox(key="ex-choice").value == "lease-predict"
    assert "this set has no exercise called no-such-exercise" in all_text(missing)
    assert "no exercise called" not in all_text(run(set="default", exercise="lease-predict"))


def test_a_link_to_a_set_this_server_lacks_says_so_and_opens_the_default() -> None:
    at = run(set="[evil](https://example.com)")
    (warning,) = [str(w.value) for w in at.warning if "no exercise set called" in str(w.value)]
    assert "[evil]" in shown(warning) and "showing The default set" in warning
    assert bare_links(warning) == [] and "](" not in warning  # shown as text, never a link
    assert at.selectbox(key="ex-set").value == "The default set"


def test_progress_survives_a_reload_under_the_student_link() -> None:
    at = run()
    token = str(at.query_params["student"])
    at.checkbox(key="ex-lease-predict-P1").check().run()
    at.button(key="ex-lease-predict-check").click().run()
    assert "Not quite" in all_text(at)
    again = run(student=token, set="default", exercise="lease-predict")  # F5
    text = all_text(again)
    assert "Not quite" in text and "Hint 1" in text
    assert again.dataframe[0].value["answers"].iloc[0] == 1
    other = run()  # another student's fresh link
    assert other.query_params["student"] != token
    assert "Not quite" not in all_text(other)


def test_a_teachers_folder_set_opens_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "week1.toml").write_bytes(TEMPLATE_SET.read_bytes())
    monkeypatch.setenv(FOLDER_ENV, str(tmp_path))
    at = settled(run())
    assert at.selectbox(key="ex-set").value == "Folder: week1.toml"
    assert at.query_params["set"] == "week1.toml"
    assert "My class on fencing tokens" in all_text(at)
    assert settled(run(set="default")).selectbox(key="ex-set").value == "The default set"


def test_the_page_offers_the_template_and_the_default_set() -> None:
    at = run()
    template = TEMPLATE_SET.read_text(encoding="utf-8").strip()
    assert template in [str(c.value).strip() for c in at.code]
    assert "fencing exercises check" in all_text(at)


PHISHING = "[Log in again](https://evil.example)"
BEACON = "![x](http://127.0.0.1:9/t.png)"


@pytest.mark.parametrize(
    "page, params",
    [
        ("exercises", {"set": PHISHING, "exercise": BEACON, "student": PHISHING}),
        ("exercises", {"student": "x" * 5000, "exercise": "lease-fix-p1"}),
        ("exercises", {"class": PHISHING, "student": BEACON}),
        ("class", {"class": PHISHING, "key": BEACON}),
        ("class", {"class": "a" * 12, "key": "b" * 5000}),
    ],
)
def test_hostile_links_are_answered_in_words(
    page: str, params: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FENCING_LAB_CLASSES", str(tmp_path / "classes"))
    at = page_alone(page, default_timeout=60)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    kinds = ("error", "warning", "info", "success", "markdown", "caption", "code")
    text = "\n".join(str(e.value) for kind in kinds for e in getattr(at, kind))
    assert "](http" not in text, text
    if page == "exercises.py" and "class" not in params:  # a fresh code replaces a bad one
        assert str(at.query_params["student"]).isascii()
        assert at.query_params["student"] != params.get("student")


def test_a_half_built_run_and_a_checked_fix_come_back_after_a_reload() -> None:
    """The run of a break exercise is kept in the link step by step, and the design last
    checked as a fix too: a reload shows both as they were, next to the feedback."""
    at = run(set="default", exercise="lease-break-p2")
    token = str(at.query_params["student"])
    for code in ("A1", "S1"):
        at.button(key=f"ex-lease-break-p2-{code}").click().run()
    assert at.query_params["run"] == "A1.S1"
    again = run(set="default", exercise="lease-break-p2", student=token, run="A1.S1")
    assert "Steps so far: **2**" in all_text(again)
    again.button(key="ex-lease-break-p2-undo").click().run()
    assert again.query_params["run"] == "A1"
    bad = run(set="default", exercise="lease-break-p2", run="D1")
    assert "partly not understood" in all_text(bad) and "Steps so far: **0**" in all_text(bad)
    fix = run(set="default", exercise="key-version-fix-p3", student=token)
    fix.selectbox(key="ex-key-version-fix-p3-opt-token").set_value("random").run()
    fix.button(key="ex-key-version-fix-p3-check").click().run()
    checked = fix.query_params["fix"]
    assert "still violates P3" in all_text(fix)
    reloaded = run(set="default", exercise="key-version-fix-p3", student=token, fix=checked)
    assert reloaded.selectbox(key="ex-key-version-fix-p3-opt-token").value == "random"
    assert "still violates P3" in all_text(reloaded)
    reloaded.selectbox(key="ex-choice").set_value("lease-predict").run()
    assert "fix" not in reloaded.query_params and "run" not in reloaded.query_params
    greedy = run(set="default", exercise="key-version-fix-p3", fix="token:counter~receiver:none")
    assert "does not let you change" in all_text(greedy)
    assert greedy.selectbox(key="ex-key-version-fix-p3-opt-token").value == "key-version"
