"""What a lab run found: counts, the history's own verdicts, the model's prediction and replay.

`analyse(history)` is the single place that turns a history into the report every front
end shows: the CLI's text and `--json`, `fencing replay`, the web page and the tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lab.allowances import allowances
from lab.checker import (
    CHECKED,
    TITLES,
    Counts,
    CrashOutcome,
    PropertyVerdict,
    check_properties,
    count_writes,
    crash_outcomes,
)
from lab.conformance import Conformance, check_conformance
from lab.contradiction import Impossible
from lab.describe import describe
from lab.history import History, Timeline, timeline
from lab.lock_table import SERVICES
from lab.nemesis import faults_to_data
from lab.nemesis_witness import clock_rates, fault_account
from lab.scenarios import (
    model_prediction,
    predicted_tests,
    script_checks,
    stored_prediction_problem,
)
from lab.witness import Witnessed, cross_check


@dataclass(frozen=True)
class LabReport:
    """A history and everything read off it."""

    history: History
    line: Timeline
    counts: Counts
    properties: dict[str, PropertyVerdict]
    conformance: Conformance
    witnessed: Witnessed
    path: Path | None = None
    prediction: Mapping[str, Any] | None = None
    """The model's prediction for the scripted scenario, made again from the history's
    settings (never the file's word); None for a run that stores none."""
    predicted_tests: Mapping[str, int] | None = None
    """How many steps of the predicted run put each property to the test."""

    def replay_tests(self, name: str) -> int:
        """How many steps of the model's replay put a property to the test (the history's
        own count when the model did not replay it)."""
        trace = self.conformance.trace
        return trace.exercised(name) if trace is not None else self.properties[name].exercised

    @property
    def crashes(self) -> tuple[CrashOutcome, ...]:
        """Each holder the nemesis killed, with the time to the next grant (P6's evidence)."""
        return crash_outcomes(self.line)

    @property
    def renewals(self) -> int:
        """Keepalives the lock service took in the run."""
        return sum(1 for e in self.line.events if e.kind == "renew")

    @property
    def service_name(self) -> str:
        """The run's lock service in a sentence (etcd, etcd's lock API, Redis)."""
        return SERVICES[self.history.settings.lock_service].short

    @property
    def refused(self) -> bool:
        """No real order allows the history: the witnesses contradict each other, or the
        model's interpreter refuses one of its events."""
        return self.witnessed.refused or self.conformance.refused is not None

    @property
    def failed(self) -> bool:
        """The run tells something is wrong: the history is refused, or reality differed
        from the model's prediction (exit status 1)."""
        return self.refused or self.prediction_agrees is False

    @property
    def prediction_agrees(self) -> bool | None:
        """Whether reality matched the model's prediction (None: no prediction, a random run)."""
        prediction = self.prediction
        if not prediction:
            return None
        predicted = {name: bool(prediction["properties"][name]["violated"]) for name in CHECKED}
        seen = {name: self.properties[name].violated for name in CHECKED}
        same_outcomes = (prediction["accepted"], prediction["rejected"]) == (
            self.counts.accepted,
            self.counts.rejected,
        )
        return predicted == seen and same_outcomes

    def to_dict(self) -> dict[str, Any]:
        """The object `fencing lab ... --json` prints."""
        s = self.history.settings
        data: dict[str, Any] = {
            "scenario": self.history.scenario,
            "receiver": s.receiver,
            "token": s.token,
            "hwm": s.hwm,
            "database": s.database,
            "workload": s.workload,
            "worker_check": s.worker_check,
            "expiry": s.expiry,
            "keepalive": s.keepalive,
            "workers": s.workers,
            "writes_per_grant": s.writes,
            "operations": self.counts.operations,
            "accepted": self.counts.accepted,
            "rejected": self.counts.rejected,
            "reads": self.counts.reads,
            "grants": len(self.line.grants),
            "pauses": sum(1 for e in self.line.events if e.kind == "pause"),
            "renewals": self.renewals,
            "crashes": [crash.to_dict() for crash in self.crashes],
            "seconds": round(self.history.seconds, 3),
            "properties": {
                name: {
                    "violated": verdict.violated,
                    "count": verdict.count,
                    "exercised": verdict.exercised,
                }
                for name, verdict in self.properties.items()
            },
            "conformance": self.conformance.to_dict(),
            "refused": self.refused,
            "impossible": [found.to_dict() for found in self.witnessed.impossible],
            "allowances": allowances(self.line).to_dict(),
            "unknown_writes": [write.to_dict() for write in self.witnessed.unknown],
            "final_read": _final_dict(self.line),
            "history": str(self.path) if self.path else None,
            "etcd": dict(self.history.etcd),
        }
        if s.seconds:
            data.update(seconds_planned=s.seconds, pause_rate=s.pause_rate, seed=s.seed)
            data.update(faults=s.faults, members=s.members)
        if self.history.nemesis:
            data["nemesis"] = faults_to_data(self.history.nemesis)
        if self.prediction:
            data["prediction"] = {
                "summary": self.prediction["summary"],
                "properties": self.prediction["properties"],
                "agrees": self.prediction_agrees,
            }
        return data

    def text(self) -> str:
        """A human report: the run, its counts, each property, the prediction, conformance."""
        s = self.history.settings
        lines = [
            *([f"Partial history: {self.history.partial}"] if self.history.partial else []),
            f"Live lab: {self.history.scenario} ({s.label()})",
            f"  {self._where()}, {s.workers} workers, lease TTL {s.ttl} s, "
            f"{self.history.seconds:.1f} s",
            f"  {self.counts.operations} writes decided: {self.counts.accepted} accepted, "
            f"{self.counts.rejected} rejected ({len(self.line.grants)} grants, "
            f"{sum(1 for e in self.line.events if e.kind == 'pause')} pauses)",
            *([f"  {self.renewals} keepalives taken by {self.service_name}"] if s.renews else []),
            *(f"  Crash: {crash.sentence()}" for crash in self.crashes),
            *self.nemesis_lines(),
            "",
            "From the history alone:",
        ]
        for name, verdict in self.properties.items():
            status = (
                f"VIOLATED {verdict.count}x"
                if verdict.violated
                else "holds vacuously (never put to the test)"
                if verdict.vacuous
                else "holds"
            )
            lines.append(f"  {name} {TITLES[name]:<28} {status}")
            lines.extend(f"      ✗ {v.reason}" for v in verdict.violations[:3])
            if verdict.count > 3:
                lines.append(f"      … and {verdict.count - 3} more")
        lines += self.witness_lines()
        if self.prediction:
            lines += ["", "What happened:", *self.narrated(skip=("reply",))]
            agrees = "reality agreed" if self.prediction_agrees else "REALITY DIFFERED"
            lines += ["", f"The model predicts: {self.prediction['summary']} ({agrees})."]
            lines.extend(f"  · {sentence}" for sentence in self.prediction["sentences"])
        c = self.conformance
        lines += [
            "",
            f"Conformance ({c.design.label()}, {c.bounds.short()}, one tick = "
            f"{c.mapping.tick_seconds:.3f} s): {c.verdict()}",
        ]
        if c.coverage is not None:
            lines.append(f"  The model's replay {c.coverage.sentence()}.")
        if s.token == "lease-id" and s.members > 1:
            lines.append(
                "  Lease IDs are not ordered across etcd members: the token is the model's "
                "random token, compared only by its rank among the run's grants."
            )
        if c.trace is not None and c.refused is None:
            agree = "agree" if c.properties_agree else "DISAGREE"
            counted = ", ".join(f"{n} {h}/{m}" for n, (h, m) in c.agreement.items())
            lines.append(f"  The model's flags and the history's checker {agree} ({counted}).")
            if any(
                c.agreement[name][0] != self.properties[name].count
                for name in ("P1", "P3")
                if name in c.agreement
            ):
                lines.append(
                    "  (P1 and P3 counted here as the model's ghosts count them, against the "
                    "last accepted write; above, against the highest token and newest grant.)"
                )
        if self.path:
            lines += ["", f"History file: {self.path}"]
        return "\n".join(lines)

    def _where(self) -> str:
        """Where the lock service ran: `etcd 3.5.1 at URL`, or `ZooKeeper at URL (etcd ...
        beside it)`."""
        etcd = self.history.etcd
        own = f"etcd {etcd.get('version', '')} at {etcd.get('endpoint', '')}"
        service = etcd.get("lock_service")
        if self.history.settings.lock_service in ("etcd", "etcd-lock-api") or not service:
            return own
        return f"{self.service_name} at {service} ({own} beside it)"

    def nemesis_lines(self) -> list[str]:
        """The nemesis's schedule and what became of each fault, and each worker's own
        clock, for a randomized run."""
        if not self.history.nemesis:
            return []
        s = self.history.settings
        given = "given by the caller" if self.history.nemesis_given else f"seed {s.seed}"
        lines = [f"  Nemesis ({given}, {s.faults}): {fault_account(self.history).sentence()}"]
        skewed = any(fault.kind == "skew" for fault in self.history.nemesis)
        if skewed:
            lines.extend(f"  Clock: {rate.sentence()}" for rate in clock_rates(self.history))
        return lines

    def witness_lines(self) -> list[str]:
        """The cross-checks of the witnesses and the writes of unknown outcome, in words."""
        found = self.witnessed.impossible
        lines = [
            "",
            "Cross-checks of the witnesses (workers, store, lock service, nemesis, final reads):",
            *allowances(self.line).lines(),
        ]
        if not found:
            lines.append("  consistent: no contradiction between the witnesses")
        else:
            lines.append(f"  REFUSED: {len(found)} contradiction{'s' if len(found) != 1 else ''}")
            lines.extend(f"  ✗ [{f.code}] {f.reason}" for f in found[:10])
            if len(found) > 10:
                lines.append(f"  … and {len(found) - 10} more")
        for write in self.witnessed.unknown:
            decided = (
                f"{write.by} says it was {write.decided}"
                if write.decided
                else "nothing decided whether it was applied"
            )
            lines.append(
                f"  ? W{write.worker}'s write {write.request} (sent at {write.sent:.3f} s) is "
                f"indeterminate: its reply never came; {decided}"
            )
        return lines

    def narrated(self, skip: tuple[str, ...] = ()) -> list[str]:
        """Every event of the history (but the kinds in `skip`) as a numbered sentence."""
        return [
            f"  {e.index + 1:>3}. {e.t:7.3f} s  {describe(e, self.history.settings.lock_service)}"
            for e in self.line.events
            if e.kind not in skip
        ]


def analyse(history: History, path: Path | None = None) -> LabReport:
    """Check a history on its own and against the model."""
    line = timeline(history)
    witnessed = cross_check(line)
    if scripted := script_checks(history):
        witnessed = replace(witnessed, impossible=(*witnessed.impossible, *scripted))
    problem = stored_prediction_problem(history)
    if problem:
        refusal = Impossible("prediction", None, 0.0, problem)
        witnessed = replace(witnessed, impossible=(refusal, *witnessed.impossible))
    made = model_prediction(history)
    return LabReport(
        history,
        line,
        count_writes(line.events),
        check_properties(line),
        check_conformance(line, witnessed.unknown),
        witnessed,
        path,
        made,
        predicted_tests(history),
    )


def _final_dict(line: Timeline) -> dict[str, Any] | None:
    """The final reads of the database and of the lock keys, as recorded (None: none made)."""
    for event in reversed(line.events):
        if event.kind == "final-read":
            return {"data": event.get("data"), "locks": event.get("locks")}
    return None
