"""A deliberately plain breadth-first search over the step interpreter, for cross-checks.

It shares nothing with the vectorised explorer but the rules, so agreement between the
two tests the explorer's packing, deduplication, parent links and symmetry handling.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from model.design import Bounds, Design
from model.system import State, System


@dataclass(frozen=True)
class NaiveResult:
    """Counts and shortest violation lengths found by the plain search."""

    states: dict[State, int]
    transitions: int
    shortest: dict[str, int]

    @property
    def depth(self) -> int:
        """Largest breadth-first distance."""
        return max(self.states.values())


def naive_explore(design: Design, bounds: Bounds) -> NaiveResult:
    """Every reachable state with its BFS distance, the transition count, shortest violations."""
    system = System(design, bounds)
    start = system.initial()
    distance = {start: 0}
    queue = deque([start])
    transitions = 0
    shortest: dict[str, int] = {}
    while queue:
        state = queue.popleft()
        for successor in system.successors(state):
            transitions += 1
            for name in successor.violations:
                shortest.setdefault(name, distance[state] + 1)
            if successor.state not in distance:
                distance[successor.state] = distance[state] + 1
                queue.append(successor.state)
    return NaiveResult(distance, transitions, shortest)
