"""The state schema: which variables a design's states have, their domains and their packing.

A state is a tuple of small non-negative ints, one per column. Columns that a design does
not use have a domain of size 1 (always 0), so they add no states, as
docs/model.md#variables requires. A state's number is its mixed-radix value (`pack`); the
explorer stores it in one int64 word, or in several when the state space is wider
(`model.check.keys`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Final

from model.actions import Actor
from model.design import Bounds, Design, DesignError, Expiry, Workload
from model.expression import Expr
from model.terms import Term


class Shape(Enum):
    """How many values a variable has in one state."""

    SCALAR = "one"
    PER_WORKER = "one per worker"
    PER_VALUE = "one per token value"


@dataclass(frozen=True)
class Variable:
    """One state variable: who keeps it, how many values it has, and what it means."""

    name: str
    owner: Actor
    shape: Shape
    meaning: str
    ghost: bool = False
    """A history variable the model keeps for the properties; real actors do not see it."""


_ONE, _EACH = Shape.SCALAR, Shape.PER_WORKER
VARIABLES: Final = (
    Variable("now", Actor.CLOCK, _ONE, "true time"),
    Variable(
        "holder",
        Actor.COORDINATOR,
        _ONE,
        "worker the coordinator last granted the lock to (0 = nobody)",
    ),
    Variable("expires", Actor.COORDINATOR, _ONE, "tick at which the holder's lease ends"),
    Variable("issued", Actor.COORDINATOR, _ONE, "the coordinator's token counter"),
    Variable("grants", Actor.COORDINATOR, _ONE, "grants made so far (ghost)", ghost=True),
    Variable("hwm", Actor.RECEIVER, _ONE, "highest token the receiver has accepted"),
    Variable("mark", Actor.RECEIVER, _ONE, "token an equality receiver is bound to"),
    Variable(
        "last",
        Actor.RECEIVER,
        _ONE,
        "token of the most recently accepted write (ghost)",
        ghost=True,
    ),
    Variable(
        "lastg",
        Actor.RECEIVER,
        _ONE,
        "grant number of the most recently accepted write (ghost)",
        ghost=True,
    ),
    Variable("version", Actor.RECEIVER, _ONE, "number of accepted writes (read-modify-write)"),
    Variable("storage_restarts", Actor.RECEIVER, _ONE, "storage restarts so far"),
    Variable("coordinator_restarts", Actor.COORDINATOR, _ONE, "coordinator restarts so far"),
    Variable("tok", Actor.WORKER, _EACH, "token of the grant the worker believes it holds"),
    Variable(
        "gid",
        Actor.WORKER,
        _EACH,
        "grant number of the worker's current grant (ghost)",
        ghost=True,
    ),
    Variable("sent", Actor.WORKER, _EACH, "writes sent under the current grant"),
    Variable(
        "pending", Actor.WORKER, _EACH, "request in flight (1), or checked but not applied (2)"
    ),
    Variable("until", Actor.WORKER, _EACH, "lease expiry the worker recorded at its grant"),
    Variable(
        "phase", Actor.WORKER, _EACH, "0: next request is a read; 1: a write (read-modify-write)"
    ),
    Variable("rv", Actor.WORKER, _EACH, "version the worker read"),
    Variable(
        "down", Actor.WORKER, _EACH, "0 while the worker runs; 1 + the tick at which it crashed"
    ),
    Variable(
        "used",
        Actor.COORDINATOR,
        Shape.PER_VALUE,
        "token value already handed out (random tokens)",
    ),
)
"""Every state variable of docs/model.md#variables, in column order: the scalars, then the
per-worker families, then `used`. Who owns each one decides the row of the state table it
is shown in."""

BY_VARIABLE: Final = {variable.name: variable for variable in VARIABLES}


def variables_where(owner: Actor | None = None, shape: Shape | None = None) -> tuple[str, ...]:
    """The names of the variables of an owner and of a shape (any, when None), in order."""
    return tuple(
        v.name
        for v in VARIABLES
        if (owner is None or v.owner is owner) and (shape is None or v.shape is shape)
    )


SCALARS: Final = variables_where(shape=Shape.SCALAR)
"""Variables with one value per state: environment, coordinator, receiver, ghosts, faults."""

PER_WORKER: Final = variables_where(shape=Shape.PER_WORKER)
"""Variables with one value per worker."""

GRANT_STATE: Final = tuple(family for family in PER_WORKER if family != "down")
"""The per-worker variables of its grant: all return to 0 when the worker holds nothing
(`down`, whether it crashed, outlives every grant)."""

MEANING: Final = {variable.name: variable.meaning for variable in VARIABLES}

GHOSTS: Final = tuple(variable.name for variable in VARIABLES if variable.ghost)
"""History variables the model keeps for the properties; real actors do not see them."""

INT64_LIMIT: Final = 2**63 - 1
"""The largest number one int64 key word holds (wider state spaces use several words)."""


def slot(family: str, index: int) -> str:
    """Column name of a per-worker (or per-value) variable, e.g. `tok[1]`."""
    return f"{family}[{index}]"


@dataclass(frozen=True)
class Layout:
    """Columns, their domain sizes and packing strides for one design and bounds."""

    design: Design
    bounds: Bounds
    columns: tuple[str, ...]
    sizes: tuple[int, ...]

    @staticmethod
    def of(design: Design, bounds: Bounds) -> Layout:
        """The layout of a design within bounds (validates that they fit together)."""
        design.check_fits(bounds)
        sizes = domain_sizes(design, bounds)
        columns = tuple(sizes)
        return Layout(design, bounds, columns, tuple(sizes[c] for c in columns))

    @cached_property
    def index(self) -> dict[str, int]:
        """Column name to position."""
        return {name: i for i, name in enumerate(self.columns)}

    @cached_property
    def strides(self) -> tuple[int, ...]:
        """Mixed-radix place value of each column (the last column varies fastest)."""
        strides = [0] * len(self.sizes)
        place = 1
        for i in range(len(self.sizes) - 1, -1, -1):
            strides[i] = place
            place *= self.sizes[i]
        return tuple(strides)

    @cached_property
    def capacity(self) -> int:
        """Number of distinct packable states (product of the domain sizes)."""
        total = 1
        for size in self.sizes:
            total *= size
        return total

    @property
    def workers(self) -> range:
        """Worker ids 1..W."""
        return range(1, self.bounds.workers + 1)

    def initial(self) -> tuple[int, ...]:
        """The initial state: every variable 0."""
        return (0,) * len(self.columns)

    def pack(self, state: Sequence[int]) -> int:
        """The state's integer key."""
        return sum(v * s for v, s in zip(state, self.strides, strict=True))

    def unpack(self, key: int) -> tuple[int, ...]:
        """The state with this integer key."""
        return tuple((key // s) % n for s, n in zip(self.strides, self.sizes, strict=True))

    def check_state(self, state: Sequence[int]) -> None:
        """Refuse a tuple that is not a state of this layout (wrong length or out of domain)."""
        if len(state) != len(self.columns):
            raise DesignError(f"a state has {len(self.columns)} values, not {len(state)}")
        for column, value, size in zip(self.columns, state, self.sizes, strict=True):
            if not 0 <= value < size:
                raise DesignError(f"{column} = {value} is outside its domain 0..{size - 1}")

    def as_dict(self, state: Sequence[int]) -> dict[str, int]:
        """Named values of a state, for display and JSON."""
        return dict(zip(self.columns, (int(v) for v in state), strict=True))

    def used_columns(self) -> tuple[str, ...]:
        """Columns that can take more than one value in this design (the ones worth showing)."""
        return tuple(c for c, n in zip(self.columns, self.sizes, strict=True) if n > 1)


def token_ceiling(design: Design, bounds: Bounds) -> int:
    """The largest token value the design can hand out (its token row's ceiling)."""
    return design.token.row.ceiling(design, bounds)


def domain_sizes(design: Design, bounds: Bounds) -> dict[str, int]:
    """Number of values each column can take (1 for a column the design does not use)."""
    W, L, T, G, K = bounds.workers, bounds.lease, bounds.horizon, bounds.grants, bounds.writes
    top = token_ceiling(design, bounds)
    counter = design.token.row.uses_counter
    rmw = design.workload is Workload.RMW
    sizes = {
        "now": T + 1,
        "holder": W + 1,
        "expires": T + L + 1 if design.expiry is Expiry.LEASE else 1,
        "issued": G + 1 if counter else 1,
        "grants": G + 1,
        "hwm": top + 1 if design.receiver.keeps_high_water_mark else 1,
        "mark": top + 1 if design.receiver.keeps_equality_mark else 1,
        "last": top + 1,
        "lastg": G + 1,
        "version": G * K + 1 if rmw else 1,
        "storage_restarts": design.storage_restarts + 1,
        "coordinator_restarts": design.coordinator_restarts + 1,
    }
    per_worker = {
        "tok": top + 1,
        "gid": G + 1,
        "sent": K + 1,
        "pending": 3 if design.receiver.splits_check_and_write else 2,
        "until": T + L + 1 if design.worker_check else 1,
        "phase": 2 if rmw else 1,
        "rv": G * K + 1 if rmw else 1,
        "down": T + 2 if design.crashes else 1,
    }
    for family in PER_WORKER:
        for w in range(1, W + 1):
            sizes[slot(family, w)] = per_worker[family]
    if design.token.row.picks_unused_value:
        for value in range(1, G + 1):
            sizes[slot("used", value)] = 2
    return sizes


class Vars:
    """Read access to a state's variables by name: `s.now`, `s.tok[w]`, `s.used[v]`.

    The values may be ints, numpy arrays or z3 terms; the rules never need to know which.
    """

    __slots__ = ("_layout", "_values")

    def __init__(self, layout: Layout, values: Sequence[Term]) -> None:
        self._layout = layout
        self._values = values

    @property
    def layout(self) -> Layout:
        """The layout the values belong to (its design and bounds)."""
        return self._layout

    def __getattr__(self, name: str) -> Term:
        if name in PER_WORKER or name == "used":
            return _Family(self, name)
        try:
            return self._values[self._layout.index[name]]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, column: str) -> Term:
        return self._values[self._layout.index[column]]


class _Family:
    """Indexable view of one per-worker variable, `s.tok[w]`."""

    __slots__ = ("_name", "_vars")

    def __init__(self, owner: Vars, name: str) -> None:
        self._vars = owner
        self._name = name

    def __getitem__(self, index: int) -> Term:
        return self._vars[slot(self._name, index)]


def symbolic_view(layout: Layout) -> Vars:
    """The state as expression text: a variable per column, the constant 0 where the domain
    is {0}, so that conditions on unused columns fold away (`model.expression`)."""
    values = [
        Expr.variable(column) if size > 1 else 0
        for column, size in zip(layout.columns, layout.sizes, strict=True)
    ]
    return Vars(layout, values)
