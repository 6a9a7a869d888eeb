"""The controller's view of the lock in each service: who holds it, as the service says.

For etcd the controller watches the lock key (lab.runner). Here are the other views,
each recording `lock-put` when the lock gets a new holder and `lock-delete` when the
holder's lock is gone (released, expired, or its session ended), in the same fields as the
etcd watch, so the history's merge and the witnesses read every service alike:

- `LockApiView` turns the etcd watch's events on the lock API's keys into those records:
  a key queued behind another is not a grant, only the oldest key is, and only while its
  lease has time left (a caller's lease runs out while it queues: nobody renews it, and
  etcd then answers the lock call with "session is expired");
- `ZooKeeperObserver` polls the lock znode's children: the lowest sequence holds it (its
  record names the znode, and its sequence as `token`);
- `RedisObserver` polls the lock key's value (redis-py's random value, kept as
  `lock_value`, with the random token read off it as `token`) and the grant number the
  grant's script filed under it (`revision`); it also reads the script's log of every
  grant, so a grant made and ended between two looks is recorded too (as seen then).

ZooKeeper and Redis give the end of a grant no number of the same order as the grants, so
a `lock-delete` there carries the grant's own number as its revision and its time is when
the poll saw it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from lab.lock import LOCK_KEY, encode
from lab.lock_clients import (
    GRANTS_COUNTER,
    GRANTS_LOG,
    HOLDERS_HASH,
    lock_api_holder,
    quiet_kazoo,
    random_token,
    sequence_of,
    zookeeper_path,
)

POLL_SECONDS: Final = 0.005
ANSWER_SECONDS: Final = 2.0
"""How long one look waits for the service (kazoo would wait for a reconnection forever)."""
Record = Callable[..., object]
"""Record one event: `record(kind, at=..., **fields)`."""


def lease_left(client: Any, lease: int) -> bool:
    """Whether a lease still has time left (True if etcd cannot be asked)."""
    try:
        found = client.post(client.get_url("/kv/lease/timetolive"), json={"ID": lease})
    except Exception:  # etcd3gw raises several kinds; then count the key as queued normally
        return True
    return int(found.get("TTL", 1)) > 0


class LockApiView:
    """etcd's lock API seen through the watch: the oldest queued key is the holder."""

    def __init__(self, client: Any, prefix: str, record: Record) -> None:
        self.client = client
        self.prefix = prefix
        self.record = record
        self.keys: dict[int, tuple[str, int, int, str]] = {}
        """Queued keys by create revision: key, lease, version, holder."""
        self.owner: int | None = None

    def on_event(self, event: Any, at: float) -> None:
        """Take one watch event on the lock API's keys."""
        kv = event["kv"]
        key = kv["key"].decode() if isinstance(kv["key"], bytes) else str(kv["key"])
        revision = int(kv["mod_revision"])
        if event.get("type") == "DELETE":
            previous = event.get("prev_kv") or {}
            created = int(previous.get("create_revision", 0))
            gone = self.keys.pop(created, None)
            if created == self.owner and gone is not None:
                self.record("lock-delete", at=at, revision=revision, grant=created, holder=gone[3])
                self.owner = None
        else:
            created = int(kv.get("create_revision", 0))
            lease = int(kv.get("lease", 0))
            holder = lock_api_holder(self.client, self.prefix, lease)
            self.keys.setdefault(created, (key, lease, int(kv.get("version", 1)), holder))
        self._owner_changed(at, revision)

    def _owner_changed(self, at: float, revision: int) -> None:
        """Record the new holder when the oldest key changes."""
        if self.owner is not None or not self.keys:
            return
        created = min(self.keys)
        _, lease, version, holder = self.keys[created]
        if not lease_left(self.client, lease):
            return  # its lease ran out while it queued: etcd refuses it ("session is expired")
        self.owner = created
        self.record(
            "lock-put",
            at=at,
            revision=created,
            create_revision=created,
            version=version,
            lease=lease,
            holder=holder,
            order_revision=revision,
        )


def lock_api_owner(client: Any, prefix: str) -> list[dict[str, Any]]:
    """The lock API's owner key at the end (the oldest queued key), as the final read has it."""
    found = client.post(
        client.get_url("/kv/range"),
        json={
            "key": encode(prefix + LOCK_KEY + "/"),
            "range_end": encode(prefix + LOCK_KEY + "0"),
        },
    )
    kvs = sorted(found.get("kvs") or [], key=lambda kv: int(kv.get("create_revision", 0)))
    return [
        {
            "create_revision": int(kv.get("create_revision", 0)),
            "lease": int(kv.get("lease", 0)),
            "holder": lock_api_holder(client, prefix, int(kv.get("lease", 0))),
        }
        for kv in kvs[:1]
    ]


class PollingObserver:
    """A thread asking the service who holds the lock, recording each change."""

    def __init__(self, record: Record, now: Callable[[], float]) -> None:
        self.record = record
        self.now = now
        self.current: dict[str, Any] | None = None
        self.done = threading.Event()
        self.misses = 0
        self.slowest = 0.0
        """The longest from the start of one look at the service to the end of the next:
        how late the observer may have seen a change (seconds)."""
        self.looked: float | None = None
        """When the last look started (the run's monotonic clock)."""
        self.thread = threading.Thread(target=self._loop, name="fencing-lab-lock", daemon=True)

    def start(self) -> None:
        """Start polling."""
        self.thread.start()

    def holder_now(self) -> dict[str, Any] | None:
        """The lock's holder as the service reports it now: revision, lease, holder, token."""
        raise NotImplementedError

    def made_since(self) -> list[dict[str, Any]]:
        """The grants the service's own log lists since the last look, in its order (as
        `holder_now` gives one); [] for a service that keeps no such log."""
        return []

    def _loop(self) -> None:
        """Poll until stopped."""
        while not self.done.wait(POLL_SECONDS):
            self.poll()

    def poll(self) -> None:
        """One look: record a deletion and a new holder when the holder changed."""
        asked = time.monotonic()
        try:
            made = self.made_since()
            found = self.holder_now()
        except Exception:  # the service restarting or gone: counted, seen by the run
            self.misses += 1
            return
        self.misses = 0
        at = self.now()
        if self.looked is not None and not self.done.is_set():
            self.slowest = max(self.slowest, time.monotonic() - self.looked)
        self.looked = asked
        for grant in made:
            self._between_looks(grant, found, at)
        current = self.current
        if current is not None and (found is None or found["revision"] != current["revision"]):
            self.record(
                "lock-delete",
                at=at,
                revision=current["revision"],
                grant=current["revision"],
                holder=current["holder"],
            )
            self.current = None
        if found is not None and self.current is None and found["holder"]:
            self.record(
                "lock-put",
                at=at,
                revision=found["revision"],
                create_revision=found["revision"],
                version=1,
                lease=found["lease"],
                holder=found["holder"],
                token=found["token"],
                **found.get("extra", {}),
            )
            self.current = found

    def _between_looks(
        self, grant: dict[str, Any], found: dict[str, Any] | None, at: float
    ) -> None:
        """A grant the service's log lists since the last look: unless it is the holder seen
        now or before, it was made and ended between two looks, so the lock it followed had
        ended too; both are recorded as seen now."""
        known = {part["revision"] for part in (self.current, found) if part is not None}
        if grant["revision"] in known:
            return
        current = self.current
        if current is not None:
            self.record(
                "lock-delete",
                at=at,
                revision=current["revision"],
                grant=current["revision"],
                holder=current["holder"],
            )
            self.current = None
        self.record(
            "lock-put",
            at=at,
            revision=grant["revision"],
            create_revision=grant["revision"],
            version=1,
            lease=grant["lease"],
            holder=grant["holder"],
            token=grant["token"],
            **grant.get("extra", {}),
        )
        self.record(
            "lock-delete",
            at=at,
            revision=grant["revision"],
            grant=grant["revision"],
            holder=grant["holder"],
        )

    def final_locks(self) -> list[dict[str, Any]]:
        """The lock as the service holds it at the end (for the final read): one more look,
        recorded like every other, so a lock that expired after the last poll is seen to end
        in the history before the final read says it is gone."""
        misses = self.misses
        self.poll()
        if self.misses > misses:
            raise ConnectionError("the lock service did not answer the final read")
        found = self.current
        if found is None:
            return []
        return [
            {
                "create_revision": found["revision"],
                "lease": found["lease"],
                "holder": found["holder"],
            }
        ]

    def stop(self) -> None:
        """Stop polling (after one last look)."""
        if self.thread.is_alive():
            self.done.set()
            self.thread.join(timeout=2)
            with contextlib.suppress(Exception):
                self.poll()

    def close(self) -> None:
        """Stop polling and let go of the service."""
        self.stop()


class ZooKeeperObserver(PollingObserver):
    """The lowest-sequence child of the lock znode, through the controller's own session."""

    def __init__(self, url: str, prefix: str, record: Record, now: Callable[[], float]) -> None:
        super().__init__(record, now)
        from kazoo.client import KazooClient

        quiet_kazoo()
        self.client = KazooClient(hosts=url, timeout=10.0)
        self.client.start(timeout=10)
        self.path = zookeeper_path(prefix)
        self.client.ensure_path(self.path)

    def holder_now(self) -> dict[str, Any] | None:
        """The lowest child's czxid, session, data and sequence (None: no child)."""
        from kazoo.exceptions import NoNodeError

        children = self.client.get_children_async(self.path).get(timeout=ANSWER_SECONDS)
        for node in sorted(children, key=sequence_of):
            try:
                data, stat = self.client.get_async(f"{self.path}/{node}").get(
                    timeout=ANSWER_SECONDS
                )
            except NoNodeError:
                continue
            return {
                "revision": int(stat.czxid),
                "lease": int(stat.ephemeralOwner),
                "holder": data.decode(errors="replace")[:5],
                "token": sequence_of(node),
                "extra": {"node": node[:100]},
            }
        return None

    def close(self) -> None:
        """Stop polling and close the session."""
        super().close()
        with contextlib.suppress(Exception):
            self.client.stop()
            self.client.close()


class RedisObserver(PollingObserver):
    """The lock key's value, and the holder and grant number the worker filed under it."""

    def __init__(self, url: str, prefix: str, record: Record, now: Callable[[], float]) -> None:
        super().__init__(record, now)
        import redis

        self.redis = redis.Redis.from_url(url, socket_timeout=2.0)
        self.prefix = prefix
        self.logged = 0
        """How many lines of the grant log the observer has read."""

    def holder_now(self) -> dict[str, Any] | None:
        """The lock value's grant (None: no lock, or a grant not filed yet)."""
        value = self.redis.get(self.prefix + LOCK_KEY)
        if value is None:
            return None
        filed = self.redis.hget(self.prefix + HOLDERS_HASH, value)
        if filed is None:
            return None
        holder, number = decode_filed(filed)
        text = value.decode(errors="replace") if isinstance(value, bytes) else str(value)
        return {
            "revision": number,
            "lease": 0,
            "holder": holder,
            "token": random_token(value),
            "extra": {"lock_value": text[:40]},
        }

    def made_since(self) -> list[dict[str, Any]]:
        """The grants the grant script logged since the last look (`value W<n> <grant>`)."""
        lines = self.redis.lrange(self.prefix + GRANTS_LOG, self.logged, -1)
        self.logged += len(lines)
        found = []
        for line in lines:
            text = line.decode(errors="replace") if isinstance(line, bytes) else str(line)
            value, _, filed = text.partition(" ")
            holder, number = decode_filed(filed)
            found.append(
                {
                    "revision": number,
                    "lease": 0,
                    "holder": holder,
                    "token": random_token(value),
                    "extra": {"lock_value": value[:40]},
                }
            )
        return found

    def counter(self) -> int:
        """The grant counter's value now (0 if absent: never raised, or Redis restarted)."""
        return int(self.redis.get(self.prefix + GRANTS_COUNTER) or 0)

    def close(self) -> None:
        """Stop polling and remove the run's keys."""
        super().close()
        with contextlib.suppress(Exception):
            keys = list(self.redis.scan_iter(match=self.prefix + "*"))
            if keys:
                self.redis.delete(*keys)
            self.redis.close()


def decode_filed(filed: bytes | str) -> tuple[str, int]:
    """`W1 7` as filed by a Redis worker: the holder and the grant number."""
    text = filed.decode(errors="replace") if isinstance(filed, bytes) else filed
    holder, _, number = text.partition(" ")
    return holder[:5], int(number) if number.isdigit() else 0


def observer_for(
    service: str, url: str, prefix: str, record: Record, now: Callable[[], float]
) -> PollingObserver | None:
    """The polling observer of a service (None for the etcd services: they are watched)."""
    if service == "zookeeper":
        return ZooKeeperObserver(url, prefix, record, now)
    if service == "redis":
        return RedisObserver(url, prefix, record, now)
    return None
