"""The Exercises page's words: choosing a set, each kind of exercise's task, the feedback
around an answer, the progress summary, joining a class, and how to write a set.

Names and texts a visitor or a teacher wrote reach these functions as the page escaped them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from model.design import Bounds
from webapp.content.common import link_not_understood

TITLE: Final = "Exercises"

INTRO: Final = (
    "Predict what a design keeps, break it as the scheduler, or fix it by changing its "
    "options. Every answer is checked by the model. A wrong answer earns a hint."
)

# ----- choosing a set -------------------------------------------------------------------------

CHECKING_DEFAULT_SET: Final = "The model checks the default set…"
CHECKING_CLASS_SET: Final = "The model checks the class's set…"
CHECKING_UPLOAD: Final = "Checking the set with the model…"
"""The spinner while an uploaded set is parsed and checked."""
CHECKING_YOUR_SET: Final = "the check of your set"
"""The work an uploaded set waits for, as the busy message names it."""
UPLOAD_TO_START: Final = (
    "Upload a set to start. Its format is under *Write your own set* below, with a "
    "template to download."
)
SET_BEING_CHECKED: Final = (
    "The model is still checking this set in the background (every exercise must be "
    "solvable). Look again in a moment."
)


def set_not_loaded(name: str, problems: Sequence[str]) -> str:
    """Every problem of a refused set file, as a Markdown list."""
    return f"**{name} was not loaded:**\n\n" + "\n".join(f"- {p}" for p in problems)


def no_such_set(linked: str, shown: str) -> str:
    """A link names a set this server does not have (both names as the page escaped them)."""
    return link_not_understood(f"there is no exercise set called {linked} here; showing {shown}")


def no_such_exercise(linked: str, shown: str) -> str:
    """A link names an exercise the set does not have (both as the page escaped them)."""
    return link_not_understood(
        f"this set has no exercise called {linked}; showing its first exercise, {shown}"
    )


def using_earlier_upload(source: str) -> str:
    """The note over a set the visitor uploaded earlier in this visit."""
    return f"Using the set you uploaded earlier ({source}); upload another file to replace it."


def sets_still_checked(names: Sequence[str]) -> str:
    """The teachers' sets the model has not finished checking yet."""
    return (
        "The model is still checking that every exercise of "
        + ", ".join(names)
        + " can be solved; each set opens here once its check is done."
    )


def sets_unusable(names: Sequence[str]) -> str:
    """The teachers' set files that cannot be used."""
    return "Some of the teachers' set files cannot be used (choose one to see why): " + ", ".join(
        names
    )


# ----- one exercise ---------------------------------------------------------------------------


def design_caption(design_name: str, mirrors: str | None, bounds: Bounds) -> str:
    """The exercise's design in words (and the real system a preset mirrors) and its bounds
    (`design_name` as the page escaped it)."""
    design = design_name + (f", which mirrors {mirrors}" if mirrors else "")
    return f"The design: {design}. The bounds: {bounds.in_words()}."


CHECKING_ANSWER: Final = "the model check of this answer"
"""The work an answer's grading waits for, as the busy message names it."""
CHECKING_DESIGN: Final = "The model checks the design…"
PREDICT_TASK: Final = (
    "**Which properties does this design keep?** Tick every one that some run puts to the "
    "test and no run breaks. A property that nothing ever puts to the test holds only "
    "vacuously: ticking it is neither right nor wrong, and the answer says why."
)


def break_task(prop: str, title: str, most_steps: int) -> str:
    """What a break exercise asks: the property to violate, and in how many steps at most."""
    return (
        f"**Violate {prop}** ({title}) in at most "
        f"**{most_steps}** steps. You are the scheduler: click the actions."
    )


def steps_so_far(steps: int, most_steps: int) -> str:
    """How many steps the student's run has, of the most the exercise allows."""
    return f"Steps so far: **{steps}** of at most {most_steps}."


def trace_file_label(most_bytes: int) -> str:
    """The label of the uploader of a trace file handed in instead of clicking a run."""
    return f"…or hand in a trace file from the playground (JSON, at most {most_bytes:,} bytes)"


CHECK_TRACE_FILE: Final = "Check the trace file"
RUN_NOT_REPLAYED: Final = "a run the model cannot replay"
FIX_CHANGES_TOO_MUCH: Final = "its fix changes options this exercise does not let you change"
"""Why a link's fix of an exercise is left aside."""
"""A break answer whose run cannot be replayed, as the teacher reads it."""


def trace_not_read(problem: str) -> str:
    """Why a handed-in trace file was refused (the model's reason)."""
    return f"This trace file was not read: {problem}"


def fix_task(
    prop: str, title: str, holds: Sequence[str], options: Sequence[str], untested: str = ""
) -> str:
    """What a fix exercise asks: the property to make hold (put to the test), what the design
    keeps today (the explorer's verdicts, vacuous ones said apart), and the options, in
    words, that the student may change."""
    kept = ", ".join(holds) or "nothing"
    aside = f" {untested}" if untested else ""
    return (
        f"**Make {prop} hold** ({title}), put to the test. Today this design keeps "
        f"{kept}.{aside} You may change: {', '.join(options)}."
    )


def violation_title(prop: str) -> str:
    """The title of a property's shortest violating run opened from an exercise."""
    return f"Shortest {prop} violation"


def step_violation(prop: str) -> str:
    """The link that opens a property's shortest violation in the scheduler."""
    return f"Step through {prop}'s violation yourself, in the scheduler"


def not_a_design(problem: str) -> str:
    """The feedback on options that make no valid design (the model's reason)."""
    return f"That is not a valid design: {problem}"


def answer_not_kept(problem: str) -> str:
    """Why a class refused to keep an answer."""
    return f"This answer was not kept: {problem}"


def hint_line(number: int, hint: str) -> str:
    """A hint earned by a wrong answer, numbered."""
    return f"Hint {number}: {hint}"


# ----- the summary and writing a set ----------------------------------------------------------

SUMMARY_COLUMNS: Final = {
    "title": "exercise",
    "kind": "kind",
    "solved": "solved",
    "attempts": "answers",
    "hints_used": "hints seen",
}
"""The progress table's columns: the summary's field, and its heading in words."""
KEPT_FOR_TEACHER: Final = (
    "Your answers are kept for your teacher and come back when you reload this page "
    "or open your link again."
)
KEPT_UNDER_CODE: Final = (
    "Your answers are kept on this server under the `student` code in this page's "
    "link: bookmark it to come back to them."
)
STUDENT_NAME: Final = "Your name (for the summary)"
DOWNLOAD_MARKDOWN: Final = "Download the summary (Markdown)"
DOWNLOAD_JSON: Final = "Download the summary (JSON)"
SHARE_NOTE: Final = (
    "To send this exercise to someone, share this path on this server (your own "
    "link also holds your answers' code):"
)
WRITE_YOUR_OWN: Final = "Write your own set"
SET_FORMAT: Final = (
    "A set is a TOML file: a `title`, then one `[[exercise]]` table per exercise with "
    "an `id`, a `kind` (`predict`, `break` or `fix`), a `title`, a `prompt` and a "
    "`preset` (or a `design` table). *Break* exercises add `property` and "
    "`max_steps`; *fix* exercises add `property` and the `options` a student may "
    "change. Every field is listed in docs/exercises.md (or run "
    "`fencing exercises doc`). Before class, `fencing exercises check my-set.toml` "
    "makes this page's checks and prints every problem at once."
)
"""How a teacher writes a set, in short."""
DOWNLOAD_TEMPLATE: Final = "Download the template (one exercise of each kind)"
DOWNLOAD_DEFAULT: Final = "Download the default set"

# ----- a class --------------------------------------------------------------------------------


def join_title(class_title: str) -> str:
    """The heading of a class's join form."""
    return f"Join the class {class_title}"


JOIN_NOTE: Final = (
    "No account is needed. Your answers are kept for your teacher under a code that is "
    "added to this page's link; reload the page or keep the link to come back."
)
NICKNAME: Final = "A nickname your teacher will see (optional)"


def class_not_opened(problem: str) -> str:
    """Why a class link opens no class."""
    return f"This class cannot be opened: {problem}."


def in_class(class_title: str, nickname: str) -> str:
    """Which class the student is in, and under which nickname (none: not said)."""
    who = f" as {nickname}" if nickname else ""
    return f"You are in the class **{class_title}**{who}."
