"""Chapter 0, why a lease at all: each run shows what its caption tells, the takeaway table
is the explorer's verdicts, and the page is the first of the walkthrough."""

from __future__ import annotations

from model.check.explorer import explore
from model.design import REFERENCE_BOUNDS
from model.formats.trace import Trace
from model.presets import PRESETS
from webapp.screens.registry import RENDERERS, render_lease_chapter
from webapp.show.chapters import BY_NUMBER, chapter_traces
from webapp.show.lease_lessons import CRASH_COLUMN, LEASE_CHAPTER, PAUSE_COLUMN, lesson_rows
from webapp.show.navigation import PAGES


def _first(trace: Trace, name: str, worker: int = 0) -> int:
    """The number of the first step with this action (and worker)."""
    return next(
        step.number
        for step in trace.steps
        if step.action.name == name and (not worker or step.action.worker == worker)
    )


def _deliveries(trace: Trace, worker: int) -> list[str | None]:
    """The receiver's outcome of each of a worker's deliveries."""
    return [
        step.outcome
        for step in trace.steps
        if step.action.name == "Deliver" and step.action.worker == worker
    ]


def test_the_chapter_steps_the_three_designs_of_its_table_together() -> None:
    chapter = BY_NUMBER[LEASE_CHAPTER]
    (choice,) = chapter.runs  # one choice: the three runs beside each other, one stepper
    assert [spec.design for spec in choice.shown()] == [
        PRESETS[name].design for name in chapter.presets
    ]
    assert chapter.presets == ("lock-without-lease", "keepalive-lease", "keepalive-fencing")
    assert chapter.properties == ("P1", "P2", "P3", "P6")


def test_without_a_lease_a_pause_is_safe_and_a_crash_strands_the_lock() -> None:
    no_lease = chapter_traces(LEASE_CHAPTER)[0]
    assert no_lease.violated() == ("P6",)
    crash = _first(no_lease, "Crash", 2)
    # W1 paused across ticks holding the lock; nobody else was granted it meanwhile
    assert [s.action.name for s in no_lease.steps[1:4]] == ["Tick", "Tick", "Tick"]
    assert _first(no_lease, "Acquire", 2) > _first(no_lease, "Release", 1)
    assert _deliveries(no_lease, 1) == ["accepted"]
    violation = no_lease.first_violation("P6")
    assert violation is not None and violation.action.name == "Tick"
    assert violation.number > crash
    assert all(step.action.name == "Tick" for step in no_lease.steps[crash:])
    assert no_lease.state_at(len(no_lease.steps))["holder"] == 2  # the crashed worker's still


def test_a_lease_frees_the_crashed_holders_lock_and_lets_the_paused_one_write() -> None:
    lease = chapter_traces(LEASE_CHAPTER)[1]
    assert lease.violated() == ("P1", "P2", "P3")
    late = lease.first_violation("P2")
    assert late is not None and late.action.label() == "Deliver(W1)"
    assert set(late.violations) == {"P1", "P2", "P3"}
    renewal = _first(lease, "Renew", 2)
    before, after = lease.state_at(renewal - 1), lease.state_at(renewal)
    assert after["expires"] == before["expires"] + 1  # the keepalive moved the end
    crash = _first(lease, "Crash", 2)
    regrant = [s for s in lease.steps[crash:] if s.action.name == "Acquire"]
    assert [s.action.worker for s in regrant] == [1]
    ticks = sum(1 for s in lease.steps[renewal:] if s.action.name == "Tick")
    assert ticks == lease.bounds.lease  # freed L ticks after the last renewal


def test_fencing_refuses_the_late_write_and_still_frees_the_lock() -> None:
    lease, fencing = chapter_traces(LEASE_CHAPTER)[1:]
    assert fencing.violated() == ()
    assert _deliveries(fencing, 1) == ["rejected"]
    assert _deliveries(lease, 1) == ["accepted"]
    assert fencing.actions[: _first(fencing, "Crash")] == lease.actions[: _first(lease, "Crash")]
    assert fencing.steps[-1].action.label() == "Acquire(W1)"


def test_the_takeaway_table_is_the_explorers_verdicts() -> None:
    chapter = BY_NUMBER[LEASE_CHAPTER]
    explorations = {
        name: explore(PRESETS[name].design, REFERENCE_BOUNDS) for name in chapter.presets
    }
    rows = lesson_rows(explorations)
    assert [row["design"].split(":")[0] for row in rows] == list(chapter.presets)
    for row, exploration in zip(rows, explorations.values(), strict=True):
        for name in ("P1", "P2", "P3"):
            verdict = exploration.verdicts[name]
            said = row[PAUSE_COLUMN].split(" · ")
            failing = next((part for part in said if part.startswith("✘")), "")
            assert (name in failing) == verdict.violated
        assert row[CRASH_COLUMN].startswith("✘") == exploration.verdicts["P6"].violated
    # pinned: the reference figures of the three presets
    assert rows[0][CRASH_COLUMN].endswith("P6 fails (5 steps)")
    assert rows[1][PAUSE_COLUMN] == "✘ P1, P2, P3 fail (8, 5, 8 steps)"
    assert rows[2][PAUSE_COLUMN] == "✔ P1, P3 hold · ✘ P2 fails (5 steps)"


def test_the_takeaway_says_a_crash_and_a_pause_look_the_same() -> None:
    takeaway = BY_NUMBER[LEASE_CHAPTER].takeaway
    assert "The coordinator cannot tell a crash from a pause" in takeaway
    assert "(P6 fails)" in takeaway and "(P1, P2, P3 fail)" in takeaway


def test_the_chapter_is_the_first_walkthrough_page_and_chapter_1_starts_from_it() -> None:
    walkthrough = [entry for entry in PAGES if entry.section == "Walkthrough"]
    assert walkthrough[0].url_path == "chapter-0"
    assert RENDERERS["chapter-0"] is render_lease_chapter
    assert walkthrough[0].title == f"0. {BY_NUMBER[LEASE_CHAPTER].title}"
    assert BY_NUMBER[1].question.startswith("Chapter 0 showed why a lock needs a lease")


def test_one_stepper_shows_the_three_runs_pause_and_crash_at_the_same_steps() -> None:
    """Stepping them together lines the stories up: W1's grant and pause open every run, and
    W2 crashes at the same step in all three."""
    traces = chapter_traces(LEASE_CHAPTER)
    assert {t.steps[0].action.label() for t in traces} == {"Acquire(W1)"}
    assert {t.steps[1].action.name for t in traces} == {"Tick"}
    crash_steps = {_first(trace, "Crash", 2) for trace in traces}
    assert len(crash_steps) == 1


def test_a_grant_after_a_crash_says_the_old_holder_crashed_not_that_it_believes() -> None:
    """The grant that follows a crash names the crashed holder as crashed; a paused holder
    superseded by a grant is still said to believe it holds the lock."""
    lease = chapter_traces(LEASE_CHAPTER)[1]
    regrant = lease.steps[-1]
    assert regrant.action.label() == "Acquire(W1)"
    assert regrant.sentence.endswith("W2 crashed while holding the lock and never runs again.")
    superseding = lease.steps[_first(lease, "Acquire", 2) - 1]
    assert superseding.sentence.endswith("W1 is not told and still believes it holds the lock.")
