"""The compare page: the verdict matrix of every preset, and a with-versus-without view."""

from __future__ import annotations

import streamlit as st

from fencing.matrix import Matrix, verdict_matrix
from model.design import REFERENCE_BOUNDS, Bounds
from model.presets import PRESET_NAMES, PRESETS
from model.properties import BY_NAME, PROPERTY_NAMES
from webapp.cache import explore_cached, replay_cached
from webapp.captions import lesson_caption
from webapp.player import show_traces
from webapp.verdicts import compact_cell, difference, verdict_rows

NO_CELL = "(choose a violated cell)"


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


def _cell_clicked(matrix: Matrix) -> None:
    """Table callback: a click on a violated cell opens its counterexample."""
    selection = st.session_state.get("matrix_table")
    cells = selection["selection"]["cells"] if selection else []
    if cells:
        chosen = cell_at(matrix, int(cells[0][0]), str(cells[0][1]))
        if chosen is not None:
            st.session_state["cell"] = chosen
            st.query_params["step"] = "0"


def _open_cell(matrix: Matrix, cell: str) -> None:
    """The counterexample of one violated cell, on the timeline."""
    preset_name, name = cell.split(" · ")
    row = next(r for r in matrix.rows if r.preset.name == preset_name)
    verdict = row.exploration.verdicts[name]
    trace = replay_cached(
        row.preset.design,
        matrix.bounds,
        verdict.actions or (),
        f"{preset_name}: shortest {name} counterexample",
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
    st.header("Every preset against every property")
    matrix = matrix_cached(REFERENCE_BOUNDS)
    rows = []
    for row in matrix.rows:
        cells = {"design": row.preset.name}
        cells.update({name: compact_cell(row.exploration, name) for name in PROPERTY_NAMES})
        cells["mirrors"] = row.preset.mirrors
        rows.append(cells)
    st.dataframe(
        rows,
        hide_index=True,
        height=35 * (len(rows) + 1) + 3,
        column_config={
            "design": st.column_config.TextColumn("design", width="medium"),
            **{name: st.column_config.TextColumn(name, width="small") for name in PROPERTY_NAMES},
            "mirrors": st.column_config.TextColumn("mirrors", width="large"),
        },
        key="matrix_table",
        on_select=lambda: _cell_clicked(matrix),
        selection_mode="single-cell",
    )
    st.caption(
        f"Every interleaving at {REFERENCE_BOUNDS.in_words()}. ✘ 8: violated, the shortest "
        "violating run has 8 steps; ✔ holds; ○ holds only because nothing it checks ever "
        "happens. Click a violated cell, or choose it below, to open its counterexample."
    )
    cell = st.selectbox(
        "Open the counterexample of a violated cell",
        [NO_CELL, *matrix_cells(matrix)],
        key="cell",
        bind="query-params",
        on_change=lambda: st.query_params.update(step="0"),
    )
    if cell and cell != NO_CELL:
        _open_cell(matrix, cell)


def _with_without_section() -> None:
    """Two designs side by side: which violations disappear, and the reachable states."""
    st.header("With versus without")
    left, right = st.columns(2)
    a = left.selectbox(
        "Without (design A)",
        PRESET_NAMES,
        index=PRESET_NAMES.index("lease-only"),
        key="a",
        bind="query-params",
    )
    b = right.selectbox(
        "With (design B)",
        PRESET_NAMES,
        index=PRESET_NAMES.index("fencing"),
        key="b",
        bind="query-params",
    )
    first = explore_cached(PRESETS[a].design, REFERENCE_BOUNDS)
    second = explore_cached(PRESETS[b].design, REFERENCE_BOUNDS)
    diff = difference(first, second)
    st.dataframe(verdict_rows({f"A: {a}": first, f"B: {b}": second}), hide_index=True)
    lines = [
        f"- **Disappear** going from A to B: {', '.join(diff.disappear) or 'none'}",
        f"- **Appear**: {', '.join(diff.appear) or 'none'}",
        f"- **Remain**: {', '.join(diff.remain) or 'none'}",
        f"- **Reachable states**: {diff.state_change}",
    ]
    st.markdown("\n".join(lines))
    if not diff.complete:
        st.warning("Incomplete: at least one exploration hit its budget.")
    lessons = [
        lesson_caption(PRESETS[name].as_lesson(), REFERENCE_BOUNDS, found.verdicts)
        for name, found in ((a, first), (b, second))
    ]
    st.caption(f"A: {lessons[0]}  \nB: {lessons[1]}")


def render_compare() -> None:
    """The whole page."""
    st.title("Compare designs")
    _matrix_section()
    _with_without_section()
