"""`fencing check --strategy`: breadth-first (the explorer), reference, random or hypothesis.

The reference search (`model.check.reference`) is the plain statement of what the explorer
computes, for cross-checks at small bounds; it reports like the explorer. The random and
Hypothesis searches are one-sided (a property they break is violated, any other unknown)
and report alike: their JSON has the shape of a breadth-first `check --json` (a property's
`status` is `violated` or `unknown`, never `holds`), with the runs and steps tried per
property. Each search (its compiler, Hypothesis) is only imported when it runs.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from model.check import hypothesis_search, random_search
from model.check.hypothesis_search import SHRINK_CALLS
from model.formats.trace import replay, trace_to_dict
from model.properties import BY_NAME

if TYPE_CHECKING:
    from model.check.explorer import Exploration
    from model.check.random_search import RandomSearch
    from model.design import Bounds, Design

BREADTH_FIRST: Final = "breadth-first"
REFERENCE: Final = "reference"
RANDOM: Final = random_search.STRATEGY
HYPOTHESIS: Final = hypothesis_search.STRATEGY
REFERENCE_MAX_STATES: Final = 1_000_000
"""The reference search keeps Python tuples (hundreds of bytes a state): its state budget."""
MAX_SEED: Final = 2**64 - 1
RANDOM_ONLY: Final = ("runs", "seed", "max_steps")
"""The flags of the searches by random runs."""


@dataclass(frozen=True)
class RunsSearch:
    """A search by random runs, as the command line and the pages name it."""

    name: str
    in_words: str
    """The search inside a sentence: `random search`."""
    default_runs: int
    drawn_by: str
    """Who drew a run shown: `found at random`."""
    help: str
    """What `--strategy NAME` does, for `--help`."""

    @property
    def title(self) -> str:
        """The search at the start of a sentence: `Random search`."""
        return self.in_words[:1].upper() + self.in_words[1:]


RUNS_SEARCHES: Final = {
    RANDOM: RunsSearch(
        RANDOM,
        "random search",
        random_search.DEFAULT_RUNS,
        "found at random",
        "random runs on loops compiled from the rules, for bounds beyond exhaustive reach",
    ),
    HYPOTHESIS: RunsSearch(
        HYPOTHESIS,
        "Hypothesis search",
        hypothesis_search.DEFAULT_RUNS,
        "found by Hypothesis",
        "runs that Hypothesis draws and shrinks, on the same compiled rules",
    ),
}
"""The searches by random runs: both find violations, shrink them, and never say that a
property holds."""
STRATEGIES: Final = (BREADTH_FIRST, REFERENCE, *RUNS_SEARCHES)


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
        + "; ".join(f"{search.name}: {search.help}" for search in RUNS_SEARCHES.values())
        + ". Both find violations, shrink them, and never say that a property holds",
    )
    both = " and ".join(RUNS_SEARCHES)
    group.add_argument(
        "--runs",
        type=count,
        metavar="N",
        help=f"{both}: runs per property (Hypothesis' examples; default "
        + ", ".join(f"{s.default_runs:,} {s.name}" for s in RUNS_SEARCHES.values())
        + ")",
    )
    group.add_argument(
        "--seed", type=seed_number, metavar="S", help=f"{both}: the seed (default 0)"
    )
    group.add_argument(
        "--max-steps",
        type=count,
        metavar="N",
        help=f"{both}: steps per run at most (default: as many as any run can take)",
    )


def strategy_problem(args: argparse.Namespace) -> str | None:
    """Why the strategy flags given do not go together, or None."""
    if args.strategy != BREADTH_FIRST and args.symmetry:
        return "--symmetry applies to the breadth-first search only"
    if args.strategy in RUNS_SEARCHES:
        return None
    given = [f"--{name.replace('_', '-')}" for name in RANDOM_ONLY if getattr(args, name)]
    if given:
        return f"{', '.join(given)} applies to --strategy {' or '.join(RUNS_SEARCHES)} only"
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


def runs_search(result: RandomSearch) -> RunsSearch:
    """The search that gave this result."""
    return RUNS_SEARCHES[result.strategy]


def random_to_dict(result: RandomSearch) -> dict[str, Any]:
    """The JSON of a random or Hypothesis search, in the shape of `fencing check --json`.
    A Hypothesis search's property also says how long its run was after Hypothesis' own
    shrinking (`hypothesis`)."""
    search = runs_search(result)
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
            "never_exercised": None,  # a search by random runs never says a property is vacuous
        }
        if result.strategy == HYPOTHESIS:
            properties[name]["hypothesis"] = tried.hypothesis
    return {
        "strategy": result.strategy,
        "complete": False,
        "stopped_by": result.stopped_by or f"a {search.in_words} never shows that a property holds",
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


def unknown_words(runs: int, steps: int, strategy: str = RANDOM) -> str:
    """What an unviolated property's cell says after a random or Hypothesis search."""
    counted = f"{runs:,} run{'' if runs == 1 else 's'}, {steps:,} step{'' if steps == 1 else 's'}"
    return f"unknown ({RUNS_SEARCHES[strategy].in_words}: {counted})"


ENGINE_WORDS: Final = {
    "compiled": "on loops compiled from the rules",
    "interpreted": "on the step interpreter (the compiler was unavailable)",
}
"""How the report names what walked the runs."""


def violated_words(length: int, found: int | None, hypothesis: int | None = None) -> str:
    """What a violated property's cell says after a random or Hypothesis search: the run
    shown, the run the search found before shrinking it when that was longer, and (after a
    Hypothesis search) its length after Hypothesis' own shrinking, when that differs."""
    if found is None or found <= length:
        return f"VIOLATED (a run of {length} steps)"
    shrunk = f", shrunk from {found}"
    if hypothesis is not None and length < hypothesis < found:
        shrunk += f"; Hypothesis' shrinking reached {hypothesis}"
    return f"VIOLATED (a run of {length} steps{shrunk})"


def states_figure(result: RandomSearch) -> str:
    """The distinct states met as a figure (`≥ 100,000` when counting stopped there)."""
    return f"{'≥ ' if result.states_capped else ''}{result.states:,}"


def states_words(result: RandomSearch) -> str:
    """The distinct states a random search met (counting stops at a limit)."""
    if result.states_capped:
        return f"at least {result.states:,} distinct states met (counting stops there)"
    return f"{result.states:,} distinct states met"


def budget_words(result: RandomSearch) -> str:
    """The search's budget in words: runs per property and steps per run."""
    if result.strategy == HYPOTHESIS:
        return (
            f"up to {result.runs:,} runs per property (Hypothesis' examples) of at most "
            f"{result.max_steps:,} steps, and up to {SHRINK_CALLS:,} more to shrink a run"
        )
    return f"{result.runs:,} runs per property of at most {result.max_steps:,} steps"


def format_random(result: RandomSearch) -> str:
    """Human report: the budget and totals, a verdict per property, the runs found."""
    from fencing.output import format_trace

    search = runs_search(result)
    cut = f"; stopped early: {result.stopped_by}" if result.stopped_by else ""
    lines = [
        f"Design: {result.design.label()}",
        f"Bounds: {result.bounds.short()}",
        f"{search.title}, seed {result.seed}, {ENGINE_WORDS[result.engine]}: "
        f"{budget_words(result)}",
        f"{result.steps:,} steps taken, and {result.shrink_steps:,} more while shrinking; "
        f"{states_words(result)}; {result.seconds:.2f} s{cut}",
        "",
    ]
    for name, verdict in result.verdicts.items():
        title = f"{name} {BY_NAME[name].title}"
        tried = result.tried[name]
        status = (
            violated_words(len(verdict.actions), tried.found, tried.hypothesis)
            if verdict.actions is not None
            else unknown_words(tried.runs, tried.steps, result.strategy)
        )
        lines.append(f"  {title:<32} {status}")
    for name, verdict in result.verdicts.items():
        if verdict.actions:
            lines += ["", f"A run violating {name} ({search.drawn_by} and shrunk):"]
            lines += format_trace(replay(result.design, result.bounds, verdict.actions))
    return "\n".join(lines)


def search_by_runs(args: argparse.Namespace, design: Design, bounds: Bounds) -> RandomSearch:
    """The random or Hypothesis search `fencing check` asks for (their compiler and
    Hypothesis are imported only once a search runs)."""
    if args.strategy == HYPOTHESIS:
        search = hypothesis_search.hypothesis_search
    else:
        search = random_search.random_search
    return search(
        design,
        bounds,
        runs=args.runs or RUNS_SEARCHES[args.strategy].default_runs,
        max_steps=args.max_steps,
        max_seconds=args.max_seconds,
        seed=args.seed or 0,
    )


def run_random_check(args: argparse.Namespace) -> int:
    """`fencing check --strategy random` (or `hypothesis`): search the design by random runs
    and report."""
    from fencing.arguments import bounds_from_args, design_from_args

    result = search_by_runs(args, design_from_args(args), bounds_from_args(args))
    print(json.dumps(random_to_dict(result), indent=2) if args.json else format_random(result))
    return 0
