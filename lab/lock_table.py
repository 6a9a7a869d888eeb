"""The lock services the lab can run, in one table: words, token sources, model tokens, mirrors.

Every part that depends on the lock service (the settings' checks, the CLI's choices, the
web page's list, the conformance mapping) reads this table, so a service is one row here,
one client in `lab.lock_clients` and one server in `lab.lock_servers`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from model.options import Token


@dataclass(frozen=True)
class TokenSource:
    """One number a service's grant carries that a worker can send as its fencing token."""

    name: str
    words: str
    model: Token
    """The model's token option this source behaves as."""
    recorded: str = "create_revision"
    """The field of the service observer's record of a grant (`lock-put`) that holds this
    number: what the service itself says the grant's token is, never the worker's word."""


@dataclass(frozen=True)
class LockService:
    """One lock service: what it is, the tokens it offers, and what it mirrors."""

    name: str
    words: str
    tokens: tuple[TokenSource, ...]
    """The token sources it offers, the default first."""
    mirrors: str
    ordered: bool
    """Whether the service numbers its grants and their ends in one order (etcd's revision);
    otherwise the end of a grant is known only from when it was observed."""
    short: str = "etcd"
    """The service's name in a sentence ("ZooKeeper grants the lock to W1")."""
    lease_from_grant: bool = True
    """Whether a grant's lease is counted from the grant (etcd's lease, Redis's expiry);
    ZooKeeper's lock lasts as long as the holder's session, which expires one timeout after
    the client was last heard, so it may end less than one TTL after the grant."""
    keepalive: str = ""
    """Why the lab's worker sends this service no keepalives ('' when it does: etcd's lease
    keepalive, redis-py's `Lock.extend`): the reason a refusal of `--keepalive` gives."""
    without_lease: bool = False
    """Whether the lab can put this service's lock with no lease (the model's expiry never)."""
    lapsed: str = "etcd revoked its lease"
    """How a holder's lock ends when nobody releases it, said of the holder ("its ...")."""
    end_delay: float = 0.5
    """The longest the service itself may take, past a lease's TTL, to end it (etcd's lessor
    looks for expired leases every 500 ms; ZooKeeper expires sessions one tick late at most;
    Redis drops an expired key when it is read): the lease allowance before the machine's
    own measured latency is added."""
    end_delay_words: str = "etcd's lessor looks for expired leases every 500 ms"
    """Where `end_delay` comes from, in words (printed with the allowances)."""
    records_every_grant: bool = True
    """Whether the lab's record of the service lists every grant it made (etcd's watch sees
    every change; Redis's grant script logs each one); otherwise (ZooKeeper's lowest znode,
    looked at every few milliseconds) a grant released between two looks is not on it."""

    @property
    def token_names(self) -> tuple[str, ...]:
        """The names of its token sources."""
        return tuple(source.name for source in self.tokens)

    def token(self, name: str) -> TokenSource:
        """The token source of this name (KeyError if the service does not offer it)."""
        return next(source for source in self.tokens if source.name == name)


CREATE_REVISION: Final = TokenSource(
    "create-revision",
    "the lock key's create revision (etcd's global counter at the grant)",
    Token.COUNTER,
)
VERSION: Final = TokenSource(
    "version",
    "the lock key's version (1 again each time the key is created)",
    Token.KEY_VERSION,
    recorded="version",
)
LEASE_ID: Final = TokenSource(
    "lease-id", "the grant's lease ID (a number no receiver can order)", Token.RANDOM, "lease"
)

SERVICES_LIST: Final = (
    LockService(
        "etcd",
        "etcd, the lab's own recipe: a key created only if absent, on a lease of one TTL",
        (CREATE_REVISION, VERSION, LEASE_ID),
        "a lock written by hand on etcd's transactions and leases",
        ordered=True,
        without_lease=True,
    ),
    LockService(
        "etcd-lock-api",
        "etcd's lock API (/v3/lock/lock): etcd queues the callers' keys and grants the lock "
        "to the oldest, on the caller's lease",
        (CREATE_REVISION, VERSION, LEASE_ID),
        "etcd's own lock service (etcdctl lock, the concurrency package's mutex)",
        ordered=True,
        short="etcd's lock API",
    ),
    LockService(
        "zookeeper",
        "ZooKeeper with kazoo's Lock recipe: an ephemeral sequential znode, the lowest holds "
        "the lock until its session expires",
        (
            TokenSource(
                "sequence",
                "the lock znode's sequence number (it rises with every contender's znode)",
                Token.COUNTER,
                recorded="token",
            ),
        ),
        "the ZooKeeper lock recipe (kazoo, Curator's mutex)",
        ordered=False,
        short="ZooKeeper",
        lease_from_grant=False,
        lapsed="its ZooKeeper session expired",
        end_delay=0.1,
        end_delay_words="ZooKeeper expires sessions at its next tick (the lab's tick: 100 ms)",
        records_every_grant=False,
        keepalive="kazoo keeps the ZooKeeper session (and so the lock) alive by itself while "
        "the holder runs, so there is no keepalive to send",
    ),
    LockService(
        "redis",
        "a single Redis with redis-py's Lock: SET if absent with an expiry of one TTL, run in "
        "one script with the grant counter's INCR",
        (
            TokenSource(
                "random",
                "redis-py's random lock value (a UUID: no receiver can order it)",
                Token.RANDOM,
                recorded="token",
            ),
            TokenSource(
                "counter",
                "an INCR counter in the same Redis, raised at each grant in the same script as "
                "the grant's SET, so a worker paused after its SET cannot draw a later number "
                "(kept in memory only: "
                "a Redis restart would start it again, the model's counter-volatile; the lab "
                "does not restart Redis, so it behaves as the model's counter)",
                Token.COUNTER,
                recorded="revision",
            ),
        ),
        "a single-instance Redis lock (redis-py, the SET NX PX pattern)",
        ordered=False,
        short="Redis",
        lapsed="its Redis key expired",
        end_delay=0.0,
        end_delay_words="Redis drops an expired key when it is read (the observer reads "
        "every 5 ms)",
    ),
)

SERVICES: Final = {service.name: service for service in SERVICES_LIST}
SERVICE_NAMES: Final = tuple(SERVICES)
DEFAULT_SERVICE: Final = "etcd"
ALL_TOKENS: Final = tuple(
    dict.fromkeys(source.name for service in SERVICES_LIST for source in service.tokens)
)
"""Every token source of every service (the names the settings accept)."""


def renewing_services() -> tuple[str, ...]:
    """The services the lab sends keepalives to."""
    return tuple(service.name for service in SERVICES_LIST if not service.keepalive)


def model_token(service: str, token: str) -> Token:
    """The model's token option for a service's token source."""
    return SERVICES[service].token(token).model


def recorded_token(record: Mapping[str, Any], service: str, token: str) -> int | None:
    """The token of a grant as the service observer recorded it (its `lock-put`), for the
    run's token source; None when the record does not hold that number."""
    value = record.get(SERVICES[service].token(token).recorded)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
