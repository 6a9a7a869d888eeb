"""The reference search: the definition of what `fencing check` computes, written plainly.

This is a breadth-first search over the step interpreter (`model.system.System`) alone,
one state and one rule at a time, with no packing, hashing, chunks, threads or compiled
loops. The fast breadth-first search (`model.check.bfs`, run by `model.check.explorer.explore`) must
give exactly its results on every design and bounds with each of its level expanders, and
the tests compare them. What it computes:

- **States, transitions, depth.** Every state reachable from the initial one within the
  bounds; every enabled transition out of each of them (a transition into a state seen
  before still counts); the largest breadth-first distance.
- **The order of the search.** Level by level. Within a level, rules are taken in the
  fixed rule order, and for each rule the level's states in the order of their packed
  number (`Layout.pack`, the mixed-radix number of their columns). This is the order in
  which the explorer evaluates a rule on a whole level at once.
- **First parents.** A state's parent is the first state, in that order, from which a
  transition reaches it; its counterexample is the chain of those first transitions.
- **First violations.** A property's counterexample is the first violating transition in
  that order, so it is a shortest one (its length is the level it ends on), and the
  first among the shortest.
- **Vacuity.** A property no transition violates holds, unless no transition it speaks
  of (its trigger: an accepted write, a rejected request) ever happened: then it is
  vacuous.

A budget of states or seconds may stop the search after a level (`fencing check
--strategy reference` sets both): a property it has not seen violated is then unknown.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from model.check.search import Exploration
from model.design import Bounds, Design
from model.rules import Action, Rule
from model.system import State, System
from model.verdicts import PropertyVerdict, Status, exploration_status


@dataclass(frozen=True)
class ReferenceResult:
    """What the reference search found: every state with its distance, and the verdicts."""

    design: Design
    bounds: Bounds
    distance: dict[State, int]
    transitions: int
    level_sizes: tuple[int, ...]
    verdicts: dict[str, PropertyVerdict]
    seconds: float = 0.0
    stopped_by: str | None = None

    @property
    def complete(self) -> bool:
        """Whether every reachable state was explored (no budget stopped the search)."""
        return self.stopped_by is None

    def as_exploration(self) -> Exploration:
        """The result in the explorer's form, for everything that reports one."""
        return Exploration(
            self.design,
            self.bounds,
            self.complete,
            self.states,
            self.transitions,
            self.depth,
            False,
            self.seconds,
            self.verdicts,
            self.level_sizes,
            self.stopped_by,
        )

    @property
    def states(self) -> int:
        """How many states are reachable."""
        return len(self.distance)

    @property
    def depth(self) -> int:
        """The largest breadth-first distance."""
        return len(self.level_sizes) - 1


def reference_search(
    design: Design,
    bounds: Bounds,
    *,
    max_states: int | None = None,
    max_seconds: float | None = None,
) -> ReferenceResult:
    """Explore every reachable state of the design within the bounds, plainly (see above),
    or until a level ends past `max_states` states or `max_seconds` seconds."""
    started = time.perf_counter()
    stopped_by = None
    system = System(design, bounds)
    start = system.initial()
    distance = {start: 0}
    came_from: dict[State, tuple[State, Rule]] = {}
    first_violation: dict[str, tuple[State, Rule]] = {}
    exercised: set[str] = set()
    transitions = 0
    level = [start]
    level_sizes = [1]
    while level:
        level.sort(key=system.layout.pack)
        found: list[State] = []
        for rule in system.rules:
            for state in level:
                if not system.is_enabled(state, rule):
                    continue
                transitions += 1
                view = system.view(state)
                exercised.update(p.name for p in system.properties if p.triggered(view, rule))
                for name in system.violations(state, rule):
                    first_violation.setdefault(name, (state, rule))
                successor = system.apply(state, rule)
                if successor not in distance:
                    distance[successor] = distance[state] + 1
                    came_from[successor] = (state, rule)
                    found.append(successor)
        if found:
            level_sizes.append(len(found))
        level = found
        if level and max_states is not None and len(distance) >= max_states:
            stopped_by = f"state budget of {max_states:,} states reached"
            break
        if level and max_seconds is not None and time.perf_counter() - started > max_seconds:
            stopped_by = f"time budget of {max_seconds:g} s reached"
            break
    verdicts = {}
    for prop in system.properties:
        if prop.name not in first_violation:
            status = exploration_status(False, stopped_by is None, prop.name in exercised)
            verdicts[prop.name] = PropertyVerdict(prop.name, status)
            continue
        state, rule = first_violation[prop.name]
        actions = (*_path_to(state, came_from), rule.action)
        verdicts[prop.name] = PropertyVerdict(prop.name, Status.VIOLATED, len(actions), actions)
    seconds = time.perf_counter() - started
    return ReferenceResult(
        design, bounds, distance, transitions, tuple(level_sizes), verdicts, seconds, stopped_by
    )


def _path_to(state: State, came_from: dict[State, tuple[State, Rule]]) -> tuple[Action, ...]:
    """The actions of the first-parent chain from the initial state to `state`."""
    actions: list[Action] = []
    while state in came_from:
        state, rule = came_from[state]
        actions.append(rule.action)
    return tuple(reversed(actions))
