"""`fencing advise`: from the parts of a real stack to its verdicts, its bug and the change to make.

`fencing advise --token ID --resource ID [--workers-do ID …] [--also ID …]` maps the stack
to the model's design through the catalogue (`advise/catalogue.py`), explores it, tells each
violated property's shortest counterexample for that stack, and lists the smallest sets of
catalogue changes that fix it. `fencing advise --catalogue` prints the catalogue itself.
Registered through the CLI's `COMMAND_MODULES`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from model.design import REFERENCE_BOUNDS, Bounds


def register(commands: Any) -> None:
    """Add `advise` to the CLI."""
    from advise.catalogue import Slot, parts_of
    from fencing.arguments import add_bounds_arguments

    advise = commands.add_parser(
        "advise",
        help="check a stack of real parts (etcd, ZooKeeper, Redis, SQL, object stores) and say "
        "what to change",
        description="Map a stack of real parts to the model, check it with a holder that may "
        "crash, tell each bug in the stack's words, and list the changes that fix it, complete "
        "fixes in the parts the stack already runs first. Ids: fencing advise --catalogue.",
    )
    for slot in (Slot.TOKEN, Slot.RESOURCE):
        advise.add_argument(
            f"--{slot}",
            metavar="ID",
            help=f"{slot.words}: one of {', '.join(p.id for p in parts_of(slot))}",
        )
    for slot in (Slot.WORKERS, Slot.ALSO):
        advise.add_argument(
            f"--{slot}",
            metavar="ID",
            nargs="+",
            default=[],
            help=f"{slot.words}: any of {', '.join(p.id for p in parts_of(slot))}",
        )
    advise.add_argument(
        "--catalogue", action="store_true", help="print the catalogue of parts and stop"
    )
    add_bounds_arguments(advise, REFERENCE_BOUNDS)
    output = advise.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print one JSON object")
    output.add_argument(
        "--note", action="store_true", help="print a design-review note in Markdown"
    )
    advise.set_defaults(run=run_advise)


def run_advise(args: argparse.Namespace) -> int:
    """`fencing advise`: the catalogue, or the advice for one stack."""
    from advise.advice import advise
    from advise.catalogue import Stack
    from fencing import EXIT_USAGE
    from fencing.arguments import bounds_from_args

    if args.catalogue:
        print(json.dumps(catalogue_json(), indent=2) if args.json else format_catalogue())
        return 0
    if not args.token or not args.resource:
        print(
            "fencing advise: error: give --token ID and --resource ID "
            "(see fencing advise --catalogue)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    stack = Stack.of(args.token, args.resource, [*args.workers_do, *args.also])
    bounds: Bounds = bounds_from_args(args)
    advice = advise(stack, bounds)
    if args.json:
        print(json.dumps(advice.to_dict(), indent=2))
    else:
        print(review_note(advice) if args.note else format_advice(advice))
    return 0


def advise_command(stack: Any, bounds: Bounds) -> str:
    """`fencing advise …` for this stack at these bounds."""
    from advise.catalogue import Slot
    from fencing.command_line import bounds_flags, command

    words = ["fencing", "advise", "--token", stack.token.id, "--resource", stack.resource.id]
    for slot in (Slot.WORKERS, Slot.ALSO):
        chosen = [p.id for p in stack.parts if p.slot is slot]
        if chosen:
            words += [f"--{slot}", *chosen]
    return command([*words, *bounds_flags(bounds)])


def review_note(advice: Any) -> str:
    """A design-review note in Markdown: the stack, verdicts, the bug, the changes to make,
    and the bounds it was checked at (with what bounds mean)."""
    from advise import words
    from fencing.command_line import check_command
    from model.properties import BY_NAME

    result = advice.exploration
    lines = [
        "# Design review: fencing the lock",
        "",
        "## The stack",
        "",
        *(f"- {p.slot.words}: {p.words} (`{p.id}`)" for p in advice.stack.parts),
        "- assumed, as in every real stack: a holder may crash for good",
        "",
        f"In the model: {advice.design.in_words()}.",
        "",
        "## Verdicts",
        "",
        "| property | verdict |",
        "| --- | --- |",
        *(
            f"| {name} {BY_NAME[name].title} | {words.verdict_words(name, verdict, advice)} |"
            for name, verdict in result.verdicts.items()
        ),
    ]
    for story in advice.stories.values():
        lines += ["", f"### {story[0].split(':', 1)[0]}", "", story[0], ""]
        lines += story[1:]
    lines += ["", "## What to change", ""]
    if (good := words.all_hold(advice)) is not None:
        lines.append(good)
    elif (nothing := words.no_fix(advice)) is not None:
        lines.append(nothing)
    for number, fix in enumerate(advice.fixes, 1):
        lines += ["", f"### {words.fix_heading(number, fix)}", ""]
        for change in fix.changes:
            lines.append(f"- {change.build()}")
            if change.snippet:
                lines += ["", *(f"      {line}" for line in change.snippet.splitlines()), ""]
        lines += ["", ". ".join(words.fix_outcome(fix, advice)) + ".", ""]
        lines.append(f"    {check_command(fix.design, advice.bounds)}")
    if advice.hiding:
        lines += ["", "### Changes that hide the bug (not fixes)", ""]
        lines += [f"- {words.hiding_sentence(hiding)}." for hiding in advice.hiding]
    lines += [f"- {sentence}" for sentence in words.unrepaired_sentences(advice)]
    if (left := words.unexplored_sentence(advice)) is not None:
        lines += ["", left]
    lines += [
        "",
        "## How it was checked",
        "",
        f"Every interleaving of the model at {advice.bounds.in_words()} "
        f"({advice.bounds.short()}), with a holder that may crash: {result.states:,} states"
        + ("." if result.complete else f", not finished ({result.stopped_by})."),
        "Bounds are the model's sizes: a verdict holds for runs of that size; a bug shown at "
        "small bounds is a real bug, a property that holds is checked only up to them.",
        "",
        f"    {advise_command(advice.stack, advice.bounds)}",
        f"    {check_command(advice.design, advice.bounds)}",
    ]
    return "\n".join(lines) + "\n"


def catalogue_json() -> list[dict[str, Any]]:
    """Every catalogue entry as JSON."""
    from advise.catalogue import CATALOGUE

    return [entry.to_dict() for entry in CATALOGUE]


def format_catalogue() -> str:
    """The catalogue as text: per slot, each id, its words, the model's options and a source."""
    from advise.catalogue import Slot, parts_of

    lines: list[str] = []
    for slot in Slot:
        lines.append(f"{slot.words} (--{slot}):")
        for entry in parts_of(slot):
            lines.append(f"  {entry.id:<30} {entry.words}")
            lines.append(f"  {'':<30} model: {entry.model_words()}; source: {entry.source}")
        lines.append("")
    return "\n".join(lines).rstrip()


def format_advice(advice: Any) -> str:
    """The advice as text: stack, verdicts, stories, fixes, and the command to check it."""
    from advise import words
    from fencing.command_line import check_command
    from model.properties import BY_NAME

    result = advice.exploration
    lines = [
        f"Stack: {advice.stack.in_words()}",
        f"Model: {advice.design.label()} (a holder may crash, as in every real stack)",
        f"Checked at {advice.bounds.short()} ({advice.bounds.in_words()}): "
        f"{result.states:,} states"
        + ("" if result.complete else f", INCOMPLETE: {result.stopped_by}"),
        "",
    ]
    for name, verdict in result.verdicts.items():
        status = words.verdict_words(name, verdict, advice)
        if verdict.violated:
            status = f"VIOLATED (shortest run: {verdict.shortest} steps)"
        lines.append(f"  {name} {BY_NAME[name].title:<30} {status}")
    for story in advice.stories.values():
        lines += ["", story[0], *(f"    {line}" for line in story[1:])]
    if (good := words.all_hold(advice)) is not None:
        lines += ["", good]
    if advice.violated:
        lines += ["", "What to change, best first:" if advice.fixes else words.no_fix(advice) or ""]
    for number, fix in enumerate(advice.fixes, 1):
        lines.append(f"  {words.fix_heading(number, fix)}")
        for change in fix.changes:
            lines.append(f"     - {change.build()}")
            lines += [f"         {line}" for line in change.snippet.splitlines()]
        lines += [f"     {sentence}." for sentence in _capitalised(words.fix_outcome(fix, advice))]
        lines.append(f"     check it: {check_command(fix.design, advice.bounds)}")
    if advice.hiding:
        lines += ["", "Changes that hide the bug (not fixes):"]
        lines += [f"  - {words.hiding_sentence(hiding)}." for hiding in advice.hiding]
    lines += [f"  {sentence}" for sentence in words.unrepaired_sentences(advice)]
    if (left := words.unexplored_sentence(advice)) is not None:
        lines += ["", f"  {left}"]
    lines += ["", f"The same design on its own: {check_command(advice.design, advice.bounds)}"]
    return "\n".join(lines)


def _capitalised(sentences: tuple[str, ...]) -> list[str]:
    """Sentences with their first letter in capitals."""
    return [sentence[:1].upper() + sentence[1:] for sentence in sentences]
