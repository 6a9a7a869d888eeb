"""The exercises page: a set (default, a teacher's folder, or an upload), one exercise at a
time, answers graded by the model, hints after wrong answers, and a summary to download."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from model.design import Design, DesignError
from model.options import BY_OPTION
from model.presets import PRESETS
from model.properties import BY_NAME, PROPERTY_NAMES
from model.rules import Action
from model.trace import MAX_TRACE_BYTES, TraceError, trace_from_json
from webapp import limits, set_checks
from webapp.exercises import (
    DEFAULT_SET,
    MAX_SET_BYTES,
    Attempt,
    Exercise,
    ExerciseSet,
    ExerciseSetError,
    Feedback,
    Progress,
    Verdicts,
    check_break,
    check_break_trace,
    check_fix,
    check_predict,
    decode_upload,
    fixed_design,
    known_verdicts,
    parse_set,
    summary_json,
    summary_markdown,
    summary_rows,
    verdicts,
)
from webapp.limits import heavy_work
from webapp.option_widgets import option_input
from webapp.playground import LinkError, Run, encode_actions, play
from webapp.scheduler_view import action_buttons, run_view, status_lines
from webapp.set_checks import Checked, read_set_file, teacher_files, warm
from webapp.text import escape_markdown, safe_markdown
from webapp.uploads import read_trace_upload

DEFAULT_CHOICE = "The default set"
UPLOAD_CHOICE = "Upload a set (TOML)"
UPLOADED_KEY = "ex-uploaded-set"
CHOICE_KEY = "ex-set-remembered"
"""Session keys that outlive the page's widgets: the uploaded set and the chosen set."""


BEING_CHECKED = " (being checked)"
"""Added to the menu name of a teachers' set the model has not finished checking."""


def graded_verdicts(design: Design, bounds: Any) -> Verdicts | None:
    """The explorer's verdicts for grading: known ones at once, new ones under the heavy-work
    limit within the grading budget; None (the busy message shown) when no slot is free."""
    known = known_verdicts(design, bounds)
    if known is not None:
        return known
    with heavy_work("the model check of this answer", wait=limits.WAIT_SECONDS) as admitted:
        if not admitted:
            return None
        with st.spinner("The model checks the design…"):
            return verdicts(design, bounds)


def default_set() -> Checked | None:
    """The set shipped with the app, checked once for the process (None: still being checked)."""
    data = read_set_file(DEFAULT_SET)
    if isinstance(data, ExerciseSetError):
        return data
    with st.spinner("The model checks the default set…"):
        return set_checks.CHECKER.wait(data, DEFAULT_SET.name, timeout=limits.WAIT_SECONDS)


def _progress(exercise_set: ExerciseSet) -> Progress:
    """This session's progress on the set."""
    progress = st.session_state.get(f"ex-progress-{exercise_set.title}")
    return progress if isinstance(progress, Progress) else Progress()


def _record(exercise_set: ExerciseSet, exercise: Exercise, answer: str, feedback: Feedback) -> None:
    """Keep an answer and its verdict in the session, and show the verdict after the rerun."""
    key = f"ex-progress-{exercise_set.title}"
    st.session_state[key] = _progress(exercise_set).record(
        Attempt(exercise.id, answer, feedback.correct, feedback.message)
    )
    st.session_state[f"ex-feedback-{exercise.id}"] = feedback


# ----- choosing a set --------------------------------------------------------------------------


def _show_problems(name: str, error: ExerciseSetError) -> None:
    """Every problem of a refused set file, each with its line and field."""
    st.error(
        f"**{escape_markdown(name)} was not loaded:**\n\n"
        + "\n".join(f"- {escape_markdown(p.text(), limit=500)}" for p in error.problems)
    )


def _uploaded_set() -> ExerciseSet | None:
    """The uploaded set (kept for the rest of the session), or None with the problems shown."""
    upload = st.file_uploader(
        f"A set file (TOML, UTF-8, at most {MAX_SET_BYTES:,} bytes)",
        type=["toml"],
        key="ex-upload",
    )
    if upload is None:
        kept = st.session_state.get(UPLOADED_KEY)
        if isinstance(kept, ExerciseSet):
            st.caption(
                f"Using the set you uploaded earlier ({escape_markdown(kept.source)}); upload "
                "another file to replace it."
            )
            return kept
        st.info("Upload a set to start. The default set shows the format.")
        return None
    with heavy_work("the check of your set", wait=limits.WAIT_SECONDS) as admitted:
        if not admitted:
            return None
        try:
            loaded = parse_uploaded(upload.getvalue(), upload.name)
        except ExerciseSetError as error:
            _show_problems(upload.name, error)
            return None
    st.session_state[UPLOADED_KEY] = loaded
    return loaded


@st.cache_data(show_spinner="Checking the set with the model…", max_entries=16)
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
        found[f"Folder: {path.name}"] = checked
    pending = [name for name, loaded in found.items() if loaded is None]
    if pending:
        st.info(
            "The model is still checking that every exercise of "
            + ", ".join(escape_markdown(name.removeprefix("Folder: ")) for name in pending)
            + " can be solved; each set opens here once its check is done."
        )
    broken = [name for name, loaded in found.items() if isinstance(loaded, ExerciseSetError)]
    if broken:
        st.warning(
            "Some of the teachers' set files cannot be used (choose one to see why): "
            + ", ".join(escape_markdown(name.removeprefix("Folder: ")) for name in broken)
        )
    return found


def _remember_choice() -> None:
    """Keep the chosen set across pages of the session."""
    st.session_state[CHOICE_KEY] = st.session_state.get("ex-set", DEFAULT_CHOICE)


def _choose_set() -> ExerciseSet | None:
    """The set the class works on: the default, one from the teachers' folder, or an upload."""
    warm()
    folder = _folder_choices()
    names = [DEFAULT_CHOICE, *folder, UPLOAD_CHOICE]
    remembered = st.session_state.get(CHOICE_KEY, DEFAULT_CHOICE)
    index = names.index(remembered) if remembered in names else 0
    choice = st.selectbox(
        "Exercise set",
        names,
        index=index,
        key="ex-set",
        on_change=_remember_choice,
        format_func=lambda name: name + (BEING_CHECKED if folder.get(name, 0) is None else ""),
    )
    if choice == UPLOAD_CHOICE:
        return _uploaded_set()
    loaded = default_set() if choice == DEFAULT_CHOICE else folder[choice]
    if loaded is None:
        _being_checked()
        return None
    if isinstance(loaded, ExerciseSetError):
        _show_problems(choice.removeprefix("Folder: "), loaded)
        return None
    return loaded


def _being_checked() -> None:
    """What a visitor sees of a set the model is still checking: a note and a way to look again."""
    st.info(
        "The model is still checking this set in the background (every exercise must be "
        "solvable). Look again in a moment."
    )
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
    design = f"`{exercise.design_name}`" + (f", {preset.mirrors}" if preset else "")
    st.caption(f"Design: {design}. Bounds: {exercise.bounds.in_words()}.")


def _predict(exercise_set: ExerciseSet, exercise: Exercise) -> None:
    """Checkboxes for P1..P5 and a check button graded by the explorer."""
    st.markdown("**Which properties does this design keep?** Tick every one that holds.")
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
        _record(exercise_set, exercise, answer, check_predict(exercise, chosen, found))
        return True

    _check_button("Check my prediction", exercise, check)
    _feedback(_progress(exercise_set), exercise)


def _break(exercise_set: ExerciseSet, exercise: Exercise) -> None:
    """An inline scheduler; the run is replayed and checked when the student asks."""
    key = f"ex-run-{exercise.id}"
    actions: tuple[Action, ...] = st.session_state.get(key, ())
    st.markdown(
        f"**Violate {exercise.prop}** ({BY_NAME[exercise.prop].title}) in at most "
        f"**{exercise.max_steps}** steps. You are the scheduler: click the actions."
    )

    def pick(action: Action) -> None:
        """Append a step to this exercise's run."""
        st.session_state[key] = (*st.session_state.get(key, ()), action)

    def undo() -> None:
        """Drop the last step."""
        st.session_state[key] = st.session_state.get(key, ())[:-1]

    def reset() -> None:
        """Start again from the initial state."""
        st.session_state[key] = ()

    def check() -> None:
        """Replay the run and grade it."""
        run = st.session_state.get(key, ())
        answer = encode_actions(run) or "(no steps)"
        _record(exercise_set, exercise, answer, check_break(exercise, run))

    try:
        trace = play(Run(exercise.design, exercise.bounds, actions))
    except LinkError as error:
        st.error(escape_markdown(str(error)))
        st.session_state[key] = ()
        return
    st.markdown(f"Steps so far: **{len(actions)}** of at most {exercise.max_steps}.")
    action_buttons(trace, f"ex-{exercise.id}", pick)
    tools = st.columns([1, 1, 2])
    tools[0].button("Undo", key=f"ex-{exercise.id}-undo", on_click=undo, disabled=not actions)
    tools[1].button("Reset", key=f"ex-{exercise.id}-reset", on_click=reset, disabled=not actions)
    tools[2].button("Check my run", key=f"ex-{exercise.id}-check", on_click=check, type="primary")
    _feedback(_progress(exercise_set), exercise)
    status_lines(trace)
    run_view(trace, f"ex-{exercise.id}")
    upload = st.file_uploader(
        f"…or hand in a trace file from the playground (JSON, at most {MAX_TRACE_BYTES:,} bytes)",
        type=["json"],
        key=f"ex-{exercise.id}-trace",
    )
    if upload is not None and st.button("Check the trace file", key=f"ex-{exercise.id}-file"):
        try:
            handed = read_trace_upload(upload.getvalue(), trace_from_json)
        except TraceError as error:
            st.error(f"This trace file was not read: {escape_markdown(str(error))}")
            return
        if handed is None:
            return
        feedback = check_break_trace(exercise, handed)
        _record(exercise_set, exercise, encode_actions(handed.actions), feedback)
        st.rerun()


def _fix_widget(exercise: Exercise, name: str) -> Any:
    """The widget of one option the student may change, starting at the broken design's value."""
    value = BY_OPTION[name].to_json(getattr(exercise.design, name))
    return option_input(BY_OPTION[name], f"ex-{exercise.id}-opt-{name}", value)


def _fix(exercise_set: ExerciseSet, exercise: Exercise) -> None:
    """Widgets for the allowed options and a check button graded by the explorer."""
    original = graded_verdicts(exercise.design, exercise.bounds)
    if original is None:
        return
    kept = ", ".join(original.holds) or "nothing"
    st.markdown(
        f"**Make {exercise.prop} hold** ({BY_NAME[exercise.prop].title}). Today this design "
        f"keeps {kept}. You may change: {', '.join(f'`{o}`' for o in exercise.options)}."
    )
    cols = st.columns(min(3, len(exercise.options)))
    for index, name in enumerate(exercise.options):
        with cols[index % len(cols)]:
            _fix_widget(exercise, name)

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
            feedback = Feedback(False, f"That is not a valid design: {error}")
            _record(exercise_set, exercise, str(changes), feedback)
            return True
        found = graded_verdicts(design, exercise.bounds)
        if found is None:
            return False
        _record(
            exercise_set, exercise, design.label(), check_fix(exercise, design, original, found)
        )
        return True

    _check_button("Check my design", exercise, check)
    _feedback(_progress(exercise_set), exercise)


def _feedback(progress: Progress, exercise: Exercise) -> None:
    """The last verdict on this exercise, and the hints earned by wrong answers."""
    feedback = st.session_state.get(f"ex-feedback-{exercise.id}")
    if isinstance(feedback, Feedback):
        (st.success if feedback.correct else st.error)(escape_markdown(feedback.message, 800))
    if progress.solved(exercise.id):
        return
    for number, hint in enumerate(progress.hints(exercise), start=1):
        st.info(f"Hint {number}: {safe_markdown(hint)}")


def _summary(exercise_set: ExerciseSet, progress: Progress) -> None:
    """The session's progress as a table, and downloads for the teacher."""
    st.subheader("Your progress")
    rows = summary_rows(exercise_set, progress)
    st.dataframe(
        [{k: r[k] for k in ("title", "kind", "solved", "attempts", "hints_used")} for r in rows],
        hide_index=True,
        width="stretch",
    )
    student = st.text_input("Your name (for the summary)", max_chars=80, key="ex-student")
    left, right = st.columns(2)
    left.download_button(
        "Download the summary (Markdown)",
        summary_markdown(exercise_set, progress, student),
        file_name="exercise-summary.md",
        mime="text/markdown",
        key="ex-summary-md",
        icon=":material/download:",
    )
    right.download_button(
        "Download the summary (JSON)",
        summary_json(exercise_set, progress, student),
        file_name="exercise-summary.json",
        mime="application/json",
        key="ex-summary-json",
        icon=":material/download:",
    )


def render_exercises() -> None:
    """The whole page."""
    st.title("Exercises")
    st.markdown(
        "Predict what a design keeps, break it as the scheduler, or fix it by changing its "
        "options. Every answer is checked by the model. A wrong answer earns a hint."
    )
    exercise_set = _choose_set()
    if exercise_set is None:
        return
    progress = _progress(exercise_set)
    st.header(safe_markdown(exercise_set.title), anchor=False)
    if exercise_set.description:
        st.markdown(safe_markdown(exercise_set.description))
    ids = [e.id for e in exercise_set.exercises]
    titles = {e.id: e.title for e in exercise_set.exercises}
    chosen = st.selectbox(
        "Exercise",
        ids,
        format_func=lambda i: f"{'✔ ' if progress.solved(i) else ''}{titles[i]}",
        key="ex-choice",
    )
    exercise = exercise_set.by_id(chosen) or exercise_set.exercises[0]
    st.subheader(safe_markdown(exercise.title), anchor=False)
    _describe(exercise)
    {"predict": _predict, "break": _break, "fix": _fix}[exercise.kind](exercise_set, exercise)
    _summary(exercise_set, _progress(exercise_set))
