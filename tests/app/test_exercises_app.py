"""AppTest: the exercises page, each kind right and wrong, hints, a malformed set file."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.helpers import all_text

PAGE = str(Path(__file__).resolve().parents[2] / "webapp" / "screens" / "exercises.py")


def open_exercises(exercise: str = "") -> AppTest:
    """Run the exercises page on the default set, optionally on one exercise."""
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if exercise:
        at.selectbox(key="ex-choice").set_value(exercise).run()
    return at


def test_predict_wrong_then_right_with_a_hint() -> None:
    at = open_exercises()
    at.checkbox(key="ex-lease-predict-P1").check().run()
    at.button(key="ex-lease-predict-check").click().run()
    text = all_text(at)
    assert "Not quite" in text and "Hint 1: Nothing stops a worker" in text
    at.checkbox(key="ex-lease-predict-P1").uncheck()
    at.checkbox(key="ex-lease-predict-P4").check()
    at.checkbox(key="ex-lease-predict-P5").check().run()
    at.button(key="ex-lease-predict-check").click().run()
    text = all_text(at)
    assert "Right: the design keeps P4, P5" in text and "Hint 1" not in text


def test_break_it_by_clicking_and_replaying() -> None:
    at = open_exercises("lease-break-p2")
    for code in ("A1", "S1", "T"):
        at.button(key=f"ex-lease-break-p2-{code}").click().run()
    at.button(key="ex-lease-break-p2-check").click().run()
    assert "never violates P2" in all_text(at)
    at.button(key="ex-lease-break-p2-T").click().run()
    at.button(key="ex-lease-break-p2-D1").click().run()
    at.button(key="ex-lease-break-p2-check").click().run()
    assert "Right: step 5 (Deliver(W1)) violates P2" in all_text(at)


def test_break_it_refuses_too_many_steps() -> None:
    at = open_exercises("fencing-break-p2")
    for code in ("T", "T", "A1", "S1", "T", "T", "D1"):
        at.button(key=f"ex-fencing-break-p2-{code}").click().run()
    at.button(key="ex-fencing-break-p2-check").click().run()
    assert "allows at most 6" in all_text(at)


def test_fix_it_wrong_then_right() -> None:
    at = open_exercises("key-version-fix-p3")
    at.selectbox(key="ex-key-version-fix-p3-opt-token").set_value("random").run()
    at.button(key="ex-key-version-fix-p3-check").click().run()
    text = all_text(at)
    assert "still violates P3" in text and "Hint 1: A random token" in text
    at.selectbox(key="ex-key-version-fix-p3-opt-token").set_value("counter-volatile").run()
    at.button(key="ex-key-version-fix-p3-check").click().run()
    assert "not a valid design" in all_text(at)
    at.selectbox(key="ex-key-version-fix-p3-opt-token").set_value("counter").run()
    at.button(key="ex-key-version-fix-p3-check").click().run()
    assert "Right: core (fencing) keeps P1, P3, P4, P5" in all_text(at)
    rows = at.dataframe[0].value
    assert bool(rows.loc[rows["title"].str.startswith("8."), "solved"].iloc[0])


def test_a_malformed_set_in_the_teachers_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bad.toml").write_text(
        'title = "Bad"\n\n[[exercise]]\nid = "x"\nkind = "break"\ntitle = "t"\n'
        'prompt = "p"\npreset = "fencing"\nproperty = "P2"\nmax_steps = 0\n',
        encoding="utf-8",
    )
    (tmp_path / "broken.toml").write_text('title = "x\n', encoding="utf-8")
    monkeypatch.setenv("FENCING_LAB_EXERCISES", str(tmp_path))
    at = open_exercises()
    at.selectbox(key="ex-set").set_value("Folder: bad.toml").run()
    text = all_text(at)
    assert "bad.toml was not loaded" in text
    assert "line 10: exercise 1 ('x'), field 'max_steps'" in text
    at.selectbox(key="ex-set").set_value("Folder: broken.toml").run()
    assert "line 1: TOML syntax" in all_text(at)
