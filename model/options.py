"""The design options as one typed table: what exists, its values, its words and its limits.

Every place that reads or shows a design option takes it from `OPTIONS`: the `Design`
dataclass validates with it, the CLI makes its flags from it, the web forms their widgets,
links their parameters and exercise files their schema. What a value means lives in its
row: each token source is a `TokenRow` of `TOKEN_TABLE` (words, what it mirrors, its domain
ceiling, what it implies), and each receiver rule a `ReceiverRow` of `RECEIVER_TABLE`
(its test, the marks it keeps, whether it splits check and write), read by the rules, the
layout, the refused combinations and the prover instead of naming values. Adding an option
(or a value of one) is a change here and in the rule that gives it meaning (docs/model.md,
"Design options").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, Protocol, assert_never

MAX_RESTARTS: Final = 3
MAX_CRASHES: Final = 3
MAX_SKEW: Final = 6
MAX_WRAP: Final = 8
MAX_OPTION_TEXT: Final = 40
"""Longest text accepted for one option value from a link, a form or a file."""


class SizedDesign(Protocol):
    """What a token source's ceiling reads of a design (`model.design.Design` has it)."""

    @property
    def modulus(self) -> int: ...

    def skews(self, workers: int) -> tuple[int, ...]: ...


class SizedBounds(Protocol):
    """What a token source's ceiling reads of the bounds (`model.design.Bounds` has it)."""

    @property
    def workers(self) -> int: ...

    @property
    def horizon(self) -> int: ...

    @property
    def grants(self) -> int: ...


class DesignError(ValueError):
    """An invalid design, bounds, or combination of the two; the message says what to change."""


class Token(StrEnum):
    """What the coordinator hands out at each grant."""

    COUNTER = "counter"
    COUNTER_VOLATILE = "counter-volatile"
    KEY_VERSION = "key-version"
    RANDOM = "random"
    LOCAL_CLOCK = "local-clock"
    WRAPPING = "wrapping"

    @property
    def row(self) -> TokenRow:
        """Everything this token source means (`TOKEN_ROWS`)."""
        return TOKEN_ROWS[self]


TOKEN_RULE: Final = "model.rules:RuleBuilder.new_token"
"""The rule that makes each token source's value at a grant (one case per `Token`)."""


@dataclass(frozen=True)
class TokenRow:
    """One token source and what its value means, read by every part that depends on it.

    The rules, the state layout, the refused combinations, the prover's candidate
    invariants and the words on every page read these fields instead of naming token
    values, so a new source is one `Token` member, one row here and one case of the rule
    `rule` names (docs/model.md#token).
    """

    token: Token
    words: str
    """The value in plain words, for forms, labels and sentences."""
    at_acquire: str
    """The token a grant hands out, as docs/model.md writes it (the rule's case, in words)."""
    mirrors: str
    """What it stands for in real lock services."""
    ceiling: Callable[[SizedDesign, SizedBounds], int]
    """The largest token value it can hand out at these bounds (the domain's top)."""
    uses_counter: bool
    """Each grant raises the coordinator's counter `issued`, and the token is its value."""
    reset_by_coordinator_restart: bool
    """A coordinator restart sets the counter back to 0 (only then do restarts apply)."""
    picks_unused_value: bool
    """The coordinator picks any value not handed out before (one Acquire per value)."""
    shaped_by: tuple[str, ...]
    """Options that only shape this source's values (refused with any other token)."""
    candidates: tuple[str, ...]
    """The prover's token-specific candidate invariants that apply (proofs/invariants.py)."""
    rule: str = TOKEN_RULE
    """The rule function whose case for this token makes its value at a grant."""

    @property
    def grows_with_every_grant(self) -> bool:
        """A fencing token: each grant's is the counter's next value, and no restart sets
        the counter back, so a later grant always carries a higher token."""
        return self.uses_counter and not self.reset_by_coordinator_restart


TOKEN_TABLE: Final = (
    TokenRow(
        Token.COUNTER,
        "durable counter (1, 2, 3, …)",
        "`issued + 1`: 1, 2, 3, …",
        "a durable revision or sequence number of a lock service",
        lambda design, bounds: bounds.grants,
        uses_counter=True,
        reset_by_coordinator_restart=False,
        picks_unused_value=False,
        shaped_by=(),
        candidates=(
            "counter_is_grants",
            "token_is_grant",
            "last_is_lastg",
            "grants_bound_tokens",
            "tokens_follow_grants",
        ),
    ),
    TokenRow(
        Token.COUNTER_VOLATILE,
        "counter lost on coordinator restart",
        "the same counter, reset by CoordinatorRestart",
        "a counter kept in a store that loses it on failover",
        lambda design, bounds: bounds.grants,
        uses_counter=True,
        reset_by_coordinator_restart=True,
        picks_unused_value=False,
        shaped_by=(),
        candidates=(),
    ),
    TokenRow(
        Token.KEY_VERSION,
        "the lock key's version (always 1)",
        "always 1",
        "a per-key version that starts again when the key is recreated",
        lambda design, bounds: 1,
        uses_counter=False,
        reset_by_coordinator_restart=False,
        picks_unused_value=False,
        shaped_by=(),
        candidates=(),
    ),
    TokenRow(
        Token.RANDOM,
        "random unique value",
        "any value of 1..G not handed out before in the run",
        "a UUID, a lease identifier, a random lock value",
        lambda design, bounds: bounds.grants,
        uses_counter=False,
        reset_by_coordinator_restart=False,
        picks_unused_value=True,
        shaped_by=(),
        candidates=(),
    ),
    TokenRow(
        Token.LOCAL_CLOCK,
        "the worker's own clock",
        "`now + 1 + skew[w]`",
        "a timestamp from the worker's own clock",
        lambda design, bounds: bounds.horizon + 1 + max(design.skews(bounds.workers)),
        uses_counter=False,
        reset_by_coordinator_restart=False,
        picks_unused_value=False,
        shaped_by=("skew",),
        candidates=("tokens_follow_grants", "clock_token_dates_the_grant"),
    ),
    TokenRow(
        Token.WRAPPING,
        "counter that wraps around",
        "`(grants mod M) + 1`",
        "a fixed-width sequence number that wraps",
        lambda design, bounds: min(design.modulus, bounds.grants),
        uses_counter=False,
        reset_by_coordinator_restart=False,
        picks_unused_value=False,
        shaped_by=("wrap",),
        candidates=(),
    ),
)
"""One row per token source, in the order of `Token`."""

TOKEN_ROWS: Final = {row.token: row for row in TOKEN_TABLE}


def tokens_where(test: Callable[[TokenRow], bool]) -> tuple[Token, ...]:
    """The token sources whose row passes a test, in their order."""
    return tuple(row.token for row in TOKEN_TABLE if test(row))


class Receiver(StrEnum):
    """What the protected resource checks on a request carrying a token."""

    NONE = "none"
    FENCED = "fenced"
    FENCED_STRICT = "fenced-strict"
    FENCED_NONATOMIC = "fenced-nonatomic"
    EQUALITY = "equality"
    LEASE_AWARE = "lease-aware"

    @property
    def row(self) -> ReceiverRow:
        """Everything this receiver rule means (`RECEIVER_ROWS`)."""
        return RECEIVER_ROWS[self]

    @property
    def keeps_high_water_mark(self) -> bool:
        """Whether the receiver keeps `hwm`, the highest token it has accepted."""
        return self.row.keeps_high_water_mark

    @property
    def keeps_equality_mark(self) -> bool:
        """Whether the receiver binds itself to the first token it accepts (`mark`)."""
        return self.row.keeps_equality_mark

    @property
    def keeps_a_mark(self) -> bool:
        """Whether the receiver keeps any mark that a restart can lose."""
        return self.keeps_high_water_mark or self.keeps_equality_mark

    @property
    def checks_anything(self) -> bool:
        """Whether the receiver can refuse a request at all."""
        return self.row.test.row.checks

    @property
    def splits_check_and_write(self) -> bool:
        """Whether checking a request and applying it are two separate steps."""
        return self.row.splits_check_and_write


class AdmissionTest(StrEnum):
    """What the receiver compares before it takes a request, spelt as sentences show it."""

    AT_LEAST = "≥"
    ABOVE = ">"
    EQUAL = "="
    LEASE = "lease"
    NOTHING = "nothing"

    @property
    def row(self) -> AdmissionRow:
        """This test's row of `ADMISSION_ROWS`."""
        return ADMISSION_BY_TEST[self]


@dataclass(frozen=True)
class AdmissionRow:
    """What one admission test is, for the words that describe it (never for deciding)."""

    test: AdmissionTest
    checks: bool
    """The receiver checks something at all."""
    compares_token: bool
    """The token is compared with the receiver's mark, with the test as the comparison."""
    binds: bool = False
    """A receiver with no mark yet binds itself to the first token it sees."""
    asks_lock_service: bool = False
    """The receiver asks the lock service whether the writer's lease is current."""


ADMISSION_ROWS: Final = (
    AdmissionRow(AdmissionTest.AT_LEAST, checks=True, compares_token=True),
    AdmissionRow(AdmissionTest.ABOVE, checks=True, compares_token=True),
    AdmissionRow(AdmissionTest.EQUAL, checks=True, compares_token=True, binds=True),
    AdmissionRow(AdmissionTest.LEASE, checks=True, compares_token=False, asks_lock_service=True),
    AdmissionRow(AdmissionTest.NOTHING, checks=False, compares_token=False),
)
"""One row per admission test, in the order of `AdmissionTest`."""
ADMISSION_BY_TEST: Final = {row.test: row for row in ADMISSION_ROWS}


RECEIVER_RULE: Final = "model.rules:RuleBuilder.admission"
"""The rule that makes each receiver's admission test (one case per `Receiver`)."""
RECEIVER_NARRATOR: Final = "model.explain.narration:comparison"
"""The function that words each admission test, with its values, in a sentence."""


@dataclass(frozen=True)
class ReceiverRow:
    """One receiver rule and what it means, read by every part that depends on it.

    The rules, the state layout, the refused combinations, the prover's candidate
    invariants and the words on every page read these fields instead of naming receiver
    values, so a new rule is one `Receiver` member, one row here and one case of the rule
    `rule` names (docs/model.md#receiver).
    """

    receiver: Receiver
    words: str
    """The rule in plain words, for forms, labels and sentences."""
    test: AdmissionTest
    """The admission test: `≥`, `>` or `=` against the mark, `lease`, or `nothing`."""
    accepts_when: str
    """When it accepts a checked request, as docs/model.md writes it."""
    also_sets: str
    """What a landed write also sets, as docs/model.md writes it."""
    mirrors: str
    """What it stands for in real resources."""
    keeps_high_water_mark: bool
    """It keeps `hwm`, the highest token accepted (raised by writes and fenced reads)."""
    keeps_equality_mark: bool
    """It binds itself to the first token it accepts (`mark`)."""
    splits_check_and_write: bool
    """Checking a request and applying it are two steps (Check, then Apply)."""
    checks_reads: bool
    """With `fenced_reads`, reads are checked by this rule too."""
    candidates: tuple[str, ...]
    """The prover's receiver-specific candidate invariants that apply (proofs/invariants.py)."""
    rule: str = RECEIVER_RULE
    """The rule function whose case for this receiver makes its admission test."""
    narrator: str = RECEIVER_NARRATOR
    """The function that words its test in the narration."""


RECEIVER_TABLE: Final = (
    ReceiverRow(
        Receiver.NONE,
        "nothing (plain store)",
        AdmissionTest.NOTHING,
        "always",
        "nothing more",
        "a plain store",
        keeps_high_water_mark=False,
        keeps_equality_mark=False,
        splits_check_and_write=False,
        checks_reads=False,
        candidates=(),
    ),
    ReceiverRow(
        Receiver.FENCED,
        "token ≥ highest seen, atomically",
        AdmissionTest.AT_LEAST,
        "`tok[w] ≥ hwm`",
        "`hwm := tok[w]`",
        "a conditional write on the stored fence, in one step",
        keeps_high_water_mark=True,
        keeps_equality_mark=False,
        splits_check_and_write=False,
        checks_reads=True,
        candidates=(),
    ),
    ReceiverRow(
        Receiver.FENCED_STRICT,
        "token > highest seen",
        AdmissionTest.ABOVE,
        "`tok[w] > hwm`",
        "`hwm := tok[w]`",
        "the same with `>`, which also refuses the holder's own second write",
        keeps_high_water_mark=True,
        keeps_equality_mark=False,
        splits_check_and_write=False,
        checks_reads=True,
        candidates=(),
    ),
    ReceiverRow(
        Receiver.FENCED_NONATOMIC,
        "token ≥ highest seen, then writes in a separate step",
        AdmissionTest.AT_LEAST,
        "`tok[w] ≥ hwm` at Check(w)",
        "`hwm := tok[w]` at Apply(w)",
        "check-then-act in two separate steps",
        keeps_high_water_mark=True,
        keeps_equality_mark=False,
        splits_check_and_write=True,
        checks_reads=True,
        candidates=(),
    ),
    ReceiverRow(
        Receiver.EQUALITY,
        "token equals the first one seen",
        AdmissionTest.EQUAL,
        "`mark = 0 ∨ tok[w] = mark`",
        "`mark := tok[w]`",
        "a stored token compared for equality",
        keeps_high_water_mark=False,
        keeps_equality_mark=True,
        splits_check_and_write=False,
        checks_reads=False,
        candidates=("mark_is_last",),
    ),
    ReceiverRow(
        Receiver.LEASE_AWARE,
        "the writer's lease is live, asked of the lock service in the same transaction as "
        "the write",
        AdmissionTest.LEASE,
        "`lease_is_current(w)`",
        "nothing more",
        "a resource that consults the live lease in the same transaction",
        keeps_high_water_mark=False,
        keeps_equality_mark=False,
        splits_check_and_write=False,
        checks_reads=True,
        candidates=("current_reader_saw_latest",),
    ),
)
"""One row per receiver rule, in the order of `Receiver`."""

RECEIVER_ROWS: Final = {row.receiver: row for row in RECEIVER_TABLE}


def receivers_where(test: Callable[[ReceiverRow], bool]) -> tuple[Receiver, ...]:
    """The receiver rules whose row passes a test, in their order."""
    return tuple(row.receiver for row in RECEIVER_TABLE if test(row))


class MarkStore(StrEnum):
    """Where the receiver keeps its mark."""

    DURABLE = "durable"
    VOLATILE = "volatile"


class Workload(StrEnum):
    """What a worker does under its grant."""

    BLIND = "blind"
    RMW = "rmw"


class Expiry(StrEnum):
    """Whether the coordinator's lease on the lock runs out."""

    LEASE = "lease"
    NEVER = "never"


class Kind(StrEnum):
    """How an option's value is written: one of named choices, a count, a flag, or a list."""

    CHOICE = "choice"
    COUNT = "count"
    FLAG = "flag"
    OFFSETS = "offsets"


@dataclass(frozen=True)
class Option:
    """One design option: its name, kind, plain-words label and help, values and limits."""

    name: str
    kind: Kind
    label: str
    help: str
    default: Any
    choices: type[StrEnum] | None = None
    words: Mapping[str, str] = field(default_factory=dict)
    """Plain words for each choice value, shown before (or instead of) the code name."""
    low: int = 0
    high: int = 0

    @property
    def flag(self) -> str:
        """The command-line flag, e.g. `--storage-restarts`."""
        return "--" + self.name.replace("_", "-")

    @property
    def values(self) -> tuple[str, ...]:
        """The code names of the choices (empty unless a choice)."""
        return tuple(str(v) for v in self.choices) if self.choices else ()

    def word(self, value: Any) -> str:
        """A value in plain words, e.g. `plain store (checks nothing)` for receiver none."""
        if self.kind is Kind.FLAG:
            return "yes" if value else "no"
        if self.kind is Kind.OFFSETS:
            return ", ".join(str(v) for v in value) or "default"
        return self.words.get(str(value), str(value))

    def coerce(self, value: Any) -> Any:
        """The value in the option's own type, or a `DesignError` saying what is allowed."""
        match self.kind:
            case Kind.CHOICE:
                assert self.choices is not None
                if isinstance(value, str) and value in self.values:
                    return self.choices(value)
                raise DesignError(
                    f"{self.name} = {_shown(value)} is not known: choose one of "
                    f"{', '.join(self.values)}"
                )
            case Kind.COUNT:
                return _whole_number(self.name, value, self.low, self.high)
            case Kind.FLAG:
                if isinstance(value, bool):
                    return value
                raise DesignError(f"{self.name} must be true or false, not {_shown(value)}")
            case Kind.OFFSETS:
                if not isinstance(value, list | tuple) or len(value) > 8:
                    raise DesignError(
                        f"{self.name} must be a list of up to 8 whole numbers, not {_shown(value)}"
                    )
                return tuple(_whole_number(self.name, v, self.low, self.high) for v in value)
            case _:
                assert_never(self.kind)

    def parse_text(self, text: str) -> Any:
        """The value written as text in a link, a form or a flag (`1`/`0` for flags)."""
        if len(text) > MAX_OPTION_TEXT:
            raise DesignError(f"{self.name}: the value is longer than {MAX_OPTION_TEXT} characters")
        text = text.strip()
        match self.kind:
            case Kind.CHOICE:
                return self.coerce(text)
            case Kind.COUNT:
                return self.coerce(_digits(self.name, text))
            case Kind.FLAG:
                if text.lower() in ("1", "true", "yes", "on"):
                    return True
                if text.lower() in ("0", "false", "no", "off"):
                    return False
                raise DesignError(f"{self.name} must be 1 or 0, not {_shown(text)}")
            case Kind.OFFSETS:
                parts = [part.strip() for part in text.split(",") if part.strip()]
                return self.coerce([_digits(self.name, part) for part in parts])
            case _:
                assert_never(self.kind)

    def to_text(self, value: Any) -> str:
        """The value as text for a link or a flag (the inverse of `parse_text`)."""
        match self.kind:
            case Kind.FLAG:
                return "1" if value else "0"
            case Kind.OFFSETS:
                return ",".join(str(v) for v in value)
            case Kind.CHOICE | Kind.COUNT:
                return str(value)
            case _:
                assert_never(self.kind)

    def to_json(self, value: Any) -> Any:
        """The value as plain JSON/TOML data."""
        if self.kind is Kind.OFFSETS:
            return list(value)
        if self.kind is Kind.CHOICE:
            return str(value)
        return value


def _shown(value: object) -> str:
    """A value for an error message, shortened so a hostile input cannot flood the message."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _digits(name: str, text: str) -> int:
    """A short run of digits as an int; anything else is refused."""
    if not text.isdigit() or len(text) > 3:
        raise DesignError(f"{name} must be a whole number, not {_shown(text)}")
    return int(text)


def _whole_number(name: str, value: object, low: int, high: int) -> int:
    """An int within its range (booleans are not numbers here)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise DesignError(
            f"{name} must be a whole number from {low} to {high}, not {_shown(value)}"
        )
    if not low <= value <= high:
        raise DesignError(f"{name} = {value} is out of range: allowed {low}..{high}")
    return value


OPTIONS: Final = (
    Option(
        "token",
        Kind.CHOICE,
        "Token source",
        "What the coordinator hands out at each grant.",
        Token.COUNTER,
        Token,
        {str(row.token): row.words for row in TOKEN_TABLE},
    ),
    Option(
        "receiver",
        Kind.CHOICE,
        "What the resource checks",
        "What the protected resource checks on a request carrying a token.",
        Receiver.FENCED,
        Receiver,
        {str(row.receiver): row.words for row in RECEIVER_TABLE},
    ),
    Option(
        "hwm",
        Kind.CHOICE,
        "Where the resource keeps its mark",
        "Whether the resource's highest-seen token survives a restart of the resource.",
        MarkStore.DURABLE,
        MarkStore,
        {"durable": "on disk (survives restarts)", "volatile": "in memory (lost on restart)"},
    ),
    Option(
        "storage_restarts",
        Kind.COUNT,
        "Resource restarts",
        "How many times the resource may restart in a run (a volatile mark only).",
        0,
        low=0,
        high=MAX_RESTARTS,
    ),
    Option(
        "coordinator_restarts",
        Kind.COUNT,
        "Lock-service restarts",
        "How many times the lock service may restart in a run (a volatile counter only).",
        0,
        low=0,
        high=MAX_RESTARTS,
    ),
    Option(
        "worker_check",
        Kind.FLAG,
        "Worker checks its own lease",
        "Before each send, the worker checks that its lease has not run out.",
        False,
    ),
    Option(
        "workload",
        Kind.CHOICE,
        "What a worker does",
        "Blind writes, or read-modify-write (read, compute, write back).",
        Workload.BLIND,
        Workload,
        {"blind": "blind writes", "rmw": "read-modify-write"},
    ),
    Option(
        "fenced_reads",
        Kind.FLAG,
        "Reads carry the token too",
        "In read-modify-write, reads are checked like writes (and raise the mark).",
        False,
    ),
    Option(
        "grant_fences",
        Kind.FLAG,
        "The grant itself fences the resource",
        "Granting the lock also raises the resource's mark to the new token, in one step.",
        False,
    ),
    Option(
        "expiry",
        Kind.CHOICE,
        "Whether the lock expires",
        "With a lease the lock is freed L ticks after its grant or renewal; without one it "
        "is held until its holder releases it.",
        Expiry.LEASE,
        Expiry,
        {"lease": "after its lease (L ticks)", "never": "never (no lease)"},
    ),
    Option(
        "renew",
        Kind.FLAG,
        "The holder renews its lease",
        "A keepalive: the holder extends its lease to L ticks from now while it still runs.",
        False,
    ),
    Option(
        "crashes",
        Kind.COUNT,
        "Worker crashes",
        "How many workers may crash for ever in a run while they believe they hold the lock.",
        0,
        low=0,
        high=MAX_CRASHES,
    ),
    Option(
        "skew",
        Kind.OFFSETS,
        "Clock offsets per worker",
        f"For a clock token: how far each worker's clock runs ahead (each 0..{MAX_SKEW}), "
        "such as 1,0; empty for the default (the first worker one tick ahead).",
        (),
        low=0,
        high=MAX_SKEW,
    ),
    Option(
        "wrap",
        Kind.COUNT,
        "Wrap-around modulus",
        "For a wrapping token: after how many values it starts again (0: the default, 2).",
        0,
        low=0,
        high=MAX_WRAP,
    ),
)

BY_OPTION: Final = {option.name: option for option in OPTIONS}
OPTION_NAMES: Final = tuple(BY_OPTION)


def option(name: str) -> Option:
    """The option with this name, or a `DesignError` listing the known ones."""
    try:
        return BY_OPTION[name]
    except KeyError:
        raise DesignError(
            f"{_shown(name)} is not a design option: use {', '.join(OPTION_NAMES)}"
        ) from None
