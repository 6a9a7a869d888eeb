"""AppTest: the scheduler playground (buttons, URL, statuses, undo/reset, finish, bad links,
a busy server)."""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.helpers import all_text, page_alone
from tests.slots import all_slots_taken

PAGE = "playground"


def open_playground(**params: str) -> AppTest:
    """Run the playground page with URL parameters; it must never raise."""
    at = page_alone(PAGE, default_timeout=60)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def param(at: AppTest, name: str) -> str:
    """A URL parameter's value as text."""
    value = at.query_params.get(name, "")
    return value[-1] if isinstance(value, list) else str(value)


def test_clicking_actions_plays_a_violation_into_the_url() -> None:
    at = open_playground()
    labels = [b.label for b in at.button]
    assert "Acquire W1" in labels and "Tick (time passes)" in labels
    for code in ("A1", "S1", "T", "T", "D1"):
        at.button(key=f"play-{code}").click().run()
    assert param(at, "a") == "A1.S1.T.T.D1"
    assert param(at, "d") == "lease-only"
    text = all_text(at)
    assert "P2 violated at step 5" in text and "lease expired at t=2" in text
    assert "✔ P1 holds so far" in text
    assert len(at.get("plotly_chart")) == 1


def test_undo_and_reset() -> None:
    at = open_playground(a="A1.S1.T")
    at.button(key="playground-undo").click().run()
    assert param(at, "a") == "A1.S1"
    at.button(key="playground-reset").click().run()
    assert param(at, "a") == ""
    assert "Your move** (step 1)" in all_text(at)


def test_finish_appends_the_shortest_violation() -> None:
    at = open_playground(a="A1")
    at.selectbox(key="playground-finish-prop").set_value("P1").run()
    at.button(key="playground-finish").click().run()
    assert param(at, "a").startswith("A1.")
    text = all_text(at)
    assert (
        "P1 violated at step" in text and "Added the shortest way to violate P1 from here" in text
    )


def test_a_bad_link_shows_an_error_not_a_traceback() -> None:
    at = open_playground(a="A1.D1")
    assert "step 2: Deliver(W1) is not enabled" in all_text(at)
    at = open_playground(a="__import__('os').system('x')")
    assert "not an action code" in all_text(at)
    at.button(key="playground-fresh").click().run()
    assert param(at, "a") == "" and "Acquire W1" in [b.label for b in at.button]


def test_bounds_beyond_the_limits_are_refused_with_the_limit() -> None:
    at = open_playground(b="9.2.6.3.2")
    assert "workers in the link must be a whole number from 1 to 5" in all_text(at)
    at = open_playground(d="teapot")
    assert "neither a preset nor a list of options" in all_text(at)


def test_a_custom_design_from_the_link_and_the_form() -> None:
    at = open_playground(d="receiver:none~worker_check:1", b="2.2.4.2.1")
    assert (
        "What the resource checks: nothing (plain store); Worker checks its own lease: yes"
        in all_text(at)
    )
    at.selectbox(key="play-preset").set_value("volatile-hwm")
    at.number_input(key="play-horizon").set_value(5)
    at.button[0].click().run()
    assert param(at, "d") == "volatile-hwm" and param(at, "b") == "2.2.5.2.1"
    assert "Restart storage" in [b.label for b in at.button]


def test_with_every_slot_taken_finish_says_the_server_is_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at = open_playground(a="A1")
    with all_slots_taken(monkeypatch):
        at.button(key="playground-finish").click().run()
        assert not at.exception
        busy = " ".join(w.value for w in at.warning)
        assert "busy" in busy and "the search for the shortest violation was not started" in busy
        assert param(at, "a") == "A1"
    at.button(key="playground-finish").click().run()
    assert param(at, "a").startswith("A1.") and "Added the shortest way" in all_text(at)


def test_an_option_change_makes_the_design_custom_and_starts_it() -> None:
    """Changing an option while a preset is chosen is never ignored: the chooser turns to the
    preset those options make, or to the custom entry, and the new run plays that design."""
    at = open_playground(d="lease-only")
    assert at.selectbox(key="play-preset").value == "lease-only"
    at.checkbox(key="play-opt-worker_check").check().run()
    assert at.selectbox(key="play-preset").value == "worker-checks-lease"
    at.selectbox(key="play-opt-receiver").set_value("equality").run()
    assert at.selectbox(key="play-preset").value == "(custom options)"
    at.button(key="playground-start").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert param(at, "d") == "receiver:equality~worker_check:1"
    assert at.selectbox(key="play-preset").value == "(custom options)"
    at.selectbox(key="play-opt-receiver").set_value("fenced").run()
    at.checkbox(key="play-opt-worker_check").uncheck().run()
    assert at.selectbox(key="play-preset").value == "fencing"
    at.button(key="playground-start").click().run()
    assert param(at, "d") == "fencing"


def test_choosing_a_preset_shows_its_options() -> None:
    at = open_playground(d="lease-only")
    at.selectbox(key="play-preset").set_value("volatile-hwm").run()
    assert at.selectbox(key="play-opt-hwm").value == "volatile"
    assert at.number_input(key="play-opt-storage_restarts").value == 1


def test_the_share_box_holds_a_full_link(monkeypatch: pytest.MonkeyPatch) -> None:
    """The link to share has the scheme, host and path the browser shows, and reopens the run."""
    from webapp.screens import playground_page

    monkeypatch.setattr(
        playground_page, "page_url", lambda: "https://lab.example:8501/playground?d=x"
    )
    at = open_playground(a="A1.S1")
    link = next(str(c.value) for c in at.code if "?" in str(c.value))
    assert link.startswith("https://lab.example:8501/playground?d=lease-only&b=")
    assert link.endswith("&a=A1.S1")
    reopened = open_playground(**dict(parse_qsl(link.split("?", 1)[1])))
    assert param(reopened, "a") == "A1.S1" and param(reopened, "d") == "lease-only"


def test_without_a_known_address_the_share_box_holds_the_pages_path() -> None:
    at = open_playground(a="A1")
    assert any(str(c.value).startswith("/playground?d=lease-only&b=") for c in at.code)


def test_a_run_opened_at_a_step_can_be_stepped_and_changed_from_there() -> None:
    """`at=2` stands at step 2 of a five-step run: the state and the moves are those after
    step 2, Back and Next move along the run, and a move taken there replaces the steps
    after it; a bad `at` is said and the run's end is shown."""
    at = open_playground(a="A1.S1.T.T.D1", at="2")
    text = all_text(at)
    assert "Step 2 of 5" in text and "Your move** (step 3)" in text
    assert "a move here replaces the 3 steps after this one" in text
    assert "P2 violated at step" not in text  # the violation is at step 5, after where it stands
    at.button(key="playground-next").click().run()
    assert param(at, "at") == "3" and "Step 3 of 5" in all_text(at)
    at.button(key="playground-back").click().run()
    at.button(key="playground-back").click().run()
    assert param(at, "at") == "1"
    at.button(key="playground-last").click().run()
    assert param(at, "at") == "" and "P2 violated at step 5" in all_text(at)
    at.button(key="playground-first").click().run()
    assert param(at, "at") == "0"
    at.button(key="play-A2").click().run()  # from the start: W2 takes the lock instead
    assert param(at, "a") == "A2" and param(at, "at") == ""
    bad = open_playground(a="A1.S1", at="9")
    assert "at in the link must be a whole number from 0 to 2" in all_text(bad)
    assert "Step 2 of 2" in all_text(bad)


def test_the_trace_uploader_sits_with_the_design_controls() -> None:
    at = open_playground()
    (form,) = [e for e in at.expander if e.label == "Design and bounds"]
    assert form.get("file_uploader") or any(
        child.type == "file_uploader" for child in form.children.values()
    )
