"""The explore page's form as plain data: option fields, parsing widget values into a Design.

Widget values arrive from the browser (and from the URL), so they are parsed, never
evaluated: the skew list accepts digits and commas only, and every combination problem is
reported by the model's own `DesignError` message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from model.design import BOUND_LIMITS, BOUNDS, Bounds, Design
from model.options import OPTIONS, Kind, Option

CUSTOM: Final = "(custom)"

OPTION_FIELDS: Final = OPTIONS
"""The design options as form fields: the model's own option table."""


BOUND_HELP: Final = {bound.name: bound.form_label for bound in BOUNDS}
"""Each bound in words first, its letter after (the letters of docs/model.md)."""


def parse_skew(text: str) -> tuple[int, ...]:
    """Comma-separated whole numbers, e.g. `1, 0`; anything else is a DesignError."""
    parsed: tuple[int, ...] = next(o for o in OPTIONS if o.name == "skew").parse_text(text)
    return parsed


def show_skew(skew: tuple[int, ...]) -> str:
    """The skew as the text the form shows."""
    return ",".join(str(v) for v in skew)


def option_value(option: Option, value: Any) -> Any:
    """A widget's value in the option's type: text lists are parsed, numbers made whole."""
    if option.kind is Kind.OFFSETS and isinstance(value, str):
        return option.parse_text(value)
    if option.kind is Kind.COUNT and isinstance(value, float) and value.is_integer():
        return int(value)
    return option.coerce(value)


def design_from_values(values: Mapping[str, Any]) -> Design:
    """A validated Design from form values (missing options take the core's defaults)."""
    return Design().with_changes(
        {
            option.name: option_value(option, values.get(option.name, option.default))
            for option in OPTIONS
        }
    )


def bounds_from_values(values: Mapping[str, Any]) -> Bounds:
    """Validated Bounds from form values (missing sizes take the defaults)."""
    core = Bounds()
    return Bounds(**{name: int(values.get(name, getattr(core, name))) for name in BOUND_LIMITS})


def values_of(design: Design) -> dict[str, Any]:
    """The form values that show a design (the inverse of `design_from_values`)."""
    values: dict[str, Any] = {o.name: o.to_json(getattr(design, o.name)) for o in OPTIONS}
    values["skew"] = show_skew(design.skew)
    return values


def limits_text() -> str:
    """The allowed range of every bound, for the page."""
    return ", ".join(f"{bound.label.lower()} {bound.span}" for bound in BOUNDS)
