"""The content functions that make a page's sentences from the model's results (the
Compare, Check-my-stack, Exercises, Class, Proofs and chapter pages): fed real explorations,
advice and set files, the words that depend on them follow them."""

from __future__ import annotations

from dataclasses import replace
from typing import Final

import pytest

from advise import words as advice_words
from advise.advice import Advice, advise
from advise.catalogue import Stack
from classroom.data import ExerciseSetError
from classroom.grading import verdicts
from classroom.sets import parse_set
from fencing.matrix import verdict_matrix
from model.check.explorer import Exploration, explore
from model.check.search import SearchOptions
from model.design import REFERENCE_BOUNDS
from model.formats.trace import replay
from model.presets import PRESETS
from model.properties import PROPERTY_NAMES
from webapp.content import chapters, classroom, common, compare, exercises, proofs, stack
from webapp.show.verdicts import compact_cell, difference
from webapp.show.views import unknown_setting

LEASE_ONLY: Final = PRESETS["lease-only"].design
FENCING: Final = PRESETS["fencing"].design


@pytest.fixture(scope="module")
def lease_only() -> Exploration:
    """Every interleaving of the lease-only design at the lessons' bounds."""
    return explore(LEASE_ONLY, REFERENCE_BOUNDS)


@pytest.fixture(scope="module")
def fencing() -> Exploration:
    """Every interleaving of the fencing design at the lessons' bounds."""
    return explore(FENCING, REFERENCE_BOUNDS)


# ----- shared phrases ------------------------------------------------------------------------


def test_a_partly_understood_link_names_the_problem() -> None:
    problem = unknown_setting(["no-such-setting"], ["step"])
    assert problem is not None
    assert common.link_not_understood(problem) == (
        f"This link was partly not understood: {problem}."
    )


def test_the_set_file_label_names_the_largest_file_with_thousands_separated() -> None:
    assert "at most 262,144 bytes" in common.set_file_label(262_144)


# ----- the Compare page ----------------------------------------------------------------------


def test_the_difference_says_what_fencing_removes(
    lease_only: Exploration, fencing: Exploration
) -> None:
    diff = difference(lease_only, fencing)
    lines = compare.difference_lines(diff).split("\n")
    assert diff.disappear, "fencing removes some of the lease-only design's violations"
    assert lines[0] == f"- **Disappear** going from A to B: {', '.join(diff.disappear)}"
    assert lines[1] == "- **Appear**: none"  # fencing breaks nothing lease-only kept
    assert lines[3] == "- **Never exercised** (hold vacuously): in A P4, P5, P6; in B P5, P6"
    assert f"{lease_only.states:,} → {fencing.states:,} states" in lines[4]
    backwards = compare.difference_lines(difference(fencing, lease_only)).split("\n")
    assert backwards[0] == "- **Disappear** going from A to B: none"
    assert backwards[1] == f"- **Appear**: {', '.join(diff.disappear)}"
    strict = explore(PRESETS["fencing-strict"].design, REFERENCE_BOUNDS)
    untested = compare.difference_lines(difference(strict, lease_only)).split("\n")
    assert untested[0] == (
        "- **Disappear** going from A to B: P4 (P4 only because B never exercises it: "
        "untested, not fixed)"
    )


def test_the_incomplete_warning_follows_the_explorations(
    lease_only: Exploration, fencing: Exploration
) -> None:
    assert compare.incomplete_warning(difference(lease_only, fencing)) is None
    stopped = explore(FENCING, REFERENCE_BOUNDS, SearchOptions(max_states=50))
    assert not stopped.complete
    warning = compare.incomplete_warning(difference(lease_only, stopped))
    assert warning is not None and warning.startswith("Incomplete")


def test_the_matrix_caption_reads_a_cell_the_matrix_really_has() -> None:
    """The caption explains the marks by an example: `✘ 8` must be one of the cells."""
    matrix = verdict_matrix(REFERENCE_BOUNDS)
    cells = {compact_cell(row.exploration, name) for row in matrix.rows for name in PROPERTY_NAMES}
    caption = compare.matrix_caption(REFERENCE_BOUNDS)
    assert "✘ 8: violated, the shortest violating run has 8 steps" in caption
    assert "✘ 8" in cells
    assert {"✔", "○"} <= cells  # the other two marks it explains occur too
    assert REFERENCE_BOUNDS.in_words() in caption


# ----- the Check-my-stack page ---------------------------------------------------------------


@pytest.fixture(scope="module")
def etcd_and_sql() -> Advice:
    """The advice on an etcd and PostgreSQL stack (lease ids, a read then a separate write)."""
    found = advise(Stack.of("etcd-lease-id", "sql-select-then-update"), REFERENCE_BOUNDS)
    assert found.exploration.complete
    return found


@pytest.mark.slow
def test_a_stack_that_violates_hears_no_good_news_and_gets_fixes(etcd_and_sql: Advice) -> None:
    assert etcd_and_sql.violated
    assert stack.all_hold(etcd_and_sql) is None
    assert etcd_and_sql.fixes and advice_words.no_fix(etcd_and_sql) is None


@pytest.mark.slow
def test_a_stack_that_keeps_everything_is_told_so_with_what_was_never_tested(
    etcd_and_sql: Advice,
) -> None:
    closing = next(f for f in etcd_and_sql.fixes if not f.still_violated)
    fixed = advise(closing.stack, REFERENCE_BOUNDS)
    assert fixed.violated == ()
    good = stack.all_hold(fixed)
    assert good is not None
    assert good.startswith("P1, P2, P3, P4 and P6 hold at these bounds, with a holder that may")
    assert "P5 holds vacuously: the workers write blind" in good
    assert advice_words.no_fix(fixed) is None  # nothing to fix, so nothing is said of fixes
    cut_short = replace(fixed, exploration=replace(fixed.exploration, complete=False))
    assert stack.all_hold(cut_short) is None  # a search stopped at its budget proves nothing


@pytest.mark.slow
def test_a_fix_says_what_then_holds_what_is_untested_and_what_it_leaves(
    etcd_and_sql: Advice,
) -> None:
    for fix in etcd_and_sql.fixes:
        outcome = advice_words.fix_outcome(fix, etcd_and_sql)
        said = " ".join(outcome)
        assert (
            outcome[0]
            == f"Then {advice_words.listed(fix.holds)} hold, with a holder that may crash"
        )
        for name in fix.vacuous:
            assert f"{name} holds vacuously: " in said
        assert ("P2 stays violated" in said) == ("P2" in fix.still_violated)
        for name in set(fix.still_violated) - {"P2"}:
            assert name in said.split("still violated: ")[1]
        assert ("still violated" in said) == bool(set(fix.still_violated) - {"P2"})


@pytest.mark.slow
def test_the_gap_sentence_points_at_the_fix_that_closes_it(etcd_and_sql: Advice) -> None:
    closing = [n for n, f in enumerate(etcd_and_sql.fixes, 1) if not f.still_violated]
    assert closing
    assert advice_words.gap_sentence(etcd_and_sql).endswith(f"closes it (fix {closing[0]})")
    alone = replace(etcd_and_sql, fixes=etcd_and_sql.fixes[:1])
    assert advice_words.gap_sentence(alone).endswith("closes it")


def test_a_replayed_run_says_whether_it_still_violates(lease_only: Exploration) -> None:
    """Lease-only's P1 run no longer violates P1 under fencing; its P2 run still violates P2."""
    p1 = replay(FENCING, REFERENCE_BOUNDS, lease_only.verdicts["P1"].actions or ())
    p2 = replay(FENCING, REFERENCE_BOUNDS, lease_only.verdicts["P2"].actions or ())
    assert (
        stack.fixed_run_outcome("P1", p1)
        == "The same steps under this change no longer violates P1."
    )
    assert (
        stack.fixed_run_outcome("P2", p2) == "The same steps under this change still violates P2."
    )


# ----- the Exercises and Class pages ---------------------------------------------------------


def test_the_fix_task_says_what_the_design_keeps_today() -> None:
    today = verdicts(FENCING, REFERENCE_BOUNDS)
    assert today.complete and today.holds == ("P1", "P3", "P4")
    assert today.vacuous == ("P5", "P6")
    task = exercises.fix_task(
        "P2",
        "title",
        today.holds,
        ("token source", "what the resource checks"),
        today.untested_sentence(),
    )
    assert "Today this design keeps P1, P3, P4. P5 and P6 are never put to the test" in task
    assert task.endswith("You may change: token source, what the resource checks.")
    assert "`" not in task
    lease_only = verdicts(LEASE_ONLY, REFERENCE_BOUNDS)
    assert lease_only.holds == ()  # all it keeps, it keeps vacuously
    assert "keeps nothing." in exercises.fix_task("P1", "title", (), ("token source",))


def test_the_design_caption_names_a_preset_s_real_system_only_for_a_preset() -> None:
    preset = PRESETS["lease-only"]
    named = exercises.design_caption(preset.name, preset.mirrors, REFERENCE_BOUNDS)
    assert named.startswith(f"The design: {preset.name}, which mirrors {preset.mirrors}. The")
    custom = exercises.design_caption("Token source: key version", None, REFERENCE_BOUNDS)
    assert custom == (
        f"The design: Token source: key version. The bounds: {REFERENCE_BOUNDS.in_words()}."
    )
    assert "`" not in named + custom


def test_a_student_without_a_nickname_is_not_named() -> None:
    assert exercises.in_class("Week 3", "ada") == "You are in the class **Week 3** as ada."
    assert exercises.in_class("Week 3", "") == "You are in the class **Week 3**."


def test_a_refused_set_lists_every_problem_the_reader_found() -> None:
    with pytest.raises(ExerciseSetError) as refused:
        parse_set('title = "x"\n[[exercise]]\nid = "a"\nkind = "guess"\n', source="bad.toml")
    problems = [p.text() for p in refused.value.problems]
    assert problems
    for shown in (
        exercises.set_not_loaded("bad.toml", problems),
        classroom.set_cannot_be_used("bad.toml", problems),
    ):
        head, _, listing = shown.partition("\n\n")
        assert head.startswith("**bad.toml ")
        assert listing.split("\n") == [f"- {p}" for p in problems]


def test_the_teachers_pending_and_broken_sets_are_listed() -> None:
    assert "exercise of a.toml, b.toml can be solved" in exercises.sets_still_checked(
        ["a.toml", "b.toml"]
    )
    assert exercises.sets_unusable(["a.toml", "b.toml"]).endswith("why): a.toml, b.toml")


def test_the_class_terms_carry_the_limits_they_are_given() -> None:
    terms = classroom.class_terms(48, 60, 500, "/srv/classes")
    assert "A class lasts **48 hours**" in terms
    assert "Up to 60 students can join, each with up to 500 answers" in terms
    assert "kept in /srv/classes on this server" in terms


# ----- the Proofs and chapter pages ----------------------------------------------------------


def test_the_proof_progress_rounds_the_seconds_and_shows_the_budget() -> None:
    assert proofs.proving_progress(2.6, 20.0) == "z3 is proving… 3 s (its budget is 20 s)"
    assert proofs.proving_progress(0.2, 7.5).endswith("(its budget is 7.5 s)")


def test_the_chapter_captions_name_the_bounds_they_are_given() -> None:
    small = REFERENCE_BOUNDS.in_words()
    assert chapters.verdicts_caption(REFERENCE_BOUNDS).startswith(f"Every interleaving at {small};")
    assert f"interleaving at {small};" in chapters.lesson_table_caption(REFERENCE_BOUNDS)
