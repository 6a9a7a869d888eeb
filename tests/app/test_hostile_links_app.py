"""AppTest: hostile and careless links on every page give a short message, never a
traceback, a hang or rendered markup."""

from __future__ import annotations

import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP, TIMEOUT

PHISHING = "[Log in again](https://evil.example)"
BEACON = "![x](http://127.0.0.1:9/t.png)"


def page(path: str, **params: str) -> AppTest:
    """A fresh session on one page opened with these parameters; it must not raise."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    at.switch_page(path)
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def rendered(at: AppTest) -> str:
    """Every alert and Markdown source on the page."""
    kinds = ("error", "warning", "info", "success", "markdown", "caption")
    return "\n".join(str(e.value) for kind in kinds for e in getattr(at, kind))


@pytest.mark.parametrize(
    "path, params",
    [
        ("screens/playground.py", {"d": "fencing", "b": "5.12.30.8.4"}),
        ("screens/playground.py", {"d": PHISHING}),
        ("screens/playground.py", {"d": BEACON, "b": "2.2.6.3.2"}),
        ("screens/playground.py", {"a": "A1.S1." + "X" * 3000}),
        ("screens/playground.py", {"b": "9" * 5000}),
        ("screens/chapter_1.py", {"step": "1e400", "run": "99"}),
        ("screens/chapter_3.py", {"step": "-5", "run": PHISHING}),
        ("screens/compare.py", {"a": PHISHING, "b": "Infinity", "cell": BEACON}),
        ("screens/explore.py", {"skew": BEACON, "budget": "1e400"}),
        ("screens/state_space.py", {"preset": PHISHING, "horizon": "Infinity"}),
        ("screens/z3_proofs.py", {"preset": "fencing", "grants": "-1e400", "run": "1"}),
    ],
)
def test_a_hostile_link_is_answered_in_words(path: str, params: dict[str, str]) -> None:
    at = page(path, **params)
    text = rendered(at)
    assert "](http" not in text, text


def test_the_widest_bounds_a_link_may_ask_for_open_a_working_playground() -> None:
    """5 workers, lease 12, horizon 30, 8 grants, 4 writes: once too wide to number, now a
    run the scheduler can play."""
    at = page("screens/playground.py", d="fencing", b="5.12.30.8.4")
    assert not at.error
    assert any("Your move" in m.value for m in at.markdown)


def test_visitors_never_see_tracebacks_whatever_the_config_file_says() -> None:
    """The app sets these itself, so they hold however the server was started."""
    page("screens/home.py")
    assert config.get_option("client.showErrorDetails") == "none"
    assert config.get_option("client.toolbarMode") == "viewer"
