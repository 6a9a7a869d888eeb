"""The Promela export against the real spin: same states, transitions + 1, same verdicts.

Every preset is exported at small bounds, compiled by spin and gcc, and searched
breadth-first by pan; its stored states equal the explorer's, its transitions are the
explorer's plus pan's entry into the loop, and the properties whose assertions fail are
exactly the ones the explorer finds violated, at the same shortest length. Without spin
these tests are skipped with that reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fencing.spin import check_with_spin, spin_available
from model.check.explorer import explore
from model.design import Bounds, Design
from model.expression import Expr
from model.formats.promela import promela_model
from model.layout import symbolic_view
from model.presets import PRESETS_LIST
from model.system import System
from model.terms import all_of, any_of, not_, select

SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=2)
needs_spin = pytest.mark.skipif(
    not spin_available(), reason="spin or gcc is not installed (.ci/run installs spin)"
)


def test_terms_build_expression_text_and_fold_constants() -> None:
    """The term helpers on Expr build Promela text, and constants still fold away."""
    now, hwm = Expr.variable("now"), Expr.variable("hwm")
    assert select(now >= hwm, now, hwm).text == "((now >= hwm) -> now : hwm)"
    assert all_of(now < 4, True, hwm == 0).text == "((now < 4) && (hwm == 0))"
    assert any_of(now < 4, False).text == "(now < 4)"
    assert not_(now < 4).text == "!(now < 4)"
    assert all_of(now < 4, 0 == 1) is False
    assert (now + 1).names == frozenset({"now"})
    with pytest.raises(TypeError, match="depends on the state"):
        bool(now < 4)


def test_one_valued_columns_are_constants_in_the_export() -> None:
    """Columns the design does not use are not declared: they are the constant 0."""
    design = Design(receiver="none")
    text = promela_model(design, SMALL).text
    layout = System(design, SMALL).layout
    view = symbolic_view(layout)
    assert view.hwm == 0 and "byte hwm;" not in text
    assert isinstance(view.now, Expr) and "byte now;" in text


def test_an_export_asserts_only_what_its_rules_can_violate() -> None:
    """Without read-modify-write no transition can break P5, so it has no assertion."""
    assert "P5" not in promela_model(Design(), SMALL).properties
    assert "P5" in promela_model(Design(workload="rmw"), SMALL).properties


@needs_spin
@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
def test_spin_agrees_with_the_explorer(preset, tmp_path: Path) -> None:
    """pan's states, transitions - 1, violated properties and shortest lengths equal ours."""
    ours = explore(preset.design, SMALL)
    spin = check_with_spin(promela_model(preset.design, SMALL).text, tmp_path, optimize=False)
    assert spin.states == ours.states
    assert spin.transitions == ours.transitions + 1
    shortest = {name: v.shortest for name, v in ours.verdicts.items() if v.violated}
    assert spin.shortest == shortest
