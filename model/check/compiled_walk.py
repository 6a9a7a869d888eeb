"""The random walk compiled from the rules: millions of steps a second, on any bounds.

The rules are evaluated once on symbolic variables (`model.expression`), and their Python
form is written into a small module with four functions over a state held as an int64
array of columns: `enabled` (every rule's guard, and each enabled rule's group of
`model.check.random_walk.GROUPS`), `violations` (the properties a rule breaks from a state,
as bits), `apply` (the rule's effect, in place) and `pack` (the state's key, for counting
distinct states). Beside them sits the walk itself (`WALK_SOURCE`, the same text for
every design): random runs, each drawing who moves and then which of its enabled rules,
from a generator seeded by the run's number, so any run can be walked again alone.

numba compiles the module. Like the explorer's loops (`model.check.kernels`), it is kept in
this user's private folder named by the sha256 of its text and run only when the file
holds exactly that text, or compiled in memory when there is no private folder. The
step interpreter (`model.system`) gives the same walks; the tests check both step by
step.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from model.check.keys import KeyCodec
from model.check.random_walk import GROUPS, WalkSummary
from model.expression import Expr
from model.layout import Vars
from model.system import State, System

GROUP_NUMBER: Final = {group: number for number, group in enumerate(GROUPS)}
"""Each group's number in the compiled walk."""

_LOADING = threading.Lock()
"""One module is written and run at a time (sessions of the web app share the process)."""

WALK_SOURCE: Final = '''
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
MIX_2 = np.uint64(0x94D049BB133111EB)


@njit(cache=CACHE, nogil=True)
def mix(z):
    """splitmix64's finaliser: a well-spread 64-bit number from any other."""
    z = (z ^ (z >> np.uint64(30))) * MIX_1
    z = (z ^ (z >> np.uint64(27))) * MIX_2
    return z ^ (z >> np.uint64(31))


@njit(cache=CACHE, nogil=True)
def below(z, n):
    """A number from 0 to n - 1 taken from the high 32 bits of z (n < 2**31)."""
    return np.int64(((z >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(cache=CACHE, nogil=True)
def slot_of(table, key):
    """The row of the table holding this key, or the empty row where it belongs."""
    h = np.uint64(0)
    for w in range(key.shape[0]):
        h = mix(h ^ np.uint64(key[w]))
    mask = table.shape[0] - 1
    i = np.int64(h & np.uint64(mask))
    while True:
        if table[i, 0] < 0:
            return i
        same = True
        for w in range(key.shape[0]):
            if table[i, w] != key[w]:
                same = False
                break
        if same:
            return i
        i = (i + 1) & mask


@njit(cache=CACHE, nogil=True)
def grown(table):
    """The same keys in a table twice as large."""
    bigger = np.empty((table.shape[0] * 2, table.shape[1]), dtype=np.int64)
    for i in range(bigger.shape[0]):
        for w in range(bigger.shape[1]):
            bigger[i, w] = -1
    for i in range(table.shape[0]):
        if table[i, 0] >= 0:
            j = slot_of(bigger, table[i])
            for w in range(table.shape[1]):
                bigger[j, w] = table[i, w]
    return bigger


@njit(cache=CACHE, nogil=True)
def remember(table, states, s, key):
    """Count the state s if the table does not hold it yet (the table grows when half full)."""
    pack(s, key)
    i = slot_of(table, key)
    if table[i, 0] < 0:
        for w in range(key.shape[0]):
            table[i, w] = key[w]
        states += 1
        if 2 * states > table.shape[0]:
            table = grown(table)
    return table, states


@njit(cache=CACHE, nogil=True)
def walk_runs(start, base, first_run, count, max_steps, target, weights, table, limit, summary,
              path, s, key, en, grp, counts):
    """Runs first_run .. first_run + count - 1 from `start`, each ended at `target`'s first
    violation, at a state where nothing is enabled, or after max_steps steps.

    summary (in and out): the shortest violating run's length and number (-1: none yet),
    steps taken, the longest run, distinct states counted (up to `limit`, in `table`).
    path: when not empty, the rules taken by the last run. s, key, en, grp and counts are
    room to work in. Returns the table, which grows as states are counted.
    """
    best_length, best_run = summary[0], summary[1]
    steps, longest, states = summary[2], summary[3], summary[4]
    bit = np.int64(1) << target
    if states < limit and count > 0:
        for i in range(s.shape[0]):
            s[i] = start[i]
        table, states = remember(table, states, s, key)
    for run in range(first_run, first_run + count):
        for i in range(s.shape[0]):
            s[i] = start[i]
        rng = mix(base + np.uint64(run) * GOLDEN)
        length = 0
        while length < max_steps:
            enabled(s, en, grp)
            for g in range(GROUP_COUNT):
                counts[g] = 0
            for k in range(RULES):
                if en[k]:
                    counts[grp[k]] += 1
            total = 0
            first = -1
            for g in range(GROUP_COUNT):
                if counts[g] > 0:
                    total += weights[g]
                    if first < 0:
                        first = g
            if first < 0:
                break
            rng += GOLDEN
            pick = below(mix(rng), max(total, 1))
            chosen = first
            if total > 0:
                for g in range(GROUP_COUNT):
                    if counts[g] > 0 and weights[g] > 0:
                        if pick < weights[g]:
                            chosen = g
                            break
                        pick -= weights[g]
            rng += GOLDEN
            nth = below(mix(rng), counts[chosen])
            rule = -1
            for k in range(RULES):
                if en[k] and grp[k] == chosen:
                    if nth == 0:
                        rule = k
                        break
                    nth -= 1
            broken = violations(s, rule)
            apply(s, rule)
            if path.shape[0] > 0:
                path[length] = rule
            length += 1
            if states < limit:
                table, states = remember(table, states, s, key)
            if broken & bit:
                if best_run < 0 or length < best_length:
                    best_length, best_run = length, run
                break
        steps += length
        longest = max(longest, length)
    summary[0], summary[1] = best_length, best_run
    summary[2], summary[3], summary[4] = steps, longest, states
    return table


@njit(cache=CACHE, nogil=True)
def replay(start, path, target, s, en, grp):
    """How many steps of the path end at its first violation of `target`: 0 if it never
    violates it, -1 if a step is not enabled where it is taken (s, en, grp: room)."""
    for i in range(s.shape[0]):
        s[i] = start[i]
    bit = np.int64(1) << target
    for i in range(path.shape[0]):
        enabled(s, en, grp)
        if not en[path[i]]:
            return -1
        if violations(s, path[i]) & bit:
            return i + 1
        apply(s, path[i])
    return 0
'''
"""The walk and its helpers: the same text for every design, beside its rule functions."""


def _view(system: System) -> Vars:
    """The state as variables `c0`, `c1`, … (the constant 0 for columns with one value)."""
    layout = system.layout
    values = [
        Expr.variable(column, f"c{i}") if size > 1 else 0
        for i, (column, size) in enumerate(zip(layout.columns, layout.sizes, strict=True))
    ]
    return Vars(layout, values)


def _text(value: object) -> str:
    """Python text of a rule's term (an Expr, or a constant the term helpers folded)."""
    if isinstance(value, Expr):
        return value.python
    if isinstance(value, bool | np.bool_):
        return repr(bool(value))
    return str(int(value))  # type: ignore[call-overload]


def _loads(system: System) -> list[str]:
    """Lines that read every column with more than one value into its variable."""
    return [f"    c{i} = s[{i}]" for i, size in enumerate(system.layout.sizes) if size > 1] or [
        "    pass"
    ]


def _group_text(system: System, index: int, view: Vars) -> str:
    """The group number of an enabled rule: its actor's, or for a fault, `futile` when
    the step would change nothing but restart counters."""
    rule = system.rules[index]
    if not rule.action.row.fault:
        return str(GROUP_NUMBER[rule.action.row.actor.value])
    layout = system.layout
    kept = [
        f"(({_text(value)}) == ({_text(view[column])}))"
        for column, value in rule.effect(view).items()
        if not column.endswith("restarts") and layout.sizes[layout.index[column]] > 1
    ]
    futile = " & ".join(kept) if kept else "True"
    return f"({GROUP_NUMBER['futile']} if ({futile}) else {GROUP_NUMBER['fault']})"


def _enabled_source(system: System, view: Vars) -> list[str]:
    """`enabled(s, en, grp)`: every rule's guard, and each rule's group."""
    lines = ["def enabled(s, en, grp):", *_loads(system)]
    for index, rule in enumerate(system.rules):
        lines.append(f"    en[{index}] = {_text(rule.guard(view))}  # {rule.action.label()}")
        lines.append(f"    grp[{index}] = {_group_text(system, index, view)}")
    return lines


def _branches(cases: Sequence[tuple[int, list[str]]], otherwise: str) -> list[str]:
    """An if/elif chain over the rule number `k`, one case per rule with lines to run."""
    lines = []
    for number, (index, body) in enumerate(cases):
        lines.append(f"    {'if' if number == 0 else 'elif'} k == {index}:")
        lines += [f"        {line}" for line in body] or ["        pass"]
    return lines or [f"    {otherwise}"]


def _violations_source(system: System, view: Vars) -> list[str]:
    """`violations(s, k)`: the properties that taking rule k from s breaks, as bits."""
    cases = []
    for index, rule in enumerate(system.rules):
        body = []
        for number, prop in enumerate(system.properties):
            condition = prop.violated(view, rule)
            if condition is not False:
                body += [f"if {_text(condition)}:", f"    broken |= {1 << number}"]
        if body:
            cases.append((index, body))
    return [
        "def violations(s, k):",
        *_loads(system),
        "    broken = 0",
        *_branches(cases, "pass"),
        "    return broken",
    ]


def _apply_source(system: System, view: Vars) -> list[str]:
    """`apply(s, k)`: rule k's effect on s, in place (every value read before any write)."""
    layout = system.layout
    cases = []
    for index, rule in enumerate(system.rules):
        body = [
            f"s[{layout.index[column]}] = {_text(value)}"
            for column, value in rule.effect(view).items()
            if layout.sizes[layout.index[column]] > 1
        ]
        cases.append((index, body))
    return ["def apply(s, k):", *_loads(system), *_branches(cases, "pass")]


def _pack_source(system: System, codec: KeyCodec) -> list[str]:
    """`pack(s, key)`: the state's key words (`model.check.keys.KeyCodec`)."""
    words: list[list[str]] = [[] for _ in range(codec.words)]
    for i, size in enumerate(system.layout.sizes):
        if size > 1:
            words[codec.word_of[i]].append(f"s[{i}] * {codec.strides[i]}")
    return [
        "def pack(s, key):",
        *(f"    key[{w}] = {' + '.join(terms) or '0'}" for w, terms in enumerate(words)),
    ]


def walk_module_source(system: System, cache: bool = True) -> str:
    """The whole module: the design's rule functions, then the walk."""
    view = _view(system)
    codec = KeyCodec.of(system.layout)
    decorator = f"@njit(cache={cache}, nogil=True)"
    functions = [
        _enabled_source(system, view),
        _violations_source(system, view),
        _apply_source(system, view),
        _pack_source(system, codec),
    ]
    header = [
        f'"""Fencing Lab random walk: {system.design.label()}, {system.bounds.short()}."""',
        "import numpy as np",
        "from numba import njit",
        "",
        f"CACHE = {cache}",
        f"RULES = {len(system.rules)}",
        f"KEY_WORDS = {codec.words}",
        f"GROUP_COUNT = {len(GROUPS)}",
        "",
    ]
    body = "\n\n\n".join("\n".join([decorator, *lines]) for lines in functions)
    return "\n".join(header) + "\n\n" + body + "\n\n" + WALK_SOURCE


class CompiledWalker:
    """Random walks of one design and bounds by its compiled module (`model.check.random_walk`'s
    `Walker`), with room to work in and the table of distinct states met."""

    engine = "compiled"

    def __init__(self, system: System, weights: Sequence[int], limit: int) -> None:
        self.module = load_walk(system)
        codec = KeyCodec.of(system.layout)
        rules = len(system.rules)
        self.weights = np.array(weights, dtype=np.int64)
        self.limit = limit
        self.table = np.full((1024, codec.words), -1, dtype=np.int64)
        self.states = 0
        self.state = np.zeros(len(system.layout.columns), dtype=np.int64)
        self.key = np.zeros(codec.words, dtype=np.int64)
        self.enabled = np.zeros(rules, dtype=np.bool_)
        self.groups = np.zeros(rules, dtype=np.int64)
        self.counts = np.zeros(len(GROUP_NUMBER), dtype=np.int64)
        self.no_path = np.zeros(0, dtype=np.int64)

    def _walk(
        self,
        start: Sequence[int],
        base: int,
        first_run: int,
        count: int,
        max_steps: int,
        target: int,
        limit: int,
        path: np.ndarray,
    ) -> np.ndarray:
        """One call of the compiled walk; its summary array (the shortest violating run's
        length and number, steps, longest run, states counted)."""
        summary = np.array([-1, -1, 0, 0, self.states], dtype=np.int64)
        self.table = self.module.walk_runs(
            np.array(start, dtype=np.int64),
            np.uint64(base),
            first_run,
            count,
            max_steps,
            target,
            self.weights,
            self.table,
            limit,
            summary,
            path,
            self.state,
            self.key,
            self.enabled,
            self.groups,
            self.counts,
        )
        return summary

    def runs(
        self, start: State, base: int, first_run: int, count: int, max_steps: int, target: int
    ) -> WalkSummary:
        """Walk runs first_run .. first_run + count - 1 (see `WALK_SOURCE`)."""
        summary = self._walk(
            start, base, first_run, count, max_steps, target, self.limit, self.no_path
        )
        self.states = int(summary[4])
        best = int(summary[1])
        return WalkSummary(
            int(summary[0]) if best >= 0 else None,
            best if best >= 0 else None,
            int(summary[2]),
            int(summary[3]),
        )

    def path(self, start: State, base: int, run: int, max_steps: int, target: int) -> list[int]:
        """The rule numbers one run takes (counting no states)."""
        path = np.full(max(max_steps, 1), -1, dtype=np.int64)
        summary = self._walk(start, base, run, 1, max_steps, target, 0, path)
        return [int(rule) for rule in path[: summary[2]]]

    def first_violation(self, start: State, path: Sequence[int], target: int) -> int | None:
        """How many steps of the path end at its first violation of `target` (None: a step
        is not enabled, or the path never violates it)."""
        found = int(
            self.module.replay(
                np.array(start, dtype=np.int64),
                np.array(path, dtype=np.int64),
                target,
                self.state,
                self.enabled,
                self.groups,
            )
        )
        return found if found > 0 else None


@dataclass(frozen=True)
class WalkModule:
    """The compiled functions of one design and bounds."""

    module: Any
    key_words: int

    @property
    def walk_runs(self) -> Any:
        """`walk_runs(start, base, first_run, count, max_steps, target, weights, table,
        limit, summary, path, s, key, en, grp, counts) -> table` (see `WALK_SOURCE`)."""
        return self.module.walk_runs

    @property
    def replay(self) -> Any:
        """`replay(start, path, target, s, en, grp) -> steps to the first violation, 0
        (never) or -1 (a step not enabled)`."""
        return self.module.replay

    @property
    def enabled(self) -> Any:
        """`enabled(s, en, grp)`: guards and groups of every rule."""
        return self.module.enabled

    @property
    def violations(self) -> Any:
        """`violations(s, k) -> bits`: the properties rule k breaks from s."""
        return self.module.violations

    @property
    def apply(self) -> Any:
        """`apply(s, k)`: rule k's effect on s, in place."""
        return self.module.apply


def load_walk(system: System) -> WalkModule:
    """Compile (or load from the cache) the walk of this design and bounds.

    The walk and the replay run once here, so compiling happens now, before any thread
    uses them.
    """
    from model.check.kernels import _digest, _holds, _run_module, _write
    from model.check.private_cache import numba_cache, private_folder

    with _LOADING:
        folder = private_folder()
        if folder is None or not numba_cache():
            source = walk_module_source(system, cache=False)
            name = f"fencing_lab_walk_{_digest(source)}_in_memory"
            module = _run_module(name, source, f"<fencing lab walk {name}>")
        else:
            source = walk_module_source(system)
            path = folder / f"walk_{_digest(source)}.py"
            if not _holds(path, source.encode()):
                _write(path, source.encode())
            name = path.stem.replace("walk_", "fencing_lab_walk_")
            module = _run_module(name, source, str(path))
        loaded = WalkModule(module, KeyCodec.of(system.layout).words)
        _warm_up(loaded, system)
    return loaded


def _warm_up(loaded: WalkModule, system: System) -> None:
    """Call the walk and the replay once, so numba compiles (or loads) them now."""
    start = np.array(system.initial(), dtype=np.int64)
    rules = len(system.rules)
    table = np.full((4, loaded.key_words), -1, dtype=np.int64)
    summary = np.array([-1, -1, 0, 0, 0], dtype=np.int64)
    weights = np.zeros(len(GROUP_NUMBER), dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    state, key = start.copy(), np.zeros(loaded.key_words, dtype=np.int64)
    enabled, groups = np.zeros(rules, dtype=np.bool_), np.zeros(rules, dtype=np.int64)
    counts = np.zeros(len(GROUP_NUMBER), dtype=np.int64)
    loaded.walk_runs(
        start, np.uint64(0), 0, 0, 0, 0, weights, table, 0, summary, empty,
        state, key, enabled, groups, counts,
    )  # fmt: skip
    loaded.replay(start, empty, 0, state, enabled, groups)
