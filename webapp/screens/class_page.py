"""The Class page: a teacher creates a class on a set and gets two links, one for the students
and a private one (with the class's secret key) for a live dashboard of their answers.

Without the right key nothing of a class is shown. Everything students typed (nicknames,
answers) is shown as data in tables or escaped, never as Markdown.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final
from urllib.parse import urlencode, urlsplit

import plotly.graph_objects as go
import streamlit as st

from classroom.class_store import (
    MAX_ANSWERS_PER_STUDENT,
    MAX_CLASSES,
    MAX_STUDENTS,
    MAX_TITLE_CHARS,
    ClassError,
    ClassView,
    answers_csv,
    class_hours,
    classes_folder,
    common_wrong_answers,
    exercise_counts,
    prediction_spread,
    shared_store,
)
from classroom.data import Exercise, ExerciseSet, ExerciseSetError
from classroom.grading import Verdicts, known_verdicts, verdicts
from classroom.sets import DEFAULT_SET, MAX_SET_BYTES, decode_upload
from model.design import Bounds, Design
from model.properties import BY_NAME, PROPERTY_NAMES
from webapp.content import classroom, common
from webapp.jobs import set_checks
from webapp.jobs.set_checks import Checked, read_set_file, teacher_files
from webapp.screens import limits, url_state
from webapp.screens.limits import heavy_work
from webapp.show.downloads import offer_download
from webapp.show.text import escape_markdown

CLASS_PARAM: Final = "class"
KEY_PARAM: Final = "key"
EXERCISE_PARAM: Final = "exercise"
"""The exercise a students' link opens on (the Exercises page reads it)."""
DASHBOARD_SECONDS: Final = 3.0
"""How often the teacher's dashboard reads the class's answers again."""
DEFAULT_CHOICE: Final = common.DEFAULT_SET_CHOICE
UPLOAD_CHOICE: Final = common.UPLOAD_SET_CHOICE


@dataclass(frozen=True)
class ClassLinks:
    """The two links of a class: the students' and the teacher's (with the key)."""

    students: str
    teacher: str


def exercise_link(students: str, exercise_id: str) -> str:
    """The students' link opened on one exercise of the class."""
    return f"{students}&{urlencode({EXERCISE_PARAM: exercise_id})}"


def class_links(page_url: str, class_id: str, key: str) -> ClassLinks:
    """The links of a class, on the server the teacher is using (relative when unknown)."""
    parts = urlsplit(page_url)
    origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
    prefix = parts.path.rsplit("/", 1)[0] if parts.path.count("/") > 1 else ""
    base = origin + prefix
    return ClassLinks(
        f"{base}/exercises?{urlencode({CLASS_PARAM: class_id})}",
        f"{base}/class?{urlencode({CLASS_PARAM: class_id, KEY_PARAM: key})}",
    )


# ----- creating a class --------------------------------------------------------------------


def _set_choices() -> dict[str, Path | None]:
    """The sets a class can be made on: the default, the teachers' folder's, an upload."""
    choices: dict[str, Path | None] = {DEFAULT_CHOICE: DEFAULT_SET}
    for path in teacher_files()[0]:
        choices[f"Folder: {path.name}"] = path
    choices[UPLOAD_CHOICE] = None
    return choices


def _chosen_bytes(path: Path | None) -> tuple[bytes, str] | None:
    """The chosen set's bytes and name (None when there is nothing yet, with why)."""
    if path is not None:
        data = read_set_file(path)
        if isinstance(data, ExerciseSetError):
            _problems(path.name, data)
            return None
        return data, path.name
    upload = st.file_uploader(
        common.set_file_label(MAX_SET_BYTES),
        type=["toml"],
        key="class-upload",
    )
    if upload is None:
        return None
    return upload.getvalue(), upload.name


def _problems(name: str, error: ExerciseSetError) -> None:
    """Every problem of a set that cannot be used."""
    problems = [escape_markdown(p.text(), limit=500) for p in error.problems]
    st.error(classroom.set_cannot_be_used(escape_markdown(name), problems))


def _checked(data: bytes, name: str) -> Checked | None:
    """A set's check by the model, shared with the Exercises page (None: not done in time)."""
    with st.spinner(classroom.CHECKING_SET):
        return set_checks.CHECKER.wait(data, name, timeout=limits.WAIT_SECONDS)


def _create() -> None:
    """The form that makes a class, then opens its dashboard (the teacher's link)."""
    st.subheader(classroom.CREATE_TITLE)
    hours = class_hours()
    folder = escape_markdown(str(classes_folder()))
    st.markdown(classroom.class_terms(hours, MAX_STUDENTS, MAX_ANSWERS_PER_STUDENT, folder))
    title = st.text_input(classroom.CLASS_NAME, max_chars=MAX_TITLE_CHARS, key="class-title")
    choices = _set_choices()
    choice = st.selectbox("Exercise set", list(choices), key="class-set")
    chosen = _chosen_bytes(choices[choice])
    if not st.button("Create the class", key="class-create", type="primary", disabled=not chosen):
        return
    assert chosen is not None
    data, name = chosen
    try:
        text = decode_upload(data)
    except ExerciseSetError as error:
        _problems(name, error)
        return
    found = _checked(data, name)
    if found is None:
        st.warning(classroom.SET_NOT_CHECKED_YET)
        return
    if isinstance(found, ExerciseSetError):
        _problems(name, found)
        return
    try:
        made = shared_store().create(title, name, text)
    except ClassError as error:
        st.error(escape_markdown(str(error)))
        return
    url_state.replace({CLASS_PARAM: made.info.id, KEY_PARAM: made.key})
    st.rerun()


# ----- the dashboard -----------------------------------------------------------------------


def spread_figure(spread: dict[str, tuple[int, int]], truth: Verdicts | None) -> go.Figure:
    """The class's first predictions, per property: how many say it holds, how many it fails.
    With the model's verdicts (once revealed), each property is marked as holding, failing or
    never put to the test (holding only vacuously)."""
    names = list(spread)
    labels = [f"{n} {classroom.revealed(n, truth)}" if truth is not None else n for n in names]
    figure = go.Figure(
        [
            go.Bar(name="says it holds", x=labels, y=[spread[n][0] for n in names]),
            go.Bar(name="says it fails", x=labels, y=[spread[n][1] for n in names]),
        ]
    )
    figure.update_layout(
        barmode="stack",
        height=320,
        margin={"l": 40, "r": 10, "t": 30, "b": 40},
        yaxis_title="students",
        legend={"orientation": "h", "y": 1.15},
    )
    return figure


def _truth(design: Design, bounds: Bounds) -> Verdicts | None:
    """The model's verdicts on the design (known, or explored under the heavy-work limit)."""
    known = known_verdicts(design, bounds)
    if known is not None:
        return known
    with heavy_work(classroom.CHECKING_EXERCISE, wait=limits.WAIT_SECONDS) as admitted:
        if not admitted:
            return None
        found = verdicts(design, bounds)
    return found if found.complete else None


def _exercise_detail(view: ClassView, exercise: Exercise) -> None:
    """One exercise: the spread of predictions (before the answer), and the wrong answers."""
    if exercise.kind == "predict":
        st.markdown(classroom.PREDICTED)
        reveal = st.toggle("Reveal the answer", key=f"class-reveal-{exercise.id}")
        truth = _truth(exercise.design, exercise.bounds) if reveal else None
        spread = prediction_spread(view, exercise.id, PROPERTY_NAMES)
        st.plotly_chart(spread_figure(spread, truth), key=f"class-spread-{exercise.id}")
        if truth is not None and truth.vacuous:
            st.caption(truth.untested_sentence())
        st.caption("; ".join(f"{name}: {BY_NAME[name].title}" for name in PROPERTY_NAMES))
    wrong = common_wrong_answers(view, exercise.id)
    st.markdown(classroom.WRONG_ANSWERS)
    if wrong:
        st.dataframe(
            [{"answer": answer, "students": count} for answer, count in wrong],
            hide_index=True,
            width="stretch",
        )
    else:
        st.caption(classroom.NO_WRONG_ANSWER)


def _students_table(view: ClassView, exercise_set: ExerciseSet) -> None:
    """Each student: nickname (as data), exercises solved, answers given."""
    rows = []
    for number, member in enumerate(view.members, start=1):
        mine = [a for a in view.answers if a.token == member.token]
        rows.append(
            {
                "student": number,
                "nickname": member.nickname,
                "solved": len({a.exercise_id for a in mine if a.correct}),
                "of": len(exercise_set.exercises),
                "answers": len(mine),
            }
        )
    st.dataframe(rows, hide_index=True, width="stretch")


@st.fragment(run_every=DASHBOARD_SECONDS)
def _live(class_id: str, key: str, exercise_set: ExerciseSet) -> None:
    """The figures of the class, read again every few seconds (only this part reruns)."""
    try:
        view = shared_store().view(class_id, key)
    except ClassError as error:
        st.error(escape_markdown(str(error)))
        return
    counts = exercise_counts(view, [e.id for e in exercise_set.exercises])
    titles = {e.id: e.title for e in exercise_set.exercises}
    chosen = st.selectbox(
        classroom.LOOK_AT_ONE,
        list(titles),
        format_func=lambda i: titles[i],
        key="class-exercise",
    )
    exercise = exercise_set.by_id(chosen) or exercise_set.exercises[0]
    students = class_links(str(st.context.url or ""), class_id, key).students
    st.caption(classroom.TO_THIS_EXERCISE)
    st.code(exercise_link(students, exercise.id), language=None)
    row = next(c for c in counts if c.exercise_id == exercise.id)
    figures = st.columns(4)
    figures[0].metric("Students joined", len(view.members))
    figures[1].metric("Tried this exercise", row.tried)
    figures[2].metric("Solved it", row.solved)
    figures[3].metric("Answers given", row.answers)
    _exercise_detail(view, exercise)
    st.markdown("**Every exercise**")
    st.dataframe(
        [
            {
                "exercise": exercise.title,
                "kind": exercise.kind,
                "joined": row.joined,
                "tried": row.tried,
                "solved": row.solved,
                "answers": row.answers,
            }
            for exercise, row in zip(exercise_set.exercises, counts, strict=True)
        ],
        hide_index=True,
        width="stretch",
    )
    st.markdown("**Students**")
    _students_table(view, exercise_set)
    offer_download(
        None,
        classroom.DOWNLOAD_ANSWERS,
        answers_csv(view),
        file_name="class-answers.csv",
        mime="text/csv",
        key="class-csv",
    )


def _dashboard(class_id: str, key: str) -> None:
    """The teacher's view: the two links, then the live figures."""
    try:
        view = shared_store().view(class_id, key)
    except ClassError as error:
        st.error(classroom.nothing_shown(escape_markdown(str(error))))
        return
    info = view.info
    st.subheader(escape_markdown(info.title), anchor=False)
    links = class_links(str(st.context.url or ""), info.id, key)
    st.markdown(classroom.FOR_STUDENTS)
    st.code(links.students, language=None)
    st.markdown(classroom.FOR_TEACHER)
    st.code(links.teacher, language=None)
    ends = datetime.fromtimestamp(info.expires, UTC).strftime("%Y-%m-%d %H:%M UTC")
    st.caption(classroom.class_ends(escape_markdown(info.set_name), escape_markdown(ends)))
    found = _checked(info.set_text.encode("utf-8"), info.set_name)
    if not isinstance(found, ExerciseSet):
        st.warning(classroom.SET_STILL_CHECKED)
        return
    _live(class_id, key, found)


def render_class_page() -> None:
    """The whole page: the dashboard with the teacher's link, otherwise the creation form."""
    st.title(classroom.TITLE)
    st.markdown(classroom.intro(MAX_CLASSES))
    class_id = url_state.get(CLASS_PARAM)
    key = url_state.get(KEY_PARAM)
    if class_id and key:
        _dashboard(str(class_id), str(key))
        return
    if class_id:
        st.warning(classroom.NO_TEACHER_KEY)
        return
    _create()
