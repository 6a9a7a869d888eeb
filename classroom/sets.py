"""Classroom exercise sets: plain-data TOML files, read and validated.

Three kinds of exercise:

- *predict*: which properties does this design keep? Checked against the explorer.
- *break*: reach a violation of a property within N steps; the run is replayed to check it.
- *fix*: change some options so a broken design keeps a property without losing the ones
  it kept; the chosen design is explored.

A set is a TOML file and nothing but data: it is measured and parsed (`model.formats.reading`,
`tomllib`), each part converted with its typed schema (`classroom.schema`'s rows,
through `model.formats.schemas`: the set's top, then each exercise on its own, field by field, so
every problem is found at once), and never evaluated. A problem names the line and
the field, so a teacher can fix their file; a set is refused when the model finds an
exercise nobody can solve (`classroom.solvability`). Grading an answer is
`classroom.grading`, a student's progress `classroom.progress`, and the values
they share `classroom.data`. Nothing here imports Streamlit.
"""

from __future__ import annotations

import json
import re
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import msgspec

from classroom.data import Exercise, ExerciseSet, ExerciseSetError, Problem, design_name
from classroom.schema import (
    ANY_EXERCISE_SCHEMA,
    BY_FIELD,
    DEFAULT_FIX_OPTIONS,
    EXERCISE_KEYS,
    EXERCISE_SCHEMAS,
    KINDS,
    MAX_SET_FILES,
    ONE_OF,
    SET_BY_FIELD,
    SET_SCHEMA,
    missing_message,
    required_of,
)
from classroom.schema import (
    DEFAULT_SET as DEFAULT_SET,
)
from classroom.schema import (
    FOLDER_ENV as FOLDER_ENV,
)
from classroom.schema import (
    MAX_SET_BYTES as MAX_SET_BYTES,
)
from classroom.schema import (
    SETS_FOLDER as SETS_FOLDER,
)
from classroom.schema import (
    SOLVABILITY_SECONDS as SOLVABILITY_SECONDS,
)
from classroom.schema import (
    TEMPLATE_SET as TEMPLATE_SET,
)
from classroom.solvability import (
    OutOfBudget,
    unsolvable,
)
from model.claims import citations, render_citations
from model.design import REFERENCE_BOUNDS, Bounds, Design, DesignError
from model.formats.reading import SET_LIMITS, Limits, ReadError, read_file, scan_toml, text_of
from model.formats.schemas import NOWHERE, SchemaError, convert_each_field, value_at
from model.presets import PRESETS

MAX_PROBLEMS: Final = 20
PRESET_CLAIMS: Final = {name: preset.claims for name, preset in PRESETS.items()}
"""What a hint may cite as `{preset:P2}`: each preset's claims, checked by the tests."""

# ----- reading a file ------------------------------------------------------------------------


def decode_upload(data: bytes, limit: int = MAX_SET_BYTES) -> str:
    """Uploaded bytes as text: refused when larger than the limit or not UTF-8."""
    try:
        return text_of(data, replace(SET_LIMITS, max_bytes=limit))
    except ReadError as error:
        raise _file_problem(error) from None


def parse_set(text: str, source: str = "", budget: float = SOLVABILITY_SECONDS) -> ExerciseSet:
    """Parse and validate a set's TOML text; never executes anything in it.

    Checking that every exercise can be solved takes at most `budget` seconds in all; an
    exercise the model did not get to in that time is a problem of the set.
    """
    if len(text.encode("utf-8")) > MAX_SET_BYTES:
        raise ExerciseSetError(
            [Problem(None, "file", f"is larger than the limit of {MAX_SET_BYTES:,} bytes")]
        )
    try:
        scan_toml(text, SET_LIMITS)
    except ReadError as error:
        raise _file_problem(error) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line = _toml_error_line(str(error))
        raise ExerciseSetError([Problem(line, "TOML syntax", str(error))]) from None
    except RecursionError:
        raise ExerciseSetError(
            [Problem(None, "TOML syntax", "lists or tables are nested too deeply")]
        ) from None
    except ValueError:
        raise ExerciseSetError(
            [Problem(None, "TOML syntax", "a number is too long to be read")]
        ) from None
    return _Validator(text, source, budget).set_of(data)


def _file_problem(error: ReadError | str) -> ExerciseSetError:
    """A set file that cannot even be read, or that holds more than a set may (with the line)."""
    if isinstance(error, str):
        return ExerciseSetError([Problem(None, "file", error)])
    return ExerciseSetError([Problem(error.line, "file", error.problem)])


def read_bounded(path: Path, limits: Limits = SET_LIMITS) -> bytes:
    """A regular file's bytes, read only when it is one and no larger than the limit (see
    `model.formats.reading.read_file`: pipes and devices are never opened)."""
    try:
        return read_file(path, limits)
    except ReadError as error:
        raise _file_problem(error) from None


def load_set(path: Path) -> ExerciseSet:
    """Read (bounded) and validate a set file from disk."""
    return parse_set(decode_upload(read_bounded(path)), source=path.name)


def check_set_bytes(data: bytes, source: str) -> ExerciseSet | ExerciseSetError:
    """A set file's bytes decoded, validated and checked by the model, or why it cannot be used.

    Whatever else goes wrong in the check (memory, the model itself) is reported as a problem
    of the file too, so a background checker is never stopped by one set.
    """
    try:
        return parse_set(decode_upload(data), source=source)
    except ExerciseSetError as error:
        return error
    except Exception as error:  # whatever else fails, the file gets one clear sentence
        return _file_problem(f"could not be checked by the model ({type(error).__name__})")


def folder_files(folder: Path) -> tuple[list[Path], str | None]:
    """The `*.toml` names in a teachers' folder (sorted, at most `MAX_SET_FILES`), and a
    warning when the folder is missing or holds more files than are read."""
    if not folder.is_dir():
        return [], f"the exercise folder {folder} does not exist or is not a folder"
    try:
        paths = sorted(folder.glob("*.toml"))
    except OSError as error:
        return [], f"the exercise folder {folder} cannot be read: {error.strerror}"
    if len(paths) > MAX_SET_FILES:
        return paths[:MAX_SET_FILES], (
            f"the exercise folder has {len(paths)} set files; only the first "
            f"{MAX_SET_FILES} are offered"
        )
    return paths, None


def folder_sets(folder: Path) -> list[tuple[Path, ExerciseSet | ExerciseSetError]]:
    """Every `*.toml` set in a folder (sorted by name), each loaded or with its error."""
    found: list[tuple[Path, ExerciseSet | ExerciseSetError]] = []
    for path in folder_files(folder)[0]:
        try:
            found.append((path, load_set(path)))
        except ExerciseSetError as error:
            found.append((path, error))
    return found


def _toml_error_line(message: str) -> int | None:
    """The line number in a tomllib error message such as `… (at line 3, column 7)`."""
    match = re.search(r"at line (\d+)", message)
    return int(match.group(1)) if match else None


HEADER: Final = re.compile(r"^\s*\[")
EXERCISE_HEADER: Final = re.compile(r"^\s*\[\[\s*exercise\s*\]\]")


def key_line(text: str, index: int | None, key: str) -> int | None:
    """The 1-based line where `key` is set: at top level (index None) or in exercise `index`.

    tomllib gives no positions for values, so the line is found in the text: the block of
    the index-th `[[exercise]]` table (with its sub-tables) is searched for `key =`, either
    at the start of a line or inside an inline table; the block's header line otherwise.
    """
    lines = text.splitlines()
    pattern = re.compile(rf'(^|[\s{{,.]){re.escape(key)}\s*=|(^|[\s{{,.])"{re.escape(key)}"\s*=')
    if index is None:
        start, end = 0, len(lines)
        for number, line in enumerate(lines):
            if HEADER.match(line):
                end = number
                break
        header = None
    else:
        headers = [n for n, line in enumerate(lines) if EXERCISE_HEADER.match(line)]
        if index >= len(headers):
            return None
        start = headers[index] + 1
        end = headers[index + 1] if index + 1 < len(headers) else len(lines)
        for number in range(start, end):
            table = re.match(r"^\s*\[\s*([A-Za-z_.]+)\s*\]", lines[number])
            if table and not table.group(1).startswith("exercise."):
                end = number
                break
        header = headers[index] + 1
    for number in range(start, end):
        if pattern.search(lines[number].split("#", 1)[0]):
            return number + 1
    return header


@dataclass
class _Validator:
    """Checks a decoded set against the schema, collecting problems with their lines."""

    text: str
    source: str
    budget: float = SOLVABILITY_SECONDS
    problems: list[Problem] = field(default_factory=list)

    def problem(self, index: int | None, key: str, message: str, ex_id: str = "") -> None:
        """Record a problem at a key of the top level or of exercise `index` (0-based)."""
        if len(self.problems) >= MAX_PROBLEMS:
            return
        line = key_line(self.text, index, key.split(".")[-1] if key else "exercise")
        if index is None:
            where = f"field `{key}`" if key else "the file"
        else:
            name = f" ({_shown(ex_id)})" if ex_id else ""
            where = f"exercise {index + 1}{name}" + (f", field `{key}`" if key else "")
        self.problems.append(Problem(line, where, message))

    def set_of(self, data: dict[str, Any]) -> ExerciseSet:
        """The validated set, or `ExerciseSetError` listing every problem found."""
        header: Any
        header, refusals = convert_each_field(data, SET_SCHEMA, {})
        for error in refusals:
            self.refused(None, error, data, SET_SCHEMA, "a set file", "")
        if "title" not in data:
            self.problem(None, "", "`title` is missing: a set file needs it (text)")
        if "exercise" not in data:
            self.problem(None, "exercise", "add at least one [[exercise]] table")
        title = (header.title if header else None) or ""
        description = (header.description if header else None) or ""
        raw: list[Any] | None = header.exercise if header else None
        exercises: list[Exercise] = []
        if raw is not None:
            seen: set[str] = set()
            for index, entry in enumerate(raw):
                raw_id = entry.get("id") if isinstance(entry, dict) else None
                if isinstance(raw_id, str) and raw_id in seen:
                    self.problem(
                        index, "id", f"{_shown(raw_id)} is used twice: ids must differ", raw_id
                    )
                if isinstance(raw_id, str):
                    seen.add(raw_id)
                exercise = self.exercise(index, entry)
                if exercise is not None:
                    exercises.append(exercise)
            self.solvability(raw, exercises)
        if self.problems:
            raise ExerciseSetError(self.problems)
        return ExerciseSet(title, description, tuple(exercises), self.source)

    def refused(
        self,
        index: int | None,
        error: SchemaError,
        data: Mapping[str, Any],
        schema: type[msgspec.Struct],
        part: str,
        ex_id: str,
    ) -> None:
        """Record a schema refusal in the words of the field's row: an unknown field with
        the fields that part takes, a value that does not fit with what the field takes."""
        key = str(error.path[0]) if error.path else ""
        allowed = schema.__struct_fields__
        if key not in allowed:
            known = index is None or key in EXERCISE_KEYS
            what = f"a field of {part}" if known else "a known field"
            message = f"is not {what}: use {', '.join(allowed)}"
            self.problem(index, key, message, ex_id)
            return
        spec = (BY_FIELD if index is not None else SET_BY_FIELD)[key]
        value = value_at(data, error.path)
        shown = _shown(data.get(key) if value is NOWHERE else value)
        self.problem(index, key, spec.refusal.replace("{value}", shown), ex_id)

    def solvability(self, raw: list[Any], exercises: list[Exercise]) -> None:
        """Ask the model whether each well-formed exercise can be solved, by one deadline.

        The deadline is the whole set's: every exploration is given only the time left, and
        an exercise the model did not finish checking by then is reported as not checked.
        """
        deadline = time.perf_counter() + self.budget
        indices = {
            entry.get("id"): index for index, entry in enumerate(raw) if isinstance(entry, dict)
        }
        for exercise in exercises:
            index = indices.get(exercise.id)
            try:
                why = unsolvable(exercise, deadline)
            except OutOfBudget:
                self.problem(
                    index,
                    "",
                    f"could not be checked within the budget ({self.budget:g} s for the whole "
                    "set) that the model has to check that every exercise can be solved: use "
                    "fewer exercises or smaller bounds",
                    exercise.id,
                )
                continue
            if why is not None:
                self.problem(index, "property", f"cannot be solved: {why}", exercise.id)

    def exercise(self, index: int, entry: Any) -> Exercise | None:
        """One exercise table, or None (with problems recorded) when it is not valid.

        Every problem is found in one pass: the exercise is converted with its kind's schema
        field by field (an unknown kind: with every field of any kind), so unknown fields,
        values that do not fit and missing fields are all reported together.
        """
        before = len(self.problems)
        if not isinstance(entry, dict):
            self.problem(index, "", "must be a table ([[exercise]])")
            return None
        raw_id = entry.get("id")
        ex_id = raw_id if isinstance(raw_id, str) else ""
        kind = entry.get("kind")
        known = kind if isinstance(kind, str) and kind in KINDS else None
        schema = EXERCISE_SCHEMAS[known] if known else ANY_EXERCISE_SCHEMA
        record: Any
        record, refusals = convert_each_field(entry, schema, {})
        part = f"a {known} exercise" if known else "an exercise"
        for error in refusals:
            self.refused(index, error, entry, schema, part, ex_id)
        self.fields_present(index, entry, known, ex_id)
        if record is None:
            return None
        hints = self.hints(index, record.hints or [], ex_id)
        design, design_name = self.design(index, record, entry, ex_id)
        bounds = self.bounds(index, record, entry, ex_id)
        if known is None:
            return None
        if design is not None and bounds is not None:
            try:
                design.check_fits(bounds)
            except DesignError as error:
                self.problem(index, "bounds", str(error), ex_id)
        if len(self.problems) > before or design is None or bounds is None:
            return None
        return Exercise(
            ex_id,
            known,
            record.title,
            record.prompt,
            design,
            design_name,
            bounds,
            hints,
            getattr(record, "property", None) or "",
            getattr(record, "max_steps", None) or 0,
            tuple(dict.fromkeys(getattr(record, "options", None) or DEFAULT_FIX_OPTIONS))
            if known == "fix"
            else (),
            _sorted(getattr(record, "keep", None)),
        )

    def fields_present(
        self, index: int, entry: Mapping[str, Any], kind: str | None, ex_id: str
    ) -> None:
        """Missing fields, all reported (those every kind needs while the kind is not known),
        and a missing design."""
        for name in required_of(kind) if kind else required_of(KINDS[0]):
            if name not in entry:
                self.problem(index, "", missing_message(name, kind), ex_id)
        if not any(name in entry for name in ONE_OF):
            self.problem(
                index,
                "",
                "`preset` or `design` is missing: every exercise needs one of them (a preset "
                "name, or a table of options)",
                ex_id,
            )

    def hints(self, index: int, value: list[str], ex_id: str) -> tuple[str, ...]:
        """The hints (their types checked by the schema), revealed one per wrong answer:
        each `{preset:P2}` citation must name a preset."""
        rendered = []
        for hint in value:
            unknown = sorted({name for name, _ in citations(hint) if name not in PRESETS})
            if unknown:
                self.problem(
                    index,
                    "hints",
                    f"a hint cites {_shown(unknown[0])}, which is not a preset: write "
                    "{preset:P2} with a preset name to show that preset's verdict",
                    ex_id,
                )
                continue
            rendered.append(render_citations(hint, PRESET_CLAIMS))
        return tuple(rendered)

    def design(
        self, index: int, record: Any, entry: Mapping[str, Any], ex_id: str
    ) -> tuple[Design | None, str]:
        """The design: `preset = "name"` or a `design = { option = value }` table, not both
        (a value the schema refused is already reported)."""
        if "preset" in entry and "design" in entry:
            self.problem(index, "preset", "give only one of `preset` or `design`, not both", ex_id)
            return None, ""
        if record.preset is not None:
            return PRESETS[record.preset].design, record.preset
        table = record.design
        if table is None:
            return None, ""
        try:
            design = Design.from_dict(table)
        except DesignError as error:
            bad = _named_field(str(error), table)
            message = _as_written(str(error), table.get(bad)) if bad else str(error)
            self.problem(index, f"design.{bad}" if bad else "design", message, ex_id)
            return None, ""
        return design, design_name(design)

    def bounds(
        self, index: int, record: Any, entry: Mapping[str, Any], ex_id: str
    ) -> Bounds | None:
        """The bounds table (the reference bounds when absent); limits are named when crossed."""
        if "bounds" not in entry:
            return REFERENCE_BOUNDS
        table = record.bounds
        if table is None:
            return None
        try:
            return Bounds.from_dict({**REFERENCE_BOUNDS.to_dict(), **table})
        except DesignError as error:
            bad = _named_field(str(error), table)
            message = _as_written(str(error), table.get(bad)) if bad else str(error)
            self.problem(index, f"bounds.{bad}" if bad else "bounds", message, ex_id)
            return None


def _sorted(names: list[str] | None) -> tuple[str, ...] | None:
    """A list of property names as a sorted tuple without repeats (None: not given)."""
    return None if names is None else tuple(sorted(set(names)))


def _shown(value: object) -> str:
    """A value as a teacher wrote it in TOML (`"guess"`, `600`, `true`, a list), shortened."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 42 else text[:40] + '…"'
    if isinstance(value, int | float):
        text = str(value)
        return text if len(text) <= 20 else "a very long number"
    if isinstance(value, list):
        return f"a list of {len(value):,} entries"
    return _kind(value)


def _as_written(message: str, value: object) -> str:
    """A model's message about a value, with the value as the set file writes it (`true`,
    `"two"`) rather than as the model's code shows it."""
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return message.replace(shown, _shown(value)) if shown in message else message


def _kind(value: object) -> str:
    """A TOML-ish name for a value's type, for messages."""
    return {
        bool: "true/false",
        int: "a number",
        float: "a number",
        list: "a list",
        dict: "a table",
    }.get(type(value), type(value).__name__)


def _named_field(message: str, table: Mapping[str, Any]) -> str:
    """The field of a table that a model error message names, if it names one."""
    for key in table:
        if re.search(rf"\b{re.escape(str(key))}\b", message):
            return str(key)
    return ""
