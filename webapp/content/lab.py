"""The Live lab page's words: the lab's forms, its queue, and how a real run compares with the
model.

Text that came from outside the program (error messages, which may carry an address from the
environment) reaches these functions already escaped by the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from model.formats.trace import Trace
from model.options import BY_OPTION
from model.properties import BY_NAME
from model.verdicts import Status
from webapp.show.style import HOLDS_GLYPH, STATUS_GLYPHS, VIOLATED_GLYPH
from webapp.show.text import counted, is_or_are

INTRO: Final = (
    "The same bugs on real parts: a real lock service grants the lock (**etcd**, etcd's "
    "lock API, **ZooKeeper** or **Redis**, started here on this machine), real worker "
    "**processes** write through a real **SQLite** or **PostgreSQL** store, and a nemesis "
    "**pauses**, holds, crashes or kills what it picks. Every event is recorded; the "
    "history is checked on its own and replayed through the model, which either allows it "
    "or names the first event it refuses."
)
"""The page's first paragraph: what runs for real, and how its history is judged."""
NO_POSTGRES_FORM: Final = (
    "The etcd-txn receiver keeps its data in etcd itself, so it has no PostgreSQL form and is "
    "left out."
)
"""Why the etcd-txn receiver is left out of a run on PostgreSQL."""
NO_RECEIVER_LEFT: Final = f"{NO_POSTGRES_FORM} Pick another receiver, or the sqlite database."
"""Why nothing can run on PostgreSQL when the etcd-txn receiver was the only one chosen."""
SCHEDULE_HELP: Final = (
    "The same number repeats the nemesis's choices: when, whom and how long it pauses."
)
"""The schedule number's help."""
RECEIVERS_LABEL: Final = "Receivers, compared side by side"
DATABASE_LABEL: Final = "Database of the store"
DATABASE_HELP: Final = (
    "postgres: a real PostgreSQL the lab starts, one connection per worker, so the "
    "fenced write is atomic by the database's own locking."
)
"""The database chooser's help."""
IN_HISTORY: Final = "in the real history"
"""The verdict table's column of the history checker's verdicts."""
PREDICTED: Final = "the model predicted"
"""The verdict table's column of the model's own prediction for the run's settings."""
IN_REPLAY: Final = "in the model's replay"
"""The verdict table's column of the model's flags on its replay of the history."""
DOWNLOAD_MODEL_TRACE: Final = "Download the model trace (JSON)"
DOWNLOAD_HISTORY: Final = "Download the history (JSON)"
DOWNLOAD_PARTIAL: Final = "Download the partial history (JSON)"

NUMBER_WORDS: Final = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
"""Small counts as words, for the randomized run's caption."""


def cannot_run(problem: str, variable: str) -> str:
    """Why the etcd address the server was given (in `variable`) cannot be used."""
    return (
        f"The lab cannot run: {problem}. Fix {variable} where the server is started, or "
        "unset it to let the lab start its own etcd."
    )


def prediction(settings: str, summary: str) -> str:
    """The model's prediction for a scenario run with these settings."""
    return f"**The model's prediction** for {settings}: {summary}."


def runs_on_etcd(reason: str) -> str:
    """Why the chosen lock service cannot run this scenario, which then runs on etcd."""
    return f"{reason}. This scenario runs on etcd instead."


def random_run(writes: int, pause_ttls: tuple[float, float]) -> str:
    """What a randomized run does: each worker's loop, and how long the nemesis pauses."""
    low, high = pause_ttls
    count = NUMBER_WORDS[writes] if writes < len(NUMBER_WORDS) else f"{writes:,}"
    return (
        f"Each worker loops: take the lock, {count} writes, release. The nemesis pauses workers "
        f"(mostly the lock's holder) for {low:g} to {high:g} lease TTLs."
    )


def no_postgres(problem: str) -> str:
    """Why the lab cannot use PostgreSQL on this machine."""
    return f"The lab cannot use PostgreSQL here: {problem}."


def queued(running: int, waiting: int) -> str:
    """The note while a run waits for a lab slot."""
    return (
        f"Queued: {counted(running, 'lab run')} {is_or_are(running)} in progress and "
        f"{waiting} waiting; yours starts "
        "when one finishes."
    )


def busy(running: int, waiting: int) -> str:
    """A run got no lab slot in time: how many runs are ahead."""
    return (
        f"The lab is busy: {counted(running, 'run')} {is_or_are(running)} in progress and "
        f"{waiting} {is_or_are(waiting)} waiting. Try again in a minute."
    )


def starting(label: str) -> str:
    """The progress bar's words before the first run starts."""
    return f"{label}: starting etcd"


def stopped_early(reason: str, events: int) -> str:
    """A run stopped early for `reason`: what was stopped and what was kept."""
    return (
        f"The run stopped early: {reason}. Every process it started was "
        f"stopped; what it recorded up to then ({events:,} events) "
        "is kept as a partial history below."
    )


def failed(problem: str) -> str:
    """A run failed, for `problem`."""
    return f"The run failed: {problem}"


def verdict_cell(count: int, name: str, exercised: int) -> str:
    """A property's verdict cell: `✘ 3 violations`, `✔ holds`, or, when nothing put it to
    the test, `○ holds vacuously: no accepted write …` (never a plain holds)."""
    if count:
        return f"{VIOLATED_GLYPH} {count} violation{'s' if count != 1 else ''}"
    if not exercised:
        return f"{STATUS_GLYPHS[Status.VACUOUS]} holds vacuously: {_none_of(name)}"
    return f"{HOLDS_GLYPH} holds"


def _none_of(name: str) -> str:
    """`no accepted write`: what the property speaks of, absent."""
    what = BY_NAME[name].exercised_by
    return "no " + what.split(" ", 1)[1] if what.startswith(("a ", "an ")) else f"no {what}"


def model_run(trace: Trace, tick_seconds: float) -> str:
    """The heading of the model's run of a history: its design, bounds and tick length."""
    return (
        f"**The model's run of this history** ({trace.design.in_words()}; "
        f"{trace.bounds.in_words()}; "
        f"one tick ≈ {tick_seconds:.2f} s)"
    )


def prediction_verdict(agrees: bool) -> str:
    """Whether the real run did what the model predicted."""
    if agrees:
        return "Reality agreed with the model's prediction."
    return "Reality differed from the model's prediction: see the table."


def conformance(sentence: str) -> str:
    """The conformance verdict of the model's replay, as a line."""
    return f"**Conformance:** {sentence}"


def replay_coverage(covered: str) -> str:
    """How much of the run the model's replay covered."""
    return f"The model's replay {covered}."


def witnesses_contradict(reasons: Sequence[str]) -> str | None:
    """The witnesses' contradictions, each with its reason (None when there is none)."""
    if not reasons:
        return None
    lines = "\n".join(f"- {reason}" for reason in reasons)
    return f"**The witnesses contradict each other:** no real order allows this.\n{lines}"


def event_by_event(events: int) -> str:
    """The title of the folded-away narrated history."""
    return f"The history, event by event ({events} events)"


ETCD_TXN_WORDS: Final = "an etcd transaction that writes only while the lock key is held"
"""The lab's etcd-txn receiver in words (it has no row in the model's receiver table)."""


def receiver_words(name: str) -> str:
    """A lab receiver in words, from the model's own words for the receivers it shares."""
    if name == "etcd-txn":
        return ETCD_TXN_WORDS
    option = BY_OPTION["receiver"]
    return option.words.get(name, name)
