"""The z3 encoding is the model's own rules: one-step successors agree with System."""

from __future__ import annotations

import random

import pytest
import z3

from model.design import Bounds, Design
from model.presets import PRESETS
from model.rules import Action, Changes, Rule, RuleBuilder
from model.system import State, System
from proofs.encoding import Encoding, solver

SMALL = Bounds(workers=2, lease=2, horizon=3, grants=2, writes=2)
SAMPLES = 6


def reachable(system: System) -> list[State]:
    """Every reachable state, by a plain BFS over the step interpreter."""
    seen = {system.initial()}
    frontier = [system.initial()]
    while frontier:
        nxt = []
        for state in frontier:
            for rule in system.enabled(state):
                after = system.apply(state, rule)
                if after not in seen:
                    seen.add(after)
                    nxt.append(after)
        frontier = nxt
    return sorted(seen)


def z3_successors(encoding: Encoding, state: State) -> set[tuple[Action, State]]:
    """All (action, next state) pairs z3 allows from a state, by blocking each model found."""
    pre, post = encoding.state(0), encoding.state(1)
    check = solver()
    check.add(encoding.transition(pre, post), encoding.equals(pre, state))
    found = set()
    while check.check() == z3.sat:
        model = check.model()
        found.add((encoding.action(model, pre), encoding.concrete(model, post)))
        same = [v == model.eval(v, True) for v in (pre.act, *post.values)]
        check.add(z3.Not(z3.And(same)))
    return found


def interpreter_successors(system: System, state: State) -> set[tuple[Action, State]]:
    """The same pairs from System.enabled and System.apply."""
    return {(rule.action, system.apply(state, rule)) for rule in system.enabled(state)}


def sample(system: System, seed: int) -> list[State]:
    """A fixed random sample of reachable states, the initial state included."""
    states = reachable(system)
    return [system.initial(), *random.Random(seed).sample(states, min(SAMPLES, len(states)))]


@pytest.mark.parametrize("bitvectors", [False, True])
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_successors_match_the_step_interpreter(name: str, bitvectors: bool) -> None:
    system = System(PRESETS[name].design, SMALL)
    encoding = Encoding(PRESETS[name].design, SMALL, bitvectors=bitvectors)
    for state in sample(system, seed=len(name)):
        assert z3_successors(encoding, state) == interpreter_successors(system, state), state


def test_a_changed_rule_changes_both_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Send counting two writes instead of one shows up in System and in z3 alike."""
    design = Design()
    state = System(design, SMALL).initial()
    before = System(design, SMALL)
    path = [Action("Acquire", 1), Action("Send", 1)]
    for action in path[:-1]:
        state = before.apply(state, before.rule_for(action))
    original = RuleBuilder.send

    def greedy_send(self: RuleBuilder, w: int) -> Rule:
        rule = original(self, w)

        def effect(s: object) -> Changes:
            changes = dict(rule.effect(s))  # type: ignore[arg-type]
            changes[f"sent[{w}]"] = changes[f"sent[{w}]"] + 1
            return changes

        return Rule(rule.action, rule.actor, rule.guard, effect)

    monkeypatch.setattr(RuleBuilder, "send", greedy_send)
    after = System(design, SMALL)
    encoding = Encoding(design, SMALL)
    changed = interpreter_successors(after, state)
    assert changed != interpreter_successors(before, state)
    assert z3_successors(encoding, state) == changed
    sent = after.layout.index["sent[1]"]
    assert any(a.name == "Send" and s[sent] == 2 for a, s in changed)


def test_unbounded_encoding_lifts_only_time_and_grant_columns() -> None:
    encoding = Encoding(Design(), SMALL, unbounded=True)
    lifted = encoding.unbounded_columns
    assert {"now", "expires", "grants", "issued", "hwm", "last", "tok[1]", "gid[2]"} <= lifted
    assert not {"holder", "sent[1]", "pending[2]"} & lifted
