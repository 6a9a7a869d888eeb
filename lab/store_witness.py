"""The store's life: every decision it recorded falls inside one of its incarnations.

The storage process records its own start (`storage-start`: its incarnation number and its
process ID, as the process itself reads it); the nemesis records each kill
(`storage-kill`: the incarnation it killed and the process ID it sent SIGKILL to, recorded
once the process is gone, with the time the kill was asked for). So the store's life is a
chain of incarnations 1, 2, 3, … each running from its start to its kill (the last one to
the end of the run, when the lab stops it before its final read). Refusals:

- `store-life`: an incarnation that starts out of turn (a number skipped or repeated, or
  started while the previous one still ran), or a kill of an incarnation that was not the
  one running;
- `store-pid`: the process killed is not the one that started that incarnation, or the next
  incarnation is the very same process (a kill leaves another process behind);
- `store-down`: a decision (or a hold) the store recorded while none of its incarnations
  ran (before the first start, between a kill and the next start, or after the run's
  final read).
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.contradiction import Impossible
from lab.events import Event
from lab.history import Timeline

STORE_STEPS = ("deliver", "check", "apply", "hold", "unhold")
"""What the storage process records while it serves."""


@dataclass
class _Incarnation:
    """One storage process: its number, process ID, and when it started and was killed."""

    number: int
    pid: int | None
    started: float
    killed: float | None = None


def _refuse(code: str, e: Event, words: str) -> Impossible:
    """A contradiction at a raw event."""
    return Impossible(code, None, float(e["t"]), words)


def store_life_checks(line: Timeline) -> list[Impossible]:
    """Every check of the module docstring."""
    found: list[Impossible] = []
    running: _Incarnation | None = None
    previous: _Incarnation | None = None
    ended_at: float | None = None
    for e in sorted(line.history.events, key=lambda e: e["t"]):
        kind = e["kind"]
        if kind == "storage-start":
            number = int(e.get("incarnation") or 0)
            pid = e.get("pid")
            expected = previous.number + 1 if previous is not None else 1
            if running is not None or number != expected:
                why = (
                    f"while incarnation {running.number} still ran (it was never killed)"
                    if running is not None
                    else f"but the next incarnation is number {expected}"
                )
                found.append(
                    _refuse(
                        "store-life",
                        e,
                        f"the storage process started as incarnation {number} at "
                        f"{e['t']:.3f} s, {why}",
                    )
                )
            if previous is not None and pid is not None and pid == previous.pid:
                found.append(
                    _refuse(
                        "store-pid",
                        e,
                        f"incarnation {number} of the storage process started at {e['t']:.3f} s "
                        f"as process {pid}, the very process the kill of incarnation "
                        f"{previous.number} left dead",
                    )
                )
            running = _Incarnation(number, pid if isinstance(pid, int) else None, float(e["t"]))
        elif kind == "storage-kill":
            number = int(e.get("incarnation") or 0)
            if running is None or running.number != number:
                found.append(
                    _refuse(
                        "store-life",
                        e,
                        f"the nemesis killed incarnation {number} of the storage process at "
                        f"{e['t']:.3f} s, but "
                        + (
                            f"incarnation {running.number} was the one running"
                            if running is not None
                            else "none was running"
                        ),
                    )
                )
            elif e.get("pid") is not None and running.pid is not None and e["pid"] != running.pid:
                found.append(
                    _refuse(
                        "store-pid",
                        e,
                        f"the nemesis killed process {e['pid']} at {e['t']:.3f} s as "
                        f"incarnation {number} of the storage process, which started as "
                        f"process {running.pid}",
                    )
                )
            if running is not None:
                running.killed = float(e["t"])
                previous, running = running, None
        elif kind == "final-read":
            ended_at = float(e["t"])
        elif (
            kind in STORE_STEPS
            and e.get("source") == "storage"
            and (running is None or (ended_at is not None and float(e["t"]) > ended_at))
        ):
            found.append(
                _refuse(
                    "store-down",
                    e,
                    f"the store recorded '{kind}' of request {e.get('request')} at "
                    f"{e['t']:.3f} s {_when_down(running, previous)}",
                )
            )
    return found


def _when_down(running: _Incarnation | None, previous: _Incarnation | None) -> str:
    """When a step the store recorded fell outside its incarnations, in words."""
    if running is not None:
        return "after the run's final read, when the lab had stopped it"
    if previous is not None and previous.killed is not None:
        return (
            f"while no storage process ran (incarnation {previous.number} was killed at "
            f"{previous.killed:.3f} s)"
        )
    return "while no storage process ran"
