"""`fencing export promela|itf`, `fencing replay` of ITF files, and the memory-set budget."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from fencing.budget import (
    BASELINE_BYTES,
    default_max_states,
    memory_for,
    resolve_max_states,
)
from fencing.spin import check_with_spin, spin_available
from model.check.explorer import explore
from model.check.search import BYTES_PER_STATE
from model.design import REFERENCE_BOUNDS, Design, DesignError
from model.formats.promela import promela_model
from model.formats.trace import MAX_TRACE_BYTES
from model.presets import PRESETS
from tests.cli_helpers import run


def test_export_promela_prints_the_models_text(capsys: pytest.CaptureFixture[str]) -> None:
    """The command prints exactly the exporter's model of the chosen design and bounds."""
    code, out, _ = run(
        ["export", "promela", "--preset", "fencing-strict", "--horizon", "5"], capsys
    )
    assert code == 0
    bounds = replace(REFERENCE_BOUNDS, horizon=5)  # the other bounds at their defaults
    expected = promela_model(PRESETS["fencing-strict"].design, bounds).text
    assert out == expected + "\n"
    assert "assert(property_P4 ||" in out and "active proctype system()" in out


@pytest.mark.skipif(not spin_available(), reason="spin or gcc is not installed")
@pytest.mark.slow
def test_exported_file_runs_in_spin(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A model written with --output is what spin checks: the explorer's states, + 1 transition."""
    target = tmp_path / "model.pml"
    args = ["export", "promela", "--preset", "volatile-counter", "--output", str(target)]
    assert run(args, capsys)[0] == 0
    spin = check_with_spin(target.read_text(), tmp_path / "spin")
    ours = explore(PRESETS["volatile-counter"].design, REFERENCE_BOUNDS)
    assert (spin.states, spin.transitions) == (ours.states, ours.transitions + 1)


def test_export_itf_then_replay_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The shortest P1 counterexample as ITF replays with `fencing replay` to P1."""
    code, out, _ = run(["export", "itf", "--receiver", "none", "--property", "P1"], capsys)
    assert code == 0
    document = json.loads(out)
    assert document["#meta"]["format"] == "ITF" and len(document["states"]) == 8 + 1
    assert document["states"][-1]["violations"] == {"#set": ["P1", "P2", "P3"]}
    path = tmp_path / "p1.itf.json"
    path.write_text(out)
    code, out, _ = run(["replay", str(path)], capsys)
    assert code == 0
    assert "Replayed 8 steps" in out and "properties violated: P1, P2, P3" in out


def test_export_itf_without_a_counterexample(capsys: pytest.CaptureFixture[str]) -> None:
    """A property that holds has no counterexample: a one-line message and status 1."""
    code, out, err = run(["export", "itf", "--property", "P1"], capsys)
    assert code == 1 and out == ""
    assert "no counterexample of P1 to export: it holds within these bounds" in err


def test_replay_refuses_a_tampered_itf_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A changed value gets one line naming the state, and status 2."""
    run(["export", "itf", "--receiver", "none", "--property", "P2"], capsys)
    path = tmp_path / "p2.itf.json"
    code, out, _ = run(["export", "itf", "--receiver", "none", "--property", "P2"], capsys)
    document = json.loads(out)
    document["states"][3]["now"] = {"#bigint": "4"}
    path.write_text(json.dumps(document))
    code, out, err = run(["replay", str(path)], capsys)
    assert code == 2 and out == ""
    assert err.startswith("fencing: error: state 3 (") and "the file says now=4" in err
    assert err.count("\n") == 1


def test_replay_reads_at_most_the_size_limit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An oversized file is refused after reading only the limit, with status 2."""
    path = tmp_path / "huge.json"
    path.write_bytes(b" " * (MAX_TRACE_BYTES + 10))
    code, _, err = run(["replay", str(path)], capsys)
    assert code == 2 and "the limit is 1,000,000 bytes" in err


def test_budget_from_memory() -> None:
    """The default budget is what the available memory holds; a larger one is refused."""
    available = BASELINE_BYTES + 1000 * BYTES_PER_STATE
    assert default_max_states(available) == 1000
    assert resolve_max_states(None, available) == 1000
    assert resolve_max_states(999, available) == 999
    assert memory_for(1000) == available
    with pytest.raises(DesignError, match=r"a budget of 2,000 states needs up to .* GiB"):
        resolve_max_states(2000, available)


def test_check_refuses_a_budget_that_cannot_fit(capsys: pytest.CaptureFixture[str]) -> None:
    """A state budget beyond the machine's memory is refused up front, with the figure."""
    code, out, err = run(["check", "--max-states", str(10**15), "--json"], capsys)
    assert code == 2 and out == ""
    assert "needs up to" in err and "GiB of memory" in err and "lower --max-states" in err


def test_check_default_budget_finishes_past_the_old_limit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without --max-states a run is not cut at a fixed count: it completes."""
    code, out, _ = run(["check", "--json", "--max-seconds", "600"], capsys)
    assert code == 0 and json.loads(out)["complete"] is True
    assert default_max_states() > 3_000_000


def test_the_widest_bounds_are_accepted_and_explored(capsys: pytest.CaptureFixture[str]) -> None:
    """Bounds whose keys need several words (formerly refused) explore like any other."""
    flags = ["--token", "local-clock", "--skew", "6,6,6,6,6", "--workload", "rmw"]
    sizes = ["--workers", "5", "--lease", "12", "--horizon", "30", "--grants", "8"]
    code, out, _ = run(
        ["check", *flags, *sizes, "--writes", "4", "--max-states", "50000", "--json"], capsys
    )
    assert code == 0
    report = json.loads(out)
    assert report["states"] == 50000 and report["complete"] is False
    assert "state budget" in report["stopped_by"]
    assert Design(token="local-clock", skew=(6,) * 5).skews(5) == (6,) * 5
