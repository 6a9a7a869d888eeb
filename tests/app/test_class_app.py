"""AppTest: a teacher creates a class, students join from their link, answer, reload, and the
teacher's dashboard counts them; without the key nothing is shown; nicknames stay text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from classroom import class_store
from classroom.class_store import shared_store
from classroom.grading import Verdicts, verdicts
from model.design import REFERENCE_BOUNDS
from model.presets import PRESETS
from model.properties import PROPERTY_NAMES
from tests.app.helpers import all_text, page_alone
from webapp.screens.class_page import class_links, spread_figure

ROOT = Path(__file__).resolve().parents[2]
CLASS_PAGE = "class"
EXERCISES_PAGE = "exercises"
EVIL = "[Ada](https://evil.example) ![x](https://evil.example/x.png)"
EVIL_NICKNAME = "[Ada](https://evil.example)"


@pytest.fixture(autouse=True)
def class_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own class database."""
    folder = tmp_path / "classes"
    monkeypatch.setenv(class_store.FOLDER_ENV, str(folder))
    return folder


def run(page: str, **params: str) -> AppTest:
    """Run a page with query parameters, failing on any exception."""
    at = page_alone(page, default_timeout=60)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def create_class(title: str = "Tuesday") -> tuple[str, str]:
    """Create a class on the default set through the page; its id and key."""
    at = run(CLASS_PAGE)
    at.text_input(key="class-title").input(title)
    at.button(key="class-create").click().run()
    assert not at.exception, [e.value for e in at.exception]
    params = dict(at.query_params)
    codes = [str(c.value) for c in at.code]
    assert codes[0].endswith(f"/exercises?class={params['class']}")
    assert codes[1].endswith(f"/class?class={params['class']}&key={params['key']}")
    return str(params["class"]), str(params["key"])


def join(class_id: str, nickname: str) -> AppTest:
    """A student opens the class link and joins with a nickname."""
    at = run(EXERCISES_PAGE, **{"class": class_id})
    assert "Join the class" in all_text(at)
    at.text_input(key="ex-nickname").input(nickname)
    at.button(key="ex-join").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "student" in at.query_params
    return at


def test_the_creation_form_says_how_long_a_class_lasts(
    class_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(class_store.HOURS_ENV, "3")
    text = all_text(run(CLASS_PAGE))
    assert "A class lasts **3 hours**" in text and str(class_folder) in text


def test_a_student_joins_answers_and_finds_the_answers_after_a_reload() -> None:
    class_id, key = create_class()
    at = join(class_id, "Ada")
    token = str(at.query_params["student"])
    assert "You are in the class **Tuesday** as Ada" in all_text(at)
    at.checkbox(key="ex-lease-predict-P1").check().run()
    at.button(key="ex-lease-predict-check").click().run()
    assert "Not quite" in all_text(at)
    again = run(EXERCISES_PAGE, **{"class": class_id, "student": token})  # a reload
    text = all_text(again)
    assert "Not quite" in text and "Hint 1" in text and "Join the class" not in text
    view = shared_store().view(class_id, key)
    assert [(a.exercise_id, a.answer, a.props) for a in view.answers] == [
        ("lease-predict", "P1", ("P1",))
    ]


def test_the_dashboard_counts_joined_tried_and_solved() -> None:
    class_id, key = create_class()
    ada = join(class_id, "Ada")
    join(class_id, "Bob")
    for name in kept_by_lease_only():
        ada.checkbox(key=f"ex-lease-predict-{name}").check()
    ada.run()
    ada.button(key="ex-lease-predict-check").click().run()
    assert "Right" in all_text(ada)
    teacher = run(CLASS_PAGE, **{"class": class_id, "key": key})
    assert [m.value for m in teacher.metric] == ["2", "1", "1", "1"]
    counts = teacher.dataframe[-2].value
    first = counts[counts["exercise"].str.startswith("1.")].iloc[0]
    assert (first["joined"], first["tried"], first["solved"]) == (2, 1, 1)
    students = teacher.dataframe[-1].value
    assert list(students["nickname"]) == ["Ada", "Bob"]
    assert list(students["solved"]) == [1, 0]


def test_without_the_key_nothing_is_shown() -> None:
    class_id, key = create_class("Secret class title")
    join(class_id, "Ada")
    for params in ({"class": class_id}, {"class": class_id, "key": key[:-2] + "zz"}):
        at = run(CLASS_PAGE, **params)
        text = all_text(at)
        assert "Secret class title" not in text and "Ada" not in text
        assert not at.dataframe and not at.metric


def test_nicknames_and_titles_are_shown_as_text() -> None:
    class_id, key = create_class(EVIL)
    join(class_id, EVIL_NICKNAME)
    at = run(CLASS_PAGE, **{"class": class_id, "key": key})
    markdown = " ".join(
        str(e.value) for kind in ("markdown", "subheader", "caption") for e in getattr(at, kind)
    )
    assert "](https://evil" not in markdown  # escaped: never a link or an image
    assert list(at.dataframe[-1].value["nickname"]) == [EVIL_NICKNAME]


def test_a_link_to_a_class_that_does_not_exist_says_so() -> None:
    at = run(EXERCISES_PAGE, **{"class": "nosuchclass0"})
    assert "This class cannot be opened: there is no such class" in all_text(at)
    at = run(EXERCISES_PAGE, **{"class": "../x"})
    assert "not complete" in all_text(at)


def test_the_links_follow_the_server_the_teacher_uses() -> None:
    links = class_links("http://10.0.0.5:8501/class?x=1", "abcdefgh1234", "k" * 32)
    assert links.students == "http://10.0.0.5:8501/exercises?class=abcdefgh1234"
    assert links.teacher == f"http://10.0.0.5:8501/class?class=abcdefgh1234&key={'k' * 32}"
    behind = class_links("https://school.example/fencing/class", "abcdefgh1234", "key")
    assert behind.students == "https://school.example/fencing/exercises?class=abcdefgh1234"
    assert class_links("", "abcdefgh1234", "key").students == "/exercises?class=abcdefgh1234"


def test_the_spread_chart_hides_the_answer_until_it_is_revealed() -> None:
    spread = {"P1": (2, 1), "P2": (0, 3)}
    hidden = spread_figure(spread, None)
    assert list(hidden.data[0].x) == ["P1", "P2"]
    assert list(hidden.data[0].y) == [2, 0] and list(hidden.data[1].y) == [1, 3]
    spread["P6"] = (3, 0)
    truth = Verdicts(("P1",), {"P1": None, "P2": 5, "P6": None}, True, None, ("P6",))
    shown = spread_figure(spread, truth)
    assert list(shown.data[0].x) == ["P1 ✔ holds", "P2 ✘ violated", "P6 ○ holds vacuously"]


def test_revealing_the_answer_on_the_dashboard() -> None:
    class_id, key = create_class()
    ada = join(class_id, "Ada")
    ada.checkbox(key="ex-lease-predict-P2").check().run()
    ada.button(key="ex-lease-predict-check").click().run()
    teacher = run(CLASS_PAGE, **{"class": class_id, "key": key})
    before = json.loads(teacher.get("plotly_chart")[0].proto.spec)
    assert before["data"][0]["x"] == list(PROPERTY_NAMES)  # the answer is not shown yet
    teacher.toggle(key="class-reveal-lease-predict").set_value(True).run()
    assert not teacher.exception, [e.value for e in teacher.exception]
    truth = verdicts(PRESETS["lease-only"].design, REFERENCE_BOUNDS)
    assert truth.vacuous == ("P4", "P5", "P6")
    spec = json.loads(teacher.get("plotly_chart")[0].proto.spec)
    assert spec["data"][0]["x"] == [
        "P1 ✘ violated",
        "P2 ✘ violated",
        "P3 ✘ violated",
        "P4 ○ holds vacuously",
        "P5 ○ holds vacuously",
        "P6 ○ holds vacuously",
    ]
    assert truth.untested_sentence() in all_text(teacher)
    assert spec["data"][0]["y"] == [int(name == "P2") for name in PROPERTY_NAMES]
    wrong = teacher.dataframe[0].value
    assert list(wrong["answer"]) == ["P2"] and list(wrong["students"]) == [1]


def kept_by_lease_only() -> list[str]:
    """The properties the lease alone keeps at the reference bounds, asked of the model."""
    from model.check.explorer import explore
    from model.design import REFERENCE_BOUNDS
    from model.presets import PRESETS

    found = explore(PRESETS["lease-only"].design, REFERENCE_BOUNDS)
    return [name for name, verdict in found.verdicts.items() if not verdict.violated]


def test_a_break_answer_reaches_the_teacher_in_words() -> None:
    """The teacher's dashboard and the CSV show a student's run as its steps in words, and
    the wrong answers too: never the link codes a run is kept under."""
    from classroom.class_store import answers_csv

    class_id, key = create_class()
    ada = join(class_id, "Ada")
    ada.selectbox(key="ex-choice").set_value("lease-break-p2").run()
    for code in ("A1", "S1", "T"):
        ada.button(key=f"ex-lease-break-p2-{code}").click().run()
    ada.button(key="ex-lease-break-p2-check").click().run()
    assert "never violates P2" in all_text(ada)
    ada.button(key="ex-lease-break-p2-T").click().run()
    ada.button(key="ex-lease-break-p2-D1").click().run()
    ada.button(key="ex-lease-break-p2-check").click().run()
    assert "Right: step 5" in all_text(ada)
    view = shared_store().view(class_id, key)
    said = [a.answer for a in view.answers]
    assert said == [
        "Acquire W1 → Send W1's write → Tick",
        "Acquire W1 → Send W1's write → Tick → Tick → Deliver W1's write",
    ]
    assert all(answer in answers_csv(view) for answer in said)
    teacher = run(CLASS_PAGE, **{"class": class_id, "key": key})
    teacher.selectbox(key="class-exercise").set_value("lease-break-p2").run()
    wrong = teacher.dataframe[0].value
    assert list(wrong["answer"]) == [said[0]]


def test_the_dashboard_links_the_students_to_the_chosen_exercise() -> None:
    class_id, key = create_class()
    teacher = run(CLASS_PAGE, **{"class": class_id, "key": key})
    teacher.selectbox(key="class-exercise").set_value("lease-break-p2").run()
    (link,) = [c.value for c in teacher.code if "exercise=" in str(c.value)]
    assert link.endswith(f"/exercises?class={class_id}&exercise=lease-break-p2")
    student = join(class_id, "Ada")
    opened = run(
        EXERCISES_PAGE,
        **{
            "class": class_id,
            "student": str(student.query_params["student"]),
            "exercise": "lease-break-p2",
        },
    )
    assert opened.selectbox(key="ex-choice").value == "lease-break-p2"
