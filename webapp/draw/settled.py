"""Figures that are finished: drawn once, shown to many visitors, never changed again.

plotly makes a figure's dict form anew each time it is asked for it (a deep copy, then
numeric arrays turned into base64), and Streamlit asks for it on every page run that shows
the figure. For a figure many visitors see unchanged (a timeline at one step of a chapter's
run), that form is made once: the first time it is asked for, and given as is afterwards.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go


class SettledFigure(go.Figure):  # type: ignore[misc]
    """A plotly figure whose dict form is made once (never change it, nor that dict)."""

    def to_dict(self) -> dict[str, Any]:
        """The figure as a dict: made the first time, the same object afterwards."""
        made = self.__dict__.get("_settled_dict")
        if made is None:
            made = super().to_dict()
            self.__dict__["_settled_dict"] = made
        return made  # type: ignore[no-any-return]


def settled(figure: go.Figure) -> SettledFigure:
    """A finished copy of a figure, to be shown as it is from now on: its dict form is
    exactly the figure's own."""
    made = figure.to_dict()
    copy = SettledFigure(made, skip_invalid=False, _validate=False)
    copy.__dict__["_settled_dict"] = made
    return copy
