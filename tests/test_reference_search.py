"""Each level expander of the breadth-first search against the reference search.

The breadth-first search (`model.check.bfs`) expands a level through one interface
(`model.check.expanders`), by numpy or by loops compiled by numba, or by the native engine
in C (`model.check.native_search`), which also keeps the seen set; which one runs depends
on the level's size and on what was built before. Here each expander is forced in turn, on
every preset at the reference bounds, and must reproduce the reference search
(`model.check.reference`) exactly: states, transitions, depth, level sizes and every property's
verdict, vacuity, shortest length and counterexample actions included.
"""

from __future__ import annotations

import json
from functools import cache

import pytest

from model.check.explorer import Exploration, explore
from model.check.reference import ReferenceResult, reference_search
from model.check.search import Expander, SearchOptions, Tuning
from model.design import REFERENCE_BOUNDS, Bounds
from model.formats.trace import replay
from model.presets import PRESETS, PRESETS_LIST, Preset
from model.verdicts import Status
from tests.cli_helpers import run

SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=2)
EXPANDERS = {
    "numpy": SearchOptions(expander=Expander.NUMPY, threads=1),
    "compiled": SearchOptions(expander=Expander.COMPILED, threads=1, tuning=Tuning(load_from=1)),
    "native": SearchOptions(expander=Expander.NATIVE, threads=1, tuning=Tuning(load_from=1)),
    "native-two-lanes": SearchOptions(
        expander=Expander.NATIVE, threads=2, tuning=Tuning(load_from=1, parallel_from=1)
    ),
}
"""Each expander on every level: numpy, compiled loops and the native engine from the first
level on (the start's level of one state included), the engine also with two threads
filling the seen set at once."""


@cache
def reference_at(name: str, bounds: Bounds) -> ReferenceResult:
    """The reference search of a preset (computed once for every expander compared)."""
    return reference_search(PRESETS[name].design, bounds)


def same_as_reference(fast: Exploration, plain: ReferenceResult) -> None:
    """Counts, level sizes and verdicts (statuses, lengths, actions) are the reference's."""
    assert fast.complete and plain.complete
    assert (fast.states, fast.transitions, fast.depth, fast.level_sizes) == (
        plain.states,
        plain.transitions,
        plain.depth,
        plain.level_sizes,
    )
    assert fast.verdicts == plain.verdicts


BY_PRESET = [
    pytest.param(preset, id=preset.name, marks=pytest.mark.xdist_group(f"reference-{preset.name}"))
    for preset in PRESETS_LIST
]
"""Every preset, its expanders' tests on one worker: the reference search, the slow part,
is then made once per preset for all of them."""


@pytest.mark.slow
@pytest.mark.parametrize("expander", sorted(EXPANDERS))
@pytest.mark.parametrize("preset", BY_PRESET)
def test_each_expander_is_the_reference_search(preset: Preset, expander: str) -> None:
    """Every expander gives the reference's results exactly at the reference bounds."""
    fast = explore(preset.design, REFERENCE_BOUNDS, EXPANDERS[expander])
    same_as_reference(fast, reference_at(preset.name, REFERENCE_BOUNDS))


@pytest.mark.slow
def test_every_status_is_met_at_the_reference_bounds() -> None:
    """The comparison above sees holds, violated and vacuous verdicts (vacuity is tested),
    and counterexamples of several lengths."""
    verdicts = [
        verdict
        for preset in PRESETS_LIST
        for verdict in reference_at(preset.name, REFERENCE_BOUNDS).verdicts.values()
    ]
    assert {verdict.status for verdict in verdicts} == {
        Status.HOLDS,
        Status.VIOLATED,
        Status.VACUOUS,
    }
    assert len({verdict.shortest for verdict in verdicts if verdict.violated}) > 2


def test_reference_counterexamples_replay_to_their_first_violation() -> None:
    """Each reference counterexample is a real run whose last step is its first violation."""
    design = PRESETS["rmw-lease-only"].design
    for name, verdict in reference_search(design, SMALL).verdicts.items():
        if verdict.actions is None:
            continue
        trace = replay(design, SMALL, verdict.actions)
        assert trace.first_violation(name) is trace.steps[-1]
        assert len(trace.steps) == verdict.shortest


KEY_VERSION_COMMAND = ["check", "--preset", "key-version-token", "--workers", "4"]
KEY_VERSION_SMALL = Bounds(workers=4, lease=2, horizon=6, grants=3, writes=1)


@pytest.mark.slow
@pytest.mark.xdist_group("reference-key-version-small")
@pytest.mark.parametrize("expander", sorted(EXPANDERS))
def test_key_version_tokens_never_reject_so_p4_is_vacuous(
    expander: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`fencing check --preset key-version-token --workers 4 --lease 3 --horizon 12
    --grants 6 --writes 2` must report P4 (a rejected request never lets a stale write
    in) as vacuous: this receiver checks the key's version, never refuses a request, so
    P4's trigger never occurs. That command's levels grow past `Tuning.compile_from`, so
    it runs on compiled loops, while small bounds run on numpy: a change to one expander
    can slip past tests that only meet the other, hence each is forced here.

    That command explores 11,930,141 states (about 10 s on compiled loops), beyond the
    reference search's budget of 1,000,000 states, so the same vacuity is checked at
    W=4 L=2 T=6 G=3 K=1 (four workers as in the command, 13,579 states), where the
    reference search says P4 is vacuous: each expander, forced on every level, must
    agree with it, and so must `fencing check` with those flags.
    """
    design = PRESETS["key-version-token"].design
    plain = reference_at("key-version-token", KEY_VERSION_SMALL)
    assert plain.verdicts["P4"].status is Status.VACUOUS
    fast = explore(design, KEY_VERSION_SMALL, EXPANDERS[expander])
    same_as_reference(fast, plain)
    flags = [*KEY_VERSION_COMMAND, "--lease", "2", "--horizon", "6", "--grants", "3"]
    code, out, err = run([*flags, "--writes", "1", "--json"], capsys)
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert report["states"] == plain.states
    assert report["properties"]["P4"]["status"] == "vacuous"


@pytest.mark.slow
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
