"""A catalogue of malformed lab histories, each replayed by `fencing replay`: every one is
refused with exit status 2 and one line, never a traceback, and nothing printed carries a
control character (a terminal escape in a file is shown escaped or refused)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from lab.history import MAX_EVENTS, History, history_to_json, load_history
from model.formats.reading import MAX_HISTORY_BYTES
from model.properties import PROPERTY_NAMES
from tests.cli_helpers import run
from tests.lab.histories import paused_worker

Change = Callable[[dict[str, Any]], None]
ESCAPE = "\x1b[2J\x1b[31mred"


def _set(path: str, value: Any) -> Change:
    """A change that sets one field, named by a dotted path (`events.3.worker`)."""

    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


def _drop(path: str) -> Change:
    """A change that removes one field of one event (`events.0.revision`)."""

    def change(data: dict[str, Any]) -> None:
        _, index, name = path.split(".")
        del data["events"][int(index)][name]

    return change


@dataclass(frozen=True)
class TextChange:
    """A change of the file's text itself, for what JSON values cannot express (NaN)."""

    old: str
    new: str


def _prediction() -> dict[str, Any]:
    """A well-formed prediction, as a scripted run records it."""
    return {
        "summary": "the model accepts 2 writes and rejects 0; its run violates P1",
        "properties": {
            name: {"violated": name == "P1", "count": int(name == "P1")} for name in PROPERTY_NAMES
        },
        "accepted": 2,
        "rejected": 0,
        "sentences": ["W1 writes late"],
    }


def _with_prediction(change: Change) -> Change:
    """A change applied to a history that carries a prediction."""

    def both(data: dict[str, Any]) -> None:
        data["prediction"] = _prediction()
        change(data)

    return both


def _nested(depth: int) -> Any:
    """Lists inside lists, `depth` deep."""
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def _only_format(data: dict[str, Any]) -> None:
    """Nothing left but the format field."""
    data.clear()
    data["format"] = "fencing-lab/lab-history"


# Event 0 is the store's start, 2 W1's grant, 3 the watch's put, 4 the pause, 5 the
# revocation, 9 W2's send, 10 its delivery, 11 W2's release (see tests/lab/histories.py).
CATALOGUE: dict[str, tuple[Change | TextChange, str]] = {
    "only a format": (_only_format, "unsupported lab history version None"),
    "version as text": (_set("version", "1"), "unsupported lab history version"),
    "version huge": (_set("version", 10**30), "unsupported lab history version"),
    "settings not an object": (_set("settings", [1]), "settings must be an object"),
    "settings workers as text": (
        _set("settings.workers", "2"),
        "'workers' must be a whole number, not '2'",
    ),
    "settings workers huge": (_set("settings.workers", 10**18), "out of range"),
    "settings nested": (_set("settings.receiver", {"a": [1]}), "'receiver' must be a name of"),
    "settings escape": (_set("settings.receiver", ESCAPE), "control characters"),
    "events not a list": (_set("events", {"0": {}}), "'events' must be a list"),
    "event not an object": (_set("events.4", [1, 2]), "event 5 of the history: it is not"),
    "time as text": (_set("events.2.t", "0.1"), "field 't' must be a number of seconds"),
    "time negative": (_set("events.2.t", -1.5), "field 't' must be from 0"),
    "time huge": (_set("events.2.t", 1e300), "field 't' must be from 0"),
    "time NaN": (TextChange('"t": 0.1,', '"t": NaN,'), "NaN, which is not a number"),
    "time Infinity": (TextChange('"t": 0.1,', '"t": Infinity,'), "Infinity, which is not"),
    "time overflowing": (TextChange('"t": 0.1,', '"t": 1e999,'), "number too large"),
    "time missing": (_drop("events.2.t"), "no time 't'"),
    "kind unknown with escape": (_set("events.4.kind", ESCAPE), "unknown kind '\\x1b"),
    "kind as a number": (_set("events.4.kind", 7), "unknown kind '7'"),
    "worker as text": (_set("events.2.worker", "W1"), "field 'worker' must be a whole number"),
    "worker as true": (_set("events.2.worker", True), "field 'worker' must be a whole number"),
    "worker beyond the workers": (_set("events.2.worker", 9), "field 'worker' must be from 0 to 2"),
    "worker negative": (_set("events.4.worker", -1), "field 'worker' must be from 0"),
    "revision as a float": (_set("events.2.revision", 2.5), "'revision' must be a whole number"),
    "revision missing": (_drop("events.2.revision"), "it has no field 'revision'"),
    "revision huge": (_set("events.3.revision", 2**64), "'revision' must be from 0 to"),
    "revision with 40 digits": (_set("events.3.revision", 10**45), "number too long to read"),
    "token as a list": (_set("events.10.token", [4]), "field 'token' must be a whole number"),
    "token null in a delivery": (_set("events.10.token", None), "it has no field 'token'"),
    "lease null in a grant": (_set("events.2.lease", None), "'lease' must be a whole number"),
    "grant null in a revocation": (_set("events.5.grant", None), "'grant' must be a whole"),
    "deleted as text": (_set("events.11.deleted", "yes"), "'deleted' must be true or false"),
    "grant missing in a release": (_drop("events.11.grant"), "it has no field 'grant'"),
    "holder not a worker": (_set("events.3.holder", "Wx"), "'holder' must be W1, W2"),
    "holder with escape": (_set("events.3.holder", ESCAPE), "'holder' holds control characters"),
    "request with escape": (_set("events.9.request", ESCAPE), "holds control characters"),
    "outcome as a number": (_set("events.10.outcome", 3), "'outcome' must be text"),
    "error text with escape": (_set("events.4.error", ESCAPE), "'error' holds control"),
    "unknown field nested": (_set("events.4.extra", {"a": {"b": 1}}), "unknown field 'extra'"),
    "unknown field name with escape": (_set(f"events.7.{ESCAPE}", 1), "unknown field '\\x1b"),
    "extra nesting too deep": (_set("events.4.extra", _nested(40)), "nests lists or objects"),
    "scenario with escape": (_set("scenario", ESCAPE), "'scenario' holds control characters"),
    "scenario as a list": (_set("scenario", ["a"]), "'scenario' must be text"),
    "scenario too long": (_set("scenario", "s" * 5000), "'scenario' must be text of at most"),
    "seconds negative": (_set("seconds", -3), "'seconds' must be from 0"),
    "etcd not an object": (_set("etcd", "localhost"), "'etcd' must be an object"),
    "etcd version with escape": (_set("etcd", {"version": ESCAPE}), "'version' holds control"),
    "prediction as a list": (_set("prediction", [1]), "'prediction' must be an object"),
    "prediction summary escape": (
        _with_prediction(_set("prediction.summary", ESCAPE)),
        "'summary' holds control",
    ),
    "prediction accepted as text": (
        _with_prediction(_set("prediction.accepted", "2")),
        "'accepted' must be a whole number",
    ),
    "prediction without P2": (
        _with_prediction(lambda d: d["prediction"]["properties"].pop("P2")),
        "must give a verdict for each of P1",
    ),
    "prediction verdict as text": (
        _with_prediction(_set("prediction.properties.P1.violated", "yes")),
        "'violated' must be true or false",
    ),
    "prediction sentence escape": (
        _with_prediction(_set("prediction.sentences.0", ESCAPE)),
        "sentence 1 holds control",
    ),
    "too many events": (
        lambda d: d.update(events=[{"t": 0, "kind": "storage-kill"}] * (MAX_EVENTS + 1)),
        f"at most {MAX_EVENTS:,} events",
    ),
}


def _malformed(tmp_path: Path, change: Change | TextChange) -> Path:
    """The paused worker's history file, changed."""
    data = json.loads(history_to_json(paused_worker("none", "accepted")))
    if isinstance(change, TextChange):
        text = json.dumps(data, indent=1)
        assert change.old in text
        text = text.replace(change.old, change.new, 1)
    else:
        change(data)
        text = json.dumps(data, indent=1)
    path = tmp_path / "history.json"
    path.write_text(text)
    return path


def _clean(text: str) -> bool:
    """Whether printed text is free of control characters other than line breaks."""
    return all(ch.isprintable() or ch == "\n" for ch in text)


def test_the_catalogue_is_large() -> None:
    assert len(CATALOGUE) >= 20


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_a_malformed_history_gets_one_line_and_exit_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    change, message = CATALOGUE[name]
    code, out, err = run(["replay", str(_malformed(tmp_path, change))], capsys)
    assert code == 2, (name, out[-500:], err[-500:])
    assert err.startswith("fencing: error: ") and err.count("\n") == 1, err
    assert message in err, err
    assert "Traceback" not in err and out == ""
    assert _clean(err), err


def test_the_untouched_history_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The catalogue's base file is good: each refusal is the change's doing."""
    path = tmp_path / "history.json"
    path.write_text(history_to_json(paused_worker("none", "accepted")))
    code, out, _ = run(["replay", str(path)], capsys)
    assert code == 0 and "the model allows this history" in out


def test_what_replay_prints_is_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file name with an escape code (printed at the end of the report) comes out escaped."""
    path = tmp_path / f"run{ESCAPE}.json"
    path.write_text(history_to_json(paused_worker("none", "accepted")))
    code, out, err = run(["replay", str(path)], capsys)
    assert code == 0 and _clean(out) and _clean(err)
    assert "run\\x1b[2J" in out


def test_a_long_run_history_is_read_and_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A history as large as a 60-second run writes (about 1 MB) is read and replayed: the
    limit, 8 MB, leaves room for runs longer than the lab allows."""
    base = paused_worker("none", "accepted")
    more = base.events[9:11]  # W2's send and delivery, again and again

    def grown(pairs: int) -> History:
        """The base history with `pairs` more sends and deliveries."""
        added = [dict(e, t=round(1.6 + n * 1e-4, 6)) for n in range(pairs) for e in more]
        return replace(base, events=(*base.events, *added))

    per_pair = (len(history_to_json(grown(100))) - len(history_to_json(base))) / 100
    events = list(grown(int(1_100_000 / per_pair)).events)
    path = tmp_path / "long.json"
    path.write_text(history_to_json(replace(base, events=tuple(events))))
    assert 1_000_000 <= path.stat().st_size < MAX_HISTORY_BYTES
    assert len(load_history(path).events) == len(events)
    code, out, err = run(["replay", str(path)], capsys)
    assert code in (0, 1), err  # read in full and judged (the repeats need not conform)
    assert err.count("\n") <= 1 and "Traceback" not in err
    delivered = sum(1 for event in events if event["kind"] == "deliver")
    assert delivered > 3_000 and f"{delivered} writes decided" in out


MUTATION_VALUES: tuple[Any, ...] = (0, 1, 2, 5, -1, 2**63 - 1, None, True, "", "W1", "W9", "x", 0.5)
MUTATION_FIELDS: tuple[str, ...] = (
    *("worker", "revision", "version", "lease", "token", "grant", "etcd_revision"),
    *("create_revision", "mark_before", "version_before", "read_version", "value"),
    *("deleted", "passed", "unanswered", "etcd_after", "op", "outcome", "holder"),
)


def test_random_changes_to_a_history_never_escape_as_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seeded random edits of good histories (a field's value or an event's kind changed,
    a field or an event dropped or repeated): each replays or gets one line and exit 2."""
    from lab.history_schema import KNOWN_KINDS

    chance = random.Random(20261201)
    bases = [
        json.loads(history_to_json(paused_worker(receiver, outcome)))
        for receiver, outcome in (("none", "accepted"), ("fenced", "rejected"))
    ]
    outcomes = {0: 0, 1: 0, 2: 0}  # allowed, refused by the witnesses or the model, bad input
    for _ in range(300):
        data = json.loads(json.dumps(chance.choice(bases)))
        for _ in range(chance.randint(1, 3)):
            event = chance.choice(data["events"])
            roll = chance.random()
            if roll < 0.2:
                event["kind"] = chance.choice(KNOWN_KINDS)
            elif roll < 0.3:
                event.pop(chance.choice([k for k in event if k not in ("t", "kind")]), None)
            elif roll < 0.4:
                data["events"].append(dict(event, t=round(chance.random() * 2, 3)))
            else:
                event[chance.choice(MUTATION_FIELDS)] = chance.choice(MUTATION_VALUES)
        if chance.random() < 0.3:  # another token: the grants' own tokens no longer match it
            data["settings"]["token"] = chance.choice(("version", "lease-id"))
        path = tmp_path / "history.json"
        path.write_text(json.dumps(data))
        code, out, err = run(["replay", str(path)], capsys)
        assert code in outcomes, err
        assert code != 2 or (err.count("\n") == 1 and out == ""), err
        assert code != 1 or err.count("\n") == 1, err
        assert _clean(out) and _clean(err)
        outcomes[code] += 1
    assert outcomes[0] > 20 and outcomes[2] > 20, outcomes
