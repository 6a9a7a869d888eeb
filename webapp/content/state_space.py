"""The State space page's words: what the graph shows, the counts, and why a graph is not drawn."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from model.design import Bounds
from model.rules import Action
from model.verdicts import VACUOUS_LEAD
from webapp.show.state_space import GRAPH_NODE_LIMIT, SpaceCounts

INTRO: Final = (
    "Every state the model can reach from the initial one, laid out by breadth-first "
    "depth. A state is marked by what it means for the chosen property: a violating "
    "step leaves it (red ✕), a violation can still be reached from it (orange ▲), or "
    f"it is safe (green ●). Graphs of up to {GRAPH_NODE_LIMIT:,} states are drawn; "
    "above that the page shows the counts and the chart only."
)
"""The page's first paragraph: how to read the graph."""
COUNTING: Final = "Counting the reachable states…"
"""The spinner's words while the reachable states are counted."""
BUILDING: Final = "Building the state graph…"
"""The spinner's words while the reachable graph is built."""
LOOKING_SMALLER: Final = "Looking for smaller bounds that can be drawn…"
"""The spinner's words while smaller bounds that can be drawn are searched for."""
COUNT_WORK: Final = "the count"
"""What the busy sentence names when the count cannot start."""
ORBITS: Final = "up to renaming workers"
"""The label of the count of states up to renaming the workers."""


def smaller_start(small: Bounds, reference: Bounds) -> str:
    """Why the page starts at `small` bounds when every other page starts at `reference`."""
    return (
        f"This page starts at smaller bounds ({small.short()}) than the other pages "
        f"({reference.short()}, where the presets' lessons are checked), so that every "
        "state can be drawn; set the bounds below to compare."
    )


def count_stopped(counts: SpaceCounts) -> str | None:
    """What the numbers cover when the count stopped early (None: it finished)."""
    if counts.complete:
        return None
    return (
        f"The count stopped early ({counts.stopped_by}): the numbers below count only "
        f"the states reached in the first {counts.depth} steps of the search, not the "
        "deeper ones."
    )


def symmetry_reduction(counts: SpaceCounts) -> str:
    """Symmetry's effect on the count, in one line."""
    return f"**Symmetry reduction:** {counts.reduction()}."


def not_drawn(counts: SpaceCounts) -> str:
    """Why the whole graph is not drawn: too many states, or a count that did not finish."""
    reason = (
        f"{counts.states:,} states is more than the {GRAPH_NODE_LIMIT:,} this page draws"
        if counts.complete
        else "the count did not finish"
    )
    return f"The whole graph is not drawn: {reason}."


def draw_at(smaller: Bounds) -> str:
    """The button that switches the page to `smaller` bounds, whose graph can be drawn."""
    return f"Draw the same design at {smaller.in_words()}"


def _run_in_words(actions: Sequence[Action]) -> str:
    """A run as its actions' labels, joined by arrows."""
    return " → ".join(a.label() for a in actions)


def run_and_neighbours(prop: str, actions: Sequence[Action]) -> str:
    """The heading of a run's neighbourhood graph: which run it is, and its steps."""
    return (
        f"**The shortest run violating {prop}, and every state one step away from it** "
        f"({len(actions)} steps): " + _run_in_words(actions)
    )


def states_drawn(count: int) -> str:
    """The caption under a neighbourhood graph of `count` states."""
    return f"{count:,} states drawn; a state's colour speaks only of the steps drawn here."


def purple_line(prop: str, actions: Sequence[Action]) -> str:
    """What the highlighted path of the whole graph is: the shortest run violating `prop`."""
    return (
        f"The purple line is the shortest run violating **{prop}** ({len(actions)} steps): "
        + _run_in_words(actions)
    )


def holds_in_graph(prop: str, counts: SpaceCounts) -> str | None:
    """That `prop` holds here, said only when the finished count found no run violating it,
    and said to hold only vacuously when nothing in any run ever exercises it."""
    if not counts.complete or counts.counterexamples.get(prop):
        return None
    if (why := counts.never_exercised.get(prop)) is not None:
        return (
            f"{prop} {VACUOUS_LEAD}: {why}. No state has a violating step leaving it, but "
            "only because no step ever puts it to the test: choose another property or design."
        )
    return f"{prop} holds within these bounds: no state has a violating step leaving it."


def kinds_line(kinds: Mapping[str, int]) -> str:
    """How many states of the graph are of each kind."""
    return " · ".join(f"{count:,} states: {word}" for word, count in kinds.items())
