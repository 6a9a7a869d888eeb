"""Plain-English sentences for steps and for the properties a step violates.

Each sentence is computed from the state before and after the step, and every judgement
in it (is the lease current, is this a read, did the receiver accept, what did it compare)
is asked of the model's own predicates and rules: the narration words what the model
decided, it never decides again. The same code narrates scripted stories,
counterexamples, replays of trace files and the playground.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from model.actions import ActionKind
from model.design import Expiry
from model.layout import Vars
from model.properties import BY_NAME
from model.rules import Admission, Rule, holds_current_grant, lease_is_current, lease_unexpired
from model.system import State, System


@dataclass(frozen=True)
class Reason:
    """Why one step violates one property: the property's name and the explanation."""

    prop: str
    text: str


def lease_standing(s: Vars, w: int) -> str:
    """Why w's grant is no longer the live lease, asked of the predicates (its lease is over)."""
    if holds_current_grant(s, w):
        return f"W{w}'s lease expired at t={s.expires}"
    if s.holder:
        return f"W{w}'s grant #{s.gid[w]} was superseded by grant #{s.grants} (W{s.holder})"
    return f"W{w}'s grant #{s.gid[w]} is no longer the coordinator's lease"


def lease_context(s: Vars, w: int) -> str:
    """Where a landing write stands relative to its worker's lease, asked of the predicates."""
    if holds_current_grant(s, w):
        if never_expires(s):
            return f"while W{w} holds the lock (it never expires)"
        if lease_unexpired(s):
            return f"within W{w}'s lease (until t={s.expires})"
        return f"after {lease_standing(s, w)}"
    return f"though {lease_standing(s, w)}"


def never_expires(s: Vars) -> bool:
    """Whether the design's lock has no lease at all."""
    return s.layout.design.expiry is Expiry.NEVER


def _mark_name(system: System) -> str:
    """What the receiver calls the number it compares against."""
    return "mark" if system.design.receiver.keeps_equality_mark else "highest token seen"


def comparison(system: System, admission: Admission) -> str:
    """The receiver's test in words with its values and the rule's own outcome.

    For example `the receiver's test passes: token 2 ≥ highest token seen 1`.
    """
    outcome = "passes" if admission.passed else "fails"
    test = admission.test.row
    if not test.checks:
        return "the receiver checks nothing"
    if test.asks_lock_service:
        return f"the receiver asks the lock service whether the lease is current: {outcome}"
    if test.binds and admission.against == 0:
        return "the receiver has no mark yet and binds itself to this token"
    return (
        f"the receiver's test {outcome}: token {admission.token} {admission.test} "
        f"{_mark_name(system)} {admission.against}" + ("" if admission.passed else " is false")
    )


def refusal(system: System, s: Vars, w: int, admission: Admission) -> str:
    """Why the receiver refused, in words: the test that failed, with its values."""
    if admission.test.row.asks_lock_service:
        return (
            "the receiver asks the lock service whether the lease is current, and it is not: "
            + lease_standing(s, w)
        )
    return comparison(system, admission)


def carries_token(system: System, s: Vars, w: int) -> bool:
    """Whether w's request carries its token to the receiver (writes always; reads if fenced)."""
    return bool(system.builder.checks_reads() or system.builder.is_write(s, w))


def _mark_value(system: System, s: Vars) -> int | None:
    """The receiver's mark (the number it compares tokens against), None if it keeps none."""
    receiver = system.design.receiver
    if receiver.keeps_high_water_mark:
        return int(s.hwm)
    if receiver.keeps_equality_mark:
        return int(s.mark)
    return None


def mark_change(system: System, s: Vars, n: Vars) -> str:
    """`the receiver's highest token seen rises from 1 to 2` (or stays); empty if it has no mark."""
    before, after = _mark_value(system, s), _mark_value(system, n)
    if before is None or after is None:
        return ""
    name = _mark_name(system)
    if after == before:
        return f"the receiver's {name} stays at {before}"
    verb = "rises" if after > before else "goes back"
    return f"the receiver's {name} {verb} from {before} to {after}"


def request_kind(system: System, s: Vars, w: int) -> str:
    """`write` or `read`, for w's request in flight (or about to be sent), per the rules."""
    return "write" if system.builder.is_write(s, w) else "read"


def reception_outcome(system: System, before: State, rule: Rule) -> str | None:
    """What the receiver did with a request: accepted, rejected, checked, read (None: no request).

    Read off the rule's own `write_accepted` and `request_rejected` conditions, so the
    narration, the timeline and the properties agree on what happened.
    """
    if not rule.action.row.reception:
        return None
    s = system.view(before)
    if rule.request_rejected(s):
        return "rejected"
    if rule.action.name is ActionKind.CHECK:
        return "checked"
    return "accepted" if rule.write_accepted(s) else "read"


@dataclass(frozen=True)
class _Step:
    """One step to narrate: the states around it, its rule, and where a split receiver checked."""

    system: System
    before: State
    rule: Rule
    after: State
    checked_in: State | None

    @property
    def s(self) -> Vars:
        """The state before the step."""
        return self.system.view(self.before)

    @property
    def n(self) -> Vars:
        """The state after the step."""
        return self.system.view(self.after)

    @property
    def w(self) -> int:
        """The worker the step concerns (0: none)."""
        return self.rule.action.worker


def describe_step(
    system: System, before: State, rule: Rule, after: State, checked_in: State | None = None
) -> str:
    """One sentence saying what the step did, with the time and the tokens involved.

    `checked_in` is, for an Apply, the state in which the receiver checked the request: a
    split receiver decided there, so its test is worded with that state's values. The
    sentence is written by the narrator of the step's kind (`NARRATORS`).
    """
    return NARRATORS[rule.action.name](_Step(system, before, rule, after, checked_in))


def _tick(step: _Step) -> str:
    """Time passes, and a lease may run out with it."""
    s, n = step.s, step.n
    text = f"Time advances to t={n.now}."
    if s.holder and lease_unexpired(s) and not lease_unexpired(n):
        text += f" W{s.holder}'s lease expires now."
    return text


def _acquire(step: _Step) -> str:
    """The coordinator grants the lock; a previous holder is not told."""
    system, s, n, w = step.system, step.s, step.n, step.w
    lasts = (
        "it is held until released (the lock never expires)"
        if never_expires(s)
        else f"the lease runs until t={n.expires}"
    )
    text = (
        f"At t={s.now} the coordinator grants the lock to W{w} with token {n.tok[w]} "
        f"(grant #{n.gid[w]}); {lasts}."
    )
    if s.holder and s.holder != w and s.tok[s.holder]:
        if system.design.crashes and s.down[s.holder]:
            text += f" W{s.holder} crashed while holding the lock and never runs again."
        else:
            text += f" W{s.holder} is not told and still believes it holds the lock."
    if system.design.grant_fences and n.hwm != s.hwm:
        text += f" The grant also raises the receiver's mark to {n.hwm}."
    return text


def _send(step: _Step) -> str:
    """A worker sends a request, with or without its token."""
    system, s, n, w = step.system, step.s, step.n, step.w
    kind = request_kind(system, s, w)
    number = f" {n.sent[w]}" if kind == "write" else ""
    if not carries_token(system, s, w):
        return (
            f"W{w} sends a {kind} at t={s.now}, without its token: reads carry none, so "
            "the receiver does not check them."
        )
    return f"W{w} sends {kind}{number} carrying token {s.tok[w]} at t={s.now}."


def _reception(step: _Step) -> str:
    """The receiver handles a request: what it decided, worded by `_describe_reception`."""
    outcome = reception_outcome(step.system, step.before, step.rule)
    assert outcome is not None, "a reception always has an outcome"
    checked = None if step.checked_in is None else step.system.view(step.checked_in)
    return _describe_reception(
        step.system, step.s, step.n, outcome, step.rule.action.name, step.w, checked
    )


def _release(step: _Step) -> str:
    """A worker finishes; the coordinator frees the lock only for its current grant."""
    s, w = step.s, step.w
    if holds_current_grant(s, w):
        return f"W{w} finishes its writes and releases the lock at t={s.now}."
    if s.holder:
        return (
            f"W{w} finishes at t={s.now}; its grant #{s.gid[w]} was superseded, so the "
            "coordinator's current lease is left alone."
        )
    return (
        f"W{w} finishes at t={s.now}; the coordinator no longer records its grant "
        f"#{s.gid[w]}, so there is nothing to release."
    )


def _renew(step: _Step) -> str:
    """A keepalive moves the lease's end."""
    s, n, w = step.s, step.n, step.w
    return (
        f"W{w} renews its lease at t={s.now} (a keepalive): it ran until t={s.expires} "
        f"and now runs until t={n.expires}."
    )


def _crash(step: _Step) -> str:
    """A worker stops for ever while it believes it holds the lock."""
    s, w = step.s, step.w
    return (
        f"W{w} crashes at t={s.now} while it believes it holds the lock (token "
        f"{s.tok[w]}) and never runs again. Nobody is told."
        + (" Its request still in the network may yet arrive." if s.pending[w] else "")
    )


def _storage_restart(step: _Step) -> str:
    """The receiver loses its mark."""
    s = step.s
    forgotten = max(s.hwm, s.mark)
    return f"The receiver restarts at t={s.now} and forgets its mark (it was {forgotten})."


def _coordinator_restart(step: _Step) -> str:
    """The coordinator loses its counter and its lease."""
    return (
        f"The coordinator restarts at t={step.s.now}: its token counter goes back to 0 and it "
        "forgets the current lease. Workers are not told."
    )


NARRATORS: Final[dict[ActionKind, Callable[[_Step], str]]] = {
    ActionKind.TICK: _tick,
    ActionKind.ACQUIRE: _acquire,
    ActionKind.SEND: _send,
    ActionKind.DELIVER: _reception,
    ActionKind.CHECK: _reception,
    ActionKind.APPLY: _reception,
    ActionKind.RELEASE: _release,
    ActionKind.RENEW: _renew,
    ActionKind.STORAGE_RESTART: _storage_restart,
    ActionKind.COORDINATOR_RESTART: _coordinator_restart,
    ActionKind.CRASH: _crash,
}
"""The narrator of each kind of step (tests/test_vocabulary.py asks for one per kind)."""


def _describe_reception(
    system: System,
    s: Vars,
    n: Vars,
    outcome: str,
    name: ActionKind,
    w: int,
    checked: Vars | None,
) -> str:
    """Sentences for Deliver, Check and Apply; `checked` is the state an Apply was checked in."""
    kind, token = request_kind(system, s, w), s.tok[w]
    admission = system.builder.admission(s, w)
    if outcome == "rejected":
        return (
            f"W{w}'s {kind} carrying token {token} is rejected at t={s.now}: "
            f"{refusal(system, s, w, admission)}. {what_the_refused_learn(s, w)}"
        )
    if outcome == "checked":
        return (
            f"The receiver checks W{w}'s {kind} carrying token {token} at t={s.now} "
            f"({comparison(system, admission)}) and will apply it in a later step."
        )
    change = mark_change(system, s, n)
    if outcome == "read":
        if not carries_token(system, s, w):
            text = f"W{w}'s read returns version {s.version} at t={s.now}, unchecked"
            return text + (f": {change}." if change else ".")
        text = (
            f"W{w}'s read carrying token {token} returns version {s.version} at t={s.now}; "
            f"{comparison(system, admission)}"
        )
        return text + (f", and {change}." if change else ".")
    text = f"W{w}'s write carrying token {token} is accepted at t={s.now}, {lease_context(s, w)}"
    if name is ActionKind.APPLY:
        text += "; " + decided_earlier(system, w, checked)
        text += f", and applies it without checking again: {change}" if change else ""
    elif system.design.receiver.checks_anything:
        text += f"; {comparison(system, admission)}"
    return text + "."


def what_the_refused_learn(s: Vars, w: int) -> str:
    """What a refused worker takes from the refusal, read off the state it was refused in:
    a stale holder learns it lost the lock; a holder of the current lease is refused
    falsely, and gives up a lock that was still its own (the model's rule: a refused worker
    forgets its grant either way)."""
    if not bool(lease_is_current(s, w)):
        return f"W{w} learns it lost the lock and gives it up."
    still = (
        f"W{w} still holds the lock (it never expires)"
        if never_expires(s)
        else f"W{w}'s lease is still the current one (until t={s.expires})"
    )
    return (
        f"This is a false rejection: {still}; told it lost the lock, W{w} gives up a lock "
        "that was still its own."
    )


def decided_earlier(system: System, w: int, checked: Vars | None) -> str:
    """A split receiver's decision, worded with the state in which it checked the request."""
    if checked is None:
        return "the receiver checked it in an earlier step"
    admission = system.builder.admission(checked, w)
    if admission.against is None:
        return f"the receiver checked it in an earlier step ({comparison(system, admission)})"
    return (
        "the receiver checked it in an earlier step, when its test passed: token "
        f"{admission.token} {admission.test} {_mark_name(system)} {admission.against}"
    )


def delay_note(sent: int, delivered: int) -> str:
    """A request that sat in the network: when it was sent and how long it was delayed."""
    ticks = delivered - sent
    return (
        f" It was sent at t={sent} and delayed in the network for {ticks} "
        f"{'tick' if ticks == 1 else 'ticks'}."
    )


def explain_violation(
    system: System, before: State, rule: Rule, name: str, checked_in: State | None = None
) -> Reason:
    """Why the step violates property `name`, using the values where the decision was made.

    That is the state before the step, except for an Apply of a split receiver, which
    decided in the state of its Check (`checked_in`).
    """
    s, w = system.view(before), rule.action.worker
    if name == "P6":
        return Reason(name, f"{name} violated: {_crashed_holder_story(system, before, rule)}")
    token = s.tok[w]
    admission = system.builder.admission(s, w)
    if name == "P1":
        text = (
            f"token {token} is accepted after token {s.last} was: accepted tokens went down "
            f"({token} < {s.last})."
        )
    elif name == "P2":
        text = f"the write lands {lease_context(s, w)}."
    elif name == "P3":
        if rule.action.name is ActionKind.APPLY:
            checked = None if checked_in is None else system.view(checked_in)
            why = f"{decided_earlier(system, w, checked)}, and applies it without checking again"
        else:
            why = comparison(system, admission)
        text = (
            f"accepted because {why}, but W{w}'s grant "
            f"#{s.gid[w]} is older than grant #{s.lastg}, whose write was accepted before."
        )
    elif name == "P4":
        text = (
            f"W{w}'s request is rejected although its lease is the current one "
            f"(until t={s.expires}): {refusal(system, s, w, admission)}."
        )
    else:
        text = (
            f"W{w} read version {s.rv[w]}, but the data is at version {s.version} now: a write "
            f"was accepted between W{w}'s read and its write, and W{w}'s write erases it."
        )
    return Reason(name, f"{name} violated: {text}")


def _crashed_holder_story(system: System, before: State, rule: Rule) -> str:
    """P6 in words: who crashed when, and why nobody else could take the lock by now."""
    s = system.view(before)
    w = BY_NAME["P6"].violated_by(s, rule)[0]
    why = "the lock never expires" if never_expires(s) else f"its lease runs until t={s.expires}"
    return (
        f"W{w} crashed at t={s.down[w] - 1} while holding the lock; by t={s.now + 1} "
        f"nobody else could take it: {why}."
    )
