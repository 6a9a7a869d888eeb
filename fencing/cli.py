"""The `fencing` command: check a design, replay a trace, print the matrix, list presets, prove.

Bad input never produces a traceback: argparse refuses malformed flags, and a design,
bounds or trace error is printed as one line naming what to change, with exit status 2.
Output that cannot be written (a full device, a closed standard output) is one line and
exit status 74; a reader that goes away (`| head`) ends the command quietly (141); Ctrl-C
stops any command with one line and exit status 130, never with a report.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, NoReturn

from fencing import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_IO_ERROR,
    EXIT_USAGE,
    INTERRUPTED,
)
from fencing.arguments import (
    add_bounds_arguments,
    add_budget_arguments,
    add_design_arguments,
    bounds_from_args,
    design_from_args,
    whole_count,
)
from fencing.budget import resolve_max_states
from fencing.interrupts import sigint_recorded
from fencing.matrix import Matrix, MatrixRow, verdict_matrix
from fencing.output import OutputError, checked_stdout, discard_stdout, format_trace
from fencing.strategies import (
    REFERENCE,
    RUNS_SEARCHES,
    add_strategy_arguments,
    reference_exploration,
    run_random_check,
    strategy_problem,
)
from model.check.explorer import DEFAULT_MAX_SECONDS, Exploration, Progress, explore
from model.check.search import OnLevel, SearchOptions, Visitor
from model.claims import lesson_caption
from model.design import REFERENCE_BOUNDS, DesignError
from model.formats.reading import REPLAY_LIMITS
from model.formats.terminal import terminal_safe
from model.formats.trace import (
    Trace,
    TraceError,
    read_limited,
    replay,
    trace_to_dict,
)
from model.presets import PRESETS_LIST, matching
from model.properties import BY_NAME, PROPERTY_NAMES
from model.verdicts import never_exercised_notes, verdict_words
from proofs.budget import PROVE_MAX_SECONDS, PROVE_MAX_STATES

COMMAND_MODULES: Final[tuple[str, ...]] = (
    "lab.cli",
    "fencing.export",
    "fencing.advise",
    "fencing.exercises_cli",
)
"""Modules of other engines that add subcommands: each has `register(subparsers)`, which
adds its parsers with `set_defaults(run=...)` and imports its heavy parts only when run."""


def _progress_printer(enabled: bool) -> list[Visitor]:
    """A progress line on standard error for long runs (only on a terminal)."""
    if not enabled:
        return []
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

    return [OnLevel(show)]


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
            **verdict.to_dict(result.design),
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


def lesson_lines(result: Exploration) -> list[str]:
    """The lesson of the preset whose design this is, with where it shows if not here."""
    found = matching(result.design)
    if found is None:
        return []
    caption = lesson_caption(found.as_lesson(), result.bounds, result.verdicts)
    return [
        "",
        *textwrap.wrap(
            f"Lesson of {found.name}: {caption}",
            width=92,
            break_long_words=False,
            break_on_hyphens=False,
        ),
    ]


def format_exploration(result: Exploration) -> str:
    """Human-readable report: counts, a verdict per property, the preset's lesson (with where
    it shows when these bounds do not show it), narrated counterexamples."""
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
        status = verdict_words(verdict, result.design)
        if verdict.violated:
            status = f"VIOLATED (shortest run: {verdict.shortest} steps)"
        lines.append(f"  {title:<32} {status}")
    lines += lesson_lines(result)
    for name, verdict in result.verdicts.items():
        if verdict.actions:
            lines += ["", f"Shortest run violating {name}:"]
            lines += format_trace(replay(result.design, result.bounds, verdict.actions))
    return "\n".join(lines)


def run_check(args: argparse.Namespace) -> int:
    """`fencing check`: explore one design (breadth-first, or by random runs) and report."""
    if (problem := strategy_problem(args)) is not None:
        print(f"fencing check: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.strategy in RUNS_SEARCHES:
        return run_random_check(args)
    design, bounds = design_from_args(args), bounds_from_args(args)
    if args.strategy == REFERENCE:
        result = reference_exploration(args, design, bounds)
    else:
        result = explore(
            design,
            bounds,
            SearchOptions(
                symmetry=args.symmetry, max_states=args.max_states, max_seconds=args.max_seconds
            ),
            visitors=_progress_printer(not args.json and sys.stderr.isatty()),
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
    path = Path(args.file)
    raw = read_limited(path, REPLAY_LIMITS)
    handled = importlib.import_module("lab.cli").replay_history(raw, path)
    if handled is not None:
        return int(handled)
    from model.formats.itf import trace_from_any_json  # the ITF reader only when a file is replayed

    trace = trace_from_any_json(raw)
    _print_title(trace)
    print(f"Design: {trace.design.label()}\nBounds: {trace.bounds.short()}\n")
    print("\n".join(format_trace(trace)))
    broken = ", ".join(trace.violated()) or "none"
    print(
        f"\nReplayed {len(trace.steps)} steps: every step is enabled; properties violated: {broken}"
    )
    return 0


def _matrix_line(row: MatrixRow) -> str:
    """One preset's row of the human matrix."""
    cells = "".join(f"{row.cell(name):>9}" for name in PROPERTY_NAMES)
    found = row.exploration
    line = f"{row.preset.name:<28}{cells}{found.states:>9,}{found.seconds:>8.2f}"
    return line if found.complete else f"{line}  stopped: {found.stopped_by}"


def run_matrix(args: argparse.Namespace) -> int:
    """`fencing matrix`: every preset x every property at one bounds."""
    bounds = bounds_from_args(args)
    if args.json:
        matrix = verdict_matrix(bounds, max_states=args.max_states, max_seconds=args.max_seconds)
        print(json.dumps(matrix.to_dict(), indent=2))
        return 0
    header = "".join(f"{name:>9}" for name in PROPERTY_NAMES)
    print(
        f"Bounds: {bounds.short()}   cells: the shortest violation's length, or holds, "
        "vacuous (never exercised), unknown (budget reached)"
    )
    print(f"{'preset':<28}{header}{'states':>9}{'secs':>8}")
    started = time.perf_counter()
    matrix = verdict_matrix(
        bounds,
        max_states=args.max_states,
        max_seconds=args.max_seconds,
        on_row=lambda row: print(_matrix_line(row), flush=True),
    )
    print(f"{len(PRESETS_LIST)} presets in {time.perf_counter() - started:.2f} s")
    if notes := _never_exercised_lines(matrix):
        print("\n".join(["", *notes]))
    return 0


def _never_exercised_lines(matrix: Matrix) -> list[str]:
    """Why each vacuous cell of the matrix was never exercised, one wrapped line per reason."""
    notes = never_exercised_notes(
        [(row.preset.name, row.exploration.design, row.exploration.verdicts) for row in matrix.rows]
    )
    return [
        line
        for note in notes
        for line in textwrap.wrap(note, width=92, subsequent_indent="    ", break_on_hyphens=False)
    ]


def _print_title(trace: Trace) -> None:
    """A trace file's title, made safe for the terminal."""
    if trace.title:
        print(f"Title: {terminal_safe(trace.title)}")


def run_presets(args: argparse.Namespace) -> int:
    """`fencing presets`: each preset with its one-line lesson (or every claim, as JSON)."""
    if args.json:
        print(json.dumps([item.to_dict() for item in PRESETS_LIST], indent=2, ensure_ascii=False))
        return 0
    for item in PRESETS_LIST:
        print(f"{item.name:<28} {item.lesson}")
        if args.verbose:
            print(f"{'':<28} mirrors: {item.mirrors}\n{'':<28} options: {item.design.label()}")
            print(f"{'':<28} source: {item.source}\n")
    return 0


def run_prove(args: argparse.Namespace) -> int:
    """`fencing prove`: bounded model checking and induction with z3 (Ctrl-C stops z3 at once)."""
    from fencing.interrupts import z3_stops_on_ctrl_c
    from proofs.report import (
        format_receiver_report,
        format_report,
        prove,
        prove_receiver_only,
        receiver_report_to_json,
        report_to_json,
    )

    if args.receiver_only:
        with z3_stops_on_ctrl_c():
            receiver_report = prove_receiver_only()
        output = receiver_report_to_json(receiver_report) if args.json else None
        print(
            json.dumps(output, indent=2) if args.json else format_receiver_report(receiver_report)
        )
        return 0
    with z3_stops_on_ctrl_c():
        report = prove(
            design_from_args(args),
            bounds_from_args(args),
            max_states=args.max_states,
            max_seconds=args.max_seconds,
        )
    print(json.dumps(report_to_json(report), indent=2) if args.json else format_report(report))
    return 0


class BriefParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line that says what to change, not the usage."""

    def error(self, message: str) -> NoReturn:
        """Print `fencing check: error: … (see fencing check --help)` and exit with status 2."""
        self.exit(
            EXIT_USAGE, f"{self.prog}: error: {terminal_safe(message)} (see {self.prog} --help)\n"
        )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = BriefParser(
        prog="fencing",
        description="Fencing Lab: explore, prove and explain fencing-token lock designs.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="explore every interleaving of a design")
    add_design_arguments(check)
    add_bounds_arguments(check, REFERENCE_BOUNDS)
    check.add_argument(
        "--symmetry", action="store_true", help="count states up to renaming workers"
    )
    add_budget_arguments(check, None, DEFAULT_MAX_SECONDS)
    add_strategy_arguments(check, whole_count)
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(run=run_check)

    replay_cmd = commands.add_parser(
        "replay", help="re-check and narrate a trace file (Fencing Lab JSON or ITF)"
    )
    replay_cmd.add_argument("file")
    replay_cmd.set_defaults(run=run_replay)

    matrix = commands.add_parser("matrix", help="every preset x every property")
    add_bounds_arguments(matrix, REFERENCE_BOUNDS)
    add_budget_arguments(matrix, None, DEFAULT_MAX_SECONDS, whole_table=True)
    matrix.add_argument("--json", action="store_true")
    matrix.set_defaults(run=run_matrix)

    presets_cmd = commands.add_parser("presets", help="list the presets and their lessons")
    presets_cmd.add_argument(
        "--verbose", "-v", action="store_true", help="what each mirrors, and sources"
    )
    presets_cmd.add_argument(
        "--json",
        action="store_true",
        help="name, mirrors, lesson, source, design and the claims behind each lesson",
    )
    presets_cmd.set_defaults(run=run_presets)

    prove_cmd = commands.add_parser("prove", help="z3: bounded model checking and induction")
    add_design_arguments(prove_cmd)
    add_bounds_arguments(prove_cmd, REFERENCE_BOUNDS)
    prove_cmd.add_argument(
        "--receiver-only", action="store_true", help="prove the receiver's rule alone"
    )
    add_budget_arguments(prove_cmd, PROVE_MAX_STATES, PROVE_MAX_SECONDS)
    prove_cmd.add_argument("--json", action="store_true")
    prove_cmd.set_defaults(run=run_prove)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(commands)
    return parser


def _stdout_closed(args: argparse.Namespace) -> bool:
    """Whether the command would print to a standard output that was closed (`>&-`)."""
    return sys.stdout is None and not getattr(args, "output", None)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `fencing` console script."""
    with sigint_recorded() as interrupts:
        try:
            with checked_stdout(interrupts):
                code = _run(argv)
                if code != EXIT_INTERRUPTED:
                    interrupts.check()  # a Ctrl-C whose KeyboardInterrupt was dropped
                return code
        except (DesignError, TraceError) as error:
            print(f"fencing: error: {terminal_safe(str(error))}", file=sys.stderr)
            return EXIT_USAGE
        except OutputError as error:
            discard_stdout()
            print(f"fencing: error: {terminal_safe(str(error))}", file=sys.stderr)
            return EXIT_IO_ERROR
        except BrokenPipeError:
            # The reader went away (`fencing matrix | head`): stop quietly, as other tools do.
            discard_stdout()
            return EXIT_BROKEN_PIPE
        except KeyboardInterrupt:
            return _interrupted()
        except Exception:
            # A KeyboardInterrupt that native code (numba, z3) turned into another error.
            if not interrupts.received.is_set():
                raise
            return _interrupted()


def _interrupted() -> int:
    """Say that Ctrl-C stopped the command, on a line of its own (after `^C` or progress)."""
    on_terminal = sys.stderr is not None and sys.stderr.isatty()
    print(("\n" if on_terminal else "") + INTERRUPTED, file=sys.stderr)
    return EXIT_INTERRUPTED


def _run(argv: Sequence[str] | None) -> int:
    """Parse the command line and run the command."""
    args = build_parser().parse_args(argv)
    if _stdout_closed(args):
        raise OutputError("cannot write the output: standard output is closed")
    if hasattr(args, "max_states"):
        args.max_states = resolve_max_states(args.max_states)
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
