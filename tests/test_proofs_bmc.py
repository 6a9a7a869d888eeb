"""BMC agrees with the explorer on every verdict and shortest violation, and its runs replay."""

from __future__ import annotations

import pytest
import z3

from model.check.explorer import explore
from model.design import REFERENCE_BOUNDS, Bounds
from model.presets import PRESETS
from model.properties import BY_NAME
from model.rules import Action
from model.system import System
from proofs.bmc import BMC, HOLDS_WITHIN_BOUNDS, UNKNOWN, VIOLATED, bmc
from proofs.bounded import INDUCTION, K_INDUCTION, bounded_invariant, step_case
from proofs.encoding import DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS, Encoding

REFERENCE_SHORTEST = {
    ("lease-only", "P1"): 8,
    ("lease-only", "P2"): 5,
    ("lease-only", "P3"): 8,
    ("fencing", "P2"): 5,
    ("key-version-token", "P2"): 5,
    ("key-version-token", "P3"): 8,
    ("rmw-fencing-unfenced-reads", "P2"): 7,
    ("rmw-fencing-unfenced-reads", "P5"): 12,
    ("lock-without-lease", "P6"): 5,
    ("keepalive-fencing", "P2"): 5,
}
"""docs/model.md's reference violations at W=2 L=2 T=6 G=3 K=2 (its other cells hold)."""

PUBLISHED = (
    "lease-only",
    "fencing",
    "key-version-token",
    "rmw-fencing-unfenced-reads",
    "lock-without-lease",
    "keepalive-fencing",
)
"""Presets whose whole row docs/model.md publishes."""

SMALL = Bounds(workers=2, lease=1, horizon=3, grants=2, writes=1)


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
@pytest.mark.slow
def test_bmc_equals_the_explorer_at_the_reference_bounds(name: str) -> None:
    """Every property: the explorer's verdict and shortest length, with a replayable run, and
    each `holds` closed by a proof (induction, k-induction, or BMC to the explorer's depth)."""
    design = PRESETS[name].design
    exploration = explore(design, REFERENCE_BOUNDS)
    results = bmc(design, REFERENCE_BOUNDS)
    for prop, verdict in exploration.verdicts.items():
        result = results[prop]
        assert result.status != UNKNOWN, (prop, result.reason)
        if verdict.violated:
            assert (result.status, result.shortest) == (VIOLATED, verdict.shortest), prop
            assert result.method == BMC and result.actions is not None
            assert replays_to_violation(name, REFERENCE_BOUNDS, prop, result.actions)
        else:
            assert result.status == HOLDS_WITHIN_BOUNDS and result.shortest is None, prop
            assert result.method in (INDUCTION, K_INDUCTION, BMC)
            if result.method == BMC:
                assert result.max_length >= exploration.depth + 1
        if name in PUBLISHED:
            assert result.shortest == REFERENCE_SHORTEST.get((name, prop)), prop


def test_induction_off_unrolls_to_the_explorers_depth() -> None:
    """Without induction a holding property needs BMC to the diameter, and still agrees."""
    design = PRESETS["fencing"].design
    exploration = explore(design, SMALL)
    results = bmc(design, SMALL, induction=False)
    for prop, verdict in exploration.verdicts.items():
        expected = verdict.shortest if verdict.violated else None
        assert results[prop].shortest == expected and results[prop].status != UNKNOWN
    assert results["P1"].method == BMC and results["P1"].max_length == exploration.depth + 1


def test_step_case_proves_a_true_property_and_refutes_a_broken_one() -> None:
    fencing = Encoding(PRESETS["fencing"].design, REFERENCE_BOUNDS, bitvectors=True)
    invariant = bounded_invariant(fencing, DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS)
    assert step_case(invariant, BY_NAME["P1"], 2, DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS) == z3.unsat
    lease_only = Encoding(PRESETS["lease-only"].design, REFERENCE_BOUNDS, bitvectors=True)
    invariant = bounded_invariant(lease_only, DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS)
    assert step_case(invariant, BY_NAME["P1"], 4, DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS) == z3.sat


def test_too_short_a_bound_reports_holds_within_it() -> None:
    result = bmc(PRESETS["lease-only"].design, REFERENCE_BOUNDS, 7, properties=["P1"])["P1"]
    assert result.status == HOLDS_WITHIN_BOUNDS and result.shortest is None


def test_an_exhausted_budget_is_unknown_not_a_verdict() -> None:
    result = bmc(PRESETS["fencing"].design, REFERENCE_BOUNDS, 24, properties=["P1"], rlimit=1)
    assert result["P1"].status == UNKNOWN
    assert result["P1"].reason and "rlimit" in result["P1"].reason


def test_without_the_reduction_the_answers_are_the_same() -> None:
    design = PRESETS["lease-only"].design
    reduced = bmc(design, SMALL, 8, reduce=True)
    plain = bmc(design, SMALL, 8, reduce=False)
    assert {k: v.shortest for k, v in reduced.items()} == {k: v.shortest for k, v in plain.items()}
