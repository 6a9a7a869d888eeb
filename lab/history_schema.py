"""The lab's file schemas: a run's settings and its history, each field one row.

A history file is measured and decoded by `model.formats.reading`, then converted here with the
typed schemas of `model.formats.schemas` (msgspec): a value that does not fit gets one sentence
naming the place in the history and the field. The settings' schema is made from the
`Settings` dataclass itself, so a field added there is read from a history at once (a
history written before it existed reads with the field's default); its ranges and the
combinations it refuses stay the dataclass's own checks, shared with the command line.
"""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass, fields
from typing import Annotated, Any, Final

import msgspec

from lab.nemesis import NEMESIS_KINDS
from lab.settings import LabInputError, Settings
from model.formats.reading import MAX_HISTORY_EVENTS as MAX_EVENTS
from model.formats.reading import MAX_TRACE_STEPS, shown
from model.formats.schemas import SchemaError, Words, convert, own, value_at
from model.properties import PROPERTY_NAMES

KNOWN_KINDS: Final = (
    "grant",
    "lock-put",
    "lock-delete",
    "release",
    "send",
    "reply",
    "deliver",
    "check",
    "apply",
    "pause",
    "resume",
    "hold",
    "unhold",
    "storage-kill",
    "storage-start",
    "lease-check",
    "error",
    "invoke",
    "fail",
    "info",
    "final-read",
    "renew",
    "leader",
    *NEMESIS_KINDS,
)
CLIENT_OPS: Final = ("acquire", "read", "write", "release", "renew")
"""The client operations a worker records: invoke, then ok, fail or info (see lab.worker)."""

REQUIRED: Final = {
    "grant": ("worker", "revision", "token"),
    "lock-put": ("revision",),
    "lock-delete": ("revision",),
    "release": ("worker", "grant", "etcd_revision", "deleted"),
    "deliver": ("worker", "token", "grant"),
    "check": ("worker", "token", "grant"),
    "apply": ("worker", "token", "grant"),
    "renew": ("worker", "grant"),
    "crash": ("worker",),
}
"""The fields each kind of event cannot do without (not null)."""


MAX_SETTING_CHARS: Final = 40
"""Longest text a setting holds (a receiver, token or service name)."""
SETTING_CHARS: Final[dict[str, int]] = {"faults": 100}
"""Settings whose text may be longer than `MAX_SETTING_CHARS`: one row each (`faults`: a
randomized run's fault kinds, comma-separated)."""

SETTING_KINDS: Final = {
    str: Words("a name"),
    int: Words("a whole number"),
    float: Words("a number"),
    bool: Words("true or false"),
}
"""The words for each plain type a setting has; a setting of another type is described by
its own row in `SETTING_WORDS`."""
SETTING_WORDS: Final[dict[str, Words]] = {}
"""Words for a setting whose type is not one of `SETTING_KINDS` (one row each)."""


def _setting_type(name: str, hint: Any) -> Any:
    """The schema type of one setting: text bounded in length, other types as declared."""
    if hint is str:
        limit = SETTING_CHARS.get(name, MAX_SETTING_CHARS)
        return Annotated[str, msgspec.Meta(max_length=limit)]
    return hint


def _settings_schema() -> tuple[type[msgspec.Struct], dict[str, Words]]:
    """The settings' Struct (every field of `Settings`, with its default) and its words."""
    hints = typing.get_type_hints(Settings)
    rows = [(f.name, _setting_type(f.name, hints[f.name]), f.default) for f in fields(Settings)]
    words = {
        f.name: SETTING_WORDS.get(f.name)
        or Words(
            f"{SETTING_KINDS[hints[f.name]].kind} of at most "
            f"{SETTING_CHARS.get(f.name, MAX_SETTING_CHARS)} characters"
            if hints[f.name] is str
            else SETTING_KINDS.get(hints[f.name], Words("a value")).kind
        )
        for f in fields(Settings)
    }
    schema = msgspec.defstruct("SettingsFile", rows, forbid_unknown_fields=True)
    return schema, words


SETTINGS_SCHEMA, SETTINGS_WORDS = _settings_schema()


def settings_of(data: Any, where: str = "the history's settings") -> Settings:
    """A run's settings from a decoded JSON object: every field's type from the schema, every
    text printable, then the settings' own ranges and combinations."""
    if not isinstance(data, dict):
        raise LabInputError(f"{where} must be an object")
    try:
        record = convert(data, SETTINGS_SCHEMA, SETTINGS_WORDS)
    except SchemaError as error:
        raise LabInputError(f"{where}: {error.problem}") from None
    values = msgspec.structs.asdict(record)
    for name, value in values.items():
        if isinstance(value, str) and not value.isprintable():
            raise LabInputError(
                f"{where}: field '{name}' holds control characters (escaped: {shown(value)})"
            )
    return Settings(**values)


# ----- a history file ---------------------------------------------------------------------------

MAX_NUMBER: Final = 2**63 - 1
"""Largest whole number in a history: etcd's revisions, versions and lease IDs are int64."""
MAX_EVENT_SECONDS: Final = 3_600.0
"""Latest time an event may have (seconds since the run started): runs last at most 60 s."""
MAX_NAME_CHARS: Final = 100
MAX_TEXT_CHARS: Final = 1_000
MAX_SENTENCES: Final = 500
MAX_MEASURED_SECONDS: Final = 600.0
MAX_FINAL_LOCKS: Final = 100
"""Most lock keys a final read may list."""
MAX_PREDICTED: Final = MAX_TRACE_STEPS
"""Largest count a prediction holds (a trace's steps)."""

Whole = Annotated[int, msgspec.Meta(ge=0, le=MAX_NUMBER)]
Seconds = Annotated[float, msgspec.Meta(ge=0, le=MAX_EVENT_SECONDS)]
Name = Annotated[str, msgspec.Meta(max_length=MAX_NAME_CHARS)]
Text = Annotated[str, msgspec.Meta(max_length=MAX_TEXT_CHARS)]
Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_PREDICTED)]

WHOLE_WORDS: Final = Words("a whole number", f"from 0 to {MAX_NUMBER:,}")
SECONDS_WORDS: Final = Words("a number of seconds", f"from 0 to {MAX_EVENT_SECONDS:g} seconds")
NAME_WORDS: Final = Words(f"text of at most {MAX_NAME_CHARS} characters")
TEXT_WORDS: Final = Words(f"text of at most {MAX_TEXT_CHARS:,} characters")
TRUTH_WORDS: Final = Words("true or false")


@dataclass(frozen=True)
class Field:
    """One field an event may have: its schema type and the words of a refusal."""

    type: Any
    words: Words
    printable: str = ""
    """`name`: no control characters at all; `text`: tabs and line breaks allowed."""


def whole(nullable: bool = False) -> Field:
    """A whole number from 0 to `MAX_NUMBER` (or null, when the lab writes it as null)."""
    return Field(Whole | None if nullable else Whole, WHOLE_WORDS)


SECONDS: Final = Field(Seconds, SECONDS_WORDS)
TRUTH: Final = Field(bool, TRUTH_WORDS)
NAME: Final = Field(Name, NAME_WORDS, "name")
TEXT: Final = Field(Text, TEXT_WORDS, "text")


class FinalData(msgspec.Struct, forbid_unknown_fields=True):
    """The data row a final read found: its value, version and the mark (null: unknown)."""

    value: Whole | None = None
    version: Whole | None = None
    mark: Whole | None = None


class LockKey(msgspec.Struct, forbid_unknown_fields=True):
    """A lock key a final read found."""

    create_revision: Whole = 0
    lease: Whole = 0
    holder: Name | None = None
    value: Name | None = None


EVENT_FIELDS: Final[dict[str, Field]] = {
    "t": SECONDS,
    "asked": SECONDS,
    "stopped_at": SECONDS,
    "source": NAME,
    "kind": NAME,
    "worker": whole(),
    "revision": whole(),
    "version": whole(),
    "lease": whole(),
    "ttl": whole(),
    "token": whole(),
    "grant": whole(),
    "create_revision": whole(),
    "version_before": whole(),
    "version_after": whole(),
    "incarnation": whole(),
    "value": whole(nullable=True),
    "read_version": whole(nullable=True),
    "mark": whole(nullable=True),
    "mark_before": whole(nullable=True),
    "mark_after": whole(nullable=True),
    "etcd_revision": whole(nullable=True),
    "deleted": TRUTH,
    "passed": TRUTH,
    "unanswered": TRUTH,
    "etcd_after": TRUTH,
    "watch": TRUTH,
    "request": NAME,
    "op": NAME,
    "outcome": NAME,
    "during": NAME,
    "holder": Field(Name, Words("W1, W2, … or empty"), "name"),
    "phase": NAME,
    "receiver": NAME,
    "hwm": NAME,
    "error": TEXT,
    "member": whole(),
    "pid": whole(),
    "order_revision": whole(nullable=True),
    "ordered": TRUTH,
    "key": Field(
        Annotated[str, msgspec.Meta(max_length=400)],
        Words("a key of at most 400 characters"),
        "name",
    ),
    "node": NAME,
    "lock_value": NAME,
    "client_says_held": TRUTH,
    "rate": Field(float, Words("a number")),
    "fault": whole(),
    "term": whole(),
    "why": NAME,
    "by": whole(),
    "wall": SECONDS,
    "real_seconds": SECONDS,
    "wall_seconds": SECONDS,
    "data": Field(FinalData | None, Words("an object")),
    "locks": Field(
        Annotated[list[LockKey], msgspec.Meta(max_length=MAX_FINAL_LOCKS)] | None,
        Words("a list of keys", f"a list of at most {MAX_FINAL_LOCKS} keys"),
    ),
}
"""Every field an event may have, one row each (any other is refused); a field an event
leaves out is null. Which kinds need which fields: `lab.history.REQUIRED`."""

HOLDER: Final = re.compile(r"(W[0-9]{1,3})?")
"""The lock key's value: the holder's name, `W1`…, or nothing."""
_PRINTABLE: Final = tuple((n, f.printable) for n, f in EVENT_FIELDS.items() if f.printable)


def _event_check(record: Any) -> None:
    """An event's own checks, after its fields' types: printable text, a holder's name, the
    fields its kind needs and a client operation's name (`lab.history`'s tables)."""

    if record.kind not in KNOWN_KINDS:
        raise own(f"it has an unknown kind '{shown(record.kind)}'")
    for name, kind in _PRINTABLE:
        text: str | None = getattr(record, name)
        if text is not None and not _printable(text, kind):
            raise own(f"field '{name}' holds control characters (escaped: {shown(text)})")
    if record.holder is not None and not HOLDER.fullmatch(record.holder):
        raise own("field 'holder' must be W1, W2, … or empty")
    for name in REQUIRED.get(record.kind, ()):
        if getattr(record, name) is None:
            raise own(f"it has no field '{name}'")
    if record.kind in ("invoke", "fail", "info") and record.op not in CLIENT_OPS:
        raise own(f"it has a bad client operation '{shown(record.op)}'")


def _printable(text: str, kind: str) -> bool:
    """Whether text is free of control characters (a message may hold tabs and breaks)."""
    if kind == "text":
        text = text.replace("\n", "").replace("\t", "")
    return text.isprintable()


EventRecord: Final[Any] = msgspec.defstruct(
    "EventRecord",
    [
        (name, row.type) if name in ("t", "kind") else (name, row.type, None)
        for name, row in EVENT_FIELDS.items()
    ],
    forbid_unknown_fields=True,
    kw_only=True,
    namespace={"__post_init__": _event_check},
)
"""An event of a history file, made from `EVENT_FIELDS`."""


class Verdict(msgspec.Struct, forbid_unknown_fields=True):
    """The model's verdict on one property in a prediction."""

    violated: bool
    count: Count = 0


class Prediction(msgspec.Struct, forbid_unknown_fields=True):
    """The model's prediction for a scripted run."""

    summary: Text
    accepted: Count
    rejected: Count
    properties: dict[str, Verdict]
    sentences: Annotated[list[Text], msgspec.Meta(max_length=MAX_SENTENCES)]
    design: dict[str, Any] | None = None
    bounds: dict[str, Any] | None = None
    actions: list[dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        if set(self.properties) != set(PROPERTY_NAMES):
            raise own(
                "field 'properties' must give a verdict for each of " + ", ".join(PROPERTY_NAMES)
            )
        for number, sentence in enumerate([self.summary, *self.sentences]):
            if not _printable(sentence, "text"):
                what = f"sentence {number}" if number else "field 'summary'"
                raise own(f"{what} holds control characters (escaped: {shown(sentence)})")


MeasuredSeconds = Annotated[float, msgspec.Meta(ge=0, le=MAX_MEASURED_SECONDS)]


class Measured(msgspec.Struct, forbid_unknown_fields=True):
    """What a run measured on its etcd, in seconds."""

    request_seconds: MeasuredSeconds | None = None
    revocation_seconds: MeasuredSeconds | None = None
    observer_seconds: MeasuredSeconds | None = None


EtcdValue = (
    Annotated[str, msgspec.Meta(max_length=200)]
    | Annotated[int, msgspec.Meta(ge=-MAX_NUMBER, le=MAX_NUMBER)]
    | float
    | bool
    | None
)
SettingName = Annotated[str, msgspec.Meta(max_length=MAX_SETTING_CHARS)]


class HistoryFile(msgspec.Struct, forbid_unknown_fields=True):
    """A lab history file: one row per field (`settings` is read by `settings_of`)."""

    format: str
    version: int
    settings: dict[str, Any]
    events: Annotated[list[EventRecord], msgspec.Meta(max_length=MAX_EVENTS)]  # type: ignore[valid-type]
    scenario: Name = ""
    etcd: dict[SettingName, EtcdValue] | None = None
    started: Name = ""
    seconds: Seconds = 0.0
    prediction: Prediction | None = None
    partial: Text = ""
    measured: Measured | None = None
    nemesis: list[dict[str, Any]] | None = None
    """A randomized run's fault schedule (each fault read by the lab's fault table)."""
    nemesis_given: bool = False
    """Whether the schedule was given by the caller, not drawn from the seed."""

    def __post_init__(self) -> None:
        for text, kind, what in (
            (self.scenario, "name", "field 'scenario'"),
            (self.started, "name", "field 'started'"),
            (self.partial, "text", "field 'partial'"),
        ):
            if not _printable(text, kind):
                raise own(f"{what} holds control characters (escaped: {shown(text)})")
        for name, value in (self.etcd or {}).items():
            for part in (name, value):
                if isinstance(part, str) and not part.isprintable():
                    raise own(
                        f"field 'etcd': field '{shown(name)}' holds control characters "
                        f"(escaped: {shown(part)})"
                    )


HISTORY_WORDS: Final = {
    **{name: row.words for name, row in EVENT_FIELDS.items()},
    "settings": Words("an object"),
    "events": Words("a list of events", f"a list of at most {MAX_EVENTS:,} events"),
    "scenario": NAME_WORDS,
    "etcd": Words("an object"),
    "started": NAME_WORDS,
    "seconds": SECONDS_WORDS,
    "prediction": Words("an object or null"),
    "partial": TEXT_WORDS,
    "measured": Words("an object"),
    "nemesis": Words("a list of faults"),
    "nemesis_given": TRUTH_WORDS,
    "summary": TEXT_WORDS,
    "accepted": Words("a whole number", f"from 0 to {MAX_PREDICTED}"),
    "rejected": Words("a whole number", f"from 0 to {MAX_PREDICTED}"),
    "count": Words("a whole number", f"from 0 to {MAX_PREDICTED}"),
    "properties": Words("an object of verdicts"),
    "violated": TRUTH_WORDS,
    "sentences": Words("a list of texts", f"a list of at most {MAX_SENTENCES} texts"),
    "request_seconds": Words(
        "a number of seconds", f"a number of seconds from 0 to {MAX_MEASURED_SECONDS:g}"
    ),
    "revocation_seconds": Words(
        "a number of seconds", f"a number of seconds from 0 to {MAX_MEASURED_SECONDS:g}"
    ),
    "observer_seconds": Words(
        "a number of seconds", f"a number of seconds from 0 to {MAX_MEASURED_SECONDS:g}"
    ),
}
"""What each field of a history takes, in the words of a refusal."""

PLACES: Final = {
    "prediction": "the history's prediction",
    "measured": "the history's measured figures",
}
"""Where a refusal inside a part of the history is said to be (the rest: `the history`)."""


def _event_refusal(data: Any, error: SchemaError) -> str:
    """A refusal inside event N, said as `event N (kind) of the history: …`."""

    number, rest = int(error.path[1]), error.path[2:]
    event = value_at(data, error.path[:2])
    kind = event.get("kind") if isinstance(event, dict) else None
    known = isinstance(kind, str) and kind in KNOWN_KINDS
    where = (
        f"event {number + 1} ({kind}) of the history"
        if known
        else (f"event {number + 1} of the history")
    )
    problem = error.problem
    if not isinstance(event, dict):
        problem = "it is not an object"
    elif rest == ("t",) and "t" not in event:
        problem = "it has no time 't'"
    elif rest == ("kind",) and not known:
        problem = f"it has an unknown kind '{shown(kind)}'"
    elif (
        len(rest) == 1 and event.get(rest[0], 0) is None and rest[0] in REQUIRED.get(str(kind), ())
    ):
        problem = f"it has no field '{rest[0]}'"
    elif len(rest) > 1 and rest[0] == "data":
        problem = problem.replace(f"field '{rest[-1]}'", f"the final read's '{rest[-1]}'")
    elif len(rest) > 2 and rest[0] == "locks":
        problem = problem.replace(f"field '{rest[-1]}'", f"a lock key's '{rest[-1]}'")
    elif len(rest) == 2 and rest[0] == "locks":
        problem = "a lock key of the final read is malformed"
    return f"{where}: {problem}"


def history_record(data: dict[str, Any], settings: Settings) -> HistoryFile:
    """A decoded history (its format and version already known) as its typed record; a
    refusal names the event or the part of the history, and the field."""
    if data.get("prediction") == {}:
        data = {**data, "prediction": None}  # a run without a prediction may write `{}`
    try:
        record = convert(data, HistoryFile, HISTORY_WORDS)
    except SchemaError as error:
        path = error.path
        if len(path) >= 2 and path[0] == "events" and isinstance(path[1], int):
            raise LabInputError(_event_refusal(data, error)) from None
        where = PLACES.get(str(path[0]), "the history") if len(path) > 1 else "the history"
        raise LabInputError(f"{where}: {error.problem}") from None
    for number, event in enumerate(record.events, start=1):
        if event.worker is not None and event.worker > settings.workers:
            raise LabInputError(
                f"event {number} ({event.kind}) of the history: field 'worker' must be from 0 "
                f"to {settings.workers}, not {event.worker}"
            )
    return record
