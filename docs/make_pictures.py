"""Draw the README's picture: the paused worker's counterexample on the model's own timeline.

`python docs/make_pictures.py` explores the lease-only design at the reference bounds, takes
its shortest run that breaks P3 (a paused holder's late write lands after the new holder's),
draws it
with the web app's timeline drawer, and has headless Chromium take a picture of it
(docs/pictures/paused-worker.png). Run it again when the drawer's looks change.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from model.check.explorer import explore  # noqa: E402
from model.design import REFERENCE_BOUNDS  # noqa: E402
from model.formats.trace import replay  # noqa: E402
from model.presets import PRESETS  # noqa: E402
from webapp.draw.swimlane import timeline_figure  # noqa: E402

PICTURE = ROOT / "docs" / "pictures" / "paused-worker.png"
WIDTH, HEIGHT = 1100, 460
CHROMIUM = "/usr/bin/chromium"


def paused_worker_html() -> str:
    """The shortest P3 counterexample of lease-only, as a page holding its figure."""
    design = PRESETS["lease-only"].design
    found = explore(design, REFERENCE_BOUNDS)
    actions = found.verdicts["P3"].actions or ()
    trace = replay(
        design,
        REFERENCE_BOUNDS,
        actions,
        title="A lease alone: the paused worker writes after the new holder",
    )
    figure = timeline_figure(trace)
    figure.update_layout(width=WIDTH, height=HEIGHT, margin={"l": 70, "r": 20, "t": 60, "b": 40})
    return figure.to_html(include_plotlyjs=True, full_html=True, config={"staticPlot": True})


def main() -> None:
    """Write the page, photograph it with headless Chromium, keep the picture."""
    from playwright.sync_api import sync_playwright

    PICTURE.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        page_file = Path(folder) / "figure.html"
        page_file.write_text(paused_worker_html(), encoding="utf-8")
        with sync_playwright() as driver:
            browser = driver.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
            )
            tab = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            tab.goto(page_file.as_uri())
            tab.wait_for_selector(".main-svg")
            tab.screenshot(path=str(PICTURE))
            browser.close()
    print(f"wrote {PICTURE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
