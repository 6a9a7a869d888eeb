"""A design chooser (a preset, or any options), bound inputs and (optionally) a property,
kept in the page's link.

Used by the State space and Proofs pages. On a fresh page the widgets start from the
link's `preset`, option, bounds and `prop` parameters (each validated, a bad one reported
and replaced by its default); after every change the link is rewritten, so a copied link
reopens the same page, custom options included.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from fencing.command_line import check_command
from model.design import BOUND_LIMITS, BY_BOUND, Bounds, Design, DesignError
from model.options import OPTIONS
from model.presets import PRESETS
from model.properties import BY_NAME, PROPERTY_NAMES
from webapp.content import design_picker
from webapp.content.common import link_not_understood
from webapp.screens import url_state
from webapp.screens.option_widgets import option_input
from webapp.show.design_form import CUSTOM, design_from_values, values_of
from webapp.show.links import (
    LinkError,
    bounds_from_params,
    bounds_params,
    design_from_params,
    design_params,
    matching_preset,
    param,
)
from webapp.show.text import escape_markdown


@dataclass(frozen=True)
class Choice:
    """What the visitor chose: a preset (or `(custom)`), the design within bounds, a property."""

    preset: str
    design: Design
    bounds: Bounds
    prop: str


def _option_key(key: str, name: str) -> str:
    """The session key of one option's widget on a page."""
    return f"{key}-option-{name}"


def show_design(key: str, design: Design) -> None:
    """Put a design into the page's option widgets."""
    for name, value in values_of(design).items():
        st.session_state[_option_key(key, name)] = value


def _from_link(key: str, preset: str, bounds: Bounds, prop: str) -> None:
    """Fill the widgets from the link once per visit, reporting what was not understood."""
    if f"{key}-preset" in st.session_state:
        return
    params = url_state.read()
    problems = []
    design = PRESETS[preset].design
    try:
        if any(name in params for name in ("preset", *(o.name for o in OPTIONS))):
            design = design_from_params(params)
        bounds = bounds_from_params(params, bounds)
        named_prop = param(params, "prop")
        if named_prop is not None and named_prop not in PROPERTY_NAMES:
            raise LinkError(design_picker.property_not_known(PROPERTY_NAMES))
        prop = named_prop or prop
    except LinkError as error:
        problems.append(str(error))
    st.session_state[f"{key}-preset"] = matching_preset(design) or CUSTOM
    show_design(key, design)
    st.session_state[f"{key}-prop"] = prop
    for name in BOUND_LIMITS:
        st.session_state[f"{key}-{name}"] = getattr(bounds, name)
    for problem in problems:
        st.error(link_not_understood(escape_markdown(problem)))


def _preset_chosen(key: str) -> None:
    """Chooser callback: a preset fills the option widgets with its options."""
    name = st.session_state.get(f"{key}-preset")
    if name in PRESETS:
        show_design(key, PRESETS[name].design)


def _option_changed(key: str) -> None:
    """Option callback: the chooser names the preset the options now make, or `(custom)`."""
    values = {o.name: st.session_state.get(_option_key(key, o.name)) for o in OPTIONS}
    try:
        design = design_from_values(values)
    except DesignError:
        st.session_state[f"{key}-preset"] = CUSTOM
        return
    st.session_state[f"{key}-preset"] = matching_preset(design) or CUSTOM


def preset_chooser(key: str, label: str) -> str:
    """The preset chooser (or `(custom)`); choosing a preset fills the option widgets."""
    return str(
        st.selectbox(
            label,
            [CUSTOM, *PRESETS],
            key=f"{key}-preset",
            on_change=_preset_chosen,
            args=(key,),
            help=design_picker.PRESET_HELP,
        )
    )


def design_widgets(key: str, label: str, start: Design) -> Design | None:
    """A preset chooser and the option widgets for one design (filled with `start` on a
    fresh page); the design they make, or None with the model's refusal shown."""
    if f"{key}-preset" not in st.session_state:
        st.session_state[f"{key}-preset"] = matching_preset(start) or CUSTOM
        show_design(key, start)
    preset_chooser(key, label)
    return _design_or_refusal(_options(key))


def _design_or_refusal(values: dict[str, object]) -> Design | None:
    """The design the option widgets make, or None with the model's refusal shown."""
    try:
        return design_from_values(values)
    except DesignError as error:
        st.error(design_picker.design_refused(escape_markdown(str(error), 600)))
        return None


def _options(key: str) -> dict[str, object]:
    """Every option's widget, folded away under the chooser; returns their values."""
    values: dict[str, object] = {}
    with st.expander(design_picker.OPTIONS_TITLE):
        grid = st.columns(3)
        for index, option in enumerate(OPTIONS):
            with grid[index % 3]:
                values[option.name] = option_input(
                    option, _option_key(key, option.name), on_change=_option_changed, args=(key,)
                )
    return values


def _write_link(link: dict[str, str]) -> None:
    """Rewrite the picker's parameters: set what changed, drop options no longer changed."""
    for name in ("preset", *(o.name for o in OPTIONS)):
        if url_state.has(name) and name not in link:
            url_state.drop(name)
    for name, value in link.items():
        if url_state.get(name) != value:
            url_state.put_all({name: value})


def choose(
    key: str,
    preset: str,
    bounds: Bounds,
    prop: str | None = None,
) -> Choice | None:
    """The widgets, filled from the link; None (with the refusal shown) for an invalid design
    or bounds.

    Only the picker's own parameters are written; the page's others (steps, switches) stay.
    """
    _from_link(key, preset, bounds, prop or "P2")
    cols = st.columns([2, 2] if prop else [1])
    with cols[0]:
        chosen_preset = preset_chooser(key, "Design")
    chosen_prop = prop or "P2"
    if prop:
        chosen_prop = cols[1].selectbox(
            "Property",
            PROPERTY_NAMES,
            format_func=lambda n: f"{n}, {BY_NAME[n].title}",
            key=f"{key}-prop",
        )
    design = _design_or_refusal(_options(key))
    sizes = bounds_inputs(key)
    if design is None:
        return None
    try:
        chosen_bounds = Bounds(**sizes)
        design.check_fits(chosen_bounds)
    except DesignError as error:
        st.error(design_picker.bounds_refused(escape_markdown(str(error))))
        return None
    link = {**design_params(design), **bounds_params(chosen_bounds)}
    if prop:
        link["prop"] = chosen_prop
    _write_link(link)
    return Choice(chosen_preset, design, chosen_bounds, chosen_prop)


def show_command(design: Design, bounds: Bounds, command: str = "check") -> None:
    """The equivalent command line, for a reader who wants to run the same check."""
    line = check_command(design, bounds)
    st.caption(design_picker.COMMAND_LINE)
    st.code(line.replace("fencing check", f"fencing {command}", 1), language="bash")


def bounds_inputs(key: str) -> dict[str, int]:
    """One number input per bound, in a row, each labelled in words with its allowed range."""
    columns = st.columns(len(BOUND_LIMITS))
    sizes = {}
    for column, (name, (low, high)) in zip(columns, BOUND_LIMITS.items(), strict=True):
        sizes[name] = int(
            column.number_input(
                BY_BOUND[name].widget_label,
                min_value=low,
                max_value=high,
                step=1,
                key=f"{key}-{name}",
            )
        )
    return sizes
