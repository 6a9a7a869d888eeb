"""Classes: a teacher's set, the students who joined, and every answer, kept in SQLite.

A class is created with a secret key (only its hash is stored; it is compared in constant
time) and a set's TOML text, so every student works on exactly the teacher's set. Students
join without an account: each gets a random token that their link carries, and their
answers are written as they give them, so a reload or a later visit restores them. Every
read and write names its class, so one class never sees another's rows.

The database is one SQLite file in WAL mode (readers never wait for the writer) in a
private folder the app creates (0700; a folder another user can write is refused). A small
pool of connections is shared by the server's threads, each connection used by one thread
at a time, with a busy timeout; every write is one `BEGIN IMMEDIATE`
transaction that checks the limits inside it, so concurrent answers are never lost and
limits are never crossed. Classes expire; expired ones are deleted with their rows.
Nothing here imports Streamlit.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import os
import re
import secrets
import sqlite3
import stat
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

FOLDER_ENV: Final = "FENCING_LAB_CLASSES"
"""Environment variable naming the folder of the class database."""
HOURS_ENV: Final = "FENCING_LAB_CLASS_HOURS"
"""Environment variable: how many hours a class lasts (whole number, 1 to `MAX_HOURS`)."""
DEFAULT_HOURS: Final = 24
MAX_HOURS: Final = 7 * 24
DATABASE_NAME: Final = "classes.sqlite3"

MAX_CLASSES: Final = 50
"""Most classes alive at once on one server."""
MAX_STUDENTS: Final = 100
"""Most students in one class."""
MAX_ANSWERS_PER_STUDENT: Final = 500
"""Most answers one student may give in one class."""
MAX_ANSWERS_PER_CLASS: Final = 20_000
"""Most answers kept for one class (with `MAX_CLASSES`, the database stays under a few
hundred megabytes whatever the students do)."""
MAX_TITLE_CHARS: Final = 120
MAX_NICKNAME_CHARS: Final = 40
MAX_ANSWER_CHARS: Final = 300
MAX_MESSAGE_CHARS: Final = 800
MAX_EXERCISE_ID_CHARS: Final = 40
MAX_SET_TEXT_BYTES: Final = 100_000
MAX_CONNECTIONS: Final = 8
"""Most database connections open at once (a thread waits for a free one)."""
BUSY_TIMEOUT_SECONDS: Final = 10.0
"""How long a write waits for another thread's transaction before it gives up."""

TOKEN_PATTERN: Final = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
"""What a class id, key or student token from a link must look like to be looked up."""

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS classes (
    id TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL,
    title TEXT NOT NULL,
    set_name TEXT NOT NULL,
    set_text TEXT NOT NULL,
    created REAL NOT NULL,
    expires REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS students (
    token TEXT PRIMARY KEY,
    class_id TEXT NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
    nickname TEXT NOT NULL,
    joined REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS students_of_class ON students(class_id);
CREATE TABLE IF NOT EXISTS answers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    class_id TEXT NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
    token TEXT NOT NULL REFERENCES students(token) ON DELETE CASCADE,
    exercise_id TEXT NOT NULL,
    answer TEXT NOT NULL,
    props TEXT,
    correct INTEGER NOT NULL,
    message TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS answers_of_student ON answers(class_id, token);
"""


class ClassError(ValueError):
    """Something a teacher or student asked that cannot be done, in one sentence."""


@dataclass(frozen=True)
class ClassInfo:
    """A class as a student may see it: its id, title, set and lifetime (never its key)."""

    id: str
    title: str
    set_name: str
    set_text: str
    created: float
    expires: float


@dataclass(frozen=True)
class NewClass:
    """A class just created, with the secret key of the teacher's link (shown once)."""

    info: ClassInfo
    key: str


@dataclass(frozen=True)
class Member:
    """A student of a class: their token (the link's secret), nickname and join time."""

    token: str
    class_id: str
    nickname: str
    joined: float


@dataclass(frozen=True)
class Answer:
    """One answer a student gave: to which exercise, what, the verdict and when.

    `props` holds the ticked properties of a prediction (None for other kinds)."""

    token: str
    exercise_id: str
    answer: str
    props: tuple[str, ...] | None
    correct: bool
    message: str
    at: float


@dataclass(frozen=True)
class ClassView:
    """What the teacher's dashboard shows: the class, its students and all their answers."""

    info: ClassInfo
    members: tuple[Member, ...]
    answers: tuple[Answer, ...]


def class_hours(environ: Mapping[str, str] = os.environ) -> int:
    """How long a class lasts, from the environment (a whole number of hours), else 24."""
    text = environ.get(HOURS_ENV, "").strip()
    if text.isdigit() and len(text) <= 4 and 1 <= int(text) <= MAX_HOURS:
        return int(text)
    return DEFAULT_HOURS


def classes_folder(environ: Mapping[str, str] = os.environ) -> Path:
    """The folder of the class database: `FENCING_LAB_CLASSES`, else the user's data folder
    (`$XDG_DATA_HOME/fencing-lab/classes`, by default ~/.local/share/fencing-lab/classes)."""
    named = environ.get(FOLDER_ENV, "").strip()
    if named:
        return Path(named).expanduser()
    data = environ.get("XDG_DATA_HOME", "").strip()
    base = Path(data) if data else Path.home() / ".local" / "share"
    return base / "fencing-lab" / "classes"


def prepare_folder(folder: Path) -> Path:
    """Create the folder private (0700) if it is missing; refuse one that is not a folder of
    this user, or that other users can write (someone else could swap the database)."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.lstat()
    except OSError as error:
        raise ClassError(f"the class folder {folder} cannot be created: {error.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise ClassError(f"the class folder {folder} is not a folder (or is a link)")
    if info.st_uid != os.getuid():
        raise ClassError(f"the class folder {folder} belongs to another user")
    if info.st_mode & 0o022:
        raise ClassError(
            f"the class folder {folder} can be written by other users: make it private "
            f"(chmod 700 {folder})"
        )
    return folder


def new_token(nbytes: int) -> str:
    """A random URL-safe secret."""
    return secrets.token_urlsafe(nbytes)


def key_hash(key: str) -> str:
    """What is stored of a teacher's key: its SHA-256."""
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()


def looks_like_token(text: object) -> bool:
    """Whether a value from a link has the shape of an id, key or token (checked before use)."""
    return isinstance(text, str) and bool(TOKEN_PATTERN.match(text))


def _clean(text: str, limit: int) -> str:
    """One line of text, control characters dropped, at most `limit` characters."""
    flat = " ".join(str(text).split())
    kept = "".join(ch for ch in flat if ch.isprintable())
    return kept[:limit]


class ClassStore:
    """The classes of one database file; safe to share between threads."""

    def __init__(
        self,
        folder: Path,
        hours: float = DEFAULT_HOURS,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.path = prepare_folder(folder) / DATABASE_NAME
        self.hours = hours
        self._now = now
        self._lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._opened: list[sqlite3.Connection] = []
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._writing = threading.Lock()
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        os.close(fd)
        with self._connected() as db:
            db.executescript(SCHEMA)

    # ----- connections ------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        """A new connection: WAL mode, busy timeout, foreign keys on, autocommit between
        explicit transactions."""
        connection = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
        )
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_SECONDS * 1000)}")
        connection.execute("PRAGMA foreign_keys=ON")
        connection.execute("PRAGMA synchronous=NORMAL")
        with self._lock:
            self._opened.append(connection)
        return connection

    @contextmanager
    def _connected(self) -> Iterator[sqlite3.Connection]:
        """A connection of the pool for this thread alone until the block ends."""
        self._slots.acquire()
        try:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                connection = self._open()
            try:
                yield connection
            finally:
                with self._lock:
                    self._idle.append(connection)
        finally:
            self._slots.release()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (`BEGIN IMMEDIATE`), committed or undone.

        The server's own writers queue on a lock (SQLite's busy handler would make them
        sleep and retry); the busy timeout is left for another process on the same file."""
        with self._writing, self._connected() as connection:
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

    def _one(self, sql: str, values: tuple[object, ...]) -> Any:
        """The first row of a read (None when there is none)."""
        with self._connected() as db:
            return db.execute(sql, values).fetchone()

    def _all(self, sql: str, values: tuple[object, ...]) -> list[Any]:
        """Every row of a read."""
        with self._connected() as db:
            return db.execute(sql, values).fetchall()

    def journal_mode(self) -> str:
        """The database's journal mode (`wal`)."""
        return str(self._one("PRAGMA journal_mode", ())[0])

    def close(self) -> None:
        """Close every connection (for tests and benches)."""
        with self._lock:
            for connection in self._opened:
                connection.close()
            self._opened.clear()
            self._idle.clear()

    # ----- teachers ---------------------------------------------------------------------

    def create(self, title: str, set_name: str, set_text: str) -> NewClass:
        """A new class on a set's text; expired classes are deleted first."""
        title = _clean(title, MAX_TITLE_CHARS) or "A class"
        set_name = _clean(set_name, MAX_TITLE_CHARS)
        if len(set_text.encode("utf-8")) > MAX_SET_TEXT_BYTES:
            raise ClassError(f"the set is larger than {MAX_SET_TEXT_BYTES:,} bytes")
        now = self._now()
        key = new_token(24)
        info = ClassInfo(new_token(9), title, set_name, set_text, now, now + self.hours * 3600)
        with self._write() as db:
            db.execute("DELETE FROM classes WHERE expires <= ?", (now,))
            (alive,) = db.execute("SELECT COUNT(*) FROM classes").fetchone()
            if alive >= MAX_CLASSES:
                raise ClassError(
                    f"this server already has {MAX_CLASSES} classes: wait until one expires"
                )
            db.execute(
                "INSERT INTO classes VALUES (?, ?, ?, ?, ?, ?, ?)",
                (info.id, key_hash(key), title, set_name, set_text, now, info.expires),
            )
        return NewClass(info, key)

    def view(self, class_id: str, key: str) -> ClassView:
        """Everything of one class for its teacher; refused without the right key."""
        info = self.get(class_id)
        (stored,) = self._one("SELECT key_hash FROM classes WHERE id = ?", (class_id,))
        if not hmac.compare_digest(key_hash(key if isinstance(key, str) else ""), stored):
            raise ClassError("this teacher link's key is not this class's key")
        rows = self._all(
            "SELECT token, class_id, nickname, joined FROM students WHERE class_id = ? "
            "ORDER BY joined, token",
            (class_id,),
        )
        members = tuple(Member(*row) for row in rows)
        return ClassView(info, members, self._answers("class_id = ?", (class_id,)))

    # ----- students ---------------------------------------------------------------------

    def get(self, class_id: str) -> ClassInfo:
        """A class that exists and has not expired, or why not."""
        if not looks_like_token(class_id):
            raise ClassError("this class link is not complete: ask your teacher for it again")
        row = self._one(
            "SELECT id, title, set_name, set_text, created, expires FROM classes WHERE id = ?",
            (class_id,),
        )
        if row is None:
            raise ClassError("there is no such class (it may have expired and been deleted)")
        info = ClassInfo(*row)
        if info.expires <= self._now():
            raise ClassError("this class has ended: its time ran out")
        return info

    def join(self, class_id: str, nickname: str = "") -> Member:
        """A new student of a class, with an optional nickname."""
        self.get(class_id)
        member = Member(new_token(12), class_id, _clean(nickname, MAX_NICKNAME_CHARS), self._now())
        with self._write() as db:
            (count,) = db.execute(
                "SELECT COUNT(*) FROM students WHERE class_id = ?", (class_id,)
            ).fetchone()
            if count >= MAX_STUDENTS:
                raise ClassError(f"this class is full ({MAX_STUDENTS} students)")
            db.execute(
                "INSERT INTO students VALUES (?, ?, ?, ?)",
                (member.token, class_id, member.nickname, member.joined),
            )
        return member

    def member(self, class_id: str, token: str) -> Member | None:
        """The student with this token in this class (None for a token of another class)."""
        if not looks_like_token(token):
            return None
        row = self._one(
            "SELECT token, class_id, nickname, joined FROM students "
            "WHERE token = ? AND class_id = ?",
            (token, class_id),
        )
        return Member(*row) if row else None

    def answer(
        self,
        class_id: str,
        token: str,
        exercise_id: str,
        answer: str,
        correct: bool,
        message: str,
        props: Sequence[str] | None = None,
    ) -> Answer:
        """Keep one answer of a student of a live class (refused past the limits)."""
        self.get(class_id)
        kept = Answer(
            token,
            _clean(exercise_id, MAX_EXERCISE_ID_CHARS),
            _clean(answer, MAX_ANSWER_CHARS),
            tuple(props) if props is not None else None,
            bool(correct),
            _clean(message, MAX_MESSAGE_CHARS),
            self._now(),
        )
        with self._write() as db:
            if (
                db.execute(
                    "SELECT 1 FROM students WHERE token = ? AND class_id = ?", (token, class_id)
                ).fetchone()
                is None
            ):
                raise ClassError("this student is not in this class: join from the class link")
            (in_class,) = db.execute(
                "SELECT COUNT(*) FROM answers WHERE class_id = ?", (class_id,)
            ).fetchone()
            if in_class >= MAX_ANSWERS_PER_CLASS:
                raise ClassError(
                    f"this class has {MAX_ANSWERS_PER_CLASS:,} answers, the most that are kept"
                )
            (count,) = db.execute(
                "SELECT COUNT(*) FROM answers WHERE class_id = ? AND token = ?", (class_id, token)
            ).fetchone()
            if count >= MAX_ANSWERS_PER_STUDENT:
                raise ClassError(
                    f"you have given {MAX_ANSWERS_PER_STUDENT} answers in this class, the most "
                    "that are kept"
                )
            db.execute(
                "INSERT INTO answers (class_id, token, exercise_id, answer, props, correct, "
                "message, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    class_id,
                    token,
                    kept.exercise_id,
                    kept.answer,
                    json.dumps(list(kept.props)) if kept.props is not None else None,
                    int(kept.correct),
                    kept.message,
                    kept.at,
                ),
            )
        return kept

    def answers_of(self, class_id: str, token: str) -> tuple[Answer, ...]:
        """One student's answers in one class, oldest first."""
        return self._answers("class_id = ? AND token = ?", (class_id, token))

    def _answers(self, where: str, values: tuple[str, ...]) -> tuple[Answer, ...]:
        """Answers matching a fixed condition of this module, oldest first."""
        rows = self._all(
            "SELECT token, exercise_id, answer, props, correct, message, at FROM answers "
            f"WHERE {where} ORDER BY id",
            values,
        )
        return tuple(
            Answer(token, ex, text, _props(props), bool(correct), message, at)
            for token, ex, text, props, correct, message, at in rows
        )

    def purge(self) -> int:
        """Delete expired classes with their students and answers; how many were deleted."""
        with self._write() as db:
            return db.execute("DELETE FROM classes WHERE expires <= ?", (self._now(),)).rowcount


def _props(text: str | None) -> tuple[str, ...] | None:
    """The ticked properties stored with a prediction."""
    if text is None:
        return None
    value = json.loads(text)
    return tuple(str(v) for v in value) if isinstance(value, list) else None


# ----- the dashboard's figures ---------------------------------------------------------------


@dataclass(frozen=True)
class ExerciseCounts:
    """How one exercise went in a class: who tried it, who solved it, how many answers."""

    exercise_id: str
    joined: int
    tried: int
    solved: int
    answers: int


def exercise_counts(view: ClassView, exercise_ids: Sequence[str]) -> list[ExerciseCounts]:
    """Per exercise of the set: students joined, those who tried it and those who solved it."""
    rows = []
    for exercise_id in exercise_ids:
        mine = [a for a in view.answers if a.exercise_id == exercise_id]
        rows.append(
            ExerciseCounts(
                exercise_id,
                len(view.members),
                len({a.token for a in mine}),
                len({a.token for a in mine if a.correct}),
                len(mine),
            )
        )
    return rows


def first_predictions(view: ClassView, exercise_id: str) -> dict[str, tuple[str, ...]]:
    """Each student's first prediction on an exercise (made before any verdict was seen)."""
    found: dict[str, tuple[str, ...]] = {}
    for answer in view.answers:
        if answer.exercise_id == exercise_id and answer.props is not None:
            found.setdefault(answer.token, answer.props)
    return found


def prediction_spread(
    view: ClassView, exercise_id: str, properties: Sequence[str]
) -> dict[str, tuple[int, int]]:
    """Per property: how many first predictions say it holds, and how many say it fails."""
    firsts = list(first_predictions(view, exercise_id).values())
    return {
        name: (sum(name in p for p in firsts), sum(name not in p for p in firsts))
        for name in properties
    }


def common_wrong_answers(view: ClassView, exercise_id: str, most: int = 5) -> list[tuple[str, int]]:
    """The wrong answers given most often to an exercise, with how many students gave each."""
    distinct = {
        (a.token, a.answer) for a in view.answers if a.exercise_id == exercise_id and not a.correct
    }
    return Counter(answer for _, answer in distinct).most_common(most)


CSV_FORMULA: Final = ("=", "+", "-", "@", "\t", "\r")
"""Cell starts a spreadsheet would read as a formula."""


def _cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text, never runs as a formula."""
    return "'" + text if text.startswith(CSV_FORMULA) else text


def answers_csv(view: ClassView) -> str:
    """Every answer of the class as CSV: student number, nickname, exercise, answer, verdict,
    time (UTC). Students are numbered by joining order; their tokens are never exported."""
    number = {m.token: index for index, m in enumerate(view.members, start=1)}
    nickname = {m.token: m.nickname for m in view.members}
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["student", "nickname", "exercise", "answer", "correct", "message", "time"])
    for a in view.answers:
        writer.writerow(
            [
                number.get(a.token, 0),
                _cell(nickname.get(a.token, "")),
                _cell(a.exercise_id),
                _cell(a.answer),
                "yes" if a.correct else "no",
                _cell(a.message),
                datetime.fromtimestamp(a.at, UTC).isoformat(timespec="seconds"),
            ]
        )
    return out.getvalue()


# ----- progress of students outside a class ----------------------------------------------------


MAX_SOLO_STUDENTS: Final = 1_000
"""Most students working outside a class whose answers the server keeps (in memory)."""


class SoloProgress:
    """Answers of students outside a class, by their link's token and set, kept in memory
    (bounded: the student seen longest ago is forgotten first) so a reload restores them."""

    def __init__(self, most: int = MAX_SOLO_STUDENTS) -> None:
        self._most = most
        self._lock = threading.Lock()
        self._answers: dict[tuple[str, str], tuple[Answer, ...]] = {}

    def add(self, token: str, set_key: str, answer: Answer) -> None:
        """Keep one more answer (at most `MAX_ANSWERS_PER_STUDENT` per student and set)."""
        with self._lock:
            kept = self._answers.pop((token, set_key), ())
            self._answers[(token, set_key)] = (*kept, answer)[-MAX_ANSWERS_PER_STUDENT:]
            while len(self._answers) > self._most:
                del self._answers[next(iter(self._answers))]

    def of(self, token: str, set_key: str) -> tuple[Answer, ...]:
        """A student's answers on a set, oldest first."""
        with self._lock:
            return self._answers.get((token, set_key), ())


_STORES: dict[Path, ClassStore] = {}
_STORES_LOCK = threading.Lock()


def shared_store() -> ClassStore:
    """The server's class store for the folder the environment names, opened once per folder
    (ClassError when the folder cannot be used)."""
    folder = classes_folder()
    with _STORES_LOCK:
        if folder not in _STORES:
            _STORES[folder] = ClassStore(folder, hours=class_hours())
        return _STORES[folder]


SOLO: Final = SoloProgress()
"""The server's answers of students outside a class."""
