"""docs/golden.json, the recorded figures, against a fresh exploration, and the tables
generated from it (the verdict matrix of docs/checker.md, docs/model.md's reference
figures) against the file."""

from __future__ import annotations

import json

import pytest

from fencing.golden import GOLDEN, REGIONS, Region, compute_golden, golden_text, read_golden
from model.presets import PRESET_NAMES
from model.properties import PROPERTY_NAMES


def test_the_golden_file_is_what_the_explorer_finds_now() -> None:
    """Every recorded count and verdict equals a fresh exploration (rerun `make golden`
    after changing the model, and review the difference)."""
    assert read_golden() == compute_golden()


def test_the_golden_file_covers_every_preset_and_property() -> None:
    golden = read_golden()
    assert list(golden["presets"]) == list(PRESET_NAMES)
    for found in golden["presets"].values():
        assert list(found["verdicts"]) == list(PROPERTY_NAMES)


def test_the_golden_file_is_written_in_its_stable_form() -> None:
    """The file is exactly what `make golden` writes for its own content."""
    text = GOLDEN.read_text(encoding="utf-8")
    assert golden_text(json.loads(text)) == text


@pytest.mark.parametrize("region", REGIONS, ids=lambda r: f"{r.path.name}-{r.name}")
def test_each_generated_table_is_made_from_the_golden_file(region: Region) -> None:
    assert region.current() == region.generated(read_golden())
