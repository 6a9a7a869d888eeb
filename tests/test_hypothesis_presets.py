"""Hypothesis stateful tests of every preset at the reference bounds (W2 L2 T6 G3 K2).

For each preset the exhaustive explorer gives a verdict per property. Random runs of the
step interpreter (`tests.machines.FencingMachine`) must agree with it both ways:

- a property the explorer says holds is never violated in any random run;
- for each property the explorer says is violated, Hypothesis finds a violating run
  within a fixed budget and seed, and that run replays through `model.formats.trace.replay`
  (the explorer's trace interpreter) to the same violation at its last step.

The searches here use Hypothesis' generate phase only: the test stops at the first
random run that reaches the violation and does not shrink it. Shrinking these machines
costs seconds to tens of seconds per property, which 38 searches cannot afford; the
shrunk, labelled output is exercised by tests/test_hypothesis_core.py instead. The search
is plain random search with the default actor odds of `model.check.random_search.WEIGHTS`: Tick and
faults half as likely as the coordinator, workers and receiver, and a *futile* restart
(one that would lose nothing, e.g. a storage restart while the mark is still 0) never
taken while anything else is enabled. That last bias is the only guidance, and it
matters for `volatile-hwm` P1: without it the single allowed restart is nearly always
spent before any write, and with this test's seed the violation took 794 runs instead
of 12 (13 to 405 over ten other seeds). No run is seeded with a prefix of the explorer's
counterexample, and only enabled actions are ever taken.
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from fencing.golden import read_golden
from model.design import REFERENCE_BOUNDS
from model.formats.trace import replay
from model.presets import PRESETS, PRESETS_LIST, Preset
from tests.machines import (
    exploration_of,
    find_violation,
    machine_for,
    max_run_length,
    search_settings,
)

BOUNDS = REFERENCE_BOUNDS

HOLD_EXAMPLES = 40
"""Random runs per preset for the properties that hold."""

SEARCH_EXAMPLES = 1000
"""The budget within which Hypothesis must reach each reported violation."""

GOLDEN = read_golden()["presets"]
"""The recorded verdicts at the reference bounds (docs/golden.json)."""


def holding(preset: Preset) -> frozenset[str]:
    """The properties the explorer says hold for the preset at the reference bounds."""
    verdicts = exploration_of(preset.design, BOUNDS).verdicts
    return frozenset(name for name, verdict in verdicts.items() if verdict.holds)


def violated_pairs() -> list[tuple[str, str]]:
    """Every (preset, property) pair the explorer reports violated at the reference bounds."""
    return [
        (preset.name, name)
        for preset in PRESETS_LIST
        for name, verdict in exploration_of(preset.design, BOUNDS).verdicts.items()
        if verdict.violated
    ]


VIOLATED = violated_pairs()


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_explorer_matches_the_recorded_verdicts(name: str) -> None:
    """The verdicts the random runs are compared with are the recorded ones."""
    verdicts = exploration_of(PRESETS[name].design, BOUNDS).verdicts
    shown = {p: {"status": str(v.status), "shortest": v.shortest} for p, v in verdicts.items()}
    assert shown == GOLDEN[name]["verdicts"]


def test_the_explorer_verdicts_are_complete() -> None:
    """ "Holds" means something only if the explorer saw every reachable state."""
    for preset in PRESETS_LIST:
        exploration = exploration_of(preset.design, BOUNDS)
        assert exploration.complete, (preset.name, exploration.stopped_by)
    assert len(VIOLATED) == len(set(VIOLATED)) > 0


@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda preset: preset.name)
@pytest.mark.slow
def test_properties_that_hold_never_fail_in_random_runs(preset: Preset) -> None:
    """Random runs never violate a property the explorer says holds.

    Every run may go to its natural end (the step budget exceeds `max_run_length`), and
    the runs must not be trivial: together they reach at least 200 distinct states (2% to
    20% of the reachable ones, depending on the preset), or a seventh of them in a preset
    with fewer than 1,400 (a lock without a lease has 1,078, and a crash there leaves only
    ticks to take), and none is longer than `max_run_length`, the bound that budget relies
    on.
    """
    holds = holding(preset)
    assert holds, f"{preset.name}: nothing to check"
    bound = max_run_length(preset.design, BOUNDS)
    machine = machine_for(
        preset.design, BOUNDS, must_hold=holds, name=f"Holds_{preset.name.replace('-', '_')}"
    )
    run_state_machine_as_test(machine, settings=search_settings(HOLD_EXAMPLES, steps=bound + 2))
    assert 0 < machine.longest <= bound
    reachable = exploration_of(preset.design, BOUNDS).states
    assert len(machine.visited) >= min(200, reachable // 7), len(machine.visited)


@pytest.mark.parametrize(("name", "prop"), VIOLATED, ids=[f"{n}-{p}" for n, p in VIOLATED])
@pytest.mark.slow
def test_hypothesis_finds_each_reported_violation(name: str, prop: str) -> None:
    """Hypothesis reaches the violation within the budget, and the run replays to it.

    The run must violate no property the explorer says holds (the machine checks every
    step), its last step must be its first violation of `prop` when replayed through
    `model.formats.trace.replay`, with the same set of violated properties, and it cannot be
    shorter than the explorer's shortest counterexample.
    """
    preset = PRESETS[name]
    verdict = exploration_of(preset.design, BOUNDS).verdicts[prop]
    assert verdict.shortest is not None
    machine = machine_for(
        preset.design,
        BOUNDS,
        must_hold=holding(preset),
        target=prop,
        name=f"Search_{name.replace('-', '_')}_{prop}",
    )
    budget = settings(
        search_settings(SEARCH_EXAMPLES, steps=max_run_length(preset.design, BOUNDS) + 1),
        phases=(Phase.explicit, Phase.generate),
    )
    found = find_violation(machine, budget)
    assert found is not None, f"no {prop} violation in {SEARCH_EXAMPLES} random runs of {name}"
    trace = replay(preset.design, BOUNDS, found.actions)
    first = trace.first_violation(prop)
    assert first is not None and first.number == len(found.actions)
    assert trace.steps[-1].violations == found.violations
    assert len(found.actions) >= verdict.shortest
