"""The Live lab page under Streamlit's AppTest, on the session's real etcd: the model's
prediction, a scripted run and its verdicts, a randomized comparison, a failure message,
and the busy message when every run slot is taken; the shared etcd and the run slots."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from lab import etcd as etcd_module
from lab import runner
from lab.etcd import ETCD_ENV, Endpoint, free_port
from lab.postgres import missing as postgres_missing
from lab.scenarios import SCENARIOS, predict
from lab.service import SHARED_ETCD, SLOTS, SharedEtcd, Slots
from tests.app.helpers import all_text, shown, switch_to
from webapp.content.lab import NO_POSTGRES_FORM
from webapp.screens.lab_view import address_problem, escaped

APP = Path(__file__).resolve().parents[2] / "webapp" / "app.py"


@pytest.fixture
def lab_page(etcd: Endpoint, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    """The Live lab page, with runs going to the session's etcd."""
    monkeypatch.setenv(ETCD_ENV, etcd.url)
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    switch_to(at, "lab")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    yield at


def test_the_page_states_the_models_prediction_for_the_chosen_design(lab_page: AppTest) -> None:
    chosen = SCENARIOS["paused-worker"]
    assert predict(chosen, chosen.settings()).summary() in all_text(lab_page)
    lab_page.selectbox(key="lab-receiver").set_value("fenced").run()
    fenced = predict(chosen, chosen.settings(receiver="fenced")).summary()
    assert "rejects 1" in fenced and fenced in all_text(lab_page)


def test_the_page_offers_the_crashed_holder_with_the_models_prediction(lab_page: AppTest) -> None:
    assert "A crashed holder (crashed-holder)" in lab_page.selectbox(key="lab-scenario").options
    lab_page.selectbox(key="lab-scenario").set_value("crashed-holder").run()
    chosen = SCENARIOS["crashed-holder"]
    summary = predict(chosen, chosen.settings()).summary()
    assert summary.endswith("violates no property") and summary in all_text(lab_page)


def test_the_crashed_holder_on_zookeeper_runs_on_etcd_with_a_warning(lab_page: AppTest) -> None:
    lab_page.selectbox(key="lab-scenario").set_value("crashed-holder").run()
    lab_page.selectbox(key="lab-service").set_value("zookeeper").run()
    assert not lab_page.exception, [e.value for e in lab_page.exception]
    warnings = [w.value for w in lab_page.warning]
    assert any("kazoo keeps the ZooKeeper session" in w and "runs on etcd" in w for w in warnings)
    chosen = SCENARIOS["crashed-holder"]
    assert predict(chosen, chosen.settings()).summary() in all_text(lab_page)
    lab_page.selectbox(key="lab-service").set_value("redis").run()
    assert not [w.value for w in lab_page.warning]  # Redis takes the keepalives


def test_a_scripted_run_shows_its_verdicts_conformance_and_both_timelines(
    lab_page: AppTest,
) -> None:
    lab_page.selectbox(key="lab-scenario").set_value("gap-write").run()
    lab_page.button(key="lab-run").click().run()
    assert not lab_page.exception, [e.value for e in lab_page.exception]
    text = all_text(lab_page)
    assert "Reality agreed with the model's prediction." in text
    assert "The model allows this history" in text
    table = lab_page.table[0].value
    # blind writes and no crash: P5 and P6 are never put to the test, so never "holds"
    assert list(table["in the real history"]) == [
        "✔ holds",
        "✘ 1 violation",
        "✔ holds",
        "○ holds vacuously: no accepted write that follows its worker's read",
        "○ holds vacuously: no tick while a crashed worker holds the lock",
    ]
    assert list(table["in the model's replay"]) == list(table["in the real history"])
    assert list(table["the model predicted"]) == list(table["in the real history"])
    assert len(lab_page.get("plotly_chart")) == 2
    assert len(lab_page.get("download_button")) == 2


def test_a_randomized_comparison_is_shown_side_by_side(lab_page: AppTest) -> None:
    lab_page.radio(key="lab-mode").set_value("A randomized run").run()
    lab_page.number_input(key="lab-seconds").set_value(2).run()
    lab_page.multiselect(key="lab-receivers").set_value(["none", "etcd-txn"]).run()
    lab_page.button(key="lab-run").click().run()
    assert not lab_page.exception, [e.value for e in lab_page.exception]
    assert "Side by side" in [h.value for h in lab_page.subheader]
    side = lab_page.table[0].value
    assert list(side["receiver"]) == ["none", "etcd-txn"]
    assert side["P2"].iloc[1] == 0  # etcd transactions keep every write inside its lease
    covered = [c.value for c in lab_page.caption if c.value.startswith("The model's replay")]
    assert len(covered) == 2 and all(" grants and " in text for text in covered)


def test_a_run_that_cannot_reach_etcd_says_so(
    lab_page: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ETCD_ENV, f"http://127.0.0.1:{free_port()}")
    monkeypatch.setattr(etcd_module, "REACH_SECONDS", 0.5)
    lab_page.button(key="lab-run").click().run()
    errors = [e.value for e in lab_page.error]
    read = shown(errors[0]).replace("\u2060", "") if errors else ""
    assert read.startswith("The run failed: etcd at http://127.0.0.1:")
    assert "http\\:\u2060//" in errors[0]  # escaped for Markdown, and never a link
    assert "drop \\-\\-etcd" in errors[0]


def test_a_bad_etcd_address_is_one_sentence_and_the_run_button_is_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server started with an unusable FENCING_LAB_ETCD says so before any run, in one
    sentence shown as text (no exception box), and offers no Run."""
    monkeypatch.setenv(ETCD_ENV, "http://[::1")
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    switch_to(at, "lab")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    sentence = address_problem()
    assert sentence.startswith(
        "The lab cannot run: the etcd address 'http://[::1' is not a valid URL"
    )
    assert f"Fix {ETCD_ENV}" in sentence and sentence.count(". ") == 1
    assert [e.value for e in at.error] == [escaped(sentence)]
    assert at.button(key="lab-run").disabled
    monkeypatch.setenv(ETCD_ENV, "http://127.0.0.1:2379")
    assert address_problem() == ""


def test_a_run_that_stops_early_says_why_and_offers_its_partial_history(
    lab_page: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A randomized run that records as much as a history may hold (the limit made small
    here) stops: the page says so and why, shows no report, and offers what was recorded."""
    monkeypatch.setattr(runner, "REPLAY_LIMIT_BYTES", 8_000)
    monkeypatch.setattr(runner, "HEADER_ALLOWANCE_BYTES", 0)
    lab_page.radio(key="lab-mode").set_value("A randomized run").run()
    lab_page.number_input(key="lab-seconds").set_value(20).run()
    lab_page.multiselect(key="lab-receivers").set_value(["none"]).run()
    lab_page.button(key="lab-run").click().run()
    assert not lab_page.exception, [e.value for e in lab_page.exception]
    errors = [e.value for e in lab_page.error]
    assert len(errors) == 1
    assert errors[0].startswith("The run stopped early: the run had recorded ")
    assert "is kept as a partial history below" in errors[0]
    buttons = lab_page.get("download_button")
    assert len(buttons) == 1 and "partial history" in buttons[0].proto.label
    assert not lab_page.get("plotly_chart") and not lab_page.table


def test_every_slot_taken_and_the_queue_full_means_busy(lab_page: AppTest) -> None:
    taken = [SLOTS.free.acquire(blocking=False) for _ in range(SLOTS.limit)]
    waiting = SLOTS.waiting
    SLOTS.waiting = SLOTS.waiting_limit
    try:
        lab_page.button(key="lab-run").click().run()
    finally:
        SLOTS.waiting = waiting
        for got in taken:
            if got:
                SLOTS.free.release()
    warnings = [w.value for w in lab_page.warning]
    assert warnings and warnings[0].startswith("The lab is busy:")
    assert not lab_page.get("plotly_chart")


def test_slots_queue_a_run_until_one_finishes_and_refuse_past_the_queue() -> None:
    slots = Slots(limit=1, waiting_limit=1)
    events: list[str] = []
    with slots.slot(1.0) as first:
        assert first

        def second() -> None:
            with slots.slot(
                5.0, lambda running, waiting: events.append(f"queued {running}/{waiting}")
            ) as got:
                events.append(f"second ran: {got}")

        thread = threading.Thread(target=second)
        thread.start()
        while not events:
            time.sleep(0.01)
        with slots.slot(5.0) as third:  # the one waiting place is taken
            assert not third
        events.append("first done")
    thread.join(5)
    assert events == ["queued 1/1", "first done", "second ran: True"]


def test_the_shared_etcd_outlives_the_thread_that_asked_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page's script thread ends after each run; the shared etcd must stay up."""
    monkeypatch.delenv(ETCD_ENV, raising=False)
    shared = SharedEtcd()
    found: list[Endpoint] = []
    thread = threading.Thread(target=lambda: found.append(shared.endpoint()))
    thread.start()
    thread.join(30)
    try:
        time.sleep(0.3)
        assert found and found[0].client().status()["header"]
        assert shared.endpoint() == found[0]
        assert shared.server is not None and shared.server.pid is not None
    finally:
        shared.stop()
    assert SHARED_ETCD is not shared


def test_a_shared_etcd_that_died_is_replaced_and_its_files_removed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ETCD_ENV, raising=False)
    shared = SharedEtcd()
    try:
        first = shared.endpoint()
        dead = shared.server
        assert dead is not None and dead.pid is not None and dead._dir is not None
        data = dead._dir
        os.kill(dead.pid, signal.SIGKILL)
        dead.wait()
        second = shared.endpoint()
        assert second != first and second.client().status()["header"]
        assert shared.server is not dead and not data.exists()
    finally:
        shared.stop()


@pytest.mark.skipif(bool(postgres_missing()), reason=postgres_missing() or "PostgreSQL is there")
def test_the_store_can_be_a_real_postgresql_without_etcd_txn(lab_page: AppTest) -> None:
    """With postgres picked, a scripted run goes to PostgreSQL (its history says so); the
    etcd-txn receiver has no PostgreSQL form: alone it turns the Run button off, among
    others in a randomized comparison it is left out, with a sentence saying so."""
    lab_page.radio(key="lab-database").set_value("postgres").run()
    lab_page.selectbox(key="lab-receiver").set_value("etcd-txn").run()
    assert lab_page.button(key="lab-run").disabled
    assert any(NO_POSTGRES_FORM in shown(w.value) for w in lab_page.warning)
    lab_page.selectbox(key="lab-receiver").set_value("fenced").run()
    lab_page.button(key="lab-run").click().run()
    assert not lab_page.exception, [e.value for e in lab_page.exception]
    (report,) = lab_page.session_state["lab-results"]
    assert report.history.settings.database == "postgres"
    assert report.prediction_agrees
    lab_page.radio(key="lab-mode").set_value("A randomized run").run()
    lab_page.multiselect(key="lab-receivers").set_value(["none", "etcd-txn"]).run()
    assert not lab_page.button(key="lab-run").disabled
    assert NO_POSTGRES_FORM in all_text(lab_page)
