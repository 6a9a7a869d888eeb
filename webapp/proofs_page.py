"""The proofs page: z3's verdict per property for the chosen design, said in words first,
with the invariant, the counterexample to induction and BMC counterexamples for those who
want the precise form. The design, bounds and the run switch live in the link."""

from __future__ import annotations

from typing import Final

import streamlit as st

from model.design import Bounds, Design
from model.trace import TraceError, replay
from model.verdicts import Status
from proofs.report import prove
from webapp.limits import heavy_work
from webapp.player import show_traces
from webapp.preset_picker import choose
from webapp.proofs_view import METHOD_WORDS, ProofRow, rows_of
from webapp.text import escape_markdown

START_BOUNDS = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)
WEB_PROVE_SECONDS: Final = 20.0
WEB_PROVE_STATES: Final = 300_000
"""One proof from the web app stops after this long and this many explored states, so a
link cannot keep the server busy for others."""


@st.cache_data(show_spinner="z3 is proving…", max_entries=64)
def proof_rows_cached(design: Design, bounds: Bounds) -> tuple[ProofRow, ...]:
    """The prover's report as plain rows, once per design and bounds, within the page's budget."""
    report = prove(design, bounds, max_states=WEB_PROVE_STATES, max_seconds=WEB_PROVE_SECONDS)
    return rows_of(report)


def _table(rows: tuple[ProofRow, ...]) -> None:
    """One line per property: what z3 says, how, and why, in words."""
    st.dataframe(
        [
            {
                "property": f"{r.prop}, {r.title}",
                "z3 says": r.status_word,
                "how": METHOD_WORDS.get(r.method, r.method),
                "shortest violation": f"{r.shortest} steps" if r.shortest is not None else "",
            }
            for r in rows
        ],
        hide_index=True,
        width="stretch",
    )


def _details(design: Design, bounds: Bounds, row: ProofRow) -> None:
    """What z3 found for one property: the verdict in words, then the precise evidence."""
    st.markdown(f"#### {row.prop}, {row.title}: {row.status_word}")
    st.markdown(escape_markdown(row.summary, limit=600))
    if row.invariant or row.cti or row.reason:
        with st.expander("The precise form (invariant, z3's reasons)"):
            if row.invariant:
                st.markdown("Every reachable state keeps this invariant:")
                st.code("\n∧ ".join(row.invariant), language=None)
            if row.cti:
                st.markdown(
                    "A state that keeps what z3 knows but breaks the property in one step "
                    "(it may not be reachable):"
                )
                st.code(row.cti, language=None)
            if row.reason:
                st.code(row.reason, language=None)
    if row.status is Status.VIOLATED and row.actions:
        try:
            trace = replay(design, bounds, row.actions, title=f"z3's shortest {row.prop} violation")
        except TraceError as error:
            st.error(f"z3's run does not replay in the model: {escape_markdown(str(error))}")
            return
        show_traces([trace], param=f"proof-{row.prop}", key=f"proof-{row.prop}")


def _set_run() -> None:
    """Keep the run switch in the link."""
    if st.session_state.get("proof-run"):
        st.query_params["run"] = "1"
    elif "run" in st.query_params:
        del st.query_params["run"]


def render_proofs() -> None:
    """The whole page."""
    st.title("Proofs")
    st.markdown(
        "z3 checks the same rules the explorer runs, in three ways. **Induction** finds a "
        "fact that is true at the start and that no step can break, and shows the property "
        "follows from it: a proof for every length of run, not just within the bounds. "
        "**Bounded model checking** searches every run up to a length for the shortest one "
        "that breaks the property. **Spacer** searches for such a fact by itself when the "
        "ready-made ones are not enough. What none of them settles within the time budget "
        "is reported as unknown."
    )
    choice = choose("proof", "fencing", START_BOUNDS)
    if choice is None:
        return
    if "proof-run" not in st.session_state:
        st.session_state["proof-run"] = st.query_params.get("run") == "1"
    if not st.toggle("Run the prover", key="proof-run", on_change=_set_run):
        st.caption("Switch on to run z3 for this design and these bounds.")
        return
    with heavy_work("z3's proof") as admitted:
        if not admitted:
            return
        rows = proof_rows_cached(choice.design, choice.bounds)
    _table(rows)
    for row in rows:
        _details(choice.design, choice.bounds, row)
