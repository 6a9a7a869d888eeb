"""Refused combinations of design options, as rows of data evaluated by one function.

Each row names the options it concerns, the values that refuse a design when they come
together, the one-line message that says what to change, and why in plain words.
`model.design.Design` refuses a design exactly when a row matches it (the first match's
message), and docs/model.md's refused-combinations table is rendered from the same rows
by `make golden` (docs/model.md#refused-combinations).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from model.options import Expiry, MarkStore, Workload, receivers_where, tokens_where


def _value_text(value: Any) -> str:
    """A value as the table writes it: `true`, `()`, `0`, `counter-volatile`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "(" + ", ".join(str(v) for v in value) + ")"
    return str(value)


@dataclass(frozen=True)
class When:
    """One side of a combination: an option holding one of `values` (or, when `negated`,
    none of them)."""

    option: str
    values: tuple[Any, ...]
    negated: bool = False

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError(f"{self.option}: a condition needs at least one value")

    def holds(self, design: Any) -> bool:
        """Whether the design's value of the option matches."""
        return (getattr(design, self.option) in self.values) is not self.negated

    def text(self) -> str:
        """The condition as docs/model.md writes it: `hwm = volatile`, `token ≠ wrapping`,
        `receiver ∈ {none, equality}`, `token ∉ {random, wrapping}`."""
        if len(self.values) > 1:
            values = ", ".join(_value_text(v) for v in self.values)
            return f"{self.option} {'∉' if self.negated else '∈'} {{{values}}}"
        return f"{self.option} {'≠' if self.negated else '='} {_value_text(self.values[0])}"


@dataclass(frozen=True)
class Combination:
    """A refused combination: when every condition holds the design is refused with
    `message` (formatted with the options' values), which says what to change."""

    when: tuple[When, ...]
    message: str
    why: str
    """Why it is refused, for docs/model.md."""

    @property
    def options(self) -> tuple[str, ...]:
        """The options this row concerns."""
        return tuple(w.option for w in self.when)

    def refuses(self, design: Any) -> bool:
        """Whether this row refuses the design."""
        return all(w.holds(design) for w in self.when)

    def message_for(self, design: Any) -> str:
        """The refusal's message for this design."""
        return self.message.format(**{name: getattr(design, name) for name in self.options})


def _either(values: Sequence[Any]) -> str:
    """`a, b, c or d`."""
    words = [str(v) for v in values]
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]


_NO_READ_CHECK: Final = receivers_where(lambda row: not row.checks_reads)
_READ_CHECKERS: Final = receivers_where(lambda row: row.checks_reads)
_NO_MARK: Final = receivers_where(lambda row: not row.receiver.keeps_a_mark)
_NO_HIGH_WATER_MARK: Final = receivers_where(lambda row: not row.keeps_high_water_mark)
_HIGH_WATER_MARKS: Final = receivers_where(lambda row: row.keeps_high_water_mark)
_RESET_TOKENS: Final = tokens_where(lambda row: row.reset_by_coordinator_restart)
_CLOCK_TOKENS: Final = tokens_where(lambda row: "skew" in row.shaped_by)
_WRAP_TOKENS: Final = tokens_where(lambda row: "wrap" in row.shaped_by)


COMBINATIONS: Final = (
    Combination(
        (When("fenced_reads", (True,)), When("workload", (Workload.RMW,), negated=True)),
        "fenced_reads needs workload rmw: set workload to rmw or drop it",
        "with blind writes nothing is read",
    ),
    Combination(
        (When("fenced_reads", (True,)), When("receiver", _NO_READ_CHECK)),
        "fenced_reads has no effect with receiver {receiver}: reads are only checked by "
        f"{_either(_READ_CHECKERS)} receivers",
        "these receivers check no reads, so the option would change nothing",
    ),
    Combination(
        (When("hwm", (MarkStore.VOLATILE,)), When("storage_restarts", (0,))),
        "hwm volatile needs storage_restarts of at least 1 (without a restart it behaves "
        "exactly as durable)",
        "without a restart a volatile mark behaves exactly like a durable one",
    ),
    Combination(
        (
            When("hwm", (MarkStore.VOLATILE,), negated=True),
            When("storage_restarts", (0,), negated=True),
        ),
        "storage_restarts only apply to a volatile mark: set hwm to volatile or "
        "storage_restarts to 0",
        "restarts only matter to a mark kept in memory",
    ),
    Combination(
        (When("hwm", (MarkStore.VOLATILE,)), When("receiver", _NO_MARK)),
        "receiver {receiver} keeps no mark, so hwm volatile changes nothing: use a fenced "
        "or equality receiver",
        "these receivers keep no mark to lose",
    ),
    Combination(
        (When("token", _RESET_TOKENS), When("coordinator_restarts", (0,))),
        f"token {_either(_RESET_TOKENS)} needs coordinator_restarts of at least 1 (without a "
        "restart it behaves exactly as counter)",
        "without a restart the volatile counter behaves exactly like `counter`",
    ),
    Combination(
        (
            When("token", _RESET_TOKENS, negated=True),
            When("coordinator_restarts", (0,), negated=True),
        ),
        f"coordinator_restarts only apply to token {_either(_RESET_TOKENS)}: change the token "
        "or set coordinator_restarts to 0",
        "only a volatile counter is lost in a coordinator restart",
    ),
    Combination(
        (When("token", _CLOCK_TOKENS, negated=True), When("skew", ((),), negated=True)),
        f"skew only applies to token {_either(_CLOCK_TOKENS)}: change the token or drop it",
        "skews only shape clock tokens",
    ),
    Combination(
        (When("token", _WRAP_TOKENS, negated=True), When("wrap", (0,), negated=True)),
        f"wrap only applies to token {_either(_WRAP_TOKENS)}: change the token or drop it",
        "a modulus only shapes wrapping tokens",
    ),
    Combination(
        (When("grant_fences", (True,)), When("receiver", _NO_HIGH_WATER_MARK)),
        "grant_fences raises the receiver's high-water mark, which receiver {receiver} does "
        f"not keep: use {_either(_HIGH_WATER_MARKS)}",
        "a grant can only raise a high-water mark, which these receivers do not keep",
    ),
    Combination(
        (When("expiry", (Expiry.NEVER,)), When("worker_check", (True,))),
        "worker_check has nothing to check with expiry never (the lock has no lease): drop "
        "worker_check or use expiry lease",
        "without a lease the worker has nothing to check",
    ),
    Combination(
        (When("expiry", (Expiry.NEVER,)), When("renew", (True,))),
        "renew has nothing to renew with expiry never (the lock has no lease): drop renew "
        "or use expiry lease",
        "without a lease there is nothing to renew",
    ),
)
"""Every refused combination, in the order a design is checked (the first match speaks)."""


def refusals(design: Any) -> list[str]:
    """The messages of every row that refuses the design, in table order."""
    return [row.message_for(design) for row in COMBINATIONS if row.refuses(design)]


def combination_table() -> list[str]:
    """docs/model.md's refused-combinations table, one line per row."""
    lines = ["| combination | why it is refused |", "|---|---|"]
    return lines + [
        f"| `{' ∧ '.join(w.text() for w in row.when)}` | {row.why} |" for row in COMBINATIONS
    ]
