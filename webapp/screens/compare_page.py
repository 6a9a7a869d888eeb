"""The compare page: the verdict matrix of every preset, and a with-versus-without view."""

from __future__ import annotations

import streamlit as st

from fencing.command_line import check_command
from fencing.matrix import Matrix, verdict_matrix
from model.check.explorer import Exploration
from model.claims import lesson_caption
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.presets import PRESETS
from model.properties import BY_NAME, PROPERTY_NAMES
from webapp.content import common, compare
from webapp.screens import url_state
from webapp.screens.cache import explore_cached, replay_cached
from webapp.screens.player import show_traces
from webapp.screens.preset_picker import design_widgets
from webapp.show.links import LinkError, decode_design, encode_design, matching_preset
from webapp.show.text import escape_markdown
from webapp.show.verdicts import compact_cell, difference, never_exercised, property_rows
from webapp.show.views import plain_text

NO_CELL = compare.NO_CELL
DESIGN_PX = 120
VERDICT_PX = 46
"""Column widths of the matrix: the design (pinned while the rest scrolls) and the five
verdicts fit a phone's 390 px; the longest names are cut, and shown whole on hover."""


@st.cache_data(show_spinner="Exploring every preset…")
def matrix_cached(bounds: Bounds) -> Matrix:
    """The verdict matrix at the given bounds, computed once."""
    return verdict_matrix(bounds)


def matrix_cells(matrix: Matrix) -> list[str]:
    """Every violated cell as `preset · property`, in table order."""
    return [
        f"{row.preset.name} · {name}"
        for row in matrix.rows
        for name in PROPERTY_NAMES
        if row.exploration.verdicts.get(name) and row.exploration.verdicts[name].violated
    ]


def cell_at(matrix: Matrix, row: int, column: str) -> str | None:
    """The violated cell at a table position as `preset · property`, or None if it holds."""
    if not 0 <= row < len(matrix.rows) or column not in PROPERTY_NAMES:
        return None
    chosen = f"{matrix.rows[row].preset.name} · {column}"
    return chosen if chosen in matrix_cells(matrix) else None


def _forget_step() -> None:
    """Another counterexample opens on the step that matters: the link names no step."""
    url_state.drop("step")


def _cell_clicked(matrix: Matrix) -> None:
    """Table callback: a click on a violated cell opens its counterexample."""
    selection = st.session_state.get("matrix_table")
    cells = selection["selection"]["cells"] if selection else []
    if cells:
        chosen = cell_at(matrix, int(cells[0][0]), str(cells[0][1]))
        if chosen is not None:
            st.session_state["cell"] = chosen
            _forget_step()


def _open_cell(matrix: Matrix, cell: str) -> None:
    """The counterexample of one violated cell, on the timeline."""
    preset_name, name = cell.split(" · ")
    row = next(r for r in matrix.rows if r.preset.name == preset_name)
    verdict = row.exploration.verdicts[name]
    trace = replay_cached(
        row.preset.design,
        matrix.bounds,
        verdict.actions or (),
        compare.counterexample_title(preset_name, name),
    )
    first = trace.first_violation(name)
    st.markdown(f"**{name}, {BY_NAME[name].title}**: {BY_NAME[name].statement}")
    if first is not None:
        st.error(first.reason(name) or first.sentence)
    show_traces([trace], param="step", key=f"compare-{preset_name}-{name}")


@st.fragment
def _matrix_section() -> None:
    """The presets x properties table and the chooser of a violated cell (a click on a cell
    reruns only this part of the page)."""
    st.header(compare.MATRIX_TITLE)
    matrix = matrix_cached(REFERENCE_BOUNDS)
    rows = []
    for row in matrix.rows:
        cells = {"design": row.preset.name}
        cells.update({name: compact_cell(row.exploration, name) for name in PROPERTY_NAMES})
        cells["mirrors"] = plain_text(row.preset.mirrors)
        rows.append(cells)
    st.dataframe(
        rows,
        hide_index=True,
        height=35 * (len(rows) + 1) + 3,
        column_config={
            "design": st.column_config.TextColumn("design", width=DESIGN_PX, pinned=True),
            **{
                name: st.column_config.TextColumn(name, width=VERDICT_PX) for name in PROPERTY_NAMES
            },
            "mirrors": st.column_config.TextColumn("mirrors", width="large"),
        },
        key="matrix_table",
        on_select=lambda: _cell_clicked(matrix),
        selection_mode="single-cell",
    )
    st.caption(compare.matrix_caption(REFERENCE_BOUNDS))
    explorations = {row.preset.name: row.exploration for row in matrix.rows}
    st.caption(compare.never_exercised_list(never_exercised(explorations)))
    cell = st.selectbox(
        compare.CELL_CHOOSER,
        [NO_CELL, *matrix_cells(matrix)],
        key="cell",
        bind="query-params",
        on_change=_forget_step,
    )
    if cell and cell != NO_CELL:
        _open_cell(matrix, cell)


def _side_from_link(key: str, default: str) -> Design:
    """One side's design from the link (a preset name or `option:value~…`), else the default."""
    text = url_state.get(key)
    if text is None or f"{key}-preset" in st.session_state:
        return PRESETS[default].design
    try:
        return decode_design(text)
    except LinkError as error:
        st.error(common.link_not_understood(escape_markdown(str(error))))
        return PRESETS[default].design


def _lesson_of(design: Design, found: Exploration) -> str:
    """A preset's lesson at the reference bounds, or the design in words for a custom one."""
    name = matching_preset(design)
    if name is None:
        return compare.custom_lesson(design)
    return f"{name}: " + lesson_caption(PRESETS[name].as_lesson(), REFERENCE_BOUNDS, found.verdicts)


def _with_without_section() -> None:
    """Two designs side by side: which violations disappear, and the reachable states."""
    st.header(compare.WITH_WITHOUT_TITLE)
    left, right = st.columns(2)
    sides: list[Design | None] = []
    for column, key, label, default in (
        (left, "a", "Without (design A)", "lease-only"),
        (right, "b", "With (design B)", "fencing"),
    ):
        with column:
            start = _side_from_link(key, default)
            sides.append(design_widgets(key, label, start))
    first_design, second_design = sides
    if first_design is None or second_design is None:
        return
    for key, design in (("a", first_design), ("b", second_design)):
        if url_state.get(key) != encode_design(design):
            url_state.put_all({key: encode_design(design)})
    first = explore_cached(first_design, REFERENCE_BOUNDS)
    second = explore_cached(second_design, REFERENCE_BOUNDS)
    diff = difference(first, second)
    names = [matching_preset(d) or compare.YOUR_DESIGN for d in (first_design, second_design)]
    st.table(property_rows({f"A: {names[0]}": first, f"B: {names[1]}": second}), hide_index=True)
    st.markdown(compare.difference_lines(diff))
    if (incomplete := compare.incomplete_warning(diff)) is not None:
        st.warning(incomplete)
    st.caption(f"A: {_lesson_of(first_design, first)}  \nB: {_lesson_of(second_design, second)}")
    st.caption(compare.SAME_CHECKS)
    st.code(
        f"{check_command(first_design, REFERENCE_BOUNDS)}\n"
        f"{check_command(second_design, REFERENCE_BOUNDS)}",
        language="bash",
    )


def render_compare() -> None:
    """The whole page."""
    st.title(compare.TITLE)
    _matrix_section()
    _with_without_section()
