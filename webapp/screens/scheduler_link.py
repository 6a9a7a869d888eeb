"""One click from any run shown anywhere to the scheduler, standing at the step shown.

Every counterexample, chapter run and replayed real run carries this link: the scheduler
opens on the same design, bounds and actions, at the same step, where the run can be
stepped back and forth and changed from any step.
"""

from __future__ import annotations

import streamlit as st

from model.formats.trace import Trace
from webapp.content import player
from webapp.screens.page_links import page_named
from webapp.show.playground import scheduler_params


def step_it_yourself(trace: Trace, at: int, label: str = player.STEP_IT_YOURSELF) -> None:
    """The link to the scheduler on this run at step `at` (nothing for a run too long for a
    link, or one without a step)."""
    params = scheduler_params(trace, at) if trace.steps else None
    if params is None:
        return
    st.page_link(
        page_named("playground"),
        label=label,
        icon=":material/touch_app:",
        query_params=params,
        help=player.STEP_IT_YOURSELF_HELP,
    )
