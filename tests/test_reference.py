"""The reference figures of docs/model.md#reference-figures, reproduced on the command line.

The figures are recorded once in docs/golden.json (tests/test_golden.py checks the file
against a fresh exploration and docs/model.md's tables against the file); here the CLI
must print the same counts, verdicts and orbits.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fencing.cli import main
from fencing.golden import read_golden

CORE_ROWS: list[dict[str, Any]] = read_golden()["core"]


def _row_id(row: dict[str, Any]) -> str:
    return f"W{row['bounds']['workers']}-T{row['bounds']['horizon']}-{row['receiver']}"


@pytest.mark.parametrize("row", CORE_ROWS, ids=_row_id)
def test_cli_json_reproduces_core_figures(
    row: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """`fencing check --json` prints the recorded figures, with and without symmetry."""
    flags = ["check", "--receiver", row["receiver"], "--json"]
    for name, value in row["bounds"].items():
        flags += [f"--{name}", str(value)]
    assert main(flags) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["complete"] is True and report["symmetry"] is False
    assert (report["states"], report["transitions"], report["depth"]) == (
        row["states"],
        row["transitions"],
        row["depth"],
    )
    for name, verdict in row["verdicts"].items():
        cell = report["properties"][name]
        assert (cell["status"], cell["shortest"]) == (verdict["status"], verdict["shortest"])
        assert (len(cell["trace"]) if cell["trace"] else None) == verdict["shortest"]
    assert main([*flags, "--symmetry"]) == 0
    assert json.loads(capsys.readouterr().out)["states"] == row["orbits"]
