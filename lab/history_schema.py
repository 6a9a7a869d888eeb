"""The lab's file schemas: a run's settings and its history, each field one row.

A history file is measured and decoded by `model.reading`, then converted here with the
typed schemas of `model.schemas` (msgspec): a value that does not fit gets one sentence
naming the place in the history and the field. The settings' schema is made from the
`Settings` dataclass itself, so a field added there is read from a history at once (a
history written before it existed reads with the field's default); its ranges and the
combinations it refuses stay the dataclass's own checks, shared with the command line.
"""

from __future__ import annotations

import typing
from dataclasses import fields
from typing import Annotated, Any, Final

import msgspec

from lab.settings import LabInputError, Settings
from model.reading import shown
from model.schemas import SchemaError, Words, convert

MAX_SETTING_CHARS: Final = 40
"""Longest text a setting holds (a receiver, token or service name)."""
SETTING_CHARS: Final[dict[str, int]] = {}
"""Settings whose text may be longer than `MAX_SETTING_CHARS`: one row each."""

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
