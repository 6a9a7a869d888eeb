"""The nemesis, the cluster and the clocks, checked rather than taken on faith.

A randomized run's schedule is a function of its settings and its seed (lab.nemesis), so
it is drawn again and compared with the one the history records, fault by fault (unless
the history says the schedule was given by the caller). Then every fault of the schedule
is accounted for: it took effect (its event carries the fault's number) no earlier than
its time, on the target it names, or a `fault-skipped` event says why it could not, and
the history agrees (its worker was indeed paused, killed or finished then; a hold of that
worker was indeed still on; the run was indeed over). Each fault's end is checked too: a
pause has its SIGSTOP seen delivered and its SIGCONT (or the worker's kill), no sooner
than the fault's length allows; a killed etcd member is seen gone by another member and
comes back as another process. A skewed worker's own clock reports (its wall clock at
each acquire and at its end) must run at the skew's rate against the run's monotonic
clock, and every other worker's at real speed. A scripted run's faults are the ones its
script has. Refusals:

- `nemesis-schedule`: the recorded schedule is not the one the settings and seed draw;
- `nemesis-extra`: a fault event the schedule (or the script) never had;
- `fault-missing`, `fault-twice`: a fault of the schedule that neither took effect nor was
  skipped, or that took effect twice;
- `fault-early`, `fault-target`, `fault-short`: a fault that took effect before its time,
  on another target than it names, or ended before its length (and before the run's end);
- `fault-skip`: a fault said to be skipped for a reason the history contradicts;
- `pause-unseen`, `pause-unended`: a SIGSTOP never seen delivered, or never followed by a
  SIGCONT or a kill;
- `hold-unasked`: the store held a request while the nemesis had set no hold on its worker;
- `member-unseen`, `member-pid`: a killed member no other member saw gone, or one that
  "came back" as the very process that was killed;
- `clock-skew`, `clock-unreported`: a worker's own clock ran at another rate than the
  nemesis says, or a worker that ran to the end never reported its clock;
- `clock-step`: every worker's own clock, skewed or not, jumped by the same amount against
  real time. That is the machine's wall clock being set during the run, not one worker's
  skew: the lab cannot confirm the nemesis's skews from such reports, and says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from lab.contradiction import Impossible
from lab.events import Event
from lab.history import History, Timeline
from lab.nemesis import SKIP_REASONS, Fault, schedule

EFFECT_OF: Final = {
    "pause": "pause",
    "hold": "hold-set",
    "store-kill": "storage-kill",
    "crash": "crash",
    "member-kill": "member-kill",
    "member-pause": "member-pause",
    "skew": "skew",
}
"""The event each fault kind leaves when it takes effect."""
END_OF: Final = {
    "pause": "resume",
    "hold": "hold-lift",
    "member-kill": "member-start",
    "member-pause": "member-resume",
}
"""The event that ends a fault of each kind that lasts."""
FAULT_EVENTS: Final = frozenset(EFFECT_OF.values())
CLOCK_SPAN_SECONDS: Final = 1.0
"""The shortest stretch of a worker's clock reports its rate is measured over."""
CLOCK_TOLERANCE: Final = 0.15
"""How far (relatively) a worker's measured clock rate may be from the one it should run at:
the two readings of each report are taken microseconds apart, so over a second this leaves
room for a thread descheduled for 50 ms between them; the skews the nemesis draws (0.5x,
0.7x, 1.5x, 2x) are each more than twice as far from real speed."""
CLOCK_STEP_AGREEMENT_SECONDS: Final = 0.1
"""How close the jumps of every worker's clock must be to count as one step of the machine's
clock (twice the room `CLOCK_TOLERANCE` leaves for a thread descheduled between readings)."""


def fault_words(fault: Fault) -> str:
    """`a pause of the holder for 1.234 s at 0.871 s`: one fault in words."""
    if fault.kind.startswith("member-"):
        target = f"of etcd member {fault.target}"
    elif fault.kind == "store-kill":
        target = "of the storage process"
    else:
        target = f"of W{fault.target}" if fault.target else "of the holder"
    length = f" for {fault.seconds:.3f} s" if fault.seconds else ""
    rate = f" at {fault.rate:g}x" if fault.kind == "skew" else ""
    return f"a {fault.kind} {target}{length}{rate} at {fault.at:.3f} s"


def _refuse(code: str, t: float, words: str) -> Impossible:
    """A contradiction found among the raw events."""
    return Impossible(code, None, t, words)


def _schedule_checks(history: History) -> list[Impossible]:
    """The recorded schedule is the one the settings and seed draw."""
    s = history.settings
    if not s.seconds:
        if history.nemesis:
            return [
                _refuse(
                    "nemesis-schedule",
                    0.0,
                    f"the {history.scenario} run is scripted, yet its history records a "
                    f"schedule of {len(history.nemesis)} faults",
                )
            ]
        return []
    if history.nemesis_given:
        return []
    drawn = schedule(s)
    for number, (kept, expected) in enumerate(zip(history.nemesis, drawn, strict=False), 1):
        if kept != expected:
            return [
                _refuse(
                    "nemesis-schedule",
                    kept.at,
                    f"fault {number} of the recorded schedule is {fault_words(kept)}, but seed "
                    f"{s.seed} draws {fault_words(expected)} for these settings",
                )
            ]
    if len(history.nemesis) != len(drawn):
        return [
            _refuse(
                "nemesis-schedule",
                0.0,
                f"the recorded schedule has {len(history.nemesis)} faults, but seed {s.seed} "
                f"draws {len(drawn)} for these settings",
            )
        ]
    return []


@dataclass(frozen=True)
class _Life:
    """When each worker was stopped, killed or finished, from the raw events."""

    stopped: dict[int, list[tuple[float, float]]]
    killed: dict[int, float]
    finished: dict[int, float]
    held: dict[int, list[tuple[float, float]]]

    def running(self, w: int, t: float) -> bool:
        """Whether worker w was running at t (not paused, killed or finished)."""
        if w in self.killed and self.killed[w] <= t:
            return False
        if w in self.finished and self.finished[w] <= t:
            return False
        return not any(start <= t < end for start, end in self.stopped.get(w, []))

    def holding(self, w: int, t: float) -> bool:
        """Whether a hold of the nemesis on worker w was on at t."""
        return any(start <= t <= end for start, end in self.held.get(w, []))


def _life(raw: Sequence[Event]) -> _Life:
    """The workers' stops, kills and ends, and the nemesis's holds, from the raw events (a
    pause and its resume, a hold and its lift, paired by their fault's number when they
    carry one, else by worker)."""
    stopped: dict[int, list[tuple[float, float]]] = {}
    held: dict[int, list[tuple[float, float]]] = {}
    since: dict[tuple[int, object], float] = {}
    holding: dict[tuple[int, object], float] = {}
    killed: dict[int, float] = {}
    finished: dict[int, float] = {}
    for e in raw:
        w, t, key = (
            int(e.get("worker") or 0),
            float(e["t"]),
            (int(e.get("worker") or 0), e.get("fault")),
        )
        if e["kind"] == "pause":
            since.setdefault(key, t)
        elif e["kind"] == "resume" and key in since:
            stopped.setdefault(w, []).append((since.pop(key), t))
        elif e["kind"] == "crash":
            killed.setdefault(w, float(e.get("asked") or t))
        elif e["kind"] == "clock":
            finished.setdefault(w, t)
        elif e["kind"] == "hold-set":
            holding.setdefault(key, t)
        elif e["kind"] == "hold-lift" and key in holding:
            held.setdefault(w, []).append((holding.pop(key), t))
    for (w, _), t in since.items():
        stopped.setdefault(w, []).append((t, float("inf")))
    for (w, _), t in holding.items():
        held.setdefault(w, []).append((t, float("inf")))
    return _Life(stopped, killed, finished, held)


def _skip_problem(
    e: Event, fault: Fault, life: _Life, workers: int, until: float, members: int
) -> str:
    """Why a skip's reason is contradicted by the history ('' when it is not)."""
    why, t, w = str(e.get("why")), float(e["t"]), int(e.get("worker") or fault.target)
    if why == "not-running" and fault.target and not life.running(w, t):
        return ""
    if why == "nobody-running" and not any(life.running(v, t) for v in range(1, workers + 1)):
        return ""
    if why == "already-held" and fault.kind == "hold" and life.holding(w, t):
        return ""
    if why == "run-over" and t >= until:
        return ""
    if why == "no-cluster" and members < 2:
        return ""
    said = SKIP_REASONS.get(why, why)
    return (
        f"{fault_words(fault)} was skipped at {t:.3f} s because {said}, but the history "
        "says otherwise"
    )


def _fault_checks(history: History, raw: Sequence[Event]) -> list[Impossible]:
    """Every fault of the schedule accounted for, each fault event one of the schedule's."""
    faults = history.nemesis
    start_event = next((e for e in raw if e["kind"] == "nemesis-start"), None)
    if not history.settings.seconds or start_event is None:
        if history.settings.seconds and not history.partial:
            return [_refuse("fault-missing", 0.0, "the randomized run never started its nemesis")]
        return []
    start = float(start_event["t"])
    until = start + history.settings.seconds
    last = max((float(e["t"]) for e in raw), default=0.0)
    life = _life(raw)
    found: list[Impossible] = []
    effects: dict[int, list[Event]] = {}
    skips: dict[int, list[Event]] = {}
    for e in raw:
        number = e.get("fault")
        if e["kind"] in FAULT_EVENTS or e["kind"] == "fault-skipped":
            if not isinstance(number, int) or not 1 <= number <= len(faults):
                found.append(
                    _refuse(
                        "nemesis-extra",
                        float(e["t"]),
                        f"the history records a {e['kind']} at {e['t']:.3f} s that is no fault "
                        "of the run's schedule",
                    )
                )
                continue
            (skips if e["kind"] == "fault-skipped" else effects).setdefault(number, []).append(e)
    for number, fault in enumerate(faults, start=1):
        done, skipped = effects.get(number, []), skips.get(number, [])
        what = f"fault {number} ({fault_words(fault)})"
        if len(done) + len(skipped) > 1:
            found.append(_refuse("fault-twice", fault.at, f"{what} took effect more than once"))
            continue
        if not done and not skipped:
            if not history.partial and start + fault.at <= last:
                found.append(
                    _refuse(
                        "fault-missing",
                        start + fault.at,
                        f"{what} neither took effect nor was skipped",
                    )
                )
            continue
        if skipped:
            problem = _skip_problem(
                skipped[0], fault, life, history.settings.workers, until, history.settings.members
            )
            if problem:
                found.append(_refuse("fault-skip", float(skipped[0]["t"]), problem))
            continue
        found.extend(_effect_checks(done[0], fault, what, start))
    return found


def _effect_checks(e: Event, fault: Fault, what: str, start: float) -> list[Impossible]:
    """One fault's effect: its kind, its time, its target."""
    t = float(e.get("asked") or e["t"])
    if e["kind"] != EFFECT_OF[fault.kind]:
        return [
            _refuse("nemesis-extra", t, f"the history records a {e['kind']} at {t:.3f} s as {what}")
        ]
    if fault.kind != "skew" and t < start + fault.at - 1e-6:
        return [
            _refuse(
                "fault-early",
                t,
                f"{what} took effect at {t:.3f} s, before its time ({start + fault.at:.3f} s)",
            )
        ]
    if fault.kind.startswith("member-"):
        target = int(e.get("member") or 0)
        named = f"etcd member {target}"
    else:
        target = int(e.get("worker") or 0)
        named = f"W{target}"
    if fault.target and fault.kind != "crash" and target != fault.target:
        return [_refuse("fault-target", t, f"{what} took effect on {named}")]
    if fault.kind == "skew" and e.get("rate") != fault.rate:
        return [_refuse("fault-target", t, f"{what} took effect at {e.get('rate')}x")]
    return []


def _end_checks(history: History, raw: Sequence[Event]) -> list[Impossible]:
    """Each lasting fault's end: a pause's SIGSTOP seen and its SIGCONT (or a kill), no
    sooner than its length; a hold lifted; a killed member seen gone, back as another
    process."""
    found: list[Impossible] = []
    faults = history.nemesis
    start_event = next((e for e in raw if e["kind"] == "nemesis-start"), None)
    until = float(start_event["t"]) + history.settings.seconds if start_event is not None else None
    for position, e in enumerate(raw):
        kind = e["kind"]
        if kind == "pause":
            found.extend(_pause_end(e, raw[position + 1 :], history, faults, until))
        elif kind == "member-kill":
            found.extend(_member_end(e, raw[position + 1 :], history))
        elif kind in ("hold-set", "member-pause"):
            found.extend(_lasting_end(e, raw[position + 1 :], history, faults, until))
    return found


def _length(e: Event, faults: Sequence[Fault]) -> float:
    """The length of the fault an event carries out (0 when it names none)."""
    number = e.get("fault")
    if isinstance(number, int) and 1 <= number <= len(faults):
        return faults[number - 1].seconds
    return 0.0


def _pause_end(
    e: Event, later: Sequence[Event], history: History, faults: Sequence[Fault], until: float | None
) -> list[Impossible]:
    """A pause: SIGSTOP seen delivered, then SIGCONT (or a kill), not before its length."""
    w, t = int(e.get("worker") or 0), float(e["t"])
    found = []
    if e.get("stopped_at") is None:
        found.append(
            _refuse(
                "pause-unseen",
                t,
                f"the nemesis paused W{w} at {t:.3f} s, but W{w} was never seen stopped (no "
                "SIGSTOP took hold)",
            )
        )
    number = e.get("fault")
    end = next(
        (
            x
            for x in later
            if int(x.get("worker") or 0) == w
            and (x["kind"] == "crash" or (x["kind"] == "resume" and x.get("fault") == number))
        ),
        None,
    )
    if end is None:
        if not history.partial:
            found.append(
                _refuse(
                    "pause-unended",
                    t,
                    f"W{w} was stopped (SIGSTOP) at {t:.3f} s and never resumed (SIGCONT) nor "
                    "killed",
                )
            )
        return found
    length = _length(e, faults)
    ended = float(end["t"])
    early = ended < t + length - 1e-6 and (until is None or ended < until)
    if end["kind"] == "resume" and length and early:
        found.append(
            _refuse(
                "fault-short",
                ended,
                f"W{w} was resumed at {ended:.3f} s, {ended - t:.3f} s after its pause at "
                f"{t:.3f} s: the fault lasts {length:.3f} s",
            )
        )
    return found


def _lasting_end(
    e: Event, later: Sequence[Event], history: History, faults: Sequence[Fault], until: float | None
) -> list[Impossible]:
    """A hold or a member's pause: lifted, not before its length (or the run's end)."""
    member = e["kind"] == "member-pause"
    key, end_kind = ("member", "member-resume") if member else ("worker", "hold-lift")
    who = int(e.get(key) or 0)
    t = float(e["t"])
    end = next(
        (
            x
            for x in later
            if x["kind"] == end_kind
            and int(x.get(key) or 0) == who
            and x.get("fault") == e.get("fault")
        ),
        None,
    )
    named = f"etcd member {who}" if member else f"the hold of W{who}"
    if end is None:
        if history.partial:
            return []
        return [
            _refuse(
                "pause-unended" if member else "fault-short",
                t,
                f"{named}, set at {t:.3f} s, was never ended",
            )
        ]
    length, ended = _length(e, faults), float(end["t"])
    if length and ended < t + length - 1e-6 and (until is None or ended < until):
        return [
            _refuse(
                "fault-short",
                ended,
                f"{named} ended at {ended:.3f} s, {ended - t:.3f} s after it began: the fault "
                f"lasts {length:.3f} s",
            )
        ]
    return []


def _member_end(e: Event, later: Sequence[Event], history: History) -> list[Impossible]:
    """A killed member: seen gone by another member, started again as another process."""
    member, t = int(e.get("member") or 0), float(e["t"])
    start = next(
        (x for x in later if x["kind"] == "member-start" and int(x.get("member") or 0) == member),
        None,
    )
    until = float(start["t"]) if start is not None else float("inf")
    seen = any(
        x["kind"] == "member-seen"
        and int(x.get("member") or 0) == member
        and float(x["t"]) <= until
        for x in later
    )
    found = []
    if not seen and not history.partial:
        found.append(
            _refuse(
                "member-unseen",
                t,
                f"the nemesis killed etcd member {member} at {t:.3f} s, but no other member "
                "saw it gone",
            )
        )
    if start is not None and start.get("pid") is not None and start.get("pid") == e.get("pid"):
        found.append(
            _refuse(
                "member-pid",
                float(start["t"]),
                f"etcd member {member} was started again at {start['t']:.3f} s as process "
                f"{start['pid']}, the very process killed at {t:.3f} s",
            )
        )
    return found


def _hold_checks(history: History, raw: Sequence[Event]) -> list[Impossible]:
    """In a randomized run the store holds a request only while the nemesis set a hold."""
    if not history.settings.seconds:
        return []
    life = _life(raw)
    return [
        _refuse(
            "hold-unasked",
            float(e["t"]),
            f"the store held W{e.get('worker')}'s request {e.get('request')} at {e['t']:.3f} s, "
            f"but the nemesis had set no hold on W{e.get('worker')} then",
        )
        for e in raw
        if e["kind"] == "hold" and not life.holding(int(e.get("worker") or 0), float(e["t"]))
    ]


@dataclass(frozen=True)
class ClockRate:
    """A worker's own clock against the run's: how fast it ran, over how long."""

    worker: int
    expected: float
    measured: float | None
    """None when its reports span less than `CLOCK_SPAN_SECONDS`."""
    span: float

    def sentence(self) -> str:
        """`W2's own clock ran at 1.50x real time over 12.301 s (skewed to 1.5x)`."""
        skew = f" (skewed to {self.expected:g}x)" if self.expected != 1.0 else ""
        if self.measured is None:
            return (
                f"W{self.worker}'s own clock could not be measured (its reports span "
                f"{self.span:.3f} s){skew}"
            )
        return (
            f"W{self.worker}'s own clock ran at {self.measured:.2f}x real time over "
            f"{self.span:.3f} s{skew}"
        )


def clock_rates(history: History) -> list[ClockRate]:
    """Each worker's clock rate from its own reports (randomized runs only)."""
    if not history.settings.seconds:
        return []
    skews = {
        int(e.get("worker") or 0): float(e.get("rate") or 1.0)
        for e in history.events
        if e["kind"] == "skew"
    }
    readings: dict[int, list[tuple[float, float]]] = {}
    for e in history.events:
        w = int(e.get("worker") or 0)
        if e["kind"] == "invoke" and e.get("op") == "acquire" and e.get("wall") is not None:
            readings.setdefault(w, []).append((float(e["t"]), float(e["wall"])))
        elif e["kind"] == "clock":
            real, wall = float(e.get("real_seconds") or 0.0), float(e.get("wall_seconds") or 0.0)
            readings.setdefault(w, []).extend([(float(e["t"]) - real, 0.0), (float(e["t"]), wall)])
    rates = []
    for w in range(1, history.settings.workers + 1):
        points = sorted(readings.get(w, []))
        span = points[-1][0] - points[0][0] if len(points) > 1 else 0.0
        measured = (points[-1][1] - points[0][1]) / span if span >= CLOCK_SPAN_SECONDS else None
        rates.append(ClockRate(w, skews.get(w, 1.0), measured, span))
    return rates


def _off_rate(rate: ClockRate) -> bool:
    """Whether a worker's clock was measured at another rate than the nemesis says."""
    return (
        rate.measured is not None
        and abs(rate.measured - rate.expected) > CLOCK_TOLERANCE * rate.expected
    )


def clock_jump(rate: ClockRate) -> float | None:
    """How far a worker's clock moved against real time beyond its skew, in seconds of the
    machine's clock (a step of the machine's clock moves a skewed clock by the step times
    its rate), or None when its rate was not measured."""
    if rate.measured is None:
        return None
    return (rate.measured - rate.expected) * rate.span / rate.expected


def machine_clock_step(rates: Sequence[ClockRate]) -> float | None:
    """The step of the machine's wall clock, when every worker's clock is off its rate by
    the same jump (two workers or more, every one measured), else None."""
    jumps = [clock_jump(rate) for rate in rates]
    if len(rates) < 2 or not any(_off_rate(rate) for rate in rates):
        return None
    known = [jump for jump in jumps if jump is not None]
    if len(known) < len(jumps) or max(known) - min(known) > CLOCK_STEP_AGREEMENT_SECONDS:
        return None
    return sum(known) / len(known)


def _clock_step_refusal(rates: Sequence[ClockRate], step: float) -> Impossible:
    """One refusal for a step of the machine's clock, with each worker's jump."""
    each = ", ".join(f"W{rate.worker} {clock_jump(rate) or 0.0:+.3f} s" for rate in rates)
    return _refuse(
        "clock-step",
        0.0,
        f"every worker's own clock jumped by about {step:+.3f} s against real time, skewed or "
        f"not ({each}): the machine's wall clock was set during the run, so the workers' "
        "clock reports cannot confirm the nemesis's skews",
    )


def _clock_checks(history: History, raw: Sequence[Event]) -> list[Impossible]:
    """Each worker's clock ran at the rate the nemesis says (or all jumped alike: the
    machine's clock was set); each that ran to the end reported it."""
    found = []
    killed = {int(e.get("worker") or 0) for e in raw if e["kind"] == "crash"}
    reported = {int(e.get("worker") or 0) for e in raw if e["kind"] == "clock"}
    rates = clock_rates(history)
    step = machine_clock_step(rates)
    if step is not None:
        found.append(_clock_step_refusal(rates, step))
    for rate in rates:
        if step is None and _off_rate(rate):
            found.append(
                _refuse(
                    "clock-skew",
                    0.0,
                    f"W{rate.worker}'s own clock reports ran at {rate.measured:.2f}x real time "
                    f"over {rate.span:.3f} s, but the nemesis says it ran at {rate.expected:g}x",
                )
            )
        if rate.worker not in reported and rate.worker not in killed and not history.partial:
            found.append(
                _refuse(
                    "clock-unreported",
                    0.0,
                    f"W{rate.worker} ran to the end of the run but never reported its own clock",
                )
            )
    return found


def nemesis_checks(line: Timeline) -> list[Impossible]:
    """Every check of the module docstring."""
    history = line.history
    raw = sorted(history.events, key=lambda e: e["t"])
    return [
        *_schedule_checks(history),
        *_fault_checks(history, raw),
        *_end_checks(history, raw),
        *_hold_checks(history, raw),
        *_clock_checks(history, raw),
    ]


@dataclass(frozen=True)
class FaultAccount:
    """What became of a schedule's faults, by kind: scheduled, took effect, skipped (by why)."""

    scheduled: dict[str, int]
    took: dict[str, int]
    skipped: dict[str, int]
    """Skipped faults by the reason's words."""

    def sentence(self) -> str:
        """`scheduled 9 pause, 2 hold; took effect: 4 pause, 1 hold; skipped: 5 ... (why)`."""
        scheduled = ", ".join(f"{n} {kind}" for kind, n in self.scheduled.items() if n)
        took = ", ".join(f"{n} {kind}" for kind, n in self.took.items() if n) or "none"
        skipped = "; ".join(f"{n} because {why}" for why, n in self.skipped.items() if n)
        return f"scheduled {scheduled or 'no faults'}; took effect: {took}" + (
            f"; skipped: {skipped}" if skipped else ""
        )


def fault_account(history: History) -> FaultAccount:
    """Each fault of the schedule by what became of it (a randomized run's)."""
    kinds = [fault.kind for fault in history.nemesis]
    scheduled = {kind: kinds.count(kind) for kind in EFFECT_OF if kind in kinds}
    took = dict.fromkeys(scheduled, 0)
    skipped: dict[str, int] = {}
    for e in history.events:
        number = e.get("fault")
        if not isinstance(number, int) or not 1 <= number <= len(kinds):
            continue
        kind = kinds[number - 1]
        if e["kind"] == EFFECT_OF[kind]:
            took[kind] += 1
        elif e["kind"] == "fault-skipped":
            why = SKIP_REASONS.get(str(e.get("why")), str(e.get("why")))
            skipped[why] = skipped.get(why, 0) + 1
    return FaultAccount(scheduled, took, skipped)
