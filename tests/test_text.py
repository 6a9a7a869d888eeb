"""User text is shown as text: after escaping, no Markdown construct and no bare address is
left for Streamlit to turn into a link, an image or HTML, and the text reads the same."""

from __future__ import annotations

import re

import pytest

from tests.app.helpers import bare_links, read_as_text
from webapp.show.text import MARKDOWN_SPECIAL, WORD_JOINER, escape_markdown, safe_markdown

CATALOGUE = [
    "www.evil.example",
    "WWW.Evil.Example/login?next=1",
    "go to www.evil.example now",
    "http://evil.example",
    "https://evil.example/a_b-c?d=e#f",
    "ftp://evil.example/pub",
    "HTTPS://EVIL.EXAMPLE",
    "mailto:teacher@evil.example",
    "xmpp:teacher@evil.example",
    "teacher@evil.example",
    "first.last+tag@mail.evil.example",
    "[Log in again](https://evil.example)",
    "[Log in again][1]\n\n[1]: https://evil.example",
    "![x](http://127.0.0.1:9/t.png)",
    "<https://evil.example>",
    "<teacher@evil.example>",
    "<a href='https://evil.example'>Log in</a>",
    "<img src=x onerror=alert(1)>",
    "`https://evil.example` and ``www.evil.example``",
    "www\\.evil\\.example",
    "&#119;ww.evil.example and https&#58;//evil.example and a&#64;evil.example",
    "www&period;evil.example",
    ":red[www.evil.example] :material/link: $x^2$",
    "| a | b |\n| - | - |\n| www.evil.example | x |",
    "*www.evil.example* and **https://evil.example** and _a@b.example_",
]


@pytest.mark.parametrize("text", CATALOGUE)
def test_escaped_text_links_nothing_and_reads_the_same(text: str) -> None:
    escaped = escape_markdown(text, limit=1_000)
    assert bare_links(escaped) == []
    assert not MARKDOWN_SPECIAL.search(re.sub(r"\\.", "", escaped)), "all escaped"
    assert read_as_text(escaped).replace(WORD_JOINER, "") == text.replace("\n", " ")


def live_markup(markdown: str) -> list[str]:
    """Unescaped characters outside code spans that start links, images, HTML, references,
    LaTeX, directives or tables."""
    outside = re.sub(r"`[^`\n]*`", "", markdown)
    return re.findall(r"(?<!\\)(?:\\\\)*([\[\]!<>$:|&])", outside)


@pytest.mark.parametrize("text", CATALOGUE)
def test_a_teachers_text_keeps_emphasis_and_code_but_links_nothing(text: str) -> None:
    safe = safe_markdown(text)
    assert bare_links(re.sub(r"`[^`\n]*`", "", safe)) == []
    assert live_markup(safe) == []
    assert read_as_text(safe).replace(WORD_JOINER, "") == text
    for kept in re.findall(r"`[^`\n]*`|\*\*|\*|_", text):
        assert kept in safe, "code spans and emphasis are kept"


def test_the_joiner_goes_only_where_an_address_would_start() -> None:
    """Ordinary sentences, times and ratios are left alone."""
    for plain in ("lease 2, tick 3: P1 holds", "W=2 L=2 T=6", "token ≥ highest seen", "10:30"):
        assert WORD_JOINER not in escape_markdown(plain)
    assert escape_markdown("www.a.example").startswith("www" + WORD_JOINER)
    assert WORD_JOINER + "//" in escape_markdown("https://a.example")
    assert "@" + WORD_JOINER in escape_markdown("a@b.example")


def test_long_text_is_shortened_before_it_is_shown() -> None:
    shown = read_as_text(escape_markdown("www.evil.example " * 100))
    assert len(shown.replace(WORD_JOINER, "")) == 300 and shown.endswith("…")
