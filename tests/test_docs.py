"""docs/model.md against the code: every part of the specification that can be checked
mechanically is checked here, so the document cannot drift from the model unseen.

Covered: the bounds' ranges, the variables table, one subsection per action, the
properties table, the option values, the refused combinations (in both directions), the
presets table, every reference figure (recomputed by the explorer), and every link into
the document from the repository's own files.
"""

from __future__ import annotations

import io
import itertools
import re
import tokenize
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from model.check.explorer import explore
from model.check.search import SearchOptions
from model.design import (
    BOUND_LIMITS,
    Bounds,
    Design,
    DesignError,
)
from model.layout import PER_WORKER, SCALARS
from model.options import BY_OPTION
from model.presets import PRESET_NAMES, PRESETS
from model.properties import PROPERTIES, PROPERTY_NAMES
from model.rules import ACTION_NAMES

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "model.md"

Row = dict[str, str]


@cache
def doc_text() -> str:
    """The specification's Markdown source."""
    return DOC.read_text(encoding="utf-8")


@cache
def sections() -> dict[str, str]:
    """Body of each `## ` section by its title."""
    found: dict[str, str] = {}
    title = ""
    for line in doc_text().splitlines():
        if line.startswith("## "):
            title = line[3:].strip()
            found[title] = ""
        elif title:
            found[title] += line + "\n"
    return found


def section(title: str) -> str:
    """One section's body (a clear failure if the section is missing)."""
    assert title in sections(), f"docs/model.md has no section '## {title}'"
    return sections()[title]


def subsection_titles(body: str) -> list[str]:
    """Titles of the `### ` subsections in a section body."""
    return [line[4:].strip() for line in body.splitlines() if line.startswith("### ")]


def tables(body: str) -> list[list[Row]]:
    """Every Markdown table in the text, as rows keyed by the header cells."""
    found: list[list[Row]] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            header = cells(lines[i])
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(dict(zip(header, cells(lines[i]), strict=True)))
                i += 1
            found.append(rows)
        else:
            i += 1
    return found


def cells(line: str) -> list[str]:
    """The cells of one table line, stripped."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table_with(body: str, *columns: str) -> list[Row]:
    """The one table in the text whose header has exactly these columns."""
    matching = [t for t in tables(body) if t and tuple(t[0]) == columns]
    assert len(matching) == 1, f"expected one table with columns {columns}, found {len(matching)}"
    return matching[0]


def unquote(cell: str) -> str:
    """A cell without its surrounding backticks."""
    return cell.strip().strip("`")


def number(cell: str) -> int | None:
    """A figure such as `13,213`, or None for `none`."""
    return None if cell == "none" else int(cell.replace(",", ""))


# ----- constants, variables, actions, properties ------------------------------------------


def test_bounds_table_gives_the_ranges_the_code_enforces() -> None:
    rows = table_with(section("Constants"), "constant", "flag", "meaning", "allowed range")
    documented = {}
    for row in rows:
        low, high = unquote(row["allowed range"]).split("..")
        documented[unquote(row["flag"]).removeprefix("--")] = (int(low), int(high))
    assert documented == BOUND_LIMITS


def test_variables_table_lists_exactly_the_model_variables() -> None:
    rows = table_with(section("Variables"), "variable", "owner", "domain", "meaning")
    names = [unquote(row["variable"]) for row in rows]
    per_worker = {n.removesuffix("[w]") for n in names if n.endswith("[w]")}
    per_value = {n.removesuffix("[v]") for n in names if n.endswith("[v]")}
    scalars = {n for n in names if "[" not in n}
    assert scalars == set(SCALARS)
    assert per_worker == set(PER_WORKER)
    assert per_value == {"used"}
    assert len(names) == len(SCALARS) + len(PER_WORKER) + 1
    assert all(row["owner"] and row["domain"] and row["meaning"] for row in rows)


def test_every_action_has_its_own_subsection_and_no_other_subsection_exists() -> None:
    titles = subsection_titles(section("Actions"))
    named = [re.match(r"[A-Za-z]+", title) for title in titles]
    leading = [match.group(0) for match in named if match]
    assert leading == list(ACTION_NAMES)


def test_random_token_acquire_is_documented_with_its_value() -> None:
    titles = subsection_titles(section("Actions"))
    assert "Acquire(w) and Acquire(w, v)" in titles


def test_properties_table_names_each_property_with_its_code_title() -> None:
    rows = table_with(section("Properties"), "property", "title", "trigger", "condition")
    assert [row["property"] for row in rows] == list(PROPERTY_NAMES)
    assert [row["title"] for row in rows] == [p.title for p in PROPERTIES]
    triggers = {row["property"]: row["trigger"] for row in rows}
    assert triggers["P4"] == "rejects a request"
    assert {triggers[name] for name in ("P1", "P2", "P3")} == {"accepts a write"}
    assert triggers["P5"].startswith("accepts a write that follows a read")


def test_every_option_value_is_described() -> None:
    body = section("Design options")
    for value in tuple(v for o in BY_OPTION.values() for v in o.values):
        assert f"`{value}`" in body, f"option value {value} is not described"


def test_every_design_option_has_a_subsection() -> None:
    titles = " ".join(subsection_titles(section("Design options")))
    for name in Design.__dataclass_fields__:
        assert f"`{name}`" in titles, f"option {name} has no subsection"


# ----- refused combinations -----------------------------------------------------------------


@dataclass(frozen=True)
class Condition:
    """One conjunct of a refused combination: `field = v`, `field ≠ v` or `field ∈ {a, b}`."""

    field: str
    op: str
    values: tuple[object, ...]

    def holds(self, settings: Settings) -> bool:
        """Whether the option settings satisfy this conjunct."""
        inside = settings[self.field] in self.values
        return not inside if self.op == "≠" else inside


Settings = dict[str, object]
"""Option name to value, for a design that may or may not be accepted."""


def parse_value(text: str) -> object:
    """An option value as written in the table: a word, a number, true/false or ()."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if text == "()":
        return ()
    return int(text) if text.isdigit() else text


def parse_condition(text: str) -> Condition:
    """One conjunct of the combination column."""
    match = re.fullmatch(r"(\w+) (=|≠|∈) (.+)", text.strip())
    assert match, f"cannot read the condition {text!r}"
    field, op, rest = match.groups()
    assert field in Design.__dataclass_fields__, f"{field} is not a design option"
    if op == "∈":
        values = tuple(parse_value(v) for v in rest.strip("{}").split(","))
    else:
        values = (parse_value(rest),)
    return Condition(field, op, values)


@cache
def refused_rows() -> list[tuple[Condition, ...]]:
    """The refused-combinations table, parsed."""
    body = section("Design options").split("### Refused combinations", 1)[1]
    rows = table_with(body, "combination", "why it is refused")
    return [tuple(parse_condition(c) for c in unquote(r["combination"]).split(" ∧ ")) for r in rows]


def option_grid() -> list[tuple[Settings, bool]]:
    """Every combination of a few values per option, and whether `Design` accepts it."""
    choices: dict[str, tuple[object, ...]] = {
        "token": BY_OPTION["token"].values,
        "receiver": BY_OPTION["receiver"].values,
        "hwm": BY_OPTION["hwm"].values,
        "storage_restarts": (0, 1),
        "coordinator_restarts": (0, 1),
        "worker_check": (False, True),
        "workload": BY_OPTION["workload"].values,
        "fenced_reads": (False, True),
        "grant_fences": (False, True),
        "expiry": BY_OPTION["expiry"].values,
        "renew": (False, True),
        "crashes": (0, 1),
        "skew": ((), (1, 0)),
        "wrap": (0, 2),
    }
    assert set(choices) == set(Design.__dataclass_fields__)
    grid = []
    for values in itertools.product(*choices.values()):
        settings = dict(zip(choices, values, strict=True))
        try:
            Design(**settings)  # type: ignore[arg-type]
        except DesignError:
            grid.append((settings, False))
        else:
            grid.append((settings, True))
    return grid


def listed_as_refused(settings: Settings) -> bool:
    """Whether some row of the refused table covers these settings."""
    return any(all(c.holds(settings) for c in row) for row in refused_rows())


@pytest.mark.slow
def test_refused_combinations_are_exactly_the_ones_the_code_refuses() -> None:
    grid = option_grid()
    assert any(accepted for _, accepted in grid) and not all(accepted for _, accepted in grid)
    for settings, accepted in grid:
        assert listed_as_refused(settings) is not accepted, (
            f"{settings}: the code {'accepts' if accepted else 'refuses'} it, docs/model.md "
            f"says {'refused' if listed_as_refused(settings) else 'nothing'}"
        )
    for row in refused_rows():
        assert any(all(c.holds(s) for c in row) for s, _ in grid), f"row {row} matches nothing"


# ----- presets ------------------------------------------------------------------------------


def preset_rows() -> list[Row]:
    """The presets table."""
    return table_with(section("Presets"), "preset", "options", "mirrors")


def test_presets_table_lists_every_preset_once_in_code_order() -> None:
    assert [unquote(row["preset"]) for row in preset_rows()] == list(PRESET_NAMES)


@pytest.mark.parametrize("row", preset_rows(), ids=lambda row: unquote(row["preset"]))
def test_preset_row_shows_its_options_and_what_it_mirrors(row: Row) -> None:
    preset = PRESETS[unquote(row["preset"])]
    if preset.design.changes():
        assert unquote(row["options"]) == preset.design.label()
    else:
        assert row["options"] == "none (the core)"
    assert row["mirrors"] == preset.mirrors


def test_presets_table_states_no_verdicts() -> None:
    for row in preset_rows():
        assert not re.search(r"\bP[1-5]\b|holds|fails|violat", " ".join(row.values()))


# ----- reference figures --------------------------------------------------------------------

CORE_COLUMNS = (
    "W",
    "L",
    "T",
    "G",
    "K",
    "receiver",
    "states",
    "transitions",
    "depth",
    "shortest P1",
    "shortest P2",
    "orbits",
)


def core_rows() -> list[Row]:
    """The core reference table."""
    return table_with(section("Reference figures"), *CORE_COLUMNS)


@pytest.mark.parametrize(
    "row", core_rows(), ids=lambda row: f"W{row['W']}-{unquote(row['receiver'])}"
)
@pytest.mark.slow
def test_core_reference_row_is_what_the_explorer_computes(row: Row) -> None:
    bounds = Bounds(*(int(row[c]) for c in ("W", "L", "T", "G", "K")))
    design = Design(receiver=unquote(row["receiver"]))
    result = explore(design, bounds)
    assert result.complete
    assert (result.states, result.transitions, result.depth) == (
        number(row["states"]),
        number(row["transitions"]),
        number(row["depth"]),
    )
    assert result.verdicts["P1"].shortest == number(row["shortest P1"])
    assert result.verdicts["P2"].shortest == number(row["shortest P2"])
    orbits = explore(design, bounds, SearchOptions(symmetry=True))
    assert orbits.complete and orbits.states == number(row["orbits"])


def verdict_bounds() -> Bounds:
    """The bounds the preset reference table names (`at the reference bounds W=.. K=..`)."""
    body = section("Reference figures")
    match = re.search(r"reference bounds W=(\d+) L=(\d+) T=(\d+) G=(\d+) K=(\d+)", body)
    assert match, "the preset reference table does not name its bounds"
    return Bounds(*(int(v) for v in match.groups()))


def verdict_rows() -> list[Row]:
    """The preset reference table."""
    return table_with(section("Reference figures"), "preset", *PROPERTY_NAMES)


@pytest.mark.parametrize("row", verdict_rows(), ids=lambda row: unquote(row["preset"]))
@pytest.mark.slow
def test_preset_reference_row_is_what_the_explorer_computes(row: Row) -> None:
    result = explore(PRESETS[unquote(row["preset"])].design, verdict_bounds())
    assert result.complete
    for name in PROPERTY_NAMES:
        assert result.verdicts[name].shortest == number(row[name]), name


# ----- links into the document and to other Markdown files ----------------------------------


def github_anchor(title: str) -> str:
    """The anchor a Markdown renderer gives a heading (lower case, punctuation dropped)."""
    kept = re.sub(r"[^\w\- ]", "", title.lower())
    return kept.replace(" ", "-")


def repository_files() -> list[Path]:
    """The repository's own source and documentation files."""
    found = []
    for folder in (
        "model",
        "advise",
        "classroom",
        "proofs",
        "webapp",
        "fencing",
        "lab",
        "tests",
        "bench",
        "docs",
    ):
        found += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".md", ".toml")]
    return [*found, ROOT / "README.md"]


def test_every_link_to_a_section_of_the_spec_resolves() -> None:
    anchors = {
        github_anchor(line.lstrip("#").strip())
        for line in doc_text().splitlines()
        if line.startswith("#")
    }
    for path in repository_files():
        for anchor in re.findall(r"model\.md#([\w-]+)", path.read_text(encoding="utf-8")):
            assert anchor in anchors, f"{path.relative_to(ROOT)} links to a missing #{anchor}"


def prose(path: Path) -> str:
    """The prose of a file: all of a Markdown file; comments and docstrings of a Python file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return text
    parts = []
    previous = tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        docstring = token.type == tokenize.STRING and previous in STATEMENT_STARTS
        if token.type == tokenize.COMMENT or docstring:
            parts.append(token.string)
        if token.type not in (tokenize.COMMENT, tokenize.NL):
            previous = token.type
    return "\n".join(parts)


STATEMENT_STARTS = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)
"""Token types after which a string stands alone as a statement (a docstring)."""


@pytest.mark.slow
def test_every_markdown_file_cited_in_prose_is_in_the_repository() -> None:
    present = {p.name for p in repository_files() if p.suffix == ".md"}
    cited = {}
    for path in repository_files():
        for name in re.findall(r"\b([\w-]+\.md)\b", prose(path)):
            cited[name] = path.relative_to(ROOT)
    assert "model.md" in cited
    for name, path in cited.items():
        assert name in present, f"{path} cites {name}, which is not in this repository"


def test_the_class_limits_in_the_docs_are_the_ones_the_store_enforces() -> None:
    """docs/classes.md states each class limit as the store's constant says it."""
    from classroom import class_store
    from fencing import hall, proxy

    text = " ".join((ROOT / "docs" / "classes.md").read_text().split())
    for sentence in (
        f"{class_store.MAX_CLASSES} classes at once",
        f"{class_store.MAX_STUDENTS} students per class",
        f"{class_store.MAX_ANSWERS_PER_STUDENT} answers per student",
        f"{class_store.MAX_ANSWERS_PER_CLASS:,} answers per class",
        f"nicknames up to {class_store.MAX_NICKNAME_CHARS} characters",
        f"class names up to {class_store.MAX_TITLE_CHARS}",
        f"answers up to {class_store.MAX_ANSWER_CHARS}",
        f"has {proxy.CHECK_TIMEOUT_SECONDS} seconds to answer each check",
        f"answered its health check for {hall.HUNG_SECONDS:.0f} seconds",
    ):
        assert sentence in text, sentence
