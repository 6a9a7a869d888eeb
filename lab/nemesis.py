"""The nemesis of a randomized run: one seeded schedule of timed faults, replayed as written.

The schedule is drawn once from the run's seed, fault kinds and sizes, before anything
starts, so every receiver compared side by side meets the same faults at the same times.
It is recorded in the history (`nemesis`), and every fault also leaves events when it
happens (`pause`/`resume`, the store's `hold`/`unhold`, `storage-kill`, `crash`,
`member-kill`/`member-start`, `member-pause`/`member-resume`, `skew`).

Fault kinds:

- `pause`: SIGSTOP a worker for a while, then SIGCONT (a long garbage-collection pause);
- `hold`: the store holds a worker's next write before applying it (a slow network);
- `store-kill`: SIGKILL the storage process and start it again (a volatile mark is lost);
- `crash`: SIGKILL a worker for good (it never comes back; at least one worker is spared);
- `member-kill`: SIGKILL an etcd member other than the first, restarted later;
- `member-pause`: SIGSTOP an etcd member other than the first, resumed later;
- `skew`: a worker runs on a clock that goes faster or slower than real time (libfaketime).

A target of worker 0 means "whoever holds the lock then" (or a running worker drawn at
random when nobody does), so most pauses land in a critical section.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final, Protocol

from lab.cluster import EtcdCluster
from lab.events import EventLog
from lab.processes import Child
from lab.settings import FAULT_KINDS, LabInputError, Settings

HOLDER_SHARE: Final = 0.75
"""How often a worker fault targets the holder of the lock rather than a given worker."""
PAUSE_TTLS: Final = (0.5, 3.0)
"""A pause lasts between these many lease TTLs (about 60% of them outlast the lease)."""
HOLD_TTLS: Final = (0.5, 2.5)
"""A hold lasts between these many lease TTLs."""
RATES: Final = {
    "hold": 1.0,
    "store-kill": 0.25,
    "crash": 0.15,
    "member-kill": 0.25,
    "member-pause": 0.25,
}
"""Faults per second of each kind but pauses (whose rate is the run's --pause-rate)."""
MEMBER_DOWN_SECONDS: Final = (0.5, 2.0)
"""How long a killed or paused etcd member stays down."""
SKEW_RATES: Final = (0.5, 0.7, 1.5, 2.0)
"""How fast a skewed worker's clock runs against real time (0.5: half as fast)."""
FIRST_SECONDS: Final = 0.3
"""No fault before this much of the run: the workers have started taking the lock."""
NEMESIS_KINDS: Final = (
    "crash",
    "member-kill",
    "member-start",
    "member-seen",
    "member-pause",
    "member-resume",
    "skew",
    "clock",
    "nemesis-start",
    "hold-set",
    "hold-lift",
    "fault-skipped",
)
"""Event kinds the nemesis's faults leave in a history besides pauses and store kills:
`nemesis-start` (the time the schedule counts from), a hold set on a worker's next write
and lifted, a member seen down by another member, a fault that could not take effect, and
`clock` (a worker's own wall clock against real time)."""
SKIP_REASONS: Final = {
    "not-running": "its worker was paused, killed or finished",
    "nobody-running": "no worker was running",
    "already-held": "a hold of that worker was still on",
    "run-over": "the run ended while it waited to be tried again",
    "no-cluster": "the run had no etcd cluster of the lab's own",
}
"""Why a fault could not take effect (a `fault-skipped` event's `why`), in words."""
POSTPONE_SECONDS: Final = 0.2
"""How long a crash, a member fault or a hold of the holder waits when its target cannot
take it yet (a worker paused, the last one running, a member down, nobody holding the lock
or the holder paused); pauses and holds of a given worker are skipped instead."""
MAX_FAULTS: Final = 2_000
"""Most faults a history's schedule may hold (a 60-second run at the highest rates has fewer)."""


@dataclass(frozen=True)
class Fault:
    """One timed fault: when (seconds after the workers start), what, on whom, how long."""

    at: float
    kind: str
    target: int = 0
    """A worker (0: the lock's holder when it fires), or an etcd member (1-based)."""
    seconds: float = 0.0
    """How long a pause, hold or member fault lasts (0 for a kill or a crash)."""
    rate: float = 1.0
    """A skewed clock's speed against real time."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form (times rounded to the microsecond)."""
        data = asdict(self)
        data["at"], data["seconds"] = round(self.at, 6), round(self.seconds, 6)
        return data


def _poisson(rng: random.Random, rate: float, start: float, until: float) -> list[float]:
    """Times of a Poisson process of `rate` per second from `start` to `until`."""
    times: list[float] = []
    if rate <= 0:
        return times
    at = start + rng.expovariate(rate)
    while at < until:
        times.append(at)
        at += rng.expovariate(rate)
    return times


def _worker_target(rng: random.Random, workers: int) -> int:
    """The holder (0) three times in four, else a worker drawn at random."""
    return 0 if rng.random() < HOLDER_SHARE else rng.randint(1, workers)


def _one(kind: str, at: float, s: Settings, rng: random.Random) -> Fault:
    """One fault of a kind at time `at`, its target and length drawn."""
    if kind == "pause":
        return Fault(at, kind, _worker_target(rng, s.workers), rng.uniform(*PAUSE_TTLS) * s.ttl)
    if kind == "hold":
        return Fault(at, kind, _worker_target(rng, s.workers), rng.uniform(*HOLD_TTLS) * s.ttl)
    if kind == "crash":
        return Fault(at, kind, _worker_target(rng, s.workers))
    if kind == "store-kill":
        return Fault(at, kind)
    return Fault(at, kind, rng.randint(2, s.members), rng.uniform(*MEMBER_DOWN_SECONDS))


def _rounded(fault: Fault) -> Fault:
    """A fault with its times to the microsecond, as the history file keeps them."""
    return Fault(round(fault.at, 6), fault.kind, fault.target, round(fault.seconds, 6), fault.rate)


def _kind_faults(kind: str, s: Settings, rng: random.Random) -> list[Fault]:
    """The faults of one kind for these settings: a Poisson process of the kind's rate,
    and at least one fault of every kind chosen (at most workers - 1 crashes)."""
    if kind == "skew":
        worker = rng.randint(1, s.workers)
        return [Fault(0.0, "skew", worker, 0.0, rng.choice(SKEW_RATES))]
    rate = s.pause_rate if kind == "pause" else RATES[kind]
    times = _poisson(rng, rate, FIRST_SECONDS, s.seconds)
    if not times and s.seconds > FIRST_SECONDS:
        times = [rng.uniform(FIRST_SECONDS, max(FIRST_SECONDS, s.seconds * 0.8))]
    found = [_rounded(_one(kind, at, s, rng)) for at in times]
    return found[: s.workers - 1] if kind == "crash" else found


def schedule(settings: Settings) -> tuple[Fault, ...]:
    """The run's faults, drawn from its seed (each kind from its own stream, so choosing
    another set of kinds leaves the faults of a kind unchanged), in time order."""
    faults: list[Fault] = []
    for kind in kinds_of(settings):
        faults.extend(_kind_faults(kind, settings, random.Random(f"{settings.seed}/{kind}")))
    return tuple(sorted(faults, key=lambda f: (f.at, FAULT_KINDS.index(f.kind), f.target)))


def kinds_of(settings: Settings) -> tuple[str, ...]:
    """The fault kinds a run's settings name, in the canonical order."""
    chosen = {part for part in settings.faults.split(",") if part}
    return tuple(kind for kind in FAULT_KINDS if kind in chosen)


def default_faults(receiver_keeps_mark: bool, hwm: str, members: int, worker_check: bool) -> str:
    """The fault kinds that mean something for these settings: pauses and holds always;
    store kills when a fenced store keeps its mark in memory; member faults on a cluster;
    clock skew when workers check their own lease (and libfaketime is there)."""
    from lab.faketime import library

    kinds = ["pause", "hold"]
    if receiver_keeps_mark and hwm == "volatile":
        kinds.append("store-kill")
    if members > 1:
        kinds += ["member-kill", "member-pause"]
    if worker_check and library() is not None:
        kinds.append("skew")
    return ",".join(kinds)


def parse_faults(text: str) -> str:
    """`--faults a,b`: each kind checked, in the canonical order (one line if unknown)."""
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    for kind in chosen:
        if kind not in FAULT_KINDS:
            raise LabInputError(
                f"fault kind {kind[:30]!r} is not known: choose from {', '.join(FAULT_KINDS)}"
            )
    return ",".join(kind for kind in FAULT_KINDS if kind in chosen)


def refusal(settings: Settings) -> str | None:
    """Why a run cannot have one of its fault kinds ('' or None when it can), in one line."""
    from lab.faketime import library

    kinds = kinds_of(settings)
    members = [k for k in kinds if k.startswith("member-")]
    if members and settings.members < 2:
        return (
            f"fault {members[0]} needs an etcd cluster: add --members 3 (this run has one member)"
        )
    if "skew" in kinds and library() is None:
        return "fault skew needs libfaketime (Debian package libfaketime), which is not installed"
    if "crash" in kinds and settings.workers < 2:
        return "fault crash needs at least 2 workers (one is always spared)"
    return None


def faults_to_data(faults: Sequence[Fault]) -> list[dict[str, Any]]:
    """The schedule as JSON."""
    return [fault.to_dict() for fault in faults]


def faults_from_data(data: Any, workers: int, members: int) -> tuple[Fault, ...]:
    """A history's schedule, every field checked (one line naming the fault if it is bad)."""
    if data is None:
        return ()
    if not isinstance(data, list) or len(data) > MAX_FAULTS:
        raise LabInputError(f"the history's nemesis must be a list of at most {MAX_FAULTS} faults")
    found = []
    for number, item in enumerate(data, start=1):
        where = f"fault {number} of the history's nemesis"
        if not isinstance(item, dict) or set(item) != {"at", "kind", "target", "seconds", "rate"}:
            raise LabInputError(f"{where} must have exactly at, kind, target, seconds and rate")
        if item["kind"] not in FAULT_KINDS:
            raise LabInputError(f"{where} has an unknown kind")
        numbers = (item["at"], item["seconds"], item["rate"])
        if any(isinstance(v, bool) or not isinstance(v, int | float) for v in numbers):
            raise LabInputError(f"{where} must have numbers for at, seconds and rate")
        if not all(0 <= float(v) <= 3_600 for v in numbers):
            raise LabInputError(f"{where} has a time or rate out of range")
        target = item["target"]
        high = members if item["kind"].startswith("member-") else workers
        if isinstance(target, bool) or not isinstance(target, int) or not 0 <= target <= high:
            raise LabInputError(f"{where} has a target out of range (0 to {high})")
        found.append(
            Fault(
                float(item["at"]), item["kind"], target, float(item["seconds"]), float(item["rate"])
            )
        )
    return tuple(found)


def summary(faults: Sequence[Fault]) -> str:
    """`12 pauses, 3 holds, 1 store-kill`: how many faults of each kind a schedule has."""
    counts = {kind: sum(1 for f in faults if f.kind == kind) for kind in FAULT_KINDS}
    return ", ".join(f"{n} {kind}" for kind, n in counts.items() if n) or "no faults"


class FaultedRun(Protocol):
    """What the nemesis drives of a running lab (`lab.runner.LabRun` is one): its settings,
    log, workers and cluster, and the faults it can carry out."""

    settings: Settings
    log: EventLog
    workers: dict[int, Child]
    crashed: set[int]
    cluster: EtcdCluster | None

    def holder(self) -> int: ...

    def control(self, message: dict[str, Any]) -> None: ...

    def restart_storage(self, **fault: Any) -> None: ...

    def pause(self, w: int, at: float | None = None, **fault: Any) -> None: ...

    def resume(self, w: int, at: float | None = None, **fault: Any) -> None: ...

    def crash(self, w: int, **fault: Any) -> None: ...

    def watch_member(self, member: int, fault: int) -> None: ...


class Nemesis:
    """Carries out a schedule on a run: each fault when its time comes, each one's end
    (a resume, an unhold, a member started or resumed again) when it is due.

    Every fault leaves its number in the schedule (`fault`, counted from 1) on the event it
    caused, or a `fault-skipped` event saying why it could not take effect (its worker was
    not running, a hold of that worker was still on, or the run ended while it waited), so
    the witnesses can account for each one (lab.nemesis_witness). Each fault and each end is
    recorded at the nemesis's own time for it, the time it fired."""

    def __init__(self, run: FaultedRun, faults: Sequence[Fault], start: float) -> None:
        self.run = run
        self.waiting = sorted(
            ((number, fault) for number, fault in enumerate(faults, start=1)),
            key=lambda item: item[1].at,
        )
        self.start = start
        self.rng = random.Random(f"{run.settings.seed}/targets")
        self.ends: list[tuple[float, str, int, int]] = []
        """When to end an ongoing fault: time, kind, target, the fault's number."""
        self.done: dict[str, int] = {}
        """How many faults of each kind took effect."""

    def step(self, now: float) -> None:
        """Fire every fault and every end that is due by `now` (seconds on the run's clock)."""
        for due in [e for e in self.ends if e[0] <= now]:
            self.ends.remove(due)
            self._end(due[1], due[2], due[3], now)
        while self.waiting and self.start + self.waiting[0][1].at <= now:
            number, fault = self.waiting.pop(0)
            self._fire(number, fault, now)

    def ongoing(self, kind: str) -> int:
        """How many faults of a kind are in progress."""
        return sum(1 for e in self.ends if e[1] == kind)

    def _live_workers(self) -> list[int]:
        """Workers that run: not crashed, not paused, not finished."""
        run = self.run
        return [
            w
            for w, child in run.workers.items()
            if w not in run.crashed and child.alive() and not child.paused
        ]

    def _worker(self, target: int) -> int:
        """The worker a fault lands on (0: none can take it)."""
        live = self._live_workers()
        if target:
            return target if target in live else 0
        holder = self.run.holder()
        if holder in live:
            return holder
        return self.rng.choice(live) if live else 0

    def _count(self, kind: str) -> None:
        self.done[kind] = self.done.get(kind, 0) + 1

    def _skip(self, number: int, why: str, now: float, **about: Any) -> None:
        """Record that fault `number` could not take effect, and why."""
        self.run.log.record("fault-skipped", at=now, fault=number, why=why, **about)

    def _fire(self, number: int, fault: Fault, now: float) -> None:
        """Carry out one fault (or skip it when its target cannot take it)."""
        run, kind = self.run, fault.kind
        if kind in ("pause", "hold", "crash"):
            w = self._worker(fault.target)
            if kind == "crash":
                w = w or self._worker(0)  # the worker named has finished: another one
            if kind == "crash" and (not w or len(self._live_workers()) < 2):
                self._postpone(number, fault, now)
                return
            if kind == "hold" and not fault.target and w != self.run.holder():
                self._postpone(number, fault, now)  # a hold catches a write only from the holder
                return
            if not w:
                self._skip(
                    number,
                    "not-running" if fault.target else "nobody-running",
                    now,
                    **({"worker": fault.target} if fault.target else {}),
                )
                return
            if kind == "hold" and any(e[1] == "hold" and e[2] == w for e in self.ends):
                self._skip(number, "already-held", now, worker=w)  # the store keeps one per worker
                return
            if kind == "pause":
                run.pause(w, at=now, fault=number)
            elif kind == "hold":
                phase = "apply" if run.settings.receiver == "fenced-nonatomic" else "deliver"
                run.control({"op": "hold", "worker": w, "phase": phase, "kind": "write"})
                run.log.record("hold-set", at=now, worker=w, phase=phase, fault=number)
            else:
                run.crash(w, fault=number)
                self.ends = [e for e in self.ends if not (e[1] == "pause" and e[2] == w)]
                self._count(kind)
                return
            self.ends.append((now + fault.seconds, kind, w, number))
        elif kind == "store-kill":
            run.restart_storage(fault=number)
        elif kind in ("member-kill", "member-pause"):
            cluster = run.cluster
            if cluster is None:
                self._skip(number, "no-cluster", now)
                return
            if any(e[1].startswith("member-") and e[2] == fault.target for e in self.ends):
                self._postpone(number, fault, now)
                return
            pid = cluster.pid(fault.target)
            if kind == "member-kill":
                cluster.kill(fault.target)
                run.watch_member(fault.target, number)
            elif not cluster.pause(fault.target):
                self._postpone(number, fault, now)
                return
            run.log.record(kind, at=now, member=fault.target, pid=pid, fault=number)
            self.ends.append((now + fault.seconds, kind, fault.target, number))
        self._count(kind)

    def _postpone(self, number: int, fault: Fault, now: float) -> None:
        """Try a fault again a little later (it keeps its number)."""
        later = Fault(now - self.start + POSTPONE_SECONDS, fault.kind, fault.target, fault.seconds)
        self.waiting.append((number, later))
        self.waiting.sort(key=lambda item: item[1].at)

    def _end(self, kind: str, target: int, number: int, now: float) -> None:
        """End an ongoing fault (at the nemesis's time `now`)."""
        run = self.run
        if kind == "pause":
            run.resume(target, at=now, fault=number)
        elif kind == "hold":
            run.control({"op": "unhold", "worker": target})  # recorded once it is lifted
            run.log.record("hold-lift", worker=target, fault=number)
        elif kind == "member-kill" and run.cluster is not None:
            run.cluster.restart(target)
            pid = run.cluster.pid(target)
            run.log.record("member-start", at=now, member=target, pid=pid, fault=number)
        elif kind == "member-pause" and run.cluster is not None and run.cluster.resume(target):
            run.log.record("member-resume", at=now, member=target, fault=number)

    def finish(self, now: float) -> None:
        """End every ongoing fault now (the workers are left to the run's wind-down); a
        fault still waiting to be tried again is recorded as skipped, the run being over."""
        for _, kind, target, number in sorted(self.ends):
            self._end(kind, target, number, now)
        self.ends = []
        for number, _ in self.waiting:
            self._skip(number, "run-over", now)
        self.waiting = []

    def heal(self) -> None:
        """Bring every etcd member back and wait until the cluster is healthy (also after
        a run that stopped early, so the next run finds the cluster whole)."""
        cluster = self.run.cluster
        if cluster is not None:
            for _, kind, target, number in list(self.ends):
                if kind.startswith("member-"):
                    self._end(kind, target, number, self.run.log.now())
            cluster.heal()
