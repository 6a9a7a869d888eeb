"""Every preset's verdicts at the reference bounds, and every claim its lesson makes."""

from __future__ import annotations

import pytest

from model.design import REFERENCE_BOUNDS, Bounds
from model.explorer import explore
from model.presets import PRESET_NAMES, PRESETS, PRESETS_LIST, Preset
from model.properties import PROPERTY_NAMES
from model.system import System
from tests.naive import naive_explore


@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_preset_verdicts_are_pinned(preset: Preset) -> None:
    """The explorer's shortest violation of each property equals the preset's pinned value."""
    result = explore(preset.design, REFERENCE_BOUNDS)
    assert result.complete
    found = {name: result.verdicts[name].shortest for name in PROPERTY_NAMES}
    assert found == preset.expected_verdicts()


@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_each_lesson_claim_is_a_verdict(preset: Preset) -> None:
    """Every `(Pn holds)` / `(Pn fails)` in a lesson agrees with the pinned verdicts."""
    claims = preset.claims()
    assert claims, f"{preset.name}'s lesson makes no checkable claim"
    for name, holds in claims.items():
        assert (preset.expected_verdicts()[name] is None) == holds, name


def test_presets_have_text_and_sources() -> None:
    """Every preset says what it mirrors, its lesson and a source, and names are unique."""
    assert len(PRESET_NAMES) == len(set(PRESET_NAMES)) == 18
    for preset in PRESETS_LIST:
        assert preset.mirrors and preset.lesson.endswith(".") and preset.source


def test_grant_fences_only_loses_p2_before_any_newer_grant() -> None:
    """The grant-fences lesson: every write accepted outside its lease has no newer grant."""
    design, bounds = PRESETS["grant-fences"].design, Bounds(2, 2, 5, 3, 1)
    system = System(design, bounds)
    for state in naive_explore(design, bounds).states:
        view = system.view(state)
        for rule in system.enabled(state):
            if rule.write_accepted(view):
                assert view.gid[rule.action.worker] == view.grants
