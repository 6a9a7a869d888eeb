"""`fencing export promela|itf`: hand the model to spin, or a counterexample to ITF tools.

`export promela` writes the Promela model of any design within bounds (properties as
assertions) for spin and its multi-core, bitstate and swarm modes. `export itf` explores
the design and prints the shortest counterexample of one property as an ITF document.
Registered through the CLI's `COMMAND_MODULES`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Final

from model.design import REFERENCE_BOUNDS

EXIT_NO_COUNTEREXAMPLE: Final = 1


def register(commands: Any) -> None:
    """Add `export promela` and `export itf` to the CLI."""
    from fencing.arguments import add_bounds_arguments, add_budget_arguments, add_design_arguments
    from model.check.explorer import DEFAULT_MAX_SECONDS
    from model.properties import PROPERTY_NAMES

    export = commands.add_parser(
        "export", help="write the model for spin (Promela) or a counterexample as ITF"
    )
    formats = export.add_subparsers(dest="format", required=True)

    promela = formats.add_parser("promela", help="the design as a Promela model for spin")
    add_design_arguments(promela)
    add_bounds_arguments(promela, REFERENCE_BOUNDS)
    promela.add_argument("--output", "-o", metavar="FILE", help="write here, not to stdout")
    promela.set_defaults(run=run_export_promela)

    itf = formats.add_parser(
        "itf", help="the shortest counterexample of a property as an ITF trace"
    )
    add_design_arguments(itf)
    add_bounds_arguments(itf, REFERENCE_BOUNDS)
    itf.add_argument("--property", required=True, choices=PROPERTY_NAMES, metavar="P")
    add_budget_arguments(itf, None, DEFAULT_MAX_SECONDS)
    itf.add_argument("--output", "-o", metavar="FILE", help="write here, not to stdout")
    itf.set_defaults(run=run_export_itf)


def _write(text: str, output: str | None) -> None:
    """Print the text, or write it to a file (OutputError, exit status 74, if it cannot be)."""
    from fencing.output import OutputError
    from model.formats.terminal import printable

    if output is None:
        print(text)
        return
    try:
        Path(output).write_text(text + "\n")
    except OSError as error:
        raise OutputError(f"cannot write {printable(output)}: {error.strerror}") from None


def run_export_promela(args: argparse.Namespace) -> int:
    """`fencing export promela`: the Promela text of the design within bounds."""
    from fencing.arguments import bounds_from_args, design_from_args
    from model.formats.promela import promela_model

    model = promela_model(design_from_args(args), bounds_from_args(args))
    _write(model.text, args.output)
    return 0


def run_export_itf(args: argparse.Namespace) -> int:
    """`fencing export itf`: the shortest counterexample of one property, as ITF."""
    from fencing.arguments import bounds_from_args, design_from_args
    from model.check.explorer import explore
    from model.check.search import SearchOptions
    from model.formats.itf import trace_to_itf_json
    from model.formats.trace import replay
    from model.verdicts import verdict_words

    design, bounds = design_from_args(args), bounds_from_args(args)
    result = explore(
        design, bounds, SearchOptions(max_states=args.max_states, max_seconds=args.max_seconds)
    )
    verdict = result.verdicts[args.property]
    if verdict.actions is None:
        reason = (
            f"the search stopped ({result.stopped_by})"
            if not result.complete
            else f"it {verdict_words(verdict, design)} within these bounds"
        )
        print(f"fencing: no counterexample of {args.property} to export: {reason}", file=sys.stderr)
        return EXIT_NO_COUNTEREXAMPLE
    title = f"Shortest {args.property} counterexample"
    _write(trace_to_itf_json(replay(design, bounds, verdict.actions, title)), args.output)
    return 0
