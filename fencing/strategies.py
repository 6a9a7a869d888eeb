"""`fencing check --strategy`: breadth-first (the explorer), reference, or random.

The reference search (`model.check.reference`) is the plain statement of what the explorer
computes, for cross-checks at small bounds; it reports like the explorer. The random
search's JSON has the shape of a breadth-first `check --json` (a property's `status` is
`violated` or `unknown`, never `holds`), with the runs and steps tried per property. The
random search itself (and its compiler) is only imported when it runs.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from model.check.random_search import DEFAULT_RUNS
from model.formats.trace import replay, trace_to_dict
from model.properties import BY_NAME

if TYPE_CHECKING:
    from model.check.explorer import Exploration
    from model.check.random_search import RandomSearch
    from model.design import Bounds, Design

BREADTH_FIRST: Final = "breadth-first"
REFERENCE: Final = "reference"
RANDOM: Final = "random"
STRATEGIES: Final = (BREADTH_FIRST, REFERENCE, RANDOM)
REFERENCE_MAX_STATES: Final = 1_000_000
"""The reference search keeps Python tuples (hundreds of bytes a state): its state budget."""
MAX_SEED: Final = 2**64 - 1
RANDOM_ONLY: Final = ("runs", "seed", "max_steps")


def seed_number(text: str) -> int:
    """A whole number from 0 to 2^64 - 1 (argparse type)."""
    digits = text.strip().replace("_", "")
    if not digits.isdigit() or len(digits) > 20 or int(digits) > MAX_SEED:
        shown = repr(text[:30])
        raise argparse.ArgumentTypeError(f"must be a whole number from 0 to 2^64 - 1, not {shown}")
    return int(digits)


def add_strategy_arguments(parser: argparse.ArgumentParser, count: Callable[[str], int]) -> None:
    """`--strategy` and the random search's budgets (`count` validates a whole count)."""
    group = parser.add_argument_group("strategy")
    group.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default=BREADTH_FIRST,
        help="breadth-first: every reachable state, shortest counterexamples (default); "
        "reference: the same results by a plain, slow search, for cross-checks "
        f"(at most {REFERENCE_MAX_STATES:,} states); "
        "random: random runs on loops compiled from the rules, for bounds beyond exhaustive "
        "reach (it finds violations, shrinks them, and never says a property holds)",
    )
    group.add_argument(
        "--runs",
        type=count,
        metavar="N",
        help=f"random: runs per property (default {DEFAULT_RUNS:,})",
    )
    group.add_argument("--seed", type=seed_number, metavar="S", help="random: the seed (default 0)")
    group.add_argument(
        "--max-steps",
        type=count,
        metavar="N",
        help="random: steps per run at most (default: as many as any run can take)",
    )


def strategy_problem(args: argparse.Namespace) -> str | None:
    """Why the strategy flags given do not go together, or None."""
    if args.strategy != BREADTH_FIRST and args.symmetry:
        return "--symmetry applies to the breadth-first search only"
    if args.strategy == RANDOM:
        return None
    given = [f"--{name.replace('_', '-')}" for name in RANDOM_ONLY if getattr(args, name)]
    if given:
        return f"{', '.join(given)} applies to --strategy random only"
    return None


def reference_exploration(args: argparse.Namespace, design: Design, bounds: Bounds) -> Exploration:
    """`fencing check --strategy reference`: the plain search, within the run's budgets."""
    from model.check.reference import reference_search

    found = reference_search(
        design,
        bounds,
        max_states=min(args.max_states, REFERENCE_MAX_STATES),
        max_seconds=args.max_seconds,
    )
    return found.as_exploration()


def random_to_dict(result: RandomSearch) -> dict[str, Any]:
    """The JSON of a random search, in the shape of `fencing check --json`."""
    properties = {}
    for name, verdict in result.verdicts.items():
        trace = replay(result.design, result.bounds, verdict.actions) if verdict.actions else None
        tried = result.tried[name]
        properties[name] = {
            **verdict.to_dict(),
            "trace": trace_to_dict(trace)["steps"] if trace else None,
            "runs": tried.runs,
            "steps": tried.steps,
            "found": tried.found,
        }
    return {
        "strategy": RANDOM,
        "complete": False,
        "stopped_by": result.stopped_by or "a random search never shows that a property holds",
        "states": result.states,
        "states_capped": result.states_capped,
        "transitions": result.steps,
        "shrink_steps": result.shrink_steps,
        "engine": result.engine,
        "depth": result.longest,
        "symmetry": False,
        "seconds": round(result.seconds, 4),
        "seed": result.seed,
        "runs": result.runs,
        "max_steps": result.max_steps,
        "design": result.design.to_dict(),
        "bounds": result.bounds.to_dict(),
        "properties": properties,
    }


def unknown_words(runs: int, steps: int) -> str:
    """What an unviolated property's cell says after a random search."""
    return f"unknown (random search: {runs:,} runs, {steps:,} steps)"


ENGINE_WORDS: Final = {
    "compiled": "on loops compiled from the rules",
    "interpreted": "on the step interpreter (the compiler was unavailable)",
}
"""How the report names what walked the runs."""


def violated_words(length: int, found: int | None) -> str:
    """What a violated property's cell says after a random search: the run shown, and the
    run the search found before shrinking it, when that was longer."""
    shrunk = f", shrunk from {found}" if found is not None and found > length else ""
    return f"VIOLATED (a run of {length} steps{shrunk})"


def states_figure(result: RandomSearch) -> str:
    """The distinct states met as a figure (`≥ 100,000` when counting stopped there)."""
    return f"{'≥ ' if result.states_capped else ''}{result.states:,}"


def states_words(result: RandomSearch) -> str:
    """The distinct states a random search met (counting stops at a limit)."""
    if result.states_capped:
        return f"at least {result.states:,} distinct states met (counting stops there)"
    return f"{result.states:,} distinct states met"


def format_random(result: RandomSearch) -> str:
    """Human report: the budget and totals, a verdict per property, the runs found."""
    from fencing.output import format_trace

    cut = f"; stopped early: {result.stopped_by}" if result.stopped_by else ""
    lines = [
        f"Design: {result.design.label()}",
        f"Bounds: {result.bounds.short()}",
        f"Random search, seed {result.seed}, {ENGINE_WORDS[result.engine]}: "
        f"{result.runs:,} runs per property of at most {result.max_steps:,} steps",
        f"{result.steps:,} steps taken, and {result.shrink_steps:,} more while shrinking; "
        f"{states_words(result)}; {result.seconds:.2f} s{cut}",
        "",
    ]
    for name, verdict in result.verdicts.items():
        title = f"{name} {BY_NAME[name].title}"
        tried = result.tried[name]
        status = (
            violated_words(len(verdict.actions), tried.found)
            if verdict.actions is not None
            else unknown_words(tried.runs, tried.steps)
        )
        lines.append(f"  {title:<32} {status}")
    for name, verdict in result.verdicts.items():
        if verdict.actions:
            lines += ["", f"A run violating {name} (found at random and shrunk):"]
            lines += format_trace(replay(result.design, result.bounds, verdict.actions))
    return "\n".join(lines)


def run_random_check(args: argparse.Namespace) -> int:
    """`fencing check --strategy random`: search the design at random and report."""
    from fencing.arguments import bounds_from_args, design_from_args
    from model.check.random_search import random_search

    design, bounds = design_from_args(args), bounds_from_args(args)
    result = random_search(
        design,
        bounds,
        runs=args.runs or DEFAULT_RUNS,
        max_steps=args.max_steps,
        max_seconds=args.max_seconds,
        seed=args.seed or 0,
    )
    print(json.dumps(random_to_dict(result), indent=2) if args.json else format_random(result))
    return 0
