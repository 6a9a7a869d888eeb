"""Small values of the model read and refused exactly: actions, states and claims.

Each refusal is checked by its message, since a message is what a user sees.
"""

from __future__ import annotations

import pytest

from model.claims import Claim, claims_at
from model.design import REFERENCE_BOUNDS, Bounds, Design, DesignError
from model.layout import Layout
from model.rules import Action
from model.system import System
from model.verdicts import Status


def test_actions_round_trip_with_their_chosen_value() -> None:
    chosen = Action("Acquire", 2, 3)
    assert chosen.to_dict() == {"name": "Acquire", "worker": 2, "value": 3}
    assert Action.from_dict(chosen.to_dict()) == chosen
    assert Action("Tick").to_dict() == {"name": "Tick"}
    assert chosen.label() == "Acquire(W2, token 3)"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (["Tick"], "an action must be an object, not list"),
        ({"name": "Tick", "when": 1}, "action has unknown field 'when'"),
        ({"name": "Tick", "a": 1, "b": 2}, "action has unknown field 'a'"),
        ({"name": "Jump"}, "unknown action 'Jump': known actions are Tick, Acquire, Send"),
        ({"name": "Send", "worker": True}, "action worker must be a non-negative whole number"),
        ({"name": "Send", "worker": -1}, "action worker must be a non-negative whole number"),
        ({"name": "Acquire", "worker": 1, "value": "3"}, "action value must be a non-negative"),
        ({"name": "Acquire", "worker": 1, "value": False}, "action value must be a non-negative"),
    ],
)
def test_bad_actions_are_refused_by_name(data: object, message: str) -> None:
    with pytest.raises(DesignError) as refused:
        Action.from_dict(data)
    assert message in str(refused.value)


def test_a_state_outside_its_domain_is_refused_at_the_exact_edge() -> None:
    layout = Layout.of(Design(), Bounds())
    good = [0] * len(layout.columns)
    layout.check_state(good)
    edge = list(good)
    edge[layout.index["holder"]] = layout.sizes[layout.index["holder"]] - 1
    layout.check_state(edge)
    edge[layout.index["holder"]] += 1
    with pytest.raises(DesignError, match=r"holder = 3 is outside its domain 0\.\.2"):
        layout.check_state(edge)
    with pytest.raises(DesignError, match=f"a state has {len(good)} values, not 3"):
        layout.check_state([0, 0, 0])
    assert set(layout.used_columns()) <= set(layout.columns)
    assert "mark" not in layout.used_columns() and "now" in layout.used_columns()


def test_claims_are_well_formed_and_speak_json() -> None:
    [p2, p4] = claims_at(REFERENCE_BOUNDS, P2=5, P4="holds")
    assert p2.bounds == p4.bounds == REFERENCE_BOUNDS
    assert p2.to_dict()["status"] == "violated" and p4.to_dict()["status"] == "holds"
    assert p4.to_dict() == {
        "property": "P4",
        "status": "holds",
        "holds": True,
        "shortest": None,
        "bounds": REFERENCE_BOUNDS.to_dict(),
    }
    [p6] = claims_at(REFERENCE_BOUNDS, P6="vacuous")
    assert p6.to_dict(Design())["never_exercised"] == "nothing in this design ever crashes"
    assert p6.to_dict()["status"] == "vacuous" and "never_exercised" not in p6.to_dict()
    with pytest.raises(ValueError, match=r"a claim is about P1\.\.P6"):
        Claim("P9", Status.HOLDS, REFERENCE_BOUNDS)
    with pytest.raises(ValueError, match=r"a claim is about P1\.\.P6"):
        Claim("P1", Status.UNKNOWN, REFERENCE_BOUNDS)
    with pytest.raises(ValueError, match="only one, has a shortest length"):
        Claim("P1", Status.HOLDS, REFERENCE_BOUNDS, 4)
    with pytest.raises(ValueError, match="only one, has a shortest length"):
        Claim("P1", Status.VIOLATED, REFERENCE_BOUNDS)


def test_an_action_the_design_lacks_is_refused_by_name() -> None:
    """Asking an atomic receiver's system for a Check names the action and says why."""
    system = System(Design(), Bounds())
    with pytest.raises(DesignError) as error:
        system.rule_for(Action("Check", 1))
    assert str(error.value) == "Check(W1) is not an action of this design and bounds"
