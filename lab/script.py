"""A scripted scenario written once: directives from which the real run and the model's plan
are both derived.

Each directive is one thing that happens in the story: a worker's action (acquire, a
write, a release, a keepalive held for a while, a kill), a fault of the nemesis (pause,
resume, a storage restart), a store directive (hold a request in flight, let it go) or a
timing directive (wait until etcd revoked a lease). `drive` carries them out on the real
processes through the `Driver`; `plan` turns them into the model's steps in the order
their effects happen, tracking what the real run does to the timing: a write told to a
paused worker is sent only when it resumes, a write held at the store is received only
when it is let go (and a write held between check and apply is checked at once and
applied when let go), and a read-modify-write's write is preceded by its read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from lab.runner import Driver

PlanStep = tuple[str, int]
"""A planned step: `acquire`, `send`, `deliver`, `check`, `apply`, `release`, `expire` (tick
until the worker's lease is over), `restart` (the store), `hold` (one tick passes), `renew`
(a keepalive), `crash` (the worker is killed) or `wait` (a worker without a grant waits
L + 1 ticks in vain), and the worker (0: none)."""

KINDS: Final = (
    "acquire",
    "write",
    "write-later",
    "outcome",
    "release",
    "pause",
    "resume",
    "hold",
    "wait-held",
    "unhold",
    "lease-end",
    "restart",
    "keep",
    "crash",
    "try-acquire",
)
"""Directive kinds, each described at `Directive`."""


@dataclass(frozen=True)
class Directive:
    """One step of a scripted scenario.

    `acquire`, `write`, `release`: the worker does it and the run waits for it;
    `write-later`: the worker is told to write without waiting (it is paused, or its
    request will be held), and `outcome` waits for that write's answer; `pause`, `resume`:
    SIGSTOP, SIGCONT; `hold` (with `phase` deliver or apply, `op` read or write): the store
    will hold the worker's next such request, `wait-held` waits until it does, `unhold`
    lets it go; `lease-end`: wait until etcd revoked the worker's lease; `restart`: kill
    the store and start it again; `keep` (with `ttls`): the holder keeps its lock that many
    TTLs while its keepalives run; `crash`: SIGKILL; `try-acquire` (with `after`, the
    previous holder, and `ttls` plus `seconds`): ask for the lock for a while, a lock never
    freed being an outcome.
    """

    kind: str
    worker: int = 0
    phase: str = "deliver"
    op: str = "write"
    ttls: float = 0.0
    seconds: float = 0.0
    after: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown directive {self.kind!r}")


def acquire(w: int) -> Directive:
    """W takes the (free) lock."""
    return Directive("acquire", w)


def write(w: int) -> Directive:
    """W writes once (read, then write, in read-modify-write)."""
    return Directive("write", w)


def write_later(w: int) -> Directive:
    """W is told to write; its answer is awaited by `outcome(w)`."""
    return Directive("write-later", w)


def outcome(w: int) -> Directive:
    """Wait for the answer of W's write told earlier."""
    return Directive("outcome", w)


def release(w: int) -> Directive:
    """W releases the lock (if it still holds its grant)."""
    return Directive("release", w)


def pause(w: int) -> Directive:
    """The nemesis pauses W."""
    return Directive("pause", w)


def resume(w: int) -> Directive:
    """The nemesis resumes W."""
    return Directive("resume", w)


def hold(w: int, phase: str = "deliver", op: str = "write") -> Directive:
    """The store will hold W's next request of kind `op` at `phase`."""
    return Directive("hold", w, phase=phase, op=op)


def wait_held(w: int) -> Directive:
    """Wait until the store holds W's request."""
    return Directive("wait-held", w)


def unhold(w: int) -> Directive:
    """Let W's held request go on."""
    return Directive("unhold", w)


def lease_end(w: int) -> Directive:
    """Wait until etcd has revoked W's lease and deleted its key."""
    return Directive("lease-end", w)


def restart() -> Directive:
    """Kill the storage process and start it again."""
    return Directive("restart")


def keep(w: int, ttls: float) -> Directive:
    """W keeps its lock for `ttls` lease TTLs (its keepalives, if any, run meanwhile)."""
    return Directive("keep", w, ttls=ttls)


def crash(w: int) -> Directive:
    """The nemesis kills W."""
    return Directive("crash", w)


def try_acquire(w: int, after: int, ttls: float, seconds: float) -> Directive:
    """W asks for the lock that `after` held for `ttls` TTLs plus `seconds`."""
    return Directive("try-acquire", w, ttls=ttls, seconds=seconds, after=after)


@dataclass(frozen=True)
class Script:
    """A scenario's directives, and what is derived from them."""

    directives: tuple[Directive, ...]
    reporting: tuple[str, ...] = field(
        default=(
            "acquire",
            "write",
            "outcome",
            "release",
            "pause",
            "resume",
            "wait-held",
            "lease-end",
            "restart",
            "keep",
            "crash",
            "try-acquire",
        ),
        repr=False,
    )

    @property
    def steps(self) -> int:
        """How many steps the run reports progress for."""
        return sum(1 for d in self.directives if d.kind in self.reporting)

    def drive(self, d: Driver) -> None:
        """Carry the directives out on the real processes."""
        tickets: dict[int, int] = {}
        ttl = d.run.settings.ttl
        for step in self.directives:
            w, kind = step.worker, step.kind
            if kind == "acquire":
                d.acquire(w)
            elif kind == "write":
                d.write(w)
            elif kind == "write-later":
                tickets[w] = d.write_later(w)
            elif kind == "outcome":
                d.outcome(w, tickets.pop(w))
            elif kind == "release":
                d.release(w)
            elif kind == "pause":
                d.pause(w)
            elif kind == "resume":
                d.resume(w)
            elif kind == "hold":
                d.hold(w, phase=step.phase, kind=step.op)
            elif kind == "wait-held":
                d.wait_held(w)
            elif kind == "unhold":
                d.unhold(w)
            elif kind == "lease-end":
                d.wait_lease_end(w)
            elif kind == "restart":
                d.restart_storage()
            elif kind == "keep":
                d.hold_for(step.ttls * ttl)
            elif kind == "crash":
                d.crash(w)
            elif kind == "try-acquire":
                d.try_acquire(w, step.ttls * ttl + step.seconds)

    def plan(self, rmw: bool = False) -> tuple[PlanStep, ...]:
        """The model's steps, in the order their effects happen in the real run."""
        return tuple(_Planner(rmw).walk(self.directives))


class _Planner:
    """Turns directives into plan steps, tracking pauses, held requests and deferred sends."""

    def __init__(self, rmw: bool) -> None:
        self.rmw = rmw
        self.paused: set[int] = set()
        self.holds: dict[int, Directive] = {}
        self.deferred: dict[int, list[PlanStep]] = {}
        """Steps that happen when the worker resumes (a write told while it was paused)."""
        self.waiting: dict[int, list[PlanStep]] = {}
        """Steps that happen when the worker's write is answered (a held request let go)."""

    def _write(self, w: int) -> tuple[list[PlanStep], list[PlanStep]]:
        """A write's steps now, and the ones when its hold is let go."""
        held = self.holds.pop(w, None)
        read = [("send", w), ("deliver", w)] if self.rmw else []
        if held is None:
            return [*read, ("send", w), ("deliver", w)], []
        if held.op == "read":
            return [("send", w)], [("deliver", w), ("send", w), ("deliver", w)]
        if held.phase == "apply":
            return [*read, ("send", w), ("check", w)], [("apply", w)]
        return [*read, ("send", w)], [("deliver", w)]

    def walk(self, directives: Sequence[Directive]) -> list[PlanStep]:
        """Every directive's steps, in order."""
        plan: list[PlanStep] = []
        for step in directives:
            w, kind = step.worker, step.kind
            if kind in ("acquire", "release", "crash"):
                plan.append((kind, w))
            elif kind == "write":
                plan.extend(self._write(w)[0])
            elif kind == "write-later":
                now, later = self._write(w)
                if w in self.paused:
                    self.deferred.setdefault(w, []).extend(now)
                else:
                    plan.extend(now)
                self.waiting[w] = later
            elif kind == "outcome":
                plan.extend(self.waiting.pop(w, []))
            elif kind == "pause":
                self.paused.add(w)
            elif kind == "resume":
                self.paused.discard(w)
                plan.extend(self.deferred.pop(w, []))
            elif kind == "hold":
                self.holds[w] = step
            elif kind == "lease-end":
                plan.append(("expire", w))
            elif kind == "restart":
                plan.append(("restart", 0))
            elif kind == "keep":
                for _ in range(max(1, round(step.ttls))):
                    plan += [("hold", 0), ("renew", w)]
            elif kind == "try-acquire":
                plan += [("expire", step.after), ("acquire", w), ("wait", w)]
        return plan
