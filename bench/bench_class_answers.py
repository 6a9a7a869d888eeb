"""A class answering at once against the class store: answers lost and time per answer.

Run: `python bench/bench_class_answers.py [--students 30] [--answers 20] [--engine both]`
from the repository root (`make bench` runs it with the defaults). It prints figures and
asserts nothing.

A class is created on each database the app uses (`--engine sqlite`, `postgres` or
`both`): SQLite in a fresh temporary folder (WAL mode, the app's pool of connections and
its `BEGIN IMMEDIATE` writes), and a real PostgreSQL started here on loopback (the live
lab's, on a fresh cluster; skipped with the reason when the machine has none), written by
two stores at once as two server processes would. Every student joins,
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

from classroom.class_database import PostgresDatabase, SqliteDatabase  # noqa: E402
from classroom.class_store import MAX_STUDENTS, ClassStore  # noqa: E402

P95_TARGET_MS = 50.0
"""Target for the 95th percentile of one answer's write, in milliseconds."""


def percentile(values: list[float], share: float) -> float:
    """The value below which `share` of the values fall (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def on_sqlite(students: int, answers: int) -> None:
    """The class on SQLite in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="fencing-lab-bench-") as folder:
        database = SqliteDatabase(Path(folder) / "classes")
        run(
            [ClassStore(database)],
            students,
            answers,
            f"SQLite, {database.journal_mode()} journal",
        )


def on_postgres(students: int, answers: int) -> None:
    """The class on a real PostgreSQL, written through two stores (two server processes)."""
    from lab.postgres import Cluster, PostgresServer, missing

    if missing():
        print(f"Class store on PostgreSQL: skipped ({missing()})")
        return
    from psycopg.conninfo import make_conninfo

    cluster = Cluster.create()
    server = PostgresServer(cluster)
    try:
        server.start()
        conninfo = make_conninfo(**server.connect_args())
        stores = [ClassStore(PostgresDatabase(conninfo)) for _ in range(2)]
        run(stores, students, answers, "PostgreSQL, two stores as two processes")
    finally:
        server.stop()
        cluster.remove()


def run(stores: list[ClassStore], students: int, answers: int, engine: str) -> None:
    """One class of `students`, each giving `answers` answers at once through the stores in
    turn; print the figures."""
    store = stores[0]
    made = store.create("bench", "default.toml", 'title = "bench"\n')
    members = [store.join(made.info.id, f"student {n}") for n in range(students)]
    times: list[float] = []
    times_lock = threading.Lock()
    failures: list[str] = []
    start = threading.Barrier(students)

    def student(token: str, store: ClassStore) -> None:
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

    threads = [
        threading.Thread(target=student, args=(m.token, stores[n % len(stores)]))
        for n, m in enumerate(members)
    ]
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
    for opened in stores:
        opened.close()
    given = students * answers
    lost = given - len(view.answers)
    ms = [t * 1000 for t in times]
    p95 = percentile(ms, 0.95)
    print(f"Class store: {students} students x {answers} answers at once ({engine})")
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
    parser.add_argument("--engine", choices=("sqlite", "postgres", "both"), default="both")
    args = parser.parse_args()
    students, answers = max(1, min(args.students, MAX_STUDENTS)), max(1, min(args.answers, 500))
    if args.engine in ("sqlite", "both"):
        on_sqlite(students, answers)
    if args.engine in ("postgres", "both"):
        on_postgres(students, answers)


if __name__ == "__main__":
    main()
