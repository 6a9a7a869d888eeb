"""AppTest: hostile and careless links on every page give a short message, never a
traceback, a hang or rendered markup; addresses in links and files are never links."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.message import Message
from streamlit import config
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP, TIMEOUT
from tests.app.helpers import bare_links, page_alone, read_as_text, switch_to
from webapp.show.text import WORD_JOINER

PHISHING = "[Log in again](https://evil.example)"
BEACON = "![x](http://127.0.0.1:9/t.png)"


def page(path: str, **params: str) -> AppTest:
    """A fresh session on one page opened with these parameters; it must not raise."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    switch_to(at, path)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def rendered(at: AppTest) -> str:
    """Every alert and Markdown source on the page."""
    kinds = ("error", "warning", "info", "success", "markdown", "caption")
    return "\n".join(str(e.value) for kind in kinds for e in getattr(at, kind))


MARKDOWN_FIELDS = ("body", "label", "help")
"""Element fields the browser renders as Markdown (texts, alerts, headings, widget labels
and their help); options and values of widgets are shown as plain text."""


def proto_strings(message: Message) -> Iterator[tuple[str, str]]:
    """Every string field of an element's message (nested ones too), with its name."""
    for field, value in message.ListFields():
        for item in (
            value if isinstance(value, Iterable) and not isinstance(value, str) else [value]
        ):
            if isinstance(item, Message):
                yield from proto_strings(item)
            elif isinstance(item, str):
                yield field.name, item


def page_strings(node: Any) -> Iterator[tuple[str, str]]:
    """Every string the page sends to the browser, element by element."""
    if getattr(node, "proto", None) is not None:
        yield from proto_strings(node.proto)
    for child in getattr(node, "children", {}).values():
        yield from page_strings(child)


def markdown_links(at: AppTest) -> list[str]:
    """The bare addresses Streamlit's Markdown would turn into links on this page."""
    found = page_strings(at._tree)
    return [link for name, text in found if name in MARKDOWN_FIELDS for link in bare_links(text)]


def assert_shown_never_linked(at: AppTest, *texts: str) -> None:
    """Each text appears on the page as the reader sees it, and nothing would autolink."""
    seen = "\n".join(read_as_text(s).replace(WORD_JOINER, "") for _, s in page_strings(at._tree))
    for text in texts:
        assert text in seen, text
    assert markdown_links(at) == []


@pytest.mark.parametrize(
    "path, params",
    [
        ("playground", {"d": "fencing", "b": "5.12.30.8.4"}),
        ("playground", {"d": PHISHING}),
        ("playground", {"d": BEACON, "b": "2.2.6.3.2"}),
        ("playground", {"a": "A1.S1." + "X" * 3000}),
        ("playground", {"b": "9" * 5000}),
        ("chapter-1", {"step": "1e400", "run": "99"}),
        ("chapter-3", {"step": "-5", "run": PHISHING}),
        ("compare", {"a": PHISHING, "b": "Infinity", "cell": BEACON}),
        ("explore", {"skew": BEACON, "budget": "1e400"}),
        ("state-space", {"preset": PHISHING, "horizon": "Infinity"}),
        ("proofs", {"preset": "fencing", "grants": "-1e400", "run": "1"}),
    ],
)
def test_a_hostile_link_is_answered_in_words(path: str, params: dict[str, str]) -> None:
    at = page(path, **params)
    text = rendered(at)
    assert "](http" not in text, text
    assert markdown_links(at) == []
    if params != {"d": "fencing", "b": "5.12.30.8.4"}:  # the widest good link is no bad one
        assert "This link was partly not understood" in text, (path, params)


def test_home_says_when_a_link_carries_a_setting_it_does_not_have() -> None:
    text = rendered(page("home", colour=PHISHING))
    assert "This link was partly not understood: this page has no setting" in text
    assert "evil" not in text
    assert "partly not understood" not in rendered(page("home", embed="true"))


@pytest.mark.parametrize("number", [1, 2, 3, 4])
@pytest.mark.parametrize(
    "params",
    [{"step": "99"}, {"step": "-1"}, {"chapter-run": "7"}, {"colour": "red"}],
    ids=["step-past-the-end", "negative-step", "no-such-run", "unknown-setting"],
)
def test_every_chapter_says_which_part_of_a_link_it_did_not_understand(
    number: int, params: dict[str, str]
) -> None:
    at = page(f"chapter-{number}", **params)
    text = rendered(at)
    assert text.count("This link was partly not understood") == 1, text
    assert "red" not in text.split("partly not understood")[1].split("\n")[0]


ADDRESSES = [
    "www.evil.example",
    "https://evil.example/login",
    "ftp://evil.example",
    "mailto:ask@evil.example",
    "ask@evil.example",
]


@pytest.mark.parametrize("address", ADDRESSES)
@pytest.mark.parametrize("option", ["receiver", "skew"])
def test_an_address_in_a_link_is_quoted_as_text_not_linked(option: str, address: str) -> None:
    """`/explore?receiver=www.evil.example` quotes the value back, and it is no link."""
    at = page("explore", **{option: address})
    assert_shown_never_linked(at, address)


HOSTILE_SET = """title = "Sign in at https://evil.example/login or www.evil.example"
description = "Questions to teacher@evil.example, files on ftp://evil.example/pub."

[[exercise]]
id = "x"
kind = "predict"
title = "Read www.evil.example first"
prompt = "Mail mailto:teacher@evil.example or see <https://evil.example>."
preset = "fencing"
hints = ["See www.evil.example/hint {fencing:P1}."]
"""


def exercises_page(**state: Any) -> AppTest:
    """The exercises page, run once with this session state."""
    at = page_alone("exercises", default_timeout=TIMEOUT)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_addresses_in_a_teachers_folder_are_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """File names (of a good set and of a broken one) and every text of the set."""
    (tmp_path / "www.evil.example.toml").write_text(HOSTILE_SET, encoding="utf-8")
    (tmp_path / "ask@evil.example.toml").write_text('title = "x\n', encoding="utf-8")
    monkeypatch.setenv("FENCING_LAB_EXERCISES", str(tmp_path))
    at = exercises_page()
    assert_shown_never_linked(at, "ask@evil.example.toml")
    at.selectbox(key="ex-set").set_value("Folder: www.evil.example.toml").run()
    assert not at.exception
    assert_shown_never_linked(
        at,
        "Sign in at https://evil.example/login or www.evil.example",
        "Questions to teacher@evil.example, files on ftp://evil.example/pub.",
        "Read www.evil.example first",
        "Mail mailto:teacher@evil.example or see <https://evil.example>.",
    )
    at.selectbox(key="ex-set").set_value("Folder: ask@evil.example.toml").run()
    assert_shown_never_linked(at, "ask@evil.example.toml was not loaded")


def test_addresses_in_an_uploaded_set_and_its_file_name_are_text() -> None:
    from classroom.sets import parse_set
    from webapp.screens.exercises_page import CHOICE_KEY, UPLOAD_CHOICE, UPLOADED_KEY

    uploaded = parse_set(HOSTILE_SET, source="https://evil.example/set.toml")
    at = exercises_page(**{UPLOADED_KEY: uploaded, CHOICE_KEY: UPLOAD_CHOICE})
    assert_shown_never_linked(
        at,
        "Using the set you uploaded earlier (https://evil.example/set.toml)",
        "Read www.evil.example first",
    )


def test_the_widest_bounds_a_link_may_ask_for_open_a_working_playground() -> None:
    """5 workers, lease 12, horizon 30, 8 grants, 4 writes: once too wide to number, now a
    run the scheduler can play."""
    at = page("playground", d="fencing", b="5.12.30.8.4")
    assert not at.error
    assert any("Your move" in m.value for m in at.markdown)


def test_visitors_never_see_tracebacks_whatever_the_config_file_says() -> None:
    """The app sets these itself, so they hold however the server was started."""
    page("home")
    assert config.get_option("client.showErrorDetails") == "none"
    assert config.get_option("client.toolbarMode") == "viewer"
