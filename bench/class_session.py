"""A class as protocol-level sessions: a teacher creates it, students join and predict.

Each step is what a browser tab sends when a person does it (`streamlit_client`): a text
field's new value and a button's press in one rerun, a page opened with its link. Used by
the class benchmark (`bench_class.py`) and by the tests of the class server behind its
proxy (`tests/test_class_hall.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode

from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit_client import Run, StreamlitSession

PREDICTIONS = ("lease-predict", "fencing-predict", "key-version-predict")
"""The prediction exercises of the default set a student answers."""
PROPERTIES = ("P1", "P2", "P3", "P4", "P5")


class ClassFlowError(RuntimeError):
    """A step of the class did not show what a person would have seen."""


@dataclass(frozen=True)
class GivenAnswer:
    """An answer a student gave, as the store keeps it: exercise and answer text."""

    token: str
    exercise_id: str
    answer: str


def param(run: Run, name: str) -> str:
    """One parameter of the page's link after a run ('' when absent)."""
    values = parse_qs(run.query_string).get(name)
    return values[0] if values else ""


def _problems(run: Run) -> None:
    """Raise when the run drew an exception."""
    if run.errors:
        raise ClassFlowError("; ".join(run.errors))


async def create_class(tab: StreamlitSession, title: str) -> tuple[str, str]:
    """Name a class on the default set and create it; its id and the teacher's key."""
    run = await tab.open_page("class")
    _problems(run)
    name, create = run.widget("class-title"), run.widget("class-create")
    run = await tab.change(
        WidgetState(id=name.id, string_value=title), WidgetState(id=create.id, trigger_value=True)
    )
    _problems(run)
    class_id, key = param(run, "class"), param(run, "key")
    if not class_id or not key:
        raise ClassFlowError("the class page did not open the new class's dashboard")
    return class_id, key


async def join_class(tab: StreamlitSession, class_id: str, nickname: str) -> tuple[str, Run]:
    """Open the students' link and join with a nickname; the student's token and the run."""
    run = await tab.open_page("exercises", urlencode({"class": class_id}))
    _problems(run)
    field, join = run.widget("ex-nickname"), run.widget("ex-join")
    run = await tab.change(
        WidgetState(id=field.id, string_value=nickname), WidgetState(id=join.id, trigger_value=True)
    )
    _problems(run)
    token = param(run, "student")
    if not token:
        raise ClassFlowError("joining did not put the student's code in the link")
    return token, run


def student_link(class_id: str, token: str, exercise_id: str) -> str:
    """A student's own link on one exercise of the class (what a reload reopens)."""
    return urlencode({"class": class_id, "student": token, "exercise": exercise_id})


async def open_exercise(tab: StreamlitSession, class_id: str, token: str, exercise_id: str) -> Run:
    """Open one exercise of the class with the student's own link."""
    run = await tab.open_page("exercises", student_link(class_id, token, exercise_id))
    _problems(run)
    return run


async def predict(tab: StreamlitSession, run: Run, exercise_id: str, ticked: Sequence[str]) -> Run:
    """Tick the properties one predicts to hold on the exercise shown by `run`, and press
    Check: one rerun with the ticks and the press, as a browser sends them."""
    states = [
        WidgetState(id=run.widget(f"ex-{exercise_id}-{name}", "checkbox").id, bool_value=True)
        for name in ticked
    ]
    check = run.widget(f"ex-{exercise_id}-check", "button")
    states.append(WidgetState(id=check.id, trigger_value=True))
    answered = await tab.change(*states)
    _problems(answered)
    return answered


def answer_text(ticked: Sequence[str]) -> str:
    """The answer a prediction is kept as (the ticked properties, or `none`)."""
    return ", ".join(ticked) or "none"


def graded(run: Run) -> bool:
    """Whether the page shows the verdict on an answer (right or not quite)."""
    texts = " ".join(
        str(getattr(element, kind).body)
        for element in run.elements
        if (kind := element.WhichOneof("type")) in ("markdown", "alert")
    )
    return "Not quite" in texts or "Right" in texts
