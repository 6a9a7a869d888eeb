"""The exercises page: a set (default, a teacher's folder, an upload, or a class's), one
exercise at a time, answers graded by the model, hints after wrong answers, a summary.

The link keeps the set, the exercise and the student (`?set=…&exercise=…&student=…`, or
`?class=…&student=…` in a class), and answers are kept on the server under the student's
token, so a reload or a shared link opens the same place with the same progress."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from classroom.class_store import (
    MAX_NICKNAME_CHARS,
    SOLO,
    Answer,
    ClassError,
    ClassInfo,
    Member,
    looks_like_token,
    new_token,
    shared_store,
)
from classroom.data import (
    Exercise,
    ExerciseSet,
    ExerciseSetError,
    changes_in_words,
    options_in_words,
)
from classroom.grading import (
    Feedback,
    Verdicts,
    check_break,
    check_break_trace,
    check_fix,
    check_predict,
    fixed_design,
    known_verdicts,
    lost_properties,
    offered_values,
    verdicts,
)
from classroom.progress import (
    Attempt,
    Progress,
    summary_json,
    summary_markdown,
    summary_rows,
)
from classroom.sets import DEFAULT_SET, MAX_SET_BYTES, TEMPLATE_SET, decode_upload, parse_set
from model.design import Design, DesignError
from model.formats.trace import MAX_TRACE_BYTES, TraceError, trace_from_json
from model.options import BY_OPTION
from model.presets import PRESETS
from model.properties import BY_NAME, PROPERTY_NAMES
from model.rules import Action
from webapp.content import common
from webapp.content import exercises as words
from webapp.jobs import set_checks
from webapp.jobs.set_checks import Checked, read_set_file, teacher_files, warm
from webapp.screens import limits, url_state
from webapp.screens.cache import replay_cached
from webapp.screens.limits import heavy_work
from webapp.screens.option_widgets import option_input
from webapp.screens.scheduler_link import step_it_yourself
from webapp.screens.scheduler_view import action_buttons, run_view, status_lines
from webapp.screens.uploads import read_trace_upload
from webapp.show.downloads import offer_download
from webapp.show.links import decode_design, encode_design
from webapp.show.playground import (
    LinkError,
    Run,
    decode_actions,
    encode_actions,
    play,
    run_in_words,
)
from webapp.show.text import escape_markdown, safe_markdown

DEFAULT_CHOICE = common.DEFAULT_SET_CHOICE
UPLOAD_CHOICE = common.UPLOAD_SET_CHOICE
UPLOADED_KEY = "ex-uploaded-set"
CHOICE_KEY = "ex-set-remembered"
"""Session keys that outlive the page's widgets: the uploaded set and the chosen set."""
SET_PARAM = "set"
EXERCISE_PARAM = "exercise"
STUDENT_PARAM = "student"
CLASS_PARAM = "class"
RUN_PARAM = "run"
"""The link's half-built run of a break exercise (kept across a reload)."""
FIX_PARAM = "fix"
"""The link's design last checked as a fix (the form shows it again after a reload)."""
DEFAULT_LINK = "default"
"""The link's name of the default set; a teachers' set is named by its file name."""
FOLDER_PREFIX = "Folder: "


BEING_CHECKED = " (being checked)"
"""Added to the menu name of a teachers' set the model has not finished checking."""


def graded_verdicts(design: Design, bounds: Any) -> Verdicts | None:
    """The explorer's verdicts for grading: known ones at once, new ones under the heavy-work
    limit within the grading budget; None (the busy message shown) when no slot is free."""
    known = known_verdicts(design, bounds)
    if known is not None:
        return known
    with heavy_work(words.CHECKING_ANSWER, wait=limits.WAIT_SECONDS) as admitted:
        if not admitted:
            return None
        with st.spinner(words.CHECKING_DESIGN):
            return verdicts(design, bounds)


def default_set() -> Checked | None:
    """The set shipped with the app, checked once for the process (None: still being checked)."""
    data = read_set_file(DEFAULT_SET)
    if isinstance(data, ExerciseSetError):
        return data
    with st.spinner(words.CHECKING_DEFAULT_SET):
        return set_checks.CHECKER.wait(data, DEFAULT_SET.name, timeout=limits.WAIT_SECONDS)


@dataclass(frozen=True)
class Book:
    """Where a student's answers on a set are kept: their class (in the database) or, outside
    a class, the server's memory, under the student's token from the link."""

    exercise_set: ExerciseSet
    token: str
    class_id: str = ""

    @property
    def set_key(self) -> str:
        """Names the set among a student's sets outside a class."""
        return f"{self.exercise_set.source}\n{self.exercise_set.title}"

    def answers(self) -> tuple[Answer, ...]:
        """Every answer kept, oldest first."""
        if self.class_id:
            return shared_store().answers_of(self.class_id, self.token)
        return SOLO.of(self.token, self.set_key)

    def progress(self) -> Progress:
        """The answers as the exercises' progress."""
        return Progress(
            tuple(Attempt(a.exercise_id, a.answer, a.correct, a.message) for a in self.answers())
        )

    def record(
        self,
        exercise: Exercise,
        answer: str,
        feedback: Feedback,
        props: Sequence[str] | None = None,
    ) -> None:
        """Keep an answer and its verdict (in a class, refused past the class's limits)."""
        if self.class_id:
            try:
                shared_store().answer(
                    self.class_id,
                    self.token,
                    exercise.id,
                    answer,
                    feedback.correct,
                    feedback.message,
                    props,
                )
            except ClassError as error:
                st.session_state["ex-class-error"] = str(error)
            return
        kept = Answer(
            self.token, exercise.id, answer, None, feedback.correct, feedback.message, time.time()
        )
        SOLO.add(self.token, self.set_key, kept)


# ----- choosing a set --------------------------------------------------------------------------


def _show_problems(name: str, error: ExerciseSetError) -> None:
    """Every problem of a refused set file, each with its line and field."""
    problems = [escape_markdown(p.text(), limit=500) for p in error.problems]
    st.error(words.set_not_loaded(escape_markdown(name), problems))


def _uploaded_set() -> ExerciseSet | None:
    """The uploaded set (kept for the rest of the session), or None with the problems shown."""
    upload = st.file_uploader(
        common.set_file_label(MAX_SET_BYTES),
        type=["toml"],
        key="ex-upload",
    )
    if upload is None:
        kept = st.session_state.get(UPLOADED_KEY)
        if isinstance(kept, ExerciseSet):
            st.caption(words.using_earlier_upload(escape_markdown(kept.source)))
            return kept
        st.info(words.UPLOAD_TO_START)
        return None
    with heavy_work(words.CHECKING_YOUR_SET, wait=limits.WAIT_SECONDS) as admitted:
        if not admitted:
            return None
        try:
            loaded = parse_uploaded(upload.getvalue(), upload.name)
        except ExerciseSetError as error:
            _show_problems(upload.name, error)
            return None
    st.session_state[UPLOADED_KEY] = loaded
    return loaded


@st.cache_data(show_spinner=words.CHECKING_UPLOAD, max_entries=16)
def parse_uploaded(data: bytes, name: str) -> ExerciseSet:
    """An uploaded set, parsed and checked once per content."""
    return parse_set(decode_upload(data), source=name)


def _folder_choices() -> dict[str, Checked | None]:
    """The teachers' folder sets by menu name (None: still being checked), with a warning for
    what cannot be used. The files are read here (bounded) but checked in the background."""
    paths, warning = teacher_files()
    if warning:
        st.warning(escape_markdown(warning))
    found: dict[str, Checked | None] = {}
    for path in paths:
        data = read_set_file(path)
        checked = set_checks.CHECKER.lookup(data, path.name) if isinstance(data, bytes) else data
        found[f"{FOLDER_PREFIX}{path.name}"] = checked
    pending = [name for name, loaded in found.items() if loaded is None]
    if pending:
        st.info(
            words.sets_still_checked(
                [escape_markdown(name.removeprefix(FOLDER_PREFIX)) for name in pending]
            )
        )
    broken = [name for name, loaded in found.items() if isinstance(loaded, ExerciseSetError)]
    if broken:
        st.warning(
            words.sets_unusable(
                [escape_markdown(name.removeprefix(FOLDER_PREFIX)) for name in broken]
            )
        )
    return found


def _remember_choice() -> None:
    """Keep the chosen set across pages of this visit and in the link."""
    choice = st.session_state.get("ex-set", DEFAULT_CHOICE)
    st.session_state[CHOICE_KEY] = choice
    link = set_link(choice)
    if link:
        url_state.put_all({SET_PARAM: link})
    elif url_state.has(SET_PARAM):
        url_state.drop(SET_PARAM)
    if url_state.has(EXERCISE_PARAM):
        url_state.drop(EXERCISE_PARAM)


def set_link(choice: str) -> str:
    """A menu entry's name in the link (`default`, a file name; none for an upload)."""
    if choice == DEFAULT_CHOICE:
        return DEFAULT_LINK
    if choice.startswith(FOLDER_PREFIX):
        return choice.removeprefix(FOLDER_PREFIX)
    return ""


def first_choice(names: Sequence[str], linked: str | None, remembered: str | None) -> str:
    """The set the page opens on: the link's, else the one chosen earlier in this visit,
    else the teachers' folder's first set (when there is one), else the default set."""
    by_link = {set_link(name): name for name in names if set_link(name)}
    if linked in by_link:
        return by_link[linked]
    if remembered in names:
        return str(remembered)
    folder = [name for name in names if name.startswith(FOLDER_PREFIX)]
    return folder[0] if folder else DEFAULT_CHOICE


def _choose_set() -> ExerciseSet | None:
    """The set the class works on: the default, one from the teachers' folder, or an upload."""
    warm()
    folder = _folder_choices()
    names = [DEFAULT_CHOICE, *folder, UPLOAD_CHOICE]
    linked = url_state.get(SET_PARAM)
    opening = first_choice(names, linked, st.session_state.get(CHOICE_KEY))
    if linked is not None and linked != set_link(opening) and "ex-set" not in st.session_state:
        st.warning(words.no_such_set(escape_markdown(linked[:80]), escape_markdown(opening)))
    index = names.index(opening)
    choice = st.selectbox(
        "Exercise set",
        names,
        index=index,
        key="ex-set",
        on_change=_remember_choice,
        format_func=lambda name: name + (BEING_CHECKED if folder.get(name, 0) is None else ""),
    )
    link = set_link(choice)
    if link and url_state.get(SET_PARAM) != link:
        url_state.put_all({SET_PARAM: link})
    if choice == UPLOAD_CHOICE:
        return _uploaded_set()
    loaded = default_set() if choice == DEFAULT_CHOICE else folder[choice]
    if loaded is None:
        _being_checked()
        return None
    if isinstance(loaded, ExerciseSetError):
        _show_problems(choice.removeprefix(FOLDER_PREFIX), loaded)
        return None
    return loaded


def _being_checked() -> None:
    """What a visitor sees of a set the model is still checking: a note and a way to look again."""
    st.info(words.SET_BEING_CHECKED)
    st.button("Look again", key="ex-look-again")


# ----- one exercise ---------------------------------------------------------------------------


def _check_button(label: str, exercise: Exercise, grade: Callable[[], bool]) -> None:
    """The check button of an exercise graded by the explorer: the answer is graded here,
    under the heavy-work limit, and the page is redrawn with the verdict."""
    if not st.button(label, key=f"ex-{exercise.id}-check", type="primary"):
        return
    if grade():
        st.rerun()


def _describe(exercise: Exercise) -> None:
    """The prompt, the design in words and the bounds."""
    st.markdown(safe_markdown(exercise.prompt))
    preset = PRESETS.get(exercise.design_name)
    mirrors = preset.mirrors if preset else None
    st.caption(words.design_caption(exercise.design_name, mirrors, exercise.bounds))


def _predict(book: Book, exercise: Exercise) -> None:
    """A checkbox per property and a check button graded by the explorer."""
    st.markdown(words.PREDICT_TASK)
    for name in PROPERTY_NAMES:
        st.checkbox(
            f"{name}, {BY_NAME[name].title}",
            key=f"ex-{exercise.id}-{name}",
            help=BY_NAME[name].statement,
        )

    def check() -> bool:
        """Grade the ticked properties (False: not graded, the server was busy)."""
        chosen = [n for n in PROPERTY_NAMES if st.session_state.get(f"ex-{exercise.id}-{n}")]
        found = graded_verdicts(exercise.design, exercise.bounds)
        if found is None:
            return False
        answer = ", ".join(chosen) or "none"
        book.record(exercise, answer, check_predict(exercise, chosen, found), props=chosen)
        return True

    _check_button("Check my prediction", exercise, check)
    progress = book.progress()
    _feedback(progress, exercise)
    if progress.solved(exercise.id):
        _violations_to_step(exercise.design, exercise)


def _break(book: Book, exercise: Exercise) -> None:
    """An inline scheduler; the run is replayed and checked when the student asks."""
    key = f"ex-run-{exercise.id}"
    if key not in st.session_state:
        st.session_state[key] = _run_from_link(exercise)
    actions: tuple[Action, ...] = st.session_state.get(key, ())
    st.markdown(words.break_task(exercise.prop, BY_NAME[exercise.prop].title, exercise.max_steps))

    def keep(run: tuple[Action, ...]) -> None:
        """The run so far, in this visit and in the link (a reload finds it again)."""
        st.session_state[key] = run
        if run:
            url_state.put_all({RUN_PARAM: encode_actions(run)})
        elif url_state.has(RUN_PARAM):
            url_state.drop(RUN_PARAM)

    def pick(action: Action) -> None:
        """Append a step to this exercise's run."""
        keep((*st.session_state.get(key, ()), action))

    def undo() -> None:
        """Drop the last step."""
        keep(st.session_state.get(key, ())[:-1])

    def reset() -> None:
        """Start again from the initial state."""
        keep(())

    def check() -> None:
        """Replay the run and grade it."""
        run = st.session_state.get(key, ())
        book.record(exercise, _run_answer(exercise, run), check_break(exercise, run))

    try:
        trace = play(Run(exercise.design, exercise.bounds, actions))
    except LinkError as error:
        st.error(escape_markdown(str(error)))
        st.session_state[key] = ()
        return
    st.markdown(words.steps_so_far(len(actions), exercise.max_steps))
    action_buttons(trace, f"ex-{exercise.id}", pick)
    tools = st.columns([1, 1, 2])
    tools[0].button("Undo", key=f"ex-{exercise.id}-undo", on_click=undo, disabled=not actions)
    tools[1].button("Reset", key=f"ex-{exercise.id}-reset", on_click=reset, disabled=not actions)
    tools[2].button("Check my run", key=f"ex-{exercise.id}-check", on_click=check, type="primary")
    _feedback(book.progress(), exercise)
    status_lines(trace)
    run_view(trace, f"ex-{exercise.id}")
    step_it_yourself(trace, len(trace.steps))
    upload = st.file_uploader(
        words.trace_file_label(MAX_TRACE_BYTES),
        type=["json"],
        key=f"ex-{exercise.id}-trace",
    )
    if upload is not None and st.button(words.CHECK_TRACE_FILE, key=f"ex-{exercise.id}-file"):
        try:
            handed = read_trace_upload(upload.getvalue(), trace_from_json)
        except TraceError as error:
            st.error(words.trace_not_read(escape_markdown(str(error))))
            return
        if handed is None:
            return
        feedback = check_break_trace(exercise, handed)
        book.record(exercise, _run_answer(exercise, handed.actions), feedback)
        st.rerun()


def _run_answer(exercise: Exercise, actions: Sequence[Action]) -> str:
    """A break answer as the teacher reads it: the run's steps in words (a run the model
    cannot replay is said to be one)."""
    try:
        return run_in_words(play(Run(exercise.design, exercise.bounds, tuple(actions))))
    except LinkError:
        return words.RUN_NOT_REPLAYED


def _run_from_link(exercise: Exercise) -> tuple[Action, ...]:
    """A break run half built before a reload, from the link (none, or a bad one said)."""
    raw = url_state.get(RUN_PARAM)
    if not raw:
        return ()
    try:
        actions = decode_actions(raw)
        play(Run(exercise.design, exercise.bounds, actions))
    except LinkError as error:
        st.warning(common.link_not_understood(escape_markdown(str(error))))
        url_state.drop(RUN_PARAM)
        return ()
    return actions


def _fix_from_link(exercise: Exercise) -> Design:
    """The design last checked as a fix, kept in the link (so a reload shows the form as it
    was checked), or the exercise's own design; a link design that changes more than the
    exercise allows is said and left aside."""
    raw = url_state.get(FIX_PARAM)
    if not raw:
        return exercise.design
    try:
        design = decode_design(raw)
        allowed = {name: getattr(design, name) for name in exercise.options}
        if fixed_design(exercise, allowed) != design:
            raise LinkError(words.FIX_CHANGES_TOO_MUCH)
    except (LinkError, DesignError) as error:
        st.warning(common.link_not_understood(escape_markdown(str(error))))
        url_state.drop(FIX_PARAM)
        return exercise.design
    return design


def _fix_widget(exercise: Exercise, name: str, start: Design) -> Any:
    """The widget of one option the student may change, starting at the value of the design
    last checked (or the broken design's)."""
    offered = offered_values(exercise, name) or None
    value = BY_OPTION[name].to_json(getattr(start, name))
    if offered is not None and str(value) not in offered:
        value = BY_OPTION[name].to_json(getattr(exercise.design, name))
    return option_input(BY_OPTION[name], f"ex-{exercise.id}-opt-{name}", value, offered)


def _fix(book: Book, exercise: Exercise) -> None:
    """Widgets for the allowed options and a check button graded by the explorer."""
    original = graded_verdicts(exercise.design, exercise.bounds)
    if original is None:
        return
    title = BY_NAME[exercise.prop].title
    labels = [BY_OPTION[name].label.lower() for name in exercise.options]
    untested = escape_markdown(original.untested_sentence(), 600)
    st.markdown(words.fix_task(exercise.prop, title, original.holds, labels, untested))
    cols = st.columns(min(3, len(exercise.options)))
    start = _fix_from_link(exercise)
    for index, name in enumerate(exercise.options):
        with cols[index % len(cols)]:
            _fix_widget(exercise, name, start)

    def check() -> bool:
        """Build the chosen design and grade it (False: not graded, the server was busy)."""
        changes = {
            name: st.session_state.get(f"ex-{exercise.id}-opt-{name}") for name in exercise.options
        }
        changes = {k: v for k, v in changes.items() if v is not None}
        changes = {k: int(v) if isinstance(v, float) else v for k, v in changes.items()}
        try:
            design = fixed_design(exercise, changes)
        except DesignError as error:
            feedback = Feedback(False, words.not_a_design(str(error)))
            book.record(exercise, options_in_words(changes), feedback)
            return True
        found = graded_verdicts(design, exercise.bounds)
        if found is None:
            return False
        answer = changes_in_words(exercise.design, design, exercise.options)
        feedback = check_fix(exercise, design, original, found)
        book.record(exercise, answer, feedback)
        st.session_state[_checked_design(exercise)] = design
        url_state.put_all({FIX_PARAM: encode_design(design)})
        return True

    _check_button("Check my design", exercise, check)
    progress = book.progress()
    _feedback(progress, exercise)
    answers = progress.of(exercise.id)
    tried = st.session_state.get(_checked_design(exercise))
    if answers and not answers[-1].correct and isinstance(tried, Design):
        _violations_to_step(tried, exercise, only=lost_after_fix(exercise, original, tried))


def _checked_design(exercise: Exercise) -> str:
    """Session key: the design this visitor last checked as a fix of this exercise."""
    return f"ex-{exercise.id}-checked-design"


def lost_after_fix(exercise: Exercise, original: Verdicts, design: Design) -> tuple[str, ...]:
    """What a checked fix still breaks (from the verdicts kept when it was graded)."""
    found = known_verdicts(design, exercise.bounds)
    return () if found is None else tuple(lost_properties(exercise, original, found))


def _violations_to_step(
    design: Design, exercise: Exercise, only: Sequence[str] | None = None
) -> None:
    """A link to the scheduler on each violated property's shortest run in this design (only
    those named, when given), from the verdicts the grading kept: the answer made visible."""
    found = known_verdicts(design, exercise.bounds)
    if found is None:
        return
    for name, actions in found.runs.items():
        if only is not None and name not in only:
            continue
        trace = replay_cached(design, exercise.bounds, actions, words.violation_title(name))
        step = trace.first_violation(name)
        step_it_yourself(
            trace, step.number if step else len(trace.steps), words.step_violation(name)
        )


def _feedback(progress: Progress, exercise: Exercise) -> None:
    """The last verdict on this exercise, and the hints earned by wrong answers."""
    refused = st.session_state.pop("ex-class-error", None)
    if refused:
        st.error(words.answer_not_kept(escape_markdown(refused)))
    answers = progress.of(exercise.id)
    if answers:
        last = answers[-1]
        (st.success if last.correct else st.error)(escape_markdown(last.message, 800))
    if progress.solved(exercise.id):
        return
    for number, hint in enumerate(progress.hints(exercise), start=1):
        st.info(words.hint_line(number, safe_markdown(hint)))


def _summary(book: Book, progress: Progress, student: str = "") -> None:
    """The student's progress as a table, and downloads for the teacher."""
    exercise_set = book.exercise_set
    st.subheader("Your progress")
    rows = summary_rows(exercise_set, progress)
    st.dataframe(
        [{shown: r[key] for key, shown in words.SUMMARY_COLUMNS.items()} for r in rows],
        hide_index=True,
        width="stretch",
    )
    if book.class_id:
        st.caption(words.KEPT_FOR_TEACHER)
    else:
        st.caption(words.KEPT_UNDER_CODE)
        student = st.text_input(words.STUDENT_NAME, max_chars=80, key="ex-student")
    left, right = st.columns(2)
    offer_download(
        left,
        words.DOWNLOAD_MARKDOWN,
        summary_markdown(exercise_set, progress, student),
        file_name="exercise-summary.md",
        mime="text/markdown",
        key="ex-summary-md",
    )
    offer_download(
        right,
        words.DOWNLOAD_JSON,
        summary_json(exercise_set, progress, student),
        file_name="exercise-summary.json",
        mime="application/json",
        key="ex-summary-json",
    )


def _writing_help() -> None:
    """How a teacher writes a set: the format, the template and the default set to download."""
    with st.expander(words.WRITE_YOUR_OWN, icon=":material/edit_note:"):
        st.markdown(words.SET_FORMAT)
        left, right = st.columns(2)
        offer_download(
            left,
            words.DOWNLOAD_TEMPLATE,
            TEMPLATE_SET.read_bytes(),
            file_name="template.toml",
            mime="application/toml",
            key="ex-template",
        )
        offer_download(
            right,
            words.DOWNLOAD_DEFAULT,
            DEFAULT_SET.read_bytes(),
            file_name="default.toml",
            mime="application/toml",
            key="ex-default-download",
        )
        st.code(TEMPLATE_SET.read_text(encoding="utf-8"), language="toml")


def _solo_token() -> str:
    """The student's token from the link, made (and put in the link) on the first visit."""
    token = url_state.get(STUDENT_PARAM)
    if looks_like_token(token):
        return str(token)
    token = st.session_state.get("ex-student-token")
    if not looks_like_token(token):
        token = new_token(12)
        st.session_state["ex-student-token"] = token
    url_state.put_all({STUDENT_PARAM: str(token)})
    return str(token)


def _class_set(info: ClassInfo) -> ExerciseSet | None:
    """The class's set, checked by content like every set (None: not usable, said why)."""
    data = info.set_text.encode("utf-8")
    with st.spinner(words.CHECKING_CLASS_SET):
        loaded = set_checks.CHECKER.wait(data, info.set_name, timeout=limits.WAIT_SECONDS)
    if loaded is None:
        _being_checked()
        return None
    if isinstance(loaded, ExerciseSetError):
        _show_problems(info.set_name, loaded)
        return None
    return loaded


def _join(info: ClassInfo) -> None:
    """The join form of a class link: an optional nickname, then the student's own link."""
    st.subheader(words.join_title(escape_markdown(info.title)))
    st.markdown(words.JOIN_NOTE)
    nickname = st.text_input(
        words.NICKNAME,
        max_chars=MAX_NICKNAME_CHARS,
        key="ex-nickname",
    )
    if st.button("Join the class", key="ex-join", type="primary"):
        try:
            member = shared_store().join(info.id, nickname)
        except ClassError as error:
            st.error(escape_markdown(str(error)))
            return
        url_state.put_all({STUDENT_PARAM: member.token})
        st.rerun()


def _class_book() -> tuple[Book, Member, ClassInfo] | None:
    """In a class link: the class's set and the student's book (None: joining, or why not)."""
    class_id = url_state.get(CLASS_PARAM) or ""
    try:
        store = shared_store()
        info = store.get(class_id)
    except ClassError as error:
        st.error(words.class_not_opened(escape_markdown(str(error))))
        return None
    member = store.member(info.id, (url_state.get(STUDENT_PARAM) or ""))
    if member is None:
        _join(info)
        return None
    exercise_set = _class_set(info)
    if exercise_set is None:
        return None
    return Book(exercise_set, member.token, info.id), member, info


def _choose_exercise(exercise_set: ExerciseSet, progress: Progress) -> Exercise:
    """The exercise menu, opened on the link's exercise and kept in the link."""
    ids = [e.id for e in exercise_set.exercises]
    titles = {e.id: e.title for e in exercise_set.exercises}
    linked = url_state.get(EXERCISE_PARAM)

    def remember() -> None:
        """Put the chosen exercise in the link (a run or a fix of another one leaves it)."""
        for kept in (RUN_PARAM, FIX_PARAM):
            if url_state.has(kept):
                url_state.drop(kept)
        url_state.put_all({EXERCISE_PARAM: st.session_state["ex-choice"]})

    if linked is not None and linked not in ids and "ex-choice" not in st.session_state:
        first = safe_markdown(exercise_set.exercises[0].title)
        st.warning(words.no_such_exercise(escape_markdown(linked[:80]), first))
    chosen = st.selectbox(
        "Exercise",
        ids,
        index=ids.index(linked) if linked in ids else 0,
        format_func=lambda i: f"{'✔ ' if progress.solved(i) else ''}{titles[i]}",
        key="ex-choice",
        on_change=remember,
    )
    exercise = exercise_set.by_id(chosen) or exercise_set.exercises[0]
    if url_state.get(EXERCISE_PARAM) != exercise.id:
        url_state.put_all({EXERCISE_PARAM: exercise.id})
    return exercise


def share_link(params: dict[str, str]) -> str:
    """This page's link for someone else: the set and the exercise, never the student's code."""
    kept = {k: v for k, v in params.items() if k in (SET_PARAM, EXERCISE_PARAM)}
    return "/exercises?" + urlencode(kept)


def render_exercises() -> None:
    """The whole page."""
    st.title(words.TITLE)
    st.markdown(words.INTRO)
    student = ""
    if url_state.has(CLASS_PARAM):
        found = _class_book()
        if found is None:
            return
        book, member, info = found
        student = member.nickname
        nickname = escape_markdown(member.nickname) if member.nickname else ""
        st.info(words.in_class(escape_markdown(info.title), nickname))
    else:
        token = _solo_token()
        exercise_set = _choose_set()
        _writing_help()
        if exercise_set is None:
            return
        book = Book(exercise_set, token)
    exercise_set = book.exercise_set
    progress = book.progress()
    st.header(safe_markdown(exercise_set.title), anchor=False)
    if exercise_set.description:
        st.markdown(safe_markdown(exercise_set.description))
    exercise = _choose_exercise(exercise_set, progress)
    if not book.class_id and url_state.has(SET_PARAM):
        st.caption(words.SHARE_NOTE)
        st.code(share_link(url_state.read()), language=None)
    st.subheader(safe_markdown(exercise.title), anchor=False)
    _describe(exercise)
    {"predict": _predict, "break": _break, "fix": _fix}[exercise.kind](book, exercise)
    _summary(book, book.progress(), student)
