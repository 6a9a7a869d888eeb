"""Advice for a stack: its verdicts, its counterexamples in its words, and the changes that fix it.

The advisor asks the model only. It checks the stack as it really runs (a holder may
crash), then the designs a few catalogue changes away, in a fixed order: changes that stay
in the stack's own lock service and store first, fewest changes first. A change is a fix
when every property it touches ends up holding (never merely vacuous) and none that held
breaks; fixes are ranked complete first (everything a fencing token can give: P1, P3, P4,
P5, P6), then those that also close the gap (P2), then partial ones. Changes that trade
liveness or availability for safety are never fixes: they are told apart, with what they
cost. The search is bounded by counts (designs and states), never by time, so the same
stack and bounds give the same advice on any machine.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from itertools import combinations, product
from typing import Any, Final

from advise.catalogue import (
    CATALOGUE,
    Part,
    Role,
    Service,
    Slot,
    Stack,
    parts_of,
    same_service,
)
from model.check.explorer import DEFAULT_MAX_STATES, Exploration, explore
from model.check.search import Expander, SearchOptions, Tuning, Visitor
from model.design import REFERENCE_BOUNDS, Bounds, Design, DesignError
from model.formats.trace import Trace, replay
from model.properties import BY_NAME, PROPERTY_NAMES
from model.verdicts import Status

MOST_CHANGES: Final = 3
"""The most parts of the catalogue one fix changes."""
NUMBER_WORDS: Final = ("one", "two", "three", "four")
MAX_FIXES: Final = 6
"""How many fixes an advice lists at most."""
MAX_NEIGHBOURS: Final = 64
"""Neighbouring designs the advice explores at most (the stack's own is not counted): a
count, not a time, so the answer is the same on a busy machine."""
NEIGHBOUR_STATES: Final = 2_000_000
"""States one neighbouring design may have before it counts as not settled."""
ADVICE_SORTED_UP_TO: Final = 1 << 22
"""The advice's designs keep their seen states in one sorted array (numpy alone): at these
sizes that costs less than loading the compiled hash tables."""

FENCING_PROPERTIES: Final = ("P1", "P3", "P4", "P5", "P6")
"""Everything a fencing token can give, checked with a holder that may crash."""
GAP_PROPERTY: Final = "P2"
"""The write in the gap after a lease ends: only a store that asks the lock service closes it."""


class Tier(IntEnum):
    """How much a fix gives, best first."""

    COMPLETE = 0
    """Everything a fencing token can give holds; the gap (P2) remains."""
    CLOSES_GAP = 1
    """Everything holds, the gap too: the store asks the lock service."""
    PARTIAL = 2
    """Some violated properties hold after it, not all of the fencing ones."""

    @property
    def label(self) -> str:
        """The tier in a few words, for the list of fixes."""
        return _TIER_LABELS[self]


_TIER_LABELS: Final = {
    Tier.COMPLETE: "complete fencing",
    Tier.CLOSES_GAP: "complete, and closes the gap",
    Tier.PARTIAL: "partial",
}


@dataclass(frozen=True)
class Change:
    """One catalogue change: a part replaced, added (`old` None) or dropped (`new` None).

    `also` lists other parts of the same service that mean the same in the model (a
    conditional UPDATE or SELECT … FOR UPDATE): an engineer may build either.
    """

    slot: Slot
    old: Part | None
    new: Part | None
    also: tuple[Part, ...] = ()

    @property
    def dimension(self) -> str:
        """What the change touches: the token, the resource, or one practice."""
        if self.slot.single:
            return str(self.slot)
        chosen = self.new or self.old
        assert chosen is not None
        return chosen.id

    def apply(self, stack: Stack) -> Stack:
        """The stack after this change."""
        if self.new is None:
            assert self.old is not None
            return stack.without(self.old)
        return stack.with_part(self.new)

    def moves_to(self) -> Service | None:
        """The other system a token or resource change moves to (None when it stays in the
        same lock service or store)."""
        if self.old is None or self.new is None or not self.slot.single:
            return None
        if same_service(self.old.service, self.new.service):
            return None
        return self.new.system

    def build(self) -> str:
        """What the change means to build, in the stack's words; a change of service says
        so first (`move the data into etcd: …`)."""
        if self.new is None:
            assert self.old is not None
            return self.old.drop or f"stop: {self.old.words}"
        moved = self.moves_to()
        head = ""
        if moved is not None:
            head = (
                f"take the lock from {moved.name}: "
                if self.slot is Slot.TOKEN
                else f"move the data into {moved.name}: "
            )
        text = self.new.build
        if self.old is not None:
            text += f", instead of {_the(self.old)}"
        if self.also:
            text += " (or, just as good: " + "; ".join(p.noun for p in self.also) + ")"
        return head + text

    @property
    def snippet(self) -> str:
        """What the change looks like in the service's own terms ("" when there is none)."""
        return self.new.snippet if self.new is not None else ""

    def to_dict(self) -> dict[str, Any]:
        """`{"choice", "from", "to", "moves_to"}` with catalogue ids (None for nothing)."""
        moved = self.moves_to()
        return {
            "choice": str(self.slot),
            "from": self.old.id if self.old else None,
            "to": self.new.id if self.new else None,
            "also": [p.id for p in self.also],
            "moves_to": moved.id if moved else None,
        }


def _the(old: Part) -> str:
    """The replaced part in a few words: `the lease ID`, `SELECT, then a separate UPDATE`."""
    if old.slot is Slot.TOKEN:
        return f"the {old.noun or old.words}"
    return old.noun or old.words


@dataclass(frozen=True)
class Fix:
    """A set of changes, the design it gives and its exploration, and what it achieves."""

    changes: tuple[Change, ...]
    stack: Stack
    design: Design
    exploration: Exploration
    tier: Tier
    repaired: tuple[str, ...]

    @property
    def service_changes(self) -> int:
        """How many of its changes move to another lock service or store."""
        return sum(change.moves_to() is not None for change in self.changes)

    def names(self, status: Status) -> tuple[str, ...]:
        """The properties with this status after the fix, in order."""
        return tuple(n for n in PROPERTY_NAMES if self.exploration.status(n) is status)

    @property
    def holds(self) -> tuple[str, ...]:
        """Properties that hold, put to the test (never vacuously)."""
        return self.names(Status.HOLDS)

    @property
    def vacuous(self) -> tuple[str, ...]:
        """Properties nothing in the fixed design puts to the test."""
        return self.names(Status.VACUOUS)

    @property
    def still_violated(self) -> tuple[str, ...]:
        """Properties some run still breaks."""
        return self.names(Status.VIOLATED)

    def to_dict(self) -> dict[str, Any]:
        """The fix as JSON."""
        return {
            "kind": self.tier.name.lower(),
            "changes": [change.to_dict() for change in self.changes],
            "build": [change.build() for change in self.changes],
            "snippets": [change.snippet for change in self.changes],
            "stack": self.stack.ids(),
            "design": self.design.to_dict(),
            "repaired": list(self.repaired),
            "holds": list(self.holds),
            "vacuous": list(self.vacuous),
            "still_violated": list(self.still_violated),
        }


@dataclass(frozen=True)
class Hiding:
    """A change that makes violated properties hold by giving up something else (liveness,
    availability): never a fix, shown with what the model says it costs."""

    change: Change
    exploration: Exploration
    repaired: tuple[str, ...]
    broken: tuple[str, ...]
    """Properties that held in the stack and break after the change."""
    untested: tuple[str, ...]
    """Properties that the change leaves with nothing to test (vacuous)."""

    def to_dict(self) -> dict[str, Any]:
        """The hiding change as JSON."""
        part = self.change.new or self.change.old
        assert part is not None
        return {
            "change": self.change.to_dict(),
            "build": self.change.build(),
            "cost": part.cost,
            "repaired": list(self.repaired),
            "broken": list(self.broken),
            "vacuous": list(self.untested),
        }


@dataclass(frozen=True)
class Advice:
    """What the model says of a stack at some bounds, and what to change."""

    stack: Stack
    design: Design
    bounds: Bounds
    exploration: Exploration
    stories: dict[str, tuple[str, ...]]
    fixes: tuple[Fix, ...]
    hiding: tuple[Hiding, ...] = ()
    unexplored: int = 0
    """Neighbouring designs left out: past `MAX_NEIGHBOURS`, or larger than its state budget."""
    explored: int = 0
    """Neighbouring designs explored."""
    traces: dict[str, Trace] = field(default_factory=dict)

    @property
    def violated(self) -> tuple[str, ...]:
        """The stack's violated properties, P1 first."""
        return _violated(self.exploration)

    @property
    def unrepaired(self) -> tuple[str, ...]:
        """Violated properties no listed fix makes hold."""
        repaired = {name for fix in self.fixes for name in fix.repaired}
        return tuple(name for name in self.violated if name not in repaired)

    def to_dict(self) -> dict[str, Any]:
        """The `fencing advise --json` object."""
        return {
            "stack": self.stack.ids(),
            "design": self.design.to_dict(),
            "bounds": self.bounds.to_dict(),
            "complete": self.exploration.complete,
            "properties": {
                name: {
                    "status": str(verdict.status),
                    "shortest": verdict.shortest,
                    "vacuous_because": (
                        BY_NAME[name].vacuity(self.design)
                        if verdict.status is Status.VACUOUS
                        else None
                    ),
                    "story": list(self.stories.get(name, ())),
                }
                for name, verdict in self.exploration.verdicts.items()
            },
            "fixes": [fix.to_dict() for fix in self.fixes],
            "hiding": [hiding.to_dict() for hiding in self.hiding],
            "unrepaired": list(self.unrepaired),
            "neighbours_explored": self.explored,
            "neighbours_unexplored": self.unexplored,
        }


def _violated(result: Exploration) -> tuple[str, ...]:
    """Names of the violated properties of an exploration."""
    return tuple(n for n, v in result.verdicts.items() if v.status is Status.VIOLATED)


def story(stack: Stack, trace: Trace, name: str) -> tuple[str, ...]:
    """A property's counterexample told for this stack: a summary, then the model's steps."""
    step = trace.first_violation(name)
    assert step is not None, f"the counterexample to {name} does not violate it"
    reason = step.reason(name) or f"{name} violated"
    noun = stack.token.noun or "token"
    summary = (
        f"{name} {BY_NAME[name].title}: with {stack.token.words} as the token (each 'token' "
        f"below is your {noun}) and {stack.resource.noun or stack.resource.words}, the run "
        f"breaks it at step {step.number} of {len(trace.steps)}. {reason}"
    )
    return (summary, *(f"{s.number}. [{s.actor}] {s.sentence}" for s in trace.steps))


# ----- the changes a fix may make ------------------------------------------------------


def _best(candidates: Sequence[Part], stack: Stack) -> list[Part]:
    """The candidates that fit the stack's lock service (a store that asks a lock asks the
    stack's), those of the stack's own service first, catalogue order kept."""
    lock = stack.lock_service
    fitting = [
        p for p in candidates if not p.checks_lock_of or same_service(p.checks_lock_of, lock)
    ]
    return sorted(fitting, key=lambda p: not same_service(p.service, _service_of(p, stack)))


def _service_of(part: Part, stack: Stack) -> str:
    """The stack's service a part of this slot would replace (its lock service or store)."""
    return stack.lock_service if part.slot is Slot.TOKEN else stack.store


def _replacements(stack: Stack, slot: Slot, targets: Sequence[Part]) -> list[Change]:
    """One change per distinct meaning in the model among the targets: the best-fitting part,
    with the same service's parts of that meaning as alternatives."""
    current = stack.token if slot is Slot.TOKEN else stack.resource
    changes = []
    seen: list[dict[str, Any]] = []
    for chosen in _best(targets, stack):
        meaning = dict(chosen.options)
        if meaning in seen or meaning == dict(current.options):
            continue
        seen.append(meaning)
        also = tuple(
            p
            for p in targets
            if p is not chosen and dict(p.options) == meaning and p.service == chosen.service
        )
        changes.append(Change(slot, current, chosen, also))
    return changes


def dimension_moves(stack: Stack) -> list[list[Change]]:
    """For each part of the stack a fix may touch, the changes it may make there."""
    tokens = [p for p in parts_of(Slot.TOKEN) if p.orders_grants and p.fix_may_choose]
    resources = [p for p in parts_of(Slot.RESOURCE) if p.checks_atomically and p.fix_may_choose]
    moves = [_replacements(stack, Slot.TOKEN, tokens)]
    moves.append(_replacements(stack, Slot.RESOURCE, resources))
    for entry in CATALOGUE:
        if entry.slot.single or entry.role in (Role.ASSUMPTION, Role.APPLICATION):
            continue
        if entry in stack.practices:
            moves.append([Change(entry.slot, entry, None)])
        elif entry.fix_may_choose:
            moves.append([Change(entry.slot, None, entry)])
    return [choices for choices in moves if choices]


def candidate_changes(stack: Stack) -> list[tuple[Change, ...]]:
    """Every set of at most `MOST_CHANGES` changes, one per part touched, in the order they
    are tried: fewest changes of service first, then fewest changes, then catalogue order."""
    moves = dimension_moves(stack)
    found: list[tuple[int, int, int, tuple[Change, ...]]] = []
    for size in range(1, MOST_CHANGES + 1):
        for dimensions in combinations(range(len(moves)), size):
            for chosen in product(*(moves[d] for d in dimensions)):
                moved = sum(change.moves_to() is not None for change in chosen)
                found.append((moved, size, len(found), chosen))
    found.sort(key=lambda entry: entry[:3])
    return [entry[3] for entry in found]


def hiding_changes(stack: Stack) -> list[Change]:
    """The changes that trade liveness or availability for safety, as they apply here."""
    changes = []
    for entry in CATALOGUE:
        if entry.role is not Role.HIDES:
            continue
        if entry.slot is Slot.RESOURCE and entry is not stack.resource:
            changes.append(Change(Slot.RESOURCE, stack.resource, entry))
        elif not entry.slot.single and entry not in stack.practices:
            changes.append(Change(entry.slot, None, entry))
    return changes


def changes_in_words() -> str:
    """How many parts a fix may change, in words: `one, two or three parts`."""
    words = NUMBER_WORDS[:MOST_CHANGES]
    listed = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
    return f"{listed} part{'s' if MOST_CHANGES > 1 else ''}"


# ----- exploring and judging ------------------------------------------------------------

MAX_REMEMBERED: Final = 512
"""Finished explorations kept for later advice (a few kilobytes each)."""
_FINISHED: dict[tuple[Design, Bounds, int], Exploration] = {}
_FINISHED_LOCK = threading.Lock()


def explore_settled(
    design: Design, bounds: Bounds, max_states: int, visitors: Sequence[Visitor] = ()
) -> Exploration:
    """The design's exploration within a state budget and no time budget, on one thread by
    numpy (remembered: it depends only on the design, the bounds and the budget)."""
    key = (design, bounds, max_states)
    known = _FINISHED.get(key)
    if known is not None:
        return known
    design.check_fits(bounds)
    options = SearchOptions(
        max_states=max_states,
        max_seconds=math.inf,
        threads=1,
        expander=Expander.NUMPY,
        tuning=Tuning(sorted_up_to=ADVICE_SORTED_UP_TO),
    )
    result = explore(design, bounds, options, visitors)
    with _FINISHED_LOCK:
        if len(_FINISHED) >= MAX_REMEMBERED:
            _FINISHED.pop(next(iter(_FINISHED)))
        _FINISHED[key] = result
    return result


def _acceptable(before: Status, after: Status) -> bool:
    """Whether a property's verdict may go from `before` to `after` under a fix: nothing
    that held breaks, and nothing is made to hold by no longer being tested."""
    if after is Status.HOLDS:
        return True
    if after is Status.VIOLATED:
        return before is Status.VIOLATED
    if after is Status.VACUOUS:
        return before is Status.VACUOUS
    return False


def repaired_by(base: Exploration, after: Exploration) -> tuple[str, ...] | None:
    """The violated properties that hold (put to the test) after a change, or None when the
    change is no fix: it breaks one that held, hides one, or left something unsettled.

    The one exception is the gap (P2): a complete fix may open it where the stack kept it
    without asking the lock service (only by never handing the lock on), since no fencing
    token can close it."""
    if not after.complete:
        return None
    for name in PROPERTY_NAMES:
        if _acceptable(base.status(name), after.status(name)):
            continue
        if name == GAP_PROPERTY and may_open_gap(base.design) and tier_of(after) is Tier.COMPLETE:
            continue
        return None
    repaired = tuple(
        n
        for n in PROPERTY_NAMES
        if base.status(n) is Status.VIOLATED and after.status(n) is Status.HOLDS
    )
    return repaired or None


def may_open_gap(design: Design) -> bool:
    """Whether a complete fix may leave the gap open: the stack's store does not ask the
    lock service (its receiver's own row says so), so whatever kept P2 was no check."""
    return not design.receiver.row.test.row.asks_lock_service


def tier_of(after: Exploration) -> Tier:
    """Complete when every fencing property holds, put to the test (P5 may be untested only
    where the workers never read); closing the gap as well when P2 holds too."""
    design = after.design
    complete = all(
        after.status(name) is Status.HOLDS
        or (after.status(name) is Status.VACUOUS and not BY_NAME[name].applies(design))
        for name in FENCING_PROPERTIES
    )
    if not complete:
        return Tier.PARTIAL
    return Tier.CLOSES_GAP if after.status(GAP_PROPERTY) is Status.HOLDS else Tier.COMPLETE


def _design_of(stack: Stack) -> Design | None:
    """The stack's design, or None when its parts do not fit together."""
    try:
        return stack.design()
    except DesignError:
        return None


class _Hopeless(Exception):
    """A candidate's exploration found violations that mean it will not be listed."""


@dataclass
class _Watch(Visitor):
    """Stops a candidate's exploration as soon as its violations make it hopeless."""

    hopeless: Callable[[frozenset[str]], bool]
    violated: set[str] = field(default_factory=set)

    def on_violation(self, name: str, length: int) -> None:
        self.violated.add(name)
        if self.hopeless(frozenset(self.violated)):
            raise _Hopeless


def best_possible_tier(violated: frozenset[str]) -> Tier:
    """The best tier a design can still reach once these properties are violated."""
    if violated & set(FENCING_PROPERTIES):
        return Tier.PARTIAL
    return Tier.COMPLETE


def beats(better: Fix, size: int, moved: int, still: frozenset[str], tier: Tier) -> bool:
    """Whether a fix ranked no lower, with no more changes (of service or at all) and no
    more left violated, makes another not worth listing."""
    return (
        better.tier <= tier
        and len(better.changes) <= size
        and better.service_changes <= moved
        and set(better.still_violated) <= still
    )


@dataclass
class _Search:
    """The neighbour search's state: what was explored, what was found, what was left."""

    stack: Stack
    base: Exploration
    bounds: Bounds
    explored: int = 0
    unexplored: int = 0
    seen: set[Design] = field(default_factory=set)
    fixes: list[Fix] = field(default_factory=list)

    def hopeless(self, changes: tuple[Change, ...], violated: frozenset[str]) -> bool:
        """Whether a candidate with these violations so far cannot be a listed fix: it breaks
        what held, repairs nothing, or an already found fix beats whatever it can become."""
        broken = set(_violated(self.base))
        newly = violated - broken
        if violated >= broken or newly - {GAP_PROPERTY}:
            return True
        if newly and (violated & set(FENCING_PROPERTIES) or not may_open_gap(self.base.design)):
            return True  # the gap may open only under a complete fix of a store that never asked
        moved = sum(change.moves_to() is not None for change in changes)
        tier = best_possible_tier(violated)
        return any(beats(fix, len(changes), moved, violated, tier) for fix in self.fixes)

    def consider(self, changes: tuple[Change, ...]) -> None:
        """Explore the design a set of changes gives (once per design) and keep it if it fixes."""
        changed = self.stack
        for change in changes:
            changed = change.apply(changed)
        design = _design_of(changed)
        if design is None or design in self.seen:
            return
        self.seen.add(design)
        if self.explored >= MAX_NEIGHBOURS:
            self.unexplored += 1
            return
        self.explored += 1
        watch = _Watch(lambda violated: self.hopeless(changes, violated))
        try:
            after = explore_settled(design, self.bounds, NEIGHBOUR_STATES, (watch,))
        except _Hopeless:
            return
        if not after.complete:
            self.unexplored += 1
            return
        repaired = repaired_by(self.base, after)
        if repaired is not None:
            fix = Fix(changes, changed, design, after, tier_of(after), repaired)
            self.fixes.append(fix)


def _rank(fix: Fix) -> tuple[bool, int, int, int]:
    """Complete fixes before partial ones; among them, fewest changes of service first (the
    parts the engineer already runs), then complete fencing before closing the gap as well,
    then fewest changes."""
    return (fix.tier is Tier.PARTIAL, fix.service_changes, fix.tier, len(fix.changes))


def best_fixes(fixes: Sequence[Fix]) -> tuple[Fix, ...]:
    """The fixes in rank order, leaving out one that a better-ranked fix beats (as few
    changes, as few changes of service, no more left violated), at most `MAX_FIXES`."""
    kept: list[Fix] = []
    for fix in sorted(fixes, key=_rank):
        still = frozenset(fix.still_violated)
        size, moved = len(fix.changes), fix.service_changes
        if not any(beats(other, size, moved, still, fix.tier) for other in kept):
            kept.append(fix)
    return tuple(kept[:MAX_FIXES])


def find_fixes(stack: Stack, base: Exploration, bounds: Bounds) -> tuple[tuple[Fix, ...], int, int]:
    """The fixes of a stack in rank order, with the counts of neighbours explored and left."""
    search = _Search(stack, base, bounds, seen={base.design})
    for changes in candidate_changes(stack):
        search.consider(changes)
    return best_fixes(search.fixes), search.explored, search.unexplored


def find_hiding(stack: Stack, base: Exploration, bounds: Bounds) -> tuple[Hiding, ...]:
    """The changes that hide the bug here: they make a violated property hold, or leave it
    with nothing to test, and cost what the model shows."""
    found = []
    for change in hiding_changes(stack):
        design = _design_of(change.apply(stack))
        if design is None:
            continue
        after = explore_settled(design, bounds, NEIGHBOUR_STATES)
        if not after.complete:
            continue
        hidden = tuple(
            n
            for n in PROPERTY_NAMES
            if base.status(n) is Status.VIOLATED and after.status(n) is not Status.VIOLATED
        )
        if not hidden:
            continue
        broken = tuple(
            n
            for n in PROPERTY_NAMES
            if base.status(n) is not Status.VIOLATED and after.status(n) is Status.VIOLATED
        )
        untested = tuple(
            n
            for n in PROPERTY_NAMES
            if base.status(n) is not Status.VACUOUS and after.status(n) is Status.VACUOUS
        )
        found.append(Hiding(change, after, hidden, broken, untested))
    return tuple(found)


def advise(
    stack: Stack, bounds: Bounds = REFERENCE_BOUNDS, *, max_states: int = DEFAULT_MAX_STATES
) -> Advice:
    """Check the stack's design (a holder may crash), tell its counterexamples, and find
    the changes that fix it; the same answer for the same stack and bounds, on any machine."""
    design = stack.design()
    design.check_fits(bounds)
    base = explore_settled(design, bounds, max_states)
    traces = {
        name: replay(design, bounds, verdict.actions)
        for name, verdict in base.verdicts.items()
        if verdict.status is Status.VIOLATED and verdict.actions
    }
    stories = {name: story(stack, trace, name) for name, trace in traces.items()}
    if not traces or not base.complete:
        return Advice(stack, design, bounds, base, stories, (), traces=traces)
    fixes, explored, unexplored = find_fixes(stack, base, bounds)
    hiding = find_hiding(stack, base, bounds)
    return Advice(stack, design, bounds, base, stories, fixes, hiding, unexplored, explored, traces)
