"""Exercise-set checks: one heavy set's check against its budget, and a student's first visit
to the Exercises page while the teachers' folder holds two heavy sets (not pass/fail).

Run: `python bench/bench_exercise_sets.py` from the repository root. It prints figures and
asserts nothing. A heavy set is five *fix* exercises at bounds where every exploration takes
a fraction of a second, none with an allowed change that works, so checking one tries every
candidate design (about forty explorations each).

1. The set check: `parse_set` of one heavy set, with no verdicts known yet, timed against
   `SOLVABILITY_SECONDS`; and how many exercises were left unchecked.
2. The first visit: the Exercises page run by `AppTest` in a fresh process whose teachers'
   folder holds two heavy sets, timed from the start of the run to the end of the script.
   Where the sets are checked in the background, the time until both are checked is
   printed too.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from classroom import grading as exercise_grading  # noqa: E402
from classroom.data import ExerciseSetError  # noqa: E402
from classroom.sets import SOLVABILITY_SECONDS, parse_set  # noqa: E402
from tests.app.helpers import page_alone  # noqa: E402

PAGE = "exercises"
HEAVY_BOUNDS = (
    "{ workers = 3, lease = 3, horizon = 8, grants = 4, writes = 2 }",
    "{ workers = 3, lease = 3, horizon = 9, grants = 4, writes = 2 }",
    "{ workers = 3, lease = 3, horizon = 10, grants = 4, writes = 2 }",
    "{ workers = 3, lease = 3, horizon = 9, grants = 5, writes = 2 }",
    "{ workers = 3, lease = 2, horizon = 10, grants = 4, writes = 2 }",
)


def heavy_set(title: str) -> str:
    """A set of *fix* exercises that no allowed change solves, so that checking each one
    explores every candidate design (about forty explorations of a fraction of a second)."""
    exercises = "".join(
        f"""
[[exercise]]
id = "fix-big-{number}"
kind = "fix"
title = "Tokens alone cannot stop a late write ({number})"
prompt = "Change the token, the worker's check, the grant fences or the workload: P2 must hold."
preset = "lease-only"
property = "P2"
options = ["token", "worker_check", "grant_fences", "workload"]
bounds = {bounds}
"""
        for number, bounds in enumerate(HEAVY_BOUNDS, start=1)
    )
    return f'title = "{title}"\n' + exercises


def forget_verdicts() -> None:
    """Forget the verdicts this process already knows, so a check explores again."""
    known = getattr(exercise_grading, "_KNOWN", None)
    if isinstance(known, dict):
        known.clear()


def bench_set_check() -> None:
    """One heavy set's check, against its budget."""
    forget_verdicts()
    started = time.perf_counter()
    try:
        parse_set(heavy_set("Heavy"), "heavy.toml")
        problems: tuple[str, ...] = ()
    except ExerciseSetError as error:
        problems = tuple(p.text() for p in error.problems)
    took = time.perf_counter() - started
    unchecked = sum("could not be checked within the budget" in p for p in problems)
    print(
        f"set check: {took:.2f} s for a budget of {SOLVABILITY_SECONDS:g} s "
        f"({unchecked} exercise(s) reported as not checked within the budget; "
        f"{len(problems)} problem(s) in all)"
    )
    for problem in problems:
        print(f"  {problem}")


def bench_first_visit() -> None:
    """A student's first Exercises visit with two heavy sets in the teachers' folder."""
    forget_verdicts()
    with tempfile.TemporaryDirectory() as folder:
        for name in ("heavy-a", "heavy-b"):
            (Path(folder) / f"{name}.toml").write_text(heavy_set(name), encoding="utf-8")
        os.environ["FENCING_LAB_EXERCISES"] = folder
        at = page_alone(PAGE, default_timeout=600)
        started = time.perf_counter()
        at.run()
        visit = time.perf_counter() - started
        shown = " ".join(str(e.value) for e in at.info)
        print(
            f"first visit with two heavy sets: {visit:.1f} s"
            + (" (the sets shown as being checked)" if "still checking" in shown else "")
        )
        try:
            from webapp import set_checks
        except ImportError:
            return
        set_checks.CHECKER.idle(timeout=600)
        print(f"  both sets checked in the background after {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    bench_set_check()
    bench_first_visit()
