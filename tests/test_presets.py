"""Every preset's verdicts at the reference bounds, and every claim its lesson makes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from model.check.explorer import explore
from model.check.reference import reference_search
from model.claims import claims_at, render
from model.design import REFERENCE_BOUNDS, Bounds
from model.presets import PRESET_NAMES, PRESETS, PRESETS_LIST, Preset
from model.properties import PROPERTY_NAMES
from model.system import System
from model.verdicts import Status


@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_every_claim_of_a_preset_is_true_at_its_bounds(preset: Preset) -> None:
    """Each claim (status and shortest length) equals the explorer's verdict at its bounds."""
    assert {claim.prop for claim in preset.claims} == set(PROPERTY_NAMES)
    for claim in preset.claims:
        result = explore(preset.design, claim.bounds)
        assert result.complete
        verdict = result.verdicts[claim.prop]
        assert claim.matches(verdict), (claim, verdict)


@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_each_lesson_shows_at_least_one_claim(preset: Preset) -> None:
    """Every lesson states a verdict, and every verdict it states is rendered from a claim."""
    lesson = preset.as_lesson()
    assert lesson.shown_claims(), f"{preset.name}'s lesson shows no verdict"
    assert "{" not in preset.lesson and "}" not in preset.lesson
    assert all(claim.prop in preset.lesson for claim in lesson.shown_claims())


def test_notes_are_rendered_from_the_claims() -> None:
    """`{P1,P3}` becomes `(P1, P3 fail)` or `(P1, P3 hold)`, a vacuous claim is never said
    simply to hold, and a mixed note is refused."""
    claims = claims_at(REFERENCE_BOUNDS, P1=8, P2="holds", P3=8, P5="vacuous", P6="vacuous")
    assert render("a {P1,P3} b {P2}", claims) == "a (P1, P3 fail) b (P2 holds)"
    assert render("{P1}", claims) == "(P1 fails)"
    assert render("{P5}", claims) == "(P5 holds vacuously)"
    assert render("{P5,P6}", claims) == "(P5, P6 hold vacuously)"
    with pytest.raises(ValueError, match="cannot mix"):
        render("{P1,P2}", claims)
    with pytest.raises(ValueError, match="cannot mix"):
        render("{P2,P5}", claims)


def test_a_shown_claim_that_is_false_fails_the_check() -> None:
    """The check is not vacuous: a claim with the wrong length or status does not match."""
    fencing = PRESETS["fencing"]
    result = explore(fencing.design, REFERENCE_BOUNDS)
    p2 = next(claim for claim in fencing.claims if claim.prop == "P2")
    assert p2.matches(result.verdicts["P2"])
    assert not replace(p2, shortest=6).matches(result.verdicts["P2"])
    p5 = next(claim for claim in fencing.claims if claim.prop == "P5")
    assert not replace(p5, status=Status.HOLDS).matches(result.verdicts["P5"])


def test_presets_have_text_and_sources() -> None:
    """Every preset says what it mirrors, its lesson and a source, and names are unique."""
    assert len(PRESET_NAMES) == len(set(PRESET_NAMES)) == 21
    for preset in PRESETS_LIST:
        assert preset.mirrors and preset.lesson.endswith(".") and preset.source


def test_grant_fences_only_loses_p2_before_any_newer_grant() -> None:
    """The grant-fences lesson: every write accepted outside its lease has no newer grant."""
    design, bounds = PRESETS["grant-fences"].design, Bounds(2, 2, 5, 3, 1)
    system = System(design, bounds)
    for state in reference_search(design, bounds).distance:
        view = system.view(state)
        for rule in system.enabled(state):
            if rule.write_accepted(view):
                assert view.gid[rule.action.worker] == view.grants
