"""A segment's starting state: the model's own state where the run was cut, renamed to fit.

A long run is replayed in segments (lab.conformance), and no segment starts afresh: each
starts from the state the model reached at the end of the one before, so nothing the past
left behind is forgotten (a stale holder and its token, a request still in flight or
checked but not applied, the receiver's mark, the last accepted token and grant for P1
and P3, a lease still running, a version a worker read, a crashed holder whose lock is
still taken). Only names change, so the next segment fits the model's bounds:

- time starts again at 0: every deadline (a lease's end, a worker's own lease check) keeps
  its distance from now;
- tokens and grant numbers are renumbered 1, 2, … in their order (equal ones stay equal),
  keeping only those still held or remembered; with random tokens they are ranked among the
  next segment's grants too, so every comparison the receiver makes comes out the same;
- a worker that takes no further step of the model lets go of its grant (it never acts on
  it again), and so does a worker whose grant it never heard of (a grant only the lock
  service's record shows, under which it took no step: it asks for the lock again);
- when nobody holds a grant any more and every later token is at least every earlier one
  (a counter, a key's version), the mark and the last accepted token and grant are let go
  too: they decide nothing a fresh model would not decide alike;
- a read-modify-write's versions keep only what P5 compares: whether what a worker read is
  still the current version.

A killed worker is carried while its request is still in flight (the network and the store
do not know it died) or while it holds the current lock; a cut is not made while it holds
that lock and the model has not yet flagged P6 for it (its crash time would be lost); every
other point can be cut.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from model.actions import Action
from model.design import MAX_GRANTS
from model.formats.trace import Step, StepMaker, Trace
from model.layout import slot
from model.system import State, System

ClockState = tuple[int, tuple[float, int], tuple[float, int, float | None, int] | None]
"""The mapping clock where a segment starts: now, its anchor (time, tick) and the live
lease (start time, tick, end time, grant revision)."""


@dataclass(frozen=True)
class Held:
    """A worker's part of the carried state, with its grant's real token and revision."""

    worker: int
    token: int
    """The model's token value where the run was cut (its order is the real tokens')."""
    real_token: int
    revision: int
    """The real grant (its revision) the worker holds."""
    sent: int
    pending: int
    phase: int
    read_current: bool
    """In read-modify-write: whether the version it read is still the current one."""
    until: int
    """Ticks left before its own lease check fails (0 without worker checks)."""
    crashed: bool


@dataclass(frozen=True)
class Carried:
    """What a segment starts from: the model's state where the run was cut, in real terms."""

    index: int
    """The first event of the segment."""
    held: tuple[Held, ...]
    holder: int
    expires: int
    """Ticks left of the holder's lease (0: over, or no lease)."""
    newest: int
    """The real revision of the newest grant (0: none yet)."""
    mark: tuple[int, int] | None
    """The receiver's mark: (model value, real token), None while 0."""
    last: tuple[int, int] | None
    """The last accepted write's token: (model value, real token), None before any."""
    last_grant: int
    """The real revision of the last accepted write's grant (0: none)."""
    versions: bool
    """Whether the receiver counts versions (read-modify-write)."""
    clock: ClockState
    flagged: frozenset[int] = field(default_factory=frozenset)
    """The real grants of crashed holders the model already flagged for P6."""

    @property
    def crashed(self) -> int:
        """How many of the carried workers have crashed."""
        return sum(1 for h in self.held if h.crashed)

    def real_tokens(self) -> list[tuple[int, int]]:
        """Every carried (model value, real token) pair."""
        pairs = [(h.token, h.real_token) for h in self.held]
        return pairs + [pair for pair in (self.mark, self.last) if pair is not None]


@dataclass(frozen=True)
class Names:
    """How the carried state is named in the next segment: token values and grant numbers."""

    tokens: dict[int, int]
    """Old model token value -> new one."""
    ranks: dict[int, int]
    """With random tokens: the new value of each of the segment's grants, by revision."""
    grants: dict[int, int]
    """Real grant revision -> the new grant number."""
    top_token: int
    """The largest token value the carried state uses."""
    top_grant: int


def names_for(carried: Carried, random: bool, window: Sequence[tuple[int, int]]) -> Names:
    """New names for the carried tokens and grants; `window` lists the real (revision, token)
    of the grants that may follow in the segment (ranked with the carried tokens when the
    tokens are random, since the model then picks each grant's value by its rank: only as
    many as leave every rank within the model's grants)."""
    pairs = carried.real_tokens()
    room = max(0, MAX_GRANTS - len({real for _, real in pairs}))
    window = window[:room]
    ranks: dict[int, int] = {}
    if random:
        reals = sorted({real for _, real in pairs} | {token for _, token in window})
        rank_of = {real: rank for rank, real in enumerate(reals, start=1)}
        tokens = {value: rank_of[real] for value, real in pairs}
        ranks = {revision: rank_of[token] for revision, token in window}
        top_token = max(tokens.values(), default=0)
    else:
        values = sorted({value for value, _ in pairs})
        tokens = {value: rank for rank, value in enumerate(values, start=1)}
        top_token = len(values)
    revisions = sorted(
        {h.revision for h in carried.held} | {carried.last_grant, carried.newest} - {0}
    )
    grants = {revision: rank for rank, revision in enumerate(revisions, start=1)}
    return Names(tokens, ranks, grants, top_token, len(revisions))


def start_state(system: System, carried: Carried, names: Names) -> State:
    """The carried state as a state of this segment's system (time 0)."""
    design = system.design
    values: dict[str, int] = {
        "holder": carried.holder,
        "expires": carried.expires,
        "grants": names.grants.get(carried.newest, 0),
        "lastg": names.grants.get(carried.last_grant, 0),
        "last": names.tokens[carried.last[0]] if carried.last else 0,
    }
    if design.receiver.keeps_high_water_mark and carried.mark is not None:
        values["hwm"] = names.tokens[carried.mark[0]]
    if design.token.row.uses_counter:
        values["issued"] = names.top_token
    if carried.versions:
        values["version"] = 1
    for h in carried.held:
        w = h.worker
        values[slot("tok", w)] = names.tokens[h.token]
        values[slot("gid", w)] = names.grants[h.revision]
        values[slot("sent", w)] = h.sent
        values[slot("pending", w)] = h.pending
        values[slot("phase", w)] = h.phase
        values[slot("rv", w)] = 1 if h.read_current and carried.versions else 0
        values[slot("until", w)] = h.until
        values[slot("down", w)] = 1 if h.crashed else 0
        if design.token.row.picks_unused_value:
            values[slot("used", names.tokens[h.token])] = 1
    if design.token.row.picks_unused_value:
        for pair in (carried.mark, carried.last):
            if pair is not None:
                values[slot("used", names.tokens[pair[0]])] = 1
    layout = system.layout
    state = [0] * len(layout.columns)
    for column, value in values.items():
        if column in layout.index:
            state[layout.index[column]] = value
        elif value:
            raise ValueError(f"the rebuilt state needs {column}, which the design lacks")
    layout.check_state(state)
    return tuple(state)


def carry(
    system: System,
    state: State,
    index: int,
    clock: ClockState,
    real_of: Mapping[int, int],
    revision_of: Mapping[int, int],
    acting: Iterable[int],
    unheard: set[int],
    flagged: Iterable[int],
) -> Carried | None:
    """The model's state at the cut before event `index`, in real terms (None when the cut
    cannot be made there: a crashed holder's lock not yet flagged for P6).

    `real_of` names the real token of each model token value, `revision_of` the real grant
    of each model grant number; `acting` are the workers that take a step of the model at
    or after the cut; `unheard` the real grants their workers never heard of."""
    s = system.view(state)
    design, bounds = system.design, system.bounds
    now = int(s.now)
    leased = design.expiry.value == "lease"
    flagged = frozenset(flagged)
    acting = set(acting)
    held: list[Held] = []
    for w in range(1, bounds.workers + 1):
        token = int(s.tok[w])
        if token == 0:
            continue
        revision = revision_of.get(int(s.gid[w]), 0)
        crashed = bool(design.crashes) and int(s.down[w]) != 0
        current = int(s.holder) == w and int(s.grants) == int(s.gid[w])
        taken = current and (not leased or now < int(s.expires))
        if crashed:
            if taken and revision not in flagged:
                return None
            if not taken and int(s.pending[w]) == 0:
                continue  # a dead worker with nothing in flight and no lock that matters
        elif w not in acting:
            continue  # it takes no step of the model any more
        elif revision in unheard and int(s.sent[w]) == 0 and int(s.pending[w]) == 0:
            continue  # it never heard of this grant, and asks for the lock again
        versions = design.workload.value == "rmw"
        held.append(
            Held(
                w,
                token,
                real_of.get(token, token),
                revision,
                int(s.sent[w]),
                int(s.pending[w]),
                int(s.phase[w]),
                versions and int(s.rv[w]) == int(s.version),
                max(0, int(s.until[w]) - now) if design.worker_check else 0,
                crashed,
            )
        )
    hwm = int(s.hwm) if design.receiver.keeps_high_water_mark else 0
    last = int(s.last)
    lastg = revision_of.get(int(s.lastg), 0)
    newest = revision_of.get(int(s.grants), 0)
    if not held and not design.token.row.picks_unused_value:
        # Nobody holds a grant that could still act: every later grant's token is at least
        # every one before (a counter, or a key's version), so the mark, the last accepted
        # token and grant decide nothing any more that a fresh model would not decide alike.
        hwm = last = lastg = newest = 0
    return Carried(
        index,
        tuple(held),
        int(s.holder),
        max(0, int(s.expires) - now) if leased else 0,
        newest,
        (hwm, real_of.get(hwm, hwm)) if hwm else None,
        (last, real_of.get(last, last)) if last else None,
        lastg,
        design.workload.value == "rmw",
        _shifted(clock, now),
        flagged,
    )


def _shifted(clock: ClockState, now: int) -> ClockState:
    """The clock with every tick moved back by `now` (time starts again at 0)."""
    _, anchor, lease = clock
    moved_lease = (lease[0], lease[1] - now, lease[2], lease[3]) if lease is not None else None
    return (0, (anchor[0], anchor[1] - now), moved_lease)


@dataclass(frozen=True)
class Walk:
    """A segment replayed from its starting state: the steps the model took, its final
    state, and where it refused (the index into the actions, or None)."""

    trace: Trace
    final: State
    refused_at: int | None
    reason: str
    taken: tuple[int, ...] = ()
    """The positions of the actions taken (an optional one the model did not allow is not)."""


def replay_from(
    system: System,
    start: State,
    actions: Sequence[Action],
    optional: Sequence[bool],
    title: str,
    check: Any = None,
    narrate: bool = True,
) -> Walk:
    """Step the actions through the interpreter from `start`, as `model.formats.trace.replay` does
    from the initial state (skipping an optional action the model does not allow there);
    `check(system, before, rule, after, position)` may refuse a step with a reason. Without
    `narrate` the steps carry their violations but no sentences (a segment nobody reads)."""
    design, bounds = system.design, system.bounds
    state = start
    steps: list[Step] = []
    taken: list[int] = []
    maker = StepMaker(system, narrate)
    for position, action in enumerate(actions):
        rule = system.rule_of.get(action)
        if rule is None or not system.is_enabled(state, rule):
            if optional[position]:
                continue
            return Walk(
                Trace(design, bounds, tuple(steps), title), state, position, "", tuple(taken)
            )
        after = system.apply(state, rule)
        if check is not None:
            problem = check(system, state, rule, after, position)
            if problem:
                trace = Trace(design, bounds, tuple(steps), title)
                return Walk(trace, state, position, problem, tuple(taken))
        steps.append(maker.step(len(steps) + 1, action, rule, state, after))
        state = after
        taken.append(position)
    return Walk(Trace(design, bounds, tuple(steps), title), state, None, "", tuple(taken))
