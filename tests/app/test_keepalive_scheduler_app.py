"""AppTest: on *Be the scheduler* a student renews as the holder, pauses it, and watches the
lease run out anyway; then crashes the next holder and sees its lane end and its lock freed."""

from __future__ import annotations

import json

from tests.app.helpers import all_text
from tests.app.test_playground_app import open_playground, param
from webapp.show.looks import CRASHED


def _bars(at: object, worker: int) -> list[tuple[float, float]]:
    """(start, end) of each lease bar drawn on a worker's lane in the page's timeline."""
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)  # type: ignore[attr-defined]
    bars = []
    for trace in spec["data"]:
        if trace.get("name") == f"W{worker} lease":
            xs = trace["x"]
            bars += [(xs[i], xs[i + 1]) for i in range(0, len(xs), 6)]
    return bars


def _names(at: object) -> list[str]:
    """The names of the traces the page's timeline draws."""
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)  # type: ignore[attr-defined]
    return [trace.get("name", "") for trace in spec["data"]]


def test_renew_as_the_holder_then_pause_and_the_lease_runs_out_anyway() -> None:
    at = open_playground(d="keepalive-lease")
    assert param(at, "d") == "keepalive-lease"
    at.button(key="play-A1").click().run()
    at.button(key="play-T").click().run()
    assert _bars(at, 1) == [(0.0, 2.0)]  # as granted: L = 2 ticks
    renew = at.button(key="play-N1")
    assert renew.label == "Renew W1's lease"
    renew.click().run()
    assert param(at, "a") == "A1.T.N1"
    assert "W1 renews its lease at t=1 (a keepalive): it ran until t=2 and now runs until t=3" in (
        all_text(at)
    )
    assert _bars(at, 1) == [(0.0, 3.0)]  # the bar extends at the renewal
    # W1 now pauses: the student only lets time pass
    at.button(key="play-T").click().run()
    at.button(key="play-T").click().run()
    text = all_text(at)
    assert "W1's lease expires now" in text
    assert "Acquire W2" in [b.label for b in at.button]  # the lock is free for somebody else
    assert "play-N1" not in [b.key for b in at.button]  # too late to renew a lease run out
    assert "paused" in _names(at)


def test_crash_the_next_holder_its_lane_ends_and_its_lock_is_freed() -> None:
    at = open_playground(d="keepalive-lease", a="A1.T.N1.T.T.A2")
    crash = at.button(key="play-K2")
    assert crash.label == "Crash W2"
    crash.click().run()
    assert param(at, "a") == "A1.T.N1.T.T.A2.K2"
    text = all_text(at)
    assert "W2 crashes at t=3" in text
    words = dict(zip(at.table[0].value["actor"], at.table[0].value["in words"], strict=True))
    assert words["W2"].startswith("crashed at t=3, takes no step again")
    assert "lease until t=5" in words["coordinator"]  # the coordinator still holds it for W2
    assert CRASHED.name in _names(at) and "crash labels" in _names(at)
    assert not [b for b in at.button if b.key in ("play-N2", "play-S2", "play-R2")]
    at.button(key="play-T").click().run()
    at.button(key="play-T").click().run()
    assert "W2's lease expires now" in all_text(at)
    assert "✔ P6 holds so far" in all_text(at)
