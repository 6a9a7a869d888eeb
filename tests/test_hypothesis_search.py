"""The Hypothesis strategy (`model.check.hypothesis_search`, `fencing check --strategy hypothesis`).

At the reference bounds it must find every violation the breadth-first search finds, with
runs that replay through the step interpreter to their first violation and are at most two
steps longer than the breadth-first search's shortest (computed here, not written down),
and it must report nothing else: it never says a property holds. Hypothesis draws who moves
with the random walk's odds; the steps are taken on the compiled rules, which list the
same steps as the step interpreter. Its answers depend on the seed and the counts alone:
not on what takes the steps, and a time budget (whatever the clock) only ever turns an
answer into unknown.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import model.check.hypothesis_search as search_module
from fencing.strategies import RUNS_SEARCHES, unknown_words, violated_words
from model.check.explorer import explore
from model.check.hypothesis_search import (
    SIMPLEST_FIRST,
    CompiledSteps,
    choose_group,
    groups_of,
    hypothesis_search,
    who_table,
)
from model.check.random_search import RandomSearch, first_violation_at, max_run_length, walker_for
from model.check.random_walk import GROUPS, WEIGHTS, InterpretedWalker, weights_in_order
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.formats.trace import replay
from model.presets import PRESETS, PRESETS_LIST, Preset
from model.system import System
from model.verdicts import PropertyVerdict, Status
from tests.cli_helpers import run

RUNS = 200
"""Runs per property: within this budget, seed 0 finds every reported violation."""

SLACK = 2
"""A run shown may be this many steps longer than the shortest."""

ONE_SIDED = {Status.VIOLATED, Status.UNKNOWN}

ROOT = Path(__file__).resolve().parent.parent

NO_TIME_LIMIT = 3600.0
"""A safety stop no search here can reach: their answers are bounded by counts alone, the
same on a busy machine as on a quiet one."""


def shortest_runs(design: Design, bounds: Bounds = REFERENCE_BOUNDS) -> dict[str, PropertyVerdict]:
    """The breadth-first search's verdicts (with shortest runs)."""
    return explore(design, bounds).verdicts


def check_against_breadth_first(found: RandomSearch, design: Design) -> None:
    """The same violated properties; each run replays through the step interpreter to its
    first violation at its last step, no shorter than the shortest and at most `SLACK`
    steps longer; Hypothesis' shrinking and the shrinking after it only ever shorten."""
    exhaustive = shortest_runs(design, found.bounds)
    assert found.stopped_by is None and found.strategy == "hypothesis"
    assert {verdict.status for verdict in found.verdicts.values()} <= ONE_SIDED
    violated = {name for name, verdict in found.verdicts.items() if verdict.violated}
    assert violated == {name for name, verdict in exhaustive.items() if verdict.violated}
    system = System(design, found.bounds)
    for name in violated:
        verdict, shortest = found.verdicts[name], exhaustive[name].shortest
        assert verdict.actions is not None and verdict.shortest == len(verdict.actions)
        assert first_violation_at(system, verdict.actions, name) == len(verdict.actions)
        trace = replay(design, found.bounds, verdict.actions)
        assert trace.first_violation(name) is trace.steps[-1]
        assert shortest is not None and shortest <= verdict.shortest <= shortest + SLACK
        tried = found.tried[name]
        assert tried.found is not None and tried.hypothesis is not None
        assert tried.found >= tried.hypothesis >= verdict.shortest
    for name, verdict in found.verdicts.items():
        if not verdict.violated:
            assert found.tried[name].found is None and found.tried[name].hypothesis is None


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_every_violation_is_found_and_shown_near_the_shortest(preset: Preset) -> None:
    found = hypothesis_search(
        preset.design, REFERENCE_BOUNDS, runs=RUNS, seed=0, max_seconds=NO_TIME_LIMIT
    )
    check_against_breadth_first(found, preset.design)
    for name, verdict in found.verdicts.items():
        tried = found.tried[name]
        assert 0 < tried.runs <= RUNS and tried.steps >= tried.runs
        assert verdict.violated or tried.runs == RUNS


@pytest.mark.slow
def test_hypothesis_shrinking_does_most_of_the_work() -> None:
    """The first runs that break a property are far longer than the shortest; Hypothesis'
    own shrinking takes out at least three quarters of the steps they have too many, and
    alone brings at least four in five within two steps of the shortest (here, at a small
    budget, on two presets, for seven violations)."""
    excess_found = excess_shrunk = near = violations = 0
    for name in ("lease-only", "rmw-lease-only"):
        design = PRESETS[name].design
        found = hypothesis_search(
            design, REFERENCE_BOUNDS, runs=60, seed=0, max_seconds=NO_TIME_LIMIT
        )
        check_against_breadth_first(found, design)
        exhaustive = shortest_runs(design)
        for prop, verdict in found.verdicts.items():
            if verdict.violated:
                tried, shortest = found.tried[prop], exhaustive[prop].shortest or 0
                excess_found += (tried.found or 0) - shortest
                excess_shrunk += (tried.hypothesis or 0) - shortest
                near += (tried.hypothesis or 0) <= shortest + SLACK
                violations += 1
    assert violations == 7 and excess_found >= 5 * violations
    assert 4 * excess_shrunk <= excess_found and 5 * near >= 4 * violations


@pytest.mark.slow
def test_a_design_beyond_the_reference_bounds() -> None:
    """Three workers: the violations breadth-first finds, near its shortest runs."""
    design, bounds = PRESETS["volatile-hwm"].design, Bounds(3, 2, 6, 3, 1)
    found = hypothesis_search(design, bounds, runs=100, seed=1, max_seconds=NO_TIME_LIMIT)
    check_against_breadth_first(found, design)


def test_the_odds_of_who_moves_are_the_random_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    """With even draws, each group that can move is chosen with the odds of `WEIGHTS`
    (by drawing again from the whole table, or from the groups that can move after
    `REDRAWS` tries); a lone group or a futile restart needs no draw, and a group of
    weight 0 moves only when nothing else can."""
    table = who_table(GROUPS)
    assert sorted(SIMPLEST_FIRST) == sorted(GROUPS)
    assert Counter(GROUPS[group] for group in table) == +Counter(WEIGHTS)
    generator = random.Random(7)
    monkeypatch.setattr(search_module, "_numbers_below", lambda count: count)
    able = ("clock", "worker", "receiver", "fault")
    counts = [3 if group in able else 0 for group in GROUPS]
    tally = Counter(GROUPS[choose_group(generator.randrange, counts, table)] for _ in range(60_000))
    total = sum(WEIGHTS[group] for group in able)
    for group in able:
        assert abs(tally[group] / 60_000 - WEIGHTS[group] / total) < 0.01, tally

    def no_draw(count: int) -> int:
        raise AssertionError("nothing to draw")

    index = {group: number for number, group in enumerate(GROUPS)}
    only_worker = [2 if group == "worker" else 0 for group in GROUPS]
    assert choose_group(no_draw, only_worker, table) == index["worker"]
    futile_alone = [1 if group == "futile" else 0 for group in GROUPS]
    assert choose_group(no_draw, futile_alone, table) == index["futile"]
    both = [1 if group in ("futile", "clock") else 0 for group in GROUPS]
    assert choose_group(no_draw, both, table) == index["clock"]


@pytest.mark.slow
def test_hypothesis_draws_who_moves_with_those_odds() -> None:
    """Hypothesis' own draws, over a thousand runs of its generation, choose the clock,
    the workers and the receiver about one to two to two."""
    from hypothesis import Phase, given, seed, settings
    from hypothesis import strategies as st

    table = who_table(GROUPS)
    counts = [3 if group in ("clock", "worker", "receiver") else 0 for group in GROUPS]
    tally: Counter[str] = Counter()

    @seed(3)
    @settings(search_module.hypothesis_settings(1000), phases=[Phase.generate])
    @given(st.data())
    def choose(data: st.DataObject) -> None:
        for _ in range(10):
            tally[GROUPS[choose_group(data.draw, counts, table)]] += 1

    choose()
    total = sum(tally.values())
    for group, share in (("clock", 0.2), ("worker", 0.4), ("receiver", 0.4)):
        assert abs(tally[group] / total - share) < 0.03, tally


def reached_states(design: Design, bounds: Bounds, runs: int) -> list[tuple[int, ...]]:
    """Every state a small Hypothesis search met."""
    met: set[tuple[int, ...]] = set()
    original = search_module.CompiledSteps.options

    def remembered(self: CompiledSteps, state: tuple[int, ...]) -> search_module.Options:
        met.add(state)
        return original(self, state)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search_module.CompiledSteps, "options", remembered)
        hypothesis_search(design, bounds, runs=runs, seed=4, max_seconds=NO_TIME_LIMIT)
    return sorted(met)


@pytest.mark.parametrize(
    ("design", "bounds"),
    [
        (PRESETS["nonatomic-receiver"].design, REFERENCE_BOUNDS),
        (PRESETS["keepalive-lease"].design, REFERENCE_BOUNDS),
        (PRESETS["random-token"].design, Bounds(4, 3, 12, 6, 2)),
    ],
    ids=["nonatomic", "keepalive", "random-token-W4"],
)
@pytest.mark.slow
def test_the_compiled_rules_list_the_step_interpreters_steps(
    design: Design, bounds: Bounds
) -> None:
    """At every state a search reaches: the same enabled steps, in the same groups and
    order, to the same next states, breaking the same properties."""
    system = System(design, bounds)
    walker = walker_for(system, 0)
    compiled = search_module.steps_of(system, walker)
    assert isinstance(compiled, CompiledSteps)
    interpreted = InterpretedWalker(system, weights_in_order(), 0)
    states = reached_states(design, bounds, runs=15)
    assert len(states) > 100
    for state in states:
        assert compiled.options(state) == interpreted.options(state), state


def same_answers(first: RandomSearch, second: RandomSearch) -> None:
    """Two searches said the same: verdicts and runs, counts, states, shrinking."""
    assert first.verdicts == second.verdicts
    assert first.tried.keys() == second.tried.keys()
    for name, tried in first.tried.items():
        again = second.tried[name]
        assert (tried.runs, tried.steps, tried.found, tried.hypothesis) == (
            again.runs,
            again.steps,
            again.found,
            again.hypothesis,
        )
    assert (first.steps, first.states, first.longest, first.shrink_steps) == (
        second.steps,
        second.states,
        second.longest,
        second.shrink_steps,
    )


@pytest.mark.slow
def test_the_same_seed_repeats_the_search_and_another_seed_differs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same runs, steps, shrinking and runs shown for a seed; other runs for another."""
    monkeypatch.setattr("model.check.random_search.SHRINK_RUNS", 200)
    design = PRESETS["fencing-strict"].design
    first, again, other = (
        hypothesis_search(design, REFERENCE_BOUNDS, runs=30, seed=seed, max_seconds=NO_TIME_LIMIT)
        for seed in (5, 5, 6)
    )
    assert any(verdict.violated for verdict in first.verdicts.values())
    same_answers(first, again)
    assert first.steps != other.steps


def test_the_interpreter_and_the_compiled_rules_give_the_same_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What takes the steps changes nothing but the speed."""
    design = PRESETS["fencing-strict"].design
    monkeypatch.setattr("model.check.random_search.SHRINK_RUNS", 40)
    compiled = hypothesis_search(
        design, REFERENCE_BOUNDS, runs=30, seed=9, max_seconds=NO_TIME_LIMIT
    )
    monkeypatch.setattr(
        search_module,
        "walker_for",
        lambda system, limit: InterpretedWalker(system, weights_in_order(), limit),
    )
    interpreted = hypothesis_search(
        design, REFERENCE_BOUNDS, runs=30, seed=9, max_seconds=NO_TIME_LIMIT
    )
    assert (compiled.engine, interpreted.engine) == ("compiled", "interpreted")
    same_answers(compiled, interpreted)


def cut_answers_agree(full: RandomSearch, cut: RandomSearch) -> tuple[set[str], set[str]]:
    """Every answer of the cut search is the full search's, or unknown: the violations it
    kept and those it lost."""
    kept, lost = set(), set()
    for name, verdict in cut.verdicts.items():
        assert verdict == full.verdicts[name] or verdict.status is Status.UNKNOWN, name
        if full.verdicts[name].violated:
            (kept if verdict.violated else lost).add(name)
    return kept, lost


@pytest.mark.slow
def test_a_time_budget_only_ever_turns_an_answer_into_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Wherever the safety stop falls (here: at an early, a middle or a late look at the
    clock, while Hypothesis searches or while a run is shrunk), every answer shown is the
    full search's answer, and every property it cut short is unknown."""
    design = PRESETS["lease-only"].design
    looks = [0]
    stop_at = [0]

    def counted() -> float:
        """A clock that stands still, then jumps past any budget at the chosen look."""
        looks[0] += 1
        return 1e9 if 0 < stop_at[0] <= looks[0] else 0.0

    monkeypatch.setattr(search_module, "clock", counted)
    full = hypothesis_search(design, REFERENCE_BOUNDS, runs=40, seed=4, max_seconds=7)
    total = looks[0]
    assert full.stopped_by is None and total > 100
    kept: set[str] = set()
    lost: set[str] = set()
    for stop in (2, total // 3, total // 2, total - 5):
        looks[0], stop_at[0] = 0, stop
        cut = hypothesis_search(design, REFERENCE_BOUNDS, runs=40, seed=4, max_seconds=7)
        assert cut.stopped_by == "time budget of 7 s reached"
        more_kept, more_lost = cut_answers_agree(full, cut)
        kept, lost = kept | more_kept, lost | more_lost
    assert kept and lost, "the stops fell where they test nothing"


@pytest.mark.slow
def test_a_clock_fifty_times_faster_changes_no_answer_but_to_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a clock running fifty times faster, a budget the search fits in on the real clock
    cuts it short: what it shows is still the full search's, the rest unknown."""
    design = PRESETS["keepalive-lease"].design
    # One run first: the rules are compiled for the walk before the search that sets the budget
    hypothesis_search(design, REFERENCE_BOUNDS, runs=1, seed=2, max_seconds=NO_TIME_LIMIT)
    full = hypothesis_search(design, REFERENCE_BOUNDS, runs=60, seed=2, max_seconds=NO_TIME_LIMIT)
    real = search_module.clock
    start = real()
    monkeypatch.setattr(search_module, "clock", lambda: start + 50 * (real() - start))
    budget = max(full.seconds, 0.1) * 25
    cut = hypothesis_search(design, REFERENCE_BOUNDS, runs=60, seed=2, max_seconds=budget)
    # Either clock stops it: the budget, or (on a busy machine, where one shrink takes more
    # than a fiftieth of Hypothesis' own limit) the stop before Hypothesis' own clock.
    stops = (f"time budget of {budget:g} s reached", "Hypothesis' shrinking ran past")
    assert cut.stopped_by is not None and cut.stopped_by.startswith(stops), cut.stopped_by
    cut_answers_agree(full, cut)


@pytest.mark.slow
def test_runs_stay_within_the_step_budget_and_a_time_budget_stops_the_search() -> None:
    design = PRESETS["lease-only"].design
    short = hypothesis_search(
        design, REFERENCE_BOUNDS, runs=20, max_steps=3, max_seconds=NO_TIME_LIMIT
    )
    assert short.longest == 3 and short.max_steps == 3
    assert all(not verdict.violated for verdict in short.verdicts.values())
    longest = max_run_length(design, REFERENCE_BOUNDS) + 1
    assert hypothesis_search(design, REFERENCE_BOUNDS, runs=1, max_steps=10**15).max_steps == (
        longest
    )
    cut = hypothesis_search(design, REFERENCE_BOUNDS, runs=10**9, max_seconds=0.5)
    assert cut.stopped_by == "time budget of 0.5 s reached"
    assert all(verdict.status is Status.UNKNOWN for verdict in cut.verdicts.values())
    assert cut.tried["P1"].runs > 0 and all(t.runs == 0 for n, t in cut.tried.items() if n != "P1")


@pytest.mark.slow
def test_runs_past_a_batch_are_drawn_by_fresh_hypothesis_searches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Batches of ten runs: every property that holds still gets all its runs, the same for
    a seed; a violation found in a later batch is shrunk as well."""
    monkeypatch.setattr(search_module, "BATCH_STEPS", 10 * 25)
    monkeypatch.setattr("model.check.random_search.SHRINK_RUNS", 100)
    design = PRESETS["volatile-hwm"].design
    found = hypothesis_search(design, REFERENCE_BOUNDS, runs=45, seed=3, max_seconds=NO_TIME_LIMIT)
    same_answers(found, hypothesis_search(design, REFERENCE_BOUNDS, runs=45, seed=3))
    check_against_breadth_first(found, design)
    assert any(
        verdict.violated and found.tried[name].runs > 10 for name, verdict in found.verdicts.items()
    )
    for name, verdict in found.verdicts.items():
        assert verdict.violated or found.tried[name].runs == 45


def test_a_search_ends_when_hypothesis_has_drawn_every_run_there_is() -> None:
    """At the smallest bounds there is one run: it is drawn once, and nothing is known."""
    bounds = Bounds(workers=1, lease=1, horizon=0, grants=1, writes=1)
    found = hypothesis_search(
        PRESETS["fencing"].design, bounds, runs=10**6, max_seconds=NO_TIME_LIMIT
    )
    assert all(tried.runs == 1 for tried in found.tried.values())
    assert all(verdict.status is Status.UNKNOWN for verdict in found.verdicts.values())
    assert unknown_words(1, 1, "hypothesis") == "unknown (Hypothesis search: 1 run, 1 step)"


def test_a_property_that_holds_is_unknown_to_a_hypothesis_search() -> None:
    """Where breadth-first says holds or vacuous, the Hypothesis search says unknown,
    having tried every run it was given."""
    found = hypothesis_search(
        PRESETS["lease-aware-receiver"].design, REFERENCE_BOUNDS, runs=20, max_seconds=NO_TIME_LIMIT
    )
    assert all(v.status is Status.UNKNOWN for v in found.verdicts.values())
    assert all(found.tried[name].runs == 20 for name in found.verdicts)
    assert found.shrink_steps == 0


def test_the_groups_hypothesis_draws_from_are_the_designs() -> None:
    """A design without faults has no fault in the table; with restarts it has one."""
    plain = who_table(groups_of(System(PRESETS["fencing"].design, REFERENCE_BOUNDS)))
    faulty = who_table(groups_of(System(PRESETS["volatile-hwm"].design, REFERENCE_BOUNDS)))
    assert GROUPS.index("fault") not in plain and GROUPS.index("fault") in faulty
    assert [GROUPS[group] for group in faulty] == [
        group for group in SIMPLEST_FIRST for _ in range(WEIGHTS[group])
    ]


@pytest.mark.slow
def test_check_hypothesis_json_has_the_shape_of_the_random_strategys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every key of `check --strategy random --json` is there, and `hypothesis` per
    property; statuses are one-sided; each trace is as long as its run and ends with its
    property violated; the lengths only ever shrink."""
    bounds = ["--horizon", "6", "--grants", "3", "--writes", "2"]
    flags = ["--runs", "20", "--seed", "3", "--json"]
    code, out, _ = run(
        ["check", "--preset", "lease-only", *bounds, "--strategy", "random", *flags], capsys
    )
    at_random = json.loads(out)
    code, out, err = run(
        ["check", "--preset", "lease-only", *bounds, "--strategy", "hypothesis", *flags], capsys
    )
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert set(report) == set(at_random) and report["strategy"] == "hypothesis"
    assert report["complete"] is False and report["seed"] == 3 and report["runs"] == 20
    assert report["stopped_by"] == "a Hypothesis search never shows that a property holds"
    assert report["engine"] == "compiled" and report["shrink_steps"] > 0
    for name, cell in report["properties"].items():
        assert set(cell) == set(at_random["properties"][name]) | {"hypothesis"}
        assert cell["status"] in {"violated", "unknown"}
        assert cell["holds"] is (False if cell["status"] == "violated" else None)
        assert cell["runs"] <= 20
        if cell["trace"] is not None:
            assert len(cell["trace"]) == cell["shortest"] <= cell["hypothesis"] <= cell["found"]
            assert name in cell["trace"][-1]["violations"]
        else:
            assert cell["found"] is cell["hypothesis"] is None
    assert report["properties"]["P2"]["status"] == "violated"


@pytest.mark.slow
def test_check_hypothesis_says_unknown_with_the_runs_and_steps_tried(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The human report never says holds, names the runs and steps behind unknown and
    how long each run shown was before shrinking, and whose runs it shows."""
    flags = ["--strategy", "hypothesis", "--runs", "25", "--seed", "1"]
    code, out, _ = run(["check", "--preset", "volatile-counter", *flags], capsys)
    assert code == 0
    found = hypothesis_search(
        PRESETS["volatile-counter"].design,
        REFERENCE_BOUNDS,
        runs=25,
        seed=1,
        max_seconds=NO_TIME_LIMIT,
    )
    for name, tried in found.tried.items():
        verdict = found.verdicts[name]
        if verdict.violated:
            assert violated_words(verdict.shortest or 0, tried.found, tried.hypothesis) in out
            assert f"A run violating {name} (found by Hypothesis and shrunk):" in out
        else:
            assert unknown_words(tried.runs, tried.steps, "hypothesis") in out
    table = out.split("A run violating")[0]
    violated = sum(verdict.violated for verdict in found.verdicts.values())
    assert " holds" not in table and table.count("VIOLATED") == violated > 0
    assert "Hypothesis search, seed 1, on loops compiled from the rules" in out
    assert f"{found.shrink_steps:,} more while shrinking" in out
    assert violated_words(9, 20, 12) == (
        "VIOLATED (a run of 9 steps, shrunk from 20; Hypothesis' shrinking reached 12)"
    )
    assert (
        violated_words(9, 20, 9)
        == violated_words(9, 20)
        == "VIOLATED (a run of 9 steps, shrunk from 20)"
    )


@pytest.mark.parametrize(
    "flags",
    [
        ["--strategy", "hypothesis", "--runs", "0"],
        ["--strategy", "hypothesis", "--seed", "-1"],
        ["--strategy", "hypothesis", "--max-steps", "0"],
        ["--strategy", "hypothesis", "--symmetry"],
        ["--strategy", "reference", "--runs", "10"],
    ],
)
def test_bad_flags_get_one_line_and_status_2(
    flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["check", *flags], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "error" in err


def test_every_search_by_random_runs_has_its_words() -> None:
    assert set(RUNS_SEARCHES) == {"random", "hypothesis"}
    assert [search.title for search in RUNS_SEARCHES.values()] == [
        "Random search",
        "Hypothesis search",
    ]


@pytest.mark.slow
def test_a_search_leaves_no_hypothesis_folder_where_it_was_started(tmp_path: Path) -> None:
    """Hypothesis writes its notes in the private cache folder, not the current one."""
    done = subprocess.run(
        [sys.executable, "-m", "fencing.cli", "check", "--strategy", "hypothesis", "--runs", "30"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "VIOLATED" in done.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_another_process_with_other_modules_loaded_gives_the_same_search() -> None:
    """A fresh `fencing check` (which loads far less code than this test process, and so
    gives Hypothesis other constants to collect) repeats this process's search exactly."""
    flags = ["--preset", "volatile-counter", "--strategy", "hypothesis", "--runs", "20"]
    done = subprocess.run(
        [sys.executable, "-m", "fencing.cli", "check", *flags, "--seed", "8", "--json"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    there = json.loads(done.stdout)
    here = hypothesis_search(
        PRESETS["volatile-counter"].design,
        REFERENCE_BOUNDS,
        runs=20,
        seed=8,
        max_seconds=NO_TIME_LIMIT,
    )
    assert there["transitions"] == here.steps and there["shrink_steps"] == here.shrink_steps
    assert there["states"] == here.states
    for name, cell in there["properties"].items():
        tried, verdict = here.tried[name], here.verdicts[name]
        assert (cell["runs"], cell["steps"], cell["found"], cell["hypothesis"]) == (
            tried.runs,
            tried.steps,
            tried.found,
            tried.hypothesis,
        )
        assert cell["shortest"] == verdict.shortest


@pytest.mark.slow
def test_a_hypothesis_check_imports_no_solver_or_web_stack() -> None:
    from tests.test_startup import check_in_a_fresh_interpreter

    found = check_in_a_fresh_interpreter("--strategy", "hypothesis", "--runs", "5")
    assert found["code"] == 0
    assert found["heavy"] == ["numba", "llvmlite", "hypothesis"]
