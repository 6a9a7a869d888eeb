"""Typed schemas for the files the product reads, and the one way a decoded file is checked.

Every file is first measured by `model.formats.reading` (size, nesting, values, number length) and
decoded there; only then is the decoded value converted into a typed value here, with
`msgspec` (`Struct` types that refuse unknown fields, `Annotated` ranges and lengths). A
value that does not fit is never shown as the library's message: `convert` turns it into
the product's sentence, naming the place (a step, an event, a field) and what the field
takes, in the words of the field's row (`Words`), followed by the value it holds, escaped.

A schema is a table of rows: adding a field is one row (a name, its type, its words).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import msgspec

from model.formats.reading import quoted, shown

T = TypeVar("T")

Path = tuple[str | int, ...]
"""Where a value is in a decoded file: keys and list positions from the top."""


@dataclass(frozen=True)
class Words:
    """What a field takes, in words: its kind (for a value of the wrong type) and its range
    (for a value of the right type outside it); the range is the kind when it has none."""

    kind: str
    range: str = ""

    def of_range(self) -> str:
        """The words for a value out of range."""
        return self.range or self.kind


class SchemaError(ValueError):
    """A decoded file that does not fit its schema: `path` is where, `problem` the sentence
    without the place (`field 'worker' must be a whole number, not 'W1'`)."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(problem)


_AT: Final = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_STEP: Final = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
ANY_KEY: Final = "[...]"
"""A step through an object's entries whose key the library does not say."""
NOWHERE: Final = object()
"""What `value_at` finds where a path cannot be followed."""
_MISSING: Final = re.compile(r"^Object missing required field `(?P<name>[^`]*)`$")
_UNKNOWN: Final = re.compile(r"^Object contains unknown field `(?P<name>[^`]*)`$")
_WRONG_TYPE: Final = re.compile(r"^Expected `[^`]*`, got `[^`]*`$")
_OUT_OF_RANGE: Final = re.compile(r"^Expected `[^`]*` (?:[<>]=?|of length|matching)")
_BAD_CHOICE: Final = re.compile(r"^Invalid (?:enum )?value ")
OWN: Final = "\x00"
"""Marks a sentence a schema's own check wrote (in `__post_init__`): passed on as it is."""


def _path_of(text: str) -> Path:
    """`.events[3].worker` as ("events", 3, "worker")."""
    return tuple(
        name if name else ANY_KEY if index == "..." else int(index)
        for name, index in _STEP.findall(text or "")
    )


def value_at(data: Any, path: Path) -> Any:
    """The decoded value at a path (`NOWHERE` where it cannot be followed)."""
    for step in path:
        if isinstance(step, int) and isinstance(data, list) and step < len(data):
            data = data[step]
        elif isinstance(step, str) and step != ANY_KEY and isinstance(data, dict):
            data = data.get(step)
        else:
            return NOWHERE
    return data


def described(value: Any) -> str:
    """A value for a refusal: a list or object by its size (never its whole text), anything
    else escaped and cut short, text in quotes (`model.formats.reading.quoted`)."""
    if value is NOWHERE:
        return "something else"
    if isinstance(value, list):
        return f"a list of {len(value):,} entries"
    if isinstance(value, dict):
        return f"an object of {len(value):,} fields"
    return quoted(value)


def own(sentence: str) -> ValueError:
    """An error a schema's own check raises: the sentence is the product's, kept as it is."""
    return ValueError(OWN + sentence)


def label(name: str | int) -> str:
    """How a field is named in a sentence: `field 'worker'`."""
    return f"field '{shown(name)}'" if isinstance(name, str) else f"entry {name + 1}"


def problem_of(
    error: msgspec.ValidationError, data: Any, words: Mapping[str, Words]
) -> SchemaError:
    """The product's sentence for a library refusal: place, then what the field takes."""
    found = _AT.match(str(error))
    message = found.group("message") if found else str(error)
    path = _path_of(found.group("path") if found else "")
    if message.startswith(OWN):
        return SchemaError(path, message[len(OWN) :])
    if missing := _MISSING.match(message):
        name = missing.group("name")
        return SchemaError((*path, name), f"it has no field '{shown(name)}'")
    if unknown := _UNKNOWN.match(message):
        name = unknown.group("name")
        return SchemaError((*path, name), f"it has an unknown field '{shown(name)}'")
    value = value_at(data, path)
    if not path:
        return SchemaError(path, f"it must be an object, not {described(value)}")
    name = path[-1]
    if isinstance(name, int) and len(path) > 1 and isinstance(path[-2], str):
        name, value = path[-2], value_at(data, path[:-1])  # an entry: its list's row speaks
    row = words.get(name) if isinstance(name, str) else None
    what = label(name)
    if row is None:
        return SchemaError(path, f"{what} is malformed ({described(value)})")
    if _WRONG_TYPE.match(message):
        return SchemaError(path, f"{what} must be {row.kind}, not {described(value)}")
    if _OUT_OF_RANGE.match(message) or _BAD_CHOICE.match(message):
        return SchemaError(path, f"{what} must be {row.of_range()}, not {described(value)}")
    return SchemaError(path, f"{what} must be {row.kind}, not {described(value)}")


def convert(data: Any, schema: type[T], words: Mapping[str, Words]) -> T:
    """A decoded, size-checked value as the schema's typed value, or a SchemaError whose
    sentence names the field and what it takes (never the library's own message)."""
    try:
        return msgspec.convert(data, schema, strict=True)
    except msgspec.ValidationError as error:
        raise problem_of(error, data, words) from None


def refusing(
    make: Callable[[SchemaError], Exception],
) -> Callable[[Any, type[T], Mapping[str, Words]], T]:
    """`convert` whose refusals become the reader's own error (`TraceError`, …)."""

    def converting(data: Any, schema: type[T], words: Mapping[str, Words]) -> T:
        try:
            return convert(data, schema, words)
        except SchemaError as error:
            raise make(error) from None

    return converting


def convert_each_field(
    data: Mapping[str, Any], schema: type[T], words: Mapping[str, Words]
) -> tuple[T | None, list[SchemaError]]:
    """A table whose fields are all optional in the schema, with every refusal at once:
    each refused field (unknown, or holding a value that does not fit) is set aside and the
    rest converted again, so a table with three bad fields gives three sentences. The typed
    value holds the fields that fit (a refused one is left at its default); it is None only
    when the table itself is not an object."""
    rest = dict(data)
    refusals: list[SchemaError] = []
    for _ in range(len(rest) + 1):
        try:
            return convert(rest, schema, words), refusals
        except SchemaError as error:
            if not error.path or error.path[0] not in rest:
                error = _unknown_field(rest, schema) or error  # a name the library cannot quote
            refusals.append(error)
            if not error.path or error.path[0] not in rest:
                break
            del rest[error.path[0]]
    return None, refusals


def _unknown_field(data: Mapping[str, Any], schema: type[Any]) -> SchemaError | None:
    """The first field of a table that the schema does not have, named by the product (for
    a refusal whose own words cannot say which field it is, such as a name holding a
    backtick)."""
    known = getattr(schema, "__struct_fields__", ())
    for name in data:
        if name not in known:
            return SchemaError((name,), f"it has an unknown field '{shown(name)}'")
    return None
