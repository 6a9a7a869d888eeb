"""The command line that reproduces a design and bounds, for pages and reports to show.

The flags are made from the option table, exactly as the CLI makes its parser, so a shown
command always runs the design it was made from.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from model.design import Bounds, Design
from model.options import OPTIONS, Kind


def design_flags(design: Design) -> list[str]:
    """The option flags that turn the core design into `design` (unchanged options left out)."""
    flags: list[str] = []
    for option in OPTIONS:
        value = getattr(design, option.name)
        if value == option.default:
            continue
        if option.kind is Kind.FLAG:
            flags.append(option.flag if value else "--no-" + option.flag[2:])
        else:
            flags += [option.flag, option.to_text(value)]
    return flags


def bounds_flags(bounds: Bounds) -> list[str]:
    """`--workers W --lease L --horizon T --grants G --writes K`."""
    return [part for name, value in bounds.to_dict().items() for part in (f"--{name}", str(value))]


def command(words: Iterable[str]) -> str:
    """Words as one shell command line, each quoted where the shell needs it."""
    return " ".join(shlex.quote(word) for word in words)


def check_command(design: Design, bounds: Bounds) -> str:
    """`fencing check …` for this design at these bounds."""
    return command(["fencing", "check", *design_flags(design), *bounds_flags(bounds)])
