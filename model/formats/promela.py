"""Promela export: any design within bounds as a spin model, generated from the rules.

Every guard, effect and property condition is the rules' own code evaluated on
`model.expression.Expr` variables, so the text spin checks is the model the explorer
checks (one model, many engines). Each action instance becomes one `d_step` of a single
looping process: the guard, one `assert` per property it could break (the condition the
explorer evaluates, negated), then the effect through hidden temporaries, because an
effect's new values are all computed from the old state (they return to 0 within the
step, so they add no states). Variables whose domain has one
value are constants and are not declared, exactly as they add no states to the explorer.

Spin and the explorer count the same states; spin's transition count is the explorer's
plus one (pan also counts its entry into the loop from the initial state).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from model.design import Bounds, Design
from model.expression import Expr
from model.layout import PER_WORKER, Layout, Vars, symbolic_view
from model.properties import Property
from model.rules import Rule
from model.system import System
from model.terms import Term

MARKER: Final = "property_"
"""Prefix of a constant-0 variable per property: it names the property in spin's messages."""


def _wrapped(value: Term) -> str:
    """Expression text in parentheses (for a negation)."""
    text = _text(value)
    return text if text.startswith("(") else f"({text})"


def _text(value: Term) -> str:
    """Expression text of a term the rules produced (an Expr or a constant)."""
    if isinstance(value, Expr):
        return value.text
    return str(int(value))


@dataclass(frozen=True)
class PromelaModel:
    """The text of one exported model with what it contains."""

    design: Design
    bounds: Bounds
    text: str
    properties: tuple[str, ...]
    """Properties with at least one assertion (the others no transition can violate)."""


def _declarations(layout: Layout) -> list[str]:
    """Global variables: one byte per used scalar, one byte array per used family."""
    lines = []
    families: dict[str, int] = {}
    for column, size in zip(layout.columns, layout.sizes, strict=True):
        if size == 1:
            continue
        if size > 256:
            raise ValueError(f"{column} has {size} values, more than a Promela byte holds")
        if "[" in column:
            family, index = column[:-1].split("[")
            families[family] = max(families.get(family, 0), int(index))
        else:
            lines.append(f"byte {column};  /* {_meaning(column)} */")
    for family in (*PER_WORKER, "used"):
        if family in families:
            lines.append(
                f"byte {family}[{families[family] + 1}];  /* {_meaning(family)} (index 0 unused) */"
            )
    return lines


def _meaning(name: str) -> str:
    """The variable's meaning from the layout's table, for a comment."""
    from model.layout import MEANING

    return MEANING.get(name, name)


def _effect_lines(changes: dict[str, Term], layout: Layout) -> tuple[list[str], int]:
    """Assignments of an effect, through temporaries where a new value reads a changed one."""
    assigned = {
        column: value for column, value in changes.items() if layout.sizes[layout.index[column]] > 1
    }
    lines, temporaries = [], 0
    staged = []
    for column, value in assigned.items():
        reads_changed = isinstance(value, Expr) and bool(value.names & (set(assigned) - {column}))
        if reads_changed:
            lines.append(f"t{temporaries} = {_text(value)};")
            staged.append(f"{column} = t{temporaries}; t{temporaries} = 0;")
            temporaries += 1
        else:
            staged.append(f"{column} = {_text(value)};")
    return lines + staged, temporaries


def _rule_block(
    rule: Rule, view: Vars, properties: tuple[Property, ...], layout: Layout
) -> tuple[list[str], int, set[str]]:
    """One `d_step` for an action instance, its temporaries and the properties it asserts."""
    guard = rule.guard(view)
    if guard is False:
        return [], 0, set()
    body = [f"/* {rule.action.label()} by {rule.actor} */"]
    asserted = set()
    for prop in properties:
        broken = prop.violated(view, rule)
        if broken is False:
            continue
        asserted.add(prop.name)
        body.append(f"assert({MARKER}{prop.name} || !{_wrapped(broken)});")
    effect, temporaries = _effect_lines(rule.effect(view), layout)
    body += effect
    lines = [f":: d_step {{ {_text(guard)} ->"]
    lines += [f"     {line}" for line in body]
    lines.append("   }")
    return lines, temporaries, asserted


def promela_model(design: Design, bounds: Bounds) -> PromelaModel:
    """The Promela text of a design within bounds, properties as assertions."""
    system = System(design, bounds)
    layout = system.layout
    view = symbolic_view(layout)
    blocks: list[str] = []
    temporaries = 0
    asserted: set[str] = set()
    for rule in system.rules:
        lines, used, names = _rule_block(rule, view, system.properties, layout)
        blocks += lines
        temporaries = max(temporaries, used)
        asserted |= names
    header = [
        f"/* Fencing Lab model: {design.label()}, bounds {bounds.short()}.",
        "   Generated from the model's rules; every variable starts at 0.",
        "   Properties (an assert fails when a transition violates one):",
        *(f"     {p.name} {p.title}: {p.statement}" for p in system.properties),
        "*/",
        "",
        *(
            f"bit {MARKER}{p.name};  /* always 0: names {p.name} in spin's messages */"
            for p in system.properties
        ),
        "",
        *_declarations(layout),
    ]
    if temporaries:
        header.append(
            "byte " + ", ".join(f"t{i}" for i in range(temporaries)) + ";"
            "  /* new values within one step; back to 0 after it, so they add no states */"
        )
    process = [
        "",
        "active proctype system()",
        "{",
        "end:",
        "  do",
        *(f"  {line}" for line in blocks),
        "  od",
        "}",
        "",
    ]
    listed = tuple(p.name for p in system.properties if p.name in asserted)
    return PromelaModel(design, bounds, "\n".join(header + process), listed)
