"""The explore page's form as plain data: option fields, parsing widget values into a Design.

Widget values arrive from the browser (and from the URL), so they are parsed, never
evaluated: the skew list accepts digits and commas only, and every combination problem is
reported by the model's own `DesignError` message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Final

from model.design import (
    BOUND_LIMITS,
    HWM_KINDS,
    MAX_GRANTS,
    MAX_RESTARTS,
    MAX_SKEW,
    RECEIVERS,
    TOKENS,
    WORKLOADS,
    Bounds,
    Design,
    DesignError,
)
from model.presets import PRESETS_LIST

CUSTOM: Final = "(custom)"


@dataclass(frozen=True)
class OptionField:
    """One design option as a widget: its kind (`choice`, `int`, `bool`, `list`) and range."""

    name: str
    kind: str
    help: str
    choices: tuple[str, ...] = ()
    low: int = 0
    high: int = 0


OPTION_FIELDS: Final = (
    OptionField("token", "choice", "What the coordinator hands out at each grant.", TOKENS),
    OptionField("receiver", "choice", "What the protected resource checks on a write.", RECEIVERS),
    OptionField("hwm", "choice", "Where the receiver keeps its high-water mark.", HWM_KINDS),
    OptionField(
        "storage_restarts",
        "int",
        "Receiver restarts per run (volatile mark only).",
        low=0,
        high=MAX_RESTARTS,
    ),
    OptionField(
        "coordinator_restarts",
        "int",
        "Coordinator restarts per run (token counter-volatile only).",
        low=0,
        high=MAX_RESTARTS,
    ),
    OptionField("worker_check", "bool", "The worker checks its own lease before each send."),
    OptionField("workload", "choice", "Blind writes, or read-modify-write.", WORKLOADS),
    OptionField("fenced_reads", "bool", "Reads carry the token and are checked (rmw only)."),
    OptionField("grant_fences", "bool", "The grant itself raises the receiver's mark."),
    OptionField(
        "skew",
        "list",
        f"Per-worker clock offsets for token local-clock, e.g. `1,0` (each 0..{MAX_SKEW}); "
        "empty for the default.",
    ),
    OptionField(
        "wrap", "int", "Modulus of a wrapping token (0: the default 2).", low=0, high=MAX_GRANTS
    ),
)

BOUND_HELP: Final = {
    "workers": "W: workers",
    "lease": "L: lease length in ticks",
    "horizon": "T: time horizon (the clock runs 0..T)",
    "grants": "G: grants the coordinator may issue",
    "writes": "K: writes per grant",
}


def parse_skew(text: str) -> tuple[int, ...]:
    """Comma-separated whole numbers, e.g. `1, 0`; anything else is a DesignError."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    for part in parts:
        if not part.isdigit() or len(part) > 3:
            raise DesignError(f"skew must list whole numbers separated by commas, not {part!r}")
    return tuple(int(part) for part in parts)


def show_skew(skew: tuple[int, ...]) -> str:
    """The skew as the text the form shows."""
    return ",".join(str(v) for v in skew)


def design_from_values(values: Mapping[str, Any]) -> Design:
    """A validated Design from form values (missing options take the core's defaults)."""
    core = Design()
    options: dict[str, Any] = {}
    for option in OPTION_FIELDS:
        value = values.get(option.name, getattr(core, option.name))
        if option.kind == "list":
            value = parse_skew(value) if isinstance(value, str) else tuple(value)
        elif option.kind == "int":
            value = int(value)
        elif option.kind == "bool":
            value = bool(value)
        options[option.name] = value
    return Design(**options)


def bounds_from_values(values: Mapping[str, Any]) -> Bounds:
    """Validated Bounds from form values (missing sizes take the defaults)."""
    core = Bounds()
    return Bounds(**{name: int(values.get(name, getattr(core, name))) for name in BOUND_LIMITS})


def values_of(design: Design) -> dict[str, Any]:
    """The form values that show a design (the inverse of `design_from_values`)."""
    values: dict[str, Any] = {f.name: getattr(design, f.name) for f in fields(design)}
    values["skew"] = show_skew(design.skew)
    return values


def matching_preset(design: Design) -> str | None:
    """The name of the preset with exactly this design, if any."""
    return next((p.name for p in PRESETS_LIST if p.design == design), None)


def limits_text() -> str:
    """The allowed range of every bound, for the page."""
    return ", ".join(
        f"{BOUND_HELP[name].split(':')[0]} {low}..{high}"
        for name, (low, high) in BOUND_LIMITS.items()
    )
