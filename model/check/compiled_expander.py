"""The compiled level expander, and the policy that says which expander runs a level.

`CompiledExpander` runs one loop per rule, compiled by numba from the rule's own symbolic
form (`model.check.kernels`): the same successors in the same order as the numpy expander, and
the same first violations. Compiling takes seconds, so `ExpanderPolicy` uses numpy for small
levels and compiled loops for large ones (or from smaller levels on when an earlier run
already compiled them); whatever the compiler refuses, the numpy path runs instead.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from model.check.expanders import Chunk, LevelExpander, RulePlan, Settled, rule_plans
from model.check.keys import KeyCodec, Keys
from model.check.search import Expander, Tuning
from model.system import System

if TYPE_CHECKING:
    from model.check.kernels import Kernel, Plan


def kernel_plans(plans: tuple[RulePlan, ...]) -> list[Plan]:
    """What the compiled loops must do: per rule, the properties to check."""
    return [
        (plan.rule_id, [p.name for p in plan.violable], [p.name for p in plan.triggerable])
        for plan in plans
    ]


def load_loops(system: System, codec: KeyCodec, plans: tuple[RulePlan, ...]) -> dict[int, Kernel]:
    """The compiled loop of every planned rule (compiled now, or loaded from the cache)."""
    from model.check.kernels import load_kernels

    return load_kernels(system, codec, kernel_plans(plans))


class CompiledExpander:
    """Expands chunks of a level by compiled loops, rule by rule (`LevelExpander`)."""

    def __init__(
        self,
        kernels: dict[int, Kernel],
        codec: KeyCodec,
        plans: tuple[RulePlan, ...],
        names: tuple[str, ...],
    ) -> None:
        self.kernels = kernels
        self.codec = codec
        self.plans = plans
        self.names = names

    def expand(self, level: Keys, begin: int, end: int, settled: Settled) -> Chunk:
        """The numpy expander's chunk, by the compiled loops: same successors, same order."""
        keys = level[begin:end]
        chunk = Chunk(begin)
        names = self.names
        out_keys = np.empty(keys.shape, dtype=np.int64)
        out_rows = np.empty(len(keys), dtype=np.int32)
        for plan in self.plans:
            first = np.full(len(names), -1, dtype=np.int64)
            triggered = np.zeros(len(names), dtype=bool)
            look = np.array(
                [n not in settled.violated and n not in chunk.violations for n in names]
            )
            watch = np.array(
                [n not in settled.exercised and n not in chunk.exercised for n in names]
            )
            count = self.kernels[plan.rule_id](
                keys, out_keys, out_rows, first, triggered, look, watch
            )
            if not count:
                continue
            chunk.successors[plan.rule_id] = (out_keys[:count].copy(), out_rows[:count] + begin)
            chunk.transitions += count
            for p, name in enumerate(names):
                if first[p] >= 0:
                    chunk.violations[name] = (plan.rule_id, begin + int(first[p]))
                if triggered[p]:
                    chunk.exercised.add(name)
        return chunk


class ExpanderPolicy:
    """Picks each level's expander: numpy, or compiled loops once a level is large enough.

    Once loaded, compiled loops expand every later level too; if compiling fails, a warning
    says so and numpy expands every level of the run.
    """

    def __init__(
        self,
        system: System,
        codec: KeyCodec,
        plans: tuple[RulePlan, ...],
        numpy: LevelExpander,
        choice: Expander,
        tuning: Tuning,
    ) -> None:
        self.system = system
        self.codec = codec
        self.plans = plans
        self.numpy = numpy
        self.choice = choice
        self.tuning = tuning
        self.compiled: CompiledExpander | None = None
        self.compilable = choice is not Expander.NUMPY
        self.cached: bool | None = None

    def for_level(self, size: int) -> LevelExpander:
        """The expander of a level of `size` states (compiling its loops if it is time)."""
        if self.compiled is None and self._wants_compiled(size):
            try:
                kernels = load_loops(self.system, self.codec, self.plans)
            except Exception as error:  # whatever the compiler refuses, the numpy path runs
                warnings.warn(f"compiled loops unavailable, using numpy: {error}", stacklevel=3)
                self.compilable = False
            else:
                names = tuple(p.name for p in self.system.properties)
                self.compiled = CompiledExpander(kernels, self.codec, self.plans, names)
        return self.compiled if self.compiled is not None else self.numpy

    def _wants_compiled(self, size: int) -> bool:
        """Whether a level of this size should be expanded by compiled loops."""
        if not self.compilable or size < self.tuning.load_from:
            return False
        if self.choice is Expander.COMPILED or size >= self.tuning.compile_from:
            return True
        return self._compiled_before()

    def _compiled_before(self) -> bool:
        """Whether an earlier run compiled this design's loops (checked once)."""
        if self.cached is None:
            from model.check.kernels import is_compiled

            self.cached = is_compiled(self.system, self.codec, kernel_plans(self.plans))
        return self.cached


def compile_system_loops(system: System) -> None:
    """Compile the system's loops for its bounds ahead of a search (as pan is compiled
    before it searches), or load them if an earlier run compiled them."""
    load_loops(system, KeyCodec.of(system.layout), rule_plans(system))
