"""The class store: create, join, answer and restore; limits, expiry, the teacher's key,
isolation between classes, concurrent answers; the dashboard's figures and CSV."""

from __future__ import annotations

import csv
import io
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from classroom import class_store
from classroom.class_store import (
    ClassError,
    ClassStore,
    SoloProgress,
    answers_csv,
    class_hours,
    classes_folder,
    common_wrong_answers,
    exercise_counts,
    prediction_spread,
)
from model.properties import PROPERTY_NAMES

SET_TEXT = 'title = "Mini"\n'


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ClassStore]:
    opened = ClassStore(tmp_path / "classes")
    yield opened
    opened.close()


def test_a_class_is_created_joined_answered_and_restored(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "classes"
    first = ClassStore(folder)
    made = first.create("Tuesday", "default.toml", SET_TEXT)
    ada = first.join(made.info.id, "Ada")
    first.answer(made.info.id, ada.token, "p1", "P1, P4", False, "Not quite", ["P1", "P4"])
    first.answer(made.info.id, ada.token, "p1", "P4, P5", True, "Right")
    first.close()
    again = ClassStore(folder)  # a reload, or the server restarted
    assert again.get(made.info.id).set_text == SET_TEXT
    assert again.member(made.info.id, ada.token) == ada
    answers = again.answers_of(made.info.id, ada.token)
    assert [(a.answer, a.correct, a.props) for a in answers] == [
        ("P1, P4", False, ("P1", "P4")),
        ("P4, P5", True, None),
    ]
    assert again.journal_mode() == "wal"
    again.close()


def test_the_folder_is_private_and_the_key_is_not_stored(tmp_path: Path) -> None:
    folder = tmp_path / "classes"
    opened = ClassStore(folder)
    made = opened.create("x", "s", SET_TEXT)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "classes.sqlite3").stat().st_mode) == 0o600
    opened.close()
    stored = b"".join(p.read_bytes() for p in folder.iterdir())
    assert made.key.encode() not in stored and made.info.id.encode() in stored


def test_a_folder_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.raises(ClassError, match="can be written by other users"):
        ClassStore(shared)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ClassError, match=r"cannot be created|is not a folder"):
        ClassStore(tmp_path / "file")


def test_the_folder_and_hours_come_from_the_environment(tmp_path: Path) -> None:
    assert classes_folder({"FENCING_LAB_CLASSES": str(tmp_path)}) == tmp_path
    assert classes_folder({"XDG_DATA_HOME": "/d"}) == Path("/d/fencing-lab/classes")
    assert classes_folder({}).parts[-4:] == (".local", "share", "fencing-lab", "classes")
    assert class_hours({"FENCING_LAB_CLASS_HOURS": "2"}) == 2
    for bad in ("0", "-1", "1e9", "99999", "two", ""):
        assert class_hours({"FENCING_LAB_CLASS_HOURS": bad}) == 24


def test_the_teacher_needs_the_key(store: ClassStore) -> None:
    made = store.create("x", "s", SET_TEXT)
    assert store.view(made.info.id, made.key).info == made.info
    for wrong in ("", made.key[:-1] + ("A" if made.key[-1] != "A" else "B"), "x" * 5000):
        with pytest.raises(ClassError, match="key"):
            store.view(made.info.id, wrong)


def test_classes_never_see_each_other(store: ClassStore) -> None:
    one = store.create("one", "s", SET_TEXT)
    two = store.create("two", "s", SET_TEXT)
    ada = store.join(one.info.id, "Ada")
    bob = store.join(two.info.id, "Bob")
    store.answer(one.info.id, ada.token, "e", "a", True, "m")
    assert store.member(two.info.id, ada.token) is None
    with pytest.raises(ClassError, match="not in this class"):
        store.answer(two.info.id, ada.token, "e", "a", True, "m")
    with pytest.raises(ClassError, match="key"):
        store.view(two.info.id, one.key)
    view = store.view(two.info.id, two.key)
    assert view.members == (bob,) and view.answers == ()
    assert store.answers_of(two.info.id, ada.token) == ()


def test_limits_of_classes_students_answers_and_text(
    store: ClassStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(class_store, "MAX_CLASSES", 2)
    monkeypatch.setattr(class_store, "MAX_STUDENTS", 2)
    monkeypatch.setattr(class_store, "MAX_ANSWERS_PER_STUDENT", 3)
    made = store.create("t" * 1000, "s", SET_TEXT)
    assert len(made.info.title) == class_store.MAX_TITLE_CHARS
    store.create("second", "s", SET_TEXT)
    with pytest.raises(ClassError, match="already has 2 classes"):
        store.create("third", "s", SET_TEXT)
    with pytest.raises(ClassError, match="larger than"):
        store.create("big", "s", "#" * (class_store.MAX_SET_TEXT_BYTES + 1))
    ada = store.join(made.info.id, "A\nd\x1ba" + "x" * 1000)
    assert ada.nickname.startswith("A da") and len(ada.nickname) == class_store.MAX_NICKNAME_CHARS
    store.join(made.info.id)
    with pytest.raises(ClassError, match="full"):
        store.join(made.info.id, "late")
    for _ in range(3):
        kept = store.answer(made.info.id, ada.token, "e", "y" * 5000, False, "z" * 5000)
    assert len(kept.answer) == class_store.MAX_ANSWER_CHARS
    assert len(kept.message) == class_store.MAX_MESSAGE_CHARS
    with pytest.raises(ClassError, match="3 answers"):
        store.answer(made.info.id, ada.token, "e", "a", False, "m")
    assert len(store.answers_of(made.info.id, ada.token)) == 3
    monkeypatch.setattr(class_store, "MAX_ANSWERS_PER_CLASS", 4)
    second = store.view(made.info.id, made.key).members[1]  # the other student
    store.answer(made.info.id, second.token, "e", "a", False, "m")
    with pytest.raises(ClassError, match="this class has 4 answers"):
        store.answer(made.info.id, second.token, "e", "a", False, "m")


def test_a_class_expires_and_is_deleted(tmp_path: Path) -> None:
    clock = Clock()
    store = ClassStore(tmp_path / "c", hours=2, now=clock)
    made = store.create("x", "s", SET_TEXT)
    ada = store.join(made.info.id)
    clock.now += 2 * 3600 - 1
    store.answer(made.info.id, ada.token, "e", "a", True, "m")
    clock.now += 1
    for attempt in (
        lambda: store.get(made.info.id),
        lambda: store.join(made.info.id),
        lambda: store.answer(made.info.id, ada.token, "e", "a", True, "m"),
        lambda: store.view(made.info.id, made.key),
    ):
        with pytest.raises(ClassError, match="ended"):
            attempt()
    assert store.purge() == 1
    with pytest.raises(ClassError, match="no such class"):
        store.get(made.info.id)
    assert store.answers_of(made.info.id, ada.token) == ()
    store.close()


def test_links_that_are_not_tokens_are_refused_before_any_lookup(store: ClassStore) -> None:
    for bad in ("", "short", "a" * 65, "../../etc", "x' OR 1=1 --"):
        with pytest.raises(ClassError, match="not complete"):
            store.get(bad)
        assert store.member("whatever-class", bad) is None


def test_concurrent_answers_from_threads_are_all_kept(store: ClassStore) -> None:
    made = store.create("busy", "s", SET_TEXT)
    students = [store.join(made.info.id, f"s{n}") for n in range(30)]
    errors: list[BaseException] = []
    start = threading.Barrier(len(students))

    def work(token: str) -> None:
        try:
            start.wait()
            for n in range(20):
                store.answer(made.info.id, token, f"e{n % 3}", f"a{n}", n % 2 == 0, "m")
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(s.token,)) for s in students]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    view = store.view(made.info.id, made.key)
    assert len(view.answers) == 30 * 20
    for student in students:
        assert [a.answer for a in store.answers_of(made.info.id, student.token)] == [
            f"a{n}" for n in range(20)
        ]


def test_the_dashboard_figures(store: ClassStore) -> None:
    made = store.create("x", "s", SET_TEXT)
    cid = made.info.id
    ada, bob, cy = (store.join(cid, name) for name in ("Ada", "=HYPERLINK(1)", "Cy"))
    store.answer(cid, ada.token, "p", "P1", False, "no", ["P1"])
    store.answer(cid, ada.token, "p", "P4, P5", True, "yes", ["P4", "P5"])
    store.answer(cid, bob.token, "p", "P1", False, "no", ["P1"])
    store.answer(cid, bob.token, "p", "P1", False, "no", ["P1"])
    store.answer(cid, cy.token, "b", "A1 S1", False, "no")
    view = store.view(cid, made.key)
    counts = {c.exercise_id: c for c in exercise_counts(view, ["p", "b", "f"])}
    assert (counts["p"].joined, counts["p"].tried, counts["p"].solved) == (3, 2, 1)
    assert (counts["b"].tried, counts["b"].solved, counts["f"].tried) == (1, 0, 0)
    spread = prediction_spread(view, "p", PROPERTY_NAMES)
    assert spread["P1"] == (2, 0)  # first predictions only: Ada's right answer came later
    assert spread["P4"] == (0, 2)
    assert set(spread) == set(PROPERTY_NAMES)
    assert common_wrong_answers(view, "p") == [("P1", 2)]  # Bob's repeat counts once
    rows = list(csv.reader(io.StringIO(answers_csv(view))))
    assert rows[0][:5] == ["student", "nickname", "exercise", "answer", "correct"]
    assert rows[3][:2] == ["2", "'=HYPERLINK(1)"]
    assert all(ada.token not in cell for row in rows for cell in row)


def test_solo_progress_is_bounded_and_per_set() -> None:
    solo = SoloProgress(most=2)
    answer = class_store.Answer("t", "e", "a", None, True, "m", 0.0)
    solo.add("one", "set-a", answer)
    solo.add("one", "set-b", answer)
    assert solo.of("one", "set-a") == (answer,) and solo.of("two", "set-a") == ()
    solo.add("two", "set-a", answer)
    assert solo.of("one", "set-a") == ()  # the oldest is forgotten
