"""One verdict per property for a design: proved, violated or unknown, and how z3 knows.

`prove` first tries 1-step induction with time and grants unbounded (a proof for every
horizon, with the bounds' W, L and K); a property it cannot prove goes to bounded model
checking within the bounds, which finds the shortest violation; what neither settles goes
to Spacer, and otherwise is reported `unknown` with the reason and the counterexample to
induction. Never `proved` without a proof.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Final

import z3

from model.actions import Action, ActionKind
from model.check.explorer import Exploration, explore
from model.check.search import SearchOptions
from model.design import Bounds, Design
from model.properties import BY_NAME, PROPERTIES
from model.verdicts import Status
from proofs.bmc import HOLDS_WITHIN_BOUNDS, BmcResult, bmc
from proofs.budget import PROVE_MAX_SECONDS, PROVE_MAX_STATES
from proofs.encoding import DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS
from proofs.induction import (
    DEFAULT_SPACER_TIMEOUT_MS,
    SPACER,
    InductionResult,
    Prover,
    prove_by_spacer,
)
from proofs.receiver import ReceiverReport, prove_receiver

BMC: Final = "bmc"
PROVED: Final = Status.PROVED
VIOLATED: Final = Status.VIOLATED
UNKNOWN: Final = Status.UNKNOWN
HOLDS: Final = Status.HOLDS
VACUOUS: Final = Status.VACUOUS
STATUSES: Final = (PROVED, HOLDS, VIOLATED, VACUOUS, UNKNOWN)


@dataclass(frozen=True)
class PropertyResult:
    """One property's verdict, the method that settled it, and the evidence."""

    prop: str
    status: Status
    method: str
    shortest: int | None = None
    invariant: str | None = None
    reason: str | None = None
    seconds: float = 0.0
    actions: tuple[Action, ...] = ()
    cti: str | None = None


@dataclass(frozen=True)
class ProofReport:
    """Every property's verdict for one design and bounds."""

    design: Design
    bounds: Bounds
    properties: dict[str, PropertyResult] = field(default_factory=dict)
    seconds: float = 0.0
    explored: str = ""
    """What the exploration behind the report covered, in words."""


@dataclass(frozen=True)
class _Deadline:
    """The one overall time budget of a proof, shared by its phases."""

    ends: float

    def left_ms(self, cap_ms: int) -> int:
        """Milliseconds left, at most `cap_ms` and at least 1."""
        return max(1, min(cap_ms, int((self.ends - time.perf_counter()) * 1000)))

    def passed(self) -> bool:
        """Whether the budget is used up."""
        return time.perf_counter() >= self.ends


def prove(
    design: Design,
    bounds: Bounds,
    *,
    rlimit: int = DEFAULT_RLIMIT,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    spacer_timeout_ms: int = DEFAULT_SPACER_TIMEOUT_MS,
    max_length: int | None = None,
    max_states: int = PROVE_MAX_STATES,
    max_seconds: float = PROVE_MAX_SECONDS,
) -> ProofReport:
    """Settle P1..P6 for a design: induction, then BMC, then Spacer, all within one budget.

    An exploration within `max_states` comes first: it gives BMC its bound (the explorer's
    depth + 1) and tells a proof about something that never happens (vacuous) from a real
    one. Whatever the deadline leaves open is `unknown`, never `proved`.
    """
    let_ctrl_c_through()
    started = time.perf_counter()
    deadline = _Deadline(started + max_seconds)
    names = tuple(p.name for p in PROPERTIES)
    exploration = explore(
        design, bounds, SearchOptions(max_states=max_states, max_seconds=max(1.0, max_seconds / 3))
    )
    if max_length is None:
        max_length = exploration.depth + 1
    prover = Prover(design, bounds, rlimit=rlimit, timeout_ms=deadline.left_ms(timeout_ms))
    inductive = {name: prover.prove(p) for name, p in zip(names, PROPERTIES, strict=True)}
    results = {
        n: _proved(r, prover.never_triggered(BY_NAME[n]))
        for n, r in inductive.items()
        if r.status == PROVED
    }
    open_names = [n for n in names if n not in results]
    if open_names:
        bounded = bmc(
            design,
            bounds,
            max_length,
            properties=open_names,
            rlimit=rlimit,
            timeout_ms=deadline.left_ms(timeout_ms),
            deadline=deadline.ends,
            covers_all=exploration.complete,
        )
        for name in open_names:
            results[name] = _after_bmc(
                design, bounds, bounded[name], inductive[name], rlimit, spacer_timeout_ms, deadline
            )
    ordered = {name: _vacuity(results[name], exploration) for name in names}
    return ProofReport(
        design, bounds, ordered, time.perf_counter() - started, _explored(exploration)
    )


def let_ctrl_c_through() -> None:
    """Keep z3 from catching Ctrl-C, which it would answer as `unknown` in a normal report.

    With its `ctrl_c` switched off, the interrupt reaches Python as KeyboardInterrupt when
    the running check returns, and no verdict is made of it.
    """
    z3.set_param("ctrl_c", False)


def _explored(exploration: Exploration) -> str:
    """What the proof's exploration covered."""
    if exploration.complete:
        return f"every reachable state explored ({exploration.states:,})"
    return (
        f"the exploration stopped at {exploration.states:,} states ({exploration.stopped_by}); "
        "bounded results cover runs up to its depth only"
    )


def _vacuity(result: PropertyResult, exploration: Exploration) -> PropertyResult:
    """A non-violation of a property that nothing in the model ever exercises is vacuous."""
    if result.status is VIOLATED or exploration.status(result.prop) is not Status.VACUOUS:
        return result
    return replace(
        result,
        status=VACUOUS,
        reason=(
            f"never exercised ({BY_NAME[result.prop].vacuity(exploration.design)}): "
            + ("z3's proof" if result.status is PROVED else "the check")
            + " says nothing about this design"
        ),
    )


def _proved(result: InductionResult, never_triggered: bool) -> PropertyResult:
    """An induction proof as a report row (vacuous when nothing it checks can happen)."""
    if never_triggered:
        return PropertyResult(
            result.prop,
            VACUOUS,
            result.method,
            invariant=result.invariant_text,
            reason=(
                "for every horizon, the invariant rules out every transition this property "
                "speaks of: it holds only because nothing it checks ever happens"
            ),
            seconds=result.seconds,
        )
    return PropertyResult(
        result.prop,
        PROVED,
        result.method,
        invariant=result.invariant_text,
        reason="for every horizon and grant count, with these workers, lease and writes",
        seconds=result.seconds,
    )


def _after_bmc(
    design: Design,
    bounds: Bounds,
    bounded: BmcResult,
    inductive: InductionResult,
    rlimit: int,
    spacer_timeout_ms: int,
    deadline: _Deadline,
) -> PropertyResult:
    """A property induction did not prove: violated by BMC, proved by Spacer, or less."""
    if bounded.status == VIOLATED:
        return PropertyResult(
            bounded.prop,
            VIOLATED,
            BMC,
            shortest=bounded.shortest,
            reason=f"a run of {bounded.shortest} transitions breaks it",
            seconds=bounded.seconds,
            actions=bounded.actions or (),
        )
    spacer = (
        prove_by_spacer(
            design,
            bounds,
            bounded.prop,
            rlimit=rlimit,
            timeout_ms=deadline.left_ms(spacer_timeout_ms),
        )
        if not deadline.passed()
        else InductionResult(bounded.prop, UNKNOWN, SPACER, reason="the time budget ran out")
    )
    seconds = bounded.seconds + inductive.seconds + spacer.seconds
    if spacer.status == PROVED:
        return PropertyResult(
            bounded.prop,
            PROVED,
            spacer.method,
            invariant=spacer.invariant_text,
            reason="Spacer's invariant, for every horizon and grant count",
            seconds=seconds,
        )
    cti = inductive.cti.describe() if inductive.cti else None
    unbounded = f"not proved for every horizon (induction: {inductive.reason}; {spacer.reason})"
    if cti:
        unbounded += f"; counterexample to induction: {cti}"
    if bounded.status == HOLDS_WITHIN_BOUNDS:
        how = (
            f"no violation in any run (BMC to {bounded.max_length} transitions)"
            if bounded.method == BMC
            else f"{bounded.method}: {bounded.reason}"
        )
        return PropertyResult(
            bounded.prop,
            HOLDS,
            bounded.method,
            reason=f"holds within the bounds ({how}); {unbounded}",
            seconds=seconds,
            cti=cti,
        )
    return PropertyResult(
        bounded.prop,
        UNKNOWN,
        inductive.method,
        reason=f"BMC: {bounded.reason}; {unbounded}",
        seconds=seconds,
        cti=cti,
    )


def report_to_json(report: ProofReport) -> dict[str, Any]:
    """The report as plain JSON data."""
    return {
        "design": report.design.to_dict(),
        "bounds": report.bounds.to_dict(),
        "seconds": round(report.seconds, 3),
        "explored": report.explored,
        "properties": {
            name: {
                "status": str(r.status),
                "holds": r.status.holds,
                "method": r.method,
                "shortest": r.shortest,
                "invariant": r.invariant,
                "reason": r.reason,
                "cti": r.cti,
                "seconds": round(r.seconds, 3),
                "actions": [a.to_dict() for a in r.actions],
            }
            for name, r in report.properties.items()
        },
    }


def format_report(report: ProofReport) -> str:
    """One row per property (status, method, shortest, time), then the invariants and reasons."""
    lines = [
        f"{report.design.label()}  {report.bounds.short()}",
        f"({report.explored})",
        f"{'property':<9}{'status':<10}{'method':<13}{'shortest':>9}{'seconds':>9}",
    ]
    for name, r in report.properties.items():
        shortest = "-" if r.shortest is None else str(r.shortest)
        status = str(r.status)
        lines.append(f"{name:<9}{status:<10}{r.method:<13}{shortest:>9}{r.seconds:>9.2f}")
    for name, r in report.properties.items():
        if r.invariant:
            lines.append(f"{name} invariant: {r.invariant}")
        if r.status in (UNKNOWN, HOLDS, VACUOUS) and r.reason:
            said = "holds vacuously" if r.status is VACUOUS else str(r.status)
            lines.append(f"{name} {said}: {r.reason}")
        if r.actions:
            lines.append(f"{name} counterexample: " + ", ".join(a.label() for a in r.actions))
    lines.append(f"total {report.seconds:.2f} s")
    return "\n".join(lines)


def prove_receiver_only(
    rlimit: int = DEFAULT_RLIMIT, timeout_ms: int = DEFAULT_TIMEOUT_MS
) -> ReceiverReport:
    """The receiver's rule alone: the atomic proof and the non-atomic counterexample."""
    let_ctrl_c_through()
    return prove_receiver(rlimit, timeout_ms)


def receiver_report_to_json(report: ReceiverReport) -> dict[str, Any]:
    """The receiver report as plain JSON data."""
    return {
        "proved": report.proved,
        "obligations": [
            {"claim": o.claim, "status": o.status, "detail": o.detail} for o in report.obligations
        ],
        "nonatomic": {
            "tokens": {str(w): t for w, t in report.tokens.items()},
            "steps": [
                {
                    **s.action.to_dict(),
                    "token": s.token,
                    "hwm": s.hwm,
                    "last": s.last,
                    "breaks_p1": s.breaks_p1,
                }
                for s in report.steps
            ],
        },
        "seconds": round(report.seconds, 3),
    }


def format_receiver_report(report: ReceiverReport) -> str:
    """The receiver proof's obligations, then the non-atomic interleaving as sentences."""
    verdict = "PROVED" if report.proved else "NOT PROVED"
    lines = [
        f"Fenced receiver (atomic check), P1 for any workers and any token sequence: {verdict}",
        *(f"  [{o.status}] {o.claim}" for o in report.obligations),
        "",
        "Non-atomic receiver (fenced-nonatomic): z3's counterexample",
        "  in flight: " + ", ".join(f"W{w} carries token {t}" for w, t in report.tokens.items()),
    ]
    for number, s in enumerate(report.steps, start=1):
        what = "check passes" if s.action.name is ActionKind.CHECK else "write lands"
        tail = "  <- P1 broken: a lower token lands after a higher one" if s.breaks_p1 else ""
        lines.append(
            f"  {number}. {s.action.label()}: token {s.token}, {what}; "
            f"now hwm={s.hwm}, last={s.last}{tail}"
        )
    lines.append(f"{report.seconds:.2f} s")
    return "\n".join(lines)
