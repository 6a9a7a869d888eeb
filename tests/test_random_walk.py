"""The compiled random walk against the step interpreter (`model.check.compiled_walk`,
`model.check.random_walk`, `model.system`).

At every state that random runs reach, on every preset at the reference bounds and on a
few designs at larger bounds (keys of one word in bit fields, one mixed-radix word, two
words), the compiled rules must enable the same rules as `System.enabled`, put each in the
same group as `group_of`, lead to the same next state as `System.apply`, and break the same
properties as `System.violations`. Whole walks must then agree too: the same runs, the
same shortest violating run, the same steps and the same distinct states counted.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from model.check.compiled_walk import (
    GROUP_NUMBER,
    CompiledWalker,
    WalkModule,
    load_walk,
    walk_module_source,
)
from model.check.keys import KeyCodec
from model.check.random_search import walker_for
from model.check.random_walk import (
    GROUPS,
    InterpretedWalker,
    below,
    group_of,
    mix,
    weights_in_order,
)
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.presets import PRESETS, PRESETS_LIST
from model.system import State, System

LARGER: list[tuple[str, Design, Bounds]] = [
    ("rmw-lease-only W3", PRESETS["rmw-lease-only"].design, Bounds(3, 3, 10, 5, 2)),
    ("random-token W4", PRESETS["random-token"].design, Bounds(4, 3, 12, 6, 2)),
    ("keepalive-lease W4", PRESETS["keepalive-lease"].design, Bounds(4, 3, 12, 6, 2)),
]
"""Designs at larger bounds: a mixed-radix key, another, and a key of two words."""

CASES = [(preset.name, preset.design, REFERENCE_BOUNDS) for preset in PRESETS_LIST] + LARGER

RUNS = 25
"""Random runs whose every state is checked, per case."""


def test_the_larger_cases_cover_every_kind_of_key() -> None:
    """One-word bit fields (the presets), one mixed-radix word, and several words."""
    codecs = [KeyCodec.of(System(design, bounds).layout) for _, design, bounds in CASES]
    assert {(codec.words > 1, codec.bit_fields) for codec in codecs} == {
        (False, True),
        (False, False),
        (True, True),
    }


def compiled_view(module: WalkModule, system: System, state: State) -> tuple[list[bool], list[int]]:
    """The compiled rules' guards and groups at a state."""
    enabled = np.zeros(len(system.rules), dtype=np.bool_)
    groups = np.zeros(len(system.rules), dtype=np.int64)
    module.enabled(np.array(state, dtype=np.int64), enabled, groups)
    return [bool(flag) for flag in enabled], [int(group) for group in groups]


def compiled_step(
    module: WalkModule, system: System, state: State, rule: int
) -> tuple[State, list[str]]:
    """The compiled rules' next state and broken properties for one rule."""
    values = np.array(state, dtype=np.int64)
    bits = int(module.violations(values, rule))
    module.apply(values, rule)
    names = [prop.name for number, prop in enumerate(system.properties) if bits >> number & 1]
    return tuple(int(value) for value in values), names


def check_state(module: WalkModule, system: System, state: State) -> None:
    """Every rule at one state: the compiled rules say what the step interpreter says."""
    enabled, groups = compiled_view(module, system, state)
    columns = system.layout.columns
    assert enabled == [system.is_enabled(state, rule) for rule in system.rules]
    for number, rule in enumerate(system.rules):
        if not enabled[number]:
            continue
        after, broken = compiled_step(module, system, state, number)
        assert after == system.apply(state, rule), rule.action.label()
        assert tuple(broken) == system.violations(state, rule), rule.action.label()
        changed = [c for c, a, b in zip(columns, state, after, strict=True) if a != b]
        assert GROUPS[groups[number]] == group_of(rule, changed), rule.action.label()


@pytest.mark.slow
@pytest.mark.parametrize(("name", "design", "bounds"), CASES, ids=[case[0] for case in CASES])
def test_the_compiled_rules_step_as_the_interpreter_at_every_state_walked(
    name: str, design: Design, bounds: Bounds
) -> None:
    system = System(design, bounds)
    module = load_walk(system)
    walker = InterpretedWalker(system, weights_in_order())
    met: set[State] = set()
    kinds_enabled: set[str] = set()
    for run in range(RUNS):
        state = system.initial()
        for number in walker.path(state, 7, run, 10**6, target=0):
            if state not in met:
                met.add(state)
                check_state(module, system, state)
                kinds_enabled |= {r.action.name for r in system.enabled(state)}
            state = system.apply(state, system.rules[number])
    assert len(met) > RUNS, "the runs met too few states to say much"
    assert {"Tick", "Acquire", "Send"} <= kinds_enabled and kinds_enabled & {"Deliver", "Check"}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "design", "bounds"), CASES, ids=[case[0] for case in CASES])
def test_compiled_walks_are_the_interpreters_walks(
    name: str, design: Design, bounds: Bounds
) -> None:
    """The same summaries (shortest violating run, steps, longest), the same runs step by
    step, the same distinct states counted, and the same replays."""
    system = System(design, bounds)
    weights = weights_in_order()
    compiled = CompiledWalker(system, weights, limit=10**6)
    interpreted = InterpretedWalker(system, weights)
    start = system.initial()
    for target in range(len(system.properties)):
        base = 1000 + target
        assert compiled.runs(start, base, 0, RUNS, 60, target) == interpreted.runs(
            start, base, 0, RUNS, 60, target
        )
        for run in range(0, RUNS, 6):
            path = compiled.path(start, base, run, 60, target)
            assert path == interpreted.path(start, base, run, 60, target)
            for candidate in (path, path[1:], path[::-1], [*path, *path]):
                assert compiled.first_violation(start, candidate, target) == (
                    interpreted.first_violation(start, candidate, target)
                )
    assert compiled.states == interpreted.states > RUNS


def test_the_generator_is_splitmix64() -> None:
    """The walk's numbers are splitmix64's: its published first output for seed 0, and
    `below` stays below its bound."""
    assert mix(0x9E3779B97F4A7C15) == 0xE220A8397B1DCDAF
    assert {below(mix(n), 3) for n in range(200)} == {0, 1, 2}
    assert below(2**64 - 1, 7) == 6


def test_every_group_has_a_number_and_the_walk_runs_from_any_start() -> None:
    """The compiled groups are `GROUPS` in order; a walk started partway agrees too."""
    assert list(GROUP_NUMBER) == list(GROUPS)
    system = System(PRESETS["volatile-hwm"].design, REFERENCE_BOUNDS)
    weights = weights_in_order()
    compiled, interpreted = (
        CompiledWalker(system, weights, 10**6),
        InterpretedWalker(system, weights),
    )
    middle = system.initial()
    for number in interpreted.path(middle, 3, 0, 6, target=0):
        middle = system.apply(middle, system.rules[number])
    assert middle != system.initial()
    for target in range(3):
        found = compiled.runs(middle, 11, 0, 40, 30, target)
        assert found == interpreted.runs(middle, 11, 0, 40, 30, target)


def test_a_state_count_stops_at_its_limit() -> None:
    system = System(PRESETS["lease-only"].design, REFERENCE_BOUNDS)
    weights = weights_in_order()
    compiled, interpreted = (
        CompiledWalker(system, weights, 50),
        InterpretedWalker(system, weights, 50),
    )
    compiled.runs(system.initial(), 5, 0, 40, 30, 0)
    interpreted.runs(system.initial(), 5, 0, 40, 30, 0)
    assert compiled.states == interpreted.states == 50


def test_the_module_text_is_the_rules_text() -> None:
    """One function per part, a branch per rule, the guards written from the rules."""
    system = System(Design(), REFERENCE_BOUNDS)
    source = walk_module_source(system)
    for part in ("enabled", "violations", "apply", "pack", "walk_runs", "replay"):
        assert f"\ndef {part}(" in source
    for number, rule in enumerate(system.rules):
        assert f"en[{number}] = " in source and f"# {rule.action.label()}" in source
    assert walk_module_source(system) == source, "the text is the same every time"


def test_an_unavailable_compiler_leaves_the_interpreter_walking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import model.check.compiled_walk

    def refuse(*_: object) -> None:
        raise RuntimeError("no compiler here")

    monkeypatch.setattr(model.check.compiled_walk, "load_walk", refuse)
    system = System(Design(), REFERENCE_BOUNDS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        walker = walker_for(system)
    assert walker.engine == "interpreted"
    assert any("no compiler here" in str(w.message) for w in caught)
