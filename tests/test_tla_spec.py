"""The benchmark's TLA+ module (`bench/tla_spec.py`) is the explorer's model.

TLC's breadth-first model checking of the module written from the rules must find the
explorer's figures: as many distinct states and the same depth where every property
holds, and, where one is violated, a shortest violation as long as the explorer's
shortest. Skipped where java or TLC's jar is missing.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from model.check.explorer import explore
from model.design import REFERENCE_BOUNDS
from model.presets import PRESETS
from model.system import System

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

from bench_random_walk import tla_tools, tlc_command  # noqa: E402
from tla_spec import tla, tla_model  # noqa: E402

JAR, WHY = tla_tools()


def model_check(name: str, folder: Path) -> str:
    """TLC's report of a breadth-first check of the preset's module at the reference bounds."""
    assert JAR is not None
    model = tla_model(System(PRESETS[name].design, REFERENCE_BOUNDS))
    (folder / f"{model.name}.tla").write_text(model.module)
    (folder / f"{model.name}.cfg").write_text(model.config)
    done = subprocess.run(
        [*tlc_command(JAR, folder), f"{model.name}.tla"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return done.stdout


@pytest.mark.slow
@pytest.mark.skipif(JAR is None, reason=WHY)
@pytest.mark.parametrize("name", ["lease-aware-receiver", "rmw-lease-aware"])
def test_tlc_finds_the_explorers_states_where_every_property_holds(
    name: str, tmp_path: Path
) -> None:
    report = model_check(name, tmp_path)
    explored = explore(PRESETS[name].design, REFERENCE_BOUNDS)
    distinct = re.search(r"^[\d,]+ states generated, ([\d,]+) distinct states found", report, re.M)
    depth = re.search(r"depth of the complete state graph search is (\d+)", report)
    assert "No error has been found" in report, report
    assert distinct is not None and int(distinct.group(1).replace(",", "")) == explored.states
    assert depth is not None and int(depth.group(1)) == explored.depth + 1  # TLC counts Init


@pytest.mark.slow
@pytest.mark.skipif(JAR is None, reason=WHY)
@pytest.mark.parametrize("name", ["fencing-strict", "volatile-counter"])
def test_tlc_finds_a_shortest_violation_as_long_as_the_explorers(name: str, tmp_path: Path) -> None:
    report = model_check(name, tmp_path)
    verdicts = explore(PRESETS[name].design, REFERENCE_BOUNDS).verdicts
    shortest = min(v.shortest for v in verdicts.values() if v.shortest is not None)
    assert "Invariant NothingBroken is violated" in report, report
    states = re.findall(r"^State (\d+):", report, flags=re.MULTILINE)
    assert len(states) == shortest + 1  # the initial state, then one per step


def test_every_expression_of_the_rules_has_a_tla_form() -> None:
    """Each preset's module is written without a Python expression left over."""
    for preset in PRESETS.values():
        module = tla_model(System(preset.design, REFERENCE_BOUNDS)).module
        assert " if " not in module and " else " not in module.replace("ELSE", "")
        assert "==" not in module.replace(" == ", "").replace("====", "")
    with pytest.raises(ValueError, match="no TLA"):
        import ast

        tla(ast.parse("a // b", mode="eval").body)
