"""The prover's report made readable: one row per property, invariants as formulas in words.

`proofs.report.prove(design, bounds)` returns a report with, per property, a status
(`proved`, `violated`, `unknown`), the method, the shortest violation, the invariant that
closed an induction proof, a counterexample to induction, a reason, and BMC counterexamples
as action lists. `rows_of` reads those fields by name (the report is another module's
object), and turns z3 formulas into text, so the rows are plain picklable data the page can
cache. Nothing here imports Streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import z3

from model.properties import BY_NAME, PROPERTY_NAMES
from model.rules import Action

PROVED: Final = "proved"
VIOLATED: Final = "violated"
UNKNOWN: Final = "unknown"
STATUS_WORDS: Final = {
    PROVED: "✔ proved",
    VIOLATED: "✘ violated",
    UNKNOWN: "? unknown",
}
CONTAINERS: Final = ("properties", "results", "verdicts", "by_property", "obligations")
"""Names under which a report may keep its per-property results."""

INFIX: Final = {
    "<=": "≤",
    ">=": "≥",
    "<": "<",
    ">": ">",
    "=": "=",
    "+": "+",
    "-": "−",
    "*": "×",
    "div": "div",
    "mod": "mod",
}


@dataclass(frozen=True)
class ProofRow:
    """One property's proof outcome, as text and actions only (cacheable, no z3 objects)."""

    prop: str
    title: str
    status: str
    method: str
    shortest: int | None
    invariant: tuple[str, ...]
    cti: str
    reason: str
    actions: tuple[Action, ...]

    @property
    def status_word(self) -> str:
        """The status with its glyph, e.g. `✔ proved`."""
        return STATUS_WORDS.get(self.status, f"? {self.status}")


def _field(item: Any, *names: str) -> Any:
    """The first of the named attributes (or mapping keys) the item has, else None."""
    for name in names:
        if isinstance(item, Mapping) and name in item:
            return item[name]
        if hasattr(item, name):
            return getattr(item, name)
    return None


def _results(report: Any) -> list[tuple[str, Any]]:
    """(property name, result) pairs of a report, in P1..P5 order."""
    container = report if isinstance(report, Mapping) else None
    for name in CONTAINERS:
        found = _field(report, name)
        if found is not None:
            container = found
            break
    pairs: list[tuple[str, Any]] = []
    if isinstance(container, Mapping):
        pairs = [(str(k), v) for k, v in container.items()]
    elif isinstance(container, Sequence) and not isinstance(container, str):
        pairs = [(str(_field(r, "prop", "name", "property") or ""), r) for r in container]
    order = {name: i for i, name in enumerate(PROPERTY_NAMES)}
    return sorted((p for p in pairs if p[0] in order), key=lambda pair: order[pair[0]])


def _status(value: Any) -> str:
    """A result's status as one of proved / violated / unknown."""
    text = str(getattr(value, "value", value) or "").lower()
    if text in (PROVED, "holds", "proven", "valid"):
        return PROVED
    if text.startswith("violat") or text in ("sat", "counterexample"):
        return VIOLATED
    return UNKNOWN


def _actions(value: Any) -> tuple[Action, ...]:
    """A counterexample as actions (from a list of actions, action dicts, or a trace)."""
    if value is None:
        return ()
    steps = _field(value, "actions")
    if steps is not None and not isinstance(value, Sequence):
        value = steps
    found = []
    for item in value:
        if isinstance(item, Action):
            found.append(item)
        elif isinstance(item, Mapping):
            found.append(Action.from_dict(dict(item)))
    return tuple(found)


def rows_of(report: Any) -> tuple[ProofRow, ...]:
    """Every property of a report as a row of text and actions."""
    rows = []
    for name, result in _results(report):
        counterexample = _field(result, "actions", "counterexample", "bmc_actions", "trace")
        rows.append(
            ProofRow(
                prop=name,
                title=BY_NAME[name].title,
                status=_status(_field(result, "status", "verdict")),
                method=str(_field(result, "method") or ""),
                shortest=_as_int(_field(result, "shortest", "length")),
                invariant=invariant_lines(_field(result, "invariant", "strengthening")),
                cti=cti_text(_field(result, "cti", "induction_counterexample", "step_cex")),
                reason=str(_field(result, "reason", "note") or ""),
                actions=_actions(counterexample),
            )
        )
    return tuple(rows)


def _as_int(value: Any) -> int | None:
    """A whole number or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# ----- formulas in words ------------------------------------------------------------------------


def readable(expr: Any) -> str:
    """A z3 formula as infix text with logic symbols: `tok[1] ≤ issued ∧ hwm ≤ issued`."""
    if not isinstance(expr, z3.ExprRef):
        return str(expr)
    if z3.is_int_value(expr):
        return str(expr.as_long())
    if z3.is_true(expr):
        return "true"
    if z3.is_false(expr):
        return "false"
    if z3.is_const(expr):
        return str(expr)
    kids = [readable(child) for child in expr.children()]
    if z3.is_and(expr):
        return "(" + " ∧ ".join(kids) + ")"
    if z3.is_or(expr):
        return "(" + " ∨ ".join(kids) + ")"
    if z3.is_not(expr):
        inner = expr.children()[0]
        if z3.is_eq(inner):
            left, right = (readable(c) for c in inner.children())
            return f"{left} ≠ {right}"
        return f"¬{kids[0]}"
    if z3.is_implies(expr):
        return f"({kids[0]} ⇒ {kids[1]})"
    if z3.is_app_of(expr, z3.Z3_OP_ITE):
        return f"(if {kids[0]} then {kids[1]} else {kids[2]})"
    if z3.is_app_of(expr, z3.Z3_OP_DISTINCT):
        return " ≠ ".join(kids)
    name = expr.decl().name()
    if name in INFIX and len(kids) >= 2:
        joined = f" {INFIX[name]} ".join(kids)
        return joined if name in ("<=", ">=", "<", ">", "=") else f"({joined})"
    if name == "-" and len(kids) == 1:
        return f"−{kids[0]}"
    return f"{name}({', '.join(kids)})"


def invariant_lines(invariant: Any) -> tuple[str, ...]:
    """An invariant as one readable conjunct per line (a z3 formula, a list, or text)."""
    if isinstance(invariant, z3.ExprRef):
        if z3.is_and(invariant):
            return tuple(_strip(readable(c)) for c in invariant.children())
        return (_strip(readable(invariant)),)
    if invariant is None:
        return ()
    if isinstance(invariant, str):
        return (invariant,) if invariant else ()
    if isinstance(invariant, Sequence):
        return tuple(line for item in invariant for line in invariant_lines(item))
    return (str(invariant),)


def _strip(text: str) -> str:
    """Drop one pair of outer parentheses from a line."""
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


def cti_text(cti: Any) -> str:
    """A counterexample to induction in words: the state(s) and, if given, the step."""
    if cti is None:
        return ""
    if isinstance(cti, str):
        return cti
    if isinstance(cti, Mapping) and not {"before", "state", "pre"} & set(cti):
        return ", ".join(f"{k}={v}" for k, v in cti.items())
    before, after, action = (
        _field(cti, "before", "state", "pre"),
        _field(cti, "after", "post"),
        _field(cti, "action", "rule"),
    )
    if before is not None:
        text = f"from {cti_text(before)}"
        if action is not None:
            text += f", {action.label() if isinstance(action, Action) else action}"
        if after is not None:
            text += f" leads to {cti_text(after)}"
        return text
    return str(cti)
