"""A TLA+ module of one design and bounds, written from the rules, for TLC's simulation mode.

The benchmark compares the random walk's speed with TLC's `-simulate` on the same
transition system: the same state variables (every column with more than one value), one
TLA+ action per rule (its guard, its effect, every other variable unchanged), and the same
properties checked on every step. TLA+ has no transition invariants, so each action also
sets `broken` to the properties the step breaks (as bits, from the state before it) and
the invariant `NothingBroken` asks that it be 0. The text is the rules' own: their Python
form (`model.expression`) is parsed and written again in TLA+ syntax, so nothing here
restates a rule.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from model.expression import Expr
from model.layout import Vars
from model.system import System

_BINARY = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Mod: "%",
    ast.BitAnd: "/\\",
    ast.BitOr: "\\/",
}
_COMPARE = {ast.Eq: "=", ast.NotEq: "#", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


def variable_name(column: str) -> str:
    """A TLA+ identifier for a column: `tok[1]` becomes `tok_1`."""
    return column.replace("[", "_").replace("]", "")


def tla(node: ast.expr) -> str:
    """TLA+ text of a Python expression written by `model.expression`."""
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return f"({tla(node.left)} {_BINARY[type(node.op)]} {tla(node.right)})"
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        operator = _COMPARE[type(node.ops[0])]
        return f"({tla(node.left)} {operator} {tla(node.comparators[0])})"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return f"~({tla(node.operand)})"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return f"(-{tla(node.operand)})"
    if isinstance(node, ast.IfExp):
        return f"(IF {tla(node.test)} THEN {tla(node.body)} ELSE {tla(node.orelse)})"
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return "TRUE" if node.value else "FALSE"
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return str(node.value)
    if isinstance(node, ast.Name):
        return node.id
    raise ValueError(f"no TLA+ form for {ast.dump(node)}")


def term(value: object) -> str:
    """TLA+ text of a rule's term (an expression, or a constant the helpers folded)."""
    if isinstance(value, Expr):
        return tla(ast.parse(value.python, mode="eval").body)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return str(int(value))  # type: ignore[call-overload]


@dataclass(frozen=True)
class TlaModel:
    """A module's text, its configuration's text, and its name."""

    name: str
    module: str
    config: str


def tla_model(system: System, name: str = "FencingWalk") -> TlaModel:
    """The design within its bounds as a TLA+ module and a TLC configuration."""
    layout = system.layout
    used = [(i, column) for i, column in enumerate(layout.columns) if layout.sizes[i] > 1]
    names = {column: variable_name(column) for _, column in used}
    view = Vars(
        layout,
        [
            Expr.variable(column, names[column]) if size > 1 else 0
            for column, size in zip(layout.columns, layout.sizes, strict=True)
        ],
    )
    every = [*names.values(), "broken"]
    lines = [
        f"---- MODULE {name} ----",
        f"\\* {system.design.label()}, {system.bounds.short()}",
        "EXTENDS Integers",
        f"VARIABLES {', '.join(every)}",
        f"vars == <<{', '.join(every)}>>",
        "Init == " + " /\\ ".join(f"{variable} = 0" for variable in every),
    ]
    actions = []
    for number, rule in enumerate(system.rules):
        guard = rule.guard(view)
        if guard is False:
            continue
        changes = {
            names[column]: term(value)
            for column, value in rule.effect(view).items()
            if column in names
        }
        bits = [
            f"(IF {term(condition)} THEN {1 << index} ELSE 0)"
            for index, prop in enumerate(system.properties)
            if (condition := prop.violated(view, rule)) is not False
        ]
        kept = [variable for variable in names.values() if variable not in changes]
        parts = [
            term(guard),
            *(f"{variable}' = {value}" for variable, value in changes.items()),
            f"broken' = {' + '.join(bits) or '0'}",
        ]
        if kept:
            parts.append(f"UNCHANGED <<{', '.join(kept)}>>")
        actions.append(f"A{number}")
        lines.append(f"\\* {rule.action.label()}")
        lines.append(f"A{number} == " + "\n    /\\ ".join(parts))
    lines += [
        "Next == " + " \\/ ".join(actions),
        "Spec == Init /\\ [][Next]_vars",
        "NothingBroken == broken = 0",
        "====",
    ]
    config = "INIT Init\nNEXT Next\nINVARIANT NothingBroken\n"
    return TlaModel(name, "\n".join(lines) + "\n", config)
