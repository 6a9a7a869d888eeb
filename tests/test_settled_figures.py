"""A chapter's timeline is sent exactly as before while its dict form is made once per step,
and the player's state table is the actor rows, as an Arrow table built once per step."""

from __future__ import annotations

import plotly.io
import plotly.tools
import pytest

from model.formats.trace import Trace
from webapp.draw.settled import SettledFigure, settled
from webapp.draw.swimlane import timeline_figure
from webapp.screens.player import figure_at, state_table_at
from webapp.show.chapters import chapter_traces
from webapp.show.views import actor_rows

RUNS = [(number, trace) for number in (0, 1, 2, 3, 4) for trace in chapter_traces(number)]


def sent(figure: object) -> str:
    """The figure's JSON as `st.plotly_chart` makes it for the browser."""
    shown = plotly.tools.return_figure_from_figure_or_data(figure, validate_figure=True)
    return str(plotly.io.to_json(shown, validate=False))


@pytest.mark.parametrize(("number", "trace"), RUNS, ids=lambda v: str(v)[:12])
def test_a_settled_timeline_is_sent_exactly_as_the_drawn_one(number: int, trace: Trace) -> None:
    for upto in range(len(trace.steps) + 1):
        assert sent(figure_at(trace, upto)) == sent(timeline_figure(trace, upto))


def test_the_dict_form_is_made_once_and_the_figure_still_reads_as_plotly() -> None:
    trace = RUNS[1][1]
    figure = settled(timeline_figure(trace, 2))
    assert isinstance(figure, SettledFigure)
    assert figure.to_dict() is figure.to_dict()  # no deep copy per page run
    assert figure.layout.height == timeline_figure(trace, 2).layout.height
    assert len(figure.data) == len(timeline_figure(trace, 2).data)


@pytest.mark.parametrize(("number", "trace"), RUNS[:4], ids=lambda v: str(v)[:12])
def test_the_state_table_is_the_actor_rows(number: int, trace: Trace) -> None:
    for upto in range(len(trace.steps) + 1):
        table = state_table_at(trace, upto)
        rows = actor_rows(trace, upto)
        assert table.column_names == ["actor", "in words", "the model's variables"]
        assert table.to_pydict() == {
            "actor": [r.actor for r in rows],
            "in words": [r.words for r in rows],
            "the model's variables": [r.variables for r in rows],
        }
        assert state_table_at(trace, upto) is table
