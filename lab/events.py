"""Recording events: each process appends JSON lines with a time on the shared monotonic clock.

All lab processes run on one machine, where `time.monotonic()` is one system-wide clock, so
a time measured in a worker and one measured in the storage process can be compared. Each
time is in seconds since the run's start `t0`, taken *before* anything that depends on the
event is sent, so causes always carry earlier times than their effects.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import IO, Any, Final

Event = dict[str, Any]
"""One recorded event: `t`, `source`, `kind` and the kind's own fields."""

MAX_LINE_BYTES: Final = 64_000


class EventLog:
    """Appends events to a JSON-lines file (or keeps them in memory), one flushed line each."""

    def __init__(self, source: str, t0: float, path: Path | None = None) -> None:
        self.source = source
        self.t0 = t0
        self.kept: list[Event] = []
        self._file: IO[str] | None = open(path, "a", buffering=1) if path else None  # noqa: SIM115
        self._lock = threading.Lock()

    def now(self) -> float:
        """Seconds since the run started."""
        return time.monotonic() - self.t0

    def record(self, kind: str, at: float | None = None, **fields: Any) -> Event:
        """Record one event now (or at the time `at`, measured earlier)."""
        event: Event = {"t": round(self.now() if at is None else at, 6), "source": self.source}
        event["kind"] = kind
        event.update(fields)
        with self._lock:
            if self._file is not None:
                self._file.write(json.dumps(event) + "\n")
            else:
                self.kept.append(event)
        return event

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None


def read_events(path: Path) -> list[Event]:
    """The events in a JSON-lines file; a line cut short by a killed process is skipped."""
    found: list[Event] = []
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return found
    for line in text.splitlines():
        if not line.strip() or len(line) > MAX_LINE_BYTES:
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and "t" in event and "kind" in event:
            found.append(event)
    return found
