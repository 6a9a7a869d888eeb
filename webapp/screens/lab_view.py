"""The Live lab page: run a scripted scenario or a randomized run on a real etcd and store,
watch its progress, and read the real history beside the model's replay of it.

Logic lives in `lab/` (runs, checks, conformance) and `webapp/draw/swimlane.py` (the figure);
this module lays them out. Every verdict shown is read from the history checker or the
model; the only texts from outside the program (error messages, which may carry an address
from the environment) are escaped before they are shown.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

import streamlit as st

from lab.checker import CHECKED, TITLES
from lab.etcd import ETCD_ENV, endpoint_from
from lab.experiment import run_randomized, run_scenario
from lab.history import History, history_to_json
from lab.lock_servers import SHARED_SERVICES
from lab.lock_table import DEFAULT_SERVICE, SERVICE_NAMES, SERVICES
from lab.nemesis import PAUSE_TTLS
from lab.report import LabReport
from lab.runner import LabStopped
from lab.scenarios import SCENARIOS, SCENARIOS_LIST, LabScenario, predict
from lab.service import QUEUE_SECONDS, SHARED_ETCD, SLOTS
from lab.settings import DATABASES, RECEIVERS, LabError, LabInputError, Settings
from model.formats.trace import trace_to_json
from webapp.content import lab as lab_words
from webapp.content.common import mirrors
from webapp.draw.swimlane import history_figure, timeline_figure
from webapp.screens.scheduler_link import step_it_yourself
from webapp.show.downloads import offer_download
from webapp.show.text import escape_markdown
from webapp.show.views import opening_step

RESULTS: Final = "lab-results"
MESSAGE: Final = "lab-message"
PARTIAL: Final = "lab-partial"
DEFAULT: Final = "(the scenario's own)"
RANDOM_RECEIVERS: Final = ("none", "fenced", "etcd-txn")
RANDOM_WRITES: Final = 3
"""Writes each worker makes per lock in a randomized run."""


def escaped(text: str) -> str:
    """Text shown as-is inside Markdown: every Markdown and HTML character escaped."""
    return escape_markdown(text, limit=2_000)


def address_problem() -> str:
    """Why the etcd address the server was given cannot be used ('' when it can, or when
    none was given and the lab starts its own etcd)."""
    try:
        endpoint_from(None)
    except LabInputError as error:
        return lab_words.cannot_run(str(error), ETCD_ENV)
    return ""


def _service_picker(key: str) -> str:
    """The lock service the workers take the lock from, with what it is in words."""
    service = st.selectbox(
        "Lock service", SERVICE_NAMES, format_func=lambda n: f"{n}: {SERVICES[n].words}", key=key
    )
    st.caption(mirrors(SERVICES[service].mirrors))
    return str(service)


def _scenario_settings() -> tuple[str, Settings]:
    """The scenario picker and its overrides; the chosen name and settings."""
    names = [item.name for item in SCENARIOS_LIST]
    name = st.selectbox(
        "Scenario",
        names,
        format_func=lambda n: f"{SCENARIOS[n].title} ({n})",
        key="lab-scenario",
    )
    chosen = SCENARIOS[name]
    st.markdown(chosen.story)
    service = _service_picker("lab-service")
    left, right = st.columns(2)
    receiver = left.selectbox(
        "Receiver",
        (DEFAULT, *RECEIVERS),
        key="lab-receiver",
        format_func=lambda name: name if name == DEFAULT else lab_words.receiver_words(name),
    )
    tokens = SERVICES[service].token_names
    token = right.selectbox(
        "Token",
        (DEFAULT, *tokens),
        key="lab-token" if service == "etcd" else f"lab-token-{service}",
    )
    service = _service_for(chosen, service)
    try:
        settings = chosen.settings(
            receiver=None if receiver == DEFAULT else receiver,
            token=None if token == DEFAULT else token,
            lock_service=service,
        )
    except LabInputError as error:
        st.warning(escaped(str(error)))
        settings = chosen.settings(lock_service=service)
    prediction = predict(chosen, settings)
    st.info(lab_words.prediction(settings.label(), prediction.summary()))
    return name, settings


def _service_for(chosen: LabScenario, service: str) -> str:
    """The chosen lock service, or etcd (said in a warning) when the service cannot give
    what the scenario needs (the crashed holder's keepalives)."""
    try:
        chosen.settings(lock_service=service)
    except LabInputError as error:
        st.warning(lab_words.runs_on_etcd(escaped(str(error))))
        return DEFAULT_SERVICE
    return service


def _random_settings() -> list[Settings]:
    """The randomized run's form: sizes, nemesis, and the designs compared side by side."""
    a, b, c, d = st.columns(4)
    workers = a.number_input("Workers", 1, 5, 3, key="lab-workers")
    seconds = b.number_input("Seconds per design", 2, 20, 6, key="lab-seconds")
    rate = c.number_input("Pauses per second", 0.0, 4.0, 2.0, step=0.5, key="lab-rate")
    seed = d.number_input(
        "Schedule number",
        0,
        10_000,
        1,
        key="lab-seed",
        help=lab_words.SCHEDULE_HELP,
    )
    service = _service_picker("lab-random-service")
    offered = [r for r in RECEIVERS if service == "etcd" or r != "etcd-txn"]
    receivers = st.multiselect(
        lab_words.RECEIVERS_LABEL,
        offered,
        [r for r in RANDOM_RECEIVERS if r in offered],
        key="lab-receivers" if service == "etcd" else f"lab-receivers-{service}",
        format_func=lab_words.receiver_words,
    )
    st.caption(lab_words.random_run(RANDOM_WRITES, PAUSE_TTLS))
    return [
        Settings(
            receiver=receiver,
            lock_service=service,
            token=SERVICES[service].token_names[0],
            workers=int(workers),
            writes=RANDOM_WRITES,
            seconds=float(seconds),
            pause_rate=float(rate),
            seed=int(seed),
        )
        for receiver in receivers
    ]


def _on_database(plans: list[tuple[str, Settings]]) -> tuple[list[tuple[str, Settings]], str]:
    """The database picker: the plans on the chosen database, or none and why not."""
    from lab.postgres import missing

    database = st.radio(
        lab_words.DATABASE_LABEL,
        DATABASES,
        horizontal=True,
        key="lab-database",
        help=lab_words.DATABASE_HELP,
    )
    if database == "sqlite":
        return plans, ""
    problem = missing()
    if problem:
        return [], lab_words.no_postgres(problem)
    kept = [(name, s) for name, s in plans if s.receiver != "etcd-txn"]
    if len(kept) < len(plans):
        st.caption(lab_words.NO_POSTGRES_FORM)
    if plans and not kept:
        return [], lab_words.NO_RECEIVER_LEFT
    return [(name, dataclasses.replace(s, database=database)) for name, s in kept], ""


def _run(label: str, plans: list[tuple[str, Settings]]) -> None:
    """Run the plans one after the other, in a slot, with a progress bar; keep the reports."""
    notice = st.empty()

    def queued(running: int, waiting: int) -> None:
        notice.info(lab_words.queued(running, waiting))

    with SLOTS.slot(QUEUE_SECONDS, queued) as got:
        notice.empty()
        if not got:
            st.session_state[MESSAGE] = ("warning", lab_words.busy(SLOTS.running, SLOTS.waiting))
            return
        bar = st.progress(0.0, text=lab_words.starting(label))
        reports = []
        st.session_state[PARTIAL] = None
        st.session_state[RESULTS] = []  # an older run's report is not shown under a failure
        try:
            endpoint = SHARED_ETCD.endpoint()
            share = 1 / len(plans)
            for number, (name, settings) in enumerate(plans):

                def progress(
                    fraction: float,
                    words: str,
                    number: int = number,
                    receiver: str = settings.receiver,
                ) -> None:
                    bar.progress(min(1.0, (number + fraction) * share), text=f"{receiver}: {words}")

                server = SHARED_SERVICES.server(settings.lock_service)
                if name == "random":
                    reports.append(
                        run_randomized(endpoint, settings, progress=progress, service=server)
                    )
                else:
                    reports.append(
                        run_scenario(endpoint, name, settings, progress=progress, service=server)
                    )
        except LabStopped as stop:
            st.session_state[MESSAGE] = (
                "error",
                lab_words.stopped_early(escaped(stop.reason), len(stop.history.events)),
            )
            st.session_state[PARTIAL] = stop.history
            return
        except (LabError, LabInputError) as error:
            st.session_state[MESSAGE] = ("error", lab_words.failed(escaped(str(error))))
            return
        finally:
            bar.empty()
    st.session_state[RESULTS] = reports
    st.session_state[MESSAGE] = None


def _properties_table(report: LabReport) -> list[dict[str, Any]]:
    """Rows: property, the history's verdict, the model's flags on its replay, and the model's
    own prediction (made again, never the file's); a property nothing put to the test is said
    to hold vacuously."""
    prediction, tests = report.prediction, report.predicted_tests
    rows = []
    for name in CHECKED:
        found = report.properties[name]
        row = {
            "property": f"{name} {TITLES[name]}",
            lab_words.IN_HISTORY: lab_words.verdict_cell(found.count, name, found.exercised),
            lab_words.IN_REPLAY: lab_words.verdict_cell(
                report.conformance.agreement[name][1], name, report.replay_tests(name)
            ),
        }
        if prediction and tests is not None:
            row[lab_words.PREDICTED] = lab_words.verdict_cell(
                prediction["properties"][name]["count"], name, tests[name]
            )
        rows.append(row)
    return rows


def _model_links(report: LabReport, key: str) -> None:
    """The model's trace of the history: its timeline, the scheduler on it (at its first
    violation, else its end), and a download."""
    trace = report.conformance.trace
    if trace is None or not trace.steps:
        return
    st.markdown(lab_words.model_run(trace, report.conformance.mapping.tick_seconds))
    st.plotly_chart(timeline_figure(trace), key=f"{key}-model")
    left, right = st.columns(2)
    with left:
        step_it_yourself(trace, opening_step([trace]))
    offer_download(
        right,
        lab_words.DOWNLOAD_MODEL_TRACE,
        trace_to_json(trace),
        file_name=f"model-trace-{report.history.scenario}-{report.history.settings.receiver}.json",
        mime="application/json",
        key=f"{key}-trace",
    )


def _show(report: LabReport, key: str) -> None:
    """One run's results: counts, verdicts, conformance, the history figure, the model's run."""
    s = report.history.settings
    st.subheader(f"{report.history.scenario}: {s.label()}")
    a, b, c, d = st.columns(4)
    a.metric("Writes decided", report.counts.operations)
    b.metric("Accepted", report.counts.accepted)
    c.metric("Rejected", report.counts.rejected)
    d.metric("Grants", len(report.line.grants))
    st.table(_properties_table(report))
    if report.prediction_agrees is not None:
        show = st.success if report.prediction_agrees else st.warning
        show(lab_words.prediction_verdict(report.prediction_agrees))
    conformance = report.conformance
    verdict = conformance.verdict()
    sentence = verdict[0].upper() + verdict[1:]
    if conformance.allowed:
        st.success(lab_words.conformance(escaped(sentence)))
    elif conformance.refused is None:
        st.info(lab_words.conformance(escaped(sentence)))
    else:
        st.error(lab_words.conformance(escaped(sentence)))
    if conformance.coverage is not None:
        st.caption(lab_words.replay_coverage(escaped(conformance.coverage.sentence())))
    reasons = [escaped(f.reason) for f in report.witnessed.impossible[:5]]
    if (contradiction := lab_words.witnesses_contradict(reasons)) is not None:
        st.error(contradiction)
    for line in report.witness_lines()[2:]:
        if line.lstrip().startswith("?"):
            st.info(escaped(line.strip(" ?")))
    st.plotly_chart(history_figure(report, "The real history"), key=f"{key}-history")
    with st.expander(lab_words.event_by_event(len(report.line.events))):
        st.code("\n".join(report.narrated()), language=None)
    offer_download(
        None,
        lab_words.DOWNLOAD_HISTORY,
        history_to_json(report.history),
        file_name=f"lab-{report.history.scenario}-{s.receiver}.json",
        mime="application/json",
        key=f"{key}-download",
    )
    _model_links(report, key)


def _comparison(reports: list[LabReport]) -> None:
    """The randomized runs side by side: per design, writes and violations."""
    st.subheader("Side by side")
    st.table(
        [
            {
                "receiver": r.history.settings.receiver,
                "writes": r.counts.operations,
                "accepted": r.counts.accepted,
                "rejected": r.counts.rejected,
                **{name: r.properties[name].count for name in CHECKED},
            }
            for r in reports
        ]
    )


def render_lab() -> None:
    """The whole page."""
    st.title("Live lab")
    st.markdown(lab_words.INTRO)
    mode = st.radio(
        "What to run", ("A scripted scenario", "A randomized run"), horizontal=True, key="lab-mode"
    )
    if mode == "A scripted scenario":
        name, settings = _scenario_settings()
        plans = [(name, settings)]
    else:
        plans = [("random", settings) for settings in _random_settings()]
    plans, refused = _on_database(plans)
    if refused:
        st.warning(escaped(refused))
    problem = address_problem()
    if problem:
        st.error(escaped(problem))
    if st.button("Run", type="primary", key="lab-run", disabled=not plans or bool(problem)):
        _run("Lab", plans)
    message = st.session_state.get(MESSAGE)
    if message:
        kind, text = message
        getattr(st, kind)(text)
    partial: History | None = st.session_state.get(PARTIAL)
    if partial is not None:
        offer_download(
            None,
            lab_words.DOWNLOAD_PARTIAL,
            history_to_json(partial),
            file_name=f"lab-{partial.scenario}-{partial.settings.receiver}-partial.json",
            mime="application/json",
            key="lab-partial-download",
        )
    reports: list[LabReport] = st.session_state.get(RESULTS) or []
    if len(reports) > 1:
        _comparison(reports)
    for number, report in enumerate(reports):
        _show(report, f"lab-{number}")
