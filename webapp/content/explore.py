"""The Explore page's words: the form's help, the search's results and the counterexamples."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from model.check.explorer import Exploration
from model.check.random_search import RandomSearch
from model.design import Bounds, Design
from model.presets import Preset
from model.properties import BY_NAME
from model.verdicts import PropertyVerdict
from webapp.content.common import mirrors
from webapp.show.design_form import limits_text

INTRO: Final = (
    "Choose a design and bounds; the explorer checks every interleaving of every action "
    "within the bounds and reports each property with the shortest run that breaks it. "
    "The options and bounds are kept in the page's link, so a copied link reopens this "
    "exact page."
)
"""The page's first paragraph: what the explorer does, and that the link keeps the form."""
PRESET_LABEL: Final = "Start from a preset"
PRESET_HELP: Final = "Fills in the options below; you can then change any of them."
"""The preset chooser's help."""
STRATEGY_HELP: Final = (
    "Breadth-first checks every reachable state and finds shortest runs; random "
    "tries random runs (for bounds too large to search), shrinks each violating run "
    "it finds, and never says that a property holds."
)
"""The strategy chooser's help: what each search can and cannot say."""
SEED_HELP: Final = "The same seed repeats the same search."
"""The seed input's help."""
RANDOM_NEVER_HOLDS: Final = "a random search never shows a property holds"
"""Why a random search's table says it is not complete, when it did not stop early."""
VERDICT_COLUMN: Final = "verdict"
"""The heading of the verdict column of the page's tables (a row per property)."""
DOWNLOAD_JSON: Final = "Download this trace (JSON)"
DOWNLOAD_ITF: Final = "Download this trace (ITF)"
COMMAND_LINE: Final = "The same search on the command line"
"""The title of the folded-away equivalent `fencing check` command."""
EXPLORATION_WORK: Final = "the exploration"
"""What the busy sentence names when the exploration cannot start."""
RANDOM_WORK: Final = "the random search"
"""What the busy sentence names when the random search cannot start."""


def strategy_not_known(strategies: Sequence[str]) -> str:
    """What is wrong with a link naming a search strategy the page does not offer."""
    return f"strategy in the link must be one of {', '.join(strategies)}"


def limits_caption() -> str:
    """The caption above the bound inputs: every bound's allowed range."""
    return f"Limits: {limits_text()}."


def budget_help(seconds: float) -> str:
    """The state budget's help: the explorer stops at the budget or after `seconds`."""
    return (
        "The explorer stops after this many states (or after "
        f"{seconds:.0f} s) and reports what it found so far."
    )


def runs_label(most: int) -> str:
    """The label of the random runs per property input, with its range."""
    return f"Random runs per property (1..{most:,})"


def incomplete(exploration: Exploration) -> str | None:
    """What an exploration that stopped early can and cannot say (None: it finished)."""
    if exploration.complete:
        return None
    return (
        f"Incomplete: the exploration stopped ({exploration.stopped_by}) after "
        f"{exploration.states:,} states. Violations found so far are real; a property "
        "not violated so far is unknown: it may still fail deeper."
    )


def random_not_complete(stopped_by: str | None) -> str:
    """The caption under the random search's table: why it is not complete."""
    return f"Not complete: {stopped_by or RANDOM_NEVER_HOLDS}."


def random_stopped(found: RandomSearch) -> str | None:
    """Why the random search stopped early (None: it tried every run it was asked for)."""
    if not found.stopped_by:
        return None
    return f"The random search stopped early ({found.stopped_by})."


def none_violated(verdicts: Mapping[str, PropertyVerdict]) -> str | None:
    """That no property is violated in the runs searched (None when one is)."""
    if any(verdict.violated for verdict in verdicts.values()):
        return None
    return "No property is violated in the explored runs."


def violated_choice(name: str, verdict: PropertyVerdict) -> str:
    """A violated property in the counterexample chooser: name, title, shortest run's length."""
    return f"{name}, {BY_NAME[name].title} ({verdict.shortest} steps)"


def counterexample_title(kind: str, name: str) -> str:
    """The title of the counterexample run of property `name` (`kind`: Shortest or Random)."""
    return f"{kind} {name} counterexample"


def not_valid(reason: str) -> str:
    """The model refused the form's design or bounds, for `reason` (already escaped)."""
    return f"This design is not valid: {reason}"


def this_is(preset: str | None, design: Design, bounds: Bounds) -> str:
    """Which design the form makes (a preset by name, else its options) and at what bounds."""
    label = f"the preset `{preset}`" if preset else f"a custom design ({design.in_words()})"
    return f"This is {label} at {bounds.in_words()}."


def preset_caption(preset: Preset, lesson: str) -> str:
    """What a preset mirrors, then its lesson at these bounds."""
    return f"{mirrors(preset.mirrors)} {lesson}"


def cannot_explore(reason: str) -> str:
    """The explorer refused these bounds, for `reason` (already escaped)."""
    return f"These bounds cannot be explored: {reason}"


def cannot_search(reason: str) -> str:
    """The random search refused these bounds, for `reason` (already escaped)."""
    return f"These bounds cannot be searched: {reason}"
