"""`fencing lab`: scripted scenarios and randomized runs on a real etcd, checked by the model.

Registered by `fencing.cli` through its COMMAND_MODULES. Bad input (an unknown scenario,
zero workers, a bad --etcd address, a --history that cannot be written, a file that is not
a history) gets one line and exit status 2, before any process starts; a run that cannot
be carried out (etcd does not start, a process it started dies, a time limit passes) gets
one line and exit status 1. A run that goes to its end also exits with 1 when reality
disagrees with the model's prediction or the history is refused (its witnesses contradict
each other, or the model's interpreter refuses an event); `fencing replay` of a lab history
exits with 1 when it refuses the history and 0 when the history is consistent and the model
allows it (violations the model predicts for the design are the lesson, not a failure).
Ctrl-C (SIGINT) and SIGTERM stop every process the lab
started and exit with 130 and 143 (128 plus the signal's number, as a shell reports a
process ended by that signal, so a supervisor can tell a Ctrl-C from a termination). A run
that stops early for any of these reasons still writes what it recorded, marked partial,
and says where.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from lab.runner import LabStopped

EXIT_USAGE: Final = 2
EXIT_FAILED: Final = 1
EXIT_SIGNALLED_BASE: Final = 128
"""A run stopped by a signal exits with 128 plus its number: 130 for SIGINT, 143 for SIGTERM."""
BAR_WIDTH: Final = 30
BAR_SECONDS: Final = 0.2
"""Shortest time between two redraws of the progress line."""


def register(commands: Any) -> None:
    """Add `fencing lab scenarios|run|random` to the `fencing` command."""
    from lab.lock_table import SERVICE_NAMES
    from lab.settings import DATABASES, EXPIRIES, MARKS, RECEIVERS, TOKENS, WORKLOADS

    def service_flag(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--lock-service",
            choices=SERVICE_NAMES,
            default="etcd",
            help="the lock service the workers take the lock from (default: etcd)",
        )

    lab = commands.add_parser(
        "lab", help="the live lab: real etcd, real processes, histories checked by the model"
    )
    sub = lab.add_subparsers(dest="lab_command", required=True)

    listing = sub.add_parser("scenarios", help="list the scripted scenarios and the model's view")
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    _database(listing, DATABASES)
    service_flag(listing)
    listing.set_defaults(run=run_scenarios)

    services = sub.add_parser(
        "services", help="the lock services: their tokens and the model's option for each"
    )
    services.add_argument("--json", action="store_true", help="print one JSON object")
    services.set_defaults(run=run_services)

    scripted = sub.add_parser("run", help="run one scripted scenario")
    scripted.add_argument("scenario", help="a name from `fencing lab scenarios`")
    scripted.add_argument("--receiver", choices=RECEIVERS)
    scripted.add_argument("--token", choices=TOKENS)
    scripted.add_argument("--hwm", choices=MARKS, help="where a fenced store keeps its mark")
    scripted.add_argument("--worker-check", action=argparse.BooleanOptionalAction, default=None)
    scripted.add_argument("--gap", type=float, metavar="S", help="fenced-nonatomic: check→write")
    _renewal(scripted, EXPIRIES, given=False)
    _database(scripted, DATABASES)
    _common(scripted)
    service_flag(scripted)
    scripted.set_defaults(run=run_scripted)

    randomized = sub.add_parser("random", help="workers loop while a seeded nemesis injects faults")
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
    randomized.add_argument("--token", choices=TOKENS, help="default: the service's first")
    randomized.add_argument("--writes", type=int, default=3, metavar="K", help="per grant")
    randomized.add_argument("--workload", choices=WORKLOADS, default="blind")
    randomized.add_argument("--hwm", choices=MARKS, default="durable")
    randomized.add_argument("--worker-check", action="store_true")
    randomized.add_argument("--gap", type=float, default=0.05, metavar="S")
    _renewal(randomized, EXPIRIES, given=True)
    _database(randomized, DATABASES)
    randomized.add_argument(
        "--faults",
        metavar="F[,F...]",
        help="the nemesis's fault kinds: pause, hold, store-kill, crash, member-kill, "
        "member-pause, skew (default: those that mean something for the settings)",
    )
    randomized.add_argument(
        "--members", type=int, default=1, metavar="N", help="etcd members: 1, or a cluster of 3"
    )
    _common(randomized)
    service_flag(randomized)
    randomized.set_defaults(run=run_randomized_cli)


def _renewal(parser: argparse.ArgumentParser, choices: tuple[str, ...], given: bool) -> None:
    """`--expiry lease|never` and `--keepalive S` (`given`: defaults that override the
    scenario's; else None, which keeps it)."""
    parser.add_argument(
        "--expiry",
        choices=choices,
        default="lease" if given else None,
        help="lease, or never: the lock key is put with no lease (the etcd recipe only)",
    )
    parser.add_argument(
        "--keepalive",
        type=float,
        default=0.0 if given else None,
        metavar="S",
        help="seconds between the holder's keepalives (0: none; not with ZooKeeper)",
    )


def _database(parser: argparse.ArgumentParser, choices: tuple[str, ...]) -> None:
    """`--database sqlite|postgres`: where the store keeps the data and the mark."""
    parser.add_argument(
        "--database",
        choices=choices,
        default="sqlite",
        help="the store's database: a SQLite file, or a real PostgreSQL the lab starts",
    )


def _require_database(name: str) -> None:
    """Refuse, in one line and before anything starts, a database this machine cannot run."""
    if name == "postgres":
        from lab.postgres import require

        require()


def _common(parser: argparse.ArgumentParser) -> None:
    """Flags every lab run has: JSON output, history file, etcd address, time limit."""
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--history",
        metavar="PATH",
        help="a file, or a folder to get a new file per run (default: the current folder)",
    )
    parser.add_argument("--etcd", metavar="URL", help="an etcd to use, http(s)://HOST:PORT")


STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _guarded() -> Iterator[None]:
    """Turn SIGINT and SIGTERM into an orderly stop, so the partial history is written and
    every process is stopped; a second signal while that happens is ignored (SIGKILL still
    works, and the children die with the lab)."""
    from lab.runner import Interrupted

    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach only the main thread: nothing to install
        return
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    stopping = [False]

    def stop(signum: int, _: Any) -> None:
        if not stopping[0]:
            stopping[0] = True
            raise Interrupted(signum)

    for signum in STOP_SIGNALS:
        signal.signal(signum, stop)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _say(line: str) -> None:
    """One line on standard error, on a line of its own (a progress line is cleared first)."""
    if sys.stderr.isatty():
        print(f"\r{'':<110}\r", end="", file=sys.stderr)
    print(line, file=sys.stderr)


def _stopped(stop: LabStopped) -> int:
    """Say why a run stopped early and where its partial history is; the exit status (1, or
    128 plus the signal's number)."""
    finished = "".join(f"; the finished run's history is in {path}" for path in stop.finished)
    said = f"{stop.reason}; every process the lab started was stopped; {stop.kept()}{finished}"
    if stop.signum is None:
        _say(f"fencing: error: {said}")
        return EXIT_FAILED
    _say(f"fencing: {said}")
    return EXIT_SIGNALLED_BASE + int(stop.signum)


def _main(body: Callable[[], int]) -> int:
    """Run a lab command; map its errors to one line and an exit status."""
    from lab.runner import Interrupted, LabStopped
    from lab.settings import LabError, LabInputError
    from model.design import DesignError

    try:
        with _guarded():
            return body()
    except (LabInputError, DesignError) as error:
        _say(f"fencing: error: {error}")
        return EXIT_USAGE
    except LabStopped as stop:
        return _stopped(stop)
    except LabError as error:
        _say(f"fencing: error: {error}")
        return EXIT_FAILED
    except KeyboardInterrupt as error:
        signum = error.signum if isinstance(error, Interrupted) else signal.SIGINT
        _say(
            f"fencing: interrupted by {signal.Signals(signum).name}; every process the lab "
            "started was stopped"
        )
        return EXIT_SIGNALLED_BASE + int(signum)


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
    from lab.settings import LabInputError

    def body() -> int:
        rows: list[dict[str, Any]] = []
        for item in SCENARIOS_LIST:
            try:
                settings = item.settings(database=args.database, lock_service=args.lock_service)
            except LabInputError as refused:  # a scenario this service cannot run
                rows.append({"name": item.name, "title": item.title, "refused": str(refused)})
                continue
            variants: list[dict[str, str]] = []
            for flags in item.variants:
                try:
                    other = item.settings(
                        database=args.database, lock_service=args.lock_service, **flags
                    )
                except LabInputError:
                    continue
                variants.append(
                    {
                        "flags": " ".join(f"--{k.replace('_', '-')} {v}" for k, v in flags.items()),
                        "settings": other.label(),
                        "prediction": predict(item, other).summary(),
                    }
                )
            rows.append(
                {
                    "name": item.name,
                    "title": item.title,
                    "story": item.story,
                    "defaults": settings.label(),
                    "prediction": predict(item, settings).summary(),
                    "variants": variants,
                }
            )
        if args.json:
            print(json.dumps({"scenarios": rows}, indent=2))
            return 0
        for row in rows:
            print(f"{row['name']:<17} {row['title']}")
            if "refused" in row:
                print(f"{'':<17} not with --lock-service {args.lock_service}: {row['refused']}")
                continue
            print(f"{'':<17} {row['defaults']}: {row['prediction']}")
            for variant in row["variants"]:
                print(f"{'':<17} with {variant['flags']}: {variant['prediction']}")
        return 0

    return _main(body)


def run_services(args: argparse.Namespace) -> int:
    """`fencing lab services`: each lock service, its token sources and what they map to."""
    from lab.lock_servers import missing_requirement
    from lab.lock_table import SERVICES_LIST

    def body() -> int:
        rows: list[dict[str, Any]] = [
            {
                "name": service.name,
                "words": service.words,
                "mirrors": service.mirrors,
                "tokens": [
                    {"name": t.name, "words": t.words, "model_token": t.model.value}
                    for t in service.tokens
                ],
                "missing": missing_requirement(service.name),
            }
            for service in SERVICES_LIST
        ]
        if args.json:
            print(json.dumps({"services": rows}, indent=2))
            return 0
        for row in rows:
            print(f"{row['name']:<14} {row['words']}")
            print(f"{'':<14} mirrors {row['mirrors']}")
            for token in row["tokens"]:
                print(f"{'':<14} --token {token['name']} (model: {token['model_token']})")
            if row["missing"]:
                print(f"{'':<14} not on this machine: {row['missing']}")
        return 0

    return _main(body)


def run_scripted(args: argparse.Namespace) -> int:
    """`fencing lab run SCENARIO`: one scripted scenario on a real etcd."""
    from lab.etcd import endpoint_from
    from lab.experiment import etcd_for, lock_service_for, run_scenario
    from lab.history_files import history_target
    from lab.scenarios import scenario

    def body() -> int:
        chosen = scenario(args.scenario)
        settings = chosen.settings(
            receiver=args.receiver,
            token=args.token,
            hwm=args.hwm,
            worker_check=args.worker_check,
            gap=args.gap,
            expiry=args.expiry,
            keepalive=args.keepalive,
            database=args.database,
            lock_service=args.lock_service,
        )
        _require_database(settings.database)
        _check_requirements(settings.lock_service)
        endpoint = endpoint_from(args.etcd)
        target = history_target(args.history)
        progress = _progress_bar(sys.stderr.isatty())
        with etcd_for(endpoint) as (etcd, _), lock_service_for(settings.lock_service) as server:
            report = run_scenario(etcd, chosen.name, settings, target, progress, service=server)
        print(json.dumps(report.to_dict(), indent=2) if args.json else report.text())
        return _verdict_status([report])

    return _main(body)


def _check_requirements(service: str) -> None:
    """Refuse, in one line, a lock service this machine cannot run (before anything starts)."""
    from lab.lock_servers import missing_requirement
    from lab.settings import LabInputError

    missing = missing_requirement(service)
    if missing:
        raise LabInputError(missing)


def _verdict_status(reports: list[Any]) -> int:
    """1 (with one line on standard error saying why) when a report is refused or reality
    differed from the model's prediction; 0 otherwise."""
    for report in reports:
        if report.refused:
            found = report.witnessed.impossible
            why = (
                f"the witnesses contradict each other ({found[0].reason})"
                if found
                else report.conformance.verdict()
            )
            _say(f"fencing: the history is refused: {why}")
            return EXIT_FAILED
        if report.prediction_agrees is False:
            _say("fencing: reality differed from the model's prediction")
            return EXIT_FAILED
    return 0


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


def _faults(args: argparse.Namespace, receivers: list[str]) -> str:
    """The fault kinds of `--faults`, or the default for the settings: one set for every
    receiver, so that all of them meet the same schedule."""
    from lab.nemesis import default_faults, parse_faults

    if args.faults is not None:
        return parse_faults(args.faults)
    keeps_mark = any(r in ("fenced", "fenced-nonatomic") for r in receivers)
    return default_faults(keeps_mark, args.hwm, args.members, args.worker_check)


def run_randomized_cli(args: argparse.Namespace) -> int:
    """`fencing lab random`: the randomized workload, one run per receiver, side by side."""
    from lab.etcd import endpoint_from
    from lab.experiment import etcd_for, lock_service_for, run_randomized
    from lab.history_files import history_target
    from lab.lock_table import SERVICES
    from lab.runner import LabStopped
    from lab.settings import Settings

    def body() -> int:
        receivers = _receivers(args.receiver)
        faults = _faults(args, receivers)
        token = args.token or SERVICES[args.lock_service].token_names[0]
        plans = [
            Settings(
                receiver=receiver,
                token=token,
                lock_service=args.lock_service,
                hwm=args.hwm if receiver in ("fenced", "fenced-nonatomic") else "durable",
                workload=args.workload,
                worker_check=args.worker_check,
                workers=args.workers,
                writes=args.writes,
                gap=args.gap,
                seconds=args.seconds,
                pause_rate=args.pause_rate,
                seed=args.seed,
                database=args.database,
                faults=faults,
                members=args.members,
                expiry=args.expiry,
                keepalive=args.keepalive,
            )
            for receiver in receivers
        ]
        from lab.nemesis import refusal

        problem = refusal(plans[0])
        if problem:
            from lab.settings import LabInputError

            raise LabInputError(problem)
        if args.seconds <= 0:
            from lab.settings import LabInputError

            raise LabInputError("--seconds must be above 0")
        _require_database(args.database)
        _check_requirements(args.lock_service)
        endpoint = endpoint_from(args.etcd)
        target = history_target(args.history, tuple(receivers))
        reports = []
        with (
            etcd_for(endpoint, args.members) as (etcd, _),
            lock_service_for(args.lock_service) as server,
        ):
            for settings in plans:
                progress = _progress_bar(sys.stderr.isatty())
                try:
                    reports.append(run_randomized(etcd, settings, target, progress, service=server))
                except LabStopped as stop:
                    stop.finished = [report.path for report in reports if report.path]
                    raise
        if args.json:
            objects = [report.to_dict() for report in reports]
            print(json.dumps(objects[0] if len(objects) == 1 else {"runs": objects}, indent=2))
            return _verdict_status(reports)
        for report in reports:
            print(report.text() + "\n")
        if len(reports) > 1:
            print(side_by_side(reports))
        return _verdict_status(reports)

    return _main(body)


def side_by_side(reports: list[Any]) -> str:
    """A table: per receiver, writes, accepted, rejected, each property's violations, and
    whether the history was refused."""
    from lab.checker import CHECKED

    header = (
        f"{'receiver':<18}{'writes':>7}{'accepted':>9}{'rejected':>9}"
        + "".join(f"{name:>6}" for name in CHECKED)
        + f"{'history':>10}"
    )
    lines = ["Side by side (same workload, the same nemesis schedule):", header]
    for report in reports:
        cells = "".join(f"{report.properties[name].count:>6}" for name in CHECKED)
        c = report.counts
        lines.append(
            f"{report.history.settings.receiver:<18}{c.operations:>7}{c.accepted:>9}"
            f"{c.rejected:>9}{cells}{'REFUSED' if report.refused else 'ok':>10}"
        )
    return "\n".join(lines)


def replay_history(raw: bytes, path: Path) -> int | None:
    """`fencing replay FILE` for a file already read (bounded): None when it is not a lab
    history (then it is a model trace). The history is measured, decoded and validated
    (`lab.history`); what is printed has every control character escaped."""
    from lab.conformance import start_words
    from lab.history import history_from_json, looks_like_history_file
    from lab.report import analyse
    from model.formats.terminal import terminal_safe

    if not looks_like_history_file(raw):
        return None

    def body() -> int:
        report = analyse(history_from_json(raw), path)
        lines = [report.text()]
        if not report.history.prediction:
            lines += ["", "The history, event by event:", *report.narrated()]
        trace = report.conformance.trace
        segment = report.conformance.segment
        if segment is not None:  # refused in a later segment: that segment's run is the story
            start, trace = segment
            lines.append(
                f"\nThe model's run of the segment from event {start + 1}, from the state the "
                f"one before ended in ({trace.design.label()}, {trace.bounds.short()}); there "
                f"{start_words(trace)}:"
            )
        elif trace is not None and trace.steps:
            lines.append(
                f"\nThe model's run of it ({trace.design.label()}, {trace.bounds.short()}):"
            )
        if trace is not None:
            for step in trace.steps:
                lines.append(f"  {step.number:>3}. [{step.actor}] {step.sentence}")
                lines.extend(f"       ✗ {reason.text}" for reason in step.reasons)
        print(terminal_safe("\n".join(lines)))
        return _verdict_status([report]) if report.refused else 0

    return _main(body)
