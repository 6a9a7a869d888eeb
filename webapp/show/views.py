"""Plain presentation helpers shared by the pages: narration lines, actor tables, step clamping.

Nothing here imports Streamlit, so every function is unit-tested directly; the pages only
lay out what these functions return.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from model.actions import Actor
from model.explain.narration import never_expires
from model.formats.trace import Trace
from model.layout import GHOSTS, MEANING, Shape, Vars, variables_where
from model.rules import holds_current_grant, lease_is_current, lease_unexpired
from webapp.show.events import believes_it_holds, lanes, reception_outcome
from webapp.show.style import COORDINATOR, RECEIVER

COORDINATOR_VARIABLES: Final = variables_where(Actor.COORDINATOR, Shape.SCALAR)
RECEIVER_VARIABLES: Final = variables_where(Actor.RECEIVER, Shape.SCALAR)
WORKER_VARIABLES: Final = variables_where(Actor.WORKER, Shape.PER_WORKER)
"""The rows of the state table: each actor's variables, as the model's table of owners says."""
GHOST_NOTE: Final = " (model only)"
"""How the state table marks such a variable, in words."""


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
    """The state of one actor at one position of a trace: in words, then the model's variables."""

    actor: str
    words: str
    variables: str


def clamp_step(raw: object, count: int) -> int:
    """A step position from untrusted text (the URL): a whole number within 0..count, else 0."""
    try:
        value = int(str(raw))
    except (TypeError, ValueError):
        return 0
    return max(0, min(value, count))


def step_in_link(raw: object, count: int) -> int | None:
    """A step position from a link: a whole number within 0..count, else None (absent or bad)."""
    if raw is None:
        return None
    text = str(raw).strip()
    if not text.isdigit() or len(text) > 7 or int(text) > count:
        return None
    return int(text)


STREAMLIT_PARAMS: Final = frozenset({"embed", "embed_options"})
"""Link parameters Streamlit itself reads, on every page."""


def unknown_setting(names: Iterable[str], known: Iterable[str]) -> str | None:
    """What to say when a link carries a parameter the page does not read (never its name,
    which a visitor may have typed), or None when every one is known."""
    if set(names) - set(known) - STREAMLIT_PARAMS:
        return "this page has no setting of that name"
    return None


def plain_text(text: str) -> str:
    """Text for a place that shows it as typed (a table cell, a hover): no code marks."""
    return text.replace("`", "")


def opening_step(traces: Sequence[Trace]) -> int:
    """The step a run opens on: the first run's first violating step (else the next run's),
    or the last step when nothing is violated, never an empty step 0."""
    for trace in traces:
        first = next((step.number for step in trace.steps if step.violations), None)
        if first is not None:
            return first
    return max((len(trace.steps) for trace in traces), default=0)


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
    """`name=value` for the named variables this design actually uses (those only the model
    keeps, for its properties, marked)."""
    used = set(trace.system.layout.used_columns())
    parts = []
    for name in names:
        if name in used:
            ghost = GHOST_NOTE if name.split("[", 1)[0] in GHOSTS else ""
            parts.append(f"{name}={values[name]}{ghost}")
    return ", ".join(parts) or "—"


def actor_rows(trace: Trace, position: int) -> tuple[ActorRow, ...]:
    """The state of every actor after `position` steps: clock, coordinator, workers, receiver."""
    position = clamp_step(position, len(trace.steps))
    values = trace.state_at(position)
    s = trace.system.view(trace.states()[position])
    rows = [ActorRow("clock", f"the time is t={values['now']}", f"now={values['now']}")]
    names: tuple[str, ...]
    for lane in lanes(trace):
        if lane == COORDINATOR:
            words = coordinator_words(trace, s)
            names = COORDINATOR_VARIABLES
        elif lane == RECEIVER:
            words = receiver_words(trace, s)
            names = RECEIVER_VARIABLES
        else:
            w = int(lane[1:])
            words = worker_words(trace, s, w)
            names = tuple(f"{family}[{w}]" for family in WORKER_VARIABLES)
        rows.append(ActorRow(lane, words, _shown(trace, names, values)))
    return tuple(rows)


def _times(count: int) -> str:
    """`once`, `twice`, `3 times`."""
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def coordinator_words(trace: Trace, s: Vars) -> str:
    """Who the lock service last granted the lock to and whether that lease still runs."""
    if not s.holder:
        words = "the lock is free"
    elif never_expires(s):
        words = f"lock granted to W{s.holder} (grant #{s.grants}), no lease: held until released"
    elif lease_unexpired(s):
        words = f"lock granted to W{s.holder} (grant #{s.grants}), lease until t={s.expires}"
    else:
        words = (
            f"W{s.holder}'s lease (grant #{s.grants}) expired at t={s.expires}: "
            "the lock can be granted again"
        )
    parts = [words]
    if "issued" in trace.system.layout.used_columns():
        parts.append(f"token counter at {s.issued}")
    if s.coordinator_restarts:
        parts.append(f"restarted {_times(int(s.coordinator_restarts))}, forgetting its lease")
    return "; ".join(parts)


def lease_words(s: Vars, w: int) -> str:
    """Where w's grant stands with the lock service, asked of the model's predicates."""
    if lease_is_current(s, w):
        if never_expires(s):
            return "held until it releases it (the lock has no lease)"
        return f"lease current until t={s.expires}"
    if holds_current_grant(s, w):
        return f"but its lease expired at t={s.expires}"
    if s.grants != s.gid[w]:
        newer = f"grant #{s.grants}" + (f" (W{s.holder})" if s.holder else "")
        return f"but grant #{s.gid[w]} was superseded by {newer}"
    return "but the coordinator restarted and no longer counts its lease"


def worker_words(trace: Trace, s: Vars, w: int) -> str:
    """What worker w believes, whether its lease still runs, and what it has sent."""
    crashed = f"crashed at t={s.down[w] - 1}, takes no step again" if s.down[w] else ""
    if not believes_it_holds(s, w):
        return "; ".join(part for part in (crashed, "does not hold the lock") if part)
    parts = [f"believes it holds token {s.tok[w]} (grant #{s.gid[w]}), {lease_words(s, w)}"]
    if crashed:
        parts.insert(0, crashed)
    kind = "write" if trace.system.builder.is_write(s, w) else "read"
    if s.pending[w] == 1:
        parts.append(f"a {kind} in flight")
    elif s.pending[w] == 2:
        parts.append(f"a {kind} checked by the receiver, not yet applied")
    parts.append(f"{s.sent[w]} of {trace.bounds.writes} writes sent")
    if trace.design.workload == "rmw" and kind == "write":
        parts.append(f"its write is based on version {s.rv[w]}")
    if trace.design.worker_check:
        parts.append(f"checks its own lease (until t={s.until[w]}) before sending")
    return "; ".join(parts)


def receiver_words(trace: Trace, s: Vars) -> str:
    """What the receiver compares a request against, and what it last accepted."""
    admission = trace.system.builder.admission(s, 1)
    test = admission.test.row
    if not test.checks:
        parts = ["checks nothing"]
    elif test.asks_lock_service:
        parts = ["asks the lock service whether the writer's lease is current"]
    elif test.binds:
        parts = [
            f"bound to token {admission.against}: accepts only that token"
            if admission.against
            else "no token seen yet: binds itself to the first one"
        ]
    else:
        parts = [
            f"highest token seen: {admission.against} (accepts tokens {admission.test} "
            f"{admission.against})"
            if admission.against
            else "no token seen yet (accepts any token)"
        ]
    if s.last:
        parts.append(f"last write accepted carried token {s.last} (grant #{s.lastg})")
    if trace.design.workload == "rmw":
        parts.append(f"data at version {s.version}")
    if s.storage_restarts:
        parts.append(f"restarted {_times(int(s.storage_restarts))}, forgetting its mark")
    return "; ".join(parts)


def variable_help(trace: Trace) -> str:
    """One line per variable family the design uses, with its meaning from the model."""
    families = []
    for column in trace.system.layout.used_columns():
        family = column.split("[", 1)[0]
        if family not in families:
            families.append(family)
    return "\n".join(f"- `{name}`: {MEANING.get(name, '')}" for name in families)
