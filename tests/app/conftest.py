"""Shared AppTest helpers: open the app at a page, with optional URL query parameters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.helpers import switch_to

APP = Path(__file__).resolve().parents[2] / "webapp" / "app.py"
TIMEOUT = 120


@pytest.fixture
def open_page() -> Callable[..., AppTest]:
    """Return a function that runs the app, switches to a page and runs it with query params."""

    def _open(page: str, **params: str) -> AppTest:
        at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
        at.run()
        if page != "home":
            switch_to(at, page)
        for name, value in params.items():
            at.query_params[name] = value
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    return _open
