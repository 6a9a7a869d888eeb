"""The vocabulary of actions: one row per kind of step, and the action instances built on it.

Every list that says something about the kinds of action (which ones the receiver takes,
which are faults, which concern no worker, their code in a link, their look on the
timeline, their button in the playground) is derived from `ACTION_ROWS`, so a new kind of
step is one enum member and one row here, then the rules, the narration and the look that
the tests of `tests/test_vocabulary.py` ask for.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any, Final

from model.options import DesignError


class ActionKind(StrEnum):
    """The name of a kind of step, as traces, links and sentences spell it."""

    TICK = "Tick"
    ACQUIRE = "Acquire"
    SEND = "Send"
    DELIVER = "Deliver"
    CHECK = "Check"
    APPLY = "Apply"
    RELEASE = "Release"
    RENEW = "Renew"
    STORAGE_RESTART = "StorageRestart"
    COORDINATOR_RESTART = "CoordinatorRestart"
    CRASH = "Crash"

    def __hash__(self) -> int:
        """Hash as the name itself, so a kind and its spelling find the same entry."""
        return str.__hash__(self)

    @property
    def row(self) -> ActionRow:
        """This kind's row of `ACTION_ROWS`."""
        return BY_KIND[self]


class Actor(Enum):
    """Who takes a kind of step (a worker's steps are taken by that worker, `W1`, `W2`...)."""

    CLOCK = "clock"
    COORDINATOR = "coordinator"
    WORKER = "worker"
    RECEIVER = "receiver"
    ENVIRONMENT = "environment"


@dataclass(frozen=True)
class ActionRow:
    """What one kind of step is: who takes it, what it concerns, and how it is shown.

    `lane` is where the timeline draws it (a crash is the environment's step, drawn on the
    worker it stops); `look` names its marker on the timeline (a reception has none: it is
    drawn with the receiver's outcome); `code` is its letters in a playground link;
    `button` its playground label, with `{w}` the worker and `{request}` `read` or `write`.
    """

    kind: ActionKind
    actor: Actor
    takes_worker: bool
    code: str
    button: str
    look: str | None
    reception: bool = False
    """The receiver handles a request in this step."""
    arrival: bool = False
    """The request leaves the network in this step (a split receiver's Apply comes later)."""
    sends: bool = False
    """A worker puts a request into the network."""
    fault: bool = False
    """A fault the design may allow a bounded number of times."""
    lane: Actor | None = None

    @property
    def drawn_on(self) -> Actor:
        """The lane of the timeline the step is drawn on."""
        return self.lane or self.actor

    @property
    def request(self) -> bool:
        """The step sends a worker's request or handles it."""
        return self.sends or self.reception


ACTION_ROWS: Final = (
    ActionRow(ActionKind.TICK, Actor.CLOCK, False, "T", "Tick (time passes)", "clock tick"),
    ActionRow(ActionKind.ACQUIRE, Actor.COORDINATOR, True, "A", "Acquire W{w}", "grant"),
    ActionRow(
        ActionKind.SEND, Actor.WORKER, True, "S", "Send W{w}'s {request}", "send", sends=True
    ),
    ActionRow(
        ActionKind.DELIVER,
        Actor.RECEIVER,
        True,
        "D",
        "Deliver W{w}'s {request}",
        None,
        reception=True,
        arrival=True,
    ),
    ActionRow(
        ActionKind.CHECK,
        Actor.RECEIVER,
        True,
        "C",
        "Check W{w}'s {request}",
        None,
        reception=True,
        arrival=True,
    ),
    ActionRow(
        ActionKind.APPLY, Actor.RECEIVER, True, "P", "Apply W{w}'s {request}", None, reception=True
    ),
    ActionRow(ActionKind.RELEASE, Actor.WORKER, True, "R", "Release W{w}", "release"),
    ActionRow(ActionKind.RENEW, Actor.WORKER, True, "N", "Renew W{w}'s lease", "renewal"),
    ActionRow(
        ActionKind.STORAGE_RESTART,
        Actor.RECEIVER,
        False,
        "RS",
        "Restart storage",
        "restart",
        fault=True,
    ),
    ActionRow(
        ActionKind.COORDINATOR_RESTART,
        Actor.COORDINATOR,
        False,
        "RC",
        "Restart coordinator",
        "restart",
        fault=True,
    ),
    ActionRow(
        ActionKind.CRASH,
        Actor.ENVIRONMENT,
        True,
        "K",
        "Crash W{w}",
        "crash",
        fault=True,
        lane=Actor.WORKER,
    ),
)
"""One row per kind of step, in the order of `ActionKind`."""

BY_KIND: Final = {row.kind: row for row in ACTION_ROWS}
BY_CODE: Final = {row.code: row.kind for row in ACTION_ROWS}
"""The kind of each link code."""
RECEPTIONS: Final = tuple(row.kind for row in ACTION_ROWS if row.reception)
"""Kinds in which the receiver handles a request."""
FAULTS: Final = tuple(row.kind for row in ACTION_ROWS if row.fault)
"""Kinds that are faults."""
WORKERLESS: Final = tuple(row.kind for row in ACTION_ROWS if not row.takes_worker)
"""Kinds that concern no worker."""
ACTION_NAMES: Final = tuple(str(kind) for kind in ActionKind)
"""Every kind's name, in order."""


@dataclass(frozen=True, order=True)
class Action:
    """One action instance: a kind, the worker it concerns (0: none), a chosen value (0: none).

    The kind may be given by its name (`Action("Tick")`); it is kept as an `ActionKind`.
    """

    name: ActionKind
    worker: int = 0
    value: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", ActionKind(self.name))

    @property
    def row(self) -> ActionRow:
        """The row of this action's kind."""
        return self.name.row

    @property
    def actor(self) -> str:
        """Who takes this step: `clock`, `coordinator`, `W1`, `receiver`, `environment`."""
        actor = self.row.actor
        return f"W{self.worker}" if actor is Actor.WORKER else actor.value

    def label(self) -> str:
        """Short form such as `Acquire(W1)` or `Acquire(W2, token 3)`."""
        if not self.worker:
            return str(self.name)
        if self.value:
            return f"{self.name}(W{self.worker}, token {self.value})"
        return f"{self.name}(W{self.worker})"

    def button(self, request: str) -> str:
        """The playground's label: `Acquire W2 (token 3)`, `Deliver W1's write`."""
        text = self.row.button.format(w=self.worker, request=request)
        return text + (f" (token {self.value})" if self.value else "")

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON; zero fields are left out."""
        data: dict[str, Any] = {"name": str(self.name)}
        if self.worker:
            data["worker"] = self.worker
        if self.value:
            data["value"] = self.value
        return data

    @staticmethod
    def from_dict(data: Any) -> Action:
        """An action from JSON, refusing unknown names and malformed fields."""
        if not isinstance(data, dict):
            raise DesignError(f"an action must be an object, not {type(data).__name__}")
        unknown = sorted(set(data) - {"name", "worker", "value"})
        if unknown:
            raise DesignError(f"action has unknown field {unknown[0]!r}")
        name, worker, value = data.get("name"), data.get("worker", 0), data.get("value", 0)
        if not isinstance(name, str) or name not in ACTION_NAMES:
            raise DesignError(
                f"unknown action {name!r}: known actions are {', '.join(ACTION_NAMES)}"
            )
        for field, number in (("worker", worker), ("value", value)):
            if not isinstance(number, int) or isinstance(number, bool) or number < 0:
                raise DesignError(
                    f"action {field} must be a non-negative whole number, not {number!r}"
                )
        return Action(ActionKind(name), worker, value)
