"""Advice for a stack: its verdicts, its counterexamples in its words, and the changes that fix it.

The advisor asks the model only: it explores the stack's design, then the designs one
catalogue change away (and two, where one is not enough), and keeps the changes that make
violated properties hold without breaking one that held. Every verdict it reports is the
explorer's at the bounds given.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Final

from model.design import REFERENCE_BOUNDS, Bounds, Design, DesignError
from model.explorer import DEFAULT_MAX_STATES, Exploration, explore
from model.options import OPTIONS
from model.presets import PRESETS_LIST, Preset
from model.properties import BY_NAME, PROPERTY_NAMES
from model.search import SearchOptions
from model.stack import CATALOGUE, Part, Slot, Stack, parts_of
from model.trace import Trace, replay
from model.verdicts import Status

MAX_FIXES: Final = 6
MOST_CHANGES: Final = 2
"""The most parts of the catalogue one fix changes (two only when no single change fixes
every violated property)."""
NUMBER_WORDS: Final = ("one", "two", "three", "four")
"""How many fixes an advice lists at most."""
ADVICE_SECONDS: Final = 60.0
"""Time budget for one advice: the stack's exploration and its neighbours'."""


@dataclass(frozen=True)
class Change:
    """One catalogue change: a part replaced, added (`old` None) or dropped (`new` None)."""

    slot: Slot
    old: Part | None
    new: Part | None

    @property
    def dimension(self) -> str:
        """What the change touches: the token, the resource, or one practice."""
        if self.slot.single:
            return str(self.slot)
        assert (self.old or self.new) is not None
        return (self.new or self.old).id  # type: ignore[union-attr]

    def apply(self, stack: Stack) -> Stack:
        """The stack after this change."""
        if self.new is None:
            assert self.old is not None
            return stack.without(self.old)
        return stack.with_part(self.new)

    def build(self) -> str:
        """What the change means to build, as an instruction."""
        if self.new is None:
            assert self.old is not None
            return self.old.drop or f"stop: {self.old.words}"
        if self.old is not None and self.slot is Slot.TOKEN:
            elsewhere = self.new.system not in ("any", self.old.system)
            where = f" ({self.new.system})" if elsewhere else ""
            return f"{self.new.build}{where} instead of the {self.old.noun or self.old.words}"
        if self.old is not None:
            return f"{self.new.build}, instead of {self.old.noun or self.old.words}"
        return self.new.build

    def to_dict(self) -> dict[str, Any]:
        """`{"choice", "from", "to"}` with catalogue ids (None for nothing)."""
        return {
            "choice": str(self.slot),
            "from": self.old.id if self.old else None,
            "to": self.new.id if self.new else None,
        }


@dataclass(frozen=True)
class Fix:
    """A set of changes, the design it gives, and what then holds and what is still violated."""

    changes: tuple[Change, ...]
    stack: Stack
    design: Design
    holds: tuple[str, ...]
    still_violated: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The fix as JSON."""
        return {
            "changes": [change.to_dict() for change in self.changes],
            "build": [change.build() for change in self.changes],
            "stack": self.stack.ids(),
            "design": self.design.to_dict(),
            "holds": list(self.holds),
            "still_violated": list(self.still_violated),
        }


@dataclass(frozen=True)
class Unfixed:
    """A violated property no listed fix repairs, and the nearest preset that keeps it."""

    prop: str
    nearest: Preset | None


@dataclass(frozen=True)
class Advice:
    """What the model says of a stack at some bounds, and what to change."""

    stack: Stack
    design: Design
    bounds: Bounds
    exploration: Exploration
    stories: dict[str, tuple[str, ...]]
    fixes: tuple[Fix, ...]
    unfixed: tuple[Unfixed, ...]
    unchecked: int = 0
    """Neighbouring designs not explored within the time budget."""
    traces: dict[str, Trace] = field(default_factory=dict)

    @property
    def violated(self) -> tuple[str, ...]:
        """The stack's violated properties, P1 first."""
        return _violated(self.exploration)

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
                    "story": list(self.stories.get(name, ())),
                }
                for name, verdict in self.exploration.verdicts.items()
            },
            "fixes": [fix.to_dict() for fix in self.fixes],
            "unfixed": [
                {"property": u.prop, "nearest_preset": u.nearest.name if u.nearest else None}
                for u in self.unfixed
            ],
            "unchecked_designs": self.unchecked,
        }


def _violated(result: Exploration) -> tuple[str, ...]:
    """Names of the violated properties of an exploration."""
    return tuple(n for n, v in result.verdicts.items() if v.status is Status.VIOLATED)


def _settled(result: Exploration) -> bool:
    """Whether every property has a verdict (the search finished)."""
    return all(v.status is not Status.UNKNOWN for v in result.verdicts.values())


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


def single_changes(stack: Stack) -> Iterator[Change]:
    """Every one-part change of the stack, in catalogue order."""
    for entry in CATALOGUE:
        if entry.assumption:
            continue
        if entry.slot.single:
            current = stack.token if entry.slot is Slot.TOKEN else stack.resource
            if entry is not current:
                yield Change(entry.slot, current, entry)
        elif entry in stack.practices:
            yield Change(entry.slot, entry, None)
        else:
            yield Change(entry.slot, None, entry)


def _preference(change: Change, stack: Stack) -> int:
    """Lower for a token from the same system as the stack's (etcd stays etcd)."""
    if change.slot is Slot.TOKEN and change.new is not None:
        return 0 if change.new.system == stack.token.system else 1
    return 0


def candidate_changes(stack: Stack, size: int) -> Iterator[tuple[Change, ...]]:
    """Sets of `size` changes touching different parts, with catalogue-equal ones merged."""
    singles = sorted(single_changes(stack), key=lambda c: _preference(c, stack))
    for chosen in combinations(singles, size):
        if len({change.dimension for change in chosen}) == size:
            yield chosen


MAX_REMEMBERED: Final = 512
"""Finished explorations kept for later advice (a few kilobytes each)."""
_FINISHED: dict[tuple[Design, Bounds], Exploration] = {}
_FINISHED_LOCK = threading.Lock()


def _remember(result: Exploration) -> None:
    """Keep a finished exploration: it depends only on its design and bounds."""
    if not result.complete:
        return
    with _FINISHED_LOCK:
        if len(_FINISHED) >= MAX_REMEMBERED:
            _FINISHED.pop(next(iter(_FINISHED)))
        _FINISHED[(result.design, result.bounds)] = result


class _Explorations:
    """Explorations of designs at fixed bounds, each design explored once, within a deadline."""

    def __init__(self, bounds: Bounds, deadline: float, max_states: int) -> None:
        self.bounds = bounds
        self.deadline = deadline
        self.max_states = max_states
        self.skipped = 0

    def of(self, design: Design) -> Exploration | None:
        """The design's exploration, or None when the time budget is spent."""
        known = _FINISHED.get((design, self.bounds))
        if known is not None:
            return known
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.skipped += 1
            return None
        design.check_fits(self.bounds)
        result = explore(
            design, self.bounds, SearchOptions(max_states=self.max_states, max_seconds=left)
        )
        _remember(result)
        return result


def _design_of(stack: Stack) -> Design | None:
    """The stack's design, or None when its parts do not fit together."""
    try:
        return stack.design()
    except DesignError:
        return None


def changes_in_words() -> str:
    """How many parts a fix may change, in words: `one or two parts`."""
    words = NUMBER_WORDS[:MOST_CHANGES]
    listed = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
    return f"{listed} part{'s' if MOST_CHANGES > 1 else ''}"


def find_fixes(
    stack: Stack, base: Exploration, explorations: _Explorations
) -> tuple[list[Fix], int]:
    """The changes that make violated properties hold without breaking one that held."""
    broken = set(_violated(base))
    fixes: list[Fix] = []
    seen: set[Design] = {base.design}
    fully_fixed_by_one = False
    for size in range(1, MOST_CHANGES + 1):
        if size > 1 and fully_fixed_by_one:
            break
        for changes in candidate_changes(stack, size):
            changed = stack
            for change in changes:
                changed = change.apply(changed)
            design = _design_of(changed)
            if design is None or design in seen:
                continue
            seen.add(design)
            result = explorations.of(design)
            if result is None or not _settled(result):
                continue
            still = set(_violated(result))
            if still - broken or still >= broken:
                continue
            if size == 2 and any(
                not (set(_violated(one)) - broken) and set(_violated(one)) <= still
                for one in _single_results(changes, stack, explorations)
            ):
                continue
            fully_fixed_by_one = fully_fixed_by_one or (size == 1 and not still)
            fixes.append(
                Fix(
                    changes,
                    changed,
                    design,
                    tuple(n for n in PROPERTY_NAMES if n in result.verdicts and n not in still),
                    tuple(n for n in PROPERTY_NAMES if n in still),
                )
            )
    fixes.sort(key=lambda f: (len(f.changes), len(f.still_violated)))
    return _undominated(fixes)[:MAX_FIXES], explorations.skipped


def _undominated(fixes: list[Fix]) -> list[Fix]:
    """The fixes no other fix beats: none with as few changes leaves fewer violations."""
    kept: list[Fix] = []
    for fix in fixes:
        if not any(
            len(other.changes) <= len(fix.changes)
            and set(other.still_violated) <= set(fix.still_violated)
            for other in kept
        ):
            kept.append(fix)
    return kept


def _single_results(
    changes: tuple[Change, ...], stack: Stack, explorations: _Explorations
) -> Iterator[Exploration]:
    """The explorations of each change of a set made alone (already explored, or now)."""
    for change in changes:
        design = _design_of(change.apply(stack))
        if design is None:
            continue
        result = explorations.of(design)
        if result is not None and _settled(result):
            yield result


def nearest_preset(prop: str, design: Design, explorations: _Explorations) -> Preset | None:
    """The preset where `prop` is not violated whose options differ least from `design`."""
    best: tuple[int, Preset] | None = None
    for candidate in PRESETS_LIST:
        result = explorations.of(candidate.design)
        if result is None or result.status(prop) in (Status.VIOLATED, Status.UNKNOWN):
            continue
        distance = sum(
            getattr(design, o.name) != getattr(candidate.design, o.name) for o in OPTIONS
        )
        if best is None or distance < best[0]:
            best = (distance, candidate)
    return best[1] if best else None


def advise(
    stack: Stack,
    bounds: Bounds = REFERENCE_BOUNDS,
    *,
    max_seconds: float = ADVICE_SECONDS,
    max_states: int = DEFAULT_MAX_STATES,
) -> Advice:
    """Check the stack's design, tell its counterexamples, and find the changes that fix it."""
    design = stack.design()
    design.check_fits(bounds)
    explorations = _Explorations(bounds, time.monotonic() + max_seconds, max_states)
    base = _FINISHED.get((design, bounds)) or explore(
        design, bounds, SearchOptions(max_states=max_states, max_seconds=max_seconds)
    )
    _remember(base)
    traces = {
        name: replay(design, bounds, verdict.actions)
        for name, verdict in base.verdicts.items()
        if verdict.status is Status.VIOLATED and verdict.actions
    }
    stories = {name: story(stack, trace, name) for name, trace in traces.items()}
    fixes, skipped = find_fixes(stack, base, explorations) if traces else ([], 0)
    repaired = {n for fix in fixes for n in _violated(base) if n not in fix.still_violated}
    unfixed = tuple(
        Unfixed(name, nearest_preset(name, design, explorations))
        for name in _violated(base)
        if name not in repaired
    )
    return Advice(stack, design, bounds, base, stories, tuple(fixes), unfixed, skipped, traces)


def all_parts(slot: Slot) -> tuple[str, ...]:
    """The ids of a slot's entries (for CLI choices and forms)."""
    return tuple(p.id for p in parts_of(slot))
