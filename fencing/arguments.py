"""The flags every `fencing` command shares: a design, bounds and budgets, read with the
model's own parsers, so a bad value is one line that says what to change (exit status 2)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any, Final, assert_never

from model.design import BOUNDS, Bounds, Design, DesignError
from model.formats.terminal import printable
from model.options import OPTION_NAMES, OPTIONS, Kind, Option
from model.presets import PRESET_NAMES, preset


def _option_type(option: Option) -> Callable[[str], Any]:
    """An argparse type that reads an option's text with the option's own parser."""

    def parse(text: str) -> Any:
        try:
            return option.parse_text(text)
        except DesignError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse.__name__ = option.name
    return parse


def add_design_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags for a preset and each design option (a flag given with a preset overrides it).

    The flags are made from the option table, so every option has exactly one flag, named
    after it, with its choices or range in the help.
    """
    group = parser.add_argument_group("design (a preset, then options that override it)")
    group.add_argument("--preset", choices=PRESET_NAMES, help="start from a named design")
    for option in OPTIONS:
        match option.kind:
            case Kind.FLAG:
                group.add_argument(
                    option.flag,
                    action=argparse.BooleanOptionalAction,
                    default=None,
                    help=option.help,
                )
            case Kind.CHOICE:
                group.add_argument(
                    option.flag, type=_option_type(option), choices=option.choices, help=option.help
                )
            case Kind.COUNT:
                group.add_argument(
                    option.flag,
                    type=_option_type(option),
                    metavar="N",
                    help=f"{option.help} ({option.low}..{option.high})",
                )
            case Kind.OFFSETS:
                group.add_argument(
                    option.flag, type=_option_type(option), metavar="S1,S2,...", help=option.help
                )
            case _:
                assert_never(option.kind)


MAX_SECONDS_LIMIT: Final = 24 * 3600.0
MAX_STATES_LIMIT: Final = 10**15


def whole_count(text: str) -> int:
    """A positive whole number of at most 16 digits (argparse type; memory is checked later)."""
    text = text.strip().replace("_", "")
    if not text.isdigit() or len(text) > 16 or not 1 <= int(text) <= MAX_STATES_LIMIT:
        raise argparse.ArgumentTypeError(
            f"must be a whole number from 1 to {MAX_STATES_LIMIT:,}, not {_shown(text)}"
        )
    return int(text)


def seconds(text: str) -> float:
    """A finite, positive number of seconds up to a day (nan and inf are refused)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS_LIMIT:
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds above 0 and at most {MAX_SECONDS_LIMIT:g}, "
            f"not {_shown(text)}"
        )
    return value


def _shown(text: str) -> str:
    """User text for a message: printable, quoted and short."""
    return printable(text[:30] + ("…" if len(text) > 30 else ""))


def add_budget_arguments(
    parser: argparse.ArgumentParser, states: int | None, secs: float, whole_table: bool = False
) -> None:
    """`--max-states` and `--max-seconds`, validated; for a table, one budget for all of it.

    A state budget of None means: as many states as the available memory holds.
    """
    scope = "the whole table" if whole_table else "the run"
    default = "as many as the available memory holds" if states is None else f"{states:,}"
    parser.add_argument(
        "--max-states",
        type=whole_count,
        default=states,
        metavar="N",
        help=f"state budget for {scope} (default: {default})",
    )
    parser.add_argument(
        "--max-seconds",
        type=seconds,
        default=secs,
        metavar="S",
        help=f"time budget for {scope} in seconds (default {secs:g})",
    )


def add_bounds_arguments(parser: argparse.ArgumentParser, defaults: Bounds) -> None:
    """Flags for W, L, T, G, K with their allowed ranges in the help."""
    group = parser.add_argument_group("bounds")
    for bound in BOUNDS:
        group.add_argument(
            f"--{bound.name}",
            type=int,
            default=getattr(defaults, bound.name),
            metavar=bound.letter,
            help=f"{bound.label}: {bound.span} (default {getattr(defaults, bound.name)})",
        )


def design_from_args(args: argparse.Namespace) -> Design:
    """The design: the preset's (or the core's), with every given option flag applied.

    An option the flags leave out keeps the preset's value, so a flag that makes it misfit
    (`--preset volatile-counter --token counter` keeps one coordinator restart) is refused
    with what to change, as the same link is.
    """
    base = preset(args.preset).design if args.preset else Design()
    given = {name: getattr(args, name) for name in OPTION_NAMES if getattr(args, name) is not None}
    return base.with_changes(given)


def bounds_from_args(args: argparse.Namespace) -> Bounds:
    """The bounds given on the command line."""
    return Bounds(**{bound.name: getattr(args, bound.name) for bound in BOUNDS})
