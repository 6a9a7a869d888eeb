"""`fencing exercises`: a set checked exactly as the page checks it, every problem on its own
line with exit 2, the template and the reference printed, and no Streamlit imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from classroom.data import ExerciseSetError
from classroom.schema import DEFAULT_SET, TEMPLATE_SET, reference_markdown, template_text
from classroom.sets import check_set_bytes
from tests.cli_helpers import run

ROOT = Path(__file__).resolve().parent.parent
BROKEN = """title = "Guesses"

[[exercise]]
type = "break"
question = "Break P2"
title = "B"
prompt = "p"
preset = "lease-only"
property = "P2"
"""


def test_good_sets_exit_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["exercises", "check", str(TEMPLATE_SET), str(DEFAULT_SET)], capsys)
    assert code == 0, err
    assert "template.toml: good: 3 exercises (1 predict, 1 break, 1 fix)" in out
    assert err == ""


def test_every_problem_is_a_line_of_its_own_with_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "guesses.toml"
    path.write_text(BROKEN, encoding="utf-8")
    code, out, err = run(["exercises", "check", str(path)], capsys)
    expected = check_set_bytes(BROKEN.encode(), path.name)
    assert isinstance(expected, ExerciseSetError)
    lines = err.splitlines()
    assert code == 2 and out == ""
    assert lines == [f"{path}: {problem.text()}" for problem in expected.problems]
    assert len(lines) == 4, lines  # type, question, id, kind
    assert any("`kind` is missing" in line for line in lines)


def test_files_that_cannot_be_read_are_one_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["exercises", "check", str(tmp_path / "nope.toml"), str(tmp_path)], capsys)
    assert code == 2
    assert err.splitlines() == [
        f"{tmp_path / 'nope.toml'}: file: does not exist",
        f"{tmp_path}: file: is not a regular file",
    ]


def test_template_and_doc_are_printed(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["exercises", "template"], capsys)[1] == template_text()
    assert run(["exercises", "doc"], capsys)[1] == reference_markdown()


@pytest.mark.slow
def test_the_command_does_not_import_streamlit() -> None:
    code = (
        "import sys; from fencing.cli import main; main(['exercises', 'check', "
        f"{str(TEMPLATE_SET)!r}]); print('streamlit' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip().endswith("False"), done.stdout + done.stderr
