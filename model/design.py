"""Designs (which locking scheme) and bounds (how big a run may get), both validated.

A `Design` is the canonical core with some options changed (docs/model.md#design-options);
its defaults are the core itself. `Bounds` are the sizes W, L, T, G, K of
docs/model.md#constants.
Every value is checked on construction, and a bad one raises `DesignError` naming the
field, the value and what to change.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Final

TOKENS: Final = ("counter", "counter-volatile", "key-version", "random", "local-clock", "wrapping")
RECEIVERS: Final = (
    "none",
    "fenced",
    "fenced-strict",
    "fenced-nonatomic",
    "equality",
    "lease-aware",
)
HWM_KINDS: Final = ("durable", "volatile")
WORKLOADS: Final = ("blind", "rmw")

FENCED_RECEIVERS: Final = ("fenced", "fenced-strict", "fenced-nonatomic")
"""Receivers that keep a high-water mark `hwm` and compare tokens against it."""

MAX_WORKERS: Final = 5
MAX_LEASE: Final = 12
MAX_HORIZON: Final = 30
MAX_GRANTS: Final = 8
MAX_WRITES: Final = 4
MAX_RESTARTS: Final = 3
MAX_SKEW: Final = 6


class DesignError(ValueError):
    """An invalid design, bounds, or combination of the two; the message says what to change."""


def _check_range(field: str, value: object, low: int, high: int) -> None:
    """Refuse a non-integer or out-of-range value, naming the field and the allowed range."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise DesignError(f"{field} must be a whole number from {low} to {high}, not {value!r}")
    if not low <= value <= high:
        raise DesignError(f"{field} = {value} is out of range: allowed {low}..{high}")


def _check_choice(field: str, value: object, choices: tuple[str, ...]) -> None:
    """Refuse a value that is not one of the named choices."""
    if value not in choices:
        raise DesignError(f"{field} = {value!r} is not known: choose one of {', '.join(choices)}")


@dataclass(frozen=True)
class Bounds:
    """Sizes of the model: workers W, lease L, horizon T, grants G, writes per grant K."""

    workers: int = 2
    lease: int = 2
    horizon: int = 4
    grants: int = 2
    writes: int = 1

    def __post_init__(self) -> None:
        _check_range("workers", self.workers, 1, MAX_WORKERS)
        _check_range("lease", self.lease, 1, MAX_LEASE)
        _check_range("horizon", self.horizon, 0, MAX_HORIZON)
        _check_range("grants", self.grants, 1, MAX_GRANTS)
        _check_range("writes", self.writes, 1, MAX_WRITES)

    def short(self) -> str:
        """A compact label such as `W=2 L=2 T=4 G=2 K=1`."""
        return f"W={self.workers} L={self.lease} T={self.horizon} G={self.grants} K={self.writes}"

    def to_dict(self) -> dict[str, int]:
        """Plain dict for JSON."""
        return asdict(self)

    @staticmethod
    def from_dict(data: Any) -> Bounds:
        """Bounds from a JSON object; unknown keys are refused."""
        return _from_dict(Bounds, data, "bounds")


BOUND_LIMITS: Final = {
    "workers": (1, MAX_WORKERS),
    "lease": (1, MAX_LEASE),
    "horizon": (0, MAX_HORIZON),
    "grants": (1, MAX_GRANTS),
    "writes": (1, MAX_WRITES),
}
"""Allowed range of each bound, for help texts and widgets."""

REFERENCE_BOUNDS: Final = Bounds(workers=2, lease=2, horizon=6, grants=3, writes=2)
"""The bounds of the preset verdicts in docs/model.md#reference-figures and of `fencing matrix`."""


@dataclass(frozen=True)
class Design:
    """Which locking scheme: token source, receiver rule, durability, faults and workload."""

    token: str = "counter"
    receiver: str = "fenced"
    hwm: str = "durable"
    storage_restarts: int = 0
    coordinator_restarts: int = 0
    worker_check: bool = False
    workload: str = "blind"
    fenced_reads: bool = False
    grant_fences: bool = False
    skew: tuple[int, ...] = ()
    wrap: int = 0

    def __post_init__(self) -> None:
        _check_choice("token", self.token, TOKENS)
        _check_choice("receiver", self.receiver, RECEIVERS)
        _check_choice("hwm", self.hwm, HWM_KINDS)
        _check_choice("workload", self.workload, WORKLOADS)
        _check_range("storage_restarts", self.storage_restarts, 0, MAX_RESTARTS)
        _check_range("coordinator_restarts", self.coordinator_restarts, 0, MAX_RESTARTS)
        for name in ("worker_check", "fenced_reads", "grant_fences"):
            if not isinstance(getattr(self, name), bool):
                raise DesignError(f"{name} must be true or false, not {getattr(self, name)!r}")
        if not isinstance(self.skew, tuple):
            object.__setattr__(self, "skew", tuple(self.skew))
        for value in self.skew:
            _check_range("skew", value, 0, MAX_SKEW)
        _check_range("wrap", self.wrap, 0, MAX_GRANTS)
        for problem in self._combination_problems():
            raise DesignError(problem)

    def _combination_problems(self) -> list[str]:
        """Options that make no sense together, each with what to change."""
        problems = []
        if self.fenced_reads and self.workload != "rmw":
            problems.append("fenced_reads needs workload rmw: set workload to rmw or drop it")
        if self.fenced_reads and self.receiver in ("none", "equality"):
            problems.append(
                f"fenced_reads has no effect with receiver {self.receiver}: reads are only "
                "checked by fenced, fenced-strict, fenced-nonatomic or lease-aware receivers"
            )
        if self.hwm == "volatile" and self.storage_restarts == 0:
            problems.append(
                "hwm volatile needs storage_restarts of at least 1 (without a restart "
                "it behaves exactly as durable)"
            )
        if self.storage_restarts and self.hwm != "volatile":
            problems.append(
                "storage_restarts only apply to a volatile mark: set hwm to volatile "
                "or storage_restarts to 0"
            )
        if self.hwm == "volatile" and self.receiver in ("none", "lease-aware"):
            problems.append(
                f"receiver {self.receiver} keeps no mark, so hwm volatile changes nothing: "
                "use a fenced or equality receiver"
            )
        if self.token == "counter-volatile" and self.coordinator_restarts == 0:
            problems.append(
                "token counter-volatile needs coordinator_restarts of at least 1 (without "
                "a restart it behaves exactly as counter)"
            )
        if self.coordinator_restarts and self.token != "counter-volatile":
            problems.append(
                "coordinator_restarts only apply to token counter-volatile: change the "
                "token or set coordinator_restarts to 0"
            )
        if self.skew and self.token != "local-clock":
            problems.append("skew only applies to token local-clock: change the token or drop it")
        if self.wrap and self.token != "wrapping":
            problems.append("wrap only applies to token wrapping: change the token or drop it")
        if self.grant_fences and self.receiver not in FENCED_RECEIVERS:
            problems.append(
                f"grant_fences raises the receiver's high-water mark, which receiver "
                f"{self.receiver} does not keep: use fenced, fenced-strict or fenced-nonatomic"
            )
        return problems

    @property
    def modulus(self) -> int:
        """The wrapping modulus M (2 unless set)."""
        return self.wrap or 2

    def skews(self, workers: int) -> tuple[int, ...]:
        """Per-worker clock offsets: the given list, or (1, 0, 0, ...) by default."""
        if self.token != "local-clock":
            return (0,) * workers
        if self.skew:
            return self.skew
        return (1,) + (0,) * (workers - 1)

    def check_fits(self, bounds: Bounds) -> None:
        """Refuse a design whose per-worker settings do not match the bounds."""
        if self.skew and len(self.skew) != bounds.workers:
            raise DesignError(
                f"skew lists {len(self.skew)} offsets but there are {bounds.workers} workers: "
                f"give one offset per worker"
            )

    def changes(self) -> dict[str, Any]:
        """Options that differ from the core's defaults."""
        core = Design()
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != getattr(core, f.name)
        }

    def label(self) -> str:
        """A short human label: `core` or the changed options."""
        changed = self.changes()
        if not changed:
            return "core (fencing)"
        return ", ".join(f"{k}={_show(v)}" for k, v in changed.items())

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON (skew as a list)."""
        data = asdict(self)
        data["skew"] = list(self.skew)
        return data

    @staticmethod
    def from_dict(data: Any) -> Design:
        """A design from a JSON object; unknown keys are refused."""
        if isinstance(data, dict) and isinstance(data.get("skew"), list):
            data = {**data, "skew": tuple(data["skew"])}
        return _from_dict(Design, data, "design")


def _show(value: object) -> str:
    """Render an option value compactly."""
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def _from_dict(cls: Any, data: Any, what: str) -> Any:
    """Build a dataclass from a dict, refusing unknown keys and wrong types clearly."""
    if not isinstance(data, dict):
        raise DesignError(f"{what} must be an object, not {type(data).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise DesignError(
            f"{what} has unknown field {unknown[0]!r}: known fields are {', '.join(sorted(known))}"
        )
    try:
        return cls(**data)
    except TypeError as error:
        raise DesignError(f"{what} is malformed: {error}") from None
