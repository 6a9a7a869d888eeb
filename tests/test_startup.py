"""A small `fencing check` imports only what it uses: no solver, compiler or web stack.

Checked in a fresh interpreter (this test process has imported everything already).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("z3", "numba", "llvmlite", "streamlit", "plotly", "networkx", "itf_py", "hypothesis")

PROGRAM = """
import contextlib, io, json, sys
from fencing.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "states": json.loads(out.getvalue())["states"],
                  "heavy": [name for name in %r if name in sys.modules]}))
"""


def check_in_a_fresh_interpreter(*flags: str) -> dict[str, object]:
    """Run `fencing check FLAGS --json` in a new interpreter; its code, states and imports."""
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM % (HEAVY,), "check", *flags, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(
    "flags",
    [["--preset", "fencing"], ["--preset", "lease-only", "--workers", "3", "--horizon", "6"]],
    ids=["321-states", "W3"],
)
def test_a_small_check_imports_no_heavy_module(flags: list[str]) -> None:
    found = check_in_a_fresh_interpreter(*flags)
    assert found["code"] == 0 and isinstance(found["states"], int) and found["states"] > 300
    assert found["heavy"] == []


def test_a_random_check_imports_the_compiler_only() -> None:
    """The random strategy walks on compiled rules, and needs no solver, Hypothesis or web
    stack."""
    found = check_in_a_fresh_interpreter("--strategy", "random", "--runs", "5")
    assert found["code"] == 0
    assert found["heavy"] == ["numba", "llvmlite"]
