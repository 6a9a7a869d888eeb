"""Browser test fixtures: a real `streamlit run` on a free port and headless Chromium.

Playwright never downloads a browser here: it drives Debian's /usr/bin/chromium. When that
binary (or Playwright) is missing, every browser test is skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.servers import app_flags, free_port, healthy

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
WAIT_MS = 30_000
"""How long a browser test waits for the app to show something."""
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STARTUP_SECONDS = 40
KNOWN_STREAMLIT_PROBES = ("/_stcore/health", "/_stcore/host-config")
"""On a deep link such as /chapter-1 the Streamlit frontend first probes these endpoints
relative to the page path (404) before falling back to the root; not an app error."""


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """The Chromium binary, or a skip saying why there is none."""
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip(f"browser tests need Debian's chromium at {CHROMIUM}; it is not installed")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("browser tests need the playwright Python package")
    return CHROMIUM if Path(CHROMIUM).exists() else str(shutil.which("chromium"))


@pytest.fixture(scope="session")
def app_url(chromium_path: str) -> Iterator[str]:
    """Start the app with `streamlit run` on a free port; stop it (by its pid) at the end."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    classes = tempfile.mkdtemp(prefix="fencing-lab-classes-")  # never the user's own classes
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FENCING_LAB_CLASSES": classes}
    ARTIFACTS.mkdir(exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")  # one server per test process
    log = open(ARTIFACTS / f"streamlit-server-{worker}.log", "w")  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", *app_flags(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not healthy(url):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not become healthy at {url}; see the log")
            time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        shutil.rmtree(classes, ignore_errors=True)


@dataclass
class ConsoleLog:
    """Console errors and uncaught page errors seen by a page."""

    errors: list[str] = field(default_factory=list)

    def record(self, message: Any) -> None:
        """Keep an error message unless it is Streamlit's known deep-link probe."""
        if message.type != "error":
            return
        location = str((message.location or {}).get("url", ""))
        if any(location.endswith(probe) for probe in KNOWN_STREAMLIT_PROBES):
            return
        self.errors.append(f"{message.text} ({location})")


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Any]:
    """One headless Chromium for the whole session."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def context(browser: Any) -> Iterator[Any]:
    """One browser context for the session, so the app's scripts are fetched once."""
    opened = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield opened
    opened.close()


def open_tab(context: Any) -> tuple[Any, ConsoleLog]:
    """A new tab (a new Streamlit session) that records console and page errors."""
    tab = context.new_page()
    console = ConsoleLog()
    tab.on("console", console.record)
    tab.on("pageerror", lambda error: console.errors.append(f"page error: {error}"))
    return tab, console


@pytest.fixture
def page(context: Any) -> Iterator[tuple[Any, ConsoleLog]]:
    """A fresh tab with its console log; fails the test on any console error."""
    tab, console = open_tab(context)
    yield tab, console
    tab.close()
    assert console.errors == [], console.errors


ARROWHEADS_JS = """plot => Array.from(plot.querySelectorAll('g.trace.scatter'))
    .filter(g => /arrows$/.test(g.__data__?.[0]?.trace?.name ?? ''))
    .flatMap(g => Array.from(g.querySelectorAll('path.point')))
    .filter(p => p.getBBox().width > 0).length"""
"""Counts the drawn arrowheads of a timeline: the visible markers of its `... arrows` traces
(the tail and middle points of each arrow are zero-size markers)."""


def arrowheads(plot: Any) -> int:
    """How many message arrows the swimlane timeline `plot` draws, by their heads."""
    return int(plot.evaluate(ARROWHEADS_JS))


def wait_idle(tab: Any) -> None:
    """Wait until Streamlit has finished the current run (no 'Running…' status widget)."""
    tab.wait_for_timeout(250)
    tab.locator("[data-testid='stStatusWidget']").wait_for(state="hidden", timeout=WAIT_MS)


def screenshot(tab: Any, name: str) -> None:
    """Save a full-height screenshot of the app's main area to test-artifacts/."""
    height = tab.evaluate(
        "() => document.querySelector('[data-testid=\"stMain\"]')?.scrollHeight || 1000"
    )
    tab.set_viewport_size({"width": 1400, "height": min(int(height) + 100, 6000)})
    tab.wait_for_timeout(500)
    tab.screenshot(path=str(ARTIFACTS / f"{name}.png"))
