"""The reference figures of docs/model.md#reference-figures, reproduced exactly."""

from __future__ import annotations

import json

import pytest

from fencing.cli import main
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.explorer import explore
from model.presets import PRESETS

CORE_ROWS = [
    # W, L, T, G, K, receiver, states, transitions, depth, shortest P1, shortest P2, orbits
    (2, 2, 4, 2, 1, "fenced", 321, 668, 11, None, 5, 168),
    (2, 2, 4, 2, 1, "none", 354, 728, 12, 8, 5, 186),
    (3, 2, 6, 3, 2, "fenced", 13_213, 39_597, 23, None, 5, 2_473),
]

VARIANT_ROWS = {
    "lease-only": (8, 5, 8, None, None),
    "fencing": (None, 5, None, None, None),
    "key-version-token": (None, 5, 8, None, None),
    "rmw-fencing-unfenced-reads": (None, 7, None, None, 12),
}


@pytest.mark.parametrize("row", CORE_ROWS, ids=lambda row: f"W{row[0]}-{row[5]}")
def test_core_reference_figures(row: tuple) -> None:
    """States, transitions, depth, shortest P1/P2 and orbits equal docs/model.md's table."""
    W, L, T, G, K, receiver, states, transitions, depth, p1, p2, orbits = row
    bounds, design = Bounds(W, L, T, G, K), Design(receiver=receiver)
    result = explore(design, bounds)
    assert result.complete
    assert (result.states, result.transitions, result.depth) == (states, transitions, depth)
    assert result.verdicts["P1"].shortest == p1
    assert result.verdicts["P2"].shortest == p2
    assert explore(design, bounds, symmetry=True).states == orbits


@pytest.mark.parametrize("row", CORE_ROWS, ids=lambda row: f"W{row[0]}-{row[5]}")
def test_cli_json_reproduces_core_figures(row: tuple, capsys: pytest.CaptureFixture[str]) -> None:
    """`fencing check --json` prints the same figures, with and without symmetry."""
    W, L, T, G, K, receiver, states, transitions, depth, p1, p2, orbits = row
    flags = [
        "check",
        "--receiver",
        receiver,
        "--workers",
        str(W),
        "--lease",
        str(L),
        "--horizon",
        str(T),
        "--grants",
        str(G),
        "--writes",
        str(K),
        "--json",
    ]
    assert main(flags) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["complete"] is True and report["symmetry"] is False
    assert (report["states"], report["transitions"], report["depth"]) == (
        states,
        transitions,
        depth,
    )
    assert report["properties"]["P1"]["shortest"] == p1
    assert report["properties"]["P1"]["holds"] is (p1 is None)
    assert report["properties"]["P2"]["shortest"] == p2
    assert len(report["properties"]["P2"]["trace"]) == p2
    assert main([*flags, "--symmetry"]) == 0
    assert json.loads(capsys.readouterr().out)["states"] == orbits


@pytest.mark.parametrize("name", sorted(VARIANT_ROWS))
def test_design_variant_reference_verdicts(name: str) -> None:
    """docs/model.md's reference verdicts at W=2 L=2 T=6 G=3 K=2."""
    result = explore(PRESETS[name].design, REFERENCE_BOUNDS)
    assert result.complete
    found = tuple(result.verdicts[p].shortest for p in ("P1", "P2", "P3", "P4", "P5"))
    assert found == VARIANT_ROWS[name]


def test_the_benchmark_configuration_has_the_stated_size() -> None:
    """The benchmark design (W=3 L=3 T=10 G=5 K=2) has 180,216 states."""
    result = explore(Design(), Bounds(3, 3, 10, 5, 2))
    assert result.states == 180_216
    assert result.verdicts["P1"].holds
