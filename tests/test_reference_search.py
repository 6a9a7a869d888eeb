"""Both of the explorer's expanders against the reference search (`model.reference`).

The explorer expands a level either with numpy (a rule on a whole chunk at once) or with
loops compiled by numba (`model.kernels`); which one is chosen depends on the level's size
and on what was compiled before. Here each path is forced in turn, on every preset, and
must reproduce the reference search exactly: counts, level sizes and every verdict,
counterexample actions and vacuity included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from model.design import REFERENCE_BOUNDS, Bounds
from model.explorer import Exploration, explore
from model.presets import PRESETS, PRESETS_LIST, Preset
from model.reference import ReferenceResult, reference_search
from model.search import Expander, SearchOptions, Tuning
from model.trace import replay
from model.verdicts import Status
from tests.cli_helpers import run

SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=2)
EVERY_LEVEL_COMPILED = SearchOptions(
    expander=Expander.COMPILED, threads=1, tuning=Tuning(load_from=1)
)
"""Compiled loops from the first level on (the start's level of one state included)."""


def same_as_reference(fast: Exploration, plain: ReferenceResult) -> None:
    """Counts, level sizes and verdicts (statuses, lengths, actions) are the reference's."""
    assert fast.complete
    assert (fast.states, fast.transitions, fast.depth, fast.level_sizes) == (
        plain.states,
        plain.transitions,
        plain.depth,
        plain.level_sizes,
    )
    assert fast.verdicts == plain.verdicts


@pytest.fixture(scope="module")
def compiled_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every level goes through compiled loops, compiled afresh into a private folder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FENCING_LAB_CACHE", str(tmp_path_factory.mktemp("kernels")))
        yield


@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_the_numpy_path_is_the_reference_search(preset: Preset) -> None:
    """The numpy expander (compiled loops refused) gives the reference's results exactly."""
    fast = explore(preset.design, SMALL, SearchOptions(expander=Expander.NUMPY, threads=1))
    same_as_reference(fast, reference_search(preset.design, SMALL))


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_the_compiled_path_is_the_reference_search(preset: Preset, compiled_path: None) -> None:
    """Compiled loops on every level, the first included, give the reference's results."""
    fast = explore(preset.design, SMALL, EVERY_LEVEL_COMPILED)
    same_as_reference(fast, reference_search(preset.design, SMALL))


def test_every_status_is_met_at_the_small_bounds() -> None:
    """The comparison above sees holds, violated and vacuous verdicts (vacuity is tested)."""
    seen = {
        verdict.status
        for preset in PRESETS_LIST
        for verdict in reference_search(preset.design, SMALL).verdicts.values()
    }
    assert seen == {Status.HOLDS, Status.VIOLATED, Status.VACUOUS}


def test_reference_counterexamples_replay_to_their_first_violation() -> None:
    """Each reference counterexample is a real run whose last step is its first violation."""
    design = PRESETS["rmw-lease-only"].design
    for name, verdict in reference_search(design, SMALL).verdicts.items():
        if verdict.actions is None:
            continue
        trace = replay(design, SMALL, verdict.actions)
        assert trace.first_violation(name) is trace.steps[-1]
        assert len(trace.steps) == verdict.shortest


@pytest.mark.slow
def test_key_version_tokens_never_reject_under_compiled_loops(compiled_path: None) -> None:
    """key-version-token's receiver never refuses a request, so P4 is vacuous, not holds:
    at the reference bounds on compiled loops, as in the reference search."""
    design = PRESETS["key-version-token"].design
    fast = explore(design, REFERENCE_BOUNDS, EVERY_LEVEL_COMPILED)
    plain = reference_search(design, REFERENCE_BOUNDS)
    same_as_reference(fast, plain)
    assert fast.status("P4") is Status.VACUOUS


def test_check_strategy_reference_prints_what_breadth_first_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--strategy reference` reports the explorer's figures (all but the seconds)."""
    flags = ["check", "--preset", "volatile-counter", "--horizon", "5", "--json"]
    reports = []
    for strategy in ("breadth-first", "reference"):
        code, out, err = run([*flags, "--strategy", strategy], capsys)
        assert (code, err) == (0, "")
        report = json.loads(out)
        del report["seconds"]
        reports.append(report)
    assert reports[0] == reports[1]
    assert {cell["status"] for cell in reports[0]["properties"].values()} >= {"violated", "holds"}


def test_the_reference_search_stops_at_its_budgets(capsys: pytest.CaptureFixture[str]) -> None:
    """A state budget ends the plain search after a level; unviolated means unknown."""
    plain = reference_search(PRESETS["fencing"].design, REFERENCE_BOUNDS, max_states=500)
    assert not plain.complete and plain.stopped_by == "state budget of 500 states reached"
    assert 500 <= plain.states < 3268
    assert {str(v.status) for v in plain.verdicts.values()} <= {"violated", "unknown"}
    code, out, _ = run(["check", "--strategy", "reference", "--max-seconds", "0.001"], capsys)
    assert code == 0 and "INCOMPLETE: time budget of 0.001 s reached" in out
    code, _, err = run(["check", "--strategy", "reference", "--symmetry"], capsys)
    assert code == 2 and "breadth-first search only" in err
