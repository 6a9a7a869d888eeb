"""AppTest: the Check my stack page answers from the model, keeps the stack in its link, and
lists exactly the fixes `fencing advise` prints."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from advise.advice import advise
from advise.catalogue import BY_ID, EXAMPLES, Example, Stack
from model.design import REFERENCE_BOUNDS
from tests.app.helpers import all_text, shown, verdict_cells
from tests.cli_helpers import run
from webapp.content import stack as words

Opener = Callable[..., AppTest]


def token_choice(at: AppTest) -> Any:
    """The dropdown of the stack's token."""
    return next(box for box in at.selectbox if box.label == words.TOKEN_CHOICE)


def _link(example: Example) -> dict[str, str]:
    """The page's link parameters for an example stack."""
    return {
        "token": example.token,
        "resource": example.resource,
        "does": ",".join(example.practices),
    }


def test_the_default_stack_shows_verdicts_story_fixes_and_commands(open_page: Opener) -> None:
    at = open_page("stack")
    stack = Stack.of("etcd-lease-id", "sql-conditional-update")
    advice = advise(stack, REFERENCE_BOUNDS)
    text = all_text(at)
    table = verdict_cells(at, "your stack")
    for name, verdict in advice.exploration.verdicts.items():
        assert (table[name].startswith("✘")) == (name in advice.violated)
        assert table[name].startswith("○ holds vacuously, never exercised: ") == (
            str(verdict.status) == "vacuous"
        )
    assert advice.stories[advice.violated[0]][0] in text
    assert advice.fixes[0].changes[0].build() in text
    codes = "\n".join(str(c.value) for c in at.code)
    assert "fencing advise --token etcd-lease-id --resource sql-conditional-update" in codes
    assert "fencing check --token random --crashes 1" in codes
    assert at.query_params["token"] == "etcd-lease-id"
    assert "workers check their own lease" not in " ".join(map(str, at.multiselect[0].value))


def test_a_link_opens_its_stack(open_page: Opener) -> None:
    at = open_page("stack", token="etcd-create-revision", resource="etcd-txn-on-lock-key", does="")
    text = all_text(at)
    assert "P1, P2, P3, P4 and P6 hold at these bounds, with a holder that may crash" in text
    assert "P5 holds vacuously" in text


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
    token_choice(at).set_value("etcd-create-revision").run()
    assert not at.exception
    assert at.query_params["token"] == "etcd-create-revision"
    table = verdict_cells(at, "your stack")
    fresh = advise(Stack.of("etcd-create-revision", "sql-conditional-update"), REFERENCE_BOUNDS)
    assert [n for n in fresh.exploration.verdicts if table[n].startswith("✘")] == list(
        fresh.violated
    )


def test_the_run_opens_on_the_step_that_breaks_the_property(open_page: Opener) -> None:
    at = open_page("stack")
    stack = Stack.of("etcd-lease-id", "sql-conditional-update")
    advice = advise(stack, REFERENCE_BOUNDS)
    first = advice.violated[0]
    assert at.query_params["step"] == str(len(advice.traces[first].steps))
    other = advice.violated[1]
    at.radio[0].set_value(other).run()
    assert at.query_params["prop"] == other
    assert at.query_params["step"] == str(len(advice.traces[other].steps))


def _cli_fix_lines(example: Example, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The headings, changes and outcome sentences of the fixes `fencing advise` prints."""
    args = ["advise", "--token", example.token, "--resource", example.resource]
    if example.practices:
        args += ["--also", *example.practices]  # any practice is taken under either flag
    code, out, _ = run(args, capsys)
    assert code == 0
    section = out.split("What to change, best first:")[1].split("\n\n")[0]
    lines = []
    for line in section.splitlines():
        if re.match(r"^  \d+\. ", line):
            lines.append(line.strip())
        elif line.startswith("     - "):
            lines.append(line[len("     - ") :])
        elif line.startswith("     ") and not line.startswith(("      ", "     check it:")):
            lines.append(line.strip())
    return lines


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=[e.title for e in EXAMPLES])
def test_the_page_lists_exactly_the_fixes_the_command_line_prints(
    example: Example, open_page: Opener, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _cli_fix_lines(example, capsys)
    assert expected
    at = open_page("stack", **_link(example))
    shown_lines = [shown(str(n.value)) for n in at.main if n.type in ("markdown", "caption")]
    page = "\n".join(shown_lines)
    position = 0
    for line in expected:
        plain = line.removeprefix("- ")
        found = page.find(plain, position)
        assert found >= 0, f"the page does not show, in order: {plain}"
        position = found
    headings = [s for s in shown_lines if re.match(r"^\*\*\d+\. ", s)]
    assert len(headings) == sum(1 for line in expected if re.match(r"^\d+\. ", line))


def test_an_example_stack_opens_in_the_link_and_the_choice_resets(open_page: Opener) -> None:
    at = open_page("stack")
    example = EXAMPLES[8]
    at.selectbox(key="stack-example").set_value(example.title).run()
    assert not at.exception
    assert at.query_params["token"] == example.token
    assert at.query_params["resource"] == example.resource
    assert at.selectbox(key="stack-example").value is None
    token_choice(at).set_value("etcd-create-revision").run()  # the parts still answer
    assert at.query_params["token"] == "etcd-create-revision"


def test_the_assumption_is_not_offered_as_a_choice(open_page: Opener) -> None:
    at = open_page("stack")
    offered = at.multiselect[0].options
    assert BY_ID["keepalive"].words in offered
    assert BY_ID["holder-may-crash"].words not in offered
    text = all_text(at)
    assert "a holder that may crash included" in text
