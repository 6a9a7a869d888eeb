"""The catalogue of real parts: what an engineer's stack is made of, mapped to the model's options.

A stack is one token source (which names its lock service), one way the resource writes
(which names the store the data lives in), and any number of practices (what the workers
do, what the lock service or the resource keeps). Each service is one row saying what it
is; each catalogue entry is one row: its id, its service, its words, the options it sets in
the model, what it means to build (with a snippet in that service's own terms), what a fix
may do with it, and where the mapping comes from. A stack's design is the union of its
rows' options and of the assumptions every real stack makes (a holder may crash); nothing
else decides it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from model.design import Design
from model.options import DesignError, Receiver, Token


class Slot(StrEnum):
    """Which part of a stack an entry describes."""

    TOKEN = "token"
    RESOURCE = "resource"
    WORKERS = "workers-do"
    ALSO = "also"

    @property
    def single(self) -> bool:
        """Whether a stack has exactly one entry of this slot (else any number)."""
        return self in (Slot.TOKEN, Slot.RESOURCE)

    @property
    def words(self) -> str:
        """The slot for people."""
        return _SLOT_WORDS[self]


_SLOT_WORDS: Final = {
    Slot.TOKEN: "the token",
    Slot.RESOURCE: "how the resource writes",
    Slot.WORKERS: "what the workers do",
    Slot.ALSO: "what else the stack does",
}


@dataclass(frozen=True)
class Service:
    """A system a stack runs: a lock service, a store, or both."""

    id: str
    name: str
    """Its name in a sentence: `etcd`, `a SQL database (PostgreSQL, MySQL, SQLite)`."""
    short: str
    """Its name in a label: `etcd`, `SQL`."""


ANY: Final = "any"
"""The service of a part that belongs to no particular system (the worker's clock)."""

SERVICES: Final = (
    Service("etcd", "etcd", "etcd"),
    Service("zookeeper", "ZooKeeper", "ZooKeeper"),
    Service("redis", "Redis", "Redis"),
    Service("consul", "Consul", "Consul"),
    Service("sql", "a SQL database (PostgreSQL, MySQL, SQLite)", "SQL"),
    Service("object-store", "an object store (S3, Google Cloud Storage, Azure Blob)", "object"),
    Service("file", "a plain file", "file"),
    Service(ANY, "any system", "any"),
)
SERVICE_BY_ID: Final = {service.id: service for service in SERVICES}


class Role(StrEnum):
    """What a fix may do with a part."""

    CHOICE = "choice"
    """An engineering choice: a fix may replace, add or drop it (as its row allows)."""
    ASSUMPTION = "assumption"
    """A fact of the world every real stack lives in (a holder may crash): always checked,
    never added or dropped by a fix."""
    APPLICATION = "application"
    """What the application does (read, then write): a fix keeps it as it is."""
    HIDES = "hides"
    """Trades liveness or availability for safety: never a fix, at most a change that
    hides the bug, listed with what it costs."""


@dataclass(frozen=True, eq=False)
class Part:
    """One real part or practice, mapped to the model's options (compared by identity:
    each entry exists once, in the catalogue)."""

    id: str
    slot: Slot
    service: str
    """The service it belongs to (`SERVICES`): a token's lock service, a resource's store."""
    words: str
    """What it is, in the words of the system it comes from."""
    options: Mapping[str, Any]
    """The design options it sets (every other option stays at the core's default)."""
    build: str
    """What adopting it means to build, as an instruction."""
    source: str
    """Where the mapping comes from."""
    noun: str = ""
    """A short name: for a token what it is called in that system (`lease ID`), for a
    resource its write (`the conditional UPDATE … WHERE fence <= $t`)."""
    drop: str = ""
    """For a practice: what giving it up means to build."""
    snippet: str = ""
    """What adopting it looks like in the service's own terms (SQL, an etcd txn, …)."""
    role: Role = Role.CHOICE
    fix_target: bool = True
    """A fix may move to it (a token, a resource) or add it (a practice); False for a part
    that only ever loses something (a fence kept in memory, a check that refuses the
    holder's own second write)."""
    checks_lock_of: str = ""
    """For a resource that asks the lock service: the lock service it asks (its lock key
    lives there, so the stack's token must come from it too)."""
    cost: str = ""
    """For a part that hides the bug: what it costs, in a few words."""

    def to_dict(self) -> dict[str, Any]:
        """The entry as JSON."""
        return {
            "id": self.id,
            "slot": str(self.slot),
            "service": self.service,
            "words": self.words,
            "model": {name: _json_value(value) for name, value in self.options.items()},
            "build": self.build,
            "snippet": self.snippet,
            "role": str(self.role),
            "source": self.source,
        }

    @property
    def system(self) -> Service:
        """The service row of the part."""
        return SERVICE_BY_ID[self.service]

    @property
    def mirror(self) -> str:
        """The part in a few words for an option's label: `etcd create_revision`."""
        name = self.noun or self.words
        short = self.system.short
        return name if self.service == ANY or short in name else f"{short} {name}"

    def model_words(self) -> str:
        """The options it sets, as `token counter-volatile, coordinator_restarts 1`."""
        return ", ".join(
            name if value is True else f"{name} {_json_value(value)}"
            for name, value in self.options.items()
        )

    @property
    def fix_may_choose(self) -> bool:
        """Whether a fix may move to (or add) this part: an engineering choice its row allows."""
        return self.role is Role.CHOICE and self.fix_target

    @property
    def token(self) -> Token | None:
        """The token source it sets, if any."""
        value = self.options.get("token")
        return None if value is None else Token(value)

    @property
    def receiver(self) -> Receiver | None:
        """The receiver rule it sets, if any."""
        value = self.options.get("receiver")
        return None if value is None else Receiver(value)

    @property
    def orders_grants(self) -> bool:
        """A token that is a fencing token: it grows with every grant and no restart sets it
        back (the token's own row says so)."""
        token = self.token
        return token is not None and token.row.grows_with_every_grant

    @property
    def checks_atomically(self) -> bool:
        """A resource that checks every write and writes in the same step (the receiver's
        own row says so)."""
        receiver = self.receiver
        return (
            receiver is not None
            and receiver.checks_anything
            and not receiver.splits_check_and_write
        )


def _json_value(value: Any) -> Any:
    """An option value as JSON (tuples as lists)."""
    return list(value) if isinstance(value, tuple) else value


ETCD_KV: Final = "etcd API reference, mvccpb.KeyValue: create_revision, mod_revision, version"
ZK_STAT: Final = "ZooKeeper Programmer's Guide: sequential znodes and the Stat structure"
PG_LOCKS: Final = "PostgreSQL docs, UPDATE, SELECT … FOR UPDATE and transaction isolation"

FENCE_UPDATE: Final = """\
UPDATE resource SET data = $data, fence = $token
 WHERE id = $id AND fence <= $token;
-- 0 rows updated: a newer holder wrote first, so this worker has lost the lock"""

CATALOGUE: Final[tuple[Part, ...]] = (
    Part(
        "etcd-create-revision",
        Slot.TOKEN,
        "etcd",
        "etcd lock key's create_revision (also the etcd Mutex's key revision)",
        {"token": "counter"},
        "use the lock key's create_revision as the token",
        ETCD_KV + "; clientv3/concurrency Mutex.Header().Revision",
        noun="create_revision",
        snippet="token := mutex.Header().Revision  // the lock key's create_revision",
    ),
    Part(
        "etcd-mod-revision",
        Slot.TOKEN,
        "etcd",
        "etcd lock key's mod_revision",
        {"token": "counter"},
        "use the lock key's mod_revision as the token",
        ETCD_KV + ": every write to the store raises the revision",
        noun="mod_revision",
    ),
    Part(
        "etcd-version",
        Slot.TOKEN,
        "etcd",
        "etcd key version (resets when the key is deleted)",
        {"token": "key-version"},
        "use the lock key's version as the token",
        ETCD_KV + ": version is 1 for a newly created key",
        noun="key version",
    ),
    Part(
        "etcd-lease-id",
        Slot.TOKEN,
        "etcd",
        "etcd lease ID",
        {"token": "random"},
        "use the etcd lease ID as the token",
        "etcd API reference, LeaseGrant: IDs are unique, not ordered across members",
        noun="lease ID",
    ),
    Part(
        "zookeeper-sequence",
        Slot.TOKEN,
        "zookeeper",
        "ZooKeeper lock znode's sequence number or czxid",
        {"token": "counter"},
        "use the lock znode's sequence number (or its czxid) as the token",
        ZK_STAT + " (czxid: the zxid of the change that created the znode)",
        noun="znode sequence number",
        snippet='path = zk.create("/locks/res/lock-", ephemeral=True, sequence=True)\n'
        "token = int(path[-10:])  # the znode's sequence number",
    ),
    Part(
        "zookeeper-data-version",
        Slot.TOKEN,
        "zookeeper",
        "ZooKeeper znode dataVersion",
        {"token": "key-version"},
        "use the lock znode's dataVersion as the token",
        ZK_STAT + " (dataVersion counts changes to one znode's data)",
        noun="dataVersion",
    ),
    Part(
        "consul-modify-index",
        Slot.TOKEN,
        "consul",
        "Consul ModifyIndex of the lock key",
        {"token": "counter"},
        "use the lock key's ModifyIndex as the token",
        "Consul KV API: ModifyIndex, the Raft index of the key's last change",
        noun="ModifyIndex",
        snippet="token = entry['ModifyIndex']  # the lock key's entry from GET /v1/kv/<key>",
    ),
    Part(
        "redis-random-value",
        Slot.TOKEN,
        "redis",
        "Redis lock's random value (SET NX PX, Redlock)",
        {"token": "random"},
        "use the Redis lock's random value as the token",
        "Redis docs, 'Distributed Locks with Redis': a random value unique to each client",
        noun="random value",
    ),
    Part(
        "redis-incr",
        Slot.TOKEN,
        "redis",
        "a Redis INCR counter without persistence",
        {"token": "counter-volatile", "coordinator_restarts": 1},
        "use a Redis INCR counter (kept only in memory) as the token",
        "Redis persistence docs: without RDB or AOF a restarted server starts empty",
        noun="INCR value",
    ),
    Part(
        "redis-incr-persisted",
        Slot.TOKEN,
        "redis",
        "a Redis INCR counter persisted on every write (AOF, appendfsync always, one server)",
        {"token": "counter"},
        "number each grant with INCR in the script that takes the lock, on a server that "
        "persists every write (appendonly yes, appendfsync always)",
        "Redis persistence docs: with appendfsync always each write is on disk before the "
        "reply; a failover to an asynchronous replica can still lose the last increments",
        noun="INCR value",
        snippet="-- the script that takes the lock: one step, so no later grant draws first\n"
        "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then\n"
        "  return redis.call('INCR', KEYS[2])  -- the token\n"
        "end",
    ),
    Part(
        "worker-clock",
        Slot.TOKEN,
        ANY,
        "the worker's own clock (a timestamp)",
        {"token": "local-clock"},
        "use the worker's own clock as the token",
        "clocks of separate machines drift and jump; no single order comes from them",
        noun="timestamp",
    ),
    Part(
        "wrapping-sequence",
        Slot.TOKEN,
        ANY,
        "a small sequence number that wraps",
        {"token": "wrapping", "wrap": 2},
        "use a small sequence number that wraps around as the token",
        "any fixed-width counter that overflows",
        noun="sequence number",
    ),
    Part(
        "plain-write",
        Slot.RESOURCE,
        ANY,
        "plain write (the resource checks nothing)",
        {"receiver": "none"},
        "write without any check of the token",
        "an ordinary INSERT, UPDATE or PUT",
        noun="a plain write",
    ),
    Part(
        "sql-plain-update",
        Slot.RESOURCE,
        "sql",
        "a plain UPDATE (the database checks no token)",
        {"receiver": "none"},
        "write with a plain UPDATE",
        "an ordinary UPDATE takes every write",
        noun="a plain UPDATE",
    ),
    Part(
        "sql-conditional-update",
        Slot.RESOURCE,
        "sql",
        "one UPDATE … SET fence = $t … WHERE fence <= $t (PostgreSQL, MySQL, SQLite)",
        {"receiver": "fenced"},
        "do the check and the write in one UPDATE … SET fence = $t … WHERE fence <= $t, "
        "with the fence in the same row as the data",
        PG_LOCKS + " (a conditional write checks and writes atomically)",
        noun="the conditional UPDATE … WHERE fence <= $t",
        snippet=FENCE_UPDATE,
    ),
    Part(
        "sql-select-for-update",
        Slot.RESOURCE,
        "sql",
        "SELECT fence … FOR UPDATE, then UPDATE, in one transaction",
        {"receiver": "fenced"},
        "read the fence with SELECT … FOR UPDATE and write in the same transaction, so "
        "the row lock keeps every other write out between the check and the write",
        PG_LOCKS + " (FOR UPDATE locks the row until the transaction ends)",
        noun="SELECT … FOR UPDATE, then UPDATE, in one transaction",
        snippet="BEGIN;\n"
        "SELECT fence FROM resource WHERE id = $id FOR UPDATE;\n"
        "-- fence > $token: ROLLBACK, this worker has lost the lock\n"
        "UPDATE resource SET data = $data, fence = $token WHERE id = $id;\n"
        "COMMIT;",
    ),
    Part(
        "sql-serializable",
        Slot.RESOURCE,
        "sql",
        "SELECT fence, then UPDATE, in one SERIALIZABLE transaction (retried on a "
        "serialization failure)",
        {"receiver": "fenced"},
        "read the fence and write in one SERIALIZABLE transaction, retrying it from the "
        "start when the database reports a serialization failure",
        PG_LOCKS + " (serializable transactions behave as if run one at a time)",
        noun="SELECT, then UPDATE, in one SERIALIZABLE transaction",
        snippet="BEGIN ISOLATION LEVEL SERIALIZABLE;\n"
        "SELECT fence FROM resource WHERE id = $id;\n"
        "-- fence > $token: ROLLBACK, this worker has lost the lock\n"
        "UPDATE resource SET data = $data, fence = $token WHERE id = $id;\n"
        "COMMIT;  -- a serialization failure: run the transaction again",
    ),
    Part(
        "sql-conditional-update-strict",
        Slot.RESOURCE,
        "sql",
        "the same conditional UPDATE with fence < $t",
        {"receiver": "fenced-strict"},
        "do the check and the write in one UPDATE … WHERE fence < $t",
        "a strict comparison refuses the holder's own second write",
        noun="the conditional UPDATE … WHERE fence < $t",
        fix_target=False,
    ),
    Part(
        "sql-select-then-update",
        Slot.RESOURCE,
        "sql",
        "SELECT fence, then UPDATE in another statement without a row lock",
        {"receiver": "fenced-nonatomic"},
        "read the fence with SELECT, then write with a separate UPDATE",
        "check-then-act: another write can pass the same check in between",
        noun="SELECT, then a separate UPDATE",
    ),
    Part(
        "first-token-wins",
        Slot.RESOURCE,
        ANY,
        "only the first token is accepted (equality)",
        {"receiver": "equality"},
        "accept only writes carrying the first token the resource saw",
        "a resource bound to one token for ever",
        noun="a resource that accepts only the first token",
        role=Role.HIDES,
        cost="the resource takes writes from its first holder only, for ever",
    ),
    Part(
        "object-plain-put",
        Slot.RESOURCE,
        "object-store",
        "a plain PUT of the object (no precondition)",
        {"receiver": "none"},
        "write the object with a plain PUT",
        "S3 PutObject, Google Cloud Storage upload, Azure Put Blob without conditions",
        noun="a plain PUT",
    ),
    Part(
        "object-read-then-put",
        Slot.RESOURCE,
        "object-store",
        "GET the object's fence, then a PUT without a precondition",
        {"receiver": "fenced-nonatomic"},
        "read the fence with a GET, then write with a PUT that has no precondition",
        "check-then-act: another PUT can land between the GET and this PUT",
        noun="a GET, then an unconditional PUT",
    ),
    Part(
        "object-conditional-put",
        Slot.RESOURCE,
        "object-store",
        "a conditional PUT: the fence stored in the object, written only if its ETag is "
        "still the one read (If-Match)",
        {"receiver": "fenced"},
        "keep the fence in the object (or its metadata), and write with a PUT conditioned on "
        "the ETag of the version whose fence you checked (If-Match), reading again on a "
        "failed precondition",
        "S3 conditional writes (If-Match on PutObject), Google Cloud Storage "
        "ifGenerationMatch, Azure Blob If-Match: the store compares and writes in one step",
        noun="the conditional PUT (If-Match on the ETag)",
        snippet="GET /bucket/resource            -> fence f, ETag e\n"
        "# f > token: stop, this worker has lost the lock\n"
        "PUT /bucket/resource  If-Match: e  (data, fence = token)\n"
        "# 412 Precondition Failed: someone wrote in between: GET again and re-check",
    ),
    Part(
        "file-write",
        Slot.RESOURCE,
        "file",
        "a write to a plain file",
        {"receiver": "none"},
        "write the file",
        "a file system takes every write; it has no token to compare",
        noun="a file write",
    ),
    Part(
        "etcd-plain-put",
        Slot.RESOURCE,
        "etcd",
        "a plain etcd put of the data key",
        {"receiver": "none"},
        "write the data key with a plain put",
        "etcd API reference, Put: no comparison",
        noun="a plain put",
    ),
    Part(
        "etcd-txn-on-lock-key",
        Slot.RESOURCE,
        "etcd",
        "the write in an etcd transaction that succeeds only while the lock key is still "
        "yours (its create_revision, or its lease, unchanged)",
        {"receiver": "lease-aware"},
        "do the write in an etcd transaction that compares the lock key's create_revision "
        "with yours and puts the data only if it still matches (the check of the lock and the "
        "write in one step)",
        "etcd API reference, Txn: Compare on create_revision, then Put, atomically",
        noun="the etcd transaction on the lock key",
        snippet="resp, err := cli.Txn(ctx).\n"
        '    If(clientv3.Compare(clientv3.CreateRevision(lockKey), "=", myRevision)).\n'
        "    Then(clientv3.OpPut(dataKey, data)).\n"
        "    Commit()\n"
        "// !resp.Succeeded: the lock key is gone or someone else's: stop",
        checks_lock_of="etcd",
    ),
    Part(
        "zookeeper-multi-check",
        Slot.RESOURCE,
        "zookeeper",
        "the write in a ZooKeeper multi-op that first checks the lock znode is still there "
        "with its version",
        {"receiver": "lease-aware"},
        "do the write in a ZooKeeper multi-op: check the lock znode's version, then set the "
        "data znode, committed together",
        "ZooKeeper Programmer's Guide, multi: all operations succeed or none; the ephemeral "
        "lock znode is gone once its session expires",
        noun="the ZooKeeper multi-op with a check of the lock znode",
        snippet="tx = zk.transaction()\n"
        "tx.check(lock_path, version=lock_version)  # fails once the session's znode is gone\n"
        "tx.set_data(data_path, data)\n"
        "tx.commit()  # a failed check: the lock is lost, stop",
        checks_lock_of="zookeeper",
    ),
    Part(
        "redis-plain-set",
        Slot.RESOURCE,
        "redis",
        "a plain Redis SET of the data key",
        {"receiver": "none"},
        "write the data key with a plain SET",
        "Redis SET: no comparison",
        noun="a plain SET",
    ),
    Part(
        "redis-lua-fence",
        Slot.RESOURCE,
        "redis",
        "a Lua script that compares the token with a fence stored in Redis, then writes",
        {"receiver": "fenced"},
        "write through one Lua script that compares the token with the stored fence and "
        "sets the data and the fence only if the token is not lower",
        "Redis EVAL: a script runs atomically, no other command runs in between",
        noun="the Lua script that compares the stored fence",
        snippet="-- KEYS[1] fence, KEYS[2] data; ARGV[1] token, ARGV[2] data\n"
        "if tonumber(redis.call('GET', KEYS[1]) or '0') <= tonumber(ARGV[1]) then\n"
        "  redis.call('SET', KEYS[1], ARGV[1])\n"
        "  return redis.call('SET', KEYS[2], ARGV[2])\n"
        "end\n"
        "return false  -- a newer holder wrote first: this worker has lost the lock",
    ),
    Part(
        "redis-lua-lock-check",
        Slot.RESOURCE,
        "redis",
        "a Lua script that writes only while the lock key still holds this worker's value",
        {"receiver": "lease-aware"},
        "write through one Lua script that checks the lock key still holds your value and "
        "sets the data only then (the check of the lock and the write in one step)",
        "Redis EVAL: a script runs atomically; the lock key's PX expiry is decided by the same "
        "server",
        noun="the Lua script that checks the lock key",
        snippet="-- KEYS[1] lock, KEYS[2] data; ARGV[1] this worker's lock value, ARGV[2] data\n"
        "if redis.call('GET', KEYS[1]) == ARGV[1] then\n"
        "  return redis.call('SET', KEYS[2], ARGV[2])\n"
        "end\n"
        "return false  -- the lock expired or is someone else's: stop",
        checks_lock_of="redis",
    ),
    Part(
        "worker-checks-lease",
        Slot.WORKERS,
        ANY,
        "workers check their own lease before each write",
        {"worker_check": True},
        "have each worker check its lease's remaining time before each write",
        "M. Kleppmann, 'How to do distributed locking' (2016): a pause can follow the check",
        drop="stop relying on the worker's own lease check",
    ),
    Part(
        "read-modify-write",
        Slot.WORKERS,
        ANY,
        "workers read, then write what they computed",
        {"workload": "rmw"},
        "have workers read, then write back what they computed",
        "a read-modify-write cycle",
        drop="make the writes blind (not computed from a read)",
        role=Role.APPLICATION,
    ),
    Part(
        "fenced-reads",
        Slot.WORKERS,
        ANY,
        "reads carry the token too",
        {"fenced_reads": True},
        "send the token with every read too, checked like a write (and raising the fence)",
        "a read that raises the fence keeps older holders from writing after it",
        drop="stop checking the token on reads",
        snippet="UPDATE resource SET fence = $token\n"
        " WHERE id = $id AND fence <= $token\n"
        "RETURNING data;  -- the read raises the fence; no row: the lock is lost",
    ),
    Part(
        "keepalive",
        Slot.WORKERS,
        ANY,
        "the holder keeps its lease alive (etcd KeepAlive, ZooKeeper session heartbeats, "
        "Consul session renew)",
        {"renew": True},
        "have the holder renew its lease while it works (a keepalive)",
        "etcd API reference, LeaseKeepAlive; ZooKeeper sessions; Consul session renew: a "
        "paused process stops renewing, so its lease still runs out",
        drop="stop renewing the lease: it lasts one term from the grant",
    ),
    Part(
        "fence-in-memory",
        Slot.ALSO,
        ANY,
        "the fence kept in the storage process's memory",
        {"hwm": "volatile", "storage_restarts": 1},
        "keep the fence in the storage process's memory",
        "any in-memory max_seen lost on restart",
        drop="keep the fence on disk, in the same row or transaction as the data",
        fix_target=False,
    ),
    Part(
        "lock-without-lease",
        Slot.ALSO,
        ANY,
        "the lock has no lease (an etcd key with no lease, a lock file): it lasts until released",
        {"expiry": "never"},
        "take the lock without a lease, so it is held until its holder releases it",
        "etcd Put without a lease; a lock file: nothing frees the lock of a holder that died",
        drop="give the lock a lease (a TTL), so a crashed holder's lock is freed",
        role=Role.HIDES,
        cost="a holder that crashes keeps the lock for ever",
    ),
    Part(
        "holder-may-crash",
        Slot.ALSO,
        ANY,
        "a holder may crash for good (its process killed, its machine lost)",
        {"crashes": 1},
        "let the check include a holder that crashes while it holds the lock",
        "the lock service cannot tell a crashed holder from a paused one",
        drop="assume no holder ever crashes",
        role=Role.ASSUMPTION,
    ),
    Part(
        "fence-at-grant",
        Slot.ALSO,
        ANY,
        "the lock service writes the fence into the resource at each grant",
        {"grant_fences": True},
        "have the lock service raise the resource's fence to the new token at each grant",
        "the grant and the fence raised in one step",
        drop="stop raising the fence at each grant",
    ),
)

BY_ID: Final = {part.id: part for part in CATALOGUE}
ASSUMED: Final = tuple(part for part in CATALOGUE if part.role is Role.ASSUMPTION)
"""What every real stack is checked with, whether its engineer names it or not."""


def mirrors(option_name: str, value: object) -> tuple[Part, ...]:
    """The parts that stand for this option value (their first option sets it)."""
    return tuple(
        p
        for p in CATALOGUE
        if next(iter(p.options)) == option_name and str(p.options[option_name]) == str(value)
    )


def parts_of(slot: Slot) -> tuple[Part, ...]:
    """The catalogue's entries of one slot, in catalogue order."""
    return tuple(part for part in CATALOGUE if part.slot is slot)


def part(identifier: str, slot: Slot) -> Part:
    """The entry with this id in this slot, or a DesignError listing the slot's ids."""
    found = BY_ID.get(identifier)
    if found is None or found.slot is not slot:
        shown = identifier if len(identifier) <= 40 else identifier[:37] + "..."
        known = ", ".join(p.id for p in parts_of(slot))
        raise DesignError(f"{shown!r} is not a choice for {slot.words}: use one of {known}")
    return found


def same_service(a: str, b: str) -> bool:
    """Whether two parts' services are one system (a part of no system fits any)."""
    return a == b or ANY in (a, b)


@dataclass(frozen=True)
class Stack:
    """An engineer's stack: one token, one resource, and a set of practices."""

    token: Part
    resource: Part
    practices: frozenset[Part] = frozenset()

    @staticmethod
    def of(token: str, resource: str, practices: Iterable[str] = ()) -> Stack:
        """The stack named by catalogue ids, each checked against its slot."""
        chosen = []
        for identifier in practices:
            found = BY_ID.get(identifier)
            if found is None or found.slot.single:
                known = ", ".join(p.id for p in CATALOGUE if not p.slot.single)
                shown = identifier if len(identifier) <= 40 else identifier[:37] + "..."
                raise DesignError(f"{shown!r} is not a practice: use one of {known}")
            if found.role is not Role.ASSUMPTION:
                chosen.append(found)
        return Stack(part(token, Slot.TOKEN), part(resource, Slot.RESOURCE), frozenset(chosen))

    @property
    def parts(self) -> tuple[Part, ...]:
        """Every entry of the stack, in catalogue order."""
        chosen = {self.token, self.resource, *self.practices}
        return tuple(p for p in CATALOGUE if p in chosen)

    @property
    def checked_parts(self) -> tuple[Part, ...]:
        """The stack's entries and the assumptions every real stack is checked with."""
        chosen = {self.token, self.resource, *self.practices, *ASSUMED}
        return tuple(p for p in CATALOGUE if p in chosen)

    @property
    def lock_service(self) -> str:
        """The service the lock comes from (the token's)."""
        return self.token.service

    @property
    def store(self) -> str:
        """The service the data lives in (the resource's)."""
        return self.resource.service

    def coherence_problem(self) -> str | None:
        """Why the parts cannot belong to one system (a resource that checks a lock kept in
        another service than the one the token comes from), or None."""
        asks = self.resource.checks_lock_of
        if asks and not same_service(asks, self.lock_service):
            return (
                f"{self.resource.noun} checks a lock kept in {SERVICE_BY_ID[asks].name}, but "
                f"the token comes from {self.token.system.name}"
            )
        return None

    def design(self) -> Design:
        """The model's design for this stack with every assumption of a real stack (a holder
        may crash), or a DesignError in the catalogue's words."""
        problem = self.coherence_problem()
        if problem is not None:
            raise DesignError(f"this stack does not fit together: {problem}")
        options: dict[str, Any] = {}
        for entry in self.checked_parts:
            options.update(entry.options)
        try:
            return Design().with_changes(options)
        except DesignError as error:
            named = ", ".join(p.id for p in self.parts)
            raise DesignError(f"this stack does not fit together ({named}): {error}") from None

    def with_part(self, new: Part) -> Stack:
        """The stack with new in place of its slot's entry (token, resource) or added."""
        match new.slot:
            case Slot.TOKEN:
                return Stack(new, self.resource, self.practices)
            case Slot.RESOURCE:
                return Stack(self.token, new, self.practices)
            case Slot.WORKERS | Slot.ALSO:
                return Stack(self.token, self.resource, self.practices | {new})

    def without(self, practice: Part) -> Stack:
        """The stack without one practice."""
        return Stack(self.token, self.resource, self.practices - {practice})

    def ids(self) -> dict[str, Any]:
        """The stack as catalogue ids, for JSON and links (assumptions are not listed:
        every stack is checked with them)."""
        return {
            "token": self.token.id,
            "resource": self.resource.id,
            "practices": [p.id for p in self.parts if not p.slot.single and p not in ASSUMED],
        }

    def in_words(self) -> str:
        """The stack in its own words, one part after another."""
        return "; ".join(f"{p.slot.words}: {p.words}" for p in self.parts)


@dataclass(frozen=True)
class Example:
    """A stack people really run, to start from: its catalogue ids and a title."""

    title: str
    token: str
    resource: str
    practices: tuple[str, ...] = ()

    def stack(self) -> Stack:
        """The example as a stack."""
        return Stack.of(self.token, self.resource, self.practices)


EXAMPLES: Final = (
    Example(
        "etcd lease ID, PostgreSQL read then write",
        "etcd-lease-id",
        "sql-select-then-update",
    ),
    Example(
        "etcd lease ID, a conditional UPDATE, workers checking their lease",
        "etcd-lease-id",
        "sql-conditional-update",
        ("worker-checks-lease",),
    ),
    Example("etcd create_revision, a plain UPDATE", "etcd-create-revision", "sql-plain-update"),
    Example("etcd key version, a conditional UPDATE", "etcd-version", "sql-conditional-update"),
    Example(
        "etcd create_revision, an object store read then PUT",
        "etcd-create-revision",
        "object-read-then-put",
    ),
    Example(
        "etcd create_revision, the fence in the store's memory",
        "etcd-create-revision",
        "sql-conditional-update",
        ("fence-in-memory",),
    ),
    Example(
        "ZooKeeper sequence number, read-modify-write with a plain UPDATE",
        "zookeeper-sequence",
        "sql-plain-update",
        ("read-modify-write",),
    ),
    Example(
        "ZooKeeper dataVersion, SELECT … FOR UPDATE",
        "zookeeper-data-version",
        "sql-select-for-update",
    ),
    Example("Redis random value, a plain SET in Redis", "redis-random-value", "redis-plain-set"),
    Example(
        "Redis random value, read-modify-write in PostgreSQL",
        "redis-random-value",
        "sql-plain-update",
        ("read-modify-write",),
    ),
    Example(
        "Redis INCR in memory, a conditional UPDATE",
        "redis-incr",
        "sql-conditional-update",
    ),
    Example(
        "Redis random value, a plain PUT to an object store",
        "redis-random-value",
        "object-plain-put",
    ),
    Example(
        "Consul ModifyIndex, SELECT then UPDATE", "consul-modify-index", "sql-select-then-update"
    ),
    Example("A timestamp as the token, a plain file", "worker-clock", "file-write"),
    Example(
        "An etcd key with no lease, a plain UPDATE",
        "etcd-create-revision",
        "sql-plain-update",
        ("lock-without-lease",),
    ),
    Example(
        "etcd lease ID, the write in an etcd transaction", "etcd-lease-id", "etcd-txn-on-lock-key"
    ),
)
"""Stacks people run, each checked by the tests: its first fix is complete, in its own
services when those offer one."""
