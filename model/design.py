"""Designs (which locking scheme) and bounds (how big a run may get), both validated.

A `Design` is the canonical core with some options changed (docs/model.md#design-options);
its defaults are the core itself. `Bounds` are the sizes W, L, T, G, K of
docs/model.md#constants.
Every value is checked on construction, and a bad one raises `DesignError` naming the
field, the value and what to change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from types import SimpleNamespace
from typing import Any, Final

from model.combinations import COMBINATIONS, refusals
from model.options import (
    BY_OPTION,
    MAX_CRASHES,
    MAX_RESTARTS,
    MAX_SKEW,
    OPTIONS,
    DesignError,
    Expiry,
    MarkStore,
    Receiver,
    Token,
    Workload,
)
from model.options import (
    option as named_option,
)

__all__ = [
    "BOUNDS",
    "BOUND_LIMITS",
    "BY_BOUND",
    "MAX_CRASHES",
    "MAX_GRANTS",
    "MAX_HORIZON",
    "MAX_LEASE",
    "MAX_RESTARTS",
    "MAX_SKEW",
    "MAX_WORKERS",
    "MAX_WRITES",
    "REFERENCE_BOUNDS",
    "Bound",
    "Bounds",
    "Design",
    "DesignError",
    "Expiry",
    "MarkStore",
    "Receiver",
    "Token",
    "Workload",
]

MAX_WORKERS: Final = 5
MAX_LEASE: Final = 12
MAX_HORIZON: Final = 30
MAX_GRANTS: Final = 8
MAX_WRITES: Final = 4


def _check_range(field: str, value: object, low: int, high: int) -> None:
    """Refuse a non-integer or out-of-range value, naming the field and the allowed range."""
    if not isinstance(value, int) or isinstance(value, bool):
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise DesignError(f"{field} must be a whole number from {low} to {high}, not {shown}")
    if not low <= value <= high:
        raise DesignError(f"{field} = {value} is out of range: allowed {low}..{high}")


@dataclass(frozen=True)
class Bound:
    """One size of the model: its name, letter, words, allowed range and default."""

    name: str
    letter: str
    label: str
    """The size for a form, e.g. `Lease, in ticks`."""
    noun: str
    """What it counts, for a sentence: `2 workers`, `lease 2 ticks`."""
    low: int
    high: int
    default: int
    before: str = ""
    after: str = ""

    @property
    def form_label(self) -> str:
        """The label with its letter: `Lease, in ticks (L)`."""
        return f"{self.label} ({self.letter})"

    @property
    def span(self) -> str:
        """The allowed range: `1..12`."""
        return f"{self.low}..{self.high}"

    @property
    def widget_label(self) -> str:
        """A form field's label, with its letter and range: `Lease, in ticks (L) (1..12)`."""
        return f"{self.form_label} ({self.span})"

    def in_words(self, value: int) -> str:
        """The size in a sentence: `lease 2 ticks`, `2 writes per grant`."""
        return f"{self.before}{_count(value, self.noun)}{self.after}"


BOUNDS: Final = (
    Bound("workers", "W", "Workers", "worker", 1, MAX_WORKERS, 2),
    Bound("lease", "L", "Lease, in ticks", "tick", 1, MAX_LEASE, 2, before="lease "),
    Bound("horizon", "T", "Last tick of the clock", "tick", 0, MAX_HORIZON, 4, before="horizon "),
    Bound("grants", "G", "Grants per run", "grant", 1, MAX_GRANTS, 2),
    Bound("writes", "K", "Writes per grant", "write", 1, MAX_WRITES, 1, after=" per grant"),
)
"""The sizes W, L, T, G, K of docs/model.md#constants: every surface that reads, shows or
ranges a bound takes it from here."""

BOUND_LIMITS: Final = {bound.name: (bound.low, bound.high) for bound in BOUNDS}
"""Allowed range of each bound, for help texts and widgets."""
BY_BOUND: Final = {bound.name: bound for bound in BOUNDS}


@dataclass(frozen=True)
class Bounds:
    """Sizes of the model: workers W, lease L, horizon T, grants G, writes per grant K."""

    workers: int = BOUNDS[0].default
    lease: int = BOUNDS[1].default
    horizon: int = BOUNDS[2].default
    grants: int = BOUNDS[3].default
    writes: int = BOUNDS[4].default

    def __post_init__(self) -> None:
        for bound in BOUNDS:
            _check_range(bound.name, getattr(self, bound.name), bound.low, bound.high)

    def short(self) -> str:
        """A compact label such as `W=2 L=2 T=4 G=2 K=1`."""
        return " ".join(f"{b.letter}={getattr(self, b.name)}" for b in BOUNDS)

    def in_words(self) -> str:
        """The bounds for people: `2 workers, lease 2 ticks, horizon 4 ticks, 2 grants, 1 write`."""
        return ", ".join(b.in_words(getattr(self, b.name)) for b in BOUNDS)

    def to_dict(self) -> dict[str, int]:
        """Plain dict for JSON."""
        return asdict(self)

    @staticmethod
    def from_dict(data: Any) -> Bounds:
        """Bounds from a JSON object; unknown keys are refused."""
        return _from_dict(Bounds, data, "bounds", lambda sizes: Bounds(**sizes))


REFERENCE_BOUNDS: Final = Bounds(workers=2, lease=2, horizon=6, grants=3, writes=2)
"""The bounds of the preset verdicts in docs/model.md#reference-figures and of `fencing matrix`."""


@dataclass(frozen=True)
class Design:
    """Which locking scheme: token source, receiver rule, durability, faults and workload.

    The fields are the options of `model.options.OPTIONS`, in the same order; values given
    as plain text or lists (from JSON, TOML or a form) are turned into the option's type.
    """

    token: Token = Token.COUNTER
    receiver: Receiver = Receiver.FENCED
    hwm: MarkStore = MarkStore.DURABLE
    storage_restarts: int = 0
    coordinator_restarts: int = 0
    worker_check: bool = False
    workload: Workload = Workload.BLIND
    fenced_reads: bool = False
    grant_fences: bool = False
    expiry: Expiry = Expiry.LEASE
    renew: bool = False
    crashes: int = 0
    skew: tuple[int, ...] = ()
    wrap: int = 0

    def __post_init__(self) -> None:
        for option in OPTIONS:
            object.__setattr__(self, option.name, option.coerce(getattr(self, option.name)))
        for problem in self._combination_problems():
            raise DesignError(problem)

    def _combination_problems(self) -> list[str]:
        """Options that make no sense together, each with what to change (the rows of
        `model.combinations.COMBINATIONS`)."""
        return refusals(self)

    def with_changes(self, changes: Mapping[str, Any]) -> Design:
        """This design with some options changed, validated as a whole.

        The one way every front end (flags, links, forms, exercise files, stacks) turns a
        preset plus changes into a design. An option the changes leave out keeps this
        design's value, even one that only fitted a value the changes replace: the design
        is then refused with the model's message saying what to change, alike everywhere,
        followed by the options of the refusing combination that were kept, not changed.
        """
        for name in changes:
            named_option(name)
        try:
            return replace(self, **changes)
        except DesignError as error:
            raise DesignError(str(error) + self._kept_note(changes, str(error))) from None

    def _kept_note(self, changes: Mapping[str, Any], message: str) -> str:
        """`(coordinator_restarts = 1 kept from the design you started from)` when the
        combination that refuses the changed design involves options the changes kept."""
        try:
            changed = {name: BY_OPTION[name].coerce(value) for name, value in changes.items()}
        except DesignError:
            return ""
        merged = SimpleNamespace(**{o.name: getattr(self, o.name) for o in OPTIONS} | changed)
        row = next((r for r in COMBINATIONS if r.message_for(merged) == message), None)
        kept = [
            name
            for name in (row.options if row else ())
            if name not in changed and getattr(self, name) != BY_OPTION[name].default
        ]
        if not kept:
            return ""
        shown = ", ".join(
            f"{name} = {BY_OPTION[name].to_text(getattr(self, name))}" for name in kept
        )
        return f" ({shown} kept from the design you started from)"

    @property
    def modulus(self) -> int:
        """The wrapping modulus M (2 unless set)."""
        return self.wrap or 2

    def skews(self, workers: int) -> tuple[int, ...]:
        """Per-worker clock offsets: the given list, or (1, 0, 0, ...) by default."""
        if "skew" not in self.token.row.shaped_by:
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
        return {
            option.name: getattr(self, option.name)
            for option in OPTIONS
            if getattr(self, option.name) != option.default
        }

    def label(self) -> str:
        """A short label with code names: `core (fencing)` or the changed options."""
        changed = self.changes()
        if not changed:
            return "core (fencing)"
        return ", ".join(
            f"{k}={str(v).lower() if isinstance(v, bool) else BY_OPTION[k].to_text(v)}"
            for k, v in changed.items()
        )

    def in_words(self) -> str:
        """The changed options in plain words, e.g. `What the resource checks: nothing`."""
        changed = self.changes()
        if not changed:
            return "the core design: durable counter tokens, checked atomically by the resource"
        return "; ".join(
            f"{BY_OPTION[k].label}: {BY_OPTION[k].word(v)}" for k, v in changed.items()
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON and TOML (choices as text, skew as a list)."""
        return {option.name: option.to_json(getattr(self, option.name)) for option in OPTIONS}

    @staticmethod
    def from_dict(data: Any) -> Design:
        """A design from a JSON or TOML object (the core with those changes); unknown keys
        are refused."""
        return _from_dict(Design, data, "design", Design().with_changes)


def _count(number: int, noun: str) -> str:
    """`1 worker`, `2 workers`."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _from_dict(cls: Any, data: Any, what: str, build: Callable[[dict[str, Any]], Any]) -> Any:
    """Build a dataclass from a dict, refusing unknown keys and wrong types clearly."""
    if not isinstance(data, dict):
        raise DesignError(f"{what} must be an object, not {type(data).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(str(key)[:40] for key in set(data) - known)
    if unknown:
        raise DesignError(
            f"{what} has unknown field {unknown[0]!r}: known fields are {', '.join(sorted(known))}"
        )
    try:
        return build(data)
    except TypeError as error:
        raise DesignError(f"{what} is malformed: {error}") from None
