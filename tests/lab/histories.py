"""Hand-made lab histories for the unit tests: events written the way the processes write them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lab.history import History
from lab.settings import Settings


def grant(
    t: float, w: int, revision: int, token: int | None = None, **extra: Any
) -> dict[str, Any]:
    """W's grant as the worker records it (the watch's PUT is added by `watch_put`)."""
    return {
        "t": t,
        "source": f"W{w}",
        "kind": "grant",
        "worker": w,
        "revision": revision,
        "version": 1,
        "lease": 1000 + revision,
        "ttl": 1,
        "token": revision if token is None else token,
        **extra,
    }


def watch_put(t: float, w: int, revision: int) -> dict[str, Any]:
    """The watch's record of a grant."""
    return {
        "t": t,
        "source": "lab",
        "kind": "lock-put",
        "revision": revision,
        "create_revision": revision,
        "version": 1,
        "lease": 1000 + revision,
        "holder": f"W{w}",
    }


def revoked(t: float, w: int, revision: int, deleted_at: int) -> dict[str, Any]:
    """The watch's record of the lock key deleted by etcd's lease sweep."""
    return {
        "t": t,
        "source": "lab",
        "kind": "lock-delete",
        "revision": deleted_at,
        "grant": revision,
        "holder": f"W{w}",
    }


def send(
    t: float, w: int, n: int, token: int, revision: int, op: str = "write", **extra: Any
) -> dict[str, Any]:
    """W sends request number n."""
    return {
        "t": t,
        "source": f"W{w}",
        "kind": "send",
        "worker": w,
        "request": f"W{w}-{n}",
        "op": op,
        "token": token,
        "grant": revision,
        **extra,
    }


def deliver(
    t: float,
    w: int,
    n: int,
    token: int,
    revision: int,
    outcome: str,
    op: str = "write",
    **extra: Any,
) -> dict[str, Any]:
    """The store's decision on W's request number n."""
    return {
        "t": t,
        "source": "storage",
        "kind": "deliver",
        "worker": w,
        "request": f"W{w}-{n}",
        "op": op,
        "token": token,
        "grant": revision,
        "outcome": outcome,
        **extra,
    }


def release(t: float, w: int, revision: int, deleted: bool, etcd_revision: int) -> dict[str, Any]:
    """W's release: deleted its key, or found it gone."""
    return {
        "t": t,
        "source": f"W{w}",
        "kind": "release",
        "worker": w,
        "grant": revision,
        "deleted": deleted,
        "etcd_revision": etcd_revision,
    }


def nemesis(t: float, kind: str, w: int) -> dict[str, Any]:
    """A pause (seen stopped at once) or a resume."""
    seen = {"stopped_at": t} if kind == "pause" else {}
    return {"t": t, "source": "lab", "kind": kind, "worker": w, **seen}


def invoke_acquire(t: float, w: int) -> dict[str, Any]:
    """W asks its lock service for the lock."""
    return {"t": t, "source": f"W{w}", "kind": "invoke", "worker": w, "op": "acquire"}


def recorded(
    events: Iterable[dict[str, Any]], receiver: str = "none"
) -> tuple[dict[str, Any], ...]:
    """Hand-made events completed with what every real run records besides: the storage
    process's start (before anything else, when the events have none) and each worker's
    acquire before each grant it heard. Everything in time order, as a history is read."""
    events = list(events)
    added: list[dict[str, Any]] = []
    if not any(e["kind"] == "storage-start" for e in events):
        first = min((float(e["t"]) for e in events), default=0.01)
        added.append(storage_start(max(0.0, first - 0.005), receiver=receiver))
    for e in events:
        if e["kind"] != "grant" or e.get("unanswered"):
            continue
        asked = float(e.get("asked", e["t"] - 0.001))
        added.append(invoke_acquire(round(max(0.0, asked - 0.0005), 6), int(e["worker"])))
    return tuple(sorted([*events, *added], key=lambda e: e["t"]))


def paused_worker(receiver: str, late_outcome: str) -> History:
    """The paused worker's history: W1 granted (rev 2), paused, revoked at 1.40 s; W2 granted
    (rev 4), writes and releases; W1 resumes and writes with token 2."""
    events = [
        grant(0.10, 1, 2),
        watch_put(0.101, 1, 2),
        nemesis(0.11, "pause", 1),
        revoked(1.50, 1, 2, 3),
        grant(1.52, 2, 4),
        watch_put(1.521, 2, 4),
        send(1.53, 2, 1, 4, 4),
        deliver(1.54, 2, 1, 4, 4, "accepted", mark_before=0, mark_after=4),
        release(1.55, 2, 4, True, 5),
        nemesis(1.56, "resume", 1),
        send(1.57, 1, 1, 2, 2),
        deliver(1.58, 1, 1, 2, 2, late_outcome, mark_before=4, mark_after=4),
    ]
    if late_outcome == "accepted":
        events.append(release(1.60, 1, 2, False, 5))
    return History("paused-worker", Settings(receiver=receiver), recorded(events, receiver))


def busy_history(cycles: int, seconds: float = 60.0) -> History:
    """The busiest randomized run the lab can have, as its processes record it: five
    workers in turn, each grant four read-modify-write writes checked then applied (seven
    events each), spread over `seconds`, with every field the real processes write (a
    nemesis with no fault kinds: nothing disturbs it)."""
    events: list[dict[str, Any]] = []
    step = seconds / max(1, cycles * 34)
    t, revision, version, mark = 0.5, 1, 0, 0
    for cycle in range(cycles):
        w = cycle % 5 + 1
        revision += 1
        token = revision
        events.append(grant(t, w, revision, asked=round(t - 0.001, 6)))
        events.append(watch_put(t + step / 2, w, revision))
        for n in range(1, 9, 2):
            fields = {"worker": w, "token": token, "grant": revision}
            read, write = f"W{w}-{cycle * 8 + n}", f"W{w}-{cycle * 8 + n + 1}"
            common = {"source": "storage", **fields}
            events += [
                {
                    "t": t + step,
                    "source": f"W{w}",
                    "kind": "send",
                    "request": read,
                    **fields,
                    "op": "read",
                },
                {
                    "t": t + 2 * step,
                    "kind": "deliver",
                    "outcome": "read",
                    "version_before": version,
                    "request": read,
                    "op": "read",
                    "value": None,
                    "read_version": None,
                    **common,
                },
                {
                    "t": t + 3 * step,
                    "source": f"W{w}",
                    "kind": "reply",
                    "worker": w,
                    "request": read,
                    "outcome": "read",
                },
                {
                    "t": t + 4 * step,
                    "source": f"W{w}",
                    "kind": "send",
                    "request": write,
                    **fields,
                    "value": version + 1,
                    "read_version": version,
                    "op": "write",
                },
                {
                    "t": t + 5 * step,
                    "kind": "check",
                    "passed": True,
                    "mark_before": mark,
                    "request": write,
                    "op": "write",
                    "value": version + 1,
                    "read_version": version,
                    **common,
                },
                {
                    "t": t + 6 * step,
                    "kind": "apply",
                    "outcome": "accepted",
                    "mark_before": mark,
                    "mark_after": token,
                    "version_before": version,
                    "version_after": version + 1,
                    "request": write,
                    "op": "write",
                    "value": version + 1,
                    "read_version": version,
                    **common,
                },
                {
                    "t": t + 7 * step,
                    "source": f"W{w}",
                    "kind": "reply",
                    "worker": w,
                    "request": write,
                    "outcome": "accepted",
                },
            ]
            t += 7 * step
            version += 1
            mark = token
        revision += 1
        events.append(release(t + step, w, revision - 1, True, revision))
        events.append(
            {
                "t": t + step * 1.5,
                "source": "lab",
                "kind": "lock-delete",
                "revision": revision,
                "grant": revision - 1,
                "holder": f"W{w}",
            }
        )
        t += 2 * step
    settings = Settings(
        receiver="fenced-nonatomic",
        workload="rmw",
        workers=5,
        writes=4,
        gap=0.0,
        seconds=seconds,
        seed=1,
        faults="",
    )
    events.append({"t": 0.4, "source": "lab", "kind": "nemesis-start"})
    for w in range(1, 6):
        real = round(t - 0.4, 6)
        clock = {"wall_seconds": real, "real_seconds": real}
        events.append({"t": t, "source": f"W{w}", "kind": "clock", "worker": w, **clock})
    return History("random", settings, recorded(events, "fenced-nonatomic"), seconds=seconds)


def reply(t: float, w: int, n: int, outcome: str, **extra: Any) -> dict[str, Any]:
    """W hears the store's answer to its request number n."""
    return {
        "t": t,
        "source": f"W{w}",
        "kind": "reply",
        "worker": w,
        "request": f"W{w}-{n}",
        "outcome": outcome,
        **extra,
    }


def storage_start(
    t: float, incarnation: int = 1, receiver: str = "fenced", mark: int | None = 0
) -> dict[str, Any]:
    """The storage process says it started: its incarnation, receiver, mark kind and mark."""
    return {
        "t": t,
        "source": "storage",
        "kind": "storage-start",
        "incarnation": incarnation,
        "pid": 4000 + incarnation,
        "receiver": receiver,
        "hwm": "durable",
        "mark": mark,
    }


def final_read(
    t: float, value: int | None, version: int | None, mark: int | None, locks: list[int]
) -> dict[str, Any]:
    """The controller's final reads: the data row and the lock keys (by create revision)."""
    return {
        "t": t,
        "source": "lab",
        "kind": "final-read",
        "data": {"value": value, "version": version, "mark": mark},
        "locks": [{"create_revision": r, "lease": 1000 + r, "holder": "W?"} for r in locks],
    }


def witnessed(**changes: Any) -> History:
    """A consistent fenced run seen by every witness: W1 writes and releases, W2 writes and
    its lease is revoked, then the final reads. `changes` replaces events by name (a dict,
    or None to drop it) or adds events (`extra`: a list)."""
    events: dict[str, dict[str, Any] | None] = {
        "start": storage_start(0.01),
        "grant1": grant(0.10, 1, 2, asked=0.09),
        "put1": watch_put(0.101, 1, 2),
        "send1": send(0.12, 1, 1, 2, 2, value=1_000_001),
        "deliver1": deliver(
            0.13,
            1,
            1,
            2,
            2,
            "accepted",
            value=1_000_001,
            mark_before=0,
            mark_after=2,
            version_before=0,
            version_after=1,
        ),
        "reply1": reply(0.14, 1, 1, "accepted", version=0),
        "release1": release(0.20, 1, 2, True, 3),
        "delete1": {**revoked(0.201, 1, 2, 3)},
        "grant2": grant(0.30, 2, 4, asked=0.29),
        "put2": watch_put(0.301, 2, 4),
        "send2": send(0.32, 2, 1, 4, 4, value=2_000_001),
        "deliver2": deliver(
            0.33,
            2,
            1,
            4,
            4,
            "accepted",
            value=2_000_001,
            mark_before=2,
            mark_after=4,
            version_before=1,
            version_after=2,
        ),
        "reply2": reply(0.34, 2, 1, "accepted", version=1),
        "revoke2": revoked(1.45, 2, 4, 5),
        "final": final_read(1.60, 2_000_001, 2, 4, []),
    }
    extra = changes.pop("extra", [])
    for name, value in changes.items():
        assert name in events, name
        events[name] = value
    kept = [event for event in events.values() if event is not None] + list(extra)
    return History("witnessed", Settings(receiver="fenced"), recorded(kept, "fenced"))
