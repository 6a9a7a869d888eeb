"""A preset chooser and a row of bound inputs, shared by the pages that take a named design."""

from __future__ import annotations

import streamlit as st

from model.design import BOUND_LIMITS, Bounds, Design, DesignError
from model.presets import PRESETS
from webapp.design_form import BOUND_HELP


def bounds_inputs(start: Bounds, key: str) -> dict[str, int]:
    """One number input per bound, in a row, each labelled with its allowed range."""
    columns = st.columns(len(BOUND_LIMITS))
    sizes = {}
    for column, (name, (low, high)) in zip(columns, BOUND_LIMITS.items(), strict=True):
        sizes[name] = int(
            column.number_input(
                f"{BOUND_HELP[name]} ({low}..{high})",
                min_value=low,
                max_value=high,
                value=getattr(start, name),
                step=1,
                key=f"{key}-{name}",
            )
        )
    return sizes


def checked_design(preset: str, sizes: dict[str, int]) -> tuple[Design, Bounds] | None:
    """The preset's design within the bounds, or None with the refusal shown."""
    try:
        bounds = Bounds(**sizes)
        design = PRESETS[preset].design
        design.check_fits(bounds)
    except DesignError as error:
        st.error(f"These bounds are refused: {error}")
        return None
    return design, bounds
