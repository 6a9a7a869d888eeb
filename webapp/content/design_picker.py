"""The design picker's words (State space and Proofs pages): its help, its refusals, its
command line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

PRESET_HELP: Final = "A preset fills in the options; change any option to check your own design."
"""The preset chooser's help."""
OPTIONS_TITLE: Final = "Options (change any to check your own design)"
"""The title of the folded-away option widgets."""
COMMAND_LINE: Final = "The same design on the command line:"
"""The caption above the equivalent `fencing` command."""


def property_not_known(names: Sequence[str]) -> str:
    """What is wrong with a link naming a property the model does not have."""
    return f"the link's property must be one of {', '.join(names)}"


def design_refused(reason: str) -> str:
    """The model refused the design the options make, for `reason` (already escaped)."""
    return f"This design is refused: {reason}"


def bounds_refused(reason: str) -> str:
    """The model refused the bounds for this design, for `reason` (already escaped)."""
    return f"These bounds are refused: {reason}"
