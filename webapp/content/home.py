"""The home page's words: what the app is for, how to read a timeline, the properties."""

from __future__ import annotations

from typing import Final

from model.properties import PROPERTIES
from webapp.show.style import ACCEPTED, REJECTED, VIOLATING

TITLE: Final = "Fencing Lab"

INTRO: Final = (
    "A distributed lock hands out **leases**, but a worker can pause (a GC pause, a stalled VM) "
    "past its lease and wake up still believing it holds the lock. **Fencing tokens** let the "
    "protected resource refuse such late writes. This app shows, with a model that checks "
    "every interleaving, what each design guarantees and where it breaks. Every run, verdict "
    "and sentence on these pages comes from the model."
)

WHERE_TO_GO: Final = "Where to go"
HOW_TO_READ_TITLE: Final = "How to read a timeline"
PROPERTIES_TITLE: Final = "The properties"


def how_to_read() -> str:
    """How to read a timeline, with the outcomes' own glyphs and words."""
    return (
        "One lane per actor (coordinator, each worker W1, W2, …, the receiver), the clock along "
        "the bottom. Bars are leases: solid while current, faint with a dotted outline when the "
        "worker still holds a token past its lease. Arrows are requests from send to delivery. "
        "Outcomes are always shown by symbol, word and colour:\n\n"
        f"- {ACCEPTED.glyph} **{ACCEPTED.word}**: green circle\n"
        f"- {VIOLATING.glyph} **{VIOLATING.word}** a property: purple star\n"
        f"- {REJECTED.glyph} **{REJECTED.word}**: red cross"
    )


def properties_list() -> str:
    """Every property of the model as a Markdown list: name, title and statement."""
    return "\n".join(f"- **{p.name}, {p.title}**: {p.statement}" for p in PROPERTIES)
