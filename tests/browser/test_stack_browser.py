"""Check my stack in headless Chromium: choose parts, read the bug and the fix, reopen the link."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from advise.advice import advise
from advise.catalogue import BY_ID, Stack
from model.design import REFERENCE_BOUNDS
from tests.browser.conftest import WAIT_MS, ConsoleLog, screenshot, wait_idle

pytestmark = pytest.mark.browser


def test_an_engineer_checks_etcd_with_postgres(app_url: str, page: tuple[Any, ConsoleLog]) -> None:
    tab, console = page
    tab.goto(f"{app_url}/stack")
    tab.get_by_text("Check my stack").first.wait_for(timeout=WAIT_MS)
    tab.get_by_test_id("stSelectbox").nth(1).click()  # the first starts from an example stack
    tab.get_by_role("option", name=BY_ID["etcd-create-revision"].words).click()
    wait_idle(tab)
    stack = Stack.of("etcd-create-revision", "sql-conditional-update")
    advice = advise(stack, REFERENCE_BOUNDS)
    assert advice.violated == ("P2",)
    fix = advice.fixes[0].changes[0].build()
    tab.get_by_text(fix[:40]).first.wait_for(timeout=WAIT_MS)
    tab.get_by_text(advice.stories["P2"][0][:60]).first.wait_for(timeout=WAIT_MS)
    tab.locator(".js-plotly-plot").first.wait_for(timeout=WAIT_MS)
    steps = len(advice.traces["P2"].steps)
    tab.get_by_text(f"Step {steps} of {steps}", exact=True).wait_for(timeout=WAIT_MS)
    wait_idle(tab)
    query = parse_qs(urlparse(tab.url).query)
    assert query["token"] == ["etcd-create-revision"]
    assert query.get("does", [""]) == [""]
    screenshot(tab, "stack-etcd-postgres")
    url = tab.url
    tab.goto(url)
    tab.get_by_text(fix[:40]).first.wait_for(timeout=WAIT_MS)
    assert tab.locator("a[href*='evil']").count() == 0
    assert console.errors == []
