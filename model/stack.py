"""The catalogue of real parts: what an engineer's stack is made of, mapped to the model's options.

A stack is one token source, one way the resource writes, and any number of practices
(what the workers do, what the lock service or the resource keeps). Each catalogue entry
is one row: its id, its words, the options it sets in the model, what it means to build,
and where the mapping comes from. A stack's design is the union of its rows' options;
nothing else decides it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from model.design import Design
from model.options import DesignError


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


@dataclass(frozen=True, eq=False)
class Part:
    """One real part or practice, mapped to the model's options (compared by identity:
    each entry exists once, in the catalogue)."""

    id: str
    slot: Slot
    words: str
    """What it is, in the words of the system it comes from."""
    options: Mapping[str, Any]
    """The design options it sets (every other option stays at the core's default)."""
    build: str
    """What adopting it means to build, as an instruction."""
    source: str
    """Where the mapping comes from."""
    system: str = "any"
    """The product it belongs to (etcd, ZooKeeper, …), to prefer a fix from the same one."""
    noun: str = ""
    """A short name: for a token what it is called in that system (`lease ID`), for a
    resource its write (`the conditional UPDATE … WHERE fence <= $t`)."""
    drop: str = ""
    """For a practice: what giving it up means to build."""
    assumption: bool = False
    """A fact of the world the stack lives in (a holder may crash), not a choice: a fix
    never adds or drops it."""

    def to_dict(self) -> dict[str, Any]:
        """The entry as JSON."""
        return {
            "id": self.id,
            "slot": str(self.slot),
            "words": self.words,
            "model": {name: _json_value(value) for name, value in self.options.items()},
            "build": self.build,
            "source": self.source,
        }

    @property
    def mirror(self) -> str:
        """The part in a few words for an option's label: `etcd create_revision`."""
        name = self.noun or self.words
        return name if self.system == "any" or self.system in name else f"{self.system} {name}"

    def model_words(self) -> str:
        """The options it sets, as `token counter-volatile, coordinator_restarts 1`."""
        return ", ".join(
            name if value is True else f"{name} {_json_value(value)}"
            for name, value in self.options.items()
        )


def _json_value(value: Any) -> Any:
    """An option value as JSON (tuples as lists)."""
    return list(value) if isinstance(value, tuple) else value


ETCD_KV: Final = "etcd API reference, mvccpb.KeyValue: create_revision, mod_revision, version"
ZK_STAT: Final = "ZooKeeper Programmer's Guide: sequential znodes and the Stat structure"

CATALOGUE: Final[tuple[Part, ...]] = (
    Part(
        "etcd-create-revision",
        Slot.TOKEN,
        "etcd lock key's create_revision (also the etcd Mutex's key revision)",
        {"token": "counter"},
        "use the lock key's create_revision as the token",
        ETCD_KV + "; clientv3/concurrency Mutex.Header().Revision",
        system="etcd",
        noun="create_revision",
    ),
    Part(
        "etcd-mod-revision",
        Slot.TOKEN,
        "etcd lock key's mod_revision",
        {"token": "counter"},
        "use the lock key's mod_revision as the token",
        ETCD_KV + ": every write to the store raises the revision",
        system="etcd",
        noun="mod_revision",
    ),
    Part(
        "etcd-version",
        Slot.TOKEN,
        "etcd key version (resets when the key is deleted)",
        {"token": "key-version"},
        "use the lock key's version as the token",
        ETCD_KV + ": version is 1 for a newly created key",
        system="etcd",
        noun="key version",
    ),
    Part(
        "etcd-lease-id",
        Slot.TOKEN,
        "etcd lease ID",
        {"token": "random"},
        "use the etcd lease ID as the token",
        "etcd API reference, LeaseGrant: IDs are unique, not ordered across members",
        system="etcd",
        noun="lease ID",
    ),
    Part(
        "zookeeper-sequence",
        Slot.TOKEN,
        "ZooKeeper lock znode's sequence number or czxid",
        {"token": "counter"},
        "use the lock znode's sequence number (or its czxid) as the token",
        ZK_STAT + " (czxid: the zxid of the change that created the znode)",
        system="ZooKeeper",
        noun="znode sequence number",
    ),
    Part(
        "zookeeper-data-version",
        Slot.TOKEN,
        "ZooKeeper znode dataVersion",
        {"token": "key-version"},
        "use the lock znode's dataVersion as the token",
        ZK_STAT + " (dataVersion counts changes to one znode's data)",
        system="ZooKeeper",
        noun="dataVersion",
    ),
    Part(
        "consul-modify-index",
        Slot.TOKEN,
        "Consul ModifyIndex of the lock key",
        {"token": "counter"},
        "use the lock key's ModifyIndex as the token",
        "Consul KV API: ModifyIndex, the Raft index of the key's last change",
        system="Consul",
        noun="ModifyIndex",
    ),
    Part(
        "redis-random-value",
        Slot.TOKEN,
        "Redis lock's random value (SET NX PX, Redlock)",
        {"token": "random"},
        "use the Redis lock's random value as the token",
        "Redis docs, 'Distributed Locks with Redis': a random value unique to each client",
        system="Redis",
        noun="random value",
    ),
    Part(
        "redis-incr",
        Slot.TOKEN,
        "a Redis INCR counter without persistence",
        {"token": "counter-volatile", "coordinator_restarts": 1},
        "use a Redis INCR counter (kept only in memory) as the token",
        "Redis persistence docs: without RDB or AOF a restarted server starts empty",
        system="Redis",
        noun="INCR value",
    ),
    Part(
        "worker-clock",
        Slot.TOKEN,
        "the worker's own clock (a timestamp)",
        {"token": "local-clock"},
        "use the worker's own clock as the token",
        "clocks of separate machines drift and jump; no single order comes from them",
        noun="timestamp",
    ),
    Part(
        "wrapping-sequence",
        Slot.TOKEN,
        "a small sequence number that wraps",
        {"token": "wrapping", "wrap": 2},
        "use a small sequence number that wraps around as the token",
        "any fixed-width counter that overflows",
        noun="sequence number",
    ),
    Part(
        "plain-write",
        Slot.RESOURCE,
        "plain write (the resource checks nothing)",
        {"receiver": "none"},
        "write without any check of the token",
        "an ordinary INSERT, UPDATE or PUT",
        noun="a plain write",
    ),
    Part(
        "sql-conditional-update",
        Slot.RESOURCE,
        "one `UPDATE … SET fence = $t … WHERE fence <= $t` (PostgreSQL, SQLite, MySQL), "
        "or `SELECT … FOR UPDATE` then `UPDATE` in one transaction",
        {"receiver": "fenced"},
        "do the check and the write in one `UPDATE … SET fence = $t … WHERE fence <= $t` "
        "(or under a row lock in one transaction)",
        "PostgreSQL docs, UPDATE and row-level locks (a conditional write checks and writes "
        "atomically)",
        noun="the conditional UPDATE … WHERE fence <= $t",
    ),
    Part(
        "sql-conditional-update-strict",
        Slot.RESOURCE,
        "the same conditional UPDATE with `fence < $t`",
        {"receiver": "fenced-strict"},
        "do the check and the write in one `UPDATE … WHERE fence < $t`",
        "a strict comparison refuses the holder's own second write",
        noun="the conditional UPDATE … WHERE fence < $t",
    ),
    Part(
        "sql-select-then-update",
        Slot.RESOURCE,
        "`SELECT fence`, then `UPDATE` in another statement without a row lock",
        {"receiver": "fenced-nonatomic"},
        "read the fence with SELECT, then write with a separate UPDATE",
        "check-then-act: another write can pass the same check in between",
        noun="SELECT, then a separate UPDATE",
    ),
    Part(
        "first-token-wins",
        Slot.RESOURCE,
        "only the first token is accepted (equality)",
        {"receiver": "equality"},
        "accept only writes carrying the first token the resource saw",
        "a resource bound to one token for ever",
        noun="a resource that accepts only the first token",
    ),
    Part(
        "etcd-txn-on-lock-key",
        Slot.RESOURCE,
        "the write in an etcd transaction comparing the lock key's create_revision",
        {"receiver": "lease-aware"},
        "do the write in the same etcd transaction that compares the lock key's "
        "create_revision with the token (the check and the write in one step)",
        "etcd API reference, Txn: Compare on create_revision, then Put, atomically",
        system="etcd",
        noun="the etcd transaction on the lock key",
    ),
    Part(
        "worker-checks-lease",
        Slot.WORKERS,
        "workers check their own lease before each write",
        {"worker_check": True},
        "have each worker check its lease's remaining time before each write",
        "M. Kleppmann, 'How to do distributed locking' (2016): a pause can follow the check",
        drop="stop relying on the worker's own lease check",
    ),
    Part(
        "read-modify-write",
        Slot.WORKERS,
        "workers read, then write what they computed",
        {"workload": "rmw"},
        "have workers read, then write back what they computed",
        "a read-modify-write cycle",
        drop="make the writes blind (not computed from a read)",
    ),
    Part(
        "fenced-reads",
        Slot.WORKERS,
        "reads carry the token too",
        {"fenced_reads": True},
        "send the token with every read too, checked like a write (and raising the fence)",
        "a read that raises the fence keeps older holders from writing after it",
        drop="stop checking the token on reads",
    ),
    Part(
        "keepalive",
        Slot.WORKERS,
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
        "the fence kept in the storage process's memory",
        {"hwm": "volatile", "storage_restarts": 1},
        "keep the fence in the storage process's memory",
        "any in-memory max_seen lost on restart",
        drop="keep the fence on disk, in the same row or transaction as the data",
    ),
    Part(
        "lock-without-lease",
        Slot.ALSO,
        "the lock has no lease (an etcd key with no lease, a lock file): it lasts until released",
        {"expiry": "never"},
        "take the lock without a lease, so it is held until its holder releases it",
        "etcd Put without a lease; a lock file: nothing frees the lock of a holder that died",
        drop="give the lock a lease (a TTL), so a crashed holder's lock is freed",
    ),
    Part(
        "holder-may-crash",
        Slot.ALSO,
        "a holder may crash for good (its process killed, its machine lost)",
        {"crashes": 1},
        "let the check include a holder that crashes while it holds the lock",
        "the lock service cannot tell a crashed holder from a paused one",
        drop="assume no holder ever crashes",
        assumption=True,
    ),
    Part(
        "fence-at-grant",
        Slot.ALSO,
        "the lock service writes the fence into the resource at each grant",
        {"grant_fences": True},
        "have the lock service raise the resource's fence to the new token at each grant",
        "the grant and the fence raised in one step",
        drop="stop raising the fence at each grant",
    ),
)

BY_ID: Final = {part.id: part for part in CATALOGUE}


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
    """The entry with this id in this slot, or a `DesignError` listing the slot's ids."""
    found = BY_ID.get(identifier)
    if found is None or found.slot is not slot:
        shown = identifier if len(identifier) <= 40 else identifier[:37] + "..."
        known = ", ".join(p.id for p in parts_of(slot))
        raise DesignError(f"{shown!r} is not a choice for {slot.words}: use one of {known}")
    return found


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
            chosen.append(found)
        return Stack(part(token, Slot.TOKEN), part(resource, Slot.RESOURCE), frozenset(chosen))

    @property
    def parts(self) -> tuple[Part, ...]:
        """Every entry of the stack, in catalogue order."""
        chosen = {self.token, self.resource, *self.practices}
        return tuple(p for p in CATALOGUE if p in chosen)

    def design(self) -> Design:
        """The model's design for this stack, or a `DesignError` in the catalogue's words."""
        options: dict[str, Any] = {}
        for entry in self.parts:
            options.update(entry.options)
        try:
            return Design().with_changes(options)
        except DesignError as error:
            raise DesignError(
                f"this stack does not fit together ({', '.join(p.id for p in self.parts)}): {error}"
            ) from None

    def with_part(self, new: Part) -> Stack:
        """The stack with `new` in place of its slot's entry (token, resource) or added."""
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
        """The stack as catalogue ids, for JSON and links."""
        return {
            "token": self.token.id,
            "resource": self.resource.id,
            "practices": [p.id for p in self.parts if not p.slot.single],
        }

    def in_words(self) -> str:
        """The stack in its own words, one part after another."""
        return "; ".join(f"{p.slot.words}: {p.words}" for p in self.parts)
