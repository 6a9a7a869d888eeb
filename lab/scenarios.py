"""Scripted scenarios: the model's lessons reproduced step by step on the real system.

Each scenario has a default design (receiver, token, mark, workload, worker check) that
the CLI's flags override, a `drive` function that makes the real processes do it, and a
`plan`: the same story in the model's actions. The model's prediction is the plan
replayed by the step interpreter under the chosen design (a step the model does not allow
there, such as the release of a worker whose write was rejected, is skipped, just as the
real worker skips it), so what the lab says the model predicts is computed, not written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from lab.conformance import model_design
from lab.lock_table import DEFAULT_SERVICE, SERVICES
from lab.runner import Driver
from lab.settings import LabInputError, Settings
from model.actions import Action, ActionKind
from model.design import Bounds
from model.properties import PROPERTY_NAMES
from model.system import State, System
from model.trace import Trace, replay

PlanStep = tuple[str, int]
"""A planned step: `acquire`, `send`, `deliver`, `check`, `apply`, `release`, `expire` (tick
until the worker's lease is over) or `restart` (the store), and the worker (0: none)."""

PLAN_HORIZON: Final = 20
PLAN_LEASE: Final = 2


@dataclass(frozen=True)
class LabScenario:
    """A named scripted run: its story, default design, real steps and model plan."""

    name: str
    title: str
    story: str
    drive: Callable[[Driver], None]
    plan: tuple[PlanStep, ...]
    defaults: dict[str, Any] = field(default_factory=dict)
    steps: int = 10

    def settings(self, **overrides: Any) -> Settings:
        """The scenario's settings with the given flags (None: keep the default) applied."""
        chosen = {**self.defaults, **{k: v for k, v in overrides.items() if v is not None}}
        if chosen.get("receiver") in ("none", "etcd-txn") and "hwm" not in overrides:
            chosen["hwm"] = "durable"  # only a receiver with a mark can lose it
        service = SERVICES.get(str(chosen.get("lock_service", DEFAULT_SERVICE)))
        if service is not None and overrides.get("token") is None:
            default = str(chosen.get("token", "create-revision"))
            if default not in service.token_names:  # the service's own first token instead
                chosen["token"] = service.token_names[0]
        return Settings(workers=2, writes=1, **chosen)


# ----- the real steps --------------------------------------------------------------------


def _paused_worker(d: Driver) -> None:
    """W1 takes the lock and pauses; W2 takes it after the lease and writes; W1 wakes, writes."""
    d.acquire(1)
    d.pause(1)
    late = d.write_later(1)
    d.wait_lease_end(1)
    d.acquire(2)
    d.write(2)
    d.release(2)
    d.resume(1)
    d.outcome(1, late)
    d.release(1)


def _unchecked_token(d: Driver) -> None:
    """W1's write (token checked by nobody) is held in flight past its lease, lands after W2's."""
    d.acquire(1)
    d.hold(1)
    late = d.write_later(1)
    d.wait_held(1)
    d.wait_lease_end(1)
    d.acquire(2)
    d.write(2)
    d.release(2)
    d.unhold(1)
    d.outcome(1, late)
    d.release(1)


def _gap_write(d: Driver) -> None:
    """W1's write lands after its lease, after W2's grant, before W2's first request."""
    d.acquire(1)
    d.hold(1)
    late = d.write_later(1)
    d.wait_held(1)
    d.wait_lease_end(1)
    d.acquire(2)
    d.unhold(1)
    d.outcome(1, late)
    d.write(2)
    d.release(2)
    d.release(1)


def _gap_lost_update(d: Driver) -> None:
    """Read-modify-write: W1's stale write lands between W2's read and W2's write."""
    d.acquire(1)
    d.hold(1, kind="write")
    late = d.write_later(1)
    d.wait_held(1)
    d.wait_lease_end(1)
    d.acquire(2)
    d.hold(2, kind="write")
    second = d.write_later(2)
    d.wait_held(2)
    d.unhold(1)
    d.outcome(1, late)
    d.unhold(2)
    d.outcome(2, second)
    d.release(2)
    d.release(1)


def _nonatomic_check(d: Driver) -> None:
    """W1's write passes the check, waits between check and apply past its lease and W2's write."""
    d.acquire(1)
    d.hold(1, phase="apply")
    late = d.write_later(1)
    d.wait_held(1)
    d.wait_lease_end(1)
    d.acquire(2)
    d.write(2)
    d.release(2)
    d.unhold(1)
    d.outcome(1, late)
    d.release(1)


def _volatile_mark(d: Driver) -> None:
    """W1 pauses past its lease; W2 writes; the store restarts; W1 wakes and writes."""
    d.acquire(1)
    d.pause(1)
    late = d.write_later(1)
    d.wait_lease_end(1)
    d.acquire(2)
    d.write(2)
    d.release(2)
    d.restart_storage()
    d.resume(1)
    d.outcome(1, late)
    d.release(1)


# ----- the scenarios -------------------------------------------------------------------------

_PAUSED_PLAN: Final[tuple[PlanStep, ...]] = (
    ("acquire", 1),
    ("expire", 1),
    ("acquire", 2),
    ("send", 2),
    ("deliver", 2),
    ("release", 2),
    ("send", 1),
    ("deliver", 1),
    ("release", 1),
)

SCENARIOS_LIST: Final = (
    LabScenario(
        "paused-worker",
        "The paused worker",
        "W1 takes the lock and is paused (SIGSTOP) past its lease; etcd revokes the lease and "
        "W2 takes the lock, writes and releases; W1 is resumed and sends its write with its "
        "old token.",
        _paused_worker,
        _PAUSED_PLAN,
        {"receiver": "none"},
        steps=9,
    ),
    LabScenario(
        "unchecked-token",
        "Tokens issued but not checked",
        "Every write carries its token and W1 checks its own lease before sending, but the "
        "store checks nothing: W1's write is held in flight past the lease, W2 takes the lock "
        "and writes, then W1's write arrives.",
        _unchecked_token,
        (
            ("acquire", 1),
            ("send", 1),
            ("expire", 1),
            ("acquire", 2),
            ("send", 2),
            ("deliver", 2),
            ("release", 2),
            ("deliver", 1),
            ("release", 1),
        ),
        {"receiver": "none", "worker_check": True},
        steps=9,
    ),
    LabScenario(
        "gap-write",
        "After expiry, before the new holder's first request",
        "W1's write is held in flight past its lease; W2 is granted the lock, and W1's write "
        "arrives before W2's first request; then W2 writes.",
        _gap_write,
        (
            ("acquire", 1),
            ("send", 1),
            ("expire", 1),
            ("acquire", 2),
            ("deliver", 1),
            ("send", 2),
            ("deliver", 2),
            ("release", 2),
            ("release", 1),
        ),
        {"receiver": "fenced"},
        steps=8,
    ),
    LabScenario(
        "gap-lost-update",
        "The lost update in the gap",
        "Read-modify-write on a counter: W1 reads and computes its write, which is held in "
        "flight past its lease; W2 is granted the lock and reads; W1's write lands; then W2 "
        "writes the value it computed from its read.",
        _gap_lost_update,
        (
            ("acquire", 1),
            ("send", 1),
            ("deliver", 1),
            ("send", 1),
            ("expire", 1),
            ("acquire", 2),
            ("send", 2),
            ("deliver", 2),
            ("send", 2),
            ("deliver", 1),
            ("deliver", 2),
            ("release", 2),
            ("release", 1),
        ),
        {"receiver": "fenced", "workload": "rmw"},
        steps=10,
    ),
    LabScenario(
        "version-token",
        "The key's version as the token",
        "As the paused worker, but the token is the lock key's version, which starts again "
        "at 1 every time the key is created.",
        _paused_worker,
        _PAUSED_PLAN,
        {"receiver": "fenced", "token": "version"},
        steps=9,
    ),
    LabScenario(
        "nonatomic-check",
        "Check, then write",
        "The store checks W1's token, then waits before writing (the gap between two "
        "transactions); meanwhile W1's lease ends and W2 takes the lock and writes; then W1's "
        "write is applied without a second check.",
        _nonatomic_check,
        (
            ("acquire", 1),
            ("send", 1),
            ("check", 1),
            ("expire", 1),
            ("acquire", 2),
            ("send", 2),
            ("deliver", 2),
            ("release", 2),
            ("apply", 1),
            ("release", 1),
        ),
        {"receiver": "fenced-nonatomic"},
        steps=9,
    ),
    LabScenario(
        "volatile-mark",
        "A mark kept in memory",
        "As the paused worker with a fenced store, but the store keeps its mark in memory "
        "and is killed and started again before W1 wakes up.",
        _volatile_mark,
        (
            ("acquire", 1),
            ("expire", 1),
            ("acquire", 2),
            ("send", 2),
            ("deliver", 2),
            ("release", 2),
            ("restart", 0),
            ("send", 1),
            ("deliver", 1),
            ("release", 1),
        ),
        {"receiver": "fenced", "hwm": "volatile"},
        steps=10,
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
    restarts = sum(1 for kind, _ in chosen.plan if kind == "restart")
    design = model_design(settings, restarts)
    wide = Bounds(
        workers=settings.workers,
        lease=PLAN_LEASE,
        horizon=PLAN_HORIZON,
        grants=2,
        writes=settings.writes,
    )
    actions = planned_actions(chosen.plan, System(design, wide))
    ticks = sum(1 for action in actions if action.name is ActionKind.TICK)
    bounds = Bounds(settings.workers, PLAN_LEASE, ticks, 2, settings.writes)
    return Prediction(replay(design, bounds, actions, title=f"The model's {chosen.name}"))
