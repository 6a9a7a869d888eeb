"""Bounded reading: every file a user hands in is measured before any object is built from it.

Trace files (JSON and ITF), lab histories and exercise sets (TOML) all come through here.
A file is refused, with one sentence saying why, when it is not a regular file, is larger
than its kind's byte limit, is not UTF-8 text, or when a cheap scan of its text (strings
and comments skipped, nothing decoded) finds it nests lists or objects deeper, or holds
more values or longer numbers, than its kind allows. Only a file that passes is decoded
(JSON here, then checked by its kind's typed schema, `model.formats.schemas`; an exercise set
by `tomllib` where its problems get their lines), so the
memory a file can cost is bounded by its size, whatever it holds: a megabyte of `{}` is
refused by counting braces, not by building a third of a million objects.

Each kind's limits are named constants below. The readers raise `ReadError`, whose
`problem` is a predicate ("is 2,000,000 bytes; the limit is 1,000,000 bytes") so callers
can put their own subject before it (an exercise set names the file and the line).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any, Final

MAX_TRACE_BYTES: Final = 1_000_000
"""A trace file (the project's JSON or ITF): far more than the longest trace takes."""
MAX_TRACE_STEPS: Final = 500
"""Steps a trace may hold (an ITF trace: this many states after its initial one)."""
MAX_TRACE_VALUES: Final = 200_000
"""Objects, lists and entries in a trace file: a megabyte of the densest trace Fencing Lab
writes (ITF without indentation) holds about 130,000; a megabyte of `{}` holds 660,000."""
MAX_ITF_RECORDS_PER_STATE: Final = 2
"""Records in an ITF state that itf-py turns into classes: Fencing Lab writes one, the
action (a variant and its fields)."""

MAX_HISTORY_BYTES: Final = 8_000_000
"""A lab history: a 60-second randomized run writes about 1 MB."""
MAX_HISTORY_VALUES: Final = 1_000_000
"""Objects, lists and entries in a lab history: 8 MB of recorded events hold about 550,000
(a dozen per event); decoding a million empty objects costs about 90 MB."""
MAX_HISTORY_EVENTS: Final = 150_000
"""Events a lab history may hold (a 60-second run records about 6,000)."""

MAX_SET_BYTES: Final = 100_000
"""An exercise set (TOML)."""
MAX_SET_VALUES: Final = 20_000
"""Keys, tables, lists and entries in an exercise set (the default set holds about 140)."""

MAX_DEPTH: Final = 32
"""Lists and objects (or tables) inside each other: the files written here nest at most 7."""
MAX_NUMBER_DIGITS: Final = 40
"""Digits in one number: more than any count, token or time needs (2**63 has 19)."""


class ReadError(ValueError):
    """A file refused before it was decoded (or while): `problem` says why, as a predicate."""

    def __init__(self, what: str, problem: str, line: int | None = None) -> None:
        self.what = what
        self.problem = problem
        self.line = line
        super().__init__(f"the {what} {problem}")

    def __reduce__(self) -> tuple[type[ReadError], tuple[str, str, int | None]]:
        """Pickle with the parts themselves (pages may keep a refusal)."""
        return (ReadError, (self.what, self.problem, self.line))


@dataclass(frozen=True)
class Limits:
    """What one kind of file may hold, all checked before anything is built from it."""

    what: str
    """The kind of file, as messages name it: `trace file`, `lab history`, `exercise set`."""
    max_bytes: int
    max_values: int
    """Objects (tables), lists and entries: counted from the text, before decoding."""
    max_depth: int = MAX_DEPTH


TRACE_LIMITS: Final = Limits("trace file", MAX_TRACE_BYTES, MAX_TRACE_VALUES)
HISTORY_LIMITS: Final = Limits("history file", MAX_HISTORY_BYTES, MAX_HISTORY_VALUES)
SET_LIMITS: Final = Limits("exercise set", MAX_SET_BYTES, MAX_SET_VALUES)
REPLAY_LIMITS: Final = Limits("trace or lab history file", MAX_HISTORY_BYTES, MAX_HISTORY_VALUES)
"""`fencing replay` reads either kind: the larger size, then each kind's own limits."""


# ----- bytes from a file or an upload -----------------------------------------------------------


def read_file(path: Path, limits: Limits) -> bytes:
    """A regular file's bytes, at most `limits.max_bytes` of them ever read.

    Directories, pipes, devices and dangling links are refused without being opened (a
    pipe would block a reader forever); a file that grows while it is read is cut off at
    the limit and refused.
    """
    what, limit = limits.what, limits.max_bytes
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ReadError(what, "does not exist") from None
    except OSError as error:
        raise ReadError(what, f"cannot be read: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ReadError(what, "is not a regular file")
    if info.st_size > limit:
        raise ReadError(what, _too_large(info.st_size, limit))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        raise ReadError(what, f"cannot be read: {error.strerror}") from None
    if len(data) > limit:
        raise ReadError(what, f"is larger than the limit of {limit:,} bytes")
    return data


def _too_large(size: int, limit: int) -> str:
    """The predicate of a size refusal when the size is known."""
    return f"is {size:,} bytes; the limit is {limit:,} bytes"


def text_of(data: str | bytes, limits: Limits) -> str:
    """Bytes (or text) within the byte limit as text, or a ReadError: too large, not UTF-8."""
    size = len(data.encode("utf-8", "surrogatepass")) if isinstance(data, str) else len(data)
    if size > limits.max_bytes:
        raise ReadError(limits.what, _too_large(size, limits.max_bytes))
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ReadError(
            limits.what, f"is not UTF-8 text (bad byte at position {error.start:,})"
        ) from None


# ----- JSON ---------------------------------------------------------------------------------------

_JSON_STRING: Final = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
"""A JSON string, or an unclosed one up to the end (so the scan never backtracks)."""
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
_LONG_NUMBER: Final = re.compile(rf"[0-9]{{{MAX_NUMBER_DIGITS + 1}}}")
_DEPTH_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}


def scan_json(text: str, limits: Limits) -> None:
    """Refuse JSON text that nests too deeply, holds too many values or too long a number.

    Strings are skipped (a bracket inside a title counts for nothing); every `{`, `[` and
    `,` left counts as a value, an upper bound of the objects, lists and entries that
    decoding would build. Nothing is decoded: the scan works on the text alone.
    """
    bare = _JSON_STRING.sub("", text)
    if _LONG_NUMBER.search(bare):
        raise ReadError(
            limits.what, f"holds a number too long to read (more than {MAX_NUMBER_DIGITS} digits)"
        )
    values = bare.count("{") + bare.count("[") + bare.count(",")
    if values > limits.max_values:
        raise ReadError(
            limits.what,
            f"holds too many values: about {values:,} objects, lists and entries, more than "
            f"the limit of {limits.max_values:,}",
        )
    brackets = _NOT_BRACKET.sub("", bare)
    depth = max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)
    if depth > limits.max_depth:
        raise ReadError(
            limits.what,
            f"nests lists or objects too deeply ({depth:,} levels; the limit is "
            f"{limits.max_depth})",
        )


def _no_constant(name: str) -> Any:
    """`NaN`, `Infinity` and `-Infinity` are not JSON numbers: refuse them."""
    raise _Refused(f"holds {name}, which is not a number JSON allows")


def _finite(text: str) -> float:
    """A JSON number with a fraction or exponent, refused when it overflows to infinity."""
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"holds a number too large to read ({text[:20]})")
    return value


class _Refused(Exception):
    """Raised inside the JSON decoder's hooks; turned into a ReadError by `load_json`."""


def load_json(data: str | bytes, limits: Limits) -> Any:
    """Size, text, scan, then decode: JSON data within `limits`, or a ReadError saying why."""
    text = text_of(data, limits)
    scan_json(text, limits)
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except _Refused as refused:
        raise ReadError(limits.what, str(refused)) from None
    except json.JSONDecodeError as error:
        raise ReadError(
            limits.what, f"is not valid JSON: {error.msg} at line {error.lineno}", error.lineno
        ) from None
    except RecursionError:
        raise ReadError(limits.what, "nests lists or objects too deeply") from None
    except ValueError:
        raise ReadError(limits.what, "holds a number too long to read") from None


def read_json(path: Path, limits: Limits) -> Any:
    """A JSON file read and decoded within `limits`."""
    return load_json(read_file(path, limits), limits)


# ----- TOML ---------------------------------------------------------------------------------------

_TOML_SKIPPED: Final = re.compile(
    r'"""[\s\S]*?(?:"""|\Z)'  # multi-line basic string
    r"|'''[\s\S]*?(?:'''|\Z)"  # multi-line literal string
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*(?:"|\\?$)'  # basic string (or unclosed: to the line's end)
    r"|'[^'\n]*(?:'|$)"  # literal string
    r"|#[^\n]*",  # comment
    re.MULTILINE,
)
_TOML_KEY: Final = re.compile(r"^[ \t]*(\[{1,2})?([^=\[\]\n]*?)(?:\]{1,2}[ \t]*$|=)", re.MULTILINE)
"""A line's key: a table header's name, or what stands before `=`."""


def _blank(match: re.Match[str]) -> str:
    """A skipped string or comment, replaced by its line breaks only (lines keep their numbers)."""
    return "\n" * match.group().count("\n")


def scan_toml(text: str, limits: Limits) -> None:
    """Refuse TOML text that nests too deeply or holds too many values; nothing is decoded.

    Strings and comments are skipped. Every `=`, `[`, `{` and `,` left counts as a value;
    the depth is how deeply inline lists and tables nest, plus how many parts a dotted key
    or a table's name has. A refusal names the line where the limit is passed.
    """
    bare = _TOML_SKIPPED.sub(_blank, text)
    number = _LONG_NUMBER.search(bare)
    if number:
        raise ReadError(
            limits.what,
            f"holds a number too long to read (more than {MAX_NUMBER_DIGITS} digits)",
            _line_at(bare, number.start()),
        )
    values = sum(bare.count(mark) for mark in "=[{,")
    if values > limits.max_values:
        raise ReadError(
            limits.what,
            f"holds too many values: about {values:,} keys, tables, lists and entries, more "
            f"than the limit of {limits.max_values:,}",
        )
    for key in _TOML_KEY.finditer(bare):
        parts = key.group(2).count(".") + 1 + (1 if key.group(1) else 0)
        if parts > limits.max_depth:
            raise ReadError(
                limits.what,
                f"nests tables too deeply (a key of {parts} parts; the limit is "
                f"{limits.max_depth})",
                _line_at(bare, key.start(2)),
            )
    depth = 0
    for found in re.finditer(r"[\[\]{}]", bare):
        depth += 1 if found.group() in "[{" else -1
        if depth > limits.max_depth:
            raise ReadError(
                limits.what,
                f"nests lists or tables too deeply (the limit is {limits.max_depth} levels)",
                _line_at(bare, found.start()),
            )


def _line_at(text: str, position: int) -> int:
    """The 1-based line of a position in the text."""
    return text.count("\n", 0, position) + 1


# ----- values from a file, for messages -------------------------------------------------------


def shown(value: object, limit: int = 40) -> str:
    """A value from a file, for a message: control characters escaped, at most `limit` long.

    Text is shown without quotes (`holder`), anything else as its repr (`True`, `[1, 2]`);
    terminal escape codes and other control characters appear as `\\x1b`, never raw.
    """
    text = repr(value[: limit + 1])[1:-1] if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def quoted(value: object, limit: int = 40) -> str:
    """A value from a file as its repr (text in quotes), escaped, at most `limit` long."""
    text = repr(value[: limit + 1] if isinstance(value, str) else value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
