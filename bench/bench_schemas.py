"""Reading the largest accepted file of each kind: seconds to measure, decode, check every
field and build the product's values (printed figures, not pass/fail).

The files: a trace of the most steps a random walk takes at the largest bounds, in the
project's JSON and in ITF (both replayed: reading a trace includes its replay), the busiest
lab history a run may record (grown to the replay limit, as the lab writes it) and its
settings alone, and the default exercise set (parsed and checked, without the model's
solvability check). Each figure is the best of a few runs in this process, after a warm-up.
The history is also timed in its two parts: decoding (the bounded reader) and checking
every field and building the history (the schema).

Measured on the 2-core development machine (best of runs, other work sharing it), with the
hand-written checks (before) and with the msgspec schemas (after):

    file                                     bytes      before     after
    trace, JSON (110 steps, replayed)        154,946    10.5 ms    10.6 ms
    trace, ITF (110 steps, replayed)         415,793    32.2 ms    32.5 ms
    lab history (the replay limit)         7,898,285    470 ms     369 ms
      its decoding (bounded reader)                     230 ms     216 ms
      its check and build                               228 ms     117 ms
    lab settings (one object, x1000)             206    5.6 ms     6.7 ms

A trace's read time is its replay; the schema's share does not show.
"""

from __future__ import annotations

import random
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lab.history import history_from_json, history_to_json  # noqa: E402
from lab.history_schema import settings_of  # noqa: E402
from lab.runner import history_budget  # noqa: E402
from lab.settings import Settings  # noqa: E402
from model.design import BOUND_LIMITS, Bounds, Design  # noqa: E402
from model.formats.itf import trace_from_any_json, trace_to_itf_json  # noqa: E402
from model.formats.reading import MAX_TRACE_STEPS  # noqa: E402
from model.formats.trace import Trace, replay, trace_from_json, trace_to_json  # noqa: E402
from model.system import System  # noqa: E402
from tests.lab.histories import busy_history  # noqa: E402

REPEATS = 5


def best_of(action: Callable[[], Any], repeats: int = REPEATS) -> float:
    """The fastest of `repeats` timed runs (after one untimed warm-up), in seconds."""
    action()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def longest_trace(seed: int = 1) -> Trace:
    """A random walk at the largest bounds, as long as it goes (at most the step limit)."""
    bounds = Bounds(**{name: high for name, (_, high) in BOUND_LIMITS.items()})
    design = Design()
    system = System(design, bounds)
    chooser = random.Random(seed)
    state, actions = system.initial(), []
    while len(actions) < MAX_TRACE_STEPS:
        enabled = system.enabled(state)
        if not enabled:
            break
        rule = chooser.choice(enabled)
        actions.append(rule.action)
        state = system.apply(state, rule)
    return replay(design, bounds, actions, title="the longest walk")


def largest_history() -> str:
    """The busiest history a run may record, grown to the replay limit (as the lab writes it)."""
    budget = history_budget()
    per_cycle = len(history_to_json(busy_history(11))) - len(history_to_json(busy_history(10)))
    cycles = budget // per_cycle
    while len(history_to_json(busy_history(cycles))) > budget:
        cycles -= 1
    return history_to_json(busy_history(cycles))


def main() -> None:
    """Print each kind's size and read time."""
    trace = longest_trace()
    trace_json = trace_to_json(trace).encode()
    itf_json = trace_to_itf_json(trace).encode()
    history = largest_history().encode()
    settings = Settings(receiver="fenced", workload="rmw", workers=5, writes=4).to_dict()
    from classroom.schema import DEFAULT_SET
    from lab.history import history_from_dict
    from model.formats import reading

    set_text = DEFAULT_SET.read_text(encoding="utf-8")
    decoded = reading.load_json(history, reading.HISTORY_LIMITS)
    rows: list[tuple[str, int, float]] = [
        (
            f"trace, JSON ({len(trace.steps)} steps, replayed)",
            len(trace_json),
            best_of(lambda: trace_from_json(trace_json)),
        ),
        (
            f"trace, ITF ({len(trace.steps)} steps, replayed)",
            len(itf_json),
            best_of(lambda: trace_from_any_json(itf_json)),
        ),
        (
            "lab history (the replay limit)",
            len(history),
            best_of(lambda: history_from_json(history), 3),
        ),
        (
            "  its decoding (bounded reader)",
            len(history),
            best_of(lambda: reading.load_json(history, reading.HISTORY_LIMITS), 3),
        ),
        (
            "  its check and build (schema)",
            len(history),
            best_of(lambda: history_from_dict(decoded)),
        ),
        (
            "lab settings (one object, x1000)",
            len(repr(settings)),
            best_of(lambda: [settings_of(settings) for _ in range(1000)]),
        ),
        (
            "exercise set (default, TOML decode only)",
            len(set_text.encode()),
            best_of(lambda: tomllib.loads(set_text)),
        ),
    ]
    print("Reading the largest accepted file of each kind (best of a few runs, in process)")
    for name, size, seconds in rows:
        print(f"  {name:<44} {size:>10,} bytes  {seconds * 1000:9.1f} ms")


if __name__ == "__main__":
    main()
