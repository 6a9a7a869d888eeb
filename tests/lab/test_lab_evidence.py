"""The run folder beside a history: the history, the database, the logs cut to their end;
a folder the lab made is replaced by the next run of the same file, one it did not make is
never touched."""

from __future__ import annotations

from pathlib import Path

from lab.evidence import LOG_LIMIT_BYTES, MARKER, keep_evidence


def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A history file, a database and a log larger than the limit."""
    history = tmp_path / "h.json"
    history.write_text('{"format": "fencing-lab/lab-history"}\n')
    database = tmp_path / "store.sqlite"
    database.write_bytes(b"SQLite format 3\x00")
    log = tmp_path / "w1.err"
    log.write_bytes(b"x" * LOG_LIMIT_BYTES + b"the last words\n")
    return history, database, log


def test_the_run_folder_keeps_the_history_the_database_and_the_end_of_each_log(
    tmp_path: Path,
) -> None:
    history, database, log = files(tmp_path)
    folder = keep_evidence(history, database, [log, tmp_path / "missing.err"])
    assert folder == tmp_path / "h-run"
    assert (folder / "history.json").read_bytes() == history.read_bytes()
    assert (folder / "store.sqlite").read_bytes() == database.read_bytes()
    kept = (folder / "logs" / "w1.err").read_bytes()
    assert len(kept) == LOG_LIMIT_BYTES and kept.endswith(b"the last words\n")
    assert sorted(p.name for p in (folder / "logs").iterdir()) == ["w1.err"]


def test_a_folder_the_lab_made_is_replaced_one_it_did_not_make_is_kept(tmp_path: Path) -> None:
    history, database, log = files(tmp_path)
    first = keep_evidence(history, database, [log])
    (first / "stale").write_text("from the earlier run")
    again = keep_evidence(history, None, [])
    assert again == first and not (again / "stale").exists() and (again / MARKER).is_file()
    assert not (again / "store.sqlite").exists()
    other = tmp_path / "g.json"
    other.write_text("{}")
    mine = tmp_path / "g-run"
    mine.mkdir()
    (mine / "notes.txt").write_text("the user's own folder")
    folder = keep_evidence(other, None, [])
    assert folder == tmp_path / "g-run-2"
    assert (mine / "notes.txt").read_text() == "the user's own folder"
