"""Cross-checks between the witnesses of a run: what no order of real events allows.

A lab history has several witnesses that do not trust each other: each worker records its
own client operations (invoke, then ok, fail or info), the storage process records its
decisions and its starts, the lab's observer records the lock service's own record of each
grant and its end, the nemesis records its faults, and at the end the controller reads the
database and the lock itself. A history is *refused* when the witnesses contradict each
other or the lock service breaks its own contract; each refusal has a code (one row of
`lab.contradiction.REFUSALS`) and one sentence. The checks run over the whole history,
independent of the model's segments. This module checks the lock's grants and leases, the
workers' pauses and kills, the store's marks, versions and receiver rule, the replies and
the final reads; it gathers the checks of the grants' tokens (lab.grant_witness), the
store's life (lab.store_witness) and the nemesis and clocks (lab.nemesis_witness):

- `double-grant`: the service made a grant while the previous grant's lock still existed;
- `lease-early`, `lease-late`: a lease ended before its TTL (counted from when it was asked
  for: no allowance is due), or later than its TTL plus the run's measured allowance
  (lab.allowances; on an etcd cluster, a TTL after it had a quorum again or elected a new
  leader, which renews every lease);
- `revision-order`: etcd's revision order contradicts the times observed by more than the
  measured request latency (the merge would have had to move a time back that far);
- `sent-while-paused`: a worker recorded a step while it was stopped by SIGSTOP;
- `step-after-crash`: a worker recorded a step after the nemesis killed it (SIGKILL);
- `renew-while-down`: the service took a keepalive from a worker stopped or killed;
- `renew-after-end`: the service took a keepalive asked for after the lease ended (revoked,
  expired or released; a keepalive asked for before a pause may be heard after it);
- `no-lease-revoked`: a lock key put with no lease (expiry `never`) was deleted by nobody's
  release (a grant to another worker while such a key exists is a `double-grant`);
- `receiver`, `receiver-rule`: the store says it ran another receiver or mark than the
  settings, or decided a write as its own receiver's rule does not (a plain store rejecting,
  a fenced one letting a token below its mark in, an apply without a passed check, etcd-txn
  writing without the writer's key);
- `mark-token`, `mark-drift`, `mark-restart`: the store's recorded mark is not the token it
  accepted, not the mark it last set, or a durable mark came back changed after a restart;
- `version-back`, `version-gap`, `version-step`: data versions went back, jumped without a
  write, or an accepted write did not add exactly one;
- `reply-contradicts`, `reply-undecided`: a worker heard another outcome than the store
  decided, or heard an outcome of a request the store never decided;
- `final-version`, `final-value`, `final-mark`, `final-locks`: the final reads of the
  database and of the lock disagree with the accepted writes and the grants.

Writes whose outcome no witness knows (the worker's reply never came: `info`, or no
completion at all when the run stopped, and no decision in the store's log) are
*indeterminate*: listed with what the data versions and the final read decided, if anything.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from lab.allowances import allowances, measured
from lab.cluster import ELECTION_MS
from lab.contradiction import Impossible
from lab.grant_witness import grant_checks
from lab.history import Happening, Timeline, etcd_order_key
from lab.lock_table import SERVICES
from lab.nemesis_witness import nemesis_checks
from lab.runner import PROBE_SECONDS
from lab.store_witness import store_life_checks

ELECTION_SECONDS: Final = ELECTION_MS / 1000
"""The election timeout of the lab's etcd cluster: a new leader renews every lease by its
TTL plus this."""
REQUEST_FLOOR_SECONDS: Final = 0.5
"""The smallest request latency allowed for when comparing etcd's order with observed times
(a worker's thread of a loaded machine can be descheduled this long between an answer and
its record)."""
WORKER_KINDS: Final = (
    "send",
    "reply",
    "grant",
    "release",
    "invoke",
    "fail",
    "info",
    "error",
    "renew",
)
"""Kinds a worker records about itself (its own clock, its own actions)."""


@dataclass(frozen=True)
class UnknownWrite:
    """A write whose reply never came and which the store's log never decided."""

    worker: int
    request: str
    sent: float
    decided: str | None
    """`applied`, `not applied`, or None when nothing decided it."""
    by: str
    """What decided it, in words ('' when nothing did)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "worker": self.worker,
            "request": self.request,
            "sent": self.sent,
            "decided": self.decided,
            "by": self.by,
        }


@dataclass(frozen=True)
class Witnessed:
    """What the cross-checks found: the contradictions and the indeterminate writes."""

    impossible: tuple[Impossible, ...]
    unknown: tuple[UnknownWrite, ...]

    @property
    def refused(self) -> bool:
        """Whether no order of real events allows the history."""
        return bool(self.impossible)


def request_bound(line: Timeline) -> float:
    """The latency allowed for: the measured one (or the slowest acquire seen), at least a floor."""
    seen = [
        e.t - float(e.get("asked"))
        for e in line.events
        if e.kind == "grant" and isinstance(e.get("asked"), int | float)
    ]
    latency = measured(line, "request_seconds")
    return max([REQUEST_FLOOR_SECONDS, *seen, *([latency] if latency is not None else [])])


def _at(e: Happening) -> str:
    """`at 1.234 s`."""
    return f"at {e.t:.3f} s"


# ----- the lock service ------------------------------------------------------------------------


def _seen_after(end: Happening, grant: Happening, latency: float) -> bool:
    """Whether a lock was seen to end more than one request's latency after the next grant
    (for a service that gives the ends of its grants no order of its own)."""
    ended = end.observed if end.observed is not None else end.t
    granted = grant.observed if grant.observed is not None else grant.t
    return ended - granted > latency


def _grant_checks(line: Timeline) -> list[Impossible]:
    """Double grants, leases that end too early or too late."""
    found: list[Impossible] = []
    ends: dict[int, tuple[int, Happening]] = {}
    for e in line.events:
        if e.kind == "revoked":
            ends[int(e.get("grant"))] = (int(e.get("revision")), e)
        elif e.kind == "release" and e.get("deleted"):
            ends[int(e.get("grant"))] = (int(e.get("etcd_revision")), e)
    grants = {int(e.get("revision")): e for e in line.events if e.kind == "grant"}
    never = line.history.settings.expiry == "never"
    watched = [e["t"] for e in line.history.events if e["kind"] in ("lock-put", "lock-delete")]
    last_watched = max(watched, default=0.0)
    previous: Happening | None = None
    service = SERVICES[line.history.settings.lock_service]
    latency = request_bound(line)
    number = "create revision" if service.ordered else "grant"
    for revision in sorted(grants):
        e = grants[revision]
        unseen = line.history.partial and e.t > last_watched  # the watch may lag behind
        if previous is not None and not unseen:
            before = int(previous.get("revision"))
            end = ends.get(before)
            order = int(e.get("order_revision") or revision)
            if (
                end is None
                or end[0] > order
                or (not service.ordered and _seen_after(end[1], e, latency))
            ):
                found.append(
                    Impossible(
                        "double-grant",
                        e.index,
                        e.t,
                        f"{service.short} granted the lock to W{e.worker} ({number} {revision}) "
                        f"{_at(e)} while W{previous.worker}'s key ({number} {before}) "
                        "had not been deleted: two holders at once"
                        + (" (a key put with no lease never expires)" if never else ""),
                    )
                )
        previous = e
    for revision, e in grants.items():
        end = ends.get(revision)
        if end is None or end[1].kind != "revoked":
            continue
        if never:
            found.append(
                Impossible(
                    "no-lease-revoked",
                    end[1].index,
                    end[1].t,
                    f"W{e.worker}'s lock key (grant {revision}) was deleted {_at(end[1])} by "
                    "nobody's release, but it was put with no lease, so nothing could expire",
                )
            )
            continue
        found.extend(_lease_span(line, e, end[1]))
    return found


def _lease_span(line: Timeline, grant: Happening, end: Happening) -> list[Impossible]:
    """A lease the service ended: not before its TTL from its last start (the grant or a
    keepalive it took, as asked for: no allowance is due), nor later than its TTL plus the
    run's allowance from the last moment it may have started again (for ZooKeeper, whose
    session lasts while its client runs, from when the holder stopped running)."""
    service = SERVICES[line.history.settings.lock_service]
    revision = int(grant.get("revision"))
    ttl = float(grant.get("ttl") or line.history.settings.ttl)
    asked = grant.get("asked")
    start = float(asked) if isinstance(asked, int | float) else None
    taken = _last_renewal(line, revision, end.t, taken_only=True)
    if taken is not None:
        start = float(taken.get("asked")) if taken.get("asked") is not None else None
        ttl = float(taken.get("ttl") or ttl)
    if service.lease_from_grant and start is not None and end.t - start < ttl:
        return [
            Impossible(
                "lease-early",
                end.index,
                end.t,
                f"{service.short} ended W{grant.worker}'s lease (grant {revision}) {_at(end)}, "
                f"{end.t - start:.3f} s after it was asked for: before its TTL of {ttl:g} s",
            )
        ]
    maybe = _last_renewal(line, revision, end.t, taken_only=False)
    last, since = (grant.t, "the grant") if maybe is None else (maybe.t, "its last keepalive")
    if not service.lease_from_grant:
        stopped = _stopped_since(line, grant.worker, end.t)
        if stopped is None:
            return []  # its client ran until the end: its session was heard meanwhile
        if stopped > last:
            last, since = stopped, f"W{grant.worker} stopped running"
    allowed = allowances(line)
    due, since = _lease_due(line, last, ttl, since, end.t)
    if end.t - due <= allowed.lease_end:
        return []
    if due > last + ttl:
        return [
            Impossible(
                "lease-late",
                end.index,
                end.t,
                f"{service.short} ended W{grant.worker}'s lease (grant {revision}) {_at(end)}, "
                f"{end.t - last:.3f} s after {since}: later than the "
                f"{allowed.lease_end:.3f} s allowed past that ({allowed.end_from}, plus the "
                f"run's latency of {allowed.latency:.3f} s)",
            )
        ]
    return [
        Impossible(
            "lease-late",
            end.index,
            end.t,
            f"{service.short} ended W{grant.worker}'s lease (grant {revision}) {_at(end)}, "
            f"{end.t - last:.3f} s after {since}: later than its TTL of {ttl:g} s plus the "
            f"{allowed.lease_end:.3f} s allowed ({allowed.end_from}, plus the run's latency of "
            f"{allowed.latency:.3f} s)",
        )
    ]


def _lease_due(
    line: Timeline, last: float, ttl: float, since: str, ended: float
) -> tuple[float, str]:
    """When a lease that last started at `last` was due to end, and since what, in words:
    its TTL later, unless its etcd cluster had no quorum to revoke it (then a TTL and an
    election timeout after it had one again) or elected a new leader meanwhile (a new
    leader renews every lease: a TTL and an election timeout after the new term was seen)."""
    due = last + ttl
    for lost, back in _without_quorum(line):
        if lost < due and back > last and back + ttl + ELECTION_SECONDS > due:
            due = back + ttl + ELECTION_SECONDS
            since = (
                f"{since}, and {ttl + ELECTION_SECONDS:.3f} s after the cluster had a quorum "
                f"again at {back:.3f} s (a new leader renews every lease)"
            )
    seen = PROBE_SECONDS + allowances(line).latency
    for elected in _new_terms(line):
        if last < elected < ended + seen and elected + ttl + ELECTION_SECONDS > due:
            due = elected + ttl + ELECTION_SECONDS
            since = (
                f"{since}, and {ttl + ELECTION_SECONDS:.3f} s after a new term of etcd's "
                f"leader was seen at {elected:.3f} s (a new leader renews every lease)"
            )
    return due, since


def _new_terms(line: Timeline) -> list[float]:
    """When the run's etcd was seen with a new raft term (a new leader), after its first."""
    terms = [e for e in line.events if e.kind == "leader"]
    return [
        later.t
        for earlier, later in itertools.pairwise(terms)
        if later.get("term") != earlier.get("term")
    ]


def _without_quorum(line: Timeline) -> list[tuple[float, float]]:
    """When the run's etcd cluster had no quorum (a majority of its members killed or
    stopped): from the moment it lost one to the moment it had one again (the end of the
    history, if it never did). Without one etcd revokes no lease, and the leader elected
    after it renews every lease by its TTL."""
    members = line.history.settings.members
    if members < 2 or not line.history.settings.lock_service.startswith("etcd"):
        return []
    down: set[int] = set()
    found: list[tuple[float, float]] = []
    lost: float | None = None
    majority = members // 2 + 1
    for e in line.events:
        member = e.get("member")
        if e.kind in ("member-kill", "member-pause"):
            down.add(int(member or 0))
        elif e.kind in ("member-start", "member-resume"):
            down.discard(int(member or 0))
        else:
            continue
        quorum = members - len(down) >= majority
        if not quorum and lost is None:
            lost = e.t
        elif quorum and lost is not None:
            found.append((lost, e.t))
            lost = None
    if lost is not None:
        found.append((lost, line.events[-1].t if line.events else lost))
    return found


def _stopped_since(line: Timeline, w: int, before: float) -> float | None:
    """When worker w stopped running (SIGSTOP seen delivered, or SIGKILL asked for) and
    stayed stopped until `before`; None if it was running just before then."""
    stopped: float | None = None
    for e in line.events:
        if e.t > before:
            break
        if e.worker != w:
            continue
        if e.kind == "pause":
            stopped = float(e.get("stopped_at") or e.t)
        elif e.kind == "resume":
            stopped = None
        elif e.kind == "crash":
            stopped = float(e.get("asked") or e.t)
    return stopped


def _last_renewal(
    line: Timeline, revision: int, before: float, taken_only: bool
) -> Happening | None:
    """The grant's last keepalive the service took (with `taken_only` False: or may have
    taken: an `info`, or a keepalive whose answer never came because its sender was stopped
    or killed first) that was asked for before a time."""
    found = None
    for e in _renewals(line, revision, taken_only):
        asked = e.get("asked")
        if (float(asked) if isinstance(asked, int | float) else e.t) <= before:
            found = e  # asked before the end (its answer may be heard after a pause)
    return found


def _renewals(line: Timeline, revision: int, taken_only: bool) -> list[Happening]:
    """The grant's keepalives the service took, in order; with `taken_only` False also
    those it may have taken: an `info` (no answer), and an asked keepalive no answer
    followed at all (the request may have reached the service before its sender died)."""
    found: list[Happening] = []
    unanswered: dict[int, Happening] = {}
    for e in line.events:
        if e.get("grant") is None or int(e.get("grant")) != revision:
            continue
        if e.kind == "invoke" and e.get("op") == "renew":
            unanswered[e.worker] = e
        elif e.kind == "renew" or (e.kind in ("info", "fail") and e.get("op") == "renew"):
            unanswered.pop(e.worker, None)
            if e.kind == "renew" or (e.kind == "info" and not taken_only):
                found.append(e)
    if not taken_only:
        found.extend(unanswered.values())
    return sorted(found, key=lambda e: e.index)


def _renewal_checks(line: Timeline) -> list[Impossible]:
    """No keepalive is taken that was asked for after its lease ended (revoked, expired or
    released): the worker records its request before it leaves, and the end's time is an
    upper bound of when the service ended it, so no allowance is due."""
    ended = {
        int(e.get("grant")): e
        for e in line.events
        if e.kind == "revoked" or (e.kind == "release" and e.get("deleted"))
    }
    service = SERVICES[line.history.settings.lock_service]
    found = []
    for e in line.events:
        end = ended.get(int(e.get("grant", 0))) if e.kind == "renew" else None
        if end is None:
            continue
        asked = e.get("asked")
        sent = float(asked) if isinstance(asked, int | float) else e.t
        if sent >= end.t:
            how = (
                f"{service.lapsed} at {end.t:.3f} s"
                if end.kind == "revoked"
                else f"W{end.worker} had released it at {end.t:.3f} s"
            )
            found.append(
                Impossible(
                    "renew-after-end",
                    e.index,
                    e.t,
                    f"{service.short} took W{e.worker}'s keepalive for grant {e.get('grant')}, "
                    f"asked for at {sent:.3f} s, but {how}: a lease that has ended cannot be "
                    "kept alive",
                )
            )
    return found


def _crash_checks(line: Timeline) -> list[Impossible]:
    """A killed worker records nothing after its kill (its own times, unmerged)."""
    killed: dict[int, float] = {}
    found = []
    for event in sorted(line.history.events, key=lambda e: e["t"]):
        w = int(event.get("worker") or 0)
        if event["kind"] == "crash":
            killed.setdefault(w, float(event["t"]))
            continue
        if event["kind"] not in WORKER_KINDS or event.get("source") != f"W{w}":
            continue
        if w in killed and float(event["t"]) > killed[w]:
            renew = event["kind"] == "renew"
            found.append(
                Impossible(
                    "renew-while-down" if renew else "step-after-crash",
                    None,
                    float(event["t"]),
                    f"W{w} recorded '{event['kind']}' at {event['t']:.3f} s, after the "
                    f"nemesis killed it (SIGKILL at {killed[w]:.3f} s)"
                    + (": a dead worker sends no keepalive" if renew else ""),
                )
            )
    return found


def _order_checks(line: Timeline) -> list[Impossible]:
    """etcd's revision order against the times its events were observed."""
    keyed = sorted(
        ((key, e.index, e) for e in line.events if (key := etcd_order_key(dict(e.data), e.kind))),
        key=lambda item: item[:2],
    )
    bound = request_bound(line)
    found: list[Impossible] = []
    earliest: tuple[float, Happening] | None = None
    for key, _, e in reversed(keyed):
        observed = e.observed if e.observed is not None else e.t
        if earliest is not None and observed - earliest[0] > bound:
            later = earliest[1]
            found.append(
                Impossible(
                    "revision-order",
                    e.index,
                    observed,
                    f"etcd ordered the {e.kind} of W{e.worker} (revision {key[0]}) before the "
                    f"{later.kind} of W{later.worker}, but it was observed "
                    f"{observed - earliest[0]:.3f} s later: more than one request's latency "
                    f"({bound:.3f} s)",
                )
            )
        if earliest is None or observed < earliest[0]:
            earliest = (observed, e)
    return list(reversed(found))


def _pause_checks(line: Timeline) -> list[Impossible]:
    """No worker records a step of its own while it is stopped (its own times, unmerged)."""
    stopped: dict[int, list[tuple[float, float]]] = {}
    since: dict[int, float] = {}
    raw = sorted(line.history.events, key=lambda e: e["t"])
    for event in raw:
        w = int(event.get("worker") or 0)
        if event["kind"] == "pause":
            since[w] = float(event.get("stopped_at") or event["t"])
        elif event["kind"] == "resume" and w in since:
            stopped.setdefault(w, []).append((since.pop(w), float(event["t"])))
    for w, start in since.items():
        stopped.setdefault(w, []).append((start, float("inf")))
    found = []
    for event in raw:
        w = int(event.get("worker") or 0)
        if event["kind"] not in WORKER_KINDS or event.get("source") != f"W{w}":
            continue
        for start, end in stopped.get(w, []):
            if start < event["t"] < end:
                until = f"SIGCONT at {end:.3f} s" if end != float("inf") else "never resumed"
                found.append(
                    Impossible(
                        "renew-while-down" if event["kind"] == "renew" else "sent-while-paused",
                        None,
                        float(event["t"]),
                        f"W{w} recorded '{event['kind']}' at {event['t']:.3f} s while it was "
                        f"stopped (SIGSTOP at {start:.3f} s, {until})",
                    )
                )
    return found


def _lock_checks(line: Timeline, final: Happening | None) -> list[Impossible]:
    """The lock keys etcd holds at the end are the grants whose key was never deleted."""
    if final is None or not isinstance(final.get("locks"), list) or final.get("watch") is False:
        return []  # no read of the lock key, or a watch that had not caught up with etcd
    ended = {
        int(e.get("grant"))
        for e in line.events
        if e.kind == "revoked" or (e.kind == "release" and e.get("deleted"))
    }
    live = {revision for revision in line.grants if revision not in ended}
    present = {int(key.get("create_revision", 0)) for key in final.get("locks")}
    if live == present:
        return []
    service = SERVICES[line.history.settings.lock_service]
    numbers = "create revisions" if service.ordered else "grants"
    return [
        Impossible(
            "final-locks",
            final.index,
            final.t,
            f"{service.short}'s lock keys at the end have {numbers} {sorted(present) or 'none'}, "
            f"but the history leaves {sorted(live) or 'none'} undeleted",
        )
    ]


# ----- the receiver and the client --------------------------------------------------


def _decisions(line: Timeline) -> dict[str, tuple[str, Happening]]:
    """The store's decision on each request: read, accepted or rejected."""
    found: dict[str, tuple[str, Happening]] = {}
    for e in line.events:
        request = str(e.get("request"))
        if e.kind == "deliver":
            found[request] = (str(e.get("outcome")), e)
        elif e.kind == "check" and not e.get("passed"):
            found[request] = ("rejected", e)
        elif e.kind == "apply":
            found[request] = ("accepted", e)
    return found


def _reply_checks(line: Timeline, decided: Mapping[str, tuple[str, Happening]]) -> list[Impossible]:
    """Each outcome a worker heard is the one the store decided (and read the version served)."""
    found = []
    for e in line.events:
        if e.kind != "reply":
            continue
        request, heard = str(e.get("request")), str(e.get("outcome"))
        decision = decided.get(request)
        if decision is None:
            found.append(
                Impossible(
                    "reply-undecided",
                    e.index,
                    e.t,
                    f"W{e.worker} heard '{heard}' for request {request} {_at(e)}, but the "
                    "store's log never decided that request",
                )
            )
        elif decision[0] != heard:
            found.append(
                Impossible(
                    "reply-contradicts",
                    e.index,
                    e.t,
                    f"W{e.worker} heard '{heard}' for request {request} {_at(e)}, but the "
                    f"store's log decided '{decision[0]}' at {decision[1].t:.3f} s",
                )
            )
        elif heard == "read" and e.get("version") is not None:
            served = decision[1].get("version_before")
            if served is not None and int(served) != int(e.get("version")):
                found.append(
                    Impossible(
                        "reply-contradicts",
                        e.index,
                        e.t,
                        f"W{e.worker}'s read {request} returned version {e.get('version')}, "
                        f"but the store's log served version {served}",
                    )
                )
    return found


@dataclass
class _Receiver:
    """The receiver's state as its own log tells it, walked event by event."""

    keeps_mark: bool
    durable: bool
    mark: int = 0
    version: int = 0
    value: Any = None
    unlogged: int = 0
    """Indeterminate writes sent so far that may have been applied without a log line."""
    applied_unlogged: int = 0


def _receiver_checks(line: Timeline, unknown_sends: set[int]) -> tuple[list[Impossible], _Receiver]:
    """The store's marks and data versions, step by step, against what it accepted."""
    s = line.history.settings
    state = _Receiver(keeps_mark=s.keeps_mark, durable=s.hwm == "durable")
    found: list[Impossible] = []
    lives = _key_lives(line)
    checked: set[str] = set()

    def refuse(code: str, e: Happening, words: str) -> None:
        found.append(Impossible(code, e.index, e.t, words))

    for e in line.events:
        if e.index in unknown_sends:
            state.unlogged += 1
        if e.kind == "storage-start":
            _check_start(e, s.receiver, s.hwm, state, refuse)
            continue
        if e.kind not in ("deliver", "check", "apply"):
            continue
        who = f"W{e.worker}'s {e.get('op', 'write')} {e.get('request')}"
        marked = e.get("mark_before")
        if state.keeps_mark and marked is not None and int(marked) != state.mark:
            refuse(
                "mark-drift",
                e,
                f"the store recorded mark {marked} before {who} {_at(e)}, "
                f"but the last write it accepted set the mark to {state.mark}",
            )
        before = e.get("version_before")
        if before is not None:
            _check_version(e, who, int(before), state, refuse)
        broken = _rule_broken(e, s.receiver, state, lives, checked)
        if broken:
            refuse("receiver-rule", e, f"the store {broken}")
        if e.kind == "check" and e.get("passed"):
            checked.add(str(e.get("request")))
        if not e.is_write_accepted:
            after = e.get("version_after")
            if after is not None and before is not None and int(after) != int(before):
                refuse(
                    "version-step",
                    e,
                    f"{who} was rejected {_at(e)}, yet the version went from {before} to {after}",
                )
            continue
        after = e.get("version_after")
        if before is not None and after is not None:
            if int(after) != int(before) + 1:
                words = "changed nothing" if int(after) == int(before) else f"moved it to {after}"
                refuse(
                    "version-step",
                    e,
                    f"{who} was accepted {_at(e)} at version {before} and {words}: an "
                    "accepted write adds exactly one to the version",
                )
            state.version = int(after)
        state.value = e.get("value")
        if state.keeps_mark:
            token = int(e.get("token"))
            if e.get("mark_after") is not None and int(e.get("mark_after")) != token:
                refuse(
                    "mark-token",
                    e,
                    f"the store recorded mark {e.get('mark_after')} after accepting {who} with "
                    f"token {token} {_at(e)}: accepting a write sets the mark to its token",
                )
            recorded = e.get("mark_after")
            state.mark = int(recorded) if recorded is not None else token
    return found, state


def _key_lives(line: Timeline) -> dict[int, tuple[int, int | None]]:
    """Each grant's lock key in etcd's revisions: created at, and deleted at (None: never)."""
    ends = {
        int(e.get("grant")): int(
            e.get("revision") if e.kind == "revoked" else e.get("etcd_revision")
        )
        for e in line.events
        if e.kind == "revoked" or (e.kind == "release" and e.get("deleted"))
    }
    return {revision: (revision, ends.get(revision)) for revision in line.grants}


def _rule_broken(
    e: Happening,
    receiver: str,
    state: _Receiver,
    lives: Mapping[int, tuple[int, int | None]],
    checked: set[str],
) -> str:
    """How a decision of the store breaks its receiver's own rule, in words ('' when it
    keeps it): a plain store accepts every write; a fenced one accepts a token exactly when
    it is at least the mark (at once, or at the check of a non-atomic one, whose apply
    follows a passed check); etcd-txn writes exactly when the writer's key still exists."""
    if e.get("op") == "read":
        return (
            ""
            if e.kind == "deliver" and e.get("outcome") == "read"
            else (
                f"answered W{e.worker}'s read {e.get('request')} with '{e.get('outcome')}' {_at(e)}"
            )
        )
    token, who = int(e.get("token")), f"W{e.worker}'s write {e.get('request')}"
    accepted = e.is_write_accepted or (e.kind == "check" and bool(e.get("passed")))
    if receiver == "none":
        return "" if accepted else f"rejected {who} {_at(e)}, but a plain store accepts every write"
    if receiver in ("fenced", "fenced-nonatomic") and e.kind != "apply":
        if accepted == (token >= state.mark):
            return ""
        verb = "let" if accepted else "refused"
        return (
            f"{verb} {who} with token {token} {_at(e)} with its mark at {state.mark}: a fenced "
            "store accepts a token exactly when it is at least the mark"
        )
    if e.kind == "apply":
        if str(e.get("request")) in checked:
            return ""
        return f"applied {who} {_at(e)} without a check it passed"
    at = e.get("etcd_revision")
    if receiver != "etcd-txn" or at is None:
        return ""
    created, deleted = lives.get(int(e.get("grant")), (None, None))
    revision = int(at)
    if accepted:
        alive = (
            created is not None and created < revision and (deleted is None or deleted > revision)
        )
    else:
        alive = (
            created is not None and created <= revision and (deleted is None or deleted > revision)
        )
    if alive == accepted:
        return ""
    state_words = "still existed" if alive else "no longer existed"
    verb = "wrote" if accepted else "refused"
    return (
        f"{verb} {who} at etcd revision {revision} {_at(e)}, but W{e.worker}'s lock key "
        f"(grant {e.get('grant')}) {state_words} there: etcd-txn writes exactly when the "
        "writer's key exists"
    )


def _check_start(e: Happening, receiver: str, hwm: str, state: _Receiver, refuse: Any) -> None:
    """A storage process starts: the receiver it runs, and the mark it starts from."""
    said = e.get("receiver")
    if said is not None and said != receiver:
        refuse(
            "receiver",
            e,
            f"the storage process says it ran receiver '{said}' {_at(e)}, but the run's "
            f"settings say '{receiver}'",
        )
    if e.get("hwm") is not None and state.keeps_mark and e.get("hwm") != hwm:
        refuse(
            "receiver",
            e,
            f"the storage process says it kept a {e.get('hwm')} mark {_at(e)}, but the run's "
            f"settings say {hwm}",
        )
    mark = e.get("mark")
    if not state.keeps_mark or mark is None:
        return
    expected = state.mark if state.durable else 0
    if int(mark) != expected:
        kind = "durable" if state.durable else "volatile"
        refuse(
            "mark-restart",
            e,
            f"the storage process (incarnation {e.get('incarnation')}) started {_at(e)} with "
            f"mark {mark}, but its {kind} mark was {expected}",
        )
    state.mark = int(mark)


def _check_version(e: Happening, who: str, before: int, state: _Receiver, refuse: Any) -> None:
    """The version a decision starts from is the store's current one (or explained by
    indeterminate writes applied without a log line)."""
    if before < state.version:
        refuse(
            "version-back",
            e,
            f"the store served {who} at version {before} {_at(e)}, but the data was already "
            f"at version {state.version}: versions never go back",
        )
    elif before > state.version:
        extra = before - state.version
        if extra > state.unlogged:
            refuse(
                "version-gap",
                e,
                f"the store served {who} at version {before} {_at(e)}, but the last write it "
                f"accepted left version {state.version}, and no write of unknown outcome "
                "explains the difference",
            )
        else:
            state.unlogged -= extra
            state.applied_unlogged += extra
        state.version = before


def _final_data_checks(
    final: Happening | None, state: _Receiver, unknown: Sequence[Happening]
) -> tuple[list[Impossible], int | None]:
    """The database's final row against the accepted writes; how many indeterminate writes
    it says were applied (None: no final read)."""
    data = final.get("data") if final is not None else None
    if final is None or not isinstance(data, dict):
        return [], None
    found = []
    version, value = data.get("version"), data.get("value")
    applied: int | None = None
    if version is not None:
        extra = int(version) - state.version
        if not 0 <= extra <= state.unlogged:
            found.append(
                Impossible(
                    "final-version",
                    final.index,
                    final.t,
                    f"the final read of the data found version {version}, but the accepted "
                    f"writes leave version {state.version}"
                    + (
                        f" (or up to {state.version + state.unlogged} with the writes of "
                        "unknown outcome)"
                        if state.unlogged
                        else ""
                    ),
                )
            )
        else:
            applied = extra
    if (
        value is not None
        and state.value is not None
        and applied == 0
        and int(value) != int(state.value)
    ):
        found.append(
            Impossible(
                "final-value",
                final.index,
                final.t,
                f"the final read of the data found value {value}, but the last accepted "
                f"write wrote {state.value}",
            )
        )
    mark = data.get("mark")
    possible = {state.mark} | ({int(e.get("token")) for e in unknown} if applied != 0 else set())
    if state.keeps_mark and state.durable and mark is not None and int(mark) not in possible:
        found.append(
            Impossible(
                "final-mark",
                final.index,
                final.t,
                f"the final read of the durable mark found {mark}, but the last accepted "
                f"write set it to {state.mark}",
            )
        )
    return found, applied


# ----- indeterminate writes --------------------------------------------------


def indeterminate_sends(
    line: Timeline, decided: Mapping[str, tuple[str, Happening]]
) -> list[Happening]:
    """Writes sent whose outcome nobody knows: no store decision and no reply or fail."""
    completed = {
        str(e.get("request"))
        for e in line.events
        if e.kind in ("reply", "fail") and e.get("request") is not None
    }
    return [
        e
        for e in line.events
        if e.kind == "send"
        and e.get("op") == "write"
        and str(e.get("request")) not in decided
        and str(e.get("request")) not in completed
    ]


def _resolve(
    sends: Iterable[Happening], state: _Receiver, applied_at_end: int | None
) -> tuple[UnknownWrite, ...]:
    """What decided each indeterminate write: the data versions during the run, the final read."""
    sends = list(sends)
    total = state.applied_unlogged + (applied_at_end or 0)
    result = []
    for e in sends:
        decided: str | None = None
        by = ""
        if applied_at_end is not None and total == 0:
            decided, by = "not applied", "the final read of the data"
        elif applied_at_end is not None and total == len(sends):
            decided, by = "applied", "the data versions and the final read"
        elif state.applied_unlogged == len(sends):
            decided, by = "applied", "the data versions"
        result.append(UnknownWrite(e.worker, str(e.get("request")), e.t, decided, by))
    return tuple(result)


def final_read(line: Timeline) -> Happening | None:
    """The controller's final read of the database and of the lock keys, if the run made one."""
    return next((e for e in reversed(line.events) if e.kind == "final-read"), None)


def cross_check(line: Timeline) -> Witnessed:
    """Every cross-check of the module docstring, and the indeterminate writes."""
    decided = _decisions(line)
    unknown = indeterminate_sends(line, decided)
    final = final_read(line)
    receiver, state = _receiver_checks(line, {e.index for e in unknown})
    data, applied = _final_data_checks(final, state, unknown)
    found = [
        *_grant_checks(line),
        *grant_checks(line),
        *store_life_checks(line),
        *nemesis_checks(line),
        *_order_checks(line),
        *_pause_checks(line),
        *_crash_checks(line),
        *_renewal_checks(line),
        *_lock_checks(line, final),
        *_reply_checks(line, decided),
        *receiver,
        *data,
    ]
    found.sort(key=lambda i: (i.t, i.code))
    return Witnessed(tuple(found), _resolve(unknown, state, applied))
