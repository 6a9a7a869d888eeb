"""The proofs page: z3's verdict per property for the chosen design, said in words first,
with the invariant, the counterexample to induction and BMC counterexamples for those who
want the precise form. The design, bounds and the run switch live in the link.

z3 never runs in the server: each proof is a job in a process of its own (webapp.jobs.proving),
under the heavy-work limit, ended at its deadline. Finished proofs are kept, so a link
opened again shows its result without waiting for a slot.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Final

import streamlit as st

from model.claims import lesson_caption
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.formats.trace import TraceError, replay
from model.presets import matching
from model.verdicts import PropertyVerdict, Status
from webapp.content import proofs
from webapp.jobs.proving import (
    WEB_PROVE_SECONDS,
    WEB_PROVE_STATES,
    Ending,
    JobOutcome,
    prove_isolated,
    start_fork_server,
)
from webapp.screens import url_state
from webapp.screens.limits import heavy_work
from webapp.screens.player import show_traces
from webapp.screens.preset_picker import choose, show_command
from webapp.show.proofs_view import METHOD_WORDS, ProofRow
from webapp.show.text import escape_markdown

START_BOUNDS: Final = REFERENCE_BOUNDS
"""Where the page starts: the bounds of the presets' lessons, as on every other page."""
KEPT_PROOFS: Final = 64
"""How many finished proofs the server keeps (the most recently used)."""

_FINISHED: OrderedDict[tuple[Design, Bounds], tuple[ProofRow, ...]] = OrderedDict()
_FINISHED_LOCK = threading.Lock()


def finished_rows(design: Design, bounds: Bounds) -> tuple[ProofRow, ...] | None:
    """A proof finished earlier for this design and bounds, if the server still keeps it."""
    with _FINISHED_LOCK:
        rows = _FINISHED.get((design, bounds))
        if rows is not None:
            _FINISHED.move_to_end((design, bounds))
        return rows


def _keep(design: Design, bounds: Bounds, rows: tuple[ProofRow, ...]) -> None:
    """Keep a finished proof, forgetting the least recently used beyond `KEPT_PROOFS`."""
    with _FINISHED_LOCK:
        _FINISHED[(design, bounds)] = rows
        _FINISHED.move_to_end((design, bounds))
        while len(_FINISHED) > KEPT_PROOFS:
            _FINISHED.popitem(last=False)


def _prove_with_progress(design: Design, bounds: Bounds) -> JobOutcome[tuple[ProofRow, ...]]:
    """Run the proof job with a progress bar that counts its time budget down."""
    bar = st.progress(0.0, text=proofs.PROVING)

    def tick(seconds: float) -> None:
        """Move the bar (also where Streamlit stops the script if the visitor has gone)."""
        bar.progress(
            min(seconds / WEB_PROVE_SECONDS, 1.0),
            text=proofs.proving_progress(seconds, WEB_PROVE_SECONDS),
        )

    outcome = prove_isolated(
        design, bounds, max_states=WEB_PROVE_STATES, max_seconds=WEB_PROVE_SECONDS, on_tick=tick
    )
    bar.empty()
    return outcome


def proof_rows_for_page(design: Design, bounds: Bounds) -> tuple[ProofRow, ...] | None:
    """The proof's rows (kept, or proved now in a job); None after saying why there are none."""
    rows = finished_rows(design, bounds)
    if rows is not None:
        return rows
    with heavy_work("z3's proof") as admitted:
        if not admitted:
            return None
        outcome = _prove_with_progress(design, bounds)
    if outcome.value is None:
        show = st.warning if outcome.ending is Ending.OUT_OF_TIME else st.error
        show(escape_markdown(outcome.problem, limit=600))
        return None
    _keep(design, bounds, outcome.value)
    return outcome.value


def _table(rows: tuple[ProofRow, ...]) -> None:
    """One line per property: what z3 says, how, and why, in words."""
    st.table(
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
    )


def lesson_under_table(design: Design, bounds: Bounds, rows: tuple[ProofRow, ...]) -> str | None:
    """A preset's lesson, saying where it shows when z3's verdicts here do not show it."""
    found = matching(design)
    if found is None:
        return None
    verdicts = {r.prop: PropertyVerdict(r.prop, r.status, r.shortest) for r in rows}
    caption = lesson_caption(found.as_lesson(), bounds, verdicts, checker="z3")
    return proofs.lesson_line(found.name, caption)


def _details(design: Design, bounds: Bounds, row: ProofRow) -> None:
    """What z3 found for one property: the verdict in words, then the precise evidence."""
    st.markdown(f"#### {row.prop}, {row.title}: {row.status_word}")
    st.markdown(escape_markdown(row.summary, limit=600))
    if row.invariant or row.cti or row.reason:
        with st.expander(proofs.PRECISE_FORM):
            if row.invariant:
                st.markdown(proofs.INVARIANT_LEAD)
                st.code("\n∧ ".join(row.invariant), language=None)
            if row.cti:
                st.markdown(proofs.CTI_LEAD)
                st.code(row.cti, language=None)
            if row.reason:
                st.code(row.reason, language=None)
    if row.status is Status.VIOLATED and row.actions:
        try:
            trace = replay(design, bounds, row.actions, title=proofs.violation_title(row.prop))
        except TraceError as error:
            st.error(proofs.run_not_replayed(escape_markdown(str(error))))
            return
        show_traces([trace], param=f"proof-{row.prop}", key=f"proof-{row.prop}")


def _set_run() -> None:
    """Keep the run switch in the link."""
    if st.session_state.get("proof-run"):
        url_state.put(run="1")
    elif url_state.has("run"):
        url_state.drop("run")


def render_proofs() -> None:
    """The whole page."""
    st.title(proofs.TITLE)
    st.markdown(proofs.INTRO)
    choice = choose("proof", "fencing", START_BOUNDS)
    if choice is None:
        return
    show_command(choice.design, choice.bounds, "prove")
    if "proof-run" not in st.session_state:
        st.session_state["proof-run"] = url_state.get("run") == "1"
    start_fork_server()
    if not st.toggle(proofs.RUN_SWITCH, key="proof-run", on_change=_set_run):
        st.caption(proofs.SWITCH_ON)
        return
    rows = proof_rows_for_page(choice.design, choice.bounds)
    if rows is None:
        return
    _table(rows)
    if (lesson := lesson_under_table(choice.design, choice.bounds, rows)) is not None:
        st.caption(lesson)
    for row in rows:
        _details(choice.design, choice.bounds, row)
