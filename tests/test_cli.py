"""The `fencing` command: outputs, flags overriding presets, and clear errors for bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fencing.golden import read_golden
from fencing.stories import paused_worker_story
from model.check.explorer import Exploration, explore
from model.design import REFERENCE_BOUNDS, Bounds, Design
from model.formats.trace import trace_to_dict, trace_to_json
from model.presets import PRESET_NAMES, PRESETS, PRESETS_LIST
from tests.cli_helpers import run

GOLDEN = read_golden()
"""The recorded figures at the reference bounds, where `fencing check` starts."""


def test_check_narrates_each_counterexample(capsys: pytest.CaptureFixture[str]) -> None:
    """Human output has counts, a verdict per property and the narrated shortest runs, at the
    reference bounds unless others are given (the golden figures of lease-only there)."""
    code, out, _ = run(["check", "--receiver", "none"], capsys)
    assert code == 0
    golden = GOLDEN["presets"]["lease-only"]
    assert f"Bounds: {REFERENCE_BOUNDS.short()}" in out
    assert (
        f"Explored {golden['states']:,} states, {golden['transitions']:,} transitions, "
        f"depth {golden['depth']}"
    ) in out
    assert "P1 monotonic acceptance" in out and "VIOLATED (shortest run: 8 steps)" in out
    assert "P4 no false rejection            holds" in out
    assert "Shortest run violating P1:" in out and "✗ P1 violated" in out


def test_preset_flags_override_the_preset(capsys: pytest.CaptureFixture[str]) -> None:
    """`--preset lease-only --receiver fenced` is the fencing design."""
    code, out, _ = run(
        ["check", "--preset", "lease-only", "--receiver", "fenced", "--json"], capsys
    )
    assert code == 0
    report = json.loads(out)
    assert report["design"]["receiver"] == "fenced"
    assert report["states"] == GOLDEN["presets"]["fencing"]["states"]


def test_overriding_a_presets_token_or_mark_keeps_its_restarts_and_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--preset volatile-counter --token counter` keeps the preset's restart and is refused
    with what to change; with the restarts set to 0 it is the core; likewise a durable mark."""
    for args, message, reset in (
        (
            ["--preset", "volatile-counter", "--token", "counter"],
            "coordinator_restarts only apply to token counter-volatile",
            "--coordinator-restarts",
        ),
        (
            ["--preset", "volatile-hwm", "--hwm", "durable"],
            "storage_restarts only apply to a volatile mark",
            "--storage-restarts",
        ),
    ):
        code, _, err = run(["check", *args, "--json"], capsys)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1
        code, out, _ = run(["check", *args, reset, "0", "--json"], capsys)
        assert code == 0 and json.loads(out)["states"] == GOLDEN["presets"]["fencing"]["states"]


def test_skew_and_wrap_flags(capsys: pytest.CaptureFixture[str]) -> None:
    """`--skew` and `--wrap` reach the design."""
    code, out, _ = run(["check", "--token", "local-clock", "--skew", "0,2", "--json"], capsys)
    assert code == 0 and json.loads(out)["design"]["skew"] == [0, 2]
    code, out, _ = run(["check", "--token", "wrapping", "--wrap", "3", "--json"], capsys)
    assert code == 0 and json.loads(out)["design"]["wrap"] == 3


@pytest.mark.parametrize(
    "args, message",
    [
        (["check", "--workers", "50"], "workers = 50 is out of range: allowed 1..5"),
        (["check", "--lease", "-1"], "lease = -1 is out of range"),
        (["check", "--fenced-reads"], "fenced_reads needs workload rmw"),
        (
            ["check", "--token", "local-clock", "--skew", "1,0,0"],
            "3 offsets but there are 2 workers",
        ),
        (["check", "--skew", "a,b"], "argument --skew: skew must be a whole number"),
        (["check", "--workers", "two"], "invalid int value: 'two'"),
        (["check", "--preset", "nope"], "invalid choice: 'nope'"),
        (["check", "--max-states", "0"], "--max-states: must be a whole number from 1"),
        (["check", "--max-seconds", "nan"], "--max-seconds: must be a number of seconds above 0"),
        (["check", "--max-seconds", "inf"], "--max-seconds: must be a number of seconds above 0"),
        (["prove", "--max-seconds", "-1"], "--max-seconds: must be a number of seconds above 0"),
        (["replay", "/nonexistent/trace.json"], "file does not exist"),
    ],
)
def test_bad_input_gets_one_clear_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every bad input exits with status 2 and a message, never a traceback."""
    code, out, err = run(args, capsys)
    assert code == 2
    assert message in err
    assert "Traceback" not in err + out


def test_budget_is_reported_as_incomplete(capsys: pytest.CaptureFixture[str]) -> None:
    """A run cut by the state budget says INCOMPLETE and keeps found violations."""
    code, out, _ = run(
        [
            "check",
            "--receiver",
            "none",
            "--horizon",
            "6",
            "--grants",
            "3",
            "--writes",
            "2",
            "--max-states",
            "300",
        ],
        capsys,
    )
    assert code == 0
    assert "INCOMPLETE: state budget of 300 states reached" in out
    assert "VIOLATED (shortest run: 5 steps)" in out


def test_replay_narrates_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`fencing replay` re-checks a trace file and lists the violated properties."""
    path = tmp_path / "seed.json"
    path.write_text(trace_to_json(paused_worker_story("none").trace()))
    code, out, _ = run(["replay", str(path)], capsys)
    assert code == 0
    assert "Replayed 9 steps" in out and "properties violated: P1, P2, P3" in out


def test_replay_refuses_a_tampered_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A tampered file gets the first bad step named, with exit status 2."""
    data = trace_to_dict(paused_worker_story("none").trace())
    data["steps"][3]["state"]["holder"] = 1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    code, _, err = run(["replay", str(path)], capsys)
    assert code == 2 and "step 4 (Acquire(W2)): the file says holder=1" in err


def test_matrix_json_has_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    """`fencing matrix --json` lists every preset with states and P1..P6 at the given bounds."""
    code, out, _ = run(
        ["matrix", "--json", "--horizon", "4", "--grants", "2", "--writes", "1"], capsys
    )
    assert code == 0
    matrix = json.loads(out)
    assert matrix["bounds"] == {"workers": 2, "lease": 2, "horizon": 4, "grants": 2, "writes": 1}
    assert [row["preset"] for row in matrix["rows"]] == [p.name for p in PRESETS_LIST]
    fencing = next(row for row in matrix["rows"] if row["preset"] == "fencing")
    assert fencing["states"] == 321
    assert fencing["properties"]["P1"] == {"status": "holds", "holds": True, "shortest": None}
    assert fencing["properties"]["P2"] == {"status": "violated", "holds": False, "shortest": 5}


def test_presets_lists_each_lesson(capsys: pytest.CaptureFixture[str]) -> None:
    """`fencing presets` prints one line per preset with its lesson."""
    code, out, _ = run(["presets"], capsys)
    assert code == 0
    for preset in PRESETS_LIST:
        assert f"{preset.name}" in out and preset.lesson[:40] in out


def test_prove_json_agrees_with_the_explorer(capsys: pytest.CaptureFixture[str]) -> None:
    """`fencing prove --preset fencing --json`: P1 and P3 proved, P2 violated at 5 like `check`."""
    bounds = ["--horizon", "4", "--grants", "2", "--writes", "1"]
    code, out, _ = run(["prove", "--preset", "fencing", *bounds, "--json"], capsys)
    assert code == 0
    proved = json.loads(out)["properties"]
    assert proved["P1"]["status"] == "proved" and proved["P1"]["invariant"]
    assert proved["P3"]["status"] == "proved"
    assert proved["P2"] == {**proved["P2"], "status": "violated", "method": "bmc", "shortest": 5}
    code, out, _ = run(["check", "--preset", "fencing", *bounds, "--json"], capsys)
    checked = json.loads(out)["properties"]
    for name, verdict in proved.items():
        assert verdict["status"] != "unknown", name
        assert verdict["holds"] == checked[name]["holds"], name
        assert (verdict["status"] == "vacuous") == (checked[name]["status"] == "vacuous"), name


def test_prove_receiver_only(capsys: pytest.CaptureFixture[str]) -> None:
    """`fencing prove --receiver-only` proves the atomic rule and shows the non-atomic break."""
    code, out, _ = run(["prove", "--receiver-only"], capsys)
    assert code == 0
    assert "P1 for any workers and any token sequence: PROVED" in out
    assert "P1 broken: a lower token lands after a higher one" in out


def test_prove_refuses_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    """Bad designs are refused by `prove` exactly as by `check`."""
    code, _, err = run(["prove", "--fenced-reads"], capsys)
    assert code == 2 and "fenced_reads needs workload rmw" in err


def test_presets_json_lists_claims_that_are_true_at_their_bounds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`fencing presets --json`: every preset with its claims, each true at its bounds."""
    code, out, _ = run(["presets", "--json"], capsys)
    assert code == 0
    listed = json.loads(out)
    assert [p["name"] for p in listed] == list(PRESET_NAMES)
    for entry in listed:
        assert {"name", "mirrors", "lesson", "source", "claims"} <= set(entry)
        design = Design.from_dict(entry["design"])
        by_bounds: dict[str, Exploration] = {}
        for claim in entry["claims"]:
            key = json.dumps(claim["bounds"], sort_keys=True)
            if key not in by_bounds:
                by_bounds[key] = explore(design, Bounds.from_dict(claim["bounds"]))
            verdict = by_bounds[key].verdicts[claim["property"]]
            assert verdict.status == claim["status"], (entry["name"], claim)
            assert verdict.holds == claim["holds"]
            assert verdict.shortest == claim["shortest"]
            assert ("never_exercised" in claim) == (verdict.status == "vacuous")


def test_check_json_reports_unfinished_properties_as_unknown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A run cut by its budget never says a property it did not finish checking holds."""
    code, out, _ = run(
        [
            "check",
            "--preset",
            "fencing",
            "--horizon",
            "8",
            "--grants",
            "4",
            "--writes",
            "2",
            "--max-states",
            "1000",
            "--json",
        ],
        capsys,
    )
    data = json.loads(out)
    assert code == 0 and data["complete"] is False
    assert data["properties"]["P2"]["holds"] is False  # a violation found is final
    for name in ("P1", "P3", "P4", "P5"):
        assert data["properties"][name]["holds"] is None
        assert data["properties"][name]["status"] == "unknown"


# ----- hostile and careless input: one line, exit status 2, never a traceback ----------------


def trace_file(tmp_path: Path, change: Any) -> Path:
    """A valid trace file after applying `change` to its decoded object."""
    data = trace_to_dict(paused_worker_story("none").trace())
    change(data)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(data))
    return path


def refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run a command that must be refused; return its one-line message."""
    code, out, err = run(args, capsys)
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err
    assert len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(version=True), "unsupported trace version True"),
        (lambda d: d.update(version=1.0), "unsupported trace version 1.0"),
        (lambda d: d["steps"][0].update(violations=5), "'violations' must be a list"),
        (lambda d: d["steps"][0].update(violations=None), "'violations' must be a list"),
        (lambda d: d["steps"][0].update(violations={"P1": 1}), "'violations' must be a list"),
        (lambda d: d["steps"][0].update(violations="P1"), "'violations' must be a list"),
        (lambda d: d["steps"][0]["state"].update(now=True), "the file says now=True"),
        (lambda d: d.update(title=7), "field 'title' must be text"),
        (
            lambda d: d.update(
                bounds={"workers": 9, "lease": 2, "horizon": 4, "grants": 2, "writes": 1}
            ),
            "the trace's design or bounds are invalid: workers = 9 is out of range",
        ),
    ],
)
def test_malformed_traces_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, message: str
) -> None:
    assert message in refused(["replay", str(trace_file(tmp_path, change))], capsys)


def test_unreadable_and_enormous_trace_files_are_refused_without_reading_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    assert "nests lists or objects too deeply" in refused(["replay", str(nested)], capsys)
    digits = tmp_path / "digits.json"
    digits.write_text('{"format": "fencing-lab/trace", "version": ' + "9" * 5000 + "}")
    assert "number too long" in refused(["replay", str(digits)], capsys)
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(8 * 1024**3)  # sparse: 8 GB that must not be read
    assert "the limit is 8,000,000 bytes" in refused(["replay", str(huge)], capsys)
    assert "not a regular file" in refused(["replay", str(tmp_path)], capsys)
    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)
    assert "not a regular file" in refused(["replay", str(pipe)], capsys)
    assert "cannot be read" in refused(["replay", "/proc/self/mem"], capsys)
    assert "does not exist" in refused(["replay", str(tmp_path / "missing.json")], capsys)


def test_terminal_escape_codes_in_a_trace_are_printed_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = trace_file(tmp_path, lambda d: d.update(title="\x1b[2J\x1b[31mowned"))
    code, out, _ = run(["replay", str(path)], capsys)
    assert code == 0 and "\x1b" not in out and "\\x1b[2J" in out
    bad = trace_file(tmp_path, lambda d: d["steps"][0]["state"].update({"\x1b[31m": 1}))
    err = refused(["replay", str(bad)], capsys)
    assert "\x1b" not in err and "\\x1b" in err


def test_argument_errors_are_one_line_with_a_pointer_to_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = refused(["check", "--workers", "two"], capsys)
    assert err.strip().endswith("(see fencing check --help)")


@pytest.mark.slow
def test_a_matrix_too_big_for_its_budget_names_the_presets_it_did_not_finish(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        [
            "matrix",
            "--workers",
            "5",
            "--horizon",
            "30",
            "--grants",
            "8",
            "--writes",
            "4",
            "--max-seconds",
            "2",
        ],
        capsys,
    )
    assert code == 0 and "Traceback" not in err
    assert "lease-only" in out and "stopped: time budget" in out
    assert "unknown" in out


def test_the_matrix_budget_is_for_the_whole_table(capsys: pytest.CaptureFixture[str]) -> None:
    """3,000 states for the whole table: the first presets use them, the rest say unknown."""
    code, out, _ = run(["matrix", "--json", "--max-states", "3000"], capsys)
    rows = json.loads(out)["rows"]
    assert code == 0 and sum(row["states"] for row in rows) <= 3000 + len(rows)
    assert rows[-1]["complete"] is False
    assert rows[-1]["properties"]["P1"]["status"] == "unknown"


@pytest.mark.slow
def test_prove_stays_within_its_budget_on_bounds_the_explorer_cannot_finish(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = [
        "prove",
        "--preset",
        "lease-only",
        "--workers",
        "4",
        "--lease",
        "4",
        "--horizon",
        "16",
        "--grants",
        "5",
        "--writes",
        "2",
        "--max-states",
        "20000",
        "--json",
    ]
    code, out, _ = run(args, capsys)
    report = json.loads(out)
    assert code == 0 and "stopped" in report["explored"]
    assert report["properties"]["P1"]["status"] == "violated"
    assert report["properties"]["P4"]["status"] == "vacuous"


def test_prove_random_tokens_reports_without_a_crash(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["prove", "--preset", "random-token", "--json"], capsys)
    statuses = {k: v["status"] for k, v in json.loads(out)["properties"].items()}
    assert code == 0 and "proved" not in statuses.values()
    assert statuses == {
        "P1": "holds",
        "P2": "violated",
        "P3": "violated",
        "P4": "violated",
        "P5": "vacuous",
        "P6": "vacuous",
    }


def test_check_starts_at_the_reference_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    """`fencing check` and `fencing export` start where `prove`, Compare and the chapters do."""
    code, out, _ = run(["check", "--json"], capsys)
    assert code == 0 and json.loads(out)["bounds"] == REFERENCE_BOUNDS.to_dict()
    code, out, _ = run(["export", "promela"], capsys)
    assert code == 0 and REFERENCE_BOUNDS.short() in out


def _one_line(text: str) -> str:
    """Output with its wrapped lines joined, to find a sentence across a line break."""
    return " ".join(text.split())


def test_check_prints_the_presets_lesson_and_where_it_shows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """fencing-strict's lesson says P4 fails: at the defaults the table shows it failing and the
    lesson stands alone; with one write per grant P4 holds, and the lesson says so and names
    the bounds where it shows."""
    lesson = PRESETS["fencing-strict"].as_lesson()
    code, out, _ = run(["check", "--preset", "fencing-strict"], capsys)
    assert code == 0
    assert "P4 no false rejection            VIOLATED (shortest run: 5 steps)" in out
    assert f"Lesson of fencing-strict: {lesson.text}" in _one_line(out)
    assert "does not show" not in out
    small = ["--horizon", "4", "--grants", "2", "--writes", "1"]
    code, out, _ = run(["check", "--preset", "fencing-strict", *small], capsys)
    assert code == 0
    assert "P4 no false rejection            holds" in out
    assert (
        "At these bounds the lesson does not show (P4 holds): it appears at "
        f"{REFERENCE_BOUNDS.in_words()}."
    ) in _one_line(out)


def test_check_names_a_lesson_only_for_a_presets_design(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A flag that changes a preset's design leaves its lesson out: it speaks of another design."""
    code, out, _ = run(["check", "--preset", "fencing-strict", "--receiver", "none"], capsys)
    assert code == 0
    assert "Lesson of fencing-strict" not in out
    assert f"Lesson of lease-only: {PRESETS['lease-only'].as_lesson().text}" in _one_line(out)
    code, out, _ = run(["check", "--token", "random", "--receiver", "lease-aware"], capsys)
    assert code == 0 and "Lesson of" not in out
