"""What a lab run is made of: receiver, token source, mark, workload, sizes; validated.

The names are the lab's (real systems), each with the model option it corresponds to, so
the history, the CLI, the web page and the conformance check all read one table.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Final

from lab.lock_table import ALL_TOKENS, DEFAULT_SERVICE, SERVICE_NAMES, SERVICES, SERVICES_LIST
from model.design import MAX_WORKERS, MAX_WRITES
from model.options import Expiry, Receiver, Token

RECEIVERS: Final = ("none", "fenced", "fenced-nonatomic", "etcd-txn")
"""How the store treats a write: plain, fenced in one transaction, check then write, or an
etcd transaction guarded by the lock key."""
TOKENS: Final = ALL_TOKENS
"""Which number of the grant a worker sends as its token (each service offers some:
`lab.lock_table`)."""
MARKS: Final = ("durable", "volatile")
DATABASES: Final = ("sqlite", "postgres")
"""Where the store keeps the data and the mark: a SQLite file, or a real PostgreSQL whose
isolation makes the fenced write atomic (lab.postgres_store)."""
WORKLOADS: Final = ("blind", "rmw")
EXPIRIES: Final = ("lease", "never")
"""Whether the lock key is attached to a lease (and so runs out) or is put with no lease."""
FAULT_KINDS: Final = (
    "pause",
    "hold",
    "store-kill",
    "crash",
    "member-kill",
    "member-pause",
    "skew",
)
"""What a randomized run's nemesis may do (lab.nemesis describes each)."""
MEMBER_COUNTS: Final = (1, 3)
"""How many etcd members the lab starts: one, or a three-member cluster."""

MODEL_RECEIVER: Final = {
    "none": Receiver.NONE,
    "fenced": Receiver.FENCED,
    "fenced-nonatomic": Receiver.FENCED_NONATOMIC,
    "etcd-txn": Receiver.LEASE_AWARE,
}
"""The model's receiver option for each lab receiver."""
MODEL_TOKEN: Final[dict[str, Token]] = {
    source.name: source.model for service in SERVICES_LIST for source in service.tokens
}
"""The model's token option for each lab token source (one meaning per name, whichever
service offers it)."""
MODEL_EXPIRY: Final = {"lease": Expiry.LEASE, "never": Expiry.NEVER}
"""The model's expiry option for each lab expiry."""

MAX_SECONDS: Final = 60.0
"""Longest randomized run the lab accepts."""
MAX_PAUSE_RATE: Final = 10.0
MAX_GAP: Final = 5.0
MAX_TTL: Final = 10
MAX_KEEPALIVE: Final = 5.0
"""Longest time between two keepalives of a worker's lease (seconds)."""


class LabInputError(ValueError):
    """Bad input to the lab (a flag, a scenario name, a history file): one line says what to do."""


class LabError(RuntimeError):
    """A lab run that could not be carried out (etcd would not start, a time limit passed)."""


def _check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    """Refuse a value that is not one of the named choices."""
    if value not in choices:
        raise LabInputError(f"{name} {value!r} is not known: choose one of {', '.join(choices)}")


def _check_number(name: str, value: object, low: float, high: float) -> None:
    """Refuse a value outside low..high (or not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise LabInputError(f"{name} must be a number from {low:g} to {high:g}, not {value!r}")
    if not low <= value <= high:
        raise LabInputError(f"{name} = {value:g} is out of range: allowed {low:g} to {high:g}")


def _check_service(service: str, token: str, receiver: str) -> None:
    """Refuse a token the lock service does not hand out, or the etcd-txn receiver (guarded
    by the etcd recipe's lock key) with another service."""
    offered = SERVICES[service].token_names
    if token not in offered:
        raise LabInputError(
            f"token {token!r} makes no sense with the {service} lock service: it offers "
            f"{', '.join(offered)}"
        )
    if receiver == "etcd-txn" and service != DEFAULT_SERVICE:
        raise LabInputError(
            f"receiver etcd-txn guards its write with the etcd recipe's lock key, which the "
            f"{service} lock service does not have: choose another receiver"
        )


def _check_renewal(service: str, expiry: str, keepalive: float) -> None:
    """Refuse keepalives, or a lock with no lease, that the lock service cannot give."""
    row = SERVICES[service]
    if keepalive and row.keepalive:
        raise LabInputError(f"{row.keepalive}: leave out --keepalive")
    if expiry == "never" and not row.without_lease:
        raise LabInputError(
            f"only the etcd recipe puts its lock with no lease; {row.short} grants it on a "
            "lease or session: use --lock-service etcd or --expiry lease"
        )


@dataclass(frozen=True)
class Settings:
    """One lab run's design and sizes (the random-run fields stay 0 for a scripted scenario)."""

    receiver: str = "none"
    token: str = "create-revision"
    hwm: str = "durable"
    workload: str = "blind"
    worker_check: bool = False
    workers: int = 2
    writes: int = 1
    ttl: int = 1
    gap: float = 0.05
    seconds: float = 0.0
    pause_rate: float = 0.0
    seed: int = 0
    expiry: str = "lease"
    keepalive: float = 0.0
    """Seconds between two keepalives of the holder's lease (0: the lease is never renewed)."""
    database: str = "sqlite"
    faults: str = "pause"
    """The nemesis's fault kinds, comma-separated (a randomized run's)."""
    members: int = 1
    """How many etcd members the run's cluster has."""
    lock_service: str = DEFAULT_SERVICE

    def __post_init__(self) -> None:
        _check_choice("receiver", self.receiver, RECEIVERS)
        _check_choice("expiry", self.expiry, EXPIRIES)
        _check_choice("token", self.token, TOKENS)
        _check_choice("lock service", self.lock_service, SERVICE_NAMES)
        _check_service(self.lock_service, self.token, self.receiver)
        _check_choice("mark (--hwm)", self.hwm, MARKS)
        _check_choice("workload", self.workload, WORKLOADS)
        _check_choice("database", self.database, DATABASES)
        if self.database == "postgres" and self.receiver == "etcd-txn":
            raise LabInputError(
                "receiver etcd-txn keeps its data in etcd itself, so it has no postgres form: "
                "choose another receiver or --database sqlite"
            )
        if not isinstance(self.faults, str) or any(
            kind not in FAULT_KINDS for kind in self.faults.split(",") if kind
        ):
            raise LabInputError(
                f"faults must be kinds from {', '.join(FAULT_KINDS)}, not {str(self.faults)[:60]!r}"
            )
        if self.members not in MEMBER_COUNTS or isinstance(self.members, bool):
            raise LabInputError(f"members must be 1 or 3, not {self.members!r}")
        if not isinstance(self.worker_check, bool):
            raise LabInputError(f"worker_check must be true or false, not {self.worker_check!r}")
        for name, value, low, high, whole in (
            ("workers", self.workers, 1, MAX_WORKERS, True),
            ("writes per grant", self.writes, 1, MAX_WRITES, True),
            ("lease TTL (seconds)", self.ttl, 1, MAX_TTL, True),
            ("gap (seconds)", self.gap, 0, MAX_GAP, False),
            ("seconds", self.seconds, 0, MAX_SECONDS, False),
            ("pause rate (pauses per second)", self.pause_rate, 0, MAX_PAUSE_RATE, False),
            ("seed", self.seed, 0, 2**31 - 1, True),
            ("keepalive (seconds between renewals)", self.keepalive, 0, MAX_KEEPALIVE, False),
        ):
            if whole and (isinstance(value, bool) or not isinstance(value, int)):
                raise LabInputError(f"{name} must be a whole number, not {value!r}")
            _check_number(name, value, low, high)
        _check_renewal(self.lock_service, self.expiry, self.keepalive)
        if self.expiry == "never" and self.keepalive:
            raise LabInputError("a lock without a lease has nothing to keep alive")
        if self.expiry == "never" and self.token == "lease-id":
            raise LabInputError("a lock without a lease has no lease ID to use as a token")
        if self.expiry == "never" and self.worker_check:
            raise LabInputError("a lock without a lease leaves a worker nothing to check")

    @property
    def renews(self) -> bool:
        """Whether the holder keeps its lease alive (the model's `renew`)."""
        return self.keepalive > 0

    @property
    def keeps_mark(self) -> bool:
        """Whether the receiver keeps a high-water mark (the fenced receivers)."""
        return self.receiver in ("fenced", "fenced-nonatomic")

    def label(self) -> str:
        """A short label such as `receiver fenced, token create-revision, rmw`."""
        parts = [f"receiver {self.receiver}", f"token {self.token}"]
        if self.lock_service != DEFAULT_SERVICE:
            parts.insert(0, f"lock {self.lock_service}")
        if self.keeps_mark and self.hwm == "volatile":
            parts.append("volatile mark")
        if self.workload == "rmw":
            parts.append("read-modify-write")
        if self.worker_check:
            parts.append("workers check their lease")
        if self.expiry == "never":
            parts.append("lock without a lease")
        if self.renews:
            parts.append(f"keepalive every {self.keepalive:g} s")
        if self.database != "sqlite":
            parts.append(f"on {self.database}")
        if self.members > 1:
            parts.append(f"{self.members} etcd members")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON (a history without `expiry` or `keepalive` reads as a lease
        that is never renewed)."""
        return asdict(self)
