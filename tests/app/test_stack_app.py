"""AppTest: the Check my stack page answers from the model, keeps the stack in its link."""

from __future__ import annotations

from collections.abc import Callable

from streamlit.testing.v1 import AppTest

from model.advice import advise
from model.design import REFERENCE_BOUNDS
from model.stack import Stack
from tests.app.helpers import all_text

Opener = Callable[..., AppTest]


def test_the_default_stack_shows_verdicts_story_fixes_and_commands(open_page: Opener) -> None:
    at = open_page("stack")
    stack = Stack.of("etcd-lease-id", "sql-conditional-update", ["worker-checks-lease"])
    advice = advise(stack, REFERENCE_BOUNDS)
    text = all_text(at)
    table = at.dataframe[0].value
    for name in advice.exploration.verdicts:
        assert (table[name].iloc[0].startswith("✘")) == (name in advice.violated)
    assert advice.stories[advice.violated[0]][0] in text
    assert advice.fixes[0].changes[0].build() in text
    codes = "\n".join(str(c.value) for c in at.code)
    assert "fencing advise --token etcd-lease-id --resource sql-conditional-update" in codes
    assert "fencing check --token random --worker-check" in codes
    assert at.query_params["token"] == "etcd-lease-id"


def test_a_link_opens_its_stack(open_page: Opener) -> None:
    at = open_page("stack", token="etcd-create-revision", resource="etcd-txn-on-lock-key", does="")
    assert "Every property holds at these bounds" in all_text(at)
    assert not at.code or "lease-aware" in "\n".join(str(c.value) for c in at.code)


def test_a_bad_link_is_named_and_the_default_stack_shown(open_page: Opener) -> None:
    at = open_page("stack", token="www.evil.example", resource="plain-write")
    text = all_text(at)
    assert "Part of the link was not understood" in text
    assert not any("](" in str(m.value) for m in at.markdown)


def test_a_stack_that_does_not_fit_says_why(open_page: Opener) -> None:
    at = open_page("stack", token="etcd-version", resource="plain-write", does="fence-in-memory")
    assert any("does not fit together" in str(e.value) for e in at.error)


def test_changing_a_part_changes_the_link_and_the_answer(open_page: Opener) -> None:
    at = open_page("stack")
    at.selectbox[0].set_value("etcd-create-revision").run()
    assert not at.exception
    assert at.query_params["token"] == "etcd-create-revision"
    table = at.dataframe[0].value
    fresh = advise(
        Stack.of("etcd-create-revision", "sql-conditional-update", ["worker-checks-lease"]),
        REFERENCE_BOUNDS,
    )
    assert [n for n in fresh.exploration.verdicts if table[n].iloc[0].startswith("✘")] == list(
        fresh.violated
    )


def test_the_run_opens_on_the_step_that_breaks_the_property(open_page: Opener) -> None:
    at = open_page("stack")
    stack = Stack.of("etcd-lease-id", "sql-conditional-update", ["worker-checks-lease"])
    advice = advise(stack, REFERENCE_BOUNDS)
    first = advice.violated[0]
    assert at.query_params["step"] == str(len(advice.traces[first].steps))
    other = advice.violated[1]
    at.radio[0].set_value(other).run()
    assert at.query_params["prop"] == other
    assert at.query_params["step"] == str(len(advice.traces[other].steps))
