"""Exact counts pinned for options the reference rows do not reach.

Every preset's counts at the reference bounds are recorded in docs/golden.json (checked
against a fresh exploration by tests/test_golden.py). The explorer is cross-checked
against the reference search elsewhere; these pins
make any change of a rule visible even where no verdict moves (a rule that counts reads
against K, an off-by-one in the worker's own lease check, a mark that grant fences lower).
"""

from __future__ import annotations

import pytest

from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.explorer import explore
from model.presets import PRESETS
from model.reference import reference_search

ELSEWHERE = (
    ("rmw-lease-only", Bounds(2, 2, 5, 2, 1), 1234, 2780, 17),
    ("rmw-fencing-fenced-reads", Bounds(3, 2, 4, 2, 1), 1467, 3380, 16),
    ("worker-checks-lease", Bounds(3, 3, 6, 3, 1), 5512, 11928, 18),
    ("grant-fences", Bounds(2, 2, 5, 3, 1), 1130, 2590, 16),
)


@pytest.mark.parametrize("name, bounds, states, transitions, depth", ELSEWHERE)
def test_option_counts_at_other_bounds(
    name: str, bounds: Bounds, states: int, transitions: int, depth: int
) -> None:
    result = explore(PRESETS[name].design, bounds)
    assert (result.states, result.transitions, result.depth) == (states, transitions, depth)


def test_grant_fences_with_random_tokens() -> None:
    """With unordered tokens the grant raises the mark only to the larger of the two: the
    mark never goes down, so accepted tokens never do either, though holders get refused."""
    result = explore(Design(token="random", grant_fences=True), REFERENCE_BOUNDS)
    assert (result.states, result.transitions, result.depth) == (11812, 28874, 23)
    shortest = {name: v.shortest for name, v in result.verdicts.items()}
    assert shortest == {"P1": None, "P2": 5, "P3": None, "P4": 6, "P5": None}


@pytest.mark.parametrize(
    "fenced_reads, states, transitions, depth, shortest",
    [
        (False, 1023, 2196, 18, {"P1": 14, "P2": 8, "P3": 14, "P4": None, "P5": 14}),
        (True, 1425, 3112, 20, {"P1": 16, "P2": 9, "P3": 16, "P4": None, "P5": 16}),
    ],
    ids=["unfenced-reads", "fenced-reads"],
)
def test_non_atomic_receiver_with_read_modify_write(
    fenced_reads: bool, states: int, transitions: int, depth: int, shortest: dict
) -> None:
    """A combination no preset reaches: checked reads take the Check/Apply path, others not.

    The counts also equal a plain breadth-first search over the interpreter.
    """
    design = Design(receiver="fenced-nonatomic", workload="rmw", fenced_reads=fenced_reads)
    bounds = Bounds(2, 2, 4, 2, 1)
    result = explore(design, bounds)
    assert (result.states, result.transitions, result.depth) == (states, transitions, depth)
    assert {name: v.shortest for name, v in result.verdicts.items()} == shortest
    plain = reference_search(design, bounds)
    assert (plain.states, plain.transitions, plain.depth) == (states, transitions, depth)
