"""Crashes, renewals and a lock without a lease beside every receiver and token source.

Each design is checked by three engines at small bounds: the explorer, the reference
search over the step interpreter (`model.check.reference`) and bounded model checking with z3.
They must agree on the counts, the depth, and each property's verdict and
shortest violation; P6 must be vacuous exactly where nobody can crash.
"""

from __future__ import annotations

from typing import Any

import pytest

from model.check.explorer import explore
from model.check.reference import reference_search
from model.design import Bounds, Design
from model.options import BY_OPTION, Token
from model.verdicts import Status
from proofs.bmc import HOLDS_WITHIN_BOUNDS, VIOLATED, bmc

SMALL = Bounds(workers=2, lease=1, horizon=3, grants=2, writes=1)

VARIANTS: dict[str, dict[str, Any]] = {
    "no-lease": {"expiry": "never", "crashes": 1},
    "keepalive": {"renew": True, "crashes": 1},
}
"""The new options, as the two ways a lock can outlive (or not) a crashed holder."""


def needs(token: Token) -> dict[str, Any]:
    """Options a token source requires to be a design of its own (read from its row)."""
    return {"coordinator_restarts": 1} if token.row.reset_by_coordinator_restart else {}


def designs() -> list[tuple[str, Design]]:
    """Every receiver (with counter tokens) and every token source (with the fenced
    receiver), each with both variants."""
    found = []
    for variant, options in VARIANTS.items():
        for receiver in BY_OPTION["receiver"].values:
            found.append((f"{receiver}-{variant}", Design(receiver=receiver, **options)))
        for token in Token:
            if token is BY_OPTION["token"].default:
                continue
            changes = {"token": token, **needs(token), **options}
            found.append((f"{token}-{variant}", Design().with_changes(changes)))
    return found


DESIGNS = designs()


@pytest.mark.slow
@pytest.mark.parametrize("design", [d for _, d in DESIGNS], ids=[n for n, _ in DESIGNS])
def test_explorer_reference_search_and_bmc_agree(design: Design) -> None:
    """Same states, transitions and depth as a plain search; same verdicts and shortest
    lengths from BMC; P6 exercised in every one of these designs (somebody can crash)."""
    fast = explore(design, SMALL)
    slow = reference_search(design, SMALL)
    assert fast.complete
    assert (fast.states, fast.transitions, fast.depth) == (
        slow.states,
        slow.transitions,
        slow.depth,
    )
    shortest = {name: v.shortest for name, v in fast.verdicts.items() if v.violated}
    assert shortest == {n: v.shortest for n, v in slow.verdicts.items() if v.violated}
    assert fast.verdicts["P6"].status is not Status.VACUOUS
    found = bmc(design, SMALL)
    for name, verdict in fast.verdicts.items():
        if verdict.violated:
            assert (found[name].status, found[name].shortest) == (VIOLATED, verdict.shortest)
        else:
            assert found[name].status == HOLDS_WITHIN_BOUNDS, (name, found[name].reason)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_p6_fails_exactly_without_a_lease(variant: str) -> None:
    """Over the whole grid, a lock without a lease always strands its crashed holder and a
    lease always frees it."""
    for name, design in DESIGNS:
        if not name.endswith(variant):
            continue
        verdict = explore(design, SMALL).verdicts["P6"]
        assert verdict.violated == (variant == "no-lease"), name
        if verdict.violated:
            assert verdict.shortest == SMALL.lease + 3


def test_p6_is_vacuous_when_nobody_can_crash() -> None:
    """Renewals or a lock without a lease, but no crash: P6 speaks of nothing that happens."""
    for design in (Design(renew=True), Design(receiver="none", expiry="never")):
        assert explore(design, SMALL).verdicts["P6"].status is Status.VACUOUS
