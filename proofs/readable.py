"""z3 formulas as short infix text with logic symbols, for invariants in reports."""

from __future__ import annotations

from typing import Final

import z3

_INFIX: Final = {
    z3.Z3_OP_LE: "≤",
    z3.Z3_OP_GE: "≥",
    z3.Z3_OP_LT: "<",
    z3.Z3_OP_GT: ">",
    z3.Z3_OP_EQ: "=",
    z3.Z3_OP_DISTINCT: "≠",
    z3.Z3_OP_ADD: "+",
    z3.Z3_OP_SUB: "-",
    z3.Z3_OP_MUL: "×",
    z3.Z3_OP_MOD: "mod",
}


def readable(expr: z3.ExprRef) -> str:
    """A formula as infix text: `(phase[1] = 1 ∧ holder = 1) ⇒ rv[1] = version`."""
    if z3.is_true(expr) or z3.is_false(expr):
        return str(expr).lower()
    if not z3.is_app(expr):  # a bound variable or a quantifier: z3's own text
        return str(expr)
    if z3.is_int_value(expr) or z3.is_const(expr):
        return str(expr)
    kids = [_operand(child) for child in expr.children()]
    kind = expr.decl().kind()
    if kind == z3.Z3_OP_AND:
        return " ∧ ".join(kids)
    if kind == z3.Z3_OP_OR:
        return " ∨ ".join(kids)
    if kind == z3.Z3_OP_NOT:
        inner = expr.children()[0]
        if z3.is_eq(inner):
            return " ≠ ".join(_operand(c) for c in inner.children())
        return f"¬{kids[0]}"
    if kind == z3.Z3_OP_IMPLIES:
        return f"{kids[0]} ⇒ {kids[1]}"
    if kind == z3.Z3_OP_ITE:
        return f"if {kids[0]} then {kids[1]} else {kids[2]}"
    if kind == z3.Z3_OP_EQ and z3.is_bool(expr.children()[0]):
        return f"{kids[0]} ⇔ {kids[1]}"
    if kind in _INFIX and len(kids) >= 2:
        return f" {_INFIX[kind]} ".join(kids)
    return f"{expr.decl().name()}({', '.join(kids)})"


def conjuncts(expr: z3.ExprRef) -> list[str]:
    """A formula split at its top-level conjunctions, each part as readable text."""
    if z3.is_app(expr) and z3.is_and(expr):
        return [line for child in expr.children() for line in conjuncts(child)]
    return [readable(expr)]


def _operand(expr: z3.ExprRef) -> str:
    """A sub-formula, parenthesised unless it is an atom or a comparison."""
    text = readable(expr)
    if not z3.is_app(expr):
        return text
    if z3.is_const(expr) or z3.is_int_value(expr) or not expr.children():
        return text
    comparisons = (z3.Z3_OP_LE, z3.Z3_OP_GE, z3.Z3_OP_LT, z3.Z3_OP_GT, z3.Z3_OP_DISTINCT)
    if expr.decl().kind() in comparisons:
        return text
    if z3.is_eq(expr) and not z3.is_bool(expr.children()[0]):
        return text
    return f"({text})"
