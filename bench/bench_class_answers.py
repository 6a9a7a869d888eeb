"""A class answering at once against the class store: answers lost and time per answer.

Run: `python bench/bench_class_answers.py [--students 30] [--answers 20]` from the repository
root (`make bench` runs it with the defaults). It prints figures and asserts nothing.

A class is created in a fresh temporary folder (the same SQLite file in WAL mode, the same
pool of connections and the same `BEGIN IMMEDIATE` writes the app uses). Every student joins,
then all of them start together (a barrier) and each gives its answers one after another
from its own thread, as the server's threads do for browser tabs. Each answer is timed from
the call to its commit. Then the teacher's view is read back: an answer lost is one given
but not found there (target: 0), and each student's answers must be in the order given.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from classroom.class_store import ClassStore  # noqa: E402

P95_TARGET_MS = 50.0
"""Target for the 95th percentile of one answer's write, in milliseconds."""


def percentile(values: list[float], share: float) -> float:
    """The value below which `share` of the values fall (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def run(students: int, answers: int) -> None:
    """One class of `students`, each giving `answers` answers at once; print the figures."""
    with tempfile.TemporaryDirectory(prefix="fencing-lab-bench-") as folder:
        store = ClassStore(Path(folder) / "classes")
        made = store.create("bench", "default.toml", 'title = "bench"\n')
        members = [store.join(made.info.id, f"student {n}") for n in range(students)]
        times: list[float] = []
        times_lock = threading.Lock()
        failures: list[str] = []
        start = threading.Barrier(students)

        def student(token: str) -> None:
            """Give every answer in turn, timing each."""
            mine = []
            start.wait()
            for n in range(answers):
                began = time.perf_counter()
                try:
                    store.answer(made.info.id, token, f"e{n % 5}", f"answer {n}", n % 3 == 0, "m")
                except Exception as error:  # counted as lost, and named
                    failures.append(type(error).__name__)
                mine.append(time.perf_counter() - began)
            with times_lock:
                times.extend(mine)

        threads = [threading.Thread(target=student, args=(m.token,)) for m in members]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
        view = store.view(made.info.id, made.key)
        in_order = all(
            [a.answer for a in store.answers_of(made.info.id, m.token)]
            == [f"answer {n}" for n in range(answers)]
            for m in members
        )
        mode = store.journal_mode()
        store.close()
    given = students * answers
    lost = given - len(view.answers)
    ms = [t * 1000 for t in times]
    p95 = percentile(ms, 0.95)
    print(f"Class store: {students} students x {answers} answers at once ({mode} journal)")
    print(f"  answers given {given:,}, kept {len(view.answers):,}, lost {lost} (target 0)")
    print(
        f"  errors {len(failures)} {sorted(set(failures))}; each student's order kept: {in_order}"
    )
    print(
        f"  per answer: median {statistics.median(ms):.2f} ms, p95 {p95:.2f} ms, "
        f"max {max(ms):.1f} ms (target p95 {P95_TARGET_MS:g} ms: "
        f"{p95 / P95_TARGET_MS:.2f} of it)"
    )
    print(f"  wall time {wall:.2f} s -> {given / wall:,.0f} answers/s")


def main() -> None:
    """Parse the arguments and run the bench."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--answers", type=int, default=20)
    args = parser.parse_args()
    run(max(1, min(args.students, 100)), max(1, min(args.answers, 500)))


if __name__ == "__main__":
    main()
