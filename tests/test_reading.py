"""The bounded reader: hostile files are refused from their text alone, quickly and within
bounded memory, through the command line and the web upload alike; good files still load.

The memory figures are measured in a fresh Python process: its peak resident memory
(VmHWM, reset once the imports are done) against its resident memory just before the file
is read. The time bounds only catch a hang (the figures are in bench/bench_reading.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from model.design import Bounds, Design
from model.formats.itf import trace_from_any_json, trace_to_itf, trace_to_itf_json
from model.formats.reading import (
    MAX_DEPTH,
    MAX_NUMBER_DIGITS,
    MAX_TRACE_BYTES,
    MAX_TRACE_STEPS,
    SET_LIMITS,
    TRACE_LIMITS,
    ReadError,
    load_json,
    scan_json,
    scan_toml,
)
from model.formats.trace import TraceError, replay, trace_from_json, trace_to_json
from model.rules import Action
from tests.cli_helpers import run

ROOT = Path(__file__).resolve().parents[1]
BOMB_RECORDS = 330_000
MEMORY_BOUND = 200_000_000
"""Peak memory a refused file may add to the process (the bomb cost 1.8 GB before)."""
HANG_SECONDS = 20.0


def itf_bomb() -> bytes:
    """An ITF document under 1 MB whose one state holds 330,000 empty records."""
    records = ",".join(["{}"] * BOMB_RECORDS)
    text = '{"#meta":{},"vars":["x"],"states":[{"x":[' + records + "]}]}"
    data = text.encode()
    assert len(data) < MAX_TRACE_BYTES
    return data


def many_states(count: int) -> bytes:
    """An ITF document with `count` small states (the initial one's action, then nothing)."""
    state = '{"action":{"tag":"Init","value":null}}'
    return ('{"#meta":{},"vars":["action"],"states":[' + ",".join([state] * count) + "]}").encode()


PROBE = """
import contextlib, json, resource, sys, time
from pathlib import Path

def resident():
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize()

def peak():
    status = Path("/proc/self/status").read_text().split("VmHWM:")[1]
    return int(status.split()[0]) * 1024

{setup}
before = resident()
with contextlib.suppress(OSError):
    Path("/proc/self/clear_refs").write_text("5")  # the peak from here on, not the imports'
start = time.perf_counter()
{action}
seconds = time.perf_counter() - start
print(json.dumps({{"seconds": seconds, "peak_delta": peak() - before,
                  "kept": resident() - before, "said": said}}))
"""

CLI_SETUP = """
import contextlib, io
from fencing.cli import main
import lab.cli, lab.history, lab.report, model.formats.itf  # imported before the measure starts
"""
CLI_ACTION = """
err = io.StringIO()
with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
    code = main(["replay", sys.argv[1]])
said = [code, err.getvalue()]
"""

APP_SETUP = """
from tests.app.helpers import page_alone
at = page_alone(sys.argv[2], default_timeout=120)
at.run()
data = Path(sys.argv[1]).read_bytes()
"""
APP_ACTION = """
at.file_uploader(key="playground-upload").upload("bomb.json", data, "application/json").run()
said = [len(at.exception), [e.value for e in at.error]]
"""


def probe(setup: str, action: str, *args: str) -> dict[str, Any]:
    """Run setup then action in a fresh interpreter; the action's time, memory and words."""
    script = PROBE.format(setup=setup.strip(), action=action.strip())
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_itf_bomb_is_refused_by_fencing_replay_quickly_in_bounded_memory(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bomb.json"
    path.write_bytes(itf_bomb())
    found = probe(CLI_SETUP, CLI_ACTION, str(path), "")
    code, err = found["said"]
    assert code == 2 and err.count("\n") == 1, err
    assert "holds too many values" in err and "660,007" in err
    assert found["peak_delta"] < MEMORY_BOUND, found
    assert found["kept"] < MEMORY_BOUND / 4, found
    assert found["seconds"] < HANG_SECONDS, found


@pytest.mark.slow
def test_the_itf_bomb_uploaded_to_the_playground_is_refused_and_its_memory_returns(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bomb.json"
    path.write_bytes(itf_bomb())
    found = probe(APP_SETUP, APP_ACTION, str(path), "playground")
    exceptions, errors = found["said"]
    assert exceptions == 0
    assert len(errors) == 1 and "This trace file was not loaded" in errors[0]
    assert "holds too many values" in errors[0]
    assert found["peak_delta"] < MEMORY_BOUND, found
    assert found["kept"] < MEMORY_BOUND / 4, found
    assert found["seconds"] < HANG_SECONDS, found


def test_records_are_counted_before_itf_py_builds_them() -> None:
    """Fewer records than the value limit, but more than one action per state: refused."""
    records = ",".join(["{}"] * 50_000)
    text = '{"#meta":{},"vars":["x"],"states":[{"x":[' + records + "]}]}"
    started = time.perf_counter()
    with pytest.raises(TraceError, match="holds 50,000 records or variants"):
        trace_from_any_json(text)
    assert time.perf_counter() - started < HANG_SECONDS


def test_many_small_states_are_refused_by_count() -> None:
    with pytest.raises(TraceError, match=f"at most {MAX_TRACE_STEPS + 1} states .* not 20,000"):
        trace_from_any_json(many_states(20_000))
    empty = '{"#meta":{},"vars":[],"states":[' + ",".join(["{}"] * 250_000) + "]}"
    with pytest.raises(TraceError, match="holds too many values"):
        trace_from_any_json(empty)


@pytest.mark.parametrize(
    "text, message",
    [
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "nests lists or objects too deeply"),
        ('{"a":' * 5_000 + "1" + "}" * 5_000, "nests lists or objects too deeply"),
        ('{"version": ' + "9" * (MAX_NUMBER_DIGITS + 1) + "}", "number too long"),
        ('{"version": 1e999}', "number too large"),
        ('{"version": -Infinity}', "-Infinity, which is not a number"),
        ('{"version": NaN}', "NaN, which is not a number"),
        ("[" + ",".join(["0"] * 250_000) + "]", "holds too many values"),
        ('{"title": "\\ud800', "not valid JSON"),
    ],
)
def test_hostile_json_is_refused_from_its_text(text: str, message: str) -> None:
    with pytest.raises(ReadError, match=message):
        load_json(text, TRACE_LIMITS)
    with pytest.raises(TraceError, match=message):
        trace_from_json(text)


def test_strings_do_not_count_and_cannot_slow_the_scan() -> None:
    """Brackets and commas in text are not structure; an unclosed string ends the scan."""
    scan_json(json.dumps({"title": "[{," * 100_000}), TRACE_LIMITS)
    started = time.perf_counter()
    for text in ('"\\"' * 300_000, '"' + "\\" * 999_999, '"a' * 400_000):
        scan_json(text, TRACE_LIMITS)
    assert time.perf_counter() - started < HANG_SECONDS


def test_good_traces_pass_in_every_format() -> None:
    """The limits leave room: a long trace loads as JSON, indented ITF and compact ITF."""
    design, bounds = Design(), Bounds(workers=3, horizon=12, grants=4, writes=3)
    trace = replay(design, bounds, [Action("Acquire", 1), Action("Send", 1), Action("Tick")])
    compact = json.dumps(trace_to_itf(trace), separators=(",", ":"))
    for text in (trace_to_json(trace), trace_to_itf_json(trace), compact):
        assert trace_from_any_json(text).actions == trace.actions


@pytest.mark.parametrize(
    "text, message, line",
    [
        ("a = " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "nests lists or tables", 1),
        ("title = 'x'\n\n" + "a." * MAX_DEPTH + "b = 1\n", "nests tables too deeply", 3),
        ("x = 1\ny = " + "9" * (MAX_NUMBER_DIGITS + 1), "number too long", 2),
        ("a = [" + ",".join(["1"] * 20_001) + "]", "holds too many values", None),
    ],
)
def test_hostile_toml_is_refused_with_its_line(text: str, message: str, line: int | None) -> None:
    with pytest.raises(ReadError, match=message) as refused:
        scan_toml(text, SET_LIMITS)
    assert refused.value.line == line


def test_toml_strings_and_comments_do_not_count() -> None:
    text = 'a = "[[[[{{{{,,,,"\nb = """\n' + "[" * 100 + '\n"""\n# ' + "[" * 100 + "\n"
    scan_toml(text, SET_LIMITS)  # 100 brackets deep, were strings and comments counted
    assert tomllib.loads(text)["a"] == "[[[[{{{{,,,,"


def test_the_default_exercise_set_passes_the_scan() -> None:
    from classroom.schema import DEFAULT_SET

    scan_toml(DEFAULT_SET.read_text(encoding="utf-8"), SET_LIMITS)


def test_an_exercise_set_too_deep_is_one_problem_with_its_line() -> None:
    from classroom.data import ExerciseSetError
    from classroom.sets import parse_set

    with pytest.raises(ExerciseSetError) as refused:
        parse_set("title = 'x'\n" + "a = " + "[" * 40 + "]" * 40 + "\n")
    (problem,) = refused.value.problems
    assert problem.line == 2 and problem.text().startswith("line 2: file: nests lists or tables")


def test_deep_nesting_and_huge_numbers_through_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, text, message in (
        ("deep.json", "[" * 50 + "]" * 50, "nests lists or objects too deeply (50 levels"),
        ("int.json", '{"version": ' + "7" * 60 + "}", "number too long to read"),
        ("states.json", many_states(600).decode(), "at most 501 states"),
    ):
        path = tmp_path / name
        path.write_text(text)
        code, out, err = run(["replay", str(path)], capsys)
        assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err
