"""Tokens tied to grants: every number a worker sends is one the lock service really gave it.

The worker's word is not enough: a grant is what the service's own record says, as the
lab's observer of the service recorded it (`lock-put`: etcd's watch of the lock key, the
lock API's owner key, ZooKeeper's lowest znode, the Redis key's value and the number its
script filed), and the token of a grant is the number that record holds for the run's
token source (`lab.lock_table.TokenSource.recorded`: the key's create revision or version,
the lease, the znode's sequence, the Redis value or counter). Refusals:

- `grant-unrecorded`: a worker says it was granted the lock, but the service's record has
  no such grant (in a finished run; a partial run's observer may have stopped early; and a
  service whose record is the observer's looks, ZooKeeper, may miss a grant its worker
  released sooner after hearing it than the observer's slowest interval between looks);
- `grant-holder`, `grant-token`: the record names another holder, or another token;
- `grant-unasked`: a grant made to a worker that had not asked for the lock then (no
  acquire of its own was open, or it asked after the grant);
- `token-order`: a counter token (create revision, znode sequence, Redis counter) that is
  not higher than every earlier grant's: the service's counter never goes back;
- `token-reused`: a random token (a lease ID, a Redis value) handed out twice;
- `step-unheld`: a worker sent a request, a keepalive or a release under a grant it never
  received, or with another token than that grant's;
- `decision-unsent`: the store decided a request nobody sent, or with another worker,
  grant, token or operation than the request that was sent, or before it was sent.

A grant the service made to a worker that never heard of it (its answer lost, or a queued
ZooKeeper contender whose znode became the lowest while it was paused, and whose session
then expired) is no contradiction when the worker had asked for the lock then: it is a
grant whose holder never saw it, and the worker takes no step under it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lab.allowances import measured
from lab.contradiction import Impossible
from lab.events import Event
from lab.history import Timeline
from lab.lock_table import SERVICES, recorded_token
from model.options import Token

DECISIONS = ("deliver", "check", "apply")
"""The store's decisions on a request."""


@dataclass(frozen=True)
class _Asked:
    """One acquire of a worker: when it was invoked and when it completed (None: never)."""

    invoked: float
    completed: float | None


def _acquires(events: Sequence[Event]) -> dict[int, list[_Asked]]:
    """Each worker's acquires, from its own invokes and completions."""
    found: dict[int, list[_Asked]] = {}
    open_since: dict[int, float] = {}
    for e in events:
        w = int(e.get("worker") or 0)
        if e.get("source") != f"W{w}":
            continue
        if e["kind"] == "invoke" and e.get("op") == "acquire":
            open_since[w] = float(e["t"])
        elif w in open_since and (
            e["kind"] == "grant" or (e["kind"] in ("fail", "info") and e.get("op") == "acquire")
        ):
            found.setdefault(w, []).append(_Asked(open_since.pop(w), float(e["t"])))
    for w, since in open_since.items():
        found.setdefault(w, []).append(_Asked(since, None))
    return found


def _was_asking(asked: Sequence[_Asked], at: float, until: float | None) -> bool:
    """Whether an acquire of the worker was open at `at` (completed at `until` or later)."""
    for one in asked:
        done = one.completed
        if one.invoked <= at and (
            done is None or done >= at or (until is not None and done >= until)
        ):
            return True
    return False


def _record_checks(line: Timeline, puts: Mapping[int, Event]) -> list[Impossible]:
    """Each grant a worker heard is in the service's record, to that worker, with its token;
    each grant only the record has was made to a worker asking for the lock."""
    history = line.history
    settings = history.settings
    service = SERVICES[settings.lock_service]
    asked = _acquires(sorted(history.events, key=lambda e: e["t"]))
    watched = [e["t"] for e in history.events if e["kind"] in ("lock-put", "lock-delete")]
    last_watched = max(watched, default=0.0)
    found: list[Impossible] = []
    for e in line.events:
        if e.kind != "grant":
            continue
        revision, w = int(e.get("revision")), e.worker
        who = f"W{w}'s grant {revision}"
        put = puts.get(revision)
        if e.get("unanswered"):
            if not _was_asking(asked.get(w, []), e.t, None):
                found.append(
                    Impossible(
                        "grant-unasked",
                        e.index,
                        e.t,
                        f"{service.short}'s record shows a grant to W{w} (grant {revision}) at "
                        f"{e.t:.3f} s, but W{w} was not asking for the lock then",
                    )
                )
            continue
        if put is None:
            held = _between_looks(line, e) if not service.records_every_grant else None
            if not (history.partial and e.t >= last_watched) and held is None:
                found.append(
                    Impossible(
                        "grant-unrecorded",
                        e.index,
                        e.t,
                        f"W{w} says {service.short} granted it the lock (grant {revision}, "
                        f"token {e.get('token')}) at {e.t:.3f} s, but the lab's record of "
                        f"{service.short} has no such grant",
                    )
                )
            continue
        holder = str(put.get("holder") or "")
        unnamed = not holder and settings.lock_service == "etcd-lock-api"
        if holder != f"W{w}" and not unnamed:  # the lock API's holder key may be gone by then
            found.append(
                Impossible(
                    "grant-holder",
                    e.index,
                    e.t,
                    f"W{w} says {service.short} granted it the lock (grant {revision}) at "
                    f"{e.t:.3f} s, but {service.short}'s record names "
                    f"{holder or 'nobody'} as that grant's holder",
                )
            )
        expected = recorded_token(put, settings.lock_service, settings.token)
        if expected is not None and int(e.get("token")) != expected:
            found.append(
                Impossible(
                    "grant-token",
                    e.index,
                    e.t,
                    f"{who} carries token {e.get('token')}, but {service.short}'s record of "
                    f"that grant gives token {expected} ({settings.token})",
                )
            )
        invoked = e.get("asked")
        at = float(invoked) if isinstance(invoked, int | float) else e.t
        if not _was_asking(asked.get(w, []), at, e.observed if e.observed is not None else e.t):
            found.append(
                Impossible(
                    "grant-unasked",
                    e.index,
                    e.t,
                    f"W{w} recorded grant {revision} at {e.t:.3f} s without an acquire of its "
                    "own open then",
                )
            )
    return found


def _between_looks(line: Timeline, grant: Any) -> float | None:
    """How long a worker held a grant its service's observer never saw, when that is short
    enough to fall between two of the observer's looks (its slowest interval, as the run
    measured it): the worker released it that soon after it heard it (None otherwise)."""
    revision = int(grant.get("revision"))
    released = next(
        (
            e.t
            for e in line.events
            if e.kind == "invoke"
            and e.get("op") == "release"
            and e.worker == grant.worker
            and e.get("grant") is not None
            and int(e.get("grant")) == revision
        ),
        None,
    )
    gap = measured(line, "observer_seconds")
    if released is None or gap is None:
        return None
    held = released - grant.t
    return held if held < gap else None


def _order_checks(line: Timeline) -> list[Impossible]:
    """Counter tokens rise with every grant; random tokens are never handed out twice."""
    settings = line.history.settings
    service = SERVICES[settings.lock_service]
    model = service.token(settings.token).model
    found: list[Impossible] = []
    highest: tuple[int, Any] | None = None
    given: dict[int, Any] = {}
    for info in line.grants.values():
        token = info.token
        if model is Token.COUNTER and highest is not None and token <= highest[0]:
            earlier = highest[1]
            found.append(
                Impossible(
                    "token-order",
                    None,
                    info.t,
                    f"W{info.worker}'s grant {info.revision} at {info.t:.3f} s carries token "
                    f"{token}, not higher than token {highest[0]} of W{earlier.worker}'s "
                    f"earlier grant {earlier.revision}: {service.short}'s "
                    f"{settings.token} never goes back",
                )
            )
        if model is Token.RANDOM and token in given:
            earlier = given[token]
            found.append(
                Impossible(
                    "token-reused",
                    None,
                    info.t,
                    f"W{info.worker}'s grant {info.revision} at {info.t:.3f} s carries token "
                    f"{token}, already handed out with W{earlier.worker}'s grant "
                    f"{earlier.revision}: {service.short} never hands out a {settings.token} "
                    "twice",
                )
            )
        given.setdefault(token, info)
        if highest is None or token > highest[0]:
            highest = (token, info)
    return found


def _step_checks(line: Timeline) -> list[Impossible]:
    """Every send, keepalive and release is under a grant its worker received, with that
    grant's token; every decision of the store is on a request as it was sent."""
    heard: dict[tuple[int, int], tuple[int, float]] = {}
    sent: dict[str, Event] = {}
    found: list[Impossible] = []
    raw = sorted(line.history.events, key=lambda e: e["t"])
    for e in raw:
        w, kind = int(e.get("worker") or 0), e["kind"]
        if kind == "grant" and e.get("source") == f"W{w}":
            heard[(w, int(e["revision"]))] = (int(e["token"]), float(e["t"]))
            continue
        own = e.get("source") == f"W{w}"
        under = kind in ("send", "renew") or (
            kind == "invoke" and e.get("op") in ("release", "renew")
        )
        if own and under and e.get("grant") is not None:
            grant = int(e["grant"])
            what = (
                "request " + str(e.get("request")) if kind == "send" else f"a {e.get('op') or kind}"
            )
            mine = heard.get((w, grant))
            if mine is None:
                found.append(
                    _unheld(
                        e,
                        f"W{w} sent {what} under grant {grant} at {e['t']:.3f} s, but "
                        f"it never received that grant",
                    )
                )
            elif kind == "send" and int(e.get("token", -1)) != mine[0]:
                found.append(
                    _unheld(
                        e,
                        f"W{w} sent {what} with token {e.get('token')} under grant "
                        f"{grant} at {e['t']:.3f} s, but that grant carries token {mine[0]}",
                    )
                )
            if kind == "send":
                sent.setdefault(str(e.get("request")), e)
            continue
        if kind in DECISIONS and e.get("source") == "storage":
            found.extend(_decision_check(e, sent.get(str(e.get("request")))))
    return found


def _unheld(e: Event, words: str) -> Impossible:
    """A step under a grant its worker does not hold."""
    return Impossible("step-unheld", None, float(e["t"]), words)


def _decision_check(e: Event, send: Event | None) -> list[Impossible]:
    """A decision of the store on a request: one that was sent, as it was sent."""
    request = str(e.get("request"))
    if send is None:
        return [
            Impossible(
                "decision-unsent",
                None,
                float(e["t"]),
                f"the store decided request {request} at {e['t']:.3f} s, but no worker had sent it",
            )
        ]
    for name in ("worker", "grant", "token", "op", "value", "read_version"):
        if e.get(name) != send.get(name):
            return [
                Impossible(
                    "decision-unsent",
                    None,
                    float(e["t"]),
                    f"the store decided request {request} at {e['t']:.3f} s with {name} "
                    f"{e.get(name)}, but W{send.get('worker')} sent it with {name} "
                    f"{send.get(name)}",
                )
            ]
    return []


def grant_checks(line: Timeline) -> list[Impossible]:
    """Every check of the module docstring."""
    puts: dict[int, Event] = {}
    for e in line.history.events:
        if e["kind"] == "lock-put" and e.get("create_revision", e.get("revision")) == e.get(
            "revision"
        ):
            puts.setdefault(int(e["revision"]), e)
    return [*_record_checks(line, puts), *_order_checks(line), *_step_checks(line)]
