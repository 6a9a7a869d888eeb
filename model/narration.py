"""Plain-English sentences for steps and for the properties a step violates.

Each sentence is computed from the state before and after the step, so it says what the
model did, not what a script intended: the same code narrates scripted stories,
counterexamples, replays of trace files and the playground.
"""

from __future__ import annotations

from model.layout import Vars
from model.rules import Rule
from model.system import State, System


def _lease_context(s: Vars, w: int) -> str:
    """Where a landing write stands relative to its worker's lease."""
    if s.holder == w and s.grants == s.gid[w]:
        if s.now < s.expires:
            return f"within W{w}'s lease (until t={s.expires})"
        return f"after W{w}'s lease expired at t={s.expires}"
    if s.holder:
        return f"though W{w}'s grant #{s.gid[w]} was superseded by grant #{s.grants} (W{s.holder})"
    return f"though W{w}'s grant #{s.gid[w]} is no longer the coordinator's lease"


def _comparison(system: System, s: Vars, w: int) -> str:
    """Why the receiver accepted: the comparison it made, in words."""
    receiver, token = system.design.receiver, s.tok[w]
    if receiver == "none":
        return "the receiver checks nothing"
    if receiver in ("fenced", "fenced-nonatomic"):
        return f"the receiver compares {token} ≥ {s.hwm}"
    if receiver == "fenced-strict":
        return f"the receiver compares {token} > {s.hwm}"
    if receiver == "equality":
        return (
            "the receiver has no mark yet" if s.mark == 0 else f"{token} equals the mark {s.mark}"
        )
    return "the receiver finds the lease current"


def _refusal(system: System, s: Vars, w: int) -> str:
    """Why the receiver rejected a request, in words."""
    receiver, token = system.design.receiver, s.tok[w]
    if receiver in ("fenced", "fenced-nonatomic"):
        return f"the receiver has seen token {s.hwm} and {token} < {s.hwm}"
    if receiver == "fenced-strict":
        return f"{token} is not greater than the receiver's mark {s.hwm}"
    if receiver == "equality":
        return f"the receiver is bound to token {s.mark}"
    return f"W{w}'s lease is not the current, unexpired one"


def _request(system: System, s: Vars, w: int) -> str:
    """`write` or `read`, for W's request in flight (or about to be sent)."""
    if system.design.workload == "rmw" and s.phase[w] == 0:
        return "read"
    return "write"


def reception_outcome(system: System, before: State, rule: Rule) -> str | None:
    """What the receiver did with a request: accepted, rejected, checked, read (None: no request).

    Read off the rule's own `write_accepted` and `request_rejected` conditions, so the
    narration, the timeline and the properties agree on what happened.
    """
    if rule.action.name not in ("Deliver", "Check", "Apply"):
        return None
    s = system.view(before)
    if rule.request_rejected(s):
        return "rejected"
    if rule.action.name == "Check":
        return "checked"
    return "accepted" if rule.write_accepted(s) else "read"


def describe_step(system: System, before: State, rule: Rule, after: State) -> str:
    """One sentence saying what the step did, with the time and the tokens involved."""
    s, n = system.view(before), system.view(after)
    name, w = rule.action.name, rule.action.worker
    if name == "Tick":
        text = f"Time advances to t={n.now}."
        if s.holder and s.expires == n.now:
            text += f" W{s.holder}'s lease expires now."
        return text
    if name == "Acquire":
        text = (
            f"At t={s.now} the coordinator grants the lock to W{w} with token {n.tok[w]} "
            f"(grant #{n.gid[w]}); the lease runs until t={n.expires}."
        )
        if s.holder and s.holder != w and s.tok[s.holder]:
            text += f" W{s.holder} is not told and still believes it holds the lock."
        if system.design.grant_fences and n.hwm != s.hwm:
            text += f" The grant also raises the receiver's mark to {n.hwm}."
        return text
    if name == "Send":
        kind = _request(system, s, w)
        number = f" {n.sent[w]}" if kind == "write" else ""
        return f"W{w} sends {kind}{number} carrying token {s.tok[w]} at t={s.now}."
    outcome = reception_outcome(system, before, rule)
    if outcome is not None:
        return _describe_reception(system, s, outcome, name, w)
    if name == "Release":
        if s.holder == w and s.grants == s.gid[w]:
            return f"W{w} finishes its writes and releases the lock at t={s.now}."
        return (
            f"W{w} finishes at t={s.now}; its grant #{s.gid[w]} was superseded, so the "
            "coordinator's current lease is left alone."
        )
    if name == "StorageRestart":
        forgotten = max(s.hwm, s.mark)
        return f"The receiver restarts at t={s.now} and forgets its mark (it was {forgotten})."
    return (
        f"The coordinator restarts at t={s.now}: its token counter goes back to 0 and it "
        "forgets the current lease. Workers are not told."
    )


def _describe_reception(system: System, s: Vars, outcome: str, name: str, w: int) -> str:
    """Sentences for Deliver, Check and Apply."""
    kind, token = _request(system, s, w), s.tok[w]
    if outcome == "rejected":
        return (
            f"W{w}'s {kind} carrying token {token} is rejected at t={s.now}: "
            f"{_refusal(system, s, w)}. W{w} learns it lost the lock and gives it up."
        )
    if outcome == "checked":
        return (
            f"The receiver checks W{w}'s {kind} carrying token {token} at t={s.now} "
            f"({token} ≥ {s.hwm}) and will apply it in a later step."
        )
    if outcome == "read":
        return f"W{w}'s read carrying token {token} returns version {s.version} at t={s.now}."
    text = f"W{w}'s write carrying token {token} is accepted at t={s.now}, {_lease_context(s, w)}"
    if name == "Apply":
        text += f"; the receiver applies it without re-checking and sets its mark to {token}"
    elif system.design.receiver != "none":
        text += f"; {_comparison(system, s, w)}"
    return text + "."


def explain_violation(system: System, before: State, rule: Rule, name: str) -> str:
    """Why the step violates property `name`, using the values before the step."""
    s, w = system.view(before), rule.action.worker
    token = s.tok[w]
    if name == "P1":
        return (
            f"P1 violated: token {token} is accepted after token {s.last} was; "
            f"accepted tokens went down ({token} < {s.last})."
        )
    if name == "P2":
        return f"P2 violated: the write lands {_lease_context(s, w)}."
    if name == "P3":
        return (
            f"P3 violated: accepted because {_comparison(system, s, w)}, but W{w}'s grant "
            f"#{s.gid[w]} is older than grant #{s.lastg}, whose write was accepted before."
        )
    if name == "P4":
        return (
            f"P4 violated: W{w}'s request is rejected although its lease is the current one "
            f"(until t={s.expires}): {_refusal(system, s, w)}."
        )
    return (
        f"P5 violated: W{w} read version {s.rv[w]}, but the data is at version {s.version} "
        "now; the update in between is lost."
    )
