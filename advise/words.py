"""The advice in words: the same sentences on the command line, on the page and in the review note.

Every sentence is made from the advice it speaks of: which properties a fix makes hold
(put to the test), which it leaves untested and why (the design's own reason), what stays
violated, and what a change that hides the bug costs, as the model found it.
"""

from __future__ import annotations

from collections.abc import Sequence

from advise.advice import (
    GAP_PROPERTY,
    MAX_NEIGHBOURS,
    NEIGHBOUR_STATES,
    Advice,
    Fix,
    Hiding,
    Tier,
    changes_in_words,
)
from model.properties import BY_NAME
from model.verdicts import PropertyVerdict, Status, vacuity_sentence


def listed(names: Sequence[str]) -> str:
    """`P1`, `P1 and P3`, `P1, P3 and P4`."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _hold(names: Sequence[str]) -> str:
    """`P1 holds`, `P1 and P3 hold`."""
    return f"{listed(names)} {'holds' if len(names) == 1 else 'hold'}"


def fix_heading(number: int, fix: Fix) -> str:
    """`1. Complete fencing, in the parts you already run`."""
    where = (
        "in the parts you already run" if not fix.service_changes else "with a change of service"
    )
    return f"{number}. {fix.tier.label.capitalize()}, {where}"


def gap_sentence(advice: Advice, fix: Fix | None = None) -> str:
    """What P2 needs: a store that asks the lock service, and which listed fix does that."""
    closing = [n for n, found in enumerate(advice.fixes, 1) if found.tier is Tier.CLOSES_GAP]
    where = f" (fix {closing[0]})" if closing else ""
    opened = fix is not None and advice.exploration.status(GAP_PROPERTY) is not Status.VIOLATED
    how = (
        "is then violated (it held only because the lock was never handed on)"
        if opened
        else "stays violated"
    )
    return (
        f"{GAP_PROPERTY} {how}: a late write can still land in the gap after the old lease "
        "ends and before the new holder's first write; only a store that asks the lock "
        f"service in the same step as the write closes it{where}"
    )


def fix_outcome(fix: Fix, advice: Advice) -> tuple[str, ...]:
    """What holds after the fix (put to the test, a holder may crash), what holds only
    vacuously and why, and what stays violated (the gap said as such)."""
    sentences = []
    if fix.holds:
        sentences.append(f"Then {_hold(fix.holds)}, with a holder that may crash")
    sentences += [vacuity_sentence(name, fix.design) for name in fix.vacuous]
    still = [name for name in fix.still_violated if name != GAP_PROPERTY]
    if still:
        sentences.append(f"still violated: {listed(still)}")
    if GAP_PROPERTY in fix.still_violated:
        sentences.append(gap_sentence(advice, fix))
    return tuple(sentences)


def hiding_sentence(hiding: Hiding) -> str:
    """A change that hides the bug, what it seems to repair and what it costs."""
    part = hiding.change.new or hiding.change.old
    assert part is not None
    costs = [part.cost] if part.cost else []
    if hiding.broken:
        costs.append(f"{listed(hiding.broken)} then violated")
    if hiding.untested:
        costs.append(f"{listed(hiding.untested)} no longer put to the test")
    return (
        f"{hiding.change.build()}: {listed(hiding.repaired)} would no longer be violated, "
        f"but {'; '.join(costs)}"
    )


def unrepaired_sentences(advice: Advice) -> tuple[str, ...]:
    """The violated properties no listed fix makes hold (the gap said on its own)."""
    return tuple(
        f"No change of {changes_in_words()} makes {name} hold."
        for name in advice.unrepaired
        if name != GAP_PROPERTY
    )


def verdict_words(name: str, verdict: PropertyVerdict, advice: Advice) -> str:
    """One property's verdict for the stack, vacuous said as such with its reason."""
    if verdict.status is Status.VIOLATED:
        return f"violated (shortest run: {verdict.shortest} steps)"
    if verdict.status is Status.VACUOUS:
        reason = BY_NAME[name].vacuity(advice.design)
        return f"holds vacuously: {reason}"
    return verdict.status.word


def all_hold(advice: Advice) -> str | None:
    """The good news when the stack violates nothing in a finished exploration (None else),
    naming what was never put to the test."""
    if advice.violated or not advice.exploration.complete:
        return None
    untested = [n for n, v in advice.exploration.verdicts.items() if v.status is Status.VACUOUS]
    tested = [n for n in advice.exploration.verdicts if n not in untested]
    sentence = (
        f"{_hold(tested)} at these bounds, with a holder that may crash: no change is needed."
    )
    if untested:
        sentence += " " + "; ".join(vacuity_sentence(n, advice.design) for n in untested) + "."
    return sentence


def no_fix(advice: Advice) -> str | None:
    """What is said when the advisor found no fix at all (None when it found one)."""
    if advice.fixes or not advice.violated:
        return None
    return f"No change of {changes_in_words()} of the catalogue makes a violated property hold."


def unexplored_sentence(advice: Advice) -> str | None:
    """How many neighbouring designs the advice left out, and why (None when none)."""
    if not advice.unexplored:
        return None
    were = "designs were" if advice.unexplored > 1 else "design was"
    return (
        f"{advice.unexplored} neighbouring {were} not checked: the advice explores at most "
        f"{MAX_NEIGHBOURS} designs of at most {NEIGHBOUR_STATES:,} states each, so that it is "
        "the same on every machine."
    )
