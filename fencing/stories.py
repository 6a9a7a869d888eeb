"""Scripted stories: fixed action lists that tell a lesson, replayed like any trace.

A scenario names its design and bounds and lists actions only; the states, verdicts and
sentences come from replaying it, so a story can never claim what the model does not do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from model.actions import Action, ActionKind
from model.design import Bounds, Design, Receiver
from model.formats.trace import Trace, replay


@dataclass(frozen=True)
class Scenario:
    """A named, scripted run of a design."""

    name: str
    title: str
    design: Design
    bounds: Bounds
    actions: tuple[Action, ...]
    story: str

    def trace(self) -> Trace:
        """The scenario replayed through the step interpreter."""
        return replay(self.design, self.bounds, self.actions, title=self.title)


PAUSED_WORKER_BOUNDS: Final = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)

PAUSED_WORKER_ACTIONS: Final = (
    Action(ActionKind.ACQUIRE, 1),
    Action(ActionKind.TICK),
    Action(ActionKind.TICK),
    Action(ActionKind.ACQUIRE, 2),
    Action(ActionKind.SEND, 2),
    Action(ActionKind.DELIVER, 2),
    Action(ActionKind.SEND, 1),
    Action(ActionKind.DELIVER, 1),
    Action(ActionKind.RELEASE, 2),
)
"""W1 takes the lock and pauses; its lease expires; W2 takes the lock and writes; W1 wakes
and writes with its old token; W2 finishes."""

PAUSED_WORKER_STORY: Final = (
    "W1 takes the lock and then pauses (a GC pause, a stalled VM) for longer than its "
    "lease. The lease expires, so the lock service grants the lock to W2, which writes. "
    "W1 wakes up, still believing it holds the lock, and sends its write."
)


def paused_worker_story(receiver: Receiver | str) -> Scenario:
    """The paused worker's story with a plain store (`none`) or a fencing receiver (`fenced`)."""
    design = Design(receiver=Receiver(receiver))
    title = (
        "Fencing: the late write is refused"
        if design.receiver.checks_anything
        else "Lease only: the late write lands"
    )
    return Scenario(
        f"paused-worker-{receiver}",
        title,
        design,
        PAUSED_WORKER_BOUNDS,
        PAUSED_WORKER_ACTIONS,
        PAUSED_WORKER_STORY,
    )


WHY_A_LEASE_BOUNDS: Final = Bounds(workers=2, lease=2, horizon=6, grants=3, writes=1)

LOCK_WITHOUT_LEASE_ACTIONS: Final = (
    Action(ActionKind.ACQUIRE, 1),
    Action(ActionKind.TICK),
    Action(ActionKind.TICK),
    Action(ActionKind.TICK),
    Action(ActionKind.SEND, 1),
    Action(ActionKind.DELIVER, 1),
    Action(ActionKind.RELEASE, 1),
    Action(ActionKind.ACQUIRE, 2),
    Action(ActionKind.SEND, 2),
    Action(ActionKind.DELIVER, 2),
    Action(ActionKind.CRASH, 2),
    Action(ActionKind.TICK),
    Action(ActionKind.TICK),
    Action(ActionKind.TICK),
)
"""No lease: W1 pauses, nobody else can take the lock, W1 wakes, writes and releases; W2
takes the lock, writes and crashes holding it; time passes and the lock stays with W2."""

_PAUSE_UNDER_A_LEASE: Final = (
    Action(ActionKind.ACQUIRE, 1),
    Action(ActionKind.TICK),
    Action(ActionKind.TICK),
    Action(ActionKind.ACQUIRE, 2),
    Action(ActionKind.SEND, 2),
    Action(ActionKind.DELIVER, 2),
    Action(ActionKind.SEND, 1),
    Action(ActionKind.DELIVER, 1),
    Action(ActionKind.TICK),
    Action(ActionKind.RENEW, 2),
    Action(ActionKind.CRASH, 2),
    Action(ActionKind.TICK),
    Action(ActionKind.TICK),
)
"""A lease kept alive: W1 pauses past its lease, W2 is granted the lock and writes, W1 wakes
and sends its late write; W2 renews, then crashes; its lease runs out L ticks after the
renewal."""

KEEPALIVE_LEASE_ACTIONS: Final = (
    *_PAUSE_UNDER_A_LEASE,
    Action(ActionKind.RELEASE, 1),
    Action(ActionKind.ACQUIRE, 1),
)
"""With plain writes W1's late write lands, so W1 finishes and releases before taking the
lock again."""

KEEPALIVE_FENCING_ACTIONS: Final = (*_PAUSE_UNDER_A_LEASE, Action(ActionKind.ACQUIRE, 1))
"""With fencing W1's late write is rejected and W1 gives its token up, so it can take the
freed lock at once."""
