"""Exhaustive breadth-first exploration of every interleaving within the bounds.

`explore` is the entry point of every engine that counts. It puts the search together
from small parts, each in its own module:

- `model.check.bfs`: the search's rules (levels, first parents, first violations, vacuity,
  budgets, symmetry), the same results as the plain reference search (`model.check.reference`);
- `model.check.expanders`: the interface a level is expanded through, in chunks, on two
  threads where it pays; `model.check.numpy_expander` and `model.check.compiled_expander` implement
  it (numpy on whole chunks, or loops compiled from the rules' symbolic form), and
  `ExpanderPolicy` picks one per level;
- `model.check.native_search`: the native engine, which expands, deduplicates and sorts
  each level in C (built from the rules' symbolic form by `model.check.native_source`)
  where it applies, and holds the seen set itself;
- `model.check.seen`: the seen set, which makes each new state's first parent its first one;
- `model.check.keys`: states packed into int64 keys, one word or several;
- `model.check.memory`: memory and thread tuning;
- `model.check.search`: the options (`SearchOptions`), visitors and the result (`Exploration`).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from model.check.bfs import BreadthFirstSearch
from model.check.compiled_expander import ExpanderPolicy, compile_system_loops
from model.check.expanders import rule_plans
from model.check.keys import KeyCodec
from model.check.memory import default_threads, map_large_blocks, share_one_arena
from model.check.native_search import NativePolicy, build_engine, native_applicable
from model.check.numpy_expander import NumpyExpander
from model.check.search import (
    DEFAULT_MAX_SECONDS,
    DEFAULT_MAX_STATES,
    EdgeBatch,
    Expander,
    Exploration,
    Progress,
    SearchOptions,
    Visitor,
)
from model.check.seen import SeenSet
from model.design import Bounds, Design
from model.system import System

__all__ = [
    "DEFAULT_MAX_SECONDS",
    "DEFAULT_MAX_STATES",
    "EdgeBatch",
    "Exploration",
    "Progress",
    "SearchOptions",
    "compile_loops",
    "explore",
    "explore_system",
]


def explore(
    design: Design,
    bounds: Bounds,
    options: SearchOptions | None = None,
    visitors: Sequence[Visitor] = (),
) -> Exploration:
    """Explore a design within bounds (see `SearchOptions` for budgets and the rest);
    `visitors` are told each level, each first violation and, if they ask, each transition.
    The result depends on neither the threads, the expander nor the tuning."""
    system = System(design, bounds)
    options = options if options is not None else SearchOptions()
    if options.start is not None:
        system.layout.check_state(options.start)
    return explore_system(system, options, visitors)


def explore_system(
    system: System, options: SearchOptions, visitors: Sequence[Visitor] = ()
) -> Exploration:
    """`explore` on a system already built: wires the expanders, seen set and threads."""
    codec = KeyCodec.of(system.layout)
    plans = rule_plans(system)
    edges = any(visitor.wants_edges for visitor in visitors)
    numpy = NumpyExpander(codec, plans, system.properties, edges)
    choice = Expander.NUMPY if edges else options.expander
    policy = ExpanderPolicy(system, codec, plans, numpy, choice, options.tuning)
    applicable = native_applicable(system, options.symmetry, edges)
    native = NativePolicy(system, codec, plans, choice, options.tuning, applicable)
    threads = options.threads if options.threads is not None else default_threads()
    map_large_blocks()
    pool = None
    if threads > 1:
        share_one_arena()
        pool = ThreadPoolExecutor(threads)
    try:
        search = BreadthFirstSearch(
            system,
            options,
            visitors,
            plans,
            policy.for_level,
            SeenSet(codec, threads, options.tuning.sorted_up_to),
            pool,
            native.for_level,
        )
        return search.run()
    finally:
        native.close()
        if pool is not None:
            pool.shutdown()


def compile_loops(design: Design, bounds: Bounds) -> None:
    """Build the design's native engine for these bounds ahead of a search (as pan is
    compiled before it searches), or its numba loops where the engine cannot run; either
    is only loaded if an earlier run built it."""
    system = System(design, bounds)
    if not build_engine(system):
        compile_system_loops(system)
