"""The `fencing` command: check a design, replay a trace, print the matrix, list presets, prove.

Bad input never produces a traceback: argparse refuses malformed flags, and a design,
bounds or trace error is printed as one line naming what to change, with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, Final

from fencing.budget import resolve_max_states
from fencing.matrix import MatrixRow, verdict_matrix
from model.design import (
    BOUND_LIMITS,
    HWM_KINDS,
    RECEIVERS,
    REFERENCE_BOUNDS,
    TOKENS,
    WORKLOADS,
    Bounds,
    Design,
    DesignError,
)
from model.explorer import DEFAULT_MAX_SECONDS, Exploration, Progress, explore
from model.itf import read_trace_file
from model.presets import PRESET_NAMES, PRESETS_LIST, preset
from model.properties import BY_NAME, PROPERTY_NAMES
from model.trace import Trace, TraceError, replay, trace_to_dict

EXIT_USAGE: Final = 2
COMMAND_MODULES: Final[tuple[str, ...]] = ("fencing.export",)
"""Modules of other engines that add subcommands: each has `register(subparsers)`, which
adds its parsers with `set_defaults(run=...)` and imports its heavy parts only when run."""
BUDGET_HELP: Final = "state budget (default: as many as the available memory holds)"
DESIGN_OPTIONS: Final = tuple(field.name for field in fields(Design))
"""Design options settable by a flag of the same name (underscores as dashes)."""


def _skew_list(text: str) -> tuple[int, ...]:
    """Parse `--skew 1,0,0` into offsets."""
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--skew takes whole numbers separated by commas, such as 1,0 (not {text!r})"
        ) from None


def add_design_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags for a preset and each design option (a flag given with a preset overrides it)."""
    group = parser.add_argument_group("design (a preset, then options that override it)")
    group.add_argument("--preset", choices=PRESET_NAMES, help="start from a named design")
    group.add_argument("--token", choices=TOKENS)
    group.add_argument("--receiver", choices=RECEIVERS)
    group.add_argument("--hwm", choices=HWM_KINDS)
    group.add_argument("--storage-restarts", type=int, metavar="N")
    group.add_argument("--coordinator-restarts", type=int, metavar="N")
    group.add_argument("--worker-check", action=argparse.BooleanOptionalAction, default=None)
    group.add_argument("--workload", choices=WORKLOADS)
    group.add_argument("--fenced-reads", action=argparse.BooleanOptionalAction, default=None)
    group.add_argument("--grant-fences", action=argparse.BooleanOptionalAction, default=None)
    group.add_argument("--skew", type=_skew_list, metavar="S1,S2,...")
    group.add_argument("--wrap", type=int, metavar="M", help="modulus of a wrapping token")


def add_bounds_arguments(parser: argparse.ArgumentParser, defaults: Bounds) -> None:
    """Flags for W, L, T, G, K with their allowed ranges in the help."""
    group = parser.add_argument_group("bounds")
    letters = {"workers": "W", "lease": "L", "horizon": "T", "grants": "G", "writes": "K"}
    for name, (low, high) in BOUND_LIMITS.items():
        group.add_argument(
            f"--{name}",
            type=int,
            default=getattr(defaults, name),
            metavar=letters[name],
            help=f"{low}..{high} (default {getattr(defaults, name)})",
        )


def design_from_args(args: argparse.Namespace) -> Design:
    """The design: the preset's (or the core's), with every given option flag applied."""
    base = preset(args.preset).design if args.preset else Design()
    given = {
        name: getattr(args, name) for name in DESIGN_OPTIONS if getattr(args, name) is not None
    }
    # Changing a preset's token or mark drops the restart count that only fitted the old one.
    if (
        "token" in given
        and given["token"] != "counter-volatile"
        and "coordinator_restarts" not in given
    ):
        given["coordinator_restarts"] = 0
    if "hwm" in given and given["hwm"] == "durable" and "storage_restarts" not in given:
        given["storage_restarts"] = 0
    return replace(base, **given)


def bounds_from_args(args: argparse.Namespace) -> Bounds:
    """The bounds given on the command line."""
    return Bounds(args.workers, args.lease, args.horizon, args.grants, args.writes)


def _progress_printer(enabled: bool) -> Any:
    """A progress line on standard error for long runs (only on a terminal)."""
    if not enabled:
        return None
    started = time.perf_counter()

    def show(progress: Progress) -> None:
        if time.perf_counter() - started < 0.5:
            return
        bar = "#" * min(30, progress.depth) + "-" * max(0, 30 - progress.depth)
        print(
            f"\r[{bar}] depth {progress.depth}  {progress.states:,} states  "
            f"{progress.transitions:,} transitions  {progress.seconds:.1f} s",
            end="",
            file=sys.stderr,
            flush=True,
        )

    return show


def _trace_steps(trace: Trace) -> list[dict[str, Any]]:
    """The JSON steps of a trace."""
    steps: list[dict[str, Any]] = trace_to_dict(trace)["steps"]
    return steps


def exploration_to_dict(result: Exploration) -> dict[str, Any]:
    """The `fencing check --json` object."""
    properties = {}
    for name, verdict in result.verdicts.items():
        trace = replay(result.design, result.bounds, verdict.actions) if verdict.actions else None
        properties[name] = {
            **verdict.to_dict(),
            "trace": _trace_steps(trace) if trace else None,
        }
    return {
        "complete": result.complete,
        "stopped_by": result.stopped_by,
        "states": result.states,
        "transitions": result.transitions,
        "depth": result.depth,
        "symmetry": result.symmetry,
        "seconds": round(result.seconds, 4),
        "design": result.design.to_dict(),
        "bounds": result.bounds.to_dict(),
        "properties": properties,
    }


def format_trace(trace: Trace) -> list[str]:
    """Numbered narration of a trace, with each violation's reason under its step."""
    lines = []
    for step in trace.steps:
        lines.append(f"  {step.number:>2}. [{step.actor}] {step.sentence}")
        lines.extend(f"      ✗ {reason}" for reason in step.reasons)
    return lines


def format_exploration(result: Exploration) -> str:
    """Human-readable report: counts, a verdict per property, narrated counterexamples."""
    counted = "orbits" if result.symmetry else "states"
    state = "complete" if result.complete else f"INCOMPLETE: {result.stopped_by}"
    lines = [
        f"Design: {result.design.label()}",
        f"Bounds: {result.bounds.short()}",
        f"Explored {result.states:,} {counted}, {result.transitions:,} transitions, depth "
        f"{result.depth} in {result.seconds:.2f} s ({state})",
        "",
    ]
    for name, verdict in result.verdicts.items():
        title = f"{name} {BY_NAME[name].title}"
        status = verdict.status.word
        if verdict.violated:
            status = f"VIOLATED (shortest run: {verdict.shortest} steps)"
        lines.append(f"  {title:<32} {status}")
    for name, verdict in result.verdicts.items():
        if verdict.actions:
            lines += ["", f"Shortest run violating {name}:"]
            lines += format_trace(replay(result.design, result.bounds, verdict.actions))
    return "\n".join(lines)


def run_check(args: argparse.Namespace) -> int:
    """`fencing check`: explore one design and report."""
    design, bounds = design_from_args(args), bounds_from_args(args)
    result = explore(
        design,
        bounds,
        symmetry=args.symmetry,
        max_states=args.max_states,
        max_seconds=args.max_seconds,
        progress=_progress_printer(not args.json and sys.stderr.isatty()),
    )
    if not args.json and sys.stderr.isatty():
        print(file=sys.stderr)
    print(
        json.dumps(exploration_to_dict(result), indent=2)
        if args.json
        else format_exploration(result)
    )
    return 0


def run_replay(args: argparse.Namespace) -> int:
    """`fencing replay FILE`: re-check and narrate a trace file."""
    trace = read_trace_file(Path(args.file))
    print(f"Design: {trace.design.label()}\nBounds: {trace.bounds.short()}\n")
    print("\n".join(format_trace(trace)))
    broken = ", ".join(trace.violated()) or "none"
    print(
        f"\nReplayed {len(trace.steps)} steps: every step is enabled; properties violated: {broken}"
    )
    return 0


def _matrix_line(row: MatrixRow) -> str:
    """One preset's row of the human matrix."""
    cells = "".join(f"{row.cell(name):>7}" for name in PROPERTY_NAMES)
    return (
        f"{row.preset.name:<28}{cells}{row.exploration.states:>9,}{row.exploration.seconds:>8.2f}"
    )


def run_matrix(args: argparse.Namespace) -> int:
    """`fencing matrix`: every preset x P1..P5 at one bounds."""
    bounds = bounds_from_args(args)
    if args.json:
        matrix = verdict_matrix(bounds, max_states=args.max_states, max_seconds=args.max_seconds)
        print(json.dumps(matrix.to_dict(), indent=2))
        return 0
    header = "".join(f"{name:>7}" for name in PROPERTY_NAMES)
    print(f"Bounds: {bounds.short()}   cells: holds, or the shortest violation's length")
    print(f"{'preset':<28}{header}{'states':>9}{'secs':>8}")
    started = time.perf_counter()
    verdict_matrix(
        bounds,
        max_states=args.max_states,
        max_seconds=args.max_seconds,
        on_row=lambda row: print(_matrix_line(row), flush=True),
    )
    print(f"{len(PRESETS_LIST)} presets in {time.perf_counter() - started:.2f} s")
    return 0


def run_presets(args: argparse.Namespace) -> int:
    """`fencing presets`: each preset with its one-line lesson."""
    for item in PRESETS_LIST:
        print(f"{item.name:<28} {item.lesson}")
        if args.verbose:
            print(f"{'':<28} mirrors: {item.mirrors}\n{'':<28} options: {item.design.label()}")
            print(f"{'':<28} source: {item.source}\n")
    return 0


def run_prove(args: argparse.Namespace) -> int:
    """`fencing prove`: bounded model checking and induction with z3."""
    from proofs.report import (
        format_receiver_report,
        format_report,
        prove,
        prove_receiver_only,
        receiver_report_to_json,
        report_to_json,
    )

    if args.receiver_only:
        receiver_report = prove_receiver_only()
        output = receiver_report_to_json(receiver_report) if args.json else None
        print(
            json.dumps(output, indent=2) if args.json else format_receiver_report(receiver_report)
        )
        return 0
    report = prove(design_from_args(args), bounds_from_args(args))
    print(json.dumps(report_to_json(report), indent=2) if args.json else format_report(report))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="fencing",
        description="Fencing Lab: explore, prove and explain fencing-token lock designs.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="explore every interleaving of a design")
    add_design_arguments(check)
    add_bounds_arguments(check, Bounds())
    check.add_argument(
        "--symmetry", action="store_true", help="count states up to renaming workers"
    )
    check.add_argument("--max-states", type=int, default=None, metavar="N", help=BUDGET_HELP)
    check.add_argument("--max-seconds", type=float, default=DEFAULT_MAX_SECONDS, metavar="S")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(run=run_check)

    replay_cmd = commands.add_parser(
        "replay", help="re-check and narrate a trace file (Fencing Lab JSON or ITF)"
    )
    replay_cmd.add_argument("file")
    replay_cmd.set_defaults(run=run_replay)

    matrix = commands.add_parser("matrix", help="every preset x every property")
    add_bounds_arguments(matrix, REFERENCE_BOUNDS)
    matrix.add_argument("--max-states", type=int, default=None, metavar="N", help=BUDGET_HELP)
    matrix.add_argument("--max-seconds", type=float, default=DEFAULT_MAX_SECONDS, metavar="S")
    matrix.add_argument("--json", action="store_true")
    matrix.set_defaults(run=run_matrix)

    presets_cmd = commands.add_parser("presets", help="list the presets and their lessons")
    presets_cmd.add_argument(
        "--verbose", "-v", action="store_true", help="what each mirrors, and sources"
    )
    presets_cmd.set_defaults(run=run_presets)

    prove_cmd = commands.add_parser("prove", help="z3: bounded model checking and induction")
    add_design_arguments(prove_cmd)
    add_bounds_arguments(prove_cmd, REFERENCE_BOUNDS)
    prove_cmd.add_argument(
        "--receiver-only", action="store_true", help="prove the receiver's rule alone"
    )
    prove_cmd.add_argument("--json", action="store_true")
    prove_cmd.set_defaults(run=run_prove)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `fencing` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if (getattr(args, "max_states", None) or 1) < 1 or getattr(args, "max_seconds", 1) <= 0:
        parser.error("--max-states and --max-seconds must be positive")
    try:
        if hasattr(args, "max_states"):
            args.max_states = resolve_max_states(args.max_states)
        code: int = args.run(args)
    except (DesignError, TraceError) as error:
        print(f"fencing: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    return code


if __name__ == "__main__":
    sys.exit(main())
