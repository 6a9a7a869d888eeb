"""Judging a whole lab history: seconds to check every witness and to replay the whole run
through the model, segment by segment from rebuilt states (printed figures, not pass/fail).

The histories are hand-made as the lab records them: the long fenced run of the tests
(three workers, grants in turn, a stale holder crossing the cuts), grown to more grants, and
the busiest randomized run a history may hold (five workers, read-modify-write checked then
applied), at a few sizes up to the replay limit. Each figure is the best of a few runs.
Target: a 60-second run's history (about 1 MB: the busiest run's 175 grants) is judged in
under 2 s.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lab.history import History, history_to_json, timeline  # noqa: E402
from lab.report import analyse  # noqa: E402
from lab.witness import cross_check  # noqa: E402
from tests.lab import test_lab_whole_run  # noqa: E402
from tests.lab.histories import busy_history  # noqa: E402

REPEATS = 3
TARGET_SECONDS = 2.0


def best(work: object, repeats: int = REPEATS) -> float:
    """The best wall time of a few runs of `work()` (seconds)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return min(times)


def figures(name: str, history: History) -> None:
    """Print the witnesses' time, the whole judgement's, and the replay's coverage."""
    line = timeline(history)
    witnesses = best(lambda: cross_check(line))
    whole = best(lambda: analyse(history))
    report = analyse(history)
    coverage = report.conformance.coverage
    covered = coverage.sentence() if coverage is not None else "no replay"
    size = len(history_to_json(history))
    print(
        f"  {name:<34} {len(history.events):>7,} events {size:>10,} bytes  witnesses "
        f"{witnesses:6.3f} s  judged {whole:6.3f} s ({whole / TARGET_SECONDS:.2f} of the target)"
    )
    print(f"  {'':<36} the replay {covered}")


def main() -> None:
    """Print the figures."""
    print("Judging a whole lab history (best of runs):")
    for grants in (30, 120):
        test_lab_whole_run.GRANTS = grants
        figures(f"long fenced run, {grants} grants", test_lab_whole_run.long_run(stale_grant=4))
    for cycles in (50, 175, 700):
        figures(f"busiest run, {cycles} grants", busy_history(cycles))


if __name__ == "__main__":
    main()
