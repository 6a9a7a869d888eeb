"""Exact counts pinned for options the reference rows do not reach.

Every preset's counts at the reference bounds are recorded in docs/golden.json (checked
against a fresh exploration by tests/test_golden.py). The explorer is cross-checked
against the reference search elsewhere; these pins
make any change of a rule visible even where no verdict moves (a rule that counts reads
against K, an off-by-one in the worker's own lease check, a mark that grant fences lower).
"""

from __future__ import annotations

import pytest

from model.check.explorer import explore
from model.check.reference import ReferenceResult, reference_search
from model.check.search import SearchOptions
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.presets import PRESETS

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
    assert shortest == {"P1": None, "P2": 5, "P3": None, "P4": 6, "P5": None, "P6": None}


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
    assert {name: v.shortest for name, v in result.verdicts.items()} == {**shortest, "P6": None}
    plain = reference_search(design, bounds)
    assert (plain.states, plain.transitions, plain.depth) == (states, transitions, depth)


CRASH_REFERENCE = (
    ("lock-without-lease", 1078, 1632, {"P6": 5}),
    ("keepalive-fencing", 25998, 61138, {"P2": 5}),
)
"""The two reference rows of the crashes-and-renewals options (W=2 L=2 T=6 G=3 K=2): states,
transitions and the shortest violations (every other property holds or is vacuous)."""


@pytest.mark.parametrize("name, states, transitions, shortest", CRASH_REFERENCE)
@pytest.mark.slow
def test_crash_and_renewal_reference_rows_by_two_searches(
    name: str, states: int, transitions: int, shortest: dict[str, int]
) -> None:
    """The explorer and a plain breadth-first search over the interpreter both give the
    reference row exactly: counts, and which properties fail at what shortest length."""
    design = PRESETS[name].design
    result = explore(design, REFERENCE_BOUNDS)
    plain = reference_search(design, REFERENCE_BOUNDS)
    assert (result.states, result.transitions) == (states, transitions)
    assert (plain.states, plain.transitions) == (states, transitions)
    found = {n: v.shortest for n, v in result.verdicts.items() if v.violated}
    assert found == shortest == _violated(plain)


@pytest.mark.slow
def test_keepalive_lease_by_two_searches() -> None:
    """The keepalive over a plain store: both searches agree on its counts and verdicts."""
    design = PRESETS["keepalive-lease"].design
    result = explore(design, REFERENCE_BOUNDS)
    plain = reference_search(design, REFERENCE_BOUNDS)
    assert (plain.states, plain.transitions, plain.depth) == (34887, 82042, 26)
    assert (result.states, result.transitions, result.depth) == (34887, 82042, 26)
    found = {n: v.shortest for n, v in result.verdicts.items() if v.violated}
    assert found == _violated(plain) == {"P1": 8, "P2": 5, "P3": 8}


@pytest.mark.parametrize(
    "design, states, transitions, depth, shortest",
    [
        (
            Design(receiver="none", renew=True, crashes=2),
            3923,
            7395,
            12,
            {"P1": 7, "P2": 4, "P3": 7},
        ),
        (Design(expiry="never", crashes=2), 255, 380, 12, {"P6": 4}),
        (
            Design(receiver="lease-aware", worker_check=True, renew=True, crashes=1),
            4199,
            6874,
            12,
            {},
        ),
    ],
    ids=["two-crashes", "no-lease-two-crashes", "lease-aware-checked-renewals"],
)
def test_crash_and_renewal_options_beside_the_others(
    design: Design, states: int, transitions: int, depth: int, shortest: dict[str, int]
) -> None:
    """Combinations no preset reaches, pinned at small bounds and equal to a plain search."""
    bounds = Bounds(2, 1, 4, 2, 1)
    result = explore(design, bounds)
    assert (result.states, result.transitions, result.depth) == (states, transitions, depth)
    assert {n: v.shortest for n, v in result.verdicts.items() if v.violated} == shortest
    plain = reference_search(design, bounds)
    assert (plain.states, plain.transitions, plain.depth) == (states, transitions, depth)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, orbits",
    [("lock-without-lease", 553), ("keepalive-lease", 17465), ("keepalive-fencing", 13013)],
)
def test_crash_preset_orbits_at_the_reference_bounds(name: str, orbits: int) -> None:
    """Orbits under worker renaming (a crash moves with its worker): the explorer's count
    equals the distinct canonical forms of every state a plain search reaches."""
    from model.check.symmetry import canonical_state, renamings
    from model.system import System

    design = PRESETS[name].design
    layout = System(design, REFERENCE_BOUNDS).layout
    group = renamings(layout)
    forms = {
        canonical_state(layout, s, group)
        for s in reference_search(design, REFERENCE_BOUNDS).distance
    }
    reduced = explore(design, REFERENCE_BOUNDS, SearchOptions(symmetry=True))
    assert reduced.complete and reduced.states == len(forms) == orbits


def _violated(result: ReferenceResult) -> dict[str, int | None]:
    """The reference search's violated properties with their shortest lengths."""
    return {n: v.shortest for n, v in result.verdicts.items() if v.violated}
