"""`fencing lab`: scripted scenarios and randomized runs on a real etcd, checked by the model.

Registered by `fencing.cli` through its COMMAND_MODULES. Bad input (an unknown scenario,
zero workers, a file that is not a history) gets one line and exit status 2; a run that
cannot be carried out (etcd does not start, a time limit passes) gets one line and exit
status 1; Ctrl-C stops every process the lab started and exits with 130.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

EXIT_USAGE: Final = 2
EXIT_FAILED: Final = 1
EXIT_INTERRUPTED: Final = 130
BAR_WIDTH: Final = 30
BAR_SECONDS: Final = 0.2
"""Shortest time between two redraws of the progress line."""


def register(commands: Any) -> None:
    """Add `fencing lab scenarios|run|random` to the `fencing` command."""
    from lab.settings import MARKS, RECEIVERS, TOKENS, WORKLOADS

    lab = commands.add_parser(
        "lab", help="the live lab: real etcd, real processes, histories checked by the model"
    )
    sub = lab.add_subparsers(dest="lab_command", required=True)

    listing = sub.add_parser("scenarios", help="list the scripted scenarios and the model's view")
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    listing.set_defaults(run=run_scenarios)

    scripted = sub.add_parser("run", help="run one scripted scenario")
    scripted.add_argument("scenario", help="a name from `fencing lab scenarios`")
    scripted.add_argument("--receiver", choices=RECEIVERS)
    scripted.add_argument("--token", choices=TOKENS)
    scripted.add_argument("--hwm", choices=MARKS, help="where a fenced store keeps its mark")
    scripted.add_argument("--worker-check", action=argparse.BooleanOptionalAction, default=None)
    scripted.add_argument("--gap", type=float, metavar="S", help="fenced-nonatomic: check→write")
    _common(scripted)
    scripted.set_defaults(run=run_scripted)

    randomized = sub.add_parser("random", help="workers loop while a nemesis pauses them")
    randomized.add_argument("--workers", type=int, default=3, metavar="W")
    randomized.add_argument("--seconds", type=float, default=10.0, metavar="D")
    randomized.add_argument("--pause-rate", type=float, default=2.0, metavar="R", help="per second")
    randomized.add_argument("--seed", type=int, default=1, metavar="N")
    randomized.add_argument(
        "--receiver",
        default="none",
        metavar="R[,R...]",
        help=f"one or more of {', '.join(RECEIVERS)}, compared side by side",
    )
    randomized.add_argument("--token", choices=TOKENS, default="create-revision")
    randomized.add_argument("--writes", type=int, default=3, metavar="K", help="per grant")
    randomized.add_argument("--workload", choices=WORKLOADS, default="blind")
    randomized.add_argument("--hwm", choices=MARKS, default="durable")
    randomized.add_argument("--worker-check", action="store_true")
    randomized.add_argument("--gap", type=float, default=0.05, metavar="S")
    _common(randomized)
    randomized.set_defaults(run=run_randomized_cli)


def _common(parser: argparse.ArgumentParser) -> None:
    """Flags every lab run has: JSON output, history file, etcd address, time limit."""
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--history", type=Path, metavar="FILE", help="where to write the history")
    parser.add_argument("--etcd", metavar="URL", help="an etcd to use, http://HOST:PORT")


@contextmanager
def _guarded() -> Iterator[None]:
    """Turn SIGTERM into an orderly exit, so the runs' clean-up still happens."""
    previous = signal.getsignal(signal.SIGTERM)

    def stop(*_: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(body: Callable[[], int]) -> int:
    """Run a lab command; map its errors to one line and an exit status."""
    from lab.settings import LabError, LabInputError
    from model.design import DesignError

    try:
        with _guarded():
            return body()
    except (LabInputError, DesignError) as error:
        print(f"fencing: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except LabError as error:
        print(f"fencing: error: {error}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("fencing: interrupted; every process the lab started was stopped", file=sys.stderr)
        return EXIT_INTERRUPTED


def _progress_bar(enabled: bool) -> Callable[[float, str], None] | None:
    """A progress line on standard error (only on a terminal)."""
    if not enabled:
        return None
    started = time.monotonic()
    shown = [0.0]

    def show(fraction: float, words: str) -> None:
        now = time.monotonic()
        if fraction < 1 and now - shown[0] < BAR_SECONDS:
            return
        shown[0] = now
        done = int(BAR_WIDTH * max(0.0, min(1.0, fraction)))
        bar = "#" * done + "-" * (BAR_WIDTH - done)
        line = f"\r[{bar}] {time.monotonic() - started:5.1f} s  {words}"
        print(f"{line[:110]:<110}", end="" if fraction < 1 else "\n", file=sys.stderr, flush=True)

    return show


def run_scenarios(args: argparse.Namespace) -> int:
    """`fencing lab scenarios`: each scenario, its default design and the model's prediction."""
    from lab.scenarios import SCENARIOS_LIST, predict

    def body() -> int:
        rows = []
        for item in SCENARIOS_LIST:
            settings = item.settings()
            rows.append(
                {
                    "name": item.name,
                    "title": item.title,
                    "story": item.story,
                    "defaults": settings.label(),
                    "prediction": predict(item, settings).summary(),
                }
            )
        if args.json:
            print(json.dumps({"scenarios": rows}, indent=2))
            return 0
        for row in rows:
            print(f"{row['name']:<17} {row['title']}")
            print(f"{'':<17} {row['defaults']}: {row['prediction']}")
        return 0

    return _main(body)


def run_scripted(args: argparse.Namespace) -> int:
    """`fencing lab run SCENARIO`: one scripted scenario on a real etcd."""
    from lab.etcd import endpoint_from
    from lab.experiment import default_history_path, etcd_for, run_scenario
    from lab.scenarios import scenario

    def body() -> int:
        chosen = scenario(args.scenario)
        settings = chosen.settings(
            receiver=args.receiver,
            token=args.token,
            hwm=args.hwm,
            worker_check=args.worker_check,
            gap=args.gap,
        )
        endpoint = endpoint_from(args.etcd)
        path = args.history or default_history_path(chosen.name, settings)
        progress = _progress_bar(sys.stderr.isatty())
        with etcd_for(endpoint) as (etcd, _):
            report = run_scenario(etcd, chosen.name, settings, path, progress)
        print(json.dumps(report.to_dict(), indent=2) if args.json else report.text())
        return 0

    return _main(body)


def _receivers(text: str) -> list[str]:
    """The receivers of `--receiver a,b`, each checked."""
    from lab.settings import RECEIVERS, LabInputError

    chosen = [part.strip() for part in text.split(",") if part.strip()]
    for name in chosen:
        if name not in RECEIVERS:
            raise LabInputError(
                f"receiver {name[:30]!r} is not known: choose from {', '.join(RECEIVERS)}"
            )
    if not chosen:
        raise LabInputError("--receiver needs at least one receiver")
    return list(dict.fromkeys(chosen))


def _path_for(base: Path | None, receiver: str, several: bool, default: Path) -> Path:
    """The history file of one receiver (with several, the receiver goes into the name)."""
    if base is None:
        return default
    return base.with_name(f"{base.stem}-{receiver}{base.suffix}") if several else base


def run_randomized_cli(args: argparse.Namespace) -> int:
    """`fencing lab random`: the randomized workload, one run per receiver, side by side."""
    from lab.etcd import endpoint_from
    from lab.experiment import default_history_path, etcd_for, run_randomized
    from lab.settings import Settings

    def body() -> int:
        receivers = _receivers(args.receiver)
        plans = [
            Settings(
                receiver=receiver,
                token=args.token,
                hwm=args.hwm if receiver in ("fenced", "fenced-nonatomic") else "durable",
                workload=args.workload,
                worker_check=args.worker_check,
                workers=args.workers,
                writes=args.writes,
                gap=args.gap,
                seconds=args.seconds,
                pause_rate=args.pause_rate,
                seed=args.seed,
            )
            for receiver in receivers
        ]
        if args.seconds <= 0:
            from lab.settings import LabInputError

            raise LabInputError("--seconds must be above 0")
        endpoint = endpoint_from(args.etcd)
        reports = []
        with etcd_for(endpoint) as (etcd, _):
            for settings in plans:
                path = _path_for(
                    args.history,
                    settings.receiver,
                    len(plans) > 1,
                    default_history_path("random", settings),
                )
                progress = _progress_bar(sys.stderr.isatty())
                reports.append(run_randomized(etcd, settings, path, progress))
        if args.json:
            objects = [report.to_dict() for report in reports]
            print(json.dumps(objects[0] if len(objects) == 1 else {"runs": objects}, indent=2))
            return 0
        for report in reports:
            print(report.text() + "\n")
        if len(reports) > 1:
            print(side_by_side(reports))
        return 0

    return _main(body)


def side_by_side(reports: list[Any]) -> str:
    """A table: per receiver, writes, accepted, rejected and each property's violations."""
    from lab.checker import CHECKED

    header = f"{'receiver':<18}{'writes':>7}{'accepted':>9}{'rejected':>9}" + "".join(
        f"{name:>6}" for name in CHECKED
    )
    lines = ["Side by side (same workload, same nemesis settings):", header]
    for report in reports:
        cells = "".join(f"{report.properties[name].count:>6}" for name in CHECKED)
        c = report.counts
        lines.append(
            f"{report.history.settings.receiver:<18}{c.operations:>7}{c.accepted:>9}"
            f"{c.rejected:>9}{cells}"
        )
    return "\n".join(lines)


def replay_history(raw: bytes, path: Path) -> int | None:
    """`fencing replay FILE` for a file already read (bounded): None when it is not a lab
    history (then it is a model trace). The history is measured, decoded and validated
    (`lab.history`); what is printed has every control character escaped."""
    from fencing.cli import terminal_safe
    from lab.history import history_from_json, looks_like_history_file
    from lab.report import analyse

    if not looks_like_history_file(raw):
        return None

    def body() -> int:
        report = analyse(history_from_json(raw), path)
        lines = [report.text()]
        if not report.history.prediction:
            lines += ["", "The history, event by event:", *report.narrated()]
        trace = report.conformance.trace
        if trace is not None and trace.steps:
            lines.append(
                f"\nThe model's run of it ({trace.design.label()}, {trace.bounds.short()}):"
            )
            for step in trace.steps:
                lines.append(f"  {step.number:>3}. [{step.actor}] {step.sentence}")
                lines.extend(f"       ✗ {reason.text}" for reason in step.reasons)
        print(terminal_safe("\n".join(lines)))
        return 0

    return _main(body)
