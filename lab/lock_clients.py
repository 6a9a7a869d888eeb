"""The lock clients a worker uses, one per lock service, behind one small interface.

A worker asks `try_acquire` until it gets a grant, sends the grant's token with every
request, and calls `release` at the end; `believes_held` says whether the client library
itself still reports the lock held (only kazoo keeps such a flag). Every request failure
of a library is raised as `LockRequestFailed`, so the worker's bookkeeping (an acquire
that failed is `info`: a key may have been created) is the same for every service.

What the numbers of a grant are, per service:

- etcd (the lab's recipe): the lock key's create revision, its version, the lease ID;
- etcd-lock-api: the owner key etcd's lock API created (`<name>/<lease>`): its create
  revision and version, the lease; the grant is ordered at the revision etcd answered the
  lock call at (after the keys queued before it were deleted);
- zookeeper: the lock znode's czxid (ZooKeeper's global transaction id, which orders it
  among all changes) identifies the grant; the token is the znode's sequence number, the
  number kazoo's recipe itself orders contenders by and that every receiver can read off
  the znode's name (the czxid would fence as well, but the sequence is the recipe's own
  order); the lease is the session ID;
- redis: a grant counter raised with INCR just after the lock was taken identifies the
  grant and is the `counter` token; the `random` token is redis-py's random lock value
  (a UUID's hex), taken as a number from its first 15 hex digits.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import uuid
from dataclasses import dataclass
from typing import Any, Final, Protocol

from etcd3gw.exceptions import Etcd3Exception

from lab.etcd import parse_endpoint
from lab.lock import (
    LOCK_KEY,
    decode,
    delete_if_mine,
    encode,
    grant_lease,
    keep_alive,
    key_exists,
    revoke_lease,
    try_create,
)

HOLDER_KEY: Final = "holder/"
"""etcd's lock API keeps no value: a key `holder/<lease>` on the same lease names the worker."""
HOLDERS_HASH: Final = "holders"
"""Redis: a hash from each lock value to `W<n> <grant>` (the holder and the grant counter)."""
GRANTS_COUNTER: Final = "grants"
GRANTS_LOG: Final = "granted"
"""Redis: a list of every grant in the order Redis made them, `<value> W<n> <grant>` each:
the service's own record, read by the lab's observer (a grant too short for its looks is
still on it)."""
NUMBERED_GRANT: Final = """
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local number = redis.call('incr', KEYS[2])
  redis.call('hset', KEYS[3], ARGV[1], ARGV[3] .. ' ' .. number)
  redis.call('rpush', KEYS[4], ARGV[1] .. ' ' .. ARGV[3] .. ' ' .. number)
  return number
end
return false
"""
"""SET if absent with an expiry, the grant counter's INCR, the holder's name and the grant's
line in the log, as one script: Redis runs it atomically, so a worker paused right after
its SET cannot draw its number after a later grant's (the number is the grant's order and
the counter token)."""
RANDOM_HEX_DIGITS: Final = 15
"""Hex digits of redis-py's lock value kept as the random token (60 bits fit an int64)."""
LOCK_API_EXTRA_SECONDS: Final = 10.0
"""How much longer than one TTL a lock call may wait in etcd's queue."""


class LockRequestFailed(RuntimeError):
    """A request to the lock service failed: its effect (a key created?) is unknown."""


@dataclass(frozen=True)
class Granted:
    """A grant as the service reported it: its identity, numbers, lease and token."""

    revision: int
    """The grant's identity in the history (etcd: create revision; ZooKeeper: czxid; Redis:
    the grant counter)."""
    version: int
    lease: int
    ttl: int
    token: int
    order: int
    """Where the service ordered the grant among its changes (the identity, except for
    etcd's lock API, which grants when the keys before it are gone)."""
    extra: tuple[tuple[str, Any], ...] = ()
    """Further fields the grant's event records (a znode's name, a Redis lock value)."""


class LockClient(Protocol):
    """What a worker needs from a lock service."""

    orders_releases: bool
    """Whether a release that found the lock gone still gets a place in the service's order
    (etcd's revision); otherwise the history orders it by time alone."""

    def try_acquire(self, holder: str) -> Granted | None:
        """One attempt at the lock: the grant, or None while someone else holds it."""

    def release(self, grant: Granted) -> tuple[bool, int]:
        """Give the lock up if it is still this grant's: whether the lock was deleted by it,
        and where the service ordered the release."""

    def believes_held(self, grant: Granted) -> bool | None:
        """Whether the client library still reports this grant held (None: it keeps no flag)."""

    def renew(self, grant: Granted) -> int:
        """Send one keepalive for the grant's lease: the TTL it was restarted with, 0 when
        it had already expired (`LockRequestFailed` if the request failed, or if the service
        takes no keepalives: the settings refuse `--keepalive` for those)."""


class EtcdKeepAlive:
    """Keepalives of an etcd lease on a connection of their own (they are sent from the
    holder's keepalive thread while its main thread may be in another request)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.renewer: Any = None

    def renew(self, grant: Granted) -> int:
        """etcd's lease keepalive: the TTL etcd restarted the lease with, 0 if it expired."""
        if self.renewer is None:
            self.renewer = parse_endpoint(self.url).client()
        try:
            return keep_alive(self.renewer, grant.lease)
        except Etcd3Exception as error:
            raise LockRequestFailed(f"an etcd keepalive failed: {error}") from None


# ----- etcd: the lab's recipe -------------------------------------------------------------


class EtcdRecipe(EtcdKeepAlive):
    """The lab's own recipe: create the lock key if absent, on a lease of one TTL (or, with
    `leased` False, the model's expiry never, with no lease at all)."""

    orders_releases = True

    def __init__(self, url: str, prefix: str, ttl: int, token: str, leased: bool = True) -> None:
        super().__init__(url)
        self.client = parse_endpoint(url).client()
        self.key = prefix + LOCK_KEY
        self.ttl = ttl
        self.source = token
        self.leased = leased

    def try_acquire(self, holder: str) -> Granted | None:
        """Look first (no lease is granted while the key exists), then create it if absent."""
        try:
            if key_exists(self.client, self.key):
                return None
            lease, ttl = grant_lease(self.client, self.ttl) if self.leased else (0, 0)
            grant = try_create(self.client, self.key, holder, lease, ttl)
            if grant is None:
                if lease:
                    revoke_lease(self.client, lease)
                return None
        except Etcd3Exception as error:
            raise LockRequestFailed(f"an etcd request failed: {error}") from None
        token = grant.token(self.source)
        return Granted(grant.revision, grant.version, lease, ttl, token, grant.revision)

    def release(self, grant: Granted) -> tuple[bool, int]:
        """Delete the key if it is still this grant's, then revoke the lease (if it has one)."""
        try:
            deleted, revision = delete_if_mine(self.client, self.key, grant.revision)
        except Etcd3Exception as error:
            raise LockRequestFailed(str(error)) from None
        if grant.lease:
            revoke_lease(self.client, grant.lease)
        return deleted, revision

    def believes_held(self, grant: Granted) -> bool | None:
        """The recipe keeps no flag."""
        return None


# ----- etcd's lock API -----------------------------------------------------------------------


class EtcdLockApi(EtcdKeepAlive):
    """etcd's lock API over its JSON gateway: `/v3/lock/lock` with a lease, `/v3/lock/unlock`
    (the caller keeps its lease alive as with the recipe: etcd's lease keepalive)."""

    orders_releases = True

    def __init__(self, url: str, prefix: str, ttl: int, token: str) -> None:
        super().__init__(url)
        self.endpoint = parse_endpoint(url)
        self.client = self.endpoint.client()
        self.prefix = prefix
        self.name = prefix + LOCK_KEY
        self.ttl = ttl
        self.source = token

    def _post(self, path: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        """POST JSON to the gateway; its answer, or `LockRequestFailed`."""
        try:
            answer = self.client.session.post(
                f"{self.endpoint.url}/v3/{path}", json=body, timeout=timeout
            )
            data = answer.json()
        except Exception as error:  # requests raises several kinds for a gone server
            raise LockRequestFailed(f"etcd's lock API did not answer: {error}") from None
        if answer.status_code != 200 or not isinstance(data, dict):
            raise LockRequestFailed(f"etcd's lock API refused {path}: {str(data)[:120]}")
        return data

    def try_acquire(self, holder: str) -> Granted | None:
        """Wait until nobody holds the lock, then call the lock API with a new lease."""
        try:
            if self.client.get_prefix(self.name + "/"):
                return None
            lease, ttl = grant_lease(self.client, self.ttl)
            self.client.post(
                self.client.get_url("/kv/put"),
                json={
                    "key": encode(f"{self.prefix}{HOLDER_KEY}{lease}"),
                    "value": encode(holder),
                    "lease": lease,
                },
            )
        except Etcd3Exception as error:
            raise LockRequestFailed(f"an etcd request failed: {error}") from None
        body = {"name": encode(self.name), "lease": lease}
        answer = self._post("lock/lock", body, ttl + LOCK_API_EXTRA_SECONDS)
        key = base64.b64decode(answer["key"]).decode()
        order = int(answer["header"]["revision"])
        try:  # read at the grant's revision: the key may be gone since (a paused caller)
            found = self.client.post(
                self.client.get_url("/kv/range"), json={"key": encode(key), "revision": order}
            )
        except Etcd3Exception as error:
            raise LockRequestFailed(f"an etcd request failed: {error}") from None
        kvs = found.get("kvs") or []
        if not kvs:
            raise LockRequestFailed(f"etcd's lock API granted {key}, absent at its revision")
        revision, version = int(kvs[0]["create_revision"]), int(kvs[0]["version"])
        tokens = {"create-revision": revision, "version": version, "lease-id": lease}
        return Granted(revision, version, lease, ttl, tokens[self.source], order, (("key", key),))

    def release(self, grant: Granted) -> tuple[bool, int]:
        """Unlock the owner key (if it is still there), then revoke the lease."""
        key = dict(grant.extra)["key"]
        try:
            found = self.client.post(self.client.get_url("/kv/range"), json={"key": encode(key)})
        except Etcd3Exception as error:
            raise LockRequestFailed(str(error)) from None
        before = int(found["header"]["revision"])
        kvs = found.get("kvs") or []
        mine = bool(kvs) and int(kvs[0]["create_revision"]) == grant.revision
        answer = self._post("lock/unlock", {"key": encode(key)}, 5.0)
        after = int(answer["header"]["revision"])
        revoke_lease(self.client, grant.lease)
        deleted = mine and after > before
        return deleted, after if deleted else before

    def believes_held(self, grant: Granted) -> bool | None:
        """The lock API keeps no flag in the client."""
        return None


def lock_api_holder(client: Any, prefix: str, lease: int) -> str:
    """The worker that asked for the lock on this lease ('' if its key is gone)."""
    with contextlib.suppress(Exception):
        found = client.post(
            client.get_url("/kv/range"), json={"key": encode(f"{prefix}{HOLDER_KEY}{lease}")}
        )
        kvs = found.get("kvs") or []
        if kvs:
            return decode(kvs[0].get("value", ""))[:5]
    return ""


# ----- ZooKeeper with kazoo ------------------------------------------------------------------


def quiet_kazoo() -> None:
    """Keep kazoo's connection warnings (a dropped socket, an expired session) off the
    terminal: the history records what the lock did."""
    logger = logging.getLogger("kazoo")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False


def zookeeper_path(prefix: str) -> str:
    """The lock's znode path for a run's prefix."""
    return prefix.rstrip("/") + "/" + LOCK_KEY


def sequence_of(node: str) -> int:
    """The sequence number at the end of a lock znode's name."""
    digits = node[-10:]
    return int(digits) if digits.isdigit() else 0


class KazooLock:
    """kazoo's Lock recipe; the session's timeout is the lease's TTL."""

    orders_releases = False

    def __init__(self, url: str, prefix: str, ttl: int, token: str) -> None:
        from kazoo.client import KazooClient

        quiet_kazoo()
        self.client = KazooClient(hosts=url, timeout=float(ttl))
        self.client.start(timeout=10)
        self.path = zookeeper_path(prefix)
        self.ttl = ttl
        self.lock: Any = None

    def _errors(self) -> tuple[type[BaseException], ...]:
        """The errors kazoo raises for a request that failed."""
        from kazoo.exceptions import KazooException

        return (KazooException, OSError)

    def try_acquire(self, holder: str) -> Granted | None:
        """One non-blocking acquire of the recipe (its znode is removed if it is not first)."""
        try:
            self.lock = self.client.Lock(self.path, holder)
            if not self.lock.acquire(blocking=False):
                return None
            node = str(self.lock.node)
            stat = self.client.exists(f"{self.path}/{node}")
        except self._errors() as error:
            raise LockRequestFailed(f"a ZooKeeper request failed: {error!r}") from None
        if stat is None:
            return None
        sequence = sequence_of(node)
        return Granted(
            int(stat.czxid),
            int(stat.version),
            int(stat.ephemeralOwner),
            self.ttl,
            sequence,
            int(stat.czxid),
            (("node", node),),
        )

    def release(self, grant: Granted) -> tuple[bool, int]:
        """Release through the recipe; deleted only if the znode was still this grant's."""
        from kazoo.exceptions import SessionExpiredError

        node = dict(grant.extra)["node"]
        try:
            stat = self.client.exists(f"{self.path}/{node}")
            mine = stat is not None and int(stat.czxid) == grant.revision
            self.lock.release()
        except SessionExpiredError:  # the session's ephemeral znodes are gone with it
            return False, grant.revision
        except self._errors() as error:
            raise LockRequestFailed(f"a ZooKeeper request failed: {error!r}") from None
        return mine, grant.revision

    def believes_held(self, grant: Granted) -> bool | None:
        """kazoo's own flag: it stays True after the session (and the znode) is gone."""
        return bool(self.lock is not None and self.lock.is_acquired)

    def renew(self, grant: Granted) -> int:
        """kazoo keeps its session alive by itself: the lab sends no keepalives (the settings
        refuse `--keepalive` with ZooKeeper)."""
        raise LockRequestFailed("the lab sends ZooKeeper no keepalives")


# ----- Redis with redis-py -------------------------------------------------------------------


def random_token(value: bytes | str) -> int:
    """The random token of a redis-py lock value: its first hex digits as a number."""
    text = value.decode() if isinstance(value, bytes) else value
    try:
        return int(text[:RANDOM_HEX_DIGITS], 16)
    except ValueError:
        return 0


class RedisLock:
    """redis-py's Lock: SET if absent with an expiry of one TTL, numbered by a counter in the
    same atomic script; released and kept alive by redis-py."""

    orders_releases = False

    def __init__(self, url: str, prefix: str, ttl: int, token: str) -> None:
        import redis

        self.redis = redis.Redis.from_url(url, socket_timeout=5.0)
        self.prefix = prefix
        self.name = prefix + LOCK_KEY
        self.ttl = ttl
        self.source = token
        self.lock: Any = None
        self.grant: Any = self.redis.register_script(NUMBERED_GRANT)

    def _errors(self) -> tuple[type[BaseException], ...]:
        """The errors redis-py raises for a request that failed."""
        import redis

        return (redis.RedisError, OSError)

    def try_acquire(self, holder: str) -> Granted | None:
        """One non-blocking acquire with redis-py's kind of value (a uuid1), numbered by the
        grant counter in the same script; redis-py's Lock then holds that value."""
        value = uuid.uuid1().hex.encode()
        keys = [
            self.name,
            self.prefix + GRANTS_COUNTER,
            self.prefix + HOLDERS_HASH,
            self.prefix + GRANTS_LOG,
        ]
        try:
            number = self.grant(keys=keys, args=[value, int(self.ttl * 1000), holder])
            if number is None:
                return None
            self.lock = self.redis.lock(self.name, timeout=self.ttl, thread_local=False)
            self.lock.local.token = value  # not thread-local: the keepalive thread extends it
        except self._errors() as error:
            raise LockRequestFailed(f"a Redis request failed: {error!r}") from None
        text = value.decode()
        token = int(number) if self.source == "counter" else random_token(text)
        grant = int(number)
        return Granted(grant, 1, 0, self.ttl, token, grant, (("lock_value", text[:40]),))

    def release(self, grant: Granted) -> tuple[bool, int]:
        """redis-py's release: deletes the key only if it still holds this grant's value."""
        from redis.exceptions import LockNotOwnedError

        try:
            self.lock.release()
        except LockNotOwnedError:
            return False, grant.revision
        except self._errors() as error:
            raise LockRequestFailed(f"a Redis request failed: {error!r}") from None
        return True, grant.revision

    def believes_held(self, grant: Granted) -> bool | None:
        """redis-py keeps the value it set, but no flag of its own."""
        return None

    def renew(self, grant: Granted) -> int:
        """redis-py's `extend` with `replace_ttl`: the key expires one TTL from now, if it
        still holds this grant's value (0 when it does not: the key had expired)."""
        from redis.exceptions import LockNotOwnedError

        try:
            self.lock.extend(self.ttl, replace_ttl=True)
        except LockNotOwnedError:
            return 0
        except self._errors() as error:
            raise LockRequestFailed(f"a Redis request failed: {error!r}") from None
        return self.ttl


CLIENTS: Final[dict[str, type[EtcdRecipe | EtcdLockApi | KazooLock | RedisLock]]] = {
    "etcd": EtcdRecipe,
    "etcd-lock-api": EtcdLockApi,
    "zookeeper": KazooLock,
    "redis": RedisLock,
}


def lock_client(
    service: str, url: str, prefix: str, ttl: int, token: str, leased: bool = True
) -> LockClient:
    """The client of a lock service for one worker (`leased` False: the etcd recipe's lock
    with no lease; the settings refuse it for every other service)."""
    if not leased:
        return EtcdRecipe(url, prefix, ttl, token, leased=False)
    return CLIENTS[service](url, prefix, ttl, token)
