"""Induction with unbounded time and grants: what must be proved is, what is false is not."""

from __future__ import annotations

import pytest
import z3

from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.layout import Vars
from model.presets import PRESETS
from model.properties import BY_NAME
from model.system import System
from proofs.induction import PROVED, UNKNOWN, Prover, prove_by_spacer
from proofs.invariants import (
    CATALOG,
    Context,
    crashed_holders_lease_ends_in_time,
    hwm_covers_last,
    lease_ends_within_l,
)

MUST_PROVE = {
    "fencing": ("P1", "P3"),
    "rmw-lease-aware": ("P1", "P2", "P3", "P5"),
    "lease-aware-receiver": ("P2",),
    "keepalive-fencing": ("P1", "P3", "P6"),
    "keepalive-lease": ("P6",),
}


def bounds_with(workers: int) -> Bounds:
    """The reference bounds with another team size (time and grants are lifted anyway)."""
    return Bounds(workers, REFERENCE_BOUNDS.lease, 6, 3, REFERENCE_BOUNDS.writes)


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("name", sorted(MUST_PROVE))
def test_required_properties_are_proved(name: str, workers: int) -> None:
    prover = Prover(PRESETS[name].design, bounds_with(workers))
    for prop in MUST_PROVE[name]:
        result = prover.prove(BY_NAME[prop])
        assert result.status == PROVED, (prop, result.reason, result.cti)
        assert result.invariant_text


def test_fencing_p1_needs_only_last_below_hwm() -> None:
    result = Prover(Design(), bounds_with(2)).prove(BY_NAME["P1"])
    assert result.invariant[0] == "last ≤ hwm"
    assert result.reasons[0] == hwm_covers_last.__doc__


def test_a_weakened_design_is_not_proved_and_gets_a_real_cti() -> None:
    """Without fencing (receiver none), P1 is false: induction must not prove it."""
    design = Design(receiver="none")
    result = Prover(design, bounds_with(2)).prove(BY_NAME["P1"])
    assert result.status == UNKNOWN and result.cti is not None
    system = System(design, REFERENCE_BOUNDS)
    state = tuple(result.cti.state.get(c, 0) for c in system.layout.columns)
    rule = system.rule_for(result.cti.action)
    assert system.is_enabled(state, rule) and "P1" in system.violations(state, rule)


def test_without_the_strengthening_p3_does_not_close() -> None:
    """Only column domains (no catalog): the fencing P3 proof fails and says where."""
    result = Prover(Design(), bounds_with(2), catalog=()).prove(BY_NAME["P3"])
    assert result.status == UNKNOWN and result.cti is not None


def test_every_catalog_entry_says_why() -> None:
    assert all(builder.__doc__ and builder.__doc__.strip() for builder in CATALOG)


def test_spacer_finds_an_invariant_for_fencing_p1() -> None:
    result = prove_by_spacer(Design(), bounds_with(2), "P1", timeout_ms=30_000)
    assert result.status == PROVED and result.invariant_text


def test_spacer_does_not_prove_a_false_property() -> None:
    result = prove_by_spacer(Design(receiver="none"), bounds_with(2), "P2", timeout_ms=30_000)
    assert result.status == UNKNOWN


def test_random_tokens_are_not_proved_by_an_actionless_unbounded_model() -> None:
    """Unbounded random tokens have no Acquire in the model: induction must refuse, not prove."""
    result = Prover(PRESETS["random-token"].design, bounds_with(2)).prove(BY_NAME["P3"])
    assert result.status == UNKNOWN and result.reason and "Acquire" in result.reason


def impossible_start(s: Vars, c: Context) -> z3.BoolRef:
    """A candidate that is inductive (nothing makes `now` smaller) but false initially."""
    return s.now >= 100


def test_a_candidate_false_in_the_initial_state_is_never_used() -> None:
    """Houdini keeps only candidates that hold initially: `now ≥ 100` is closed under every
    step and would exclude every early violation, but it is false at the start, so the
    lease-only design's P2 is still not proved."""
    prover = Prover(PRESETS["lease-only"].design, bounds_with(2), catalog=(impossible_start,))
    kept = {prover.lemmas[i].name for i in prover.kept}
    assert "impossible_start" not in kept
    assert prover.prove(BY_NAME["P2"]).status == UNKNOWN


def nothing_ever_ticks(s: Vars, c: Context) -> z3.BoolRef:
    """A candidate true at the start that the first Tick breaks: not inductive."""
    return s.now == 0


def test_houdini_drops_a_candidate_that_a_step_breaks() -> None:
    """`now = 0` holds initially and would rule out every expired lease, so it would "prove"
    the lease-only design's P2; Houdini must find the Tick that breaks it and drop it."""
    prover = Prover(
        PRESETS["lease-only"].design, bounds_with(2), catalog=(nothing_ever_ticks, hwm_covers_last)
    )
    assert "nothing_ever_ticks" not in {prover.lemmas[i].name for i in prover.kept}
    assert prover.prove(BY_NAME["P2"]).status == UNKNOWN


@pytest.mark.slow
def test_spacer_results_say_what_and_how() -> None:
    """Every field of Spacer's answers: the property, the method, the invariant or the reason."""
    proved = prove_by_spacer(Design(), bounds_with(2), "P1", timeout_ms=30_000)
    assert (proved.prop, proved.status, proved.method) == ("P1", PROVED, "spacer")
    assert proved.invariant[-1] == "" and len(proved.invariant) >= 2 and proved.seconds > 0
    refuted = prove_by_spacer(Design(receiver="none"), bounds_with(2), "P2", timeout_ms=30_000)
    assert (refuted.prop, refuted.status, refuted.method) == ("P2", UNKNOWN, "spacer")
    assert refuted.reason == (
        "Spacer found a counterexample from the initial state with time and grants unbounded"
    )
    assert refuted.seconds > 0 and refuted.invariant_text is None


@pytest.mark.parametrize(
    "design",
    [
        Design(renew=True, crashes=1),
        Design(receiver="none", renew=True, crashes=2),
        Design(receiver="lease-aware", worker_check=True, renew=True, crashes=1),
        Design(crashes=1),
    ],
    ids=["keepalive-fencing", "two-crashes", "lease-aware-checked", "no-renewals"],
)
def test_a_lease_frees_a_crashed_holders_lock_for_every_horizon(design: Design) -> None:
    """P6 is proved with two lemmas, each with its reason in words: no lease ends more than L
    ticks from now, and a crashed holder's lease ends at most L ticks after the crash."""
    result = Prover(design, bounds_with(2)).prove(BY_NAME["P6"])
    assert result.status == PROVED, (result.reason, result.cti)
    assert result.invariant[:2] == (
        "expires ≤ (now + 2)",
        "((down[1] ≠ 0 ∧ holder = 1) ⇒ expires < (down[1] + 2)) ∧ "
        "((down[2] ≠ 0 ∧ holder = 2) ⇒ expires < (down[2] + 2))",
    )
    assert result.reasons[:2] == (
        lease_ends_within_l.__doc__,
        crashed_holders_lease_ends_in_time.__doc__,
    )


def test_without_the_crash_lemma_p6_does_not_close() -> None:
    """The strengthening is needed: with the column domains alone there is a counterexample
    to induction, a Tick from a state where the crashed holder's lease ends too late."""
    result = Prover(Design(renew=True, crashes=1), bounds_with(2), catalog=()).prove(BY_NAME["P6"])
    assert result.status == UNKNOWN and result.cti is not None
    assert result.cti.action.name == "Tick"


def test_a_lock_that_never_expires_is_not_proved_to_free_a_crashed_holder() -> None:
    """Without a lease P6 is false, so induction must not prove it; its counterexample to
    induction is a Tick that breaks P6, and bounded model checking finds the real run."""
    from proofs.bmc import VIOLATED, bmc

    design = PRESETS["lock-without-lease"].design
    result = Prover(design, bounds_with(2)).prove(BY_NAME["P6"])
    assert result.status == UNKNOWN and result.cti is not None
    system = System(design, REFERENCE_BOUNDS)
    state = tuple(result.cti.state.get(c, 0) for c in system.layout.columns)
    rule = system.rule_for(result.cti.action)
    assert system.is_enabled(state, rule) and "P6" in system.violations(state, rule)
    found = bmc(design, REFERENCE_BOUNDS, properties=["P6"])["P6"]
    assert (found.status, found.shortest) == (VIOLATED, REFERENCE_BOUNDS.lease + 3)
