"""Hypothesis stateful tests of the canonical core (docs/model.md) through the step interpreter.

Random runs are driven by `tests.machines.FencingMachine`: each step takes one action
instance that `System.enabled` lists for the current state. With the fenced receiver P1
(monotonic acceptance) must never fail; with receiver `none` Hypothesis must find a P1
violation, and the run it finds must replay through `model.formats.trace.replay` (the explorer's
trace interpreter) to the same violation at its last step.

Every search is deterministic: derandomised, no example database, a fixed budget.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.formats.trace import replay
from tests.machines import (
    FencingMachine,
    ViolationFound,
    exploration_of,
    machine_for,
    max_run_length,
    search_settings,
    system_of,
)

SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)
"""The first two rows of docs/model.md's reference figures."""

FENCED = Design(receiver="fenced")
UNFENCED = Design(receiver="none")
BOUNDS = pytest.mark.parametrize("bounds", [SMALL, REFERENCE_BOUNDS], ids=["small", "reference"])

SPEC_SHORTEST_P1_NONE_SMALL = 8
"""docs/model.md: shortest P1 violation for receiver none at W2 L2 T4 G2 K1."""


def core_state_problem(design: Design, bounds: Bounds) -> Callable[[dict[str, int]], str | None]:
    """An invariant from docs/model.md#variables: the table and its notes on the ghosts.

    Every variable stays in its stated domain; `expires` is 0 whenever `holder` is 0;
    with receiver none `hwm` stays 0; and in the core the ghosts `gid[w]`, `lastg` and
    `grants` equal `tok[w]`, `last` and `issued`.
    """
    w, lease, horizon, grants, writes = (
        bounds.workers,
        bounds.lease,
        bounds.horizon,
        bounds.grants,
        bounds.writes,
    )
    domains = {"now": horizon, "holder": w, "expires": horizon + lease, "issued": grants}
    domains |= {"hwm": grants, "last": grants}
    for i in range(1, w + 1):
        domains |= {f"tok[{i}]": grants, f"sent[{i}]": writes, f"pending[{i}]": 1}

    def problem(values: dict[str, int]) -> str | None:
        for name, high in domains.items():
            if not 0 <= values[name] <= high:
                return f"{name} = {values[name]} is outside 0..{high}"
        if values["holder"] == 0 and values["expires"] != 0:
            return f"expires = {values['expires']} while holder = 0"
        if design.receiver == "none" and values["hwm"] != 0:
            return f"hwm = {values['hwm']} with receiver none"
        ghosts = [("grants", "issued"), ("lastg", "last")]
        ghosts += [(f"gid[{i}]", f"tok[{i}]") for i in range(1, w + 1)]
        for ghost, real in ghosts:
            if values[ghost] != values[real]:
                return f"ghost {ghost} = {values[ghost]} differs from {real} = {values[real]}"
        return None

    return problem


def core_machine(
    design: Design,
    bounds: Bounds,
    *,
    must_hold: frozenset[str] = frozenset(),
    target: str | None = None,
    replay_at_end: bool = False,
) -> type[FencingMachine]:
    """A machine over the core with the core's state invariant switched on."""
    return machine_for(
        design,
        bounds,
        must_hold=must_hold,
        target=target,
        check_state=core_state_problem(design, bounds),
        replay_at_end=replay_at_end,
        name=f"Core_{design.receiver}_T{bounds.horizon}",
    )


def test_explorer_matches_the_spec_figures_these_tests_rely_on() -> None:
    """The explorer's verdicts that the searches below compare against match docs/model.md."""
    fenced, unfenced = exploration_of(FENCED, SMALL), exploration_of(UNFENCED, SMALL)
    assert (fenced.states, fenced.transitions) == (321, 668)
    assert (unfenced.states, unfenced.transitions) == (354, 728)
    assert not fenced.verdicts["P1"].violated
    assert unfenced.verdicts["P1"].shortest == SPEC_SHORTEST_P1_NONE_SMALL
    assert not exploration_of(FENCED, REFERENCE_BOUNDS).verdicts["P1"].violated


@BOUNDS
@pytest.mark.slow
def test_fenced_receiver_never_breaks_p1_in_random_runs(bounds: Bounds) -> None:
    """Random runs of the fenced core never violate P1 (nor P3, P4, which also hold).

    Each run is also replayed through `model.formats.trace.replay` at teardown and must give the
    same states and violations, and every state must satisfy the core's invariant. The
    runs must reach a good part of the reachable states, so that "never fails" means
    something: at least half of them at the small bounds (about two thirds with this
    seed), 15% at the reference bounds (about a fifth).
    """
    holds = frozenset(n for n, v in exploration_of(FENCED, bounds).verdicts.items() if v.holds)
    assert "P1" in holds
    machine = core_machine(FENCED, bounds, must_hold=holds, replay_at_end=True)
    run_state_machine_as_test(
        machine, settings=search_settings(100, steps=max_run_length(FENCED, bounds) + 1)
    )
    reachable = exploration_of(FENCED, bounds).states
    share = 0.5 if bounds == SMALL else 0.15
    print(f"{bounds.short()}: {len(machine.visited)} of {reachable} reachable states visited")
    assert len(machine.visited) >= share * reachable, (len(machine.visited), reachable)


def test_a_must_hold_property_that_fails_is_reported() -> None:
    """The never-fails check above can fail: demanding P1 of receiver none fails a run."""
    machine = core_machine(UNFENCED, SMALL, must_hold=frozenset({"P1"}))
    with pytest.raises(AssertionError, match=r"P1 must hold but step \d+ violates it"):
        run_state_machine_as_test(machine, settings=search_settings(300, steps=20))


@cache
def search_p1_without_fencing(bounds: Bounds) -> tuple[type[FencingMachine], ViolationFound]:
    """Run the receiver-none machine until Hypothesis finds and shrinks a P1 violation.

    Shared by the tests below, so each bound is searched once per session.
    """
    machine = core_machine(UNFENCED, bounds, target="P1")
    with pytest.raises(ViolationFound) as raised:
        run_state_machine_as_test(machine, settings=search_settings(500, steps=30))
    return machine, raised.value


@BOUNDS
@pytest.mark.slow
def test_hypothesis_finds_p1_without_fencing_and_the_trace_replays(bounds: Bounds) -> None:
    """With receiver none Hypothesis finds (and shrinks) a run whose last step breaks P1.

    The run is captured from the raised `ViolationFound` (also kept on the machine class
    as `last_failure`); replayed through `model.formats.trace.replay` its first P1 violation is its
    last step, with the same violations the machine saw, and it is no shorter than the
    explorer's shortest P1 counterexample.
    """
    verdict = exploration_of(UNFENCED, bounds).verdicts["P1"]
    assert verdict.violated and verdict.shortest is not None
    machine, found = search_p1_without_fencing(bounds)
    assert machine.last_failure == found.actions
    trace = replay(UNFENCED, bounds, found.actions)
    first = trace.first_violation("P1")
    assert first is not None and first.number == len(found.actions)
    assert trace.steps[-1].violations == found.violations
    assert len(found.actions) >= verdict.shortest
    if bounds == SMALL:
        assert verdict.shortest == SPEC_SHORTEST_P1_NONE_SMALL


def test_a_found_violation_reads_as_action_labels() -> None:
    """The failure names its run in `Action.label()` form, the same labels as the trace.

    Hypothesis' own report of the shrunk run (its notes on the exception) names every
    step taken, e.g. `took Send(W1)`, in order, and the violations of the last one.
    """
    _, found = search_p1_without_fencing(SMALL)
    message = str(found)
    trace = replay(UNFENCED, SMALL, found.actions)
    assert message.endswith(", ".join(step.action.label() for step in trace.steps))
    assert message.startswith(f"P1 violated at step {len(found.actions)}")
    assert "Acquire(W" in message and "Deliver(W" in message
    report = "\n".join(getattr(found, "__notes__", []))
    took = [line.removeprefix("took ") for line in report.splitlines() if line.startswith("took ")]
    labels = [action.label() for action in found.actions]
    assert [line.split(" (P")[0] for line in took] == labels, report
    assert took[-1] == f"{labels[-1]} ({', '.join(found.violations)})", report


def test_the_state_invariant_can_fail() -> None:
    """The core invariant flags a broken state, and a failing invariant fails the run."""
    problem = core_state_problem(FENCED, SMALL)
    system = system_of(FENCED, SMALL)
    values = system.layout.as_dict(system.initial())
    assert problem(values) is None
    assert "ghost gid[1]" in str(problem({**values, "gid[1]": 1}))
    assert "expires" in str(problem({**values, "expires": 2}))
    assert "outside" in str(problem({**values, "now": SMALL.horizon + 1}))
    machine = machine_for(
        FENCED,
        SMALL,
        check_state=lambda v: "a write was accepted" if v["last"] else None,
        name="Core_bogus_invariant",
    )
    with pytest.raises(AssertionError, match="a write was accepted"):
        run_state_machine_as_test(
            machine, settings=settings(search_settings(200, steps=12), phases=[Phase.generate])
        )
