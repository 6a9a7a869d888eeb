"""Headless Chromium: an ITF trace uploaded to the playground becomes the run, and the
playground's ITF download is that same run. Screenshots go to test-artifacts/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model.check.explorer import explore
from model.design import Bounds
from model.formats.itf import trace_from_any_json, trace_to_itf_json
from model.formats.trace import replay
from model.presets import PRESETS
from tests.browser.conftest import WAIT_MS, ConsoleLog, screenshot, wait_idle

pytestmark = pytest.mark.browser


def test_an_itf_trace_loads_into_the_playground_and_downloads_again(
    app_url: str, page: tuple[Any, ConsoleLog], tmp_path: Path
) -> None:
    tab, _ = page
    design, bounds = PRESETS["lease-only"].design, Bounds()
    actions = explore(design, bounds).verdicts["P1"].actions
    assert actions is not None
    upload = tmp_path / "p1.itf.json"
    upload.write_text(trace_to_itf_json(replay(design, bounds, actions)))
    tab.goto(f"{app_url}/playground")
    tab.get_by_text("Be the scheduler").first.wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    tab.locator("input[type=file]").first.set_input_files(str(upload))
    wait_idle(tab)
    tab.get_by_text(f"Loaded a run of {len(actions)} steps.").wait_for(timeout=WAIT_MS)
    tab.get_by_text(f"P1 violated at step {len(actions)}").wait_for(timeout=WAIT_MS)
    with tab.expect_download() as download:
        tab.get_by_role("button", name="Download the trace (ITF)").click()
    saved = Path(download.value.path())
    document = json.loads(saved.read_text())
    assert document["#meta"]["format"] == "ITF"
    assert trace_from_any_json(saved.read_bytes()).actions == tuple(actions)
    screenshot(tab, "playground-itf-loaded")
