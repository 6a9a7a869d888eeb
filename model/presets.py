"""Named designs that mirror real systems, each with the lesson it teaches and a source.

The real-world claims live here and only here, so that the CLI, the web app and the
tests all quote the same text. A lesson is a template whose verdict notes (`{P2}` becomes
`(P2 fails)`) are rendered from the preset's claims: its verdict on every property at
the reference bounds, which the tests check against the explorer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from model.claims import Claim, Lesson, claims_at
from model.design import (
    REFERENCE_BOUNDS,
    Design,
    DesignError,
    Expiry,
    MarkStore,
    Receiver,
    Token,
    Workload,
)


@dataclass(frozen=True)
class Preset:
    """A design with a name, what it mirrors, its lesson, a source and its verdicts."""

    name: str
    design: Design
    mirrors: str
    template: str
    """The lesson with `{P…}` where its verdict notes go."""
    source: str
    claims: tuple[Claim, ...]
    """The verdict on every property at the reference bounds, checked by the tests."""

    @property
    def lesson(self) -> str:
        """The lesson in words, with its verdict notes rendered from the claims."""
        return self.as_lesson().text

    def as_lesson(self) -> Lesson:
        """The lesson as data: design, template and claims."""
        return Lesson(self.design, self.template, self.claims)

    def to_dict(self) -> dict[str, Any]:
        """The preset as JSON: name, mirrors, lesson, source, options and claims."""
        return {
            "name": self.name,
            "mirrors": self.mirrors,
            "lesson": self.lesson,
            "source": self.source,
            "design": self.design.to_dict(),
            "claims": [claim.to_dict(self.design) for claim in self.claims],
        }


PRESETS_LIST: Final = (
    Preset(
        "lease-only",
        Design(receiver=Receiver.NONE),
        "a TTL lock such as Redis SET NX PX, and plain writes",
        "A lease alone gives liveness, not safety: a paused holder writes after its lease "
        "{P2}, and after the new holder, out of token and grant order {P1,P3}.",
        "Redis docs, 'Distributed Locks with Redis'; M. Kleppmann, 'How to do distributed "
        "locking' (2016)",
        claims_at(REFERENCE_BOUNDS, P1=8, P2=5, P3=8, P4="vacuous", P5="vacuous", P6="vacuous"),
    ),
    Preset(
        "worker-checks-lease",
        Design(receiver=Receiver.NONE, worker_check=True),
        "a client that checks its lease's remaining time before each write",
        "Checking the lease before sending does not help: the pause can fall between the "
        "check and the delivery {P1,P2,P3}, exactly as with the lease alone.",
        "M. Kleppmann, 'How to do distributed locking' (2016), the GC-pause example",
        claims_at(REFERENCE_BOUNDS, P1=8, P2=5, P3=8, P4="vacuous", P5="vacuous", P6="vacuous"),
    ),
    Preset(
        "fencing",
        Design(),
        "a monotonic fencing token checked atomically by the resource (etcd revision, "
        "ZooKeeper zxid, Chubby sequencer, Hazelcast FencedLock)",
        "Fencing keeps writes in token and grant order {P1,P3} without refusing the "
        "holder {P4}, yet a stale write can still land after expiry, before the new "
        "holder's first request {P2}.",
        "M. Burrows, 'The Chubby lock service' (OSDI 2006), sequencers; Hazelcast docs, FencedLock",
        claims_at(
            REFERENCE_BOUNDS, P1="holds", P2=5, P3="holds", P4="holds", P5="vacuous", P6="vacuous"
        ),
    ),
    Preset(
        "fencing-strict",
        Design(receiver=Receiver.FENCED_STRICT),
        "a resource that demands a strictly greater token on every write",
        "Using > instead of >= still keeps order {P1,P3} but refuses the holder's own "
        "second write: safe, yet it breaks the legitimate holder {P4}.",
        "the >= of a conditional write `WHERE fence <= $t`",
        claims_at(REFERENCE_BOUNDS, P1="holds", P2=5, P3="holds", P4=5, P5="vacuous", P6="vacuous"),
    ),
    Preset(
        "nonatomic-receiver",
        Design(receiver=Receiver.FENCED_NONATOMIC),
        "a resource that checks the token, then writes, in separate steps",
        "Check-then-act at the resource loses fencing: two checks can pass before either "
        "write, and the older write lands last {P1,P3}.",
        "M. Kleppmann, 'How to do distributed locking' (2016): the check must be atomic "
        "with the write",
        claims_at(REFERENCE_BOUNDS, P1=10, P2=6, P3=10, P4="holds", P5="vacuous", P6="vacuous"),
    ),
    Preset(
        "volatile-hwm",
        Design(hwm=MarkStore.VOLATILE, storage_restarts=1),
        "a resource that keeps its highest seen token in memory only",
        "If the resource forgets its mark on restart, an old token is accepted again after "
        "a newer one {P1,P3}.",
        "any in-memory max_seen lost on restart",
        claims_at(REFERENCE_BOUNDS, P1=9, P2=5, P3=9, P4="holds", P5="vacuous", P6="vacuous"),
    ),
    Preset(
        "volatile-counter",
        Design(token=Token.COUNTER_VOLATILE, coordinator_restarts=1),
        "a token counter kept in a store that loses state on failover",
        "Tokens must grow across coordinator failover: a counter that restarts hands out an "
        "old value again, so a stale write passes the check {P3} and the new holder can "
        "be refused {P4}; the receiver itself never goes backwards {P1}.",
        "Jepsen analyses of lock services (e.g. Hazelcast 3.8.3, 2017) on state lost in failover",
        claims_at(REFERENCE_BOUNDS, P1="holds", P2=4, P3=7, P4=12, P5="vacuous", P6="vacuous"),
    ),
    Preset(
        "key-version-token",
        Design(token=Token.KEY_VERSION),
        "etcd's per-key `version`, which resets when the key is deleted",
        "A number that does not grow with every grant keeps P1 trivially {P1} but not "
        "grant order: an older grant's write lands after a newer one's {P3}.",
        "etcd docs, KeyValue fields: version resets to 0 on delete; use mod/create revision",
        claims_at(
            REFERENCE_BOUNDS, P1="holds", P2=5, P3=8, P4="vacuous", P5="vacuous", P6="vacuous"
        ),
    ),
    Preset(
        "random-token",
        Design(token=Token.RANDOM),
        "a UUID, a lease ID or Redlock's random value used as the token",
        "A unique but unordered token cannot fence: the resource cannot tell old from new, so "
        "stale writes get through {P3} and new holders are refused {P4}.",
        "M. Kleppmann, 'How to do distributed locking' (2016), on Redlock's random value",
        claims_at(REFERENCE_BOUNDS, P1="holds", P2=5, P3=8, P4=8, P5="vacuous", P6="vacuous"),
    ),
    Preset(
        "local-clock-token",
        Design(token=Token.LOCAL_CLOCK),
        "tokens made from each worker's own clock",
        "A worker whose clock runs one tick ahead hands the resource a token newer than the "
        "next grant's, and the legitimate holder is refused {P4}; with a skew below the "
        "lease, order survives {P3}.",
        "M. Kleppmann, 'How to do distributed locking' (2016), on clock assumptions",
        claims_at(REFERENCE_BOUNDS, P1="holds", P2=5, P3="holds", P4=9, P5="vacuous", P6="vacuous"),
    ),
    Preset(
        "wrapping-counter",
        Design(token=Token.WRAPPING, wrap=2),
        "a sequence number that wraps or restarts",
        "When the token wraps, a newer grant carries a smaller number: it is refused {P4} "
        "and order is lost {P3}.",
        "any fixed-width sequence number",
        claims_at(REFERENCE_BOUNDS, P1="holds", P2=5, P3=14, P4=12, P5="vacuous", P6="vacuous"),
    ),
    Preset(
        "first-writer-wins",
        Design(receiver=Receiver.EQUALITY),
        "storage that compares tokens for equality",
        "Equality is not ordering: the first writer's token is accepted forever, and every "
        "later holder is refused {P4}.",
        "an equality-checked version column",
        claims_at(REFERENCE_BOUNDS, P1="holds", P2=5, P3="holds", P4=8, P5="vacuous", P6="vacuous"),
    ),
    Preset(
        "grant-fences",
        Design(grant_fences=True),
        "a lock service and storage that commit together (the grant itself fences storage)",
        "Fencing the storage at grant time refuses a stale write as soon as the next grant "
        "is made, even before the new holder writes {P1,P3,P4}; a write landing after "
        "expiry with no newer grant yet is still outside its lease {P2}.",
        "storage-integrated locks such as etcd transactions guarding the data key",
        claims_at(
            REFERENCE_BOUNDS, P1="holds", P2=5, P3="holds", P4="holds", P5="vacuous", P6="vacuous"
        ),
    ),
    Preset(
        "lease-aware-receiver",
        Design(receiver=Receiver.LEASE_AWARE),
        "a resource that checks the live lease in the same transaction (etcd Txn on the lease key)",
        "A receiver that consults the live lease refuses every write outside its lease "
        "{P1,P2,P3,P4}.",
        "etcd docs, transactions comparing a key's lease; the Jepsen etcd 3.4.3 analysis (2020) "
        "on lock safety",
        claims_at(
            REFERENCE_BOUNDS,
            P1="holds",
            P2="holds",
            P3="holds",
            P4="holds",
            P5="vacuous",
            P6="vacuous",
        ),
    ),
    Preset(
        "rmw-fencing-unfenced-reads",
        Design(workload=Workload.RMW),
        "read-modify-write under a fenced write, where reads carry no token",
        "Fencing only the write is not enough: the stale worker's write lands between the new "
        "holder's read and its write, and the new holder's write, computed from the value "
        "before it, erases it: a lost update {P5}, although tokens stay ordered {P1,P3}.",
        "Jepsen analyses of lock-protected read-modify-write",
        claims_at(REFERENCE_BOUNDS, P1="holds", P2=7, P3="holds", P4="holds", P5=12, P6="vacuous"),
    ),
    Preset(
        "rmw-fencing-fenced-reads",
        Design(workload=Workload.RMW, fenced_reads=True),
        "read-modify-write where the read carries the token too",
        "When the new holder's first request (its read) fences the resource, the stale "
        "write is refused and no update is lost {P5}.",
        "docs/model.md, design options",
        claims_at(
            REFERENCE_BOUNDS, P1="holds", P2=7, P3="holds", P4="holds", P5="holds", P6="vacuous"
        ),
    ),
    Preset(
        "rmw-lease-only",
        Design(receiver=Receiver.NONE, workload=Workload.RMW),
        "read-modify-write under a TTL lock alone",
        "Without fencing, a paused worker's stale write is accepted out of token and grant "
        "order {P1,P3}, and one that lands between the new holder's read and write is "
        "erased by it {P5}.",
        "M. Kleppmann, 'How to do distributed locking' (2016)",
        claims_at(REFERENCE_BOUNDS, P1=12, P2=7, P3=12, P4="vacuous", P5=12, P6="vacuous"),
    ),
    Preset(
        "rmw-lease-aware",
        Design(receiver=Receiver.LEASE_AWARE, workload=Workload.RMW, fenced_reads=True),
        "read-modify-write where the resource checks the live lease on reads and writes",
        "Checking the live lease on every request keeps every property {P1,P2,P3,P4,P5}.",
        "docs/model.md, design options",
        claims_at(
            REFERENCE_BOUNDS,
            P1="holds",
            P2="holds",
            P3="holds",
            P4="holds",
            P5="holds",
            P6="vacuous",
        ),
    ),
    Preset(
        "lock-without-lease",
        Design(receiver=Receiver.NONE, expiry=Expiry.NEVER, crashes=1),
        "a lock with no timeout: an etcd key put without a lease, a lock file",
        "A lock that never expires is safe against a pause: nobody else gets it while its "
        "holder sleeps, so writes stay in order and within the grant {P1,P2,P3}; but a holder "
        "that crashes keeps it for ever, and nobody ever gets it again {P6}.",
        "etcd docs, a key without a lease stays until deleted; M. Kleppmann, 'How to do "
        "distributed locking' (2016), on why a lock needs a timeout",
        claims_at(
            REFERENCE_BOUNDS, P1="holds", P2="holds", P3="holds", P4="vacuous", P5="vacuous", P6=5
        ),
    ),
    Preset(
        "keepalive-lease",
        Design(receiver=Receiver.NONE, renew=True, crashes=1),
        "a lease kept alive by heartbeats (etcd lease KeepAlive, ZooKeeper session heartbeats, "
        "Consul session renew), and plain writes",
        "Renewing the lease while the holder runs frees a crashed holder's lock within one "
        "lease {P6}; but a paused holder renews nothing, its lease runs out while it sleeps, "
        "and its late write lands outside its lease and out of order {P1,P2,P3}.",
        "etcd docs, lease KeepAlive; ZooKeeper docs, session timeouts; Consul docs, sessions",
        claims_at(REFERENCE_BOUNDS, P1=8, P2=5, P3=8, P4="vacuous", P5="vacuous", P6="holds"),
    ),
    Preset(
        "keepalive-fencing",
        Design(renew=True, crashes=1),
        "a lease kept alive by heartbeats, with a fencing token checked atomically by the resource",
        "Keepalives with fencing: a crashed holder's lock is freed within one lease {P6} and "
        "writes keep token and grant order {P1,P3}, yet a paused holder's stale write can "
        "still land after its lease ran out, before the new holder's first request {P2}.",
        "etcd docs, lease KeepAlive and revisions; M. Kleppmann, 'How to do distributed "
        "locking' (2016)",
        claims_at(
            REFERENCE_BOUNDS, P1="holds", P2=5, P3="holds", P4="holds", P5="vacuous", P6="holds"
        ),
    ),
)

PRESETS: Final = {preset.name: preset for preset in PRESETS_LIST}
PRESET_NAMES: Final = tuple(PRESETS)


def matching(design: Design) -> Preset | None:
    """The preset with exactly this design, if any (its lesson speaks of this design)."""
    return next((p for p in PRESETS_LIST if p.design == design), None)


def preset(name: str) -> Preset:
    """The preset with this name, or an error listing the known names."""
    try:
        return PRESETS[name]
    except KeyError:
        raise DesignError(
            f"unknown preset {name!r}: choose one of {', '.join(PRESET_NAMES)}"
        ) from None
