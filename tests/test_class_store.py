"""The class store on both of its databases (SQLite, and a real PostgreSQL started here on
loopback): create, join, answer and restore; limits, expiry, the teacher's key, isolation
between classes, concurrent answers from one server and from two (two stores on one
database, as two server processes); a database restart; the dashboard's figures and CSV."""

from __future__ import annotations

import csv
import io
import itertools
import os
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from classroom import class_store
from classroom.class_database import (
    DATABASE_ENV,
    Connection,
    PostgresDatabase,
    SqliteDatabase,
    describe_conninfo,
    postgres_sql,
    schema_statements,
)
from classroom.class_store import (
    ClassError,
    ClassStore,
    SoloProgress,
    answers_csv,
    class_hours,
    classes_folder,
    common_wrong_answers,
    exercise_counts,
    prediction_spread,
    shared_store,
    storage_place,
)
from lab.postgres import Cluster, PostgresServer, missing
from model.properties import PROPERTY_NAMES

SET_TEXT = 'title = "Mini"\n'
ENGINES = ("sqlite", "postgres")
_NUMBERS = itertools.count()


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL on a fresh cluster, for this module (skipped when not installed)."""
    if missing():
        pytest.skip(missing())
    cluster = Cluster.create()
    server = PostgresServer(cluster)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        cluster.remove()


def conninfo_of(server: PostgresServer, database: str) -> str:
    """The connection string of one database on the server."""
    from psycopg.conninfo import make_conninfo

    return make_conninfo(**{**server.connect_args(), "dbname": database})


def new_database(server: PostgresServer) -> str:
    """A new empty database on the server; its connection string."""
    import psycopg

    name = f"classes_{os.getpid()}_{next(_NUMBERS)}"
    with psycopg.connect(**server.connect_args(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    return conninfo_of(server, name)


Opener = Callable[..., ClassStore]
"""Opens a store on the test's one database: `opener(hours=…, now=…)`, as often as asked
(each call is another server process, or the same server after a restart)."""


@pytest.fixture(params=ENGINES)
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """A way to open stores on one fresh database of each engine."""
    opened: list[ClassStore] = []
    if request.param == "postgres":
        conninfo = new_database(request.getfixturevalue("postgres"))

        def database() -> PostgresDatabase | SqliteDatabase:
            return PostgresDatabase(conninfo)
    else:

        def database() -> PostgresDatabase | SqliteDatabase:
            return SqliteDatabase(tmp_path / "classes")

    def open_store(**options: object) -> ClassStore:
        store = ClassStore(database(), **options)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield open_store
    for store in opened:
        store.close()


@pytest.fixture
def store(opener: Opener) -> ClassStore:
    """A store on a fresh database, of each engine."""
    return opener()


def test_a_class_is_created_joined_answered_and_restored(opener: Opener) -> None:
    first = opener()
    made = first.create("Tuesday", "default.toml", SET_TEXT)
    ada = first.join(made.info.id, "Ada")
    first.answer(made.info.id, ada.token, "p1", "P1, P4", False, "Not quite", ["P1", "P4"])
    first.answer(made.info.id, ada.token, "p1", "P4, P5", True, "Right")
    first.close()
    again = opener()  # a reload, or the server restarted
    assert again.get(made.info.id).set_text == SET_TEXT
    assert again.member(made.info.id, ada.token) == ada
    answers = again.answers_of(made.info.id, ada.token)
    assert [(a.answer, a.correct, a.props) for a in answers] == [
        ("P1, P4", False, ("P1", "P4")),
        ("P4, P5", True, None),
    ]


def test_sqlite_keeps_its_file_in_wal_mode(tmp_path: Path) -> None:
    database = SqliteDatabase(tmp_path / "data" / "classes")
    ClassStore(database).create("x", "s", SET_TEXT)
    assert database.journal_mode() == "wal"
    assert database.place() == str(tmp_path / "data" / "classes")
    database.close()


def test_the_folder_is_private_and_the_key_is_not_stored(tmp_path: Path) -> None:
    folder = tmp_path / "classes"
    opened = ClassStore(folder)
    made = opened.create("x", "s", SET_TEXT)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "classes.sqlite3").stat().st_mode) == 0o600
    opened.close()
    stored = b"".join(p.read_bytes() for p in folder.iterdir())
    assert made.key.encode() not in stored and made.info.id.encode() in stored


def test_a_folder_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.raises(ClassError, match="can be written by other users"):
        ClassStore(shared)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ClassError, match=r"cannot be created|is not a folder"):
        ClassStore(tmp_path / "file")


def test_the_folder_and_hours_come_from_the_environment(tmp_path: Path) -> None:
    assert classes_folder({"FENCING_LAB_CLASSES": str(tmp_path)}) == tmp_path
    assert classes_folder({"XDG_DATA_HOME": "/d"}) == Path("/d/fencing-lab/classes")
    assert classes_folder({}).parts[-4:] == (".local", "share", "fencing-lab", "classes")
    assert class_hours({"FENCING_LAB_CLASS_HOURS": "2"}) == 2
    for bad in ("0", "-1", "1e9", "99999", "two", ""):
        assert class_hours({"FENCING_LAB_CLASS_HOURS": bad}) == 24


def test_the_teacher_needs_the_key(store: ClassStore) -> None:
    made = store.create("x", "s", SET_TEXT)
    assert store.view(made.info.id, made.key).info == made.info
    for wrong in ("", made.key[:-1] + ("A" if made.key[-1] != "A" else "B"), "x" * 5000):
        with pytest.raises(ClassError, match="key"):
            store.view(made.info.id, wrong)


def test_classes_never_see_each_other(store: ClassStore) -> None:
    one = store.create("one", "s", SET_TEXT)
    two = store.create("two", "s", SET_TEXT)
    ada = store.join(one.info.id, "Ada")
    bob = store.join(two.info.id, "Bob")
    store.answer(one.info.id, ada.token, "e", "a", True, "m")
    assert store.member(two.info.id, ada.token) is None
    with pytest.raises(ClassError, match="not in this class"):
        store.answer(two.info.id, ada.token, "e", "a", True, "m")
    with pytest.raises(ClassError, match="key"):
        store.view(two.info.id, one.key)
    view = store.view(two.info.id, two.key)
    assert view.members == (bob,) and view.answers == ()
    assert store.answers_of(two.info.id, ada.token) == ()


def test_limits_of_classes_students_answers_and_text(
    store: ClassStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(class_store, "MAX_CLASSES", 2)
    monkeypatch.setattr(class_store, "MAX_STUDENTS", 2)
    monkeypatch.setattr(class_store, "MAX_ANSWERS_PER_STUDENT", 3)
    made = store.create("t" * 1000, "s", SET_TEXT)
    assert len(made.info.title) == class_store.MAX_TITLE_CHARS
    store.create("second", "s", SET_TEXT)
    with pytest.raises(ClassError, match="already has 2 classes"):
        store.create("third", "s", SET_TEXT)
    with pytest.raises(ClassError, match="larger than"):
        store.create("big", "s", "#" * (class_store.MAX_SET_TEXT_BYTES + 1))
    ada = store.join(made.info.id, "A\nd\x1ba" + "x" * 1000)
    assert ada.nickname.startswith("A da") and len(ada.nickname) == class_store.MAX_NICKNAME_CHARS
    store.join(made.info.id)
    with pytest.raises(ClassError, match="full"):
        store.join(made.info.id, "late")
    for _ in range(3):
        kept = store.answer(made.info.id, ada.token, "e", "y" * 5000, False, "z" * 5000)
    assert len(kept.answer) == class_store.MAX_ANSWER_CHARS
    assert len(kept.message) == class_store.MAX_MESSAGE_CHARS
    with pytest.raises(ClassError, match="3 answers"):
        store.answer(made.info.id, ada.token, "e", "a", False, "m")
    assert len(store.answers_of(made.info.id, ada.token)) == 3
    monkeypatch.setattr(class_store, "MAX_ANSWERS_PER_CLASS", 4)
    second = store.view(made.info.id, made.key).members[1]  # the other student
    store.answer(made.info.id, second.token, "e", "a", False, "m")
    with pytest.raises(ClassError, match="this class has 4 answers"):
        store.answer(made.info.id, second.token, "e", "a", False, "m")


def test_a_class_expires_and_is_deleted(opener: Opener) -> None:
    clock = Clock()
    store = opener(hours=2, now=clock)
    made = store.create("x", "s", SET_TEXT)
    ada = store.join(made.info.id)
    clock.now += 2 * 3600 - 1
    store.answer(made.info.id, ada.token, "e", "a", True, "m")
    clock.now += 1
    for attempt in (
        lambda: store.get(made.info.id),
        lambda: store.join(made.info.id),
        lambda: store.answer(made.info.id, ada.token, "e", "a", True, "m"),
        lambda: store.view(made.info.id, made.key),
    ):
        with pytest.raises(ClassError, match="ended"):
            attempt()
    assert store.purge() == 1
    with pytest.raises(ClassError, match="no such class"):
        store.get(made.info.id)
    assert store.answers_of(made.info.id, ada.token) == ()


def test_links_that_are_not_tokens_are_refused_before_any_lookup(store: ClassStore) -> None:
    for bad in ("", "short", "a" * 65, "../../etc", "x' OR 1=1 --"):
        with pytest.raises(ClassError, match="not complete"):
            store.get(bad)
        assert store.member("whatever-class", bad) is None


def test_concurrent_answers_from_threads_are_all_kept(store: ClassStore) -> None:
    made = store.create("busy", "s", SET_TEXT)
    students = [store.join(made.info.id, f"s{n}") for n in range(30)]
    errors: list[BaseException] = []
    start = threading.Barrier(len(students))

    def work(token: str) -> None:
        try:
            start.wait()
            for n in range(20):
                store.answer(made.info.id, token, f"e{n % 3}", f"a{n}", n % 2 == 0, "m")
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(s.token,)) for s in students]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    view = store.view(made.info.id, made.key)
    assert len(view.answers) == 30 * 20
    for student in students:
        assert [a.answer for a in store.answers_of(made.info.id, student.token)] == [
            f"a{n}" for n in range(20)
        ]


def test_the_dashboard_figures(store: ClassStore) -> None:
    made = store.create("x", "s", SET_TEXT)
    cid = made.info.id
    ada, bob, cy = (store.join(cid, name) for name in ("Ada", "=HYPERLINK(1)", "Cy"))
    store.answer(cid, ada.token, "p", "P1", False, "no", ["P1"])
    store.answer(cid, ada.token, "p", "P4, P5", True, "yes", ["P4", "P5"])
    store.answer(cid, bob.token, "p", "P1", False, "no", ["P1"])
    store.answer(cid, bob.token, "p", "P1", False, "no", ["P1"])
    store.answer(cid, cy.token, "b", "A1 S1", False, "no")
    view = store.view(cid, made.key)
    counts = {c.exercise_id: c for c in exercise_counts(view, ["p", "b", "f"])}
    assert (counts["p"].joined, counts["p"].tried, counts["p"].solved) == (3, 2, 1)
    assert (counts["b"].tried, counts["b"].solved, counts["f"].tried) == (1, 0, 0)
    spread = prediction_spread(view, "p", PROPERTY_NAMES)
    assert spread["P1"] == (2, 0)  # first predictions only: Ada's right answer came later
    assert spread["P4"] == (0, 2)
    assert set(spread) == set(PROPERTY_NAMES)
    assert common_wrong_answers(view, "p") == [("P1", 2)]  # Bob's repeat counts once
    rows = list(csv.reader(io.StringIO(answers_csv(view))))
    assert rows[0][:5] == ["student", "nickname", "exercise", "answer", "correct"]
    assert rows[3][:2] == ["2", "'=HYPERLINK(1)"]
    assert all(ada.token not in cell for row in rows for cell in row)


def test_solo_progress_is_bounded_and_per_set() -> None:
    solo = SoloProgress(most=2)
    answer = class_store.Answer("t", "e", "a", None, True, "m", 0.0)
    solo.add("one", "set-a", answer)
    solo.add("one", "set-b", answer)
    assert solo.of("one", "set-a") == (answer,) and solo.of("two", "set-a") == ()
    solo.add("two", "set-a", answer)
    assert solo.of("one", "set-a") == ()  # the oldest is forgotten


# ----- two server processes on one database, and the PostgreSQL engine itself -----------------


def test_two_servers_on_one_database_see_each_other_and_keep_the_limits(
    opener: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two stores on one database, as two server processes behind the proxy: students joining
    and answering at once through both never cross a limit, every answer is kept, and the
    teacher's dashboard served by one sees the students of the other."""
    monkeypatch.setattr(class_store, "MAX_STUDENTS", 12)
    first, second = opener(), opener()
    made = first.create("lecture", "s", SET_TEXT)
    start = threading.Barrier(20)
    joined: list[str] = []
    refused: list[str] = []
    errors: list[BaseException] = []

    def student(number: int) -> None:
        server = (first, second)[number % 2]
        try:
            start.wait()
            try:
                member = server.join(made.info.id, f"s{number}")
            except ClassError as error:
                refused.append(str(error))
                return
            joined.append(member.token)
            for n in range(10):
                server.answer(made.info.id, member.token, f"e{n % 3}", f"{number}-{n}", True, "m")
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=student, args=(n,)) for n in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert len(joined) == 12 and len(refused) == 8
    assert all("full (12 students)" in reason for reason in refused)
    for server in (first, second):
        view = server.view(made.info.id, made.key)
        assert {m.token for m in view.members} == set(joined)
        assert len(view.answers) == 12 * 10
    for token in joined:
        answers = [a.answer for a in second.answers_of(made.info.id, token)]
        number = answers[0].split("-")[0]
        assert answers == [f"{number}-{n}" for n in range(10)]


def _columns_sqlite(tmp_path: Path) -> dict[str, list[tuple[str, bool]]]:
    """Every table's columns (name, whether NULL is refused) in a new SQLite database."""
    database = SqliteDatabase(tmp_path / "schema")

    def columns(db: Connection, table: str) -> list[tuple[str, bool]]:
        rows = db.execute(f"PRAGMA table_info({table})").fetchall()
        return [(name, bool(notnull) or bool(primary)) for _, name, _, notnull, _, primary in rows]

    try:
        return {
            table: database.read(lambda db, t=table: columns(db, t))  # type: ignore[misc]
            for table in ("classes", "students", "answers")
        }
    finally:
        database.close()


def test_both_engines_make_the_same_tables(postgres: PostgresServer, tmp_path: Path) -> None:
    """One schema: the same tables and columns, in the same order, NULL refused in the same
    places, on SQLite and on PostgreSQL."""
    import psycopg

    database = PostgresDatabase(new_database(postgres))
    database.close()
    found: dict[str, list[tuple[str, bool]]] = {}
    with psycopg.connect(database.conninfo) as db:
        for table in ("classes", "students", "answers"):
            rows = db.execute(
                "SELECT column_name, is_nullable FROM information_schema.columns "
                "WHERE table_name = %s ORDER BY ordinal_position",
                (table,),
            ).fetchall()
            found[table] = [(name, nullable == "NO") for name, nullable in rows]
    assert found == _columns_sqlite(tmp_path)
    assert found["answers"][0] == ("id", True) and ("props", False) in found["answers"]
    assert [s.split("(")[0] for s in schema_statements("SQLite")] == [
        s.split("(")[0] for s in schema_statements("PostgreSQL")
    ]


def test_a_class_survives_a_database_restart(postgres: PostgresServer) -> None:
    """PostgreSQL stopped and started again (same port): the class and its answers are
    there, and the store's pooled connections, broken by the restart, are replaced."""
    store = ClassStore(PostgresDatabase(new_database(postgres)))
    made = store.create("restart", "s", SET_TEXT)
    ada = store.join(made.info.id, "Ada")
    store.answer(made.info.id, ada.token, "e", "before", True, "m")
    cluster, port = postgres.cluster, postgres.port
    postgres.stop()
    postgres.wanted_port = port
    postgres.start()
    assert postgres.port == port
    store.answer(made.info.id, ada.token, "e", "after", False, "m")
    assert [a.answer for a in store.view(made.info.id, made.key).answers] == ["before", "after"]
    assert Cluster.exists_at(cluster.directory)
    store.close()


def test_an_unreachable_database_is_one_sentence_without_the_password(
    postgres: PostgresServer,
) -> None:
    conninfo = conninfo_of(postgres, "postgres").replace(
        f"port={postgres.port}", f"port={postgres.port + 1 if postgres.port < 65535 else 1}"
    )
    assert postgres.cluster.password() in conninfo
    with pytest.raises(ClassError, match="the class database cannot be reached") as raised:
        PostgresDatabase(conninfo)
    message = str(raised.value)
    assert postgres.cluster.password() not in message and "\n" not in message
    assert describe_conninfo(conninfo).startswith("the PostgreSQL database postgres on 127.0.0.1")


def test_the_environment_chooses_postgres_for_several_processes(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    conninfo = new_database(postgres)
    on_postgres = shared_store({DATABASE_ENV: conninfo, "FENCING_LAB_CLASSES": str(tmp_path)})
    assert on_postgres.database.engine == "PostgreSQL"
    assert postgres.cluster.password() not in on_postgres.place()
    assert shared_store({DATABASE_ENV: conninfo}) is on_postgres
    alone = shared_store({"FENCING_LAB_CLASSES": str(tmp_path / "c")})
    assert alone.database.engine == "SQLite" and alone.place() == str(tmp_path / "c")
    assert storage_place({"FENCING_LAB_CLASSES": str(tmp_path / "c")}) == str(tmp_path / "c")
    assert storage_place({DATABASE_ENV: conninfo}) == on_postgres.place()
    assert not (tmp_path / "classes.sqlite3").exists()


def test_placeholders_are_translated_for_postgres() -> None:
    assert postgres_sql("SELECT 1 FROM t WHERE a = ? AND b = ?") == (
        "SELECT 1 FROM t WHERE a = %s AND b = %s"
    )
