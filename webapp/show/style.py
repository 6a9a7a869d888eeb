"""One look for every page: a colour per actor, one symbol per outcome, never colour alone.

Every figure and table in the app takes its colours, marker symbols and outcome words from
here, so that "rejected" is the same red cross on the home page, in a chapter and in the
explorer, and a reader who cannot tell the colours apart still has the symbol and the word.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from model.verdicts import VACUOUS_LEAD, Status

COORDINATOR: Final = "coordinator"
RECEIVER: Final = "receiver"
CLOCK: Final = "clock"

WORKER_COLOURS: Final = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")
"""Worker W1..W5, in order (a colour-blind-safe subset of the classic palette)."""

ACTOR_COLOURS: Final = {
    COORDINATOR: "#444444",
    RECEIVER: "#17becf",
    CLOCK: "#999999",
}


def actor_colour(actor: str) -> str:
    """The colour of an actor: `coordinator`, `receiver`, `clock`, or a worker `W<n>`."""
    if actor.startswith("W") and actor[1:].isdigit():
        return WORKER_COLOURS[(int(actor[1:]) - 1) % len(WORKER_COLOURS)]
    return ACTOR_COLOURS.get(actor, "#444444")


@dataclass(frozen=True)
class Outcome:
    """How one kind of event looks: plotly marker symbol, colour, a glyph and a word."""

    key: str
    word: str
    symbol: str
    colour: str
    glyph: str


ACCEPTED: Final = Outcome("accepted", "accepted", "circle", "#2e7d32", "✔")
REJECTED: Final = Outcome("rejected", "rejected", "x-thin-open", "#c62828", "✘")
VIOLATING: Final = Outcome("violating", "accepted, violates", "star", "#8e24aa", "!")
READ: Final = Outcome("read", "read returned", "circle-open", "#2e7d32", "↩")
CHECKED: Final = Outcome("checked", "checked, not yet applied", "circle-open-dot", "#6d4c41", "…")

OUTCOMES: Final = (ACCEPTED, VIOLATING, REJECTED, READ, CHECKED)

HOLDS_GLYPH: Final = "✔"
VIOLATED_GLYPH: Final = "✘"
UNKNOWN_GLYPH: Final = "?"

ACTIVE_LEASE_OPACITY: Final = 0.55
PAUSED_LEASE_OPACITY: Final = 0.18
CURRENT_STEP_COLOUR: Final = "#ffb300"
"""Ring drawn around the step that is being narrated."""
PAUSE_COLOUR: Final = "#424242"
"""The dotted line along a worker's lane while it is paused."""
CRASHED_COLOUR: Final = "#212121"
"""The solid line along a crashed worker's lane, from its crash on."""
GAP_COLOUR: Final = "#c62828"
"""Outline and label of the gap (an old lease over, the receiver would still take its token)."""
GAP_FILL: Final = "rgba(198, 40, 40, 0.10)"
BAND_FILL: Final = "rgba(120, 130, 150, 0.07)"
"""Every other tick's band on the time axis."""
FUTURE_FILL: Final = "rgba(255, 255, 255, 0.6)"
"""Veil over the part of the time axis the player has not reached yet."""


THEME_TEXT: Final = "#2f2d2b"
"""The text colour of Streamlit's light theme, as the browser shows it."""
PAGE_BACKGROUND: Final = "#ffffff"
CAPTION_OPACITY: Final = 0.75
"""Captions are the theme's text at this opacity: still quieter than the body, and at
better than 4.5:1 contrast (Streamlit's own 0.6 gives about 3.9:1)."""
MIN_CONTRAST: Final = 4.5
"""The contrast every text must reach (WCAG AA for body text)."""

PAGE_CSS: Final = f"""
[data-testid="stCaptionContainer"] {{ opacity: {CAPTION_OPACITY}; }}
[data-testid="stPageLink-NavLink"] span,
[data-testid="stPageLink-NavLink"] p {{
  white-space: normal; overflow: visible; text-overflow: clip;
}}
"""
"""Styles for every page: readable captions, and page links that wrap on a phone instead of
being cut off."""


def _channels(colour: str) -> tuple[int, int, int]:
    """`#rrggbb` as three 0..255 numbers."""
    value = colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def blend(colour: str, background: str, opacity: float) -> str:
    """The colour a text at this opacity shows on the background, as `#rrggbb`."""
    mixed = (
        round(opacity * c + (1 - opacity) * b)
        for c, b in zip(_channels(colour), _channels(background), strict=True)
    )
    return "#" + "".join(f"{c:02x}" for c in mixed)


def relative_luminance(colour: str) -> float:
    """WCAG relative luminance of an sRGB colour."""

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in _channels(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(first: str, second: str) -> float:
    """WCAG contrast ratio of two colours, from 1 (none) to 21 (black on white)."""
    high, low = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


STATUS_GLYPHS: Final = {
    Status.HOLDS: HOLDS_GLYPH,
    Status.PROVED: HOLDS_GLYPH,
    Status.VIOLATED: VIOLATED_GLYPH,
    Status.UNKNOWN: UNKNOWN_GLYPH,
    Status.VACUOUS: "○",
}


def verdict_label(status: Status, shortest: int | None = None, never_exercised: str = "") -> str:
    """A verdict in words with its glyph, such as `✔ holds`, `✘ violated (5 steps)` or
    `○ holds vacuously, never exercised: nothing in this design ever crashes` (given why)."""
    glyph = STATUS_GLYPHS[status]
    if status is Status.VIOLATED and shortest:
        return f"{glyph} violated ({shortest} steps)"
    if status is Status.VACUOUS and never_exercised:
        return f"{glyph} {VACUOUS_LEAD}: {never_exercised}"
    return f"{glyph} {status.word}"
