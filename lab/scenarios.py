"""Scripted scenarios: the model's lessons reproduced step by step on the real system.

Each scenario has a default design (receiver, token, mark, workload, worker check, expiry,
keepalives) that the CLI's flags override, and its story written once, as a `Script` of
directives (lab.script): the real run's driver calls and the model's plan are both derived
from it. The model's prediction is the plan replayed by the step interpreter under the
chosen design (a step the model does not allow there, such as the release of a worker whose
write was rejected, is skipped, just as the real worker skips it), so what the lab says the
model predicts is computed, not written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from lab.conformance import model_design
from lab.contradiction import Impossible
from lab.history import History
from lab.lock_table import DEFAULT_SERVICE, SERVICES, SERVICES_LIST, renewing_services
from lab.nemesis_witness import FAULT_EVENTS
from lab.runner import Driver
from lab.script import (
    PlanStep,
    Script,
    acquire,
    crash,
    hold,
    keep,
    lease_end,
    outcome,
    pause,
    release,
    restart,
    resume,
    try_acquire,
    unhold,
    wait_held,
    write,
    write_later,
)
from lab.settings import LabInputError, Settings
from model.actions import Action, ActionKind
from model.design import Bounds
from model.formats.trace import Trace, replay
from model.properties import PROPERTY_NAMES
from model.system import State, System

PLAN_HORIZON: Final = 20
PLAN_LEASE: Final = 2


@dataclass(frozen=True)
class LabScenario:
    """A named scripted run: its story, default design and script."""

    name: str
    title: str
    story: str
    script: Script
    defaults: dict[str, Any] = field(default_factory=dict)
    variants: tuple[dict[str, Any], ...] = ()
    """Flags whose prediction `fencing lab scenarios` shows too (the lesson's other side)."""

    def settings(self, **overrides: Any) -> Settings:
        """The scenario's settings with the given flags (None: keep the default) applied."""
        given = {k: v for k, v in overrides.items() if v is not None}
        chosen = {**self.defaults, **given}
        if chosen.get("receiver") in ("none", "etcd-txn") and "hwm" not in given:
            chosen["hwm"] = "durable"  # only a receiver with a mark can lose it
        if chosen.get("expiry") == "never" and "keepalive" not in given:
            chosen["keepalive"] = 0.0  # a key with no lease has nothing to keep alive
        service = SERVICES.get(str(chosen.get("lock_service", DEFAULT_SERVICE)))
        if service and service.keepalive and chosen.get("keepalive") and "keepalive" not in given:
            *others, last = renewing_services()
            raise LabInputError(
                f"{service.keepalive}, and the {self.name} scenario's holder keeps its lease "
                f"alive with keepalives: run it with --lock-service {', '.join(others)} or {last}"
            )
        if service is not None and overrides.get("token") is None:
            needed = self.defaults.get("token")
            if needed is not None and needed not in service.token_names:
                raise LabInputError(self._token_refusal(str(needed), service.short))
            if needed is None:  # the lesson needs no particular token: the service's own
                chosen["token"] = service.token_names[0]
        return Settings(workers=2, writes=1, **chosen)

    def _token_refusal(self, token: str, service: str) -> str:
        """Why this scenario cannot run on a service without its token, in one sentence."""
        offering = [s for s in SERVICES_LIST if token in s.token_names]
        words = offering[0].token(token).words if offering else token
        names = [s.name for s in offering]
        where = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]
        return (
            f"the {self.name} scenario's lesson is {words} as the token (--token {token}), "
            f"which {service} does not give: run it with --lock-service {where}, or choose "
            "another --token"
        )

    def drive(self, d: Driver) -> None:
        """Make the real processes play the script."""
        self.script.drive(d)

    @property
    def steps(self) -> int:
        """How many steps the real run reports progress for."""
        return self.script.steps

    def plan(self, settings: Settings) -> tuple[PlanStep, ...]:
        """The script as the model's steps, for a design with these settings."""
        return self.script.plan(rmw=settings.workload == "rmw")


# ----- the scripts -------------------------------------------------------------------------

_PAUSED = Script(
    (
        acquire(1),
        pause(1),
        write_later(1),
        lease_end(1),
        acquire(2),
        write(2),
        release(2),
        resume(1),
        outcome(1),
        release(1),
    )
)
"""W1 takes the lock and pauses; W2 takes it after the lease and writes; W1 wakes, writes."""

_HELD_PAST_LEASE = Script(
    (
        acquire(1),
        hold(1),
        write_later(1),
        wait_held(1),
        lease_end(1),
        acquire(2),
        write(2),
        release(2),
        unhold(1),
        outcome(1),
        release(1),
    )
)
"""W1's write is held in flight past its lease and lands after W2's write."""

_GAP_WRITE = Script(
    (
        acquire(1),
        hold(1),
        write_later(1),
        wait_held(1),
        lease_end(1),
        acquire(2),
        unhold(1),
        outcome(1),
        write(2),
        release(2),
        release(1),
    )
)
"""W1's write lands after its lease, after W2's grant, before W2's first request."""

_GAP_LOST_UPDATE = Script(
    (
        acquire(1),
        hold(1, op="write"),
        write_later(1),
        wait_held(1),
        lease_end(1),
        acquire(2),
        hold(2, op="write"),
        write_later(2),
        wait_held(2),
        unhold(1),
        outcome(1),
        unhold(2),
        outcome(2),
        release(2),
        release(1),
    )
)
"""Read-modify-write: W1's stale write lands between W2's read and W2's write."""

_NONATOMIC = Script(
    (
        acquire(1),
        hold(1, phase="apply"),
        write_later(1),
        wait_held(1),
        lease_end(1),
        acquire(2),
        write(2),
        release(2),
        unhold(1),
        outcome(1),
        release(1),
    )
)
"""W1's write passes the check, waits between check and apply past its lease and W2's write."""

_VOLATILE = Script(
    (
        acquire(1),
        pause(1),
        write_later(1),
        lease_end(1),
        acquire(2),
        write(2),
        release(2),
        restart(),
        resume(1),
        outcome(1),
        release(1),
    )
)
"""W1 pauses past its lease; W2 writes; the store restarts; W1 wakes and writes."""

KEEPALIVE_SHARE: Final = 3
"""Keepalives per TTL in the scenarios that keep their lease alive."""
HOLD_TTLS: Final = 2
"""How many TTLs the crashed holder keeps its lock alive before it is killed."""
WAIT_TTLS: Final = 3
WAIT_AFTER_KILL: Final = 3.0
"""The next worker waits for the lock three TTLs and this many seconds after the kill: well
past the latest moment the lease allows for its end."""

_CRASHED = Script(
    (
        acquire(1),
        keep(1, HOLD_TTLS),
        crash(1),
        try_acquire(2, after=1, ttls=WAIT_TTLS, seconds=WAIT_AFTER_KILL),
        write(2),
        release(2),
    )
)
"""W1 keeps its lock alive past its TTL and is killed; W2 waits for the lock and, if it gets
it, writes and releases (a worker without a grant writes and releases nothing)."""

# ----- the scenarios -------------------------------------------------------------------------

SCENARIOS_LIST: Final = (
    LabScenario(
        "paused-worker",
        "The paused worker",
        "W1 takes the lock and is paused (SIGSTOP) past its lease; etcd revokes the lease and "
        "W2 takes the lock, writes and releases; W1 is resumed and sends its write with its "
        "old token.",
        _PAUSED,
        {"receiver": "none"},
    ),
    LabScenario(
        "unchecked-token",
        "Tokens issued but not checked",
        "Every write carries its token and W1 checks its own lease before sending, but the "
        "store checks nothing: W1's write is held in flight past the lease, W2 takes the lock "
        "and writes, then W1's write arrives.",
        _HELD_PAST_LEASE,
        {"receiver": "none", "worker_check": True},
    ),
    LabScenario(
        "gap-write",
        "After expiry, before the new holder's first request",
        "W1's write is held in flight past its lease; W2 is granted the lock, and W1's write "
        "arrives before W2's first request; then W2 writes.",
        _GAP_WRITE,
        {"receiver": "fenced"},
    ),
    LabScenario(
        "gap-lost-update",
        "The lost update in the gap",
        "Read-modify-write on a counter: W1 reads and computes its write, which is held in "
        "flight past its lease; W2 is granted the lock and reads; W1's write lands; then W2 "
        "writes the value it computed from its read.",
        _GAP_LOST_UPDATE,
        {"receiver": "fenced", "workload": "rmw"},
    ),
    LabScenario(
        "version-token",
        "The key's version as the token",
        "As the paused worker, but the token is the lock key's version, which starts again "
        "at 1 every time the key is created.",
        _PAUSED,
        {"receiver": "fenced", "token": "version"},
    ),
    LabScenario(
        "nonatomic-check",
        "Check, then write",
        "The store checks W1's token, then waits before writing (the gap between two "
        "transactions); meanwhile W1's lease ends and W2 takes the lock and writes; then W1's "
        "write is applied without a second check.",
        _NONATOMIC,
        {"receiver": "fenced-nonatomic"},
    ),
    LabScenario(
        "volatile-mark",
        "A mark kept in memory",
        "As the paused worker with a fenced store, but the store keeps its mark in memory "
        "and is killed and started again before W1 wakes up.",
        _VOLATILE,
        {"receiver": "fenced", "hwm": "volatile"},
    ),
    LabScenario(
        "crashed-holder",
        "A crashed holder",
        "W1 takes the lock and keeps its lease alive with keepalives for two TTLs; then it is "
        "killed (SIGKILL), so its keepalives stop; W2 asks for the lock and, once it gets it, "
        "writes and releases. With a lease the lock is free one TTL after W1's last "
        "keepalive; a lock without a lease (--expiry never) stays with the dead worker.",
        _CRASHED,
        {"receiver": "none", "keepalive": round(1 / KEEPALIVE_SHARE, 3)},
        variants=({"expiry": "never"},),
    ),
)

SCENARIOS: Final = {scenario.name: scenario for scenario in SCENARIOS_LIST}
SCENARIO_NAMES: Final = tuple(SCENARIOS)


def scenario(name: str) -> LabScenario:
    """The scenario with this name, or a one-line error listing the names."""
    try:
        return SCENARIOS[name]
    except KeyError:
        raise LabInputError(
            f"unknown scenario {name[:40]!r}: choose one of {', '.join(SCENARIO_NAMES)}"
        ) from None


# ----- the model's prediction --------------------------------------------------------------------


def _candidates(system: System, state: State, step: PlanStep) -> list[Action]:
    """The model actions a planned step stands for in this state and design."""
    kind, w = step
    design, s = system.design, system.view(state)
    nonatomic = design.receiver == "fenced-nonatomic"
    is_read = design.workload == "rmw" and s.phase[w] == 0 if w else False
    if kind == "acquire":
        value = s.grants + 1 if design.token == "random" else 0
        return [Action(ActionKind.ACQUIRE, w, value)]
    if kind in ("send", "release"):
        return [Action(ActionKind(kind.capitalize()), w)]
    if kind == "deliver":
        if nonatomic and not is_read:
            return [Action(ActionKind.CHECK, w), Action(ActionKind.APPLY, w)]
        return [Action(ActionKind.DELIVER, w)]
    if kind == "check":
        return [Action(ActionKind.CHECK, w)] if nonatomic else []
    if kind == "apply":
        return [Action(ActionKind.APPLY, w)] if nonatomic else [Action(ActionKind.DELIVER, w)]
    if kind == "restart":
        return [Action(ActionKind.STORAGE_RESTART)] if design.storage_restarts else []
    if kind == "hold":
        return [Action(ActionKind.TICK)]
    if kind == "renew":
        return [Action(ActionKind.RENEW, w)]
    if kind == "crash":
        return [Action(ActionKind.CRASH, w)]
    if kind == "wait":
        return [Action(ActionKind.TICK)] * (system.bounds.lease + 1) if s.tok[w] == 0 else []
    ticks = max(0, s.expires - s.now) if s.holder == w else 0
    return [Action(ActionKind.TICK)] * ticks


def planned_actions(plan: tuple[PlanStep, ...], system: System) -> list[Action]:
    """The plan's actions that the model allows, in order (the rest skipped, as the workers do)."""
    state, taken = system.initial(), []
    for step in plan:
        for action in _candidates(system, state, step):
            rule = system.rule_of.get(action)
            if rule is not None and system.is_enabled(state, rule):
                state = system.apply(state, rule)
                taken.append(action)
    return taken


@dataclass(frozen=True)
class Prediction:
    """What the model predicts for a scenario under a design: its trace, in short."""

    trace: Trace

    def counts(self) -> dict[str, int]:
        """Violations per property in the model's run of the plan."""
        return {
            name: sum(1 for step in self.trace.steps if name in step.violations)
            for name in PROPERTY_NAMES
        }

    def outcomes(self) -> tuple[int, int]:
        """Writes the model's receiver accepts and rejects in the plan."""
        accepted = sum(1 for step in self.trace.steps if step.outcome == "accepted")
        rejected = sum(1 for step in self.trace.steps if step.outcome == "rejected")
        return accepted, rejected

    def summary(self) -> str:
        """One sentence: writes accepted and rejected, properties violated."""
        accepted, rejected = self.outcomes()
        broken = [name for name, count in self.counts().items() if count]
        verdict = f"violates {', '.join(broken)}" if broken else "violates no property"
        return (
            f"the model accepts {accepted} write{'s' if accepted != 1 else ''} and rejects "
            f"{rejected}; its run {verdict}"
        )

    def key_sentences(self) -> list[str]:
        """The model's sentences for every rejection and every violating step."""
        return [
            step.sentence + "".join(f" {reason.text}" for reason in step.reasons)
            for step in self.trace.steps
            if step.violations or step.outcome == "rejected"
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON: counts, outcomes, the summary and the key sentences, design and bounds."""
        accepted, rejected = self.outcomes()
        return {
            "summary": self.summary(),
            "properties": {
                name: {"violated": count > 0, "count": count}
                for name, count in self.counts().items()
            },
            "accepted": accepted,
            "rejected": rejected,
            "sentences": self.key_sentences(),
            "design": self.trace.design.to_dict(),
            "bounds": self.trace.bounds.to_dict(),
            "actions": [step.action.to_dict() for step in self.trace.steps],
        }


def predict(chosen: LabScenario, settings: Settings) -> Prediction:
    """The model's run of the scenario's plan under these settings."""
    plan = chosen.plan(settings)
    restarts = sum(1 for kind, _ in plan if kind == "restart")
    crashes = sum(1 for kind, _ in plan if kind == "crash")
    design = model_design(settings, restarts, crashes)
    wide = Bounds(
        workers=settings.workers,
        lease=PLAN_LEASE,
        horizon=PLAN_HORIZON,
        grants=2,
        writes=settings.writes,
    )
    actions = planned_actions(plan, System(design, wide))
    ticks = sum(1 for action in actions if action.name is ActionKind.TICK)
    bounds = Bounds(settings.workers, PLAN_LEASE, ticks, 2, settings.writes)
    return Prediction(replay(design, bounds, actions, title=f"The model's {chosen.name}"))


PREDICTED_FACTS: Final = ("properties", "accepted", "rejected", "design", "bounds", "actions")
"""The facts of a stored prediction that must be the model's own (its sentences are words,
and the report shows the model's words, recomputed)."""


def model_prediction(history: History) -> dict[str, Any] | None:
    """The model's own prediction for a history that stores one (its scenario and settings
    replayed again), as JSON; None when it stores none or names no scenario the lab has."""
    chosen = SCENARIOS.get(history.scenario)
    if not history.prediction or chosen is None:
        return None
    made: dict[str, Any] = json.loads(json.dumps(predict(chosen, history.settings).to_dict()))
    return made


def predicted_tests(history: History) -> dict[str, int] | None:
    """For each property, how many steps of the model's predicted run put it to the test
    (None when the history stores no prediction): a property with none holds only
    vacuously in the prediction."""
    chosen = SCENARIOS.get(history.scenario)
    if not history.prediction or chosen is None:
        return None
    trace = predict(chosen, history.settings).trace
    return {name: trace.exercised(name) for name in PROPERTY_NAMES}


def stored_prediction_problem(history: History) -> str:
    """Why a history's stored prediction is not what the model predicts for its scenario and
    settings ('' when it is, or when it stores none): recomputed, never taken on the file's
    word."""
    stored = history.prediction
    if not stored:
        return ""
    chosen = SCENARIOS.get(history.scenario)
    if chosen is None:
        return (
            f"the history stores a prediction for scenario {history.scenario!r}, which the "
            "lab does not have, so the model cannot have made it"
        )
    model = model_prediction(history) or {}
    for name in PREDICTED_FACTS:
        if stored.get(name) != model[name]:
            return (
                f"the history's stored prediction differs from the model's in its "
                f"'{name}': the model predicts {model['summary']} for the {chosen.name} "
                f"scenario with {history.settings.label()}"
            )
    return ""


SCRIPT_FAULTS: Final = {
    "pause": ("pause", "resume"),
    "restart": ("storage-kill",),
    "crash": ("crash",),
}
"""The fault events each directive of a script leaves."""


def script_checks(history: History) -> list[Impossible]:
    """A scripted run's fault events are the ones its script has (a ZooKeeper run also
    pauses a holder whose session must end, in the script's lease-end)."""
    raw = sorted(history.events, key=lambda e: e["t"])
    chosen = SCENARIOS.get(history.scenario)
    if history.settings.seconds or chosen is None:
        return []
    allowed: set[str] = set()
    for directive in chosen.script.directives:
        allowed.update(SCRIPT_FAULTS.get(directive.kind, ()))
        if directive.kind == "lease-end" and history.settings.lock_service == "zookeeper":
            allowed.update(("pause", "resume"))
    kinds = (*FAULT_EVENTS, "resume", "member-start", "member-resume", "hold-lift")
    return [
        Impossible(
            "nemesis-extra",
            None,
            float(e["t"]),
            f"the history records a {e['kind']} at {e['t']:.3f} s, which the "
            f"{chosen.name} scenario's script never has",
        )
        for e in raw
        if e["kind"] in kinds and e["kind"] not in allowed
    ]
