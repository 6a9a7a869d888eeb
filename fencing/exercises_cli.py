"""`fencing exercises`: check a teacher's exercise set as the web app does, print the template
or the format's reference.

`fencing exercises check FILE …` reads each file (bounded, regular files only) and makes the
Exercises page's own check (`classroom.sets.check_set_bytes`: every field, then whether
each exercise can be solved), printing every problem, one per line, and exiting with status
2 when any file has one. `fencing exercises template` prints a set with one exercise of each
kind; `fencing exercises doc` prints docs/exercises.md. Registered through the CLI's
`COMMAND_MODULES`; nothing here imports Streamlit.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_PROBLEMS = 2


def register(commands: Any) -> None:
    """Add `exercises` with its `check`, `template` and `doc` actions to the CLI."""
    parser = commands.add_parser(
        "exercises",
        help="check an exercise set (TOML) as the web app does; print the template or the format",
        description="Exercise sets for the Exercises and Class pages: check a file (every "
        "problem at once, exit 2 when there is one), print a template, or print the format.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = actions.add_parser(
        "check", help="check set files: the schema, then whether every exercise can be solved"
    )
    check.add_argument("files", nargs="+", type=Path, metavar="FILE", help="a set file (TOML)")
    check.set_defaults(run=run_check)
    template = actions.add_parser("template", help="print a set with one exercise of each kind")
    template.set_defaults(run=run_template)
    doc = actions.add_parser("doc", help="print the format's reference (docs/exercises.md)")
    doc.set_defaults(run=run_doc)


def check_lines(path: Path) -> tuple[bool, list[str]]:
    """Whether a set file is good, and the lines to print about it (one per problem)."""
    from classroom.data import ExerciseSetError
    from classroom.sets import check_set_bytes, read_bounded

    try:
        found = check_set_bytes(read_bounded(path), path.name)
    except ExerciseSetError as error:
        found = error
    if isinstance(found, ExerciseSetError):
        return False, [f"{path}: {_one_line(problem.text())}" for problem in found.problems]
    kinds = ", ".join(f"{sum(e.kind == k for e in found.exercises)} {k}" for k in _kinds())
    return True, [f"{path}: good: {len(found.exercises)} exercises ({kinds}), each can be solved"]


def run_check(args: argparse.Namespace) -> int:
    """Check each file: problems on stderr, one per line; exit 2 if any file has one."""
    good = True
    for path in args.files:
        ok, lines = check_lines(path)
        good = good and ok
        for line in lines:
            print(line, file=sys.stdout if ok else sys.stderr)
    return 0 if good else EXIT_PROBLEMS


def run_template(args: argparse.Namespace) -> int:
    """Print the template set."""
    from classroom.schema import template_text

    sys.stdout.write(template_text())
    return 0


def run_doc(args: argparse.Namespace) -> int:
    """Print the format's reference, as committed in docs/exercises.md."""
    from classroom.schema import reference_markdown

    sys.stdout.write(reference_markdown())
    return 0


def _kinds() -> tuple[str, ...]:
    """The exercise kinds, in the format's order."""
    from classroom.schema import KINDS

    return KINDS


def _one_line(text: str) -> str:
    """A problem on one terminal line: newlines joined, control characters made visible."""
    from model.formats.terminal import terminal_safe

    return terminal_safe(" ".join(text.splitlines()))
