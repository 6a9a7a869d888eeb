"""The random strategy (`model.random_search`, `fencing check --strategy random`).

At the reference bounds it must find every violation the breadth-first search finds,
within a fixed budget and seed, with runs that replay through the step interpreter to
their first violation; it must report nothing the breadth-first search does not, and it
never says a property holds.
"""

from __future__ import annotations

import json

import pytest

from fencing.strategies import unknown_words
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.explorer import explore
from model.presets import PRESETS, PRESETS_LIST, Preset
from model.random_search import max_run_length, random_search
from model.trace import replay
from model.verdicts import Status
from tests.cli_helpers import run

RUNS = 200
"""Random runs per property: within this budget, seed 0 finds every reported violation."""

ONE_SIDED = {Status.VIOLATED, Status.UNKNOWN}


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_random_search_finds_every_violation_breadth_first_finds(preset: Preset) -> None:
    """Same violated properties as the breadth-first search; each run found replays to its
    first violation at its last step, and is no shorter than the shortest one."""
    exhaustive = explore(preset.design, REFERENCE_BOUNDS).verdicts
    found = random_search(preset.design, REFERENCE_BOUNDS, runs=RUNS, seed=0)
    assert found.stopped_by is None
    assert {verdict.status for verdict in found.verdicts.values()} <= ONE_SIDED
    violated = {name for name, verdict in found.verdicts.items() if verdict.violated}
    assert violated == {name for name, verdict in exhaustive.items() if verdict.violated}
    for name in violated:
        verdict = found.verdicts[name]
        assert verdict.actions is not None and verdict.shortest == len(verdict.actions)
        trace = replay(preset.design, REFERENCE_BOUNDS, verdict.actions)
        assert trace.first_violation(name) is trace.steps[-1]
        shortest = exhaustive[name].shortest
        assert shortest is not None and verdict.shortest >= shortest
    for name, verdict in found.verdicts.items():
        tried = found.tried[name]
        assert verdict.violated or (tried.runs == RUNS and tried.steps >= RUNS)


def test_the_same_seed_repeats_the_search_and_another_seed_differs() -> None:
    """Deterministic given the seed: the same runs, steps and counterexamples."""
    design = PRESETS["volatile-hwm"].design
    first, again, other = (
        random_search(design, REFERENCE_BOUNDS, runs=30, seed=seed) for seed in (5, 5, 6)
    )
    assert first.verdicts == again.verdicts
    assert [(t.runs, t.steps) for t in first.tried.values()] == [
        (t.runs, t.steps) for t in again.tried.values()
    ]
    assert (first.steps, first.states) == (again.steps, again.states)
    assert first.steps != other.steps


def test_runs_stay_within_the_step_budget_and_a_time_budget_stops_the_search() -> None:
    """Runs are cut at `max_steps`; a tiny time budget ends the search, saying so."""
    design = PRESETS["lease-only"].design
    short = random_search(design, REFERENCE_BOUNDS, runs=20, max_steps=3)
    assert short.longest == 3 and short.max_steps == 3
    assert all(not verdict.violated for verdict in short.verdicts.values())
    assert (
        max_run_length(design, REFERENCE_BOUNDS) + 1
        == random_search(design, REFERENCE_BOUNDS, runs=1).max_steps
    )
    cut = random_search(design, Bounds(5, 4, 30, 8, 4), runs=10**9, max_seconds=0.5)
    assert cut.stopped_by == "time budget of 0.5 s reached"
    assert {verdict.status for verdict in cut.verdicts.values()} <= ONE_SIDED
    assert cut.seconds < 30


def test_a_property_that_holds_is_unknown_to_a_random_search() -> None:
    """Where breadth-first says holds or vacuous, the random search says unknown."""
    design = PRESETS["lease-aware-receiver"].design
    found = random_search(design, REFERENCE_BOUNDS, runs=20)
    assert all(v.status is Status.UNKNOWN for v in found.verdicts.values())
    assert all(found.tried[name].runs == 20 for name in found.verdicts)


def test_check_random_json_has_the_shape_of_check_json(capsys: pytest.CaptureFixture[str]) -> None:
    """Every key of a breadth-first `check --json` is there; statuses are one-sided; each
    trace is as long as its run and ends with its property violated."""
    bounds = ["--horizon", "6", "--grants", "3", "--writes", "2"]
    code, out, _ = run(["check", "--preset", "lease-only", *bounds, "--json"], capsys)
    exhaustive = json.loads(out)
    flags = ["--strategy", "random", "--runs", "50", "--seed", "3", "--json"]
    code, out, err = run(["check", "--preset", "lease-only", *bounds, *flags], capsys)
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert set(exhaustive) <= set(report) and report["strategy"] == "random"
    assert report["complete"] is False and report["seed"] == 3 and report["runs"] == 50
    assert set(report["properties"]) == set(exhaustive["properties"])
    for name, cell in report["properties"].items():
        assert set(exhaustive["properties"][name]) <= set(cell)
        assert cell["status"] in {"violated", "unknown"}
        assert cell["holds"] is (False if cell["status"] == "violated" else None)
        if cell["trace"] is not None:
            assert len(cell["trace"]) == cell["shortest"]
            assert name in cell["trace"][-1]["violations"]
    assert report["properties"]["P2"]["status"] == "violated"


def test_check_random_says_unknown_with_the_runs_and_steps_tried(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The human report never says holds, and names the runs and steps behind unknown."""
    flags = ["--strategy", "random", "--runs", "40", "--seed", "1"]
    code, out, _ = run(["check", "--preset", "lease-aware-receiver", *flags], capsys)
    assert code == 0
    found = random_search(
        PRESETS["lease-aware-receiver"].design, REFERENCE_BOUNDS, runs=40, seed=1
    )  # the bounds fencing check starts at
    for name, tried in found.tried.items():
        assert f"{name} " in out and unknown_words(tried.runs, tried.steps) in out
    assert " holds" not in out


@pytest.mark.parametrize(
    "flags",
    [
        ["--strategy", "random", "--runs", "0"],
        ["--strategy", "random", "--runs", "many"],
        ["--strategy", "random", "--seed", "-1"],
        ["--strategy", "random", "--seed", "1" * 25],
        ["--strategy", "random", "--max-steps", "0"],
        ["--strategy", "random", "--max-seconds", "nan"],
        ["--strategy", "depth-first"],
        ["--strategy", "random", "--symmetry"],
        ["--runs", "10"],
        ["--seed", "3"],
    ],
)
def test_bad_strategy_flags_get_one_line_and_status_2(
    flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["check", *flags], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "error" in err


def test_random_search_refuses_a_design_that_does_not_fit_its_bounds() -> None:
    """A skew list of the wrong length is refused like everywhere else."""
    from model.design import DesignError

    with pytest.raises(DesignError, match="skew lists 3 offsets"):
        random_search(Design(token="local-clock", skew=(0, 1, 0)), Bounds(workers=2), runs=1)
