"""Backend-neutral term helpers: the rules use these instead of Python `if` on state values.

The same guard or effect then evaluates on Python ints (the step interpreter), on numpy
arrays (the explorer, a whole BFS frontier at once), on z3 terms (the prover) and on
expression text (`model.expression`: the Promela exporter, and the explorer's look at
which properties a rule can ever violate).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from model.expression import Expr, choice

Term = Any
"""An int, a numpy integer array or a z3 arithmetic term."""

Cond = Any
"""A bool, a numpy bool array or a z3 boolean term."""


def _is_z3(value: object) -> bool:
    """True for z3 expressions, recognised without importing z3 on the hot path."""
    return type(value).__module__.startswith("z3")


def _is_constant(value: object) -> bool:
    """True for plain Python or numpy scalar booleans."""
    return isinstance(value, bool | np.bool_)


def select(cond: Cond, if_true: Term, if_false: Term) -> Term:
    """`if_true` where `cond` holds, else `if_false`, element-wise for arrays."""
    if _is_constant(cond):
        return if_true if cond else if_false
    if type(if_true) is int and type(if_false) is int and if_true == if_false:
        return if_true
    if _is_z3(cond) or _is_z3(if_true) or _is_z3(if_false):
        import z3

        return z3.If(cond, if_true, if_false)
    if isinstance(cond, Expr) or isinstance(if_true, Expr) or isinstance(if_false, Expr):
        return choice(cond, if_true, if_false)
    return np.where(cond, if_true, if_false)


def all_of(*conds: Cond) -> Cond:
    """Conjunction that folds constant operands away."""
    rest = []
    for cond in conds:
        if _is_constant(cond):
            if not cond:
                return False
        else:
            rest.append(cond)
    if not rest:
        return True
    if len(rest) == 1:
        return rest[0]
    if any(_is_z3(c) for c in rest):
        import z3

        return z3.And(*rest)
    result = rest[0]
    for cond in rest[1:]:
        result = result & cond
    return result


def any_of(*conds: Cond) -> Cond:
    """Disjunction that folds constant operands away."""
    rest = []
    for cond in conds:
        if _is_constant(cond):
            if cond:
                return True
        else:
            rest.append(cond)
    if not rest:
        return False
    if len(rest) == 1:
        return rest[0]
    if any(_is_z3(c) for c in rest):
        import z3

        return z3.Or(*rest)
    result = rest[0]
    for cond in rest[1:]:
        result = result | cond
    return result


def not_(cond: Cond) -> Cond:
    """Negation for every backend."""
    if _is_constant(cond):
        return not cond
    if _is_z3(cond):
        import z3

        return z3.Not(cond)
    return ~cond


def larger(a: Term, b: Term) -> Term:
    """The larger of two terms, written as a select so z3 and numpy both accept it."""
    return select(a >= b, a, b)


def below(value: Term, limit: int | None) -> Cond:
    """`value < limit`, or always true when the limit is lifted (unbounded proofs)."""
    if limit is None:
        return True
    return value < limit
