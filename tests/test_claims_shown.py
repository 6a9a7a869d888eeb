"""Every verdict the app states in words agrees with the verdicts shown beside it.

Walks the preset captions (at the lesson's bounds and at the Explore page's defaults),
the chapter takeaways and the default exercise set's hints.
"""

from __future__ import annotations

import re
import tomllib

import pytest

from classroom.sets import DEFAULT_SET, load_set
from model.check.explorer import explore
from model.check.search import SearchOptions
from model.claims import citations, lesson_caption
from model.design import REFERENCE_BOUNDS, Bounds
from model.presets import PRESETS, PRESETS_LIST, Preset

NOTE = re.compile(r"\((P\d(?:, P\d)*) (fails?|holds?)\)")


def notes(text: str) -> dict[str, bool]:
    """The verdict notes in a text: property to whether it is said to fail."""
    found = {}
    for names, verb in NOTE.findall(text):
        for name in names.split(", "):
            found[name] = verb.startswith("fail")
    return found


@pytest.mark.parametrize("preset", PRESETS_LIST, ids=lambda p: p.name)
@pytest.mark.parametrize("bounds", [REFERENCE_BOUNDS, Bounds()], ids=["lesson", "explore"])
def test_a_caption_never_contradicts_the_table_beside_it(preset: Preset, bounds: Bounds) -> None:
    """Either every note in the caption agrees with the verdicts at the shown bounds, or the
    caption says the lesson does not show here and names the bounds where it does."""
    verdicts = explore(preset.design, bounds).verdicts
    caption = lesson_caption(preset.as_lesson(), bounds, verdicts)
    lesson_part = caption.split(" At these bounds")[0]
    wrong = [p for p, fails in notes(lesson_part).items() if verdicts[p].violated != fails]
    if wrong:
        assert "the lesson does not show" in caption
        assert REFERENCE_BOUNDS.in_words() in caption
        assert all(name in caption.split("does not show")[1] for name in wrong)
    else:
        assert "does not show" not in caption


def test_fencing_strict_at_the_explore_defaults_says_where_its_lesson_shows() -> None:
    """With one write per grant the holder never writes twice, so `>` refuses nobody."""
    bounds = Bounds()
    caption = lesson_caption(
        PRESETS["fencing-strict"].as_lesson(),
        bounds,
        explore(PRESETS["fencing-strict"].design, bounds).verdicts,
    )
    assert "(P4 fails)" in caption
    assert "At these bounds the lesson does not show (P4 holds)" in caption


def test_default_exercise_hints_cite_claims_at_the_exercise_bounds() -> None:
    """Every verdict a hint states is a citation of a preset claim checked at the bounds the
    exercise is explored at, and no hint states a verdict by hand."""
    raw = tomllib.loads(DEFAULT_SET.read_text())["exercise"]
    loaded = load_set(DEFAULT_SET)
    for entry, exercise in zip(raw, loaded.exercises, strict=True):
        for template in entry.get("hints", []):
            assert not NOTE.search(template), f"{exercise.id}: a verdict written by hand"
            for preset_name, prop in citations(template):
                claim = next(c for c in PRESETS[preset_name].claims if c.prop == prop)
                assert claim.bounds == exercise.bounds
                verdict = explore(PRESETS[preset_name].design, exercise.bounds).verdicts[prop]
                assert claim.matches(verdict), (exercise.id, preset_name, prop)


SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)


def test_a_finished_exploration_that_agrees_says_the_same_verdicts_hold() -> None:
    lesson = PRESETS["fencing"].as_lesson()
    exploration = explore(PRESETS["fencing"].design, SMALL)
    assert exploration.complete
    caption = lesson_caption(lesson, SMALL, exploration.verdicts)
    assert caption.startswith(lesson.text)
    assert "The same verdicts hold at these bounds" in caption
    assert REFERENCE_BOUNDS.in_words() in caption


def test_an_unfinished_exploration_never_says_the_same_verdicts_hold() -> None:
    """Stopped by its budget, the search knows nothing of the properties it saw no violation
    of: the caption says which ones it could not decide, never that they agree."""
    lesson = PRESETS["fencing"].as_lesson()
    exploration = explore(PRESETS["fencing"].design, SMALL, SearchOptions(max_states=20))
    assert not exploration.complete
    undecided = [p for p in ("P1", "P3", "P4") if exploration.verdicts[p].holds is None]
    assert undecided
    caption = lesson_caption(lesson, SMALL, exploration.verdicts)
    assert "The same verdicts hold" not in caption
    assert "stopped before it could say whether" in caption
    assert all(name in caption.split("could say whether")[1] for name in undecided)
    assert REFERENCE_BOUNDS.in_words() in caption


def test_before_any_exploration_the_caption_asks_for_one() -> None:
    caption = lesson_caption(PRESETS["fencing"].as_lesson(), SMALL, None)
    assert "run the explorer to see them at these bounds" in caption
    assert "The same verdicts hold" not in caption


def test_no_chapter_text_states_a_verdict_by_hand() -> None:
    """A chapter's question, run labels and captions tell the story; its verdicts are in the
    takeaway's citations (checked against the explorer) and the runs' own summaries."""
    from webapp.show.chapters import CHAPTERS

    for chapter in CHAPTERS:
        texts = [chapter.question, chapter.title, chapter.takeaway_template]
        texts += [text for spec in chapter.runs for text in (spec.label, spec.caption)]
        for text in texts:
            assert not NOTE.search(text), f"chapter {chapter.number}: a verdict written by hand"


def test_the_lease_chapter_takeaway_cites_claims_that_hold_at_the_table_bounds() -> None:
    """Chapter 0's takeaway sentences state P1, P2, P3 and P6 for its three designs, each a
    preset claim that the explorer confirms at the bounds of the table shown beside it."""
    from webapp.show.chapters import BY_NUMBER

    chapter = BY_NUMBER[0]
    cited = citations(chapter.takeaway_template)
    assert {name for name, _ in cited} == set(chapter.presets)
    assert {prop for _, prop in cited} == {"P1", "P2", "P3", "P6"}
    for preset_name, prop in cited:
        claim = next(c for c in PRESETS[preset_name].claims if c.prop == prop)
        assert claim.bounds == REFERENCE_BOUNDS
        verdict = explore(PRESETS[preset_name].design, REFERENCE_BOUNDS).verdicts[prop]
        assert claim.matches(verdict), (preset_name, prop)
