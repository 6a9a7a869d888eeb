"""A preset chooser, bound inputs and (optionally) a property, kept in the page's link.

Used by the State space and Proofs pages. On a fresh page the widgets start from the
link's `preset`, bounds and `prop` parameters (each validated, a bad one reported and
replaced by its default); after every change the link is rewritten, so a copied link
reopens the same page.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from model.design import BOUND_LIMITS, Bounds, Design, DesignError
from model.presets import PRESETS
from model.properties import BY_NAME, PROPERTY_NAMES
from webapp.design_form import BOUND_HELP
from webapp.links import LinkError, bounds_from_params, bounds_params, param
from webapp.text import escape_markdown


@dataclass(frozen=True)
class Choice:
    """What the visitor chose: a preset, its design within bounds, and a property."""

    preset: str
    design: Design
    bounds: Bounds
    prop: str


def _from_link(key: str, preset: str, bounds: Bounds, prop: str) -> None:
    """Fill the widgets from the link once per visit, reporting what was not understood."""
    if f"{key}-preset" in st.session_state:
        return
    params = {name: st.query_params[name] for name in st.query_params}
    problems = []
    try:
        named = param(params, "preset")
        if named is not None and named not in PRESETS:
            raise LinkError("the link names no known preset")
        preset = named or preset
        bounds = bounds_from_params(params, bounds)
        named_prop = param(params, "prop")
        if named_prop is not None and named_prop not in PROPERTY_NAMES:
            raise LinkError("the link's property must be one of P1..P6")
        prop = named_prop or prop
    except LinkError as error:
        problems.append(str(error))
    st.session_state[f"{key}-preset"] = preset
    st.session_state[f"{key}-prop"] = prop
    for name in BOUND_LIMITS:
        st.session_state[f"{key}-{name}"] = getattr(bounds, name)
    for problem in problems:
        st.error(f"This link was partly not understood: {escape_markdown(problem)}")


def choose(
    key: str,
    preset: str,
    bounds: Bounds,
    prop: str | None = None,
) -> Choice | None:
    """The widgets, filled from the link; None (with the refusal shown) for invalid bounds.

    Only the picker's own parameters are written; the page's others (steps, switches) stay.
    """
    _from_link(key, preset, bounds, prop or "P2")
    names = list(PRESETS)
    cols = st.columns([2, 2] if prop else [1])
    chosen_preset = cols[0].selectbox("Design", names, key=f"{key}-preset")
    chosen_prop = prop or "P2"
    if prop:
        chosen_prop = cols[1].selectbox(
            "Property",
            PROPERTY_NAMES,
            format_func=lambda n: f"{n}, {BY_NAME[n].title}",
            key=f"{key}-prop",
        )
    sizes = bounds_inputs(key)
    try:
        chosen_bounds = Bounds(**sizes)
        design = PRESETS[chosen_preset].design
        design.check_fits(chosen_bounds)
    except DesignError as error:
        st.error(f"These bounds are refused: {escape_markdown(str(error))}")
        return None
    link = {"preset": chosen_preset, **bounds_params(chosen_bounds)}
    if prop:
        link["prop"] = chosen_prop
    for name, value in link.items():
        if st.query_params.get(name) != value:
            st.query_params[name] = value
    return Choice(chosen_preset, design, chosen_bounds, chosen_prop)


def bounds_inputs(key: str) -> dict[str, int]:
    """One number input per bound, in a row, each labelled in words with its allowed range."""
    columns = st.columns(len(BOUND_LIMITS))
    sizes = {}
    for column, (name, (low, high)) in zip(columns, BOUND_LIMITS.items(), strict=True):
        sizes[name] = int(
            column.number_input(
                f"{BOUND_HELP[name]} ({low}..{high})",
                min_value=low,
                max_value=high,
                step=1,
                key=f"{key}-{name}",
            )
        )
    return sizes
