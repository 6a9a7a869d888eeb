"""Plain presentation helpers shared by the pages: narration lines, actor tables, step clamping.

Nothing here imports Streamlit, so every function is unit-tested directly; the pages only
lay out what these functions return.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from model.layout import MEANING
from model.trace import Trace
from webapp.events import LEASE_ACTIVE, lanes, lease_status, reception_outcome
from webapp.style import COORDINATOR, RECEIVER

COORDINATOR_VARIABLES: Final = ("holder", "expires", "issued", "grants", "coordinator_restarts")
RECEIVER_VARIABLES: Final = ("hwm", "mark", "last", "lastg", "version", "storage_restarts")
WORKER_VARIABLES: Final = ("tok", "gid", "sent", "pending", "until", "phase", "rv")
GHOSTS: Final = ("grants", "last", "lastg", "gid")
"""History variables the model keeps for the properties; real actors do not see them."""


@dataclass(frozen=True)
class NarrationLine:
    """One narrated step: its number, the model's sentence, violation reasons, and an outcome."""

    number: int
    actor: str
    sentence: str
    reasons: tuple[str, ...]
    outcome: str
    current: bool


@dataclass(frozen=True)
class ActorRow:
    """The state of one actor at one position of a trace, for the small state table."""

    actor: str
    state: str
    note: str


def clamp_step(raw: object, count: int) -> int:
    """A step position from untrusted text (the URL): a whole number within 0..count, else 0."""
    try:
        value = int(str(raw))
    except (TypeError, ValueError):
        return 0
    return max(0, min(value, count))


def narration(trace: Trace, position: int) -> tuple[NarrationLine, ...]:
    """Every step's sentence, with the step at `position` marked current (0: none yet)."""
    lines = []
    for step in trace.steps:
        outcome = reception_outcome(trace, step)
        lines.append(
            NarrationLine(
                number=step.number,
                actor=step.actor,
                sentence=step.sentence,
                reasons=tuple(reason.text for reason in step.reasons),
                outcome=outcome.key if outcome else "",
                current=step.number == position,
            )
        )
    return tuple(lines)


def _shown(trace: Trace, names: tuple[str, ...], values: dict[str, int]) -> str:
    """`name=value` for the named variables this design actually uses."""
    used = set(trace.system.layout.used_columns())
    parts = []
    for name in names:
        if name in used:
            ghost = " (ghost)" if name in GHOSTS else ""
            parts.append(f"{name}={values[name]}{ghost}")
    return ", ".join(parts) or "—"


def actor_rows(trace: Trace, position: int) -> tuple[ActorRow, ...]:
    """The state of every actor after `position` steps: coordinator, each worker, receiver."""
    position = clamp_step(position, len(trace.steps))
    values = trace.state_at(position)
    state = trace.states()[position]
    rows = [ActorRow("clock", f"now={values['now']}", "true time")]
    for lane in lanes(trace):
        if lane == COORDINATOR:
            text = _shown(trace, COORDINATOR_VARIABLES, values)
            note = "lock free" if not values["holder"] else f"lock granted to W{values['holder']}"
        elif lane == RECEIVER:
            text = _shown(trace, RECEIVER_VARIABLES, values)
            note = _receiver_note(trace, values)
        else:
            w = int(lane[1:])
            names = tuple(f"{family}[{w}]" for family in WORKER_VARIABLES)
            text = _shown(trace, names, values)
            note = _worker_note(lease_status(trace, state, w))
        rows.append(ActorRow(lane, text, note))
    return tuple(rows)


def _worker_note(status: str | None) -> str:
    """What a worker believes, in words."""
    if status is None:
        return "holds nothing"
    if status == LEASE_ACTIVE:
        return "holds the lock, lease current"
    return "believes it holds the lock, but its lease is over"


def _receiver_note(trace: Trace, values: dict[str, int]) -> str:
    """What the receiver checks, in words."""
    receiver = trace.design.receiver
    if receiver == "none":
        return "checks nothing"
    if receiver == "lease-aware":
        return "checks the live lease"
    if receiver == "equality":
        return f"accepts only token {values['mark']}" if values["mark"] else "no mark yet"
    return (
        f"accepts tokens ≥ {values['hwm']}"
        if receiver != "fenced-strict"
        else (f"accepts tokens > {values['hwm']}")
    )


def variable_help(trace: Trace) -> str:
    """One line per variable family the design uses, with its meaning from the model."""
    families = []
    for column in trace.system.layout.used_columns():
        family = column.split("[", 1)[0]
        if family not in families:
            families.append(family)
    return "\n".join(f"- `{name}`: {MEANING.get(name, '')}" for name in families)
