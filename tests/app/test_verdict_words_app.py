"""Every page and output that shows a verdict says it in one vocabulary, and never says a
property nothing exercised simply "holds".

The walk takes the lease-only design (its receiver checks nothing, its workers write blind,
nothing crashes: P4, P5 and P6 are never put to the test) through every surface: the
command line's check, matrix, presets and export (text and JSON), then the Explore,
Compare, chapter, State space, Proofs, scheduler, Check my stack, Exercises and Class pages.
Each must say of each never-exercised property that it holds vacuously and why, and no
sentence, cell or label may say it holds plainly. The checker is shown to catch the
sentences these surfaces used to say.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from classroom import class_store
from model.check.explorer import explore
from model.claims import citations
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.presets import PRESETS, PRESETS_LIST
from model.properties import BY_NAME
from model.verdicts import Status
from tests.app.helpers import all_text, page_alone, shown, verdict_cells
from tests.cli_helpers import run
from webapp.show.chapters import CHAPTERS, Chapter

Opener = Callable[..., AppTest]
LEASE_ONLY = PRESETS["lease-only"].design
SMALL = Bounds(workers=2, lease=2, horizon=4, grants=2, writes=1)
HOLDS = re.compile(r"✔|\bholds?\b|\bkeeps?\b")
SAID_VACUOUS = re.compile(r"vacuous|never|not put to the test|untested")
SEGMENT = re.compile(r"[\n;·|]|(?<=[.!?])\s")


def vacuous_at(design_name: str, bounds: Bounds = REFERENCE_BOUNDS) -> dict[str, str]:
    """The properties a preset never exercises at the bounds, each with why."""
    design = PRESETS[design_name].design
    found = explore(design, bounds)
    return {
        name: BY_NAME[name].vacuity(design)
        for name, verdict in found.verdicts.items()
        if verdict.status is Status.VACUOUS
    }


def plain_holds(text: str, vacuous: Iterable[str]) -> list[str]:
    """Every sentence, cell or line of `text` that says a never-exercised property holds
    without saying that it holds only vacuously (never exercised)."""
    names = tuple(vacuous)
    found = []
    for segment in SEGMENT.split(text):
        if (
            any(re.search(rf"\b{name}\b", segment) for name in names)
            and HOLDS.search(segment)
            and not SAID_VACUOUS.search(segment)
        ):
            found.append(segment.strip())
    return found


def said_vacuous(cell: str, why: str) -> bool:
    """Whether a verdict cell says holds vacuously, never exercised, and why."""
    return cell.startswith("○ holds vacuously, never exercised: ") and cell.endswith(why)


def test_the_checker_catches_what_these_surfaces_used_to_say() -> None:
    vacuous = vacuous_at("lease-only")
    assert set(vacuous) == {"P4", "P5", "P6"}
    old = [
        "P4 holds within these bounds: no state has a violating step leaving it.",
        "Right: the design keeps P4, P5, P6.",
        "P5 ✔ holds",
        "✔ P4 holds so far (no false rejection)",
        "Every interleaving: (P1, P2, P3, P4 hold).",
    ]
    assert [plain_holds(sentence, vacuous) for sentence in old] == [[s] for s in old]
    now = "○ P4 never put to the test in this design (no false rejection): it never rejects"
    assert plain_holds(now, vacuous) == [] and plain_holds("✔ P1 holds", vacuous) == []


# ----- the command line ------------------------------------------------------------------------


def test_check_says_vacuous_with_why_in_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    vacuous = vacuous_at("lease-only")
    _, out, _ = run(["check", "--preset", "lease-only"], capsys)
    for name, why in vacuous.items():
        (line,) = [ln for ln in out.splitlines() if ln.strip().startswith(f"{name} ")]
        assert line.endswith(f"holds vacuously, never exercised: {why}")
    assert plain_holds(out, vacuous) == []
    _, out, _ = run(["check", "--preset", "lease-only", "--json"], capsys)
    for name, verdict in json.loads(out)["properties"].items():
        assert verdict.get("never_exercised") == vacuous.get(name)
        assert (verdict["status"] == "vacuous") == (name in vacuous)


def test_matrix_notes_say_why_each_vacuous_cell_was_never_exercised(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = run(["matrix"], capsys)
    notes = re.sub(r"\n {4}", " ", out.split(" presets in ")[1])  # wrapped lines joined
    _, data, _ = run(["matrix", "--json"], capsys)
    for row in json.loads(data)["rows"]:
        for name, verdict in row["properties"].items():
            if verdict["status"] != "vacuous":
                assert "never_exercised" not in verdict
                continue
            why = verdict["never_exercised"]
            (note,) = [
                line
                for line in notes.splitlines()
                if line.startswith(f"{name} holds vacuously, never exercised in ")
                and line.endswith(f": {why}")
            ]
            assert re.search(rf"(in |, ){re.escape(row['preset'])}(,|:)", note)


def test_presets_never_say_a_vacuous_claim_holds(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["presets"], capsys)
    for preset in PRESETS_LIST:
        vacuous = {c.prop for c in preset.claims if c.status is Status.VACUOUS}
        (line,) = [ln for ln in out.splitlines() if ln.startswith(f"{preset.name} ")]
        assert plain_holds(line, vacuous) == [], preset.name
    _, data, _ = run(["presets", "--json"], capsys)
    for entry in json.loads(data):
        for claim in entry["claims"]:
            assert claim["status"] in ("holds", "violated", "vacuous")
            assert ("never_exercised" in claim) == (claim["status"] == "vacuous")


def test_export_of_a_vacuous_property_says_why_there_is_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(["export", "itf", "--preset", "lease-only", "--property", "P6"], capsys)
    assert code != 0
    assert "holds vacuously, never exercised: nothing in this design ever crashes" in err


# ----- the pages ---------------------------------------------------------------------------------


def _cells_say_vacuous(cells: Mapping[str, str], vacuous: Mapping[str, str]) -> None:
    """Each vacuous property's cell says so with why; no other cell says vacuous."""
    for name, cell in cells.items():
        if name in vacuous:
            assert said_vacuous(cell, vacuous[name]), (name, cell)
        else:
            assert "vacuous" not in cell, (name, cell)


def test_explore_and_check_my_stack(open_page: Opener) -> None:
    vacuous = vacuous_at("lease-only")
    at = open_page("explore", receiver="none", run="1")
    _cells_say_vacuous(verdict_cells(at, "verdict"), vacuous)
    assert plain_holds(all_text(at), vacuous) == []
    stack = open_page("stack")
    found = explore(stack_design(stack), REFERENCE_BOUNDS)
    never = {
        n: BY_NAME[n].vacuity(found.design)
        for n, v in found.verdicts.items()
        if v.status is Status.VACUOUS
    }
    assert never  # the default stack writes blind: P5 is never put to the test
    _cells_say_vacuous(verdict_cells(stack, "your stack"), never)
    assert plain_holds(all_text(stack), never) == []


def stack_design(at: AppTest) -> Design:
    """The design of the stack the page shows (from its link)."""
    from advise.catalogue import Stack

    return Stack.of(
        str(at.query_params["token"]),
        str(at.query_params["resource"]),
        [p for p in str(at.query_params.get("does", "")).split(",") if p],
    ).design()


def test_compare_matrix_and_with_versus_without(open_page: Opener) -> None:
    at = open_page("compare")
    matrix = at.dataframe[0].value.set_index("design")
    caption = "\n".join(shown(str(c.value)) for c in at.caption)
    for preset in PRESETS_LIST:
        for name, why in vacuous_at(preset.name).items():
            assert matrix.loc[preset.name, name] == "○"
            assert re.search(
                rf"○ {name} holds vacuously, never exercised in [^\n]*\b{re.escape(preset.name)}"
                rf"\b[^\n]*: {re.escape(why)}",
                caption,
            ), (preset.name, name)
    a, b = vacuous_at("lease-only"), vacuous_at("fencing")
    _cells_say_vacuous(verdict_cells(at, "A: lease-only", index=-1), a)
    _cells_say_vacuous(verdict_cells(at, "B: fencing", index=-1), b)
    assert (
        f"**Never exercised** (hold vacuously): in A {', '.join(a)}; in B {', '.join(b)}"
        in all_text(at)
    )


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: str(c.number))
def test_chapters_tables_and_takeaways(open_page: Opener, chapter: Chapter) -> None:
    at = open_page(f"chapter-{chapter.number}")
    table = at.table[-2 if chapter.number == 0 else -1].value.set_index("design")
    for preset in chapter.presets:
        vacuous = vacuous_at(preset)
        for name in chapter.properties:
            cell = table.loc[preset, name]
            assert said_vacuous(cell, vacuous[name]) if name in vacuous else "vacuous" not in cell
    for preset, name in citations(chapter.takeaway_template):
        if name in vacuous_at(preset):
            assert "vacuously" in chapter.takeaway
    if chapter.number == 0:
        lessons = at.table[-1].value
        for row in lessons.to_dict("records"):
            vacuous = vacuous_at(str(row["design"]).split(":")[0])
            assert plain_holds(" · ".join(map(str, row.values())), vacuous) == []


def test_state_space_says_a_never_exercised_property_holds_vacuously(open_page: Opener) -> None:
    at = open_page("state-space")
    at.selectbox(key="space-prop").set_value("P6").run()
    vacuous = vacuous_at("lease-only", SMALL)
    text = all_text(at)
    assert f"P6 holds vacuously, never exercised: {vacuous['P6']}" in text
    assert plain_holds(text, vacuous) == []


def test_proofs_say_a_never_exercised_property_holds_vacuously() -> None:
    at = page_alone("proofs", default_timeout=120)
    for name, value in {
        "preset": "lease-only",
        "horizon": "4",
        "grants": "2",
        "writes": "1",
        "run": "1",
    }.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    vacuous = vacuous_at("lease-only", SMALL)
    table = at.table[0].value
    cells = {
        str(p).split(",")[0]: str(c)
        for p, c in zip(table["property"], table["z3 says"], strict=True)
    }
    _cells_say_vacuous(cells, vacuous)
    text = all_text(at)
    assert plain_holds(text, vacuous) == []
    for name, why in vacuous.items():
        assert f"Never put to the test: {why}." in text, name


def test_the_scheduler_says_which_properties_this_run_never_put_to_the_test() -> None:
    at = page_alone("playground", default_timeout=60)
    at.query_params["a"] = "A1.S1.T.T.D1"
    at.run()
    vacuous = vacuous_at("lease-only")
    text = all_text(at)
    for name, why in vacuous.items():
        assert f"○ {name} never put to the test in this design" in text and why in text
    assert plain_holds(text, vacuous) == []


def test_exercises_feedback_and_the_teachers_reveal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A right prediction says which properties are never put to the test and why; the
    teacher's reveal marks them as holding vacuously; neither says they simply hold."""
    from tests.app.test_class_app import CLASS_PAGE, create_class, join

    monkeypatch.setenv(class_store.FOLDER_ENV, str(tmp_path / "classes"))
    vacuous = vacuous_at("lease-only")
    found = explore(LEASE_ONLY, REFERENCE_BOUNDS)
    class_id, key = create_class()
    ada = join(class_id, "Ada")
    for name, verdict in found.verdicts.items():
        if verdict.status is Status.HOLDS:
            ada.checkbox(key=f"ex-lease-predict-{name}").check()
    ada.run()
    ada.button(key="ex-lease-predict-check").click().run()
    (right,) = [shown(str(s.value)) for s in ada.success]
    assert right.startswith("Right") and plain_holds(right, vacuous) == []
    assert all(why in right for why in vacuous.values())
    teacher = run_page(CLASS_PAGE, {"class": class_id, "key": key})
    teacher.toggle(key="class-reveal-lease-predict").set_value(True).run()
    spec = json.loads(teacher.get("plotly_chart")[0].proto.spec)
    labels = spec["data"][0]["x"]
    assert [label for label in labels if label.split()[0] in vacuous] == [
        f"{name} ○ holds vacuously" for name in vacuous
    ]
    assert plain_holds("\n".join(labels), vacuous) == []


def run_page(page: str, params: Mapping[str, str]) -> AppTest:
    """A page by itself with its link, failing on any exception."""
    at = page_alone(page, default_timeout=120)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at
