"""The exercise-set format in one table: every field, where it goes, what it takes, its default.

Each row also holds the field's schema type and the sentence for a value that does not fit
it: the typed schemas of a set's parts (`SET_SCHEMA`, one per exercise kind) are made from
the rows and converted with `model.formats.schemas`, the validator (`classroom.sets`) reads which
fields are required from the same rows, and `reference_markdown()` writes docs/exercises.md
from them, so the format a teacher reads is the format the app checks. Nothing here imports
Streamlit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Final

import msgspec

from model.design import BOUND_LIMITS, REFERENCE_BOUNDS
from model.formats import reading
from model.options import OPTIONS, Kind
from model.presets import PRESETS
from model.properties import BY_NAME, PROPERTY_NAMES

SETS_FOLDER: Final = Path(__file__).resolve().parent / "exercise_sets"
DEFAULT_SET: Final = SETS_FOLDER / "default.toml"
TEMPLATE_SET: Final = SETS_FOLDER / "template.toml"
"""A small set with one exercise of each kind, for a teacher to copy."""
FOLDER_ENV: Final = "FENCING_LAB_EXERCISES"
"""Environment variable naming a folder of a teacher's own `*.toml` sets."""

MAX_SET_BYTES: Final = reading.MAX_SET_BYTES
MAX_SET_FILES: Final = 20
MAX_EXERCISES: Final = 50
MAX_TEXT_CHARS: Final = 4_000
MAX_HINTS: Final = 10
MAX_BREAK_STEPS: Final = 60
MAX_ID_CHARS: Final = 40
SOLVABILITY_SECONDS: Final = 30.0
"""Budget for checking, when a set loads, that every exercise in it can be solved: a deadline
for the whole set, passed down to every exploration the check makes."""

KINDS: Final = ("predict", "break", "fix")
ID_PATTERN: Final = re.compile(rf"^[a-z0-9][a-z0-9-]{{0,{MAX_ID_CHARS - 1}}}$")
FIX_OPTIONS: Final = tuple(option.name for option in OPTIONS if option.kind is not Kind.OFFSETS)
"""Design options a *fix* exercise may let the student change: every option of the table
but the per-worker clock offsets, which take a list a form cannot offer one by one."""
DEFAULT_FIX_OPTIONS: Final = ("token", "receiver")

ALL: Final = KINDS
"""The kinds a field belongs to when every exercise has it."""


def one_of(names: tuple[str, ...] | list[str]) -> Any:
    """The schema type of a text that must be one of these names."""
    return Annotated[str, msgspec.Meta(pattern=rf"^(?:{'|'.join(map(re.escape, names))})\Z")]


def list_of(item: Any, min_length: int = 0) -> Any:
    """The schema type of a list of such items."""
    return Annotated[list[item], msgspec.Meta(min_length=min_length)]  # type: ignore[valid-type]


TEXT: Final[Any] = Annotated[str, msgspec.Meta(max_length=MAX_TEXT_CHARS)]
"""The schema type of a text field."""
TEXT_REFUSAL: Final = (
    f"must be text in quotes of at most {MAX_TEXT_CHARS:,} characters, not {{value}}"
)


@dataclass(frozen=True)
class FieldSpec:
    """One field of a set file: its place, the kinds that have it, those that need it, and
    what a teacher writes there."""

    name: str
    place: str
    """`set` (the top of the file) or `exercise` (inside each `[[exercise]]` table)."""
    kinds: tuple[str, ...]
    required: tuple[str, ...]
    value: str
    meaning: str
    default: str = ""
    schema: Any = TEXT
    """The value's schema type (`msgspec`): what `classroom.sets` converts the field to."""
    refusal: str = TEXT_REFUSAL
    """The sentence for a value that does not fit `schema`; `{value}` is the value given."""

    def needed_by(self) -> str:
        """Who must give the field, in words: `every exercise`, `break exercises`, `no one`."""
        if self.place == "set":
            return "required" if self.required else "optional"
        if self.name in ONE_OF:
            return "every exercise: this or " + _list([n for n in ONE_OF if n != self.name])
        if set(self.required) == set(KINDS):
            return "every exercise"
        if not self.required:
            return "optional"
        return " and ".join(self.required) + " exercises"


def _list(names: tuple[str, ...] | list[str]) -> str:
    """Names as code in a sentence: `a`, `b`, `c`."""
    return ", ".join(f"`{name}`" for name in names)


SET_FIELDS: Final = (
    FieldSpec("title", "set", (), ("set",), "text", "The set's title, shown above its exercises."),
    FieldSpec(
        "description",
        "set",
        (),
        (),
        "text",
        "A paragraph shown under the title (Markdown emphasis and code; links stay text).",
    ),
    FieldSpec(
        "exercise",
        "set",
        (),
        ("set",),
        f"`[[exercise]]` tables, 1 to {MAX_EXERCISES}",
        "The exercises, in the order students see them.",
        schema=Annotated[list[Any], msgspec.Meta(min_length=1, max_length=MAX_EXERCISES)],
        refusal=f"add at least one [[exercise]] table, and at most {MAX_EXERCISES}, not {{value}}",
    ),
)

EXERCISE_FIELDS: Final = (
    FieldSpec(
        "id",
        "exercise",
        ALL,
        ALL,
        f"lower-case letters, digits and dashes, at most {MAX_ID_CHARS}",
        "Names the exercise in links (`?exercise=id`) and in the class's answers; unique "
        "in the set.",
        schema=Annotated[str, msgspec.Meta(pattern=ID_PATTERN.pattern)],
        refusal=f"must be lower-case letters, digits and dashes (at most {MAX_ID_CHARS}), "
        "not {value}",
    ),
    FieldSpec(
        "kind",
        "exercise",
        ALL,
        ALL,
        _list(KINDS),
        "What the student does (see below).",
        schema=one_of(KINDS),
        refusal=f"is {{value}}: use one of {', '.join(KINDS)}",
    ),
    FieldSpec("title", "exercise", ALL, ALL, "text", "The exercise's title in the menu."),
    FieldSpec(
        "prompt",
        "exercise",
        ALL,
        ALL,
        "text",
        "The question (Markdown emphasis and code; links stay text).",
    ),
    FieldSpec(
        "preset",
        "exercise",
        ALL,
        (),
        "a preset name (list below)",
        "The design the exercise is about. Give `preset` or `design`, exactly one.",
        schema=one_of(list(PRESETS)),
        refusal=f"{{value}} is not a preset: use one of {', '.join(PRESETS)}",
    ),
    FieldSpec(
        "design",
        "exercise",
        ALL,
        (),
        "a table `{ option = value, … }` (options below)",
        "The design as options changed from the core design. Give `preset` or `design`, "
        "exactly one.",
        schema=dict[str, Any],
        refusal="must be a table of options, not {value}",
    ),
    FieldSpec(
        "bounds",
        "exercise",
        ALL,
        (),
        "a table `{ workers = 2, … }` (bounds below)",
        "How far the model looks; bounds left out keep their reference value.",
        REFERENCE_BOUNDS.short(),
        schema=dict[str, Any],
        refusal="must be a table such as { workers = 2, lease = 2 }, not {value}",
    ),
    FieldSpec(
        "hints",
        "exercise",
        ALL,
        (),
        f"a list of texts, at most {MAX_HINTS}",
        "One more hint is shown after each wrong answer. `{lease-only:P2}` in a hint shows "
        "that preset's verdict on that property, from the model.",
        "no hints",
        schema=Annotated[list[str], msgspec.Meta(max_length=MAX_HINTS)],
        refusal=f'must be a list of at most {MAX_HINTS} texts: hints = ["…", "…"], not {{value}}',
    ),
    FieldSpec(
        "property",
        "exercise",
        ("break", "fix"),
        ("break", "fix"),
        _list(PROPERTY_NAMES),
        "The property to violate (break) or to make hold (fix).",
        schema=one_of(PROPERTY_NAMES),
        refusal=f"is {{value}}: use one of {', '.join(PROPERTY_NAMES)}",
    ),
    FieldSpec(
        "max_steps",
        "exercise",
        ("break",),
        ("break",),
        f"a whole number from 1 to {MAX_BREAK_STEPS}",
        "The longest run the student may hand in; the model checks that a run this short exists.",
        schema=Annotated[int, msgspec.Meta(ge=1, le=MAX_BREAK_STEPS)],
        refusal=f"must be a whole number from 1 to {MAX_BREAK_STEPS}, not {{value}}",
    ),
    FieldSpec(
        "options",
        "exercise",
        ("fix",),
        (),
        "a list of option names (options below"
        + "".join(f", not `{o.name}`" for o in OPTIONS if o.kind is Kind.OFFSETS)
        + ")",
        "The options the student may change.",
        _list(DEFAULT_FIX_OPTIONS),
        schema=list_of(one_of(FIX_OPTIONS), min_length=1),
        refusal=f"must be a non-empty list drawn from {', '.join(FIX_OPTIONS)}, not {{value}}",
    ),
    FieldSpec(
        "keep",
        "exercise",
        ("fix",),
        (),
        f"a list drawn from {_list(PROPERTY_NAMES)}",
        "Properties the fixed design must still keep.",
        "every property the given design keeps",
        schema=list_of(one_of(PROPERTY_NAMES)),
        refusal=f"must be a list drawn from {', '.join(PROPERTY_NAMES)}, not {{value}}",
    ),
)

ONE_OF: Final = ("preset", "design")
"""Every exercise gives exactly one of these."""

EXERCISE_KEYS: Final = tuple(spec.name for spec in EXERCISE_FIELDS)
BY_FIELD: Final = {spec.name: spec for spec in EXERCISE_FIELDS}
SET_BY_FIELD: Final = {spec.name: spec for spec in SET_FIELDS}


def _struct(name: str, specs: tuple[FieldSpec, ...]) -> type[msgspec.Struct]:
    """A part of a set as a typed schema made from its rows: every field optional here
    (which ones a part needs is the table's `required`, all reported at once), any field
    not in the rows refused."""
    return msgspec.defstruct(
        name,
        [(spec.name, spec.schema, None) for spec in specs],
        forbid_unknown_fields=True,
        kw_only=True,
    )


SET_SCHEMA: Final = _struct("SetFile", SET_FIELDS)
"""The top of a set file (its `exercise` tables are converted one by one)."""
EXERCISE_SCHEMAS: Final = {
    kind: _struct(f"{kind.title()}Exercise", tuple(s for s in EXERCISE_FIELDS if kind in s.kinds))
    for kind in KINDS
}
"""An exercise of each kind: only the fields of its kind."""
ANY_EXERCISE_SCHEMA: Final = _struct("Exercise", EXERCISE_FIELDS)
"""An exercise whose kind is not known: every field of any kind, so the rest is checked."""


def keys_of(kind: str) -> tuple[str, ...]:
    """The fields an exercise of this kind may have, in the table's order."""
    return tuple(spec.name for spec in EXERCISE_FIELDS if kind in spec.kinds)


def required_of(kind: str) -> tuple[str, ...]:
    """The fields an exercise of this kind must have (besides one of `preset`/`design`)."""
    return tuple(spec.name for spec in EXERCISE_FIELDS if kind in spec.required)


def missing_message(name: str, kind: str | None) -> str:
    """A missing field in plain words: `` `max_steps` is missing: break exercises need it``."""
    spec = BY_FIELD.get(name)
    if spec is not None and set(spec.required) == set(KINDS):
        who = "every exercise needs it"
    elif kind:
        who = f"{kind} exercises need it"
    else:
        who = "it is required"
    return f"`{name}` is missing: {who} ({spec.value if spec else 'see docs/exercises.md'})"


def template_text() -> str:
    """The template set shipped with the app: one exercise of each kind."""
    return TEMPLATE_SET.read_text(encoding="utf-8")


KIND_WORDS: Final = {
    "predict": "The student ticks the properties the design keeps; the model explores the "
    "design and the answer is right when the ticked ones are exactly those that hold.",
    "break": "The student is the scheduler and clicks a run (or hands in a trace file from "
    "the playground); it is right when replaying it violates `property` within `max_steps` "
    "steps.",
    "fix": "The student changes the allowed `options`; it is right when the new design "
    "keeps `property` and everything in `keep`.",
}


def _row(cells: list[str]) -> str:
    """One Markdown table row."""
    return "| " + " | ".join(cell.replace("|", "/") for cell in cells) + " |"


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table."""
    return [_row(head), _row(["---"] * len(head)), *(_row(row) for row in rows)]


def reference_markdown() -> str:
    """docs/exercises.md: the set format, generated from the field table and the model's
    option, bound, property and preset tables, with the template set as the example."""
    lines = [
        "# Writing an exercise set",
        "",
        "<!-- Generated by classroom.schema.reference_markdown(); "
        "`fencing exercises doc` prints it. A test keeps this file equal to it. -->",
        "",
        "An exercise set is a TOML file of plain data: the app reads it, checks every field, "
        "and asks the model whether every exercise can be solved before a student sees it. "
        "Nothing in the file is ever run.",
        "",
        "Three ways to use a set:",
        "",
        "- upload it on the **Exercises** page (for one browser tab);",
        f"- put it in a folder named by the `{FOLDER_ENV}` environment variable before "
        "starting the app: its sets are offered to everyone, and the first one (by file "
        "name) opens by default;",
        "- choose it when creating a class on the **Class** page.",
        "",
        "A link keeps the set and the exercise: `/exercises?set=default&exercise=ID` opens "
        "an exercise of the default set, `set=FILE.toml` one of the folder's sets. A "
        "student's answers are kept on the server under the `student` code the page adds "
        "to its link, or, in a class, in the class's database.",
        "",
        "Check a file before class with `fencing exercises check FILE`: it makes exactly the "
        "page's checks (every field, then whether each exercise can be solved), prints every "
        "problem at once, one per line with its line number, and exits with status 2 when "
        "there is one (0 when the set is good). `fencing exercises template` prints the "
        "example below, and the Exercises page offers it and the default set as downloads.",
        "",
        "## The file",
        "",
        *_table(
            ["field", "needed", "value", "meaning"],
            [[f"`{s.name}`", s.needed_by(), s.value, s.meaning] for s in SET_FIELDS],
        ),
        "",
        "## Each `[[exercise]]`",
        "",
        *_table(
            ["field", "kinds", "needed by", "value", "default", "meaning"],
            [
                [
                    f"`{s.name}`",
                    ", ".join(s.kinds),
                    s.needed_by(),
                    s.value,
                    s.default or "none",
                    s.meaning,
                ]
                for s in EXERCISE_FIELDS
            ],
        ),
        "",
        f"Every exercise also gives exactly one of {_list(ONE_OF)}. A field that is not in "
        "this table, or not of the exercise's kind, is refused.",
        "",
        "## The kinds",
        "",
        *(f"- `{kind}`: {words}" for kind, words in KIND_WORDS.items()),
        "",
        "## Properties",
        "",
        *_table(
            ["property", "title", "statement"],
            [[f"`{n}`", BY_NAME[n].title, BY_NAME[n].statement] for n in PROPERTY_NAMES],
        ),
        "",
        "## Presets (`preset = …`)",
        "",
        *_table(
            ["preset", "what it is"],
            [[f"`{name}`", preset.mirrors] for name, preset in PRESETS.items()],
        ),
        "",
        "## Design options (`design = { … }`)",
        "",
        "Options left out keep the core design's value.",
        "",
        *_table(
            ["option", "values", "core design", "meaning"],
            [[f"`{o.name}`", _values(o.name), f"`{_core(o.name)}`", o.help] for o in OPTIONS],
        ),
        "",
        "## Bounds (`bounds = { … }`)",
        "",
        *_table(
            ["bound", "range", "reference value"],
            [
                [f"`{name}`", f"{low} to {high}", str(REFERENCE_BOUNDS.to_dict()[name])]
                for name, (low, high) in BOUND_LIMITS.items()
            ],
        ),
        "",
        "## Limits",
        "",
        f"- a file: at most {MAX_SET_BYTES:,} bytes of UTF-8 text;",
        f"- a set: at most {MAX_EXERCISES} exercises; a teachers' folder: at most "
        f"{MAX_SET_FILES} sets;",
        f"- a text field: at most {MAX_TEXT_CHARS:,} characters; at most {MAX_HINTS} hints;",
        f"- the model has {SOLVABILITY_SECONDS:g} s for the whole set to check that every "
        "exercise can be solved: a set that needs more is refused (use fewer exercises or "
        "smaller bounds).",
        "",
        "## Example: one exercise of each kind",
        "",
        "```toml",
        template_text().rstrip("\n"),
        "```",
        "",
    ]
    return "\n".join(lines)


def _values(name: str) -> str:
    """An option's possible values, for the options table."""
    option = next(o for o in OPTIONS if o.name == name)
    if option.kind is Kind.FLAG:
        return "`true`, `false`"
    if option.kind is Kind.COUNT:
        return f"{option.low} to {option.high}"
    if option.kind is Kind.OFFSETS:
        return f"a list of up to 8 whole numbers, {option.low} to {option.high}"
    return _list(option.values)


def _core(name: str) -> str:
    """An option's value in the core design, as written in a set file."""
    option = next(o for o in OPTIONS if o.name == name)
    value = option.to_json(option.default)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value).replace("(", "[").replace(")", "]")
