"""The term helpers the rules are written with: constants fold away on every backend, and
what is left is the backend's own connective (z3's And, Or, If; numpy's element-wise ops)."""

from __future__ import annotations

import numpy as np
import pytest
import z3

from model.expression import Expr
from model.terms import all_of, any_of, not_, select


def equivalent(a: z3.ExprRef, b: z3.ExprRef) -> bool:
    """Whether two z3 terms are equal in every model."""
    solver = z3.Solver()
    solver.add(a != b)
    return solver.check() == z3.unsat


@pytest.mark.parametrize(
    "operand",
    [z3.Bool("c"), np.array([True, False]), Expr.variable("c")],
    ids=["z3", "numpy", "expression"],
)
def test_constants_fold_away_on_every_backend(operand: object) -> None:
    """A constant decides a connective or drops out, leaving the other operand itself."""
    assert all_of(True, operand) is operand
    assert any_of(False, operand) is operand
    assert all_of(False, operand) is False
    assert any_of(True, operand) is True
    assert select(True, 1, operand) == 1
    assert all_of() is True and any_of() is False
    assert select(operand, 3, 3) == 3 and type(select(operand, 3, 3)) is int


def test_z3_operands_give_z3_connectives() -> None:
    """With z3 terms left after folding, the result is the z3 term of the same meaning."""
    a, b, c = z3.Bools("a b c")
    x, y = z3.Ints("x y")
    assert equivalent(all_of(a, True, b, c), z3.And(a, b, c))
    assert equivalent(any_of(a, False, b, c), z3.Or(a, b, c))
    assert equivalent(not_(a), z3.Not(a))
    assert equivalent(select(a, x, y), z3.If(a, x, y))
    assert equivalent(select(a, 1, y), z3.If(a, 1, y))
    assert equivalent(select(a, x, 0), z3.If(a, x, 0))


def test_numpy_operands_work_element_by_element() -> None:
    """On a frontier of states each connective applies to each state on its own."""
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    assert all_of(a, b).tolist() == [True, False, False, False]
    assert any_of(a, b).tolist() == [True, True, True, False]
    assert not_(a).tolist() == [False, False, True, True]
    assert select(a, np.array([1, 2, 3, 4]), 0).tolist() == [1, 2, 0, 0]
