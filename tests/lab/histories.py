"""Hand-made lab histories for the unit tests: events written the way the processes write them."""

from __future__ import annotations

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
    """A pause or resume."""
    return {"t": t, "source": "lab", "kind": kind, "worker": w}


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
    return History("paused-worker", Settings(receiver=receiver), tuple(events))
