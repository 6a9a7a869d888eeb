"""Each history event as a sentence, for reports, refusals and hover labels."""

from __future__ import annotations

from lab.history import Happening
from lab.lock_table import DEFAULT_SERVICE, SERVICES

NEMESIS_SENTENCES = {
    "crash": "the nemesis kills W{w} for good (SIGKILL)",
    "member-kill": "the nemesis kills etcd member {member} (SIGKILL)",
    "member-start": "etcd member {member} is started again",
    "member-pause": "the nemesis pauses etcd member {member} (SIGSTOP)",
    "member-resume": "the nemesis resumes etcd member {member} (SIGCONT)",
    "skew": "W{w} runs on a clock going {rate:g} times as fast as real time",
    "clock": "W{w}'s own clock counted {wall_seconds:.3f} s while {real_seconds:.3f} s passed",
}
"""Sentences of the nemesis's events (fields from the event)."""


def _request(event: Happening) -> str:
    """`W1's write carrying token 5` (or read)."""
    return f"W{event.worker}'s {event.get('op', 'write')} carrying token {event.get('token')}"


def _mark(event: Happening) -> str:
    """` (mark 3 → 5)` when the store keeps a mark, else nothing."""
    before, after = event.get("mark_before"), event.get("mark_after")
    if before is None:
        return ""
    return (
        f" (mark {before} → {after})"
        if after is not None and after != before
        else f" (mark {before})"
    )


def _grant(event: Happening, service: str, seen: str) -> str:
    """A grant in the words of its lock service."""
    w, token = event.worker, event.get("token")
    if service == "zookeeper":
        node = f"znode {event.get('node')} " if event.get("node") else "its znode "
        return (
            f"ZooKeeper grants the lock to W{w}: {node}(czxid "
            f"{event.get('revision')}), session {event.get('lease')}; token {token}{seen}"
        )
    if service == "redis":
        return f"Redis grants the lock to W{w}: grant {event.get('revision')}; token {token}{seen}"
    lease = f"lease {event.get('lease')}" if event.get("lease") else "no lease"
    return (
        f"{SERVICES[service].short} grants the lock to W{w}: create revision "
        f"{event.get('revision')}, version {event.get('version')}, {lease}; token {token}{seen}"
    )


def _revoked(event: Happening, service: str) -> str:
    """The end of a lock nobody released, in the words of its lock service."""
    w, grant = event.worker, event.get("grant")
    if service == "zookeeper":
        return f"W{w}'s ZooKeeper session expires and its lock znode is deleted (grant {grant})"
    if service == "redis":
        return f"W{w}'s Redis lock key expires (grant {grant})"
    return f"etcd revokes W{w}'s expired lease and deletes the lock key (grant {grant})"


def describe(event: Happening, service: str = DEFAULT_SERVICE) -> str:
    """What happened, in one sentence (in the words of the run's lock service)."""
    kind, w = event.kind, event.worker
    if kind == "grant":
        watch = "the watch" if SERVICES[service].ordered else "the lab's observer"
        seen = (
            f" (seen only by {watch}: W{w} never got the answer)" if event.get("unanswered") else ""
        )
        return _grant(event, service, seen)
    if kind == "revoked":
        return _revoked(event, service)
    if kind == "release":
        if event.get("deleted"):
            return f"W{w} releases the lock: its key is deleted"
        return f"W{w} releases, but its key was already gone (another grant or an expiry)"
    if kind == "send":
        held = event.get("client_says_held")
        belief = {True: " (its lock client still reports the lock held)", False: ""}.get(held, "")
        return f"W{w} sends {_request(event).split(' ', 1)[1]}{belief}"
    if kind == "deliver":
        if event.get("outcome") == "read":
            return f"the store returns version {event.get('version_before')} to W{w}'s read"
        verb = {"accepted": "accepts", "rejected": "rejects"}.get(event.get("outcome"), "answers")
        return f"the store {verb} {_request(event)}{_mark(event)}"
    if kind == "check":
        verdict = "passes; the write is applied later" if event.get("passed") else "fails: rejected"
        mark = event.get("mark_before")
        return f"the store checks {_request(event)} against its mark {mark}: {verdict}"
    if kind == "apply":
        return f"the store applies {_request(event)} without checking again{_mark(event)}"
    if kind == "pause":
        return f"the nemesis pauses W{w} (SIGSTOP)"
    if kind == "resume":
        return f"the nemesis resumes W{w} (SIGCONT)"
    if kind == "hold":
        return (
            f"the store holds W{w}'s {event.get('op')} in flight (request {event.get('request')})"
        )
    if kind == "unhold":
        return f"the store lets W{w}'s held request {event.get('request')} go on"
    if kind in NEMESIS_SENTENCES:
        try:
            return NEMESIS_SENTENCES[kind].format(w=w, **event.data)
        except (KeyError, ValueError, TypeError):  # a history file without a field
            return f"the nemesis: {kind}"
    if kind == "leader":
        return (
            f"etcd's raft term is {event.get('term')} (a leader elected in it renews every lease)"
        )
    if kind == "storage-kill":
        return "the nemesis kills the storage process (SIGKILL)"
    if kind == "storage-start":
        mark = event.get("mark")
        known = f", mark {mark}" if mark is not None else ""
        return f"the storage process starts (incarnation {event.get('incarnation')}{known})"
    if kind == "renew":
        ttl = event.get("ttl")
        short = SERVICES[service].short
        return f"{short} takes W{w}'s keepalive: its lease runs {ttl} s from now"
    if kind == "lease-check":
        return f"W{w} checks its lease: its TTL has passed, so it gives the grant up"
    if kind == "reply":
        return f"W{w} hears: {event.get('outcome')}"
    if kind == "invoke":
        if event.get("op") == "renew":
            lease = event.get("lease")
            of = f"its lease {lease}" if lease else "its lock"
            return f"W{w} sends {SERVICES[service].short} a keepalive for {of}"
        return f"W{w} asks {SERVICES[service].short} to {event.get('op')} the lock"
    if kind in ("fail", "info"):
        verdict = (
            "failed: it never took effect"
            if kind == "fail"
            else "has an unknown outcome: the reply never came"
        )
        return f"W{w}'s {event.get('op')} {verdict} ({event.get('error')})"
    if kind == "final-read":
        data, locks = event.get("data"), event.get("locks")
        row = (
            f"version {data.get('version')}, value {data.get('value')}"
            + (f", mark {data.get('mark')}" if data.get("mark") is not None else "")
            if isinstance(data, dict)
            else "the data could not be read"
        )
        keys = (
            f"{len(locks)} lock key{'s' if len(locks) != 1 else ''}"
            if isinstance(locks, list)
            else "the lock keys could not be read"
        )
        return f"the final read finds the data at {row}; {SERVICES[service].short} holds {keys}"
    if kind == "error":
        return (
            f"W{w}: {event.get('during')} failed: {event.get('error')}"
            if w
            else f"error: {event.get('error')}"
        )
    return kind
