"""Headless Chromium: addresses in a link or an uploaded file are shown as text, never as
links (Streamlit's Markdown would turn bare `www.…`, `https://…` and `a@b.c` into links)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import WAIT_MS, ConsoleLog, screenshot, wait_idle

pytestmark = pytest.mark.browser

LINKS_TO_EVIL = "a[href*='evil']"

HOSTILE_SET = """title = "Sign in again at https://evil.example/login or www.evil.example"
description = "Questions to teacher@evil.example, answers on ftp://evil.example/pub."

[[exercise]]
id = "x"
kind = "predict"
title = "Read www.evil.example first"
prompt = "Mail mailto:teacher@evil.example or see <https://evil.example> and [here](https://evil.example)."
preset = "fencing"
"""


def main_text(tab: Any) -> str:
    """What the reader sees in the app's main area."""
    return str(tab.get_by_test_id("stMain").inner_text())


def test_an_address_in_a_link_parameter_is_plain_text(
    app_url: str, page: tuple[Any, ConsoleLog]
) -> None:
    tab, _ = page
    tab.goto(f"{app_url}/explore?receiver=www.evil.example&skew=ask%40evil.example")
    tab.get_by_text("This link was partly not understood").wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    shown = main_text(tab).replace("\u2060", "")
    assert "www.evil.example" in shown
    assert tab.locator(LINKS_TO_EVIL).count() == 0
    assert tab.locator("[data-testid='stMain'] a[href^='mailto:']").count() == 0
    screenshot(tab, "hostile-link-explore")


def test_addresses_in_an_uploaded_exercise_set_are_plain_text(
    app_url: str, page: tuple[Any, ConsoleLog], tmp_path: Path
) -> None:
    """The set's file name, title, description, exercise title and prompt all carry
    addresses; every one is shown, none is a link."""
    tab, _ = page
    upload = tmp_path / "www.evil.example.toml"
    upload.write_text(HOSTILE_SET, encoding="utf-8")
    tab.goto(f"{app_url}/exercises")
    tab.get_by_text("Predict what a design keeps").wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    tab.get_by_test_id("stSelectbox").first.click()
    tab.get_by_role("option", name="Upload a set (TOML)").click()
    wait_idle(tab)
    tab.locator("input[type=file]").first.set_input_files(str(upload))
    tab.get_by_text("Read www").first.wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    shown = main_text(tab).replace("\u2060", "")
    for text in (
        "https://evil.example/login",
        "www.evil.example",
        "teacher@evil.example",
        "ftp://evil.example/pub",
        "[here](https://evil.example)",
    ):
        assert text in shown, text
    assert tab.locator(LINKS_TO_EVIL).count() == 0
    assert tab.locator("[data-testid='stMain'] a[href^='mailto:']").count() == 0
    screenshot(tab, "hostile-exercise-set")
