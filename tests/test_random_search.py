"""The random strategy (`model.check.random_search`, `fencing check --strategy random`).

At the reference bounds it must find every violation the breadth-first search finds,
within a fixed budget and seed, with runs that replay through the step interpreter to
their first violation and are at most two steps longer than the breadth-first search's
shortest; it must report nothing the breadth-first search does not, and it never says a
property holds. Its answers depend on the seed and the counts alone: not on how the walk
is cut into batches, not on what walks it (compiled or interpreted), and a time budget
only ever turns an answer into unknown.
"""

from __future__ import annotations

import json

import pytest

import model.check.random_search as search_module
from fencing.strategies import unknown_words, violated_words
from model.check.explorer import explore
from model.check.random_search import (
    DEFAULT_RUNS,
    RandomSearch,
    first_violation_at,
    max_run_length,
    random_search,
    shrink_run,
)
from model.check.random_walk import InterpretedWalker, weights_in_order
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.formats.trace import replay
from model.presets import PRESETS, PRESETS_LIST, Preset
from model.rules import Action
from model.system import System
from model.verdicts import PropertyVerdict, Status
from tests.cli_helpers import run

RUNS = 200
"""Random runs per property: within this budget, seed 0 finds every reported violation."""

SLACK = 2
"""A run shown may be this many steps longer than the shortest."""

ONE_SIDED = {Status.VIOLATED, Status.UNKNOWN}


def shortest_runs(preset: Preset) -> dict[str, PropertyVerdict]:
    """The breadth-first search's verdicts at the reference bounds (shortest runs)."""
    return explore(preset.design, REFERENCE_BOUNDS).verdicts


def check_against_breadth_first(found: RandomSearch, preset: Preset) -> None:
    """The same violated properties; each run replays to its first violation at its last
    step, no shorter than the shortest and at most `SLACK` steps longer."""
    exhaustive = shortest_runs(preset)
    assert found.stopped_by is None
    assert {verdict.status for verdict in found.verdicts.values()} <= ONE_SIDED
    violated = {name for name, verdict in found.verdicts.items() if verdict.violated}
    assert violated == {name for name, verdict in exhaustive.items() if verdict.violated}
    for name in violated:
        verdict, shortest = found.verdicts[name], exhaustive[name].shortest
        assert verdict.actions is not None and verdict.shortest == len(verdict.actions)
        trace = replay(preset.design, REFERENCE_BOUNDS, verdict.actions)
        assert trace.first_violation(name) is trace.steps[-1]
        assert shortest is not None and shortest <= verdict.shortest <= shortest + SLACK
        assert (found.tried[name].found or 0) >= verdict.shortest


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_a_small_search_finds_every_violation_and_shrinks_it_near_the_shortest(
    preset: Preset,
) -> None:
    found = random_search(preset.design, REFERENCE_BOUNDS, runs=RUNS, seed=0)
    check_against_breadth_first(found, preset)
    for name, verdict in found.verdicts.items():
        tried = found.tried[name]
        assert tried.runs == RUNS and tried.steps >= RUNS
        assert verdict.violated or tried.found is None


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_the_default_search_shows_runs_near_the_shortest(preset: Preset) -> None:
    """What `fencing check --preset NAME --strategy random` shows at the reference bounds."""
    found = random_search(preset.design, REFERENCE_BOUNDS)
    check_against_breadth_first(found, preset)
    assert all(tried.runs == DEFAULT_RUNS for tried in found.tried.values())


def test_small_budgets_leave_shrinking_work_to_do() -> None:
    """With a few runs, found runs are longer than the shortest + 2, and shrinking brings
    them back: the test above pins the shrinking, not just the luck of the search."""
    preset = PRESETS["wrapping-counter"]
    exhaustive = shortest_runs(preset)
    found = random_search(preset.design, REFERENCE_BOUNDS, runs=30, seed=0)
    long_found = [
        name
        for name, tried in found.tried.items()
        if tried.found is not None and tried.found > (exhaustive[name].shortest or 0) + SLACK
    ]
    assert long_found, "every run found was already short"
    for name in long_found:
        assert (found.verdicts[name].shortest or 0) <= (exhaustive[name].shortest or 0) + SLACK


def padded(system: System, actions: tuple[Action, ...], name: str, extra: int) -> list[Action]:
    """The run with up to `extra` more steps inserted, each where the run still violates
    `name` (idle Ticks first, at the front, then anything enabled, anywhere)."""
    run = list(actions)
    candidates = [Action("Tick"), *(rule.action for rule in system.rules)]
    for _ in range(extra):
        for action in candidates:
            tried = next(
                (
                    longer
                    for i in range(len(run))
                    if first_violation_at(system, longer := [*run[:i], action, *run[i:]], name)
                    == len(run) + 1
                ),
                None,
            )
            if tried is not None:
                run = tried
                break
    return run


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_shrinking_takes_out_idle_and_needless_steps(preset: Preset) -> None:
    """The shortest runs, padded with steps they do not need, shrink back near them."""
    system = System(preset.design, REFERENCE_BOUNDS)
    padded_any = False
    for name, verdict in shortest_runs(preset).items():
        if verdict.actions is None:
            continue
        long_run = padded(system, verdict.actions, name, extra=6)
        padded_any |= len(long_run) > len(verdict.actions) + SLACK
        shrunk = shrink_run(preset.design, REFERENCE_BOUNDS, long_run, name, seed=1)
        assert first_violation_at(system, shrunk, name) == len(shrunk)
        assert len(shrunk) <= len(verdict.actions) + SLACK
    assert padded_any or all(v.actions is None for v in shortest_runs(preset).values())


def test_leading_clock_ticks_are_taken_out() -> None:
    """`fencing-strict`'s false rejection needs no time to pass: Ticks in front go."""
    design = PRESETS["fencing-strict"].design
    write = [Action("Send", 1), Action("Deliver", 1)]
    run = [Action("Tick")] * 3 + [Action("Acquire", 1), *write, *write]
    assert first_violation_at(System(design, REFERENCE_BOUNDS), run, "P4") == len(run)
    shrunk = shrink_run(design, REFERENCE_BOUNDS, run, "P4")
    assert Action("Tick") not in shrunk and len(shrunk) == 5


def test_shrinking_refuses_a_run_that_does_not_violate_the_property() -> None:
    with pytest.raises(ValueError, match="does not violate P2"):
        shrink_run(Design(), REFERENCE_BOUNDS, [Action("Tick")], "P2")


def same_answers(first: RandomSearch, second: RandomSearch) -> None:
    """Two searches said the same: verdicts and runs, counts, states, shrinking."""
    assert first.verdicts == second.verdicts
    assert [(t.runs, t.steps, t.found) for t in first.tried.values()] == [
        (t.runs, t.steps, t.found) for t in second.tried.values()
    ]
    assert (first.steps, first.states, first.longest, first.shrink_steps) == (
        second.steps,
        second.states,
        second.longest,
        second.shrink_steps,
    )


def test_the_same_seed_repeats_the_search_and_another_seed_differs() -> None:
    """Deterministic given the seed: the same runs, steps and counterexamples."""
    design = PRESETS["volatile-hwm"].design
    first, again, other = (
        random_search(design, REFERENCE_BOUNDS, runs=300, seed=seed) for seed in (5, 5, 6)
    )
    same_answers(first, again)
    assert first.steps != other.steps


def test_answers_do_not_depend_on_how_the_walk_is_cut_into_batches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The time budget is looked at between batches; their size changes no answer."""
    design = PRESETS["nonatomic-receiver"].design
    whole = random_search(design, REFERENCE_BOUNDS, runs=500, seed=2)
    monkeypatch.setattr(search_module, "BATCH_STEPS", 7)
    same_answers(whole, random_search(design, REFERENCE_BOUNDS, runs=500, seed=2))


def test_the_interpreter_and_the_compiled_rules_give_the_same_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What walks changes nothing but the speed (a small search: the interpreter is slow)."""
    monkeypatch.setattr(search_module, "SHRINK_RUNS", 40)
    design = PRESETS["fencing-strict"].design
    compiled = random_search(design, REFERENCE_BOUNDS, runs=40, seed=9)
    monkeypatch.setattr(
        search_module,
        "walker_for",
        lambda system: InterpretedWalker(system, weights_in_order()),
    )
    interpreted = random_search(design, REFERENCE_BOUNDS, runs=40, seed=9)
    assert (compiled.engine, interpreted.engine) == ("compiled", "interpreted")
    same_answers(compiled, interpreted)


def test_a_time_budget_only_ever_turns_an_answer_into_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Wherever the safety stop falls (here: at the first, a middle or the last look at
    the clock), every answer shown is the full search's answer, and every property it cut
    short is unknown."""
    design = PRESETS["rmw-lease-only"].design
    looks: list[int] = []
    original = search_module._Search.check_time

    def counted(self: search_module._Search) -> None:
        looks.append(1)
        if len(looks) == stop_at[0]:
            raise search_module.OutOfTime
        original(self)

    stop_at = [0]
    monkeypatch.setattr(search_module._Search, "check_time", counted)
    full = random_search(design, REFERENCE_BOUNDS, runs=300, seed=4)
    total = len(looks)
    assert full.stopped_by is None and total > 10
    kept, lost = set(), set()
    for stop in (1, total // 3, total // 2, total):
        looks.clear()
        stop_at[0] = stop
        cut = random_search(design, REFERENCE_BOUNDS, runs=300, seed=4, max_seconds=7)
        assert cut.stopped_by == "time budget of 7 s reached"
        for name, verdict in cut.verdicts.items():
            assert verdict == full.verdicts[name] or verdict.status is Status.UNKNOWN
            if full.verdicts[name].violated:
                (kept if verdict.violated else lost).add(name)
    assert kept and lost, "the stops fell where they test nothing"


def test_runs_stay_within_the_step_budget_and_a_time_budget_stops_the_search() -> None:
    """Runs are cut at `max_steps`; a tiny time budget ends an endless search, saying so."""
    design = PRESETS["lease-only"].design
    short = random_search(design, REFERENCE_BOUNDS, runs=20, max_steps=3)
    assert short.longest == 3 and short.max_steps == 3
    assert all(not verdict.violated for verdict in short.verdicts.values())
    longest = max_run_length(design, REFERENCE_BOUNDS) + 1
    assert longest == random_search(design, REFERENCE_BOUNDS, runs=1).max_steps
    assert longest == random_search(design, REFERENCE_BOUNDS, runs=1, max_steps=10**15).max_steps
    cut = random_search(design, REFERENCE_BOUNDS, runs=10**12, max_seconds=0.5)
    assert cut.stopped_by == "time budget of 0.5 s reached"
    assert all(verdict.status is Status.UNKNOWN for verdict in cut.verdicts.values())
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
    assert report["engine"] == "compiled" and report["shrink_steps"] > 0
    assert set(report["properties"]) == set(exhaustive["properties"])
    for name, cell in report["properties"].items():
        assert set(exhaustive["properties"][name]) <= set(cell)
        assert cell["status"] in {"violated", "unknown"}
        assert cell["holds"] is (False if cell["status"] == "violated" else None)
        assert cell["runs"] == 50
        if cell["trace"] is not None:
            assert len(cell["trace"]) == cell["shortest"] <= cell["found"]
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
    assert "on loops compiled from the rules" in out


def test_check_random_says_how_long_the_run_was_before_shrinking(
    capsys: pytest.CaptureFixture[str],
) -> None:
    flags = ["--strategy", "random", "--runs", "30", "--seed", "0"]
    code, out, _ = run(["check", "--preset", "wrapping-counter", *flags], capsys)
    found = random_search(PRESETS["wrapping-counter"].design, REFERENCE_BOUNDS, runs=30, seed=0)
    assert code == 0
    shrunk = 0
    for name, verdict in found.verdicts.items():
        if verdict.violated:
            line = violated_words(verdict.shortest or 0, found.tried[name].found)
            assert line in out
            shrunk += "shrunk from" in line
    assert shrunk and f"{found.shrink_steps:,} more while shrinking" in out
    assert violated_words(5, 5) == violated_words(5, None) == "VIOLATED (a run of 5 steps)"


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


def test_a_state_count_that_reached_its_limit_says_at_least() -> None:
    from dataclasses import replace

    from fencing.strategies import states_figure, states_words
    from model.check.random_walk import STATES_COUNTED

    found = random_search(PRESETS["fencing"].design, REFERENCE_BOUNDS, runs=5)
    assert not found.states_capped
    assert states_words(found) == f"{found.states:,} distinct states met"
    capped = replace(found, states=STATES_COUNTED)
    assert capped.states_capped
    assert states_words(capped).startswith(f"at least {STATES_COUNTED:,} distinct states")
    assert (states_figure(found), states_figure(capped)) == (
        f"{found.states:,}",
        f"≥ {STATES_COUNTED:,}",
    )


def test_a_search_cut_short_says_what_it_walked_before_the_stop() -> None:
    cut = random_search(PRESETS["lease-only"].design, REFERENCE_BOUNDS, runs=10**12, max_seconds=1)
    first = cut.tried["P1"]
    assert cut.stopped_by and first.runs > 0 and first.steps >= first.runs
    assert cut.steps == sum(tried.steps for tried in cut.tried.values())
    assert all(tried.runs == 0 for name, tried in cut.tried.items() if name != "P1")
