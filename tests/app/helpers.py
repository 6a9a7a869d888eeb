"""Helpers for the AppTest suites."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest


def shown(markdown: str) -> str:
    """Markdown source as the reader sees it: backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", markdown)


TEXT_KINDS = (
    "title",
    "header",
    "subheader",
    "markdown",
    "caption",
    "error",
    "info",
    "success",
    "warning",
)


def all_text(at: AppTest) -> str:
    """Every markdown, caption, title, header and alert text of the page, joined."""
    parts: list[str] = []
    for kind in TEXT_KINDS:
        parts.extend(shown(str(element.value)) for element in getattr(at, kind))
    return "\n".join(parts)


REFERENCE_OR_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])|&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z]+);")
"""A backslash escape (kept literal) or a character reference (read as its character)."""

BARE_ADDRESS = re.compile(
    r"(?:[a-z][a-z0-9+.\-]*://|www(?=\.))[-.\w]+|[-.\w+]+@[-\w]+(?:\.[-\w]+)+",
    re.IGNORECASE | re.ASCII,
)
"""What GitHub-flavoured Markdown's autolinker turns into a link once escapes are read (its
`www.`, protocol and e-mail rules, any scheme counted; `\\w` is ASCII as in the browser)."""


def read_as_text(markdown: str) -> str:
    """The text of Markdown as the autolinker sees it: escapes and references resolved."""
    import html

    def resolve(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            return match.group(1)
        return html.unescape(match.group(0))

    return REFERENCE_OR_ESCAPE.sub(resolve, markdown)


def bare_links(markdown: str) -> list[str]:
    """The addresses Streamlit's Markdown would turn into links in this source."""
    return BARE_ADDRESS.findall(read_as_text(markdown))


def switch_to(at: AppTest, url_path: str) -> AppTest:
    """Open the page registered under this URL path, as following its link would.

    `AppTest.switch_page` only finds file pages; the app's pages are functions, so the page
    is looked up among those the last run registered with `st.navigation` (the run must come
    first), and a URL path no page has fails the test.
    """
    by_url = {
        info.get("url_pathname") or "home": page  # the default page is served at the root
        for page, info in at._registered_pages.items()
    }
    assert url_path in by_url, f"no page is registered at /{url_path}: {sorted(map(str, by_url))}"
    at._page_hash = by_url[url_path]
    return at


def run_page(url_path: str) -> None:
    """The script of one page run by itself (AppTest.from_function), without the menu."""
    from webapp.screens.registry import render_page

    render_page(url_path)


def page_alone(url_path: str, default_timeout: float) -> AppTest:
    """An AppTest of one page by itself: no menu, no background checks the entry starts."""
    return AppTest.from_function(run_page, args=(url_path,), default_timeout=default_timeout)


def verdict_cells(at: AppTest, column: str, index: int = 0) -> dict[str, str]:
    """The verdict cells of a table with a row per property (`P1, monotonic acceptance`),
    in the named column, by property name: `{"P1": "✘ violated (8 steps)", …}`."""
    table = at.table[index].value
    return {
        str(prop).split(",")[0]: str(said)
        for prop, said in zip(table["property"], table[column], strict=True)
    }
