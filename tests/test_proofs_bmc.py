"""BMC agrees with the explorer on shortest violations, and its runs replay through System."""

from __future__ import annotations

import pytest

from model.design import REFERENCE_BOUNDS, Bounds
from model.explorer import explore
from model.presets import PRESETS
from model.rules import Action
from model.system import System
from proofs.bmc import HOLDS_WITHIN_BOUNDS, UNKNOWN, VIOLATED, bmc

TEST_BOUNDS = Bounds(workers=2, lease=1, horizon=3, grants=2, writes=1)
"""Smaller than the reference bounds so the whole table runs in seconds (bench: full table)."""

TEST_LENGTH = 8
"""Runs up to this length are searched in the every-preset test: violations up to it must
match the explorer exactly, and nothing may be found where the explorer finds nothing."""

REFERENCE_SHORTEST = {
    ("lease-only", "P1"): 8,
    ("lease-only", "P2"): 5,
    ("lease-only", "P3"): 8,
    ("fencing", "P2"): 5,
    ("key-version-token", "P2"): 5,
    ("key-version-token", "P3"): 8,
    ("rmw-fencing-unfenced-reads", "P2"): 7,
    ("rmw-fencing-unfenced-reads", "P5"): 12,
}
"""design-variants.md's reference verdicts at W=2 L=2 T=6 G=3 K=2."""


def replays_to_violation(name: str, bounds: Bounds, prop: str, actions: tuple[Action, ...]) -> bool:
    """Every step is enabled in System, and the last one breaks the property."""
    system = System(PRESETS[name].design, bounds)
    state = system.initial()
    for action in actions[:-1]:
        rule = system.rule_for(action)
        assert system.is_enabled(state, rule), (action, state)
        state = system.apply(state, rule)
    last = system.rule_for(actions[-1])
    return system.is_enabled(state, last) and prop in system.violations(state, last)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_bmc_shortest_equals_the_explorer(name: str) -> None:
    design = PRESETS[name].design
    exploration = explore(design, TEST_BOUNDS)
    results = bmc(design, TEST_BOUNDS, min(exploration.depth + 1, TEST_LENGTH))
    for prop, verdict in exploration.verdicts.items():
        result = results[prop]
        assert result.status != UNKNOWN, result.reason
        if verdict.violated and verdict.shortest is not None and verdict.shortest <= TEST_LENGTH:
            assert result.status == VIOLATED and result.shortest == verdict.shortest, prop
            assert result.actions is not None and len(result.actions) == result.shortest
            assert replays_to_violation(name, TEST_BOUNDS, prop, result.actions)
        else:
            assert result.status == HOLDS_WITHIN_BOUNDS, (prop, result.shortest)


@pytest.mark.parametrize(("name", "prop"), sorted(REFERENCE_SHORTEST))
def test_reference_shortest_lengths(name: str, prop: str) -> None:
    """At the reference bounds: a violation at the published length, and none shorter."""
    expected = REFERENCE_SHORTEST[(name, prop)]
    result = bmc(PRESETS[name].design, REFERENCE_BOUNDS, expected, properties=[prop])[prop]
    assert result.status == VIOLATED and result.shortest == expected
    assert result.actions is not None
    assert replays_to_violation(name, REFERENCE_BOUNDS, prop, result.actions)


def test_too_short_a_bound_reports_holds_within_it() -> None:
    result = bmc(PRESETS["lease-only"].design, REFERENCE_BOUNDS, 7, properties=["P1"])["P1"]
    assert result.status == HOLDS_WITHIN_BOUNDS and result.shortest is None


def test_an_exhausted_budget_is_unknown_not_a_verdict() -> None:
    result = bmc(PRESETS["fencing"].design, REFERENCE_BOUNDS, 24, properties=["P1"], rlimit=1)
    assert result["P1"].status == UNKNOWN
    assert result["P1"].reason and "rlimit" in result["P1"].reason


def test_without_the_reduction_the_answers_are_the_same() -> None:
    design = PRESETS["lease-only"].design
    reduced = bmc(design, TEST_BOUNDS, 8, reduce=True)
    plain = bmc(design, TEST_BOUNDS, 8, reduce=False)
    assert {k: v.shortest for k, v in reduced.items()} == {k: v.shortest for k, v in plain.items()}
