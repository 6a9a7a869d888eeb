"""The Explore page's words: the form's help, the search's results and the counterexamples."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from fencing.strategies import RUNS_SEARCHES
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
    "Breadth-first checks every reachable state and finds shortest runs. Random tries "
    "random runs (for bounds too large to search), fast; hypothesis lets Hypothesis draw "
    "the runs and shrink what breaks, slower. Both shrink each violating run they find "
    "and never say that a property holds."
)
"""The strategy chooser's help: what each search can and cannot say."""
SEED_HELP: Final = "The same seed repeats the same search."
"""The seed input's help."""
VERDICT_COLUMN: Final = "verdict"
"""The heading of the verdict column of the page's tables (a row per property)."""
DOWNLOAD_JSON: Final = "Download this trace (JSON)"
DOWNLOAD_ITF: Final = "Download this trace (ITF)"
COMMAND_LINE: Final = "The same search on the command line"
"""The title of the folded-away equivalent `fencing check` command."""
EXPLORATION_WORK: Final = "the exploration"
"""What the busy sentence names when the exploration cannot start."""


def search_work(strategy: str) -> str:
    """What the busy sentence names when a search by random runs cannot start."""
    return f"the {RUNS_SEARCHES[strategy].in_words}"


def found_kind(strategy: str) -> str:
    """The first word of the title of a run a search by random runs found: `Random`."""
    return RUNS_SEARCHES[strategy].title.split()[0]


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


def random_not_complete(stopped_by: str | None, strategy: str = "random") -> str:
    """The caption under a random or Hypothesis search's table: why it is not complete (a
    search by random runs never shows a property holds)."""
    never = f"a {RUNS_SEARCHES[strategy].in_words} never shows a property holds"
    return f"Not complete: {stopped_by or never}."


def random_stopped(found: RandomSearch) -> str | None:
    """Why the random or Hypothesis search stopped early (None: it tried every run it was
    asked for)."""
    if not found.stopped_by:
        return None
    return f"The {RUNS_SEARCHES[found.strategy].in_words} stopped early ({found.stopped_by})."


def none_violated(verdicts: Mapping[str, PropertyVerdict]) -> str | None:
    """That no property is violated in the runs searched (None when one is)."""
    if any(verdict.violated for verdict in verdicts.values()):
        return None
    return "No property is violated in the explored runs."


def violated_choice(name: str, verdict: PropertyVerdict) -> str:
    """A violated property in the counterexample chooser: name, title, shortest run's length."""
    return f"{name}, {BY_NAME[name].title} ({verdict.shortest} steps)"


def counterexample_title(kind: str, name: str) -> str:
    """The title of the counterexample run of property `name` (`kind`: Shortest, Random or
    Hypothesis)."""
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
    """A search by random runs refused these bounds, for `reason` (already escaped)."""
    return f"These bounds cannot be searched: {reason}"
