"""The exercises page: a set (default, a teacher's folder, or an upload), one exercise at a
time, answers graded by the model, hints after wrong answers, and a summary to download."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import streamlit as st

from model.design import Design, DesignError
from model.options import BY_OPTION
from model.presets import PRESETS
from model.properties import BY_NAME, PROPERTY_NAMES
from model.rules import Action
from model.trace import MAX_TRACE_BYTES, TraceError, trace_from_json
from webapp.exercises import (
    DEFAULT_SET,
    FOLDER_ENV,
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
    folder_files,
    load_set,
    parse_set,
    summary_json,
    summary_markdown,
    summary_rows,
    verdicts,
)
from webapp.option_widgets import option_input
from webapp.playground import LinkError, Run, encode_actions, play
from webapp.scheduler_view import action_buttons, run_view, status_lines
from webapp.text import escape_markdown, safe_markdown

DEFAULT_CHOICE = "The default set"
UPLOAD_CHOICE = "Upload a set (TOML)"
UPLOADED_KEY = "ex-uploaded-set"
CHOICE_KEY = "ex-set-remembered"
"""Session keys that outlive the page's widgets: the uploaded set and the chosen set."""


@st.cache_data(show_spinner="The model checks the design…", max_entries=128)
def verdicts_cached(design: Design, bounds: Any) -> Verdicts:
    """The explorer's verdicts, once per design and bounds (budgeted)."""
    return verdicts(design, bounds)


@st.cache_data(show_spinner=False, max_entries=4)
def default_set() -> ExerciseSet:
    """The set shipped with the app."""
    return load_set(DEFAULT_SET)


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


@st.cache_data(show_spinner="Checking the teachers' set with the model…", max_entries=64)
def load_folder_set(path: str, modified_ns: int, size: int) -> ExerciseSet | ExerciseSetError:
    """A set file from the teachers' folder, read again only when it changes (path, mtime)."""
    try:
        return load_set(Path(path))
    except ExerciseSetError as error:
        return error


def _folder_choices() -> dict[str, ExerciseSet | ExerciseSetError]:
    """The teachers' folder sets by menu name, with a warning for what cannot be used."""
    folder = os.environ.get(FOLDER_ENV, "")
    if not folder:
        return {}
    paths, warning = folder_files(Path(folder))
    if warning:
        st.warning(escape_markdown(warning))
    found: dict[str, ExerciseSet | ExerciseSetError] = {}
    for path in paths:
        try:
            info = path.stat()
            found[f"Folder: {path.name}"] = load_folder_set(
                str(path), info.st_mtime_ns, info.st_size
            )
        except OSError:
            found[f"Folder: {path.name}"] = load_folder_set(str(path), 0, 0)
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
    folder = _folder_choices()
    names = [DEFAULT_CHOICE, *folder, UPLOAD_CHOICE]
    remembered = st.session_state.get(CHOICE_KEY, DEFAULT_CHOICE)
    index = names.index(remembered) if remembered in names else 0
    choice = st.selectbox(
        "Exercise set", names, index=index, key="ex-set", on_change=_remember_choice
    )
    if choice == UPLOAD_CHOICE:
        return _uploaded_set()
    if choice == DEFAULT_CHOICE:
        return default_set()
    loaded = folder[choice]
    if isinstance(loaded, ExerciseSetError):
        _show_problems(choice.removeprefix("Folder: "), loaded)
        return None
    return loaded


# ----- one exercise ---------------------------------------------------------------------------


def _describe(exercise: Exercise) -> None:
    """The prompt, the design in words and the bounds."""
    st.markdown(safe_markdown(exercise.prompt))
    preset = PRESETS.get(exercise.design_name)
    design = f"`{exercise.design_name}`" + (f", {preset.mirrors}" if preset else "")
    st.caption(f"Design: {design}. Bounds: {exercise.bounds.in_words()}.")


def _predict(exercise_set: ExerciseSet, exercise: Exercise) -> None:
    """Checkboxes for P1..P6 and a check button graded by the explorer."""
    st.markdown("**Which properties does this design keep?** Tick every one that holds.")
    for name in PROPERTY_NAMES:
        st.checkbox(
            f"{name}, {BY_NAME[name].title}",
            key=f"ex-{exercise.id}-{name}",
            help=BY_NAME[name].statement,
        )

    def check() -> None:
        """Grade the ticked properties."""
        chosen = [n for n in PROPERTY_NAMES if st.session_state.get(f"ex-{exercise.id}-{n}")]
        found = verdicts_cached(exercise.design, exercise.bounds)
        answer = ", ".join(chosen) or "none"
        _record(exercise_set, exercise, answer, check_predict(exercise, chosen, found))

    st.button("Check my prediction", key=f"ex-{exercise.id}-check", on_click=check, type="primary")
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
            handed = trace_from_json(upload.getvalue())
        except TraceError as error:
            st.error(f"This trace file was not read: {escape_markdown(str(error))}")
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
    original = verdicts_cached(exercise.design, exercise.bounds)
    kept = ", ".join(original.holds) or "nothing"
    st.markdown(
        f"**Make {exercise.prop} hold** ({BY_NAME[exercise.prop].title}). Today this design "
        f"keeps {kept}. You may change: {', '.join(f'`{o}`' for o in exercise.options)}."
    )
    cols = st.columns(min(3, len(exercise.options)))
    for index, name in enumerate(exercise.options):
        with cols[index % len(cols)]:
            _fix_widget(exercise, name)

    def check() -> None:
        """Build the chosen design and grade it."""
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
            return
        found = verdicts_cached(design, exercise.bounds)
        _record(
            exercise_set, exercise, design.label(), check_fix(exercise, design, original, found)
        )

    st.button("Check my design", key=f"ex-{exercise.id}-check", on_click=check, type="primary")
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
    st.header(safe_markdown(exercise_set.title))
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
    st.subheader(safe_markdown(exercise.title))
    _describe(exercise)
    {"predict": _predict, "break": _break, "fix": _fix}[exercise.kind](exercise_set, exercise)
    _summary(exercise_set, _progress(exercise_set))
