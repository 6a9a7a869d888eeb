"""One look per meaning a swimlane timeline draws, model run or real run alike: its legend
name and how its marker, line or area looks.

A look is chosen where the facts are made (`webapp.show.trace_swimlane` for a model run,
`webapp.show.lab_history` for a lab history); the drawer (`webapp.draw.swimlane`) draws
a look the same way wherever it comes from, so a grant, a pause or a rejected write looks
the same on both timelines, and the legend shows each look once with what the figure draws.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from model.actions import ACTION_ROWS
from webapp.show.style import (
    ACTIVE_LEASE_OPACITY,
    CRASHED_COLOUR,
    CURRENT_STEP_COLOUR,
    GAP_COLOUR,
    GAP_FILL,
    OUTCOMES,
    PAUSE_COLOUR,
    Outcome,
)

GREY: Final = "#777777"


@dataclass(frozen=True)
class Look:
    """How one meaning is drawn: its legend name and its marker, line or hatched area."""

    name: str
    symbol: str = ""
    """Marker symbol (plotly name); empty for a meaning drawn as a line or an area."""
    dash: str = ""
    """Line dash for a meaning drawn as a line; empty otherwise."""
    colour: str = GREY
    size: int = 13
    hatched: bool = False
    """An area drawn hatched with a dotted outline (a stopped process, a held request)."""
    fill: str = ""
    """The legend marker's fill when it is not `colour` (the gap's faint red)."""
    outline: str = ""
    """The legend marker's outline colour, if it has one."""
    outline_width: float = 0.0
    opacity: float | None = None


GRANT: Final = Look("grant", symbol="diamond")
SEND: Final = Look("send", symbol="triangle-right")
RELEASE: Final = Look("release", symbol="square")
RESTART: Final = Look("restart", symbol="bowtie")
TICK: Final = Look("clock tick", symbol="line-ns-open", size=16)
RENEWAL: Final = Look("renewal", symbol="triangle-up")
CRASH: Final = Look("crash", symbol="x", size=14)
CURRENT: Final = Look(
    "current step",
    symbol="circle-open",
    colour=CURRENT_STEP_COLOUR,
    size=30,
    outline=CURRENT_STEP_COLOUR,
    outline_width=3,
)
LEASE: Final = Look("lease", symbol="square", opacity=ACTIVE_LEASE_OPACITY)
PAST_LEASE: Final = Look("past its lease", symbol="square-open")
LOCK_HELD: Final = Look("lock held (no lease)", symbol="square", opacity=ACTIVE_LEASE_OPACITY)
"""A holder's time with a lock that never expires: held until it is released."""
PAST_LOCK: Final = Look("lock lost", symbol="square-open")
"""A worker still acting on a lock without a lease that the coordinator no longer records."""
PAUSED: Final = Look("paused", colour=PAUSE_COLOUR, hatched=True)
HELD: Final = Look("held in flight", colour=PAUSE_COLOUR, hatched=True)
"""A request the lab's store holds in flight (only real runs have them)."""
IN_NETWORK: Final = Look("in the network", dash="dash")
CRASHED: Final = Look("crashed", dash="solid", colour=CRASHED_COLOUR)
"""A crashed worker's lane from its crash on: a solid dark line, never the pause's hatching."""
GAP: Final = Look(
    "gap", symbol="square", colour=GAP_COLOUR, fill=GAP_FILL, outline=GAP_COLOUR, outline_width=1
)

REVOKED: Final = Look("lease revoked", symbol="x-open", size=12)
LEASE_CHECK: Final = Look("lease check", symbol="hourglass")
STORE_KILLED: Final = Look("store killed", symbol="bowtie", colour="#c62828")
STORE_STARTED: Final = Look("store started", symbol="bowtie-open", colour="#17becf")
ERROR: Final = Look("error", symbol="circle-x", colour="#c62828")
"""Events only real runs have: a lease the service revoked, a worker's own look at its
lease, the store's process killed and started, a client error."""

STEP_LOOKS: Final = (GRANT, SEND, RELEASE, RESTART, RENEWAL, CRASH, TICK)
"""The markers of model steps that are not receptions, in the legend's order; each action
kind names its own by `look` (model.actions.ACTION_ROWS)."""
LAB_EVENT_LOOKS: Final = (REVOKED, LEASE_CHECK, STORE_KILLED, STORE_STARTED, ERROR)
ACTION_LOOKS: Final = {
    row.kind: next(look for look in STEP_LOOKS if look.name == row.look)
    for row in ACTION_ROWS
    if row.look is not None
}
"""The look of each action that is not a reception (receptions use the outcome's look)."""


def outcome_look(outcome: Outcome) -> Look:
    """The look of a reception: the outcome's glyph, name (`violating`), symbol and colour."""
    return Look(f"{outcome.glyph} {outcome.key}", symbol=outcome.symbol, colour=outcome.colour)


MARK_LOOKS: Final = (*STEP_LOOKS, *LAB_EVENT_LOOKS, *map(outcome_look, OUTCOMES))
"""Every marker look, in the legend's order: events first, then the receiver's outcomes."""
AREA_LOOKS: Final = (IN_NETWORK, PAUSED, HELD, CRASHED, GAP)
"""Lines and areas, in the legend's order after the markers."""
