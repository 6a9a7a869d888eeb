"""The proofs page: z3's verdict per property for the chosen design, the invariant that
closed each proof, counterexamples to induction, and BMC counterexamples on the timeline."""

from __future__ import annotations

import streamlit as st

from model.design import Bounds, Design
from model.presets import PRESETS
from model.trace import TraceError, replay
from model.verdicts import Status
from proofs.report import prove
from webapp.player import show_traces
from webapp.preset_picker import bounds_inputs, checked_design
from webapp.proofs_view import ProofRow, rows_of

START_BOUNDS = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)


@st.cache_data(show_spinner="z3 is proving…", max_entries=64)
def proof_rows_cached(design: Design, bounds: Bounds) -> tuple[ProofRow, ...]:
    """The prover's report as plain rows, once per design and bounds."""
    return rows_of(prove(design, bounds))


def _choose() -> tuple[Design, Bounds] | None:
    """Design and bounds widgets; None (with the error shown) when refused."""
    names = list(PRESETS)
    preset = st.selectbox("Design", names, index=names.index("fencing"), key="proof-preset")
    return checked_design(preset, bounds_inputs(START_BOUNDS, "proof"))


def _table(rows: tuple[ProofRow, ...]) -> None:
    """One line per property: status, method, shortest violation, reason."""
    st.dataframe(
        [
            {
                "property": f"{r.prop}, {r.title}",
                "z3 says": r.status_word,
                "method": r.method,
                "shortest violation": r.shortest if r.shortest is not None else "",
                "note": r.reason,
            }
            for r in rows
        ],
        hide_index=True,
        width="stretch",
    )


def _details(design: Design, bounds: Bounds, row: ProofRow) -> None:
    """The invariant, the counterexample to induction, and the BMC run of one property."""
    st.markdown(f"#### {row.prop}, {row.title}: {row.status_word}")
    if row.status is Status.PROVED and row.invariant:
        st.markdown("The invariant that closed the induction (every reachable state keeps it):")
        st.code("\n∧ ".join(row.invariant), language=None)
    if row.cti:
        st.markdown(f"**Counterexample to induction:** {row.cti}")
    if row.reason and row.status is not Status.VIOLATED:
        st.caption(row.reason)
    if row.status is Status.VIOLATED and row.actions:
        try:
            trace = replay(design, bounds, row.actions, title=f"z3's shortest {row.prop} violation")
        except TraceError as error:
            st.error(f"z3's counterexample does not replay in the model: {error}")
            return
        show_traces([trace], param=f"proof-{row.prop}", key=f"proof-{row.prop}")


def render_proofs() -> None:
    """The whole page."""
    st.title("Proofs")
    st.markdown(
        "z3 checks the same rules the explorer runs. A property is **proved** by induction "
        "(an invariant that holds initially and is kept by every step), **violated** with a "
        "shortest run found by bounded model checking, or **unknown** when z3 gives up "
        "within its budget."
    )
    chosen = _choose()
    if chosen is None:
        return
    design, bounds = chosen
    if not st.toggle("Run the prover", key="proof-run", help="Results are cached per design."):
        st.caption("Switch on to run z3 for this design and bounds.")
        return
    rows = proof_rows_cached(design, bounds)
    _table(rows)
    for row in rows:
        _details(design, bounds, row)
