"""AppTest: the entry script registers every page of the menu, and each one opens."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP, TIMEOUT
from tests.app.helpers import all_text, switch_to
from webapp.show.navigation import PAGES


def test_the_entry_registers_every_menu_page_with_its_title_and_url() -> None:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    assert not at.exception
    registered = {
        info.get("url_pathname") or "home": info.get("page_name")  # the default page is at /
        for info in at._registered_pages.values()
    }
    assert registered == {entry.url_path: entry.title for entry in PAGES}
    assert "Fencing Lab" in [title.value for title in at.title]  # the default page is home


@pytest.mark.parametrize("entry", PAGES, ids=[entry.url_path for entry in PAGES])
def test_every_page_opens_from_the_menu_without_an_error(entry: object) -> None:
    from webapp.show.navigation import PageEntry

    assert isinstance(entry, PageEntry)
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    switch_to(at, entry.url_path).run()
    assert not at.exception, [e.value for e in at.exception]
    assert all_text(at).strip()
