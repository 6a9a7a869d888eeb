"""AppTest: the proofs page with the real z3 prover."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from model.design import REFERENCE_BOUNDS
from model.presets import PRESETS
from tests.app.helpers import all_text, page_alone, switch_to

PAGE = "proofs"


def open_proofs() -> AppTest:
    """Run the proofs page; it must never raise."""
    at = page_alone(PAGE, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_page_shows_verdicts_invariants_and_animated_counterexamples() -> None:
    """Fencing: P1 proved with its invariant shown, P2's z3 run stepped to its end."""
    at = open_proofs()
    assert "Switch on to run z3" in all_text(at)
    at.toggle(key="proof-run").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    text = all_text(at)
    assert "P1, monotonic acceptance: ✔ proved for every horizon" in text
    assert "P2, no write outside its lease: ✘ violated (5 steps)" in text
    assert any("last ≤ hwm" in c.value for c in at.code)
    assert "Step 5 of 5" in text  # a counterexample opens on its violating step
    at.button(key="proof-P2-first").click().run()
    assert "Step 0 of 5" in all_text(at)
    at.button(key="proof-P2-last").click().run()
    assert "Step 5 of 5" in all_text(at)


def test_a_design_without_fencing_is_violated_not_proved() -> None:
    """Lease-only: P1 is violated by a run of 8 steps, never reported as proved."""
    at = open_proofs()
    at.selectbox(key="proof-preset").set_value("lease-only").run()
    at.toggle(key="proof-run").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    text = all_text(at)
    assert "P1, monotonic acceptance: ✘ violated" in text
    assert "P1, monotonic acceptance: ✔ proved" not in text


def test_the_link_reopens_the_proof_with_its_results() -> None:
    """Design, bounds and the run switch are in the link: a fresh page opened from it proves
    the same design at the same bounds straight away (within the page's budget)."""
    at = open_proofs()
    at.selectbox(key="proof-preset").set_value("random-token")
    at.number_input(key="proof-horizon").set_value(3).run()
    at.toggle(key="proof-run").set_value(True).run()
    link = {key: at.query_params[key] for key in at.query_params}
    assert link["preset"] == "random-token" and link["run"] == "1" and link["horizon"] == "3"
    fresh = page_alone(PAGE, default_timeout=120)
    for key, value in link.items():
        fresh.query_params[key] = value
    fresh.run()
    assert not fresh.exception, [e.value for e in fresh.exception]
    assert fresh.toggle(key="proof-run").value is True
    assert all_text(fresh) == all_text(at)
    # Random tokens: nothing is "proved" from a model that never grants.
    assert "✔ proved" not in all_text(fresh)
    assert "P5, no lost update: ○ holds vacuously" in all_text(fresh)


def test_a_link_too_big_to_explore_gives_a_message_not_a_traceback() -> None:
    """Lease-only at W4 L4 T16 G5 K2: the proof runs within its budget and says what it did."""
    at = page_alone(PAGE, default_timeout=120)
    for key, value in {
        "preset": "lease-only",
        "workers": "4",
        "lease": "4",
        "horizon": "16",
        "grants": "5",
        "writes": "2",
        "run": "1",
    }.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "P1, monotonic acceptance: ✘ violated" in all_text(at)


def test_a_custom_design_from_the_link_shows_its_prove_command() -> None:
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP

    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    switch_to(at, "proofs")
    at.query_params["token"] = "random"
    at.query_params["receiver"] = "lease-aware"
    at.run()
    assert not at.exception
    assert at.selectbox(key="proof-preset").value == "(custom)"
    assert any(
        c.value.startswith("fencing prove --token random --receiver lease-aware") for c in at.code
    )


def open_proofs_at(link: dict[str, str]) -> AppTest:
    """The proofs page opened from a link; it must never raise."""
    at = page_alone(PAGE, default_timeout=120)
    for key, value in link.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_page_starts_at_the_reference_bounds() -> None:
    """Proofs start where Compare, the chapters and `fencing prove` do."""
    at = open_proofs()
    shown = {
        name: at.number_input(key=f"proof-{name}").value for name in REFERENCE_BOUNDS.to_dict()
    }
    assert shown == REFERENCE_BOUNDS.to_dict()


def test_a_presets_lesson_under_the_table_says_where_it_shows() -> None:
    """fencing-strict breaks the holder's second write (P4). With one write per grant z3 proves
    P4, and the lesson under the table says it does not show here and where it does; at the
    starting bounds z3 finds the 5-step violation and the lesson stands alone."""
    lesson = PRESETS["fencing-strict"].as_lesson()
    small = open_proofs_at(
        {"preset": "fencing-strict", "horizon": "4", "grants": "2", "writes": "1", "run": "1"}
    )
    text = all_text(small)
    assert "P4, no false rejection: ✔ proved" in text
    assert f"Lesson of fencing-strict: {lesson.text}" in text
    assert (
        "At these bounds the lesson does not show (P4 proved for every horizon): it appears at "
        f"{REFERENCE_BOUNDS.in_words()}."
    ) in text
    default = open_proofs_at({"preset": "fencing-strict", "run": "1"})
    text = all_text(default)
    assert "P4, no false rejection: ✘ violated (5 steps)" in text
    assert f"Lesson of fencing-strict: {lesson.text}" in text
    assert "does not show" not in text


def test_a_custom_design_has_no_lesson_under_its_table() -> None:
    at = open_proofs_at({"token": "random", "receiver": "lease-aware", "horizon": "3", "run": "1"})
    assert at.table[0].value.columns[1] == "z3 says"
    assert "P1, monotonic acceptance: " in all_text(at)
    assert "Lesson of" not in all_text(at)
