"""Classroom exercises: plain-data TOML sets, validated, and answers checked by the model.

Three kinds of exercise:

- *predict*: which properties does this design keep? Checked against the explorer.
- *break*: reach a violation of a property within N steps; the run is replayed to check it.
- *fix*: change some options so a broken design keeps a property without losing the ones
  it kept; the chosen design is explored.

A set is a TOML file and nothing but data: it is parsed with `tomllib`, checked against a
fixed schema, and never evaluated. A problem names the line and the field, so a teacher can
fix their file. Nothing here imports Streamlit.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from model.claims import citations, render_citations
from model.design import BOUND_LIMITS, REFERENCE_BOUNDS, Bounds, Design, DesignError
from model.explorer import explore
from model.options import BY_OPTION, Kind, Option
from model.presets import PRESETS
from model.properties import PROPERTY_NAMES
from model.reading import SET_LIMITS, Limits, ReadError, read_file, scan_toml, text_of
from model.rules import Action
from model.search import SearchOptions
from model.trace import Trace, TraceError, replay
from webapp.exercise_schema import (
    DEFAULT_FIX_OPTIONS,
    EXERCISE_KEYS,
    FIX_OPTIONS,
    ID_PATTERN,
    KINDS,
    MAX_BREAK_STEPS,
    MAX_EXERCISES,
    MAX_HINTS,
    MAX_SET_FILES,
    MAX_TEXT_CHARS,
    ONE_OF,
    TOP_KEYS,
    keys_of,
    missing_message,
    required_of,
)
from webapp.exercise_schema import (
    DEFAULT_SET as DEFAULT_SET,
)
from webapp.exercise_schema import (
    FOLDER_ENV as FOLDER_ENV,
)
from webapp.exercise_schema import (
    MAX_SET_BYTES as MAX_SET_BYTES,
)
from webapp.exercise_schema import (
    SETS_FOLDER as SETS_FOLDER,
)
from webapp.exercise_schema import (
    SOLVABILITY_SECONDS as SOLVABILITY_SECONDS,
)
from webapp.exercise_schema import (
    TEMPLATE_SET as TEMPLATE_SET,
)
from webapp.show.links import matching_preset

MAX_PROBLEM_CHARS: Final = 400
MAX_PROBLEMS: Final = 20
CHECK_MAX_STATES: Final = 300_000
CHECK_MAX_SECONDS: Final = 10.0
"""Budget of one exploration that grades an answer."""

MAX_FIX_CANDIDATES: Final = 200
"""Most designs tried when checking that a *fix* exercise has a fix."""

PRESET_CLAIMS: Final = {name: preset.claims for name, preset in PRESETS.items()}
"""What a hint may cite as `{preset:P2}`: each preset's claims, checked by the tests."""

# ----- the data ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Exercise:
    """One exercise, validated: what to show, the design and bounds, what counts as right."""

    id: str
    kind: str
    title: str
    prompt: str
    design: Design
    design_name: str
    bounds: Bounds
    hints: tuple[str, ...] = ()
    prop: str = ""
    max_steps: int = 0
    options: tuple[str, ...] = ()
    keep: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ExerciseSet:
    """A titled list of exercises from one TOML file."""

    title: str
    description: str
    exercises: tuple[Exercise, ...]
    source: str = ""

    def by_id(self, exercise_id: str) -> Exercise | None:
        """The exercise with this id, if any."""
        return next((e for e in self.exercises if e.id == exercise_id), None)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a set file: where (line, field) and what to change."""

    line: int | None
    where: str
    message: str

    def text(self) -> str:
        """`line 12: exercise 3 ('x'), field 'max_steps': must be …` (at most 400 characters)."""
        place = f"line {self.line}: " if self.line else ""
        whole = f"{place}{self.where}: {self.message}"
        return whole if len(whole) <= MAX_PROBLEM_CHARS else whole[: MAX_PROBLEM_CHARS - 1] + "…"


class ExerciseSetError(ValueError):
    """A set file that cannot be used; `problems` lists each error with its line."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(p.text() for p in self.problems))

    def __reduce__(self) -> tuple[type[ExerciseSetError], tuple[tuple[Problem, ...]]]:
        """Pickle with the problems themselves (the pages cache refused sets too)."""
        return (ExerciseSetError, (self.problems,))


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
    `model.reading.read_file`: pipes and devices are never opened)."""
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
        for key in data:
            if key not in TOP_KEYS:
                self.problem(None, key, f"is not a field of a set file: use {', '.join(TOP_KEYS)}")
        if "title" not in data:
            self.problem(None, "", "`title` is missing: a set file needs it (text)")
        title = self.text_field(None, data, "title", required=True)
        description = self.text_field(None, data, "description", required=False)
        raw = data.get("exercise")
        exercises: list[Exercise] = []
        if not isinstance(raw, list) or not raw:
            self.problem(None, "exercise", "add at least one [[exercise]] table")
        elif len(raw) > MAX_EXERCISES:
            self.problem(None, "exercise", f"a set may have at most {MAX_EXERCISES} exercises")
        else:
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

    def text_field(
        self, index: int | None, data: Mapping[str, Any], key: str, required: bool, ex_id: str = ""
    ) -> str:
        """A string field, checked for presence, type and length."""
        value = data.get(key)
        if value is None:
            return ""  # a missing required field is reported with the others
        if not isinstance(value, str):
            self.problem(index, key, f"must be text in quotes, not {_kind(value)}", ex_id)
            return ""
        if len(value) > MAX_TEXT_CHARS:
            self.problem(index, key, f"is longer than {MAX_TEXT_CHARS:,} characters", ex_id)
        return value

    def exercise(self, index: int, entry: Any) -> Exercise | None:
        """One exercise table, or None (with problems recorded) when it is not valid.

        Every problem is found in one pass: unknown and missing fields are reported together,
        and the fields every kind shares are checked even when `kind` itself is wrong.
        """
        before = len(self.problems)
        if not isinstance(entry, dict):
            self.problem(index, "", "must be a table ([[exercise]])")
            return None
        raw_id = entry.get("id")
        ex_id = raw_id if isinstance(raw_id, str) else ""
        kind = entry.get("kind")
        known = kind if isinstance(kind, str) and kind in KINDS else None
        if "kind" in entry and known is None:
            self.problem(index, "kind", f"is {_shown(kind)}: use one of {', '.join(KINDS)}", ex_id)
        self.fields_present(index, entry, known, ex_id)
        if "id" in entry and not ID_PATTERN.match(ex_id):
            self.problem(
                index,
                "id",
                f"must be lower-case letters, digits and dashes (at most 40), not {_shown(raw_id)}",
                ex_id,
            )
        title = self.text_field(index, entry, "title", True, ex_id)
        prompt = self.text_field(index, entry, "prompt", True, ex_id)
        hints = self.hints(index, entry, ex_id)
        design, design_name = self.design(index, entry, ex_id)
        bounds = self.bounds(index, entry, ex_id)
        if known is None:
            return None
        prop = self.prop(index, entry, ex_id) if known != "predict" else ""
        max_steps = self.max_steps(index, entry, ex_id) if known == "break" else 0
        options = self.options(index, entry, ex_id) if known == "fix" else ()
        keep = self.keep(index, entry, ex_id) if known == "fix" else None
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
            title,
            prompt,
            design,
            design_name,
            bounds,
            hints,
            prop,
            max_steps,
            options,
            keep,
        )

    def fields_present(
        self, index: int, entry: Mapping[str, Any], kind: str | None, ex_id: str
    ) -> None:
        """Unknown fields and missing ones, all reported (with every field of any kind
        allowed while the kind is not known)."""
        allowed = keys_of(kind) if kind else EXERCISE_KEYS
        for key in entry:
            if key in allowed:
                continue
            if key in EXERCISE_KEYS:
                message = f"is not a field of a {kind} exercise: use {', '.join(allowed)}"
            else:
                message = f"is not a known field: use {', '.join(allowed)}"
            self.problem(index, key, message, ex_id)
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

    def hints(self, index: int, entry: Mapping[str, Any], ex_id: str) -> tuple[str, ...]:
        """The hints: a list of strings, revealed one per wrong answer."""
        value = entry.get("hints", [])
        if not isinstance(value, list) or not all(isinstance(h, str) for h in value):
            self.problem(index, "hints", 'must be a list of texts: hints = ["…", "…"]', ex_id)
            return ()
        if len(value) > MAX_HINTS:
            self.problem(index, "hints", f"at most {MAX_HINTS} hints", ex_id)
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

    def design(self, index: int, entry: Mapping[str, Any], ex_id: str) -> tuple[Design | None, str]:
        """The design: `preset = "name"` or a `design = { option = value }` table, not both."""
        preset, table = entry.get("preset"), entry.get("design")
        if preset is None and table is None:
            return None, ""  # reported with the other missing fields
        if preset is not None and table is not None:
            self.problem(index, "preset", "give only one of `preset` or `design`, not both", ex_id)
            return None, ""
        if preset is not None:
            if not isinstance(preset, str) or preset not in PRESETS:
                self.problem(
                    index,
                    "preset",
                    f"{_shown(preset)} is not a preset: use one of {', '.join(PRESETS)}",
                    ex_id,
                )
                return None, ""
            return PRESETS[preset].design, preset
        if not isinstance(table, dict):
            self.problem(index, "design", "must be a table of options", ex_id)
            return None, ""
        try:
            design = Design.from_dict(table)
        except DesignError as error:
            bad = _named_field(str(error), table)
            message = _as_written(str(error), table.get(bad)) if bad else str(error)
            self.problem(index, f"design.{bad}" if bad else "design", message, ex_id)
            return None, ""
        return design, design.label()

    def bounds(self, index: int, entry: Mapping[str, Any], ex_id: str) -> Bounds | None:
        """The bounds table (the reference bounds when absent); limits are named when crossed."""
        table = entry.get("bounds")
        if table is None:
            return REFERENCE_BOUNDS
        if not isinstance(table, dict):
            self.problem(
                index, "bounds", "must be a table such as { workers = 2, lease = 2 }", ex_id
            )
            return None
        try:
            return Bounds.from_dict({**REFERENCE_BOUNDS.to_dict(), **table})
        except DesignError as error:
            bad = _named_field(str(error), table)
            message = _as_written(str(error), table.get(bad)) if bad else str(error)
            self.problem(index, f"bounds.{bad}" if bad else "bounds", message, ex_id)
            return None

    def prop(self, index: int, entry: Mapping[str, Any], ex_id: str) -> str:
        """The property of a break or fix exercise, one of `PROPERTY_NAMES`."""
        value = entry.get("property")
        if value is None:
            return ""  # reported with the other missing fields
        if value not in PROPERTY_NAMES:
            self.problem(
                index,
                "property",
                f"is {_shown(value)}: use one of {', '.join(PROPERTY_NAMES)}",
                ex_id,
            )
            return ""
        return str(value)

    def max_steps(self, index: int, entry: Mapping[str, Any], ex_id: str) -> int:
        """The step allowance of a break exercise, 1..MAX_BREAK_STEPS."""
        value = entry.get("max_steps")
        if value is None:
            return 0  # reported with the other missing fields
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or not 1 <= value <= MAX_BREAK_STEPS
        ):
            self.problem(
                index,
                "max_steps",
                f"must be a whole number from 1 to {MAX_BREAK_STEPS}, not {_shown(value)}",
                ex_id,
            )
            return 0
        return value

    def options(self, index: int, entry: Mapping[str, Any], ex_id: str) -> tuple[str, ...]:
        """The options a fix exercise lets the student change (default: token and receiver)."""
        value = entry.get("options", list(DEFAULT_FIX_OPTIONS))
        if not isinstance(value, list) or not value or not all(v in FIX_OPTIONS for v in value):
            self.problem(
                index,
                "options",
                f"must be a non-empty list drawn from {', '.join(FIX_OPTIONS)}",
                ex_id,
            )
            return ()
        return tuple(dict.fromkeys(value))

    def keep(self, index: int, entry: Mapping[str, Any], ex_id: str) -> tuple[str, ...] | None:
        """Properties the fix must keep (default: every property the broken design keeps)."""
        value = entry.get("keep")
        if value is None:
            return None
        if not isinstance(value, list) or not all(v in PROPERTY_NAMES for v in value):
            self.problem(
                index, "keep", f"must be a list drawn from {', '.join(PROPERTY_NAMES)}", ex_id
            )
            return None
        return tuple(sorted(set(value)))


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


def design_name(design: Design) -> str:
    """A design for a sentence: its preset's name when it is one, else its options in words."""
    preset = matching_preset(design)
    return f"the preset `{preset}`" if preset else design.in_words()


# ----- can it be solved? ---------------------------------------------------------------------


class OutOfBudget(Exception):
    """The deadline of a set's check came before the model finished checking an exercise."""


def verdicts_by(design: Design, bounds: Bounds, deadline: float | None) -> Verdicts:
    """The grading verdicts, given only the time left before the deadline (if any).

    Verdicts known already are given at once. Raises `OutOfBudget` when no time is left, or
    when the exploration stopped because the deadline came (not because the design is too
    large for the grading budget).
    """
    known = known_verdicts(design, bounds)
    if known is not None or deadline is None:
        return known or verdicts(design, bounds)
    left = deadline - time.perf_counter()
    if left <= 0:
        raise OutOfBudget
    found = verdicts(design, bounds, max_seconds=min(CHECK_MAX_SECONDS, left))
    if not found.complete and time.perf_counter() >= deadline:
        raise OutOfBudget
    return found


def unsolvable(exercise: Exercise, deadline: float | None = None) -> str | None:
    """Why no answer can be right, asked of the model at the exercise's bounds; None if one can.

    A *break* needs a violation within its step allowance; a *fix* needs its property broken
    today and some allowed change that makes it hold while keeping what must be kept. With a
    deadline (a `time.perf_counter()` value), `OutOfBudget` says the check did not finish.
    """
    found = verdicts_by(exercise.design, exercise.bounds, deadline)
    if not found.complete:
        return (
            f"the model cannot finish checking this design at these bounds ({found.stopped_by}): "
            "lower the bounds"
        )
    if exercise.kind == "break":
        shortest = found.shortest[exercise.prop]
        if shortest is None:
            return (
                f"{exercise.prop} holds in this design at these bounds, so there is no run "
                "that breaks it"
            )
        if shortest > exercise.max_steps:
            return (
                f"the shortest run that breaks {exercise.prop} has {shortest} steps, more "
                f"than max_steps = {exercise.max_steps}"
            )
    if exercise.kind == "fix":
        if exercise.prop in found.holds:
            return f"{exercise.prop} already holds in this design at these bounds: nothing to fix"
        return _no_fix(exercise, found, deadline)
    return None


def _no_fix(exercise: Exercise, original: Verdicts, deadline: float | None) -> str | None:
    """None when some allowed change is a fix; otherwise why none is."""
    required = required_properties(exercise, original)
    candidates = list(itertools.islice(candidate_designs(exercise), MAX_FIX_CANDIDATES + 1))
    if len(candidates) > MAX_FIX_CANDIDATES:
        return None  # too many combinations to try them all: assume the teacher knows one
    for design in candidates:
        found = verdicts_by(design, exercise.bounds, deadline)
        if found.complete and all(name in found.holds for name in required):
            return None
    return (
        f"no change of {', '.join(exercise.options)} makes {exercise.prop} hold while "
        f"keeping {', '.join(name for name in required if name != exercise.prop) or 'nothing'}"
    )


def candidate_designs(exercise: Exercise) -> Iterator[Design]:
    """Every valid design the student could reach by changing the allowed options."""
    choices = [_option_values(BY_OPTION[name]) for name in exercise.options]
    for values in itertools.product(*choices):
        try:
            design = exercise.design.with_changes(dict(zip(exercise.options, values, strict=True)))
            design.check_fits(exercise.bounds)
        except DesignError:
            continue
        if design != exercise.design:
            yield design


def _option_values(option: Option) -> tuple[Any, ...]:
    """Every value of a choice, count or flag option."""
    if option.kind is Kind.FLAG:
        return (False, True)
    if option.kind is Kind.COUNT:
        return tuple(range(option.low, option.high + 1))
    return option.values


# ----- grading ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer: right or wrong, and a message that says why."""

    correct: bool
    message: str


@dataclass(frozen=True)
class Verdicts:
    """What the explorer says about a design: which properties hold, shortest violations."""

    holds: tuple[str, ...]
    shortest: dict[str, int | None]
    complete: bool
    stopped_by: str | None


MAX_KNOWN: Final = 512
"""Most complete verdicts kept for the process (the oldest is forgotten first)."""
_KNOWN: dict[tuple[Design, Bounds], Verdicts] = {}
_KNOWN_LOCK = threading.Lock()


def known_verdicts(design: Design, bounds: Bounds) -> Verdicts | None:
    """The verdicts of a complete exploration made earlier in this process, if any.

    A complete exploration's verdicts are facts of the design and bounds, whatever budget
    it had, so the set check and the grading share them; a stopped one is never kept.
    """
    with _KNOWN_LOCK:
        return _KNOWN.get((design, bounds))


def verdicts(design: Design, bounds: Bounds, max_seconds: float = CHECK_MAX_SECONDS) -> Verdicts:
    """Explore the design within the grading budget (complete verdicts are kept)."""
    known = known_verdicts(design, bounds)
    if known is not None:
        return known
    result = explore(
        design, bounds, SearchOptions(max_states=CHECK_MAX_STATES, max_seconds=max_seconds)
    )
    found = Verdicts(
        holds=tuple(name for name, v in result.verdicts.items() if v.holds),
        shortest={name: v.shortest for name, v in result.verdicts.items()},
        complete=result.complete,
        stopped_by=result.stopped_by,
    )
    if found.complete:
        with _KNOWN_LOCK:
            _KNOWN[(design, bounds)] = found
            while len(_KNOWN) > MAX_KNOWN:
                del _KNOWN[next(iter(_KNOWN))]
    return found


def _incomplete(found: Verdicts) -> Feedback:
    """The answer cannot be graded: the exploration ran out of budget."""
    return Feedback(
        False,
        "This answer cannot be graded: the model check stopped at its budget of "
        f"{CHECK_MAX_STATES:,} states and {CHECK_MAX_SECONDS:g} s ({found.stopped_by}) before "
        "it saw every run. Ask your teacher for smaller bounds.",
    )


def check_predict(exercise: Exercise, chosen: Iterable[str], found: Verdicts) -> Feedback:
    """Right when the chosen properties are exactly those the design keeps."""
    if not found.complete:
        return _incomplete(found)
    picked = set(chosen)
    truth = set(found.holds)
    if picked == truth:
        kept = ", ".join(sorted(truth)) or "none of them"
        return Feedback(True, f"Right: the design keeps {kept}; every other property fails.")
    wrong = len(picked ^ truth)
    return Feedback(
        False,
        f"Not quite: {wrong} of the {len(PROPERTY_NAMES)} properties "
        f"{'is' if wrong == 1 else 'are'} misjudged. Picture the runs the scheduler could "
        "choose, and try again.",
    )


def check_break(exercise: Exercise, actions: Sequence[Action]) -> Feedback:
    """Right when the run replays and violates the property within the allowed steps."""
    if not actions:
        return Feedback(False, "Your run has no steps yet: click actions to build one.")
    if len(actions) > exercise.max_steps:
        return Feedback(
            False,
            f"Your run has {len(actions)} steps; this exercise allows at most "
            f"{exercise.max_steps}. Look for a shorter way.",
        )
    try:
        trace = replay(exercise.design, exercise.bounds, actions)
    except TraceError as error:
        return Feedback(False, f"Your run cannot be replayed: {error}")
    step = trace.first_violation(exercise.prop)
    if step is None:
        broken = ", ".join(trace.violated())
        extra = f" (it does violate {broken})" if broken else ""
        return Feedback(False, f"Your run never violates {exercise.prop}{extra}. Try again.")
    reason = step.reason(exercise.prop) or ""
    why = reason.removeprefix(f"{exercise.prop} violated: ")
    return Feedback(
        True, f"Right: step {step.number} ({step.action.label()}) violates {exercise.prop}: {why}"
    )


def check_break_trace(exercise: Exercise, trace: Trace) -> Feedback:
    """A *break* answer given as a trace file: its design and bounds must be the exercise's."""
    if trace.design != exercise.design or trace.bounds != exercise.bounds:
        return Feedback(
            False,
            "This trace file is for another design or other bounds "
            f"({design_name(trace.design)}, {trace.bounds.in_words()}); this exercise uses "
            f"{design_name(exercise.design)}, {exercise.bounds.in_words()}.",
        )
    return check_break(exercise, trace.actions)


def fixed_design(exercise: Exercise, changes: Mapping[str, Any]) -> Design:
    """The exercise's design with the student's changes to the allowed options only."""
    refused = sorted(set(changes) - set(exercise.options))
    if refused:
        raise DesignError(
            f"this exercise lets you change only {', '.join(exercise.options)}, not {refused[0]}"
        )
    return exercise.design.with_changes(changes)


def offered_values(exercise: Exercise, name: str) -> tuple[str, ...]:
    """The values of a choice option that a fix answer can use: each the model accepts with
    the exercise's design and some values of the other offered choices and flags.

    A wrong answer earns a hint, so a value that no answer can use (a volatile counter where
    the restarts it needs are not offered) is not put before the student.
    """
    option = BY_OPTION[name]
    if option.kind is not Kind.CHOICE:
        return ()
    others = [
        [(other, value) for value in _tried_values(BY_OPTION[other])]
        for other in exercise.options
        if other != name and BY_OPTION[other].kind in (Kind.CHOICE, Kind.FLAG)
    ]
    usable = []
    for value in option.values:
        for rest in itertools.product(*others):
            try:
                exercise.design.with_changes({name: value, **dict(rest)})
            except DesignError:
                continue
            usable.append(value)
            break
    return tuple(usable)


def _tried_values(option: Option) -> tuple[Any, ...]:
    """Every value of a choice or a flag."""
    return option.values if option.kind is Kind.CHOICE else (False, True)


def required_properties(exercise: Exercise, original: Verdicts) -> tuple[str, ...]:
    """What a fix must keep: the target property and the `keep` list (default: what held)."""
    keep = exercise.keep if exercise.keep is not None else original.holds
    return tuple(sorted({exercise.prop, *keep}))


def check_fix(exercise: Exercise, design: Design, original: Verdicts, found: Verdicts) -> Feedback:
    """Right when the new design keeps the property and every property it must keep."""
    if not found.complete:
        return _incomplete(found)
    if design == exercise.design:
        return Feedback(False, "That is the original design: change at least one option.")
    required = required_properties(exercise, original)
    lost = [name for name in required if name not in found.holds]
    if not lost:
        return Feedback(
            True,
            f"Right: with {design_name(design)}, the design keeps {', '.join(required)} within "
            "these bounds.",
        )
    shortest = ", ".join(f"{name} in {found.shortest[name]} steps" for name in lost)
    if exercise.prop in lost:
        return Feedback(False, f"With {design_name(design)}, the design still violates {shortest}.")
    return Feedback(
        False,
        f"With {design_name(design)}, the design keeps {exercise.prop} but loses what held "
        f"before: {shortest}.",
    )


# ----- progress -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """One answer a student gave, and its verdict."""

    exercise_id: str
    answer: str
    correct: bool
    message: str


@dataclass(frozen=True)
class Progress:
    """A session's answers, oldest first (a new value per answer; never mutated)."""

    attempts: tuple[Attempt, ...] = ()

    def record(self, attempt: Attempt) -> Progress:
        """The progress with one more answer."""
        return Progress((*self.attempts, attempt))

    def of(self, exercise_id: str) -> tuple[Attempt, ...]:
        """The answers given to one exercise."""
        return tuple(a for a in self.attempts if a.exercise_id == exercise_id)

    def solved(self, exercise_id: str) -> bool:
        """Whether some answer to the exercise was right."""
        return any(a.correct for a in self.of(exercise_id))

    def wrong(self, exercise_id: str) -> int:
        """How many wrong answers were given before the first right one."""
        count = 0
        for attempt in self.of(exercise_id):
            if attempt.correct:
                break
            count += 1
        return count

    def hints(self, exercise: Exercise) -> tuple[str, ...]:
        """The hints earned so far: one more after each wrong answer."""
        return exercise.hints[: self.wrong(exercise.id)]


def summary_rows(exercise_set: ExerciseSet, progress: Progress) -> list[dict[str, Any]]:
    """One row per exercise: id, title, kind, solved, attempts, hints used, last answer."""
    rows = []
    for exercise in exercise_set.exercises:
        attempts = progress.of(exercise.id)
        rows.append(
            {
                "id": exercise.id,
                "title": exercise.title,
                "kind": exercise.kind,
                "solved": progress.solved(exercise.id),
                "attempts": len(attempts),
                "hints_used": len(progress.hints(exercise)),
                "last_answer": attempts[-1].answer if attempts else "",
            }
        )
    return rows


def summary_markdown(exercise_set: ExerciseSet, progress: Progress, student: str = "") -> str:
    """A student's summary as markdown: a table of exercises and every answer given."""
    rows = summary_rows(exercise_set, progress)
    solved = sum(1 for r in rows if r["solved"])
    lines = [
        f"# {exercise_set.title}: summary" + (f" for {student}" if student else ""),
        "",
        f"Solved {solved} of {len(rows)} exercises.",
        "",
        "| exercise | kind | solved | attempts | hints used |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        mark = "yes" if row["solved"] else "no"
        lines.append(
            f"| {_cell(row['title'])} | {row['kind']} | {mark} | {row['attempts']} | "
            f"{row['hints_used']} |"
        )
    lines += ["", "## Answers", ""]
    for attempt in progress.attempts:
        verdict = "right" if attempt.correct else "wrong"
        lines.append(f"- `{attempt.exercise_id}` ({verdict}): {_cell(attempt.answer)}")
    return "\n".join(lines) + "\n"


def summary_json(exercise_set: ExerciseSet, progress: Progress, student: str = "") -> str:
    """The same summary as JSON, for a teacher's scripts."""
    return json.dumps(
        {
            "set": exercise_set.title,
            "student": student,
            "exercises": summary_rows(exercise_set, progress),
            "answers": [vars(a) for a in progress.attempts],
        },
        indent=2,
        ensure_ascii=False,
    )


def _cell(text: str) -> str:
    """Text made safe for one markdown table cell or list item (no pipes, no newlines)."""
    return text.replace("|", "/").replace("\n", " ")[:300]


def bound_help() -> str:
    """The allowed range of each bound, for teachers writing a set."""
    return ", ".join(f"{name} {low}..{high}" for name, (low, high) in BOUND_LIMITS.items())
