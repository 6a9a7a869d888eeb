"""Named designs that mirror real systems, each with the lesson it teaches and a source.

The real-world claims live here and only here, so that the CLI, the web app and the
tests all quote the same text. Each preset's `expected` verdicts at the reference bounds
(W=2 L=2 T=6 G=3 K=2) are pinned by the test suite against the explorer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from model.design import Design, DesignError, MarkStore, Receiver, Token, Workload

CLAIM: Final = re.compile(r"\((P\d(?:, P\d)*) (fails?|holds?)\)")
"""A claim inside a lesson: `(P2 fails)`, `(P1, P3 fail)`, `(P2 holds)`."""


@dataclass(frozen=True)
class Preset:
    """A design with a name, what it mirrors, its lesson and where the claim comes from."""

    name: str
    design: Design
    mirrors: str
    lesson: str
    source: str
    expected: tuple[int | None, int | None, int | None, int | None, int | None]
    """Shortest violation of P1..P5 at the reference bounds (None: holds), pinned by tests."""

    def expected_verdicts(self) -> dict[str, int | None]:
        """The pinned verdicts by property name."""
        return dict(zip(("P1", "P2", "P3", "P4", "P5"), self.expected, strict=True))

    def claims(self) -> dict[str, bool]:
        """What the lesson text claims, read from its `(P1, P3 fail)` / `(P2 holds)` notes.

        Every claim is a property and whether it holds; tests check each one against the
        explorer, so the description cannot drift from the model.
        """
        found: dict[str, bool] = {}
        for names, verb in CLAIM.findall(self.lesson):
            for name in names.split(", "):
                found[name] = verb.startswith("hold")
        return found


PRESETS_LIST: Final = (
    Preset(
        "lease-only",
        Design(receiver=Receiver.NONE),
        "a TTL lock such as Redis SET NX PX, and plain writes",
        "A lease alone gives liveness, not safety: a paused holder writes after its lease "
        "(P2 fails), and after the new holder, out of token and grant order (P1, P3 fail).",
        "Redis docs, 'Distributed Locks with Redis'; M. Kleppmann, 'How to do distributed "
        "locking' (2016)",
        expected=(8, 5, 8, None, None),
    ),
    Preset(
        "worker-checks-lease",
        Design(receiver=Receiver.NONE, worker_check=True),
        "a client that checks its lease's remaining time before each write",
        "Checking the lease before sending does not help: the pause can fall between the "
        "check and the delivery (P1, P2, P3 fail), exactly as with the lease alone.",
        "M. Kleppmann, 'How to do distributed locking' (2016), the GC-pause example",
        expected=(8, 5, 8, None, None),
    ),
    Preset(
        "fencing",
        Design(),
        "a monotonic fencing token checked atomically by the resource (etcd revision, "
        "ZooKeeper zxid, Chubby sequencer, Hazelcast FencedLock)",
        "Fencing keeps writes in token and grant order (P1, P3 hold) without refusing the "
        "holder (P4 holds), yet a stale write can still land after expiry, before the new "
        "holder's first request (P2 fails).",
        "M. Burrows, 'The Chubby lock service' (OSDI 2006), sequencers; Hazelcast docs, FencedLock",
        expected=(None, 5, None, None, None),
    ),
    Preset(
        "fencing-strict",
        Design(receiver=Receiver.FENCED_STRICT),
        "a resource that demands a strictly greater token on every write",
        "Using > instead of >= still keeps order (P1, P3 hold) but refuses the holder's own "
        "second write: safe, yet it breaks the legitimate holder (P4 fails).",
        "docs/model.md; the >= of a conditional write `WHERE fence <= $t`",
        expected=(None, 5, None, 5, None),
    ),
    Preset(
        "nonatomic-receiver",
        Design(receiver=Receiver.FENCED_NONATOMIC),
        "a resource that checks the token, then writes, in separate steps",
        "Check-then-act at the resource loses fencing: two checks can pass before either "
        "write, and the older write lands last (P1, P3 fail).",
        "M. Kleppmann, 'How to do distributed locking' (2016): the check must be atomic "
        "with the write",
        expected=(10, 6, 10, None, None),
    ),
    Preset(
        "volatile-hwm",
        Design(hwm=MarkStore.VOLATILE, storage_restarts=1),
        "a resource that keeps its highest seen token in memory only",
        "If the resource forgets its mark on restart, an old token is accepted again after "
        "a newer one (P1, P3 fail).",
        "docs/model.md; any in-memory max_seen lost on restart",
        expected=(9, 5, 9, None, None),
    ),
    Preset(
        "volatile-counter",
        Design(token=Token.COUNTER_VOLATILE, coordinator_restarts=1),
        "a token counter kept in a store that loses state on failover",
        "Tokens must grow across coordinator failover: a counter that restarts hands out an "
        "old value again, so a stale write passes the check (P3 fails) and the new holder can "
        "be refused (P4 fails); the receiver itself never goes backwards (P1 holds).",
        "Jepsen analyses of lock services (e.g. Hazelcast 3.8.3, 2017) on state lost in failover",
        expected=(None, 4, 7, 12, None),
    ),
    Preset(
        "key-version-token",
        Design(token=Token.KEY_VERSION),
        "etcd's per-key `version`, which resets when the key is deleted",
        "A number that does not grow with every grant keeps P1 trivially (P1 holds) but not "
        "grant order: an older grant's write lands after a newer one's (P3 fails).",
        "etcd docs, KeyValue fields: version resets to 0 on delete; use mod/create revision",
        expected=(None, 5, 8, None, None),
    ),
    Preset(
        "random-token",
        Design(token=Token.RANDOM),
        "a UUID, a lease ID or Redlock's random value used as the token",
        "A unique but unordered token cannot fence: the resource cannot tell old from new, so "
        "stale writes get through (P3 fails) and new holders are refused (P4 fails).",
        "M. Kleppmann, 'How to do distributed locking' (2016), on Redlock's random value",
        expected=(None, 5, 8, 8, None),
    ),
    Preset(
        "local-clock-token",
        Design(token=Token.LOCAL_CLOCK),
        "tokens made from each worker's own clock",
        "A worker whose clock runs one tick ahead hands the resource a token newer than the "
        "next grant's, and the legitimate holder is refused (P4 fails); with a skew below the "
        "lease, order survives (P3 holds).",
        "M. Kleppmann, 'How to do distributed locking' (2016), on clock assumptions",
        expected=(None, 5, None, 9, None),
    ),
    Preset(
        "wrapping-counter",
        Design(token=Token.WRAPPING, wrap=2),
        "a sequence number that wraps or restarts",
        "When the token wraps, a newer grant carries a smaller number: it is refused (P4 "
        "fails) and order is lost (P3 fails).",
        "docs/model.md; any fixed-width sequence number",
        expected=(None, 5, 14, 12, None),
    ),
    Preset(
        "first-writer-wins",
        Design(receiver=Receiver.EQUALITY),
        "storage that compares tokens for equality",
        "Equality is not ordering: the first writer's token is accepted forever, and every "
        "later holder is refused (P4 fails).",
        "docs/model.md; an equality-checked version column",
        expected=(None, 5, None, 8, None),
    ),
    Preset(
        "grant-fences",
        Design(grant_fences=True),
        "a lock service and storage that commit together (the grant itself fences storage)",
        "Fencing the storage at grant time refuses a stale write as soon as the next grant "
        "is made, even before the new holder writes (P1, P3, P4 hold); a write landing after "
        "expiry with no newer grant yet is still outside its lease (P2 fails).",
        "docs/model.md; storage-integrated locks such as etcd transactions guarding the data key",
        expected=(None, 5, None, None, None),
    ),
    Preset(
        "lease-aware-receiver",
        Design(receiver=Receiver.LEASE_AWARE),
        "a resource that checks the live lease in the same transaction (etcd Txn on the lease key)",
        "A receiver that consults the live lease refuses every write outside its lease (P1, "
        "P2, P3, P4 hold).",
        "etcd docs, transactions comparing a key's lease; the Jepsen etcd 3.4.3 analysis (2020) "
        "on lock safety",
        expected=(None, None, None, None, None),
    ),
    Preset(
        "rmw-fencing-unfenced-reads",
        Design(workload=Workload.RMW),
        "read-modify-write under a fenced write, where reads carry no token",
        "Fencing only the write is not enough: a stale worker's write can overwrite the new "
        "holder's update (P5 fails, a lost update) although tokens stay ordered (P1, P3 hold).",
        "docs/model.md; Jepsen analyses of lock-protected read-modify-write",
        expected=(None, 7, None, None, 12),
    ),
    Preset(
        "rmw-fencing-fenced-reads",
        Design(workload=Workload.RMW, fenced_reads=True),
        "read-modify-write where the read carries the token too",
        "When the new holder's first request (its read) fences the resource, the stale "
        "write is refused and no update is lost (P5 holds).",
        "docs/model.md",
        expected=(None, 7, None, None, None),
    ),
    Preset(
        "rmw-lease-only",
        Design(receiver=Receiver.NONE, workload=Workload.RMW),
        "read-modify-write under a TTL lock alone",
        "Without fencing, a paused worker's write silently overwrites another's update "
        "(P1, P3, P5 fail).",
        "M. Kleppmann, 'How to do distributed locking' (2016)",
        expected=(12, 7, 12, None, 12),
    ),
    Preset(
        "rmw-lease-aware",
        Design(receiver=Receiver.LEASE_AWARE, workload=Workload.RMW, fenced_reads=True),
        "read-modify-write where the resource checks the live lease on reads and writes",
        "Checking the live lease on every request keeps every property (P1, P2, P3, P4, P5 hold).",
        "docs/model.md",
        expected=(None, None, None, None, None),
    ),
)

PRESETS: Final = {preset.name: preset for preset in PRESETS_LIST}
PRESET_NAMES: Final = tuple(PRESETS)


def preset(name: str) -> Preset:
    """The preset with this name, or an error listing the known names."""
    try:
        return PRESETS[name]
    except KeyError:
        raise DesignError(
            f"unknown preset {name!r}: choose one of {', '.join(PRESET_NAMES)}"
        ) from None
