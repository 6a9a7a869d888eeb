"""The vectorised explorer: symmetry against brute-force orbits, budgets."""

from __future__ import annotations

from dataclasses import replace

import pytest

from model.check.explorer import explore
from model.check.reference import reference_search
from model.check.search import Expander, OnLevel, Progress, SearchOptions, Tuning, Visitor
from model.check.symmetry import canonical_state, renamings
from model.design import REFERENCE_BOUNDS, Bounds, Design, DesignError
from model.formats.trace import replay
from model.presets import PRESETS, PRESETS_LIST
from model.rules import Action
from model.system import System

SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=2)
TINY = Tuning(chunk_states=64, parallel_from=128)
"""Chunks of 64 states, two threads from 128: every level of a small search is split."""


@pytest.mark.parametrize(
    "design, bounds",
    [
        (Design(), Bounds(2, 2, 4, 2, 1)),
        (Design(receiver="none"), Bounds(3, 2, 4, 3, 1)),
        (PRESETS["rmw-fencing-unfenced-reads"].design, Bounds(2, 2, 4, 2, 1)),
        (Design(token="local-clock", skew=(1, 0, 0)), Bounds(3, 2, 3, 2, 1)),
        (Design(token="local-clock", skew=(0, 0)), Bounds(2, 2, 4, 2, 1)),
        (PRESETS["random-token"].design, Bounds(2, 2, 4, 3, 1)),
        (PRESETS["keepalive-fencing"].design, Bounds(2, 2, 4, 2, 1)),
        (PRESETS["lock-without-lease"].design, Bounds(3, 1, 4, 3, 1)),
        (Design(receiver="none", renew=True, crashes=2), Bounds(3, 2, 3, 2, 1)),
    ],
    ids=[
        "core",
        "none-W3",
        "rmw",
        "skew-100",
        "skew-00",
        "random",
        "keepalive",
        "no-lease-W3",
        "crashes2-W3",
    ],
)
@pytest.mark.slow
def test_symmetry_counts_distinct_canonical_forms(design: Design, bounds: Bounds) -> None:
    """Orbits counted by the explorer equal the canonical forms of the full state set."""
    layout = System(design, bounds).layout
    group = renamings(layout)
    full = reference_search(design, bounds).distance
    orbits = {canonical_state(layout, state, group) for state in full}
    reduced = explore(design, bounds, SearchOptions(symmetry=True))
    assert reduced.states == len(orbits)
    full_result = explore(design, bounds)
    for name, verdict in full_result.verdicts.items():
        assert reduced.verdicts[name].shortest == verdict.shortest


def test_skews_restrict_renamings_to_equal_skews() -> None:
    """With skews (1, 0, 0) only W2 and W3 may swap; with equal skews every worker may."""
    layout = System(Design(token="local-clock", skew=(1, 0, 0)), Bounds(3, 2, 3, 2, 1)).layout
    assert sorted(renamings(layout)) == [(1, 2, 3), (1, 3, 2)]
    equal = System(Design(token="local-clock", skew=(0, 0, 0)), Bounds(3, 2, 3, 2, 1)).layout
    assert len(renamings(equal)) == 6


def test_symmetric_counterexamples_are_real_runs() -> None:
    """Counterexamples found on orbits replay as concrete runs to the same violation."""
    design, bounds = PRESETS["lease-only"].design, REFERENCE_BOUNDS
    result = explore(design, bounds, SearchOptions(symmetry=True))
    for name, verdict in result.verdicts.items():
        if verdict.violated:
            assert verdict.actions is not None
            trace = replay(design, bounds, verdict.actions)
            assert name in trace.steps[-1].violations
            assert len(trace.steps) == verdict.shortest


@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_counterexamples_replay_and_none_is_shorter(preset) -> None:
    """Each shortest counterexample replays to its violation; depth - 1 finds none."""
    result = explore(preset.design, REFERENCE_BOUNDS)
    for name, verdict in result.verdicts.items():
        if not verdict.violated:
            continue
        assert verdict.actions is not None and verdict.shortest is not None
        trace = replay(preset.design, REFERENCE_BOUNDS, verdict.actions)
        assert len(trace.steps) == verdict.shortest
        assert name in trace.steps[-1].violations
        assert all(name not in step.violations for step in trace.steps[:-1])
        shorter = explore(
            preset.design, REFERENCE_BOUNDS, SearchOptions(max_depth=verdict.shortest - 1)
        )
        assert not shorter.verdicts[name].violated


def test_state_budget_gives_partial_result_with_violations() -> None:
    """A state budget stops the run, says so, and keeps the violations already found."""
    result = explore(Design(receiver="none"), REFERENCE_BOUNDS, SearchOptions(max_states=500))
    assert not result.complete
    assert result.states == 500
    assert result.stopped_by is not None and "state budget" in result.stopped_by
    assert result.verdicts["P2"].violated and result.verdicts["P2"].shortest == 5
    assert result.status("P4") == "unknown"
    assert result.verdicts["P4"].holds is None


def test_time_budget_gives_partial_result() -> None:
    """A time budget too small to finish reports an incomplete run, not a hang."""
    result = explore(Design(), Bounds(3, 3, 10, 5, 2), SearchOptions(max_seconds=1e-9))
    assert not result.complete
    assert result.stopped_by is not None and "time budget" in result.stopped_by
    assert result.states < 180_216


def test_progress_reports_every_level() -> None:
    """The progress callback sees each BFS level, with growing counts."""
    seen: list[Progress] = []
    result = explore(Design(), Bounds(2, 2, 4, 2, 1), visitors=[OnLevel(seen.append)])
    assert len(seen) == result.depth + 1
    assert [p.states for p in seen] == sorted(p.states for p in seen)
    assert seen[-1].states == result.states and seen[-1].transitions == result.transitions


class _Recorder(Visitor):
    """Remembers every first violation and level it is told of, in order."""

    def __init__(self) -> None:
        self.violations: list[tuple[str, int]] = []
        self.levels: list[int] = []

    def on_violation(self, name: str, length: int) -> None:
        self.violations.append((name, length))

    def on_level(self, progress: Progress) -> None:
        self.levels.append(progress.depth)


@pytest.mark.parametrize("preset", PRESETS_LIST[:8], ids=lambda p: p.name)
def test_visitors_are_told_each_first_violation_once_with_its_length(preset) -> None:
    """Each violated property is reported once, with its shortest length, in the order of
    the levels; two visitors are told the same, and neither changes the result."""
    first, second = _Recorder(), _Recorder()
    result = explore(preset.design, SMALL, visitors=[first, second])
    violated = {name: v.shortest for name, v in result.verdicts.items() if v.violated}
    assert dict(first.violations) == violated and len(first.violations) == len(violated)
    assert [length for _, length in first.violations] == sorted(violated.values())
    assert (first.violations, first.levels) == (second.violations, second.levels)
    plain = explore(preset.design, SMALL)
    assert (plain.states, plain.verdicts) == (result.states, result.verdicts)


def test_search_options_refuse_what_no_search_can_do() -> None:
    """A budget of no states, a negative depth or no threads is refused at once, named."""
    with pytest.raises(ValueError, match="max_states must be at least 1, not 0"):
        SearchOptions(max_states=0)
    with pytest.raises(ValueError, match="max_depth must be at least 0, not -1"):
        SearchOptions(max_depth=-1)
    with pytest.raises(ValueError, match="threads must be at least 1, not 0"):
        SearchOptions(threads=0)


def test_level_sizes_sum_to_states() -> None:
    """States per BFS depth add up to the state count, one entry per depth."""
    result = explore(Design(), Bounds(3, 2, 6, 3, 2))
    assert sum(result.level_sizes) == result.states
    assert len(result.level_sizes) == result.depth + 1


def test_exploring_from_a_midway_state_finishes_the_run() -> None:
    """From a state reached by a prefix, the shortest completion plus the prefix is a real run."""
    design, bounds = Design(receiver="none"), Bounds(2, 2, 4, 2, 1)
    prefix = [Action("Acquire", 1), Action("Send", 1)]
    system = System(design, bounds)
    state = system.initial()
    for action in prefix:
        state = system.apply(state, system.rule_for(action))
    for symmetry in (False, True):
        verdict = explore(design, bounds, SearchOptions(start=state, symmetry=symmetry)).verdicts[
            "P1"
        ]
        assert verdict.shortest == 6 and verdict.actions is not None
        trace = replay(design, bounds, [*prefix, *verdict.actions])
        assert "P1" in trace.steps[-1].violations


def test_a_start_outside_the_domain_is_refused() -> None:
    """A start tuple of the wrong shape or range is refused with the column named."""
    with pytest.raises(DesignError, match=r"holder = 9 is outside its domain 0\.\.2"):
        layout = System(Design(), Bounds()).layout
        bad = list(layout.initial())
        bad[layout.index["holder"]] = 9
        explore(Design(), Bounds(), SearchOptions(start=tuple(bad)))


@pytest.mark.parametrize("words", [1, 2], ids=["one word", "two words"])
@pytest.mark.parametrize("sorted_up_to", [0, 7_000, 10**9], ids=["tables", "moves", "sorted"])
def test_seen_set_finds_first_occurrences_like_a_sort(
    sorted_up_to: int, words: int, monkeypatch
) -> None:
    """The seen set's first occurrences of new keys equal those of a stable sort, batch by
    batch: in hash tables, in a sorted array, and moving from the one to the other, for
    keys of one word and of two; the keys it holds are every key added, once."""
    import numpy as np

    import model.check.keys as keys_module
    import model.check.seen as seen_module
    from model.check.keys import KeyCodec
    from model.check.seen import SeenSet, first_occurrences
    from model.layout import Layout

    monkeypatch.setattr(seen_module, "SORTED_UP_TO", sorted_up_to)
    if words == 2:
        monkeypatch.setattr(keys_module, "WORD_BITS", 20)
        monkeypatch.setattr(keys_module, "INT64_LIMIT", 2**20 - 1)
    codec = KeyCodec.of(Layout.of(Design(), REFERENCE_BOUNDS))
    assert codec.words == words
    seen, everything = SeenSet(codec), set()
    rng = np.random.default_rng(7)
    for _ in range(6):
        batch = rng.integers(0, 5_000 if words == 1 else 70, (3_000, words))
        batch = batch[:, 0] if words == 1 else batch
        fresh = np.sort(seen.add(batch))
        unique, first = first_occurrences(batch)
        new = [tuple(np.atleast_1d(key).tolist()) not in everything for key in unique]
        assert fresh.tolist() == np.sort(first[new]).tolist()
        everything |= {tuple(np.atleast_1d(key).tolist()) for key in batch}
        held = sorted(tuple(np.atleast_1d(key).tolist()) for key in seen.held_keys())
        assert held == sorted(everything)  # each key once
    assert seen.count == len(everything)
    assert (seen.sorted is None) is (sorted_up_to < 6 * 3_000)  # a batch went past it
    if seen.sorted is not None and words == 1:
        assert seen.sorted.tolist() == sorted(key for (key,) in everything)  # kept sorted


@pytest.mark.parametrize("keys", ["mixed-radix", "several words"])
@pytest.mark.parametrize("preset", PRESETS_LIST[:6], ids=lambda p: p.name)
@pytest.mark.slow
def test_chunks_threads_and_key_kinds_change_nothing(preset, keys: str, monkeypatch) -> None:
    """Tiny chunks on two threads, and keys as one mixed-radix number or as two words of
    bit fields, give identical results."""
    import model.check.keys as keys_module
    from model.check.keys import KeyCodec

    bounds = Bounds(3, 2, 5, 3, 1)
    plain = explore(preset.design, bounds, SearchOptions(threads=1))
    monkeypatch.setattr(keys_module, "WORD_BITS", 20)
    if keys == "several words":
        monkeypatch.setattr(keys_module, "INT64_LIMIT", 2**20 - 1)
    codec = KeyCodec.of(System(preset.design, bounds).layout)
    assert (codec.wide, codec.bit_fields) == (
        (True, True) if keys == "several words" else (False, False)
    )
    for symmetry in (False, True):
        small = explore(
            preset.design, bounds, SearchOptions(threads=2, symmetry=symmetry, tuning=TINY)
        )
        reference = (
            plain if not symmetry else explore(preset.design, bounds, SearchOptions(symmetry=True))
        )
        assert (small.states, small.transitions, small.level_sizes) == (
            reference.states,
            reference.transitions,
            reference.level_sizes,
        )
        for name, verdict in reference.verdicts.items():
            assert small.verdicts[name] == verdict


def test_bounds_beyond_one_word_explore() -> None:
    """The largest bounds the CLI accepts need keys of several words, and still explore."""
    from model.check.keys import KeyCodec

    design = Design(token="random", receiver="fenced-nonatomic", workload="rmw", fenced_reads=True)
    bounds = Bounds(5, 12, 30, 8, 4)
    assert KeyCodec.of(System(design, bounds).layout).words >= 2
    result = explore(design, bounds, SearchOptions(max_depth=5))
    assert result.states == sum(result.level_sizes) and result.depth == 5
    naive_level_one = len(
        {s.state for s in System(design, bounds).successors(System(design, bounds).initial())}
    )
    assert result.level_sizes[1] == naive_level_one


@pytest.mark.slow
def test_properties_are_skipped_only_where_the_rules_make_them_impossible() -> None:
    """A property left out of a rule's plan is never violated or exercised by that rule."""
    from model.check.expanders import rule_plans

    core = {plan.rule.action: plan for plan in rule_plans(System(Design(), SMALL))}
    assert all("P5" not in {p.name for p in plan.violable} for plan in core.values())
    assert {p.name for p in core[Action("Deliver", 1)].violable} == {"P1", "P2", "P3", "P4"}
    assert not core[Action("Tick")].violable and not core[Action("Acquire", 1)].triggerable
    unfenced = rule_plans(System(Design(receiver="none"), SMALL))
    assert all("P4" not in {p.name for p in plan.violable} for plan in unfenced)
    for preset in PRESETS_LIST:
        system = System(preset.design, SMALL)
        plans = {plan.rule.action: plan for plan in rule_plans(system)}
        for state in reference_search(preset.design, SMALL).distance:
            view = system.view(state)
            for rule in system.enabled(state):
                plan = plans[rule.action]
                possible = {p.name for p in plan.violable}
                assert set(system.violations(state, rule)) <= possible
                exercised = {p.name for p in system.properties if p.triggered(view, rule)}
                assert exercised <= {p.name for p in plan.triggerable}


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, keys",
    [
        ("nonatomic-receiver", "bit fields"),
        ("rmw-lease-aware", "bit fields"),
        ("volatile-counter", "mixed-radix"),
        ("random-token", "several words"),
        ("keepalive-fencing", "bit fields"),
        ("lock-without-lease", "mixed-radix"),
    ],
)
def test_compiled_loops_give_identical_results(name: str, keys: str, monkeypatch, tmp_path) -> None:
    """Rules compiled into loops (from their own symbolic form), in small chunks on two
    threads, find the same states, transitions, verdicts and counterexamples as the numpy
    path on one, with and without symmetry."""
    monkeypatch.setenv("FENCING_LAB_CACHE", str(tmp_path))
    design, bounds = PRESETS[name].design, Bounds(2, 2, 5, 3, 2)
    plains = [
        explore(design, bounds, SearchOptions(symmetry=s, expander=Expander.NUMPY))
        for s in (False, True)
    ]
    if keys != "bit fields":
        import model.check.keys as keys_module

        monkeypatch.setattr(keys_module, "WORD_BITS", 20)
        if keys == "several words":
            monkeypatch.setattr(keys_module, "INT64_LIMIT", 2**20 - 1)
        codec = keys_module.KeyCodec.of(System(design, bounds).layout)
        assert (codec.wide, codec.bit_fields) == (keys == "several words", keys != "mixed-radix")
    every_level = replace(TINY, load_from=1)
    for symmetry, plain in zip((False, True), plains, strict=True):
        options = SearchOptions(
            symmetry=symmetry, expander=Expander.COMPILED, threads=2, tuning=every_level
        )
        compiled = explore(design, bounds, options)
        assert (compiled.states, compiled.transitions, compiled.level_sizes) == (
            plain.states,
            plain.transitions,
            plain.level_sizes,
        )
        assert compiled.verdicts == plain.verdicts
    assert list(tmp_path.rglob("kernels_*.ready"))


def test_an_edge_visitor_is_shown_every_transition_whatever_expander_is_asked() -> None:
    """Edges come from the numpy expander only, so a visitor asking for them gets every
    transition even when compiled loops are asked for every level."""
    from model.check.search import EdgeBatch, OnEdges

    batches: list[EdgeBatch] = []
    options = SearchOptions(expander=Expander.COMPILED, tuning=Tuning(load_from=1))
    result = explore(Design(), SMALL, options, visitors=[OnEdges(batches.append)])
    assert sum(len(batch.sources) for batch in batches) == result.transitions > 0
    assert result.verdicts == explore(Design(), SMALL).verdicts


@pytest.mark.parametrize(
    "words", ["bit fields", "mixed-radix", "wider than the search's keys", "two words"]
)
@pytest.mark.parametrize("preset", PRESETS_LIST[:6], ids=lambda p: p.name)
@pytest.mark.slow
def test_the_native_engine_takes_over_with_every_kind_of_word(
    preset, words: str, monkeypatch, tmp_path
) -> None:
    """The native engine, taking over a search midway (the first levels by numpy), with
    its words as bit fields, as mixed-radix numbers, as one unsigned word where the
    search's own keys need two, or as two words, on one thread and two, its seen set in
    tables that split until the directory is full and then grow, with every parent link
    in a temporary file: the same states, transitions, levels and verdicts as numpy alone."""
    import model.check.keys as keys_module
    import model.check.native_source as source_module
    from model.check.keys import KeyCodec, WordCodec

    monkeypatch.setenv("FENCING_LAB_CACHE", str(tmp_path))
    monkeypatch.setattr(source_module, "FIRST_SLOTS", 8)
    monkeypatch.setattr(source_module, "SPLIT_BYTES", 64)  # a full first table splits
    monkeypatch.setattr(source_module, "DIRECTORY_BITS", 4)
    bounds = Bounds(3, 2, 5, 3, 1)
    plain = explore(preset.design, bounds, SearchOptions(expander=Expander.NUMPY, threads=1))
    if words != "bit fields":
        monkeypatch.setattr(keys_module, "UNSIGNED_BITS", 20)
    if words == "wider than the search's keys":
        monkeypatch.setattr(keys_module, "WORD_BITS", 20)
        monkeypatch.setattr(keys_module, "INT64_LIMIT", 2**20 - 1)
    if words == "two words":
        monkeypatch.setattr(keys_module, "WORD_LIMIT", 2**20 - 2)
        # As if the states needed 67 bits: tables start 3 bits deep, storing 64.
        monkeypatch.setattr(source_module, "first_depth", lambda words: 3)
    layout = System(preset.design, bounds).layout
    codec, native_words = KeyCodec.of(layout), WordCodec.of(layout)
    assert native_words is not None
    assert native_words.bit_fields is (words == "bit fields")
    assert codec.wide is (words == "wider than the search's keys")
    assert native_words.words == (2 if words == "two words" else 1)
    from model.check.native_search import NativeLevels

    expanded: list[int] = []
    tables: list[int] = []
    original = NativeLevels.expand

    def counted(self, level, *rest):  # type: ignore[no-untyped-def]
        expanded.append(len(level))
        found = original(self, level, *rest)
        tables.append(self.tables)
        return found

    monkeypatch.setattr(NativeLevels, "expand", counted)
    midway = replace(TINY, load_from=64, parallel_from=64, links_in_memory=0)
    for threads in (1, 2):
        options = SearchOptions(expander=Expander.NATIVE, threads=threads, tuning=midway)
        native = explore(preset.design, bounds, options)
        assert (native.states, native.transitions, native.level_sizes) == (
            plain.states,
            plain.transitions,
            plain.level_sizes,
        )
        assert native.verdicts == plain.verdicts
        # numpy expanded the levels below 64 states, the engine every one after the first
        # of 64 or more.
        first = next(i for i, size in enumerate(plain.level_sizes) if size >= 64)
        assert expanded == [size for size in plain.level_sizes[first:]]
        expanded.clear()
        assert max(tables) == 2**4  # split until the directory is full
        tables.clear()


def test_parent_links_read_back_from_their_file_trace_the_same_runs() -> None:
    """Links kept in a temporary file from the first state on give the counterexamples the
    links kept in memory give, on every path of the search."""
    design = PRESETS["lease-only"].design
    in_memory = explore(design, REFERENCE_BOUNDS, SearchOptions(expander=Expander.NUMPY))
    in_file = explore(
        design,
        REFERENCE_BOUNDS,
        SearchOptions(expander=Expander.NUMPY, tuning=Tuning(links_in_memory=0)),
    )
    assert any(verdict.violated for verdict in in_file.verdicts.values())
    assert in_file.verdicts == in_memory.verdicts
