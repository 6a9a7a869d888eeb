"""Named designs that mirror real systems, each with the lesson it teaches and a source.

The real-world claims live here and only here, so that the CLI, the web app and the
tests all quote the same text. Each preset's `expected` verdicts at the reference bounds
(W=2 L=2 T=6 G=3 K=2) are pinned by the test suite against the explorer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from model.design import Design, DesignError


@dataclass(frozen=True)
class Preset:
    """A design with a name, what it mirrors, its lesson and where the claim comes from."""

    name: str
    design: Design
    mirrors: str
    lesson: str
    source: str


PRESETS_LIST: Final = (
    Preset(
        "lease-only",
        Design(receiver="none"),
        "a TTL lock such as Redis SET NX PX, and plain writes",
        "A lease alone gives liveness, not safety: a paused holder writes after its lease, "
        "out of order with the new holder (P1, P2, P3 fail).",
        "Redis docs, 'Distributed Locks with Redis'; M. Kleppmann, 'How to do distributed "
        "locking' (2016)",
    ),
    Preset(
        "worker-checks-lease",
        Design(receiver="none", worker_check=True),
        "a client that checks its lease's remaining time before each write",
        "Checking the lease before sending does not help: the pause can fall between the "
        "check and the delivery.",
        "M. Kleppmann, 'How to do distributed locking' (2016), the GC-pause example",
    ),
    Preset(
        "fencing",
        Design(),
        "a monotonic fencing token checked atomically by the resource (etcd revision, "
        "ZooKeeper zxid, Chubby sequencer, Hazelcast FencedLock)",
        "Fencing keeps writes in token and grant order (P1, P3 hold), yet a stale write can "
        "still land after expiry, before the new holder's first request (P2 fails).",
        "M. Burrows, 'The Chubby lock service' (OSDI 2006), sequencers; Hazelcast docs, "
        "FencedLock",
    ),
    Preset(
        "fencing-strict",
        Design(receiver="fenced-strict"),
        "a resource that demands a strictly greater token on every write",
        "Using > instead of >= refuses the holder's own second write: safe, but it breaks "
        "the legitimate holder (P4 fails).",
        "design-variants.md; the >= of a conditional write `WHERE fence <= $t`",
    ),
    Preset(
        "nonatomic-receiver",
        Design(receiver="fenced-nonatomic"),
        "a resource that checks the token, then writes, in separate steps",
        "Check-then-act at the resource loses fencing: two checks can pass before either "
        "write, and the older write lands last (P1, P3 fail).",
        "M. Kleppmann, 'How to do distributed locking' (2016): the check must be atomic "
        "with the write",
    ),
    Preset(
        "volatile-hwm",
        Design(hwm="volatile", storage_restarts=1),
        "a resource that keeps its highest seen token in memory only",
        "If the resource forgets its mark on restart, an old token is accepted again.",
        "design-variants.md; any in-memory max_seen lost on restart",
    ),
    Preset(
        "volatile-counter",
        Design(token="counter-volatile", coordinator_restarts=1),
        "a token counter kept in a store that loses state on failover",
        "Tokens must grow across coordinator failover; a counter that restarts at 1 reuses "
        "old values and the resource rejects the new holder.",
        "Jepsen analyses of lock services (e.g. Hazelcast 3.8.3, 2017) on state lost in "
        "failover",
    ),
    Preset(
        "key-version-token",
        Design(token="key-version"),
        "etcd's per-key `version`, which resets when the key is deleted",
        "A number that does not grow with every grant keeps P1 trivially but not grant "
        "order: an older grant's write lands after a newer one's (P3 fails).",
        "etcd docs, KeyValue fields: version resets to 0 on delete; use mod/create revision",
    ),
    Preset(
        "random-token",
        Design(token="random"),
        "a UUID, a lease ID or Redlock's random value used as the token",
        "A unique but unordered token cannot fence: the resource cannot tell old from new.",
        "M. Kleppmann, 'How to do distributed locking' (2016), on Redlock's random value",
    ),
    Preset(
        "local-clock-token",
        Design(token="local-clock"),
        "tokens made from each worker's own clock",
        "A worker whose clock runs ahead hands the resource a token newer than the next "
        "grant's, and the legitimate holder is refused.",
        "M. Kleppmann, 'How to do distributed locking' (2016), on clock assumptions",
    ),
    Preset(
        "wrapping-counter",
        Design(token="wrapping", wrap=2),
        "a sequence number that wraps or restarts",
        "When the token wraps, a newer grant carries a smaller number and is refused, and "
        "order is lost.",
        "design-variants.md; any fixed-width sequence number",
    ),
    Preset(
        "first-writer-wins",
        Design(receiver="equality"),
        "storage that compares tokens for equality",
        "Equality is not ordering: the first writer's token is accepted forever, and every "
        "later holder is refused.",
        "design-variants.md; an equality-checked version column",
    ),
    Preset(
        "grant-fences",
        Design(grant_fences=True),
        "a lock service and storage that commit together (the grant itself fences storage)",
        "Fencing the storage at grant time closes the gap after expiry: the stale write is "
        "refused even before the new holder writes.",
        "design-variants.md; storage-integrated locks such as etcd transactions guarding "
        "the data key",
    ),
    Preset(
        "lease-aware-receiver",
        Design(receiver="lease-aware"),
        "a resource that checks the live lease in the same transaction (etcd Txn on the "
        "lease key)",
        "A receiver that consults the live lease refuses every write outside its lease (P2 "
        "holds).",
        "etcd docs, transactions comparing a key's lease; the Jepsen etcd 3.4.3 analysis (2020) "
        "on lock safety",
    ),
    Preset(
        "rmw-fencing-unfenced-reads",
        Design(workload="rmw"),
        "read-modify-write under a fenced write, where reads carry no token",
        "Fencing only the write is not enough: a stale worker's write can overwrite the new "
        "holder's update (P5, lost update).",
        "design-variants.md; Jepsen analyses of lock-protected read-modify-write",
    ),
    Preset(
        "rmw-fencing-fenced-reads",
        Design(workload="rmw", fenced_reads=True),
        "read-modify-write where the read carries the token too",
        "When the new holder's first request (its read) fences the resource, the stale "
        "write is refused.",
        "design-variants.md",
    ),
    Preset(
        "rmw-lease-only",
        Design(receiver="none", workload="rmw"),
        "read-modify-write under a TTL lock alone",
        "Without fencing, a paused worker's write silently overwrites another's update.",
        "the seed's lost-update report; M. Kleppmann, 'How to do distributed locking' (2016)",
    ),
    Preset(
        "rmw-lease-aware",
        Design(receiver="lease-aware", workload="rmw", fenced_reads=True),
        "read-modify-write where the resource checks the live lease on reads and writes",
        "Checking the live lease on every request keeps every property.",
        "design-variants.md",
    ),
)

PRESETS: Final = {preset.name: preset for preset in PRESETS_LIST}
PRESET_NAMES: Final = tuple(PRESETS)


def preset(name: str) -> Preset:
    """The preset with this name, or an error listing the known names."""
    try:
        return PRESETS[name]
    except KeyError:
        raise DesignError(f"unknown preset {name!r}: choose one of {', '.join(PRESET_NAMES)}") from None
