"""AppTest: a proof whose process crashes shows one sentence on the proofs page, no table
and no traceback, and is not kept: the same link proves again once z3 is well."""

from __future__ import annotations

import os
import signal

import pytest
from streamlit.testing.v1 import AppTest

from model.design import Bounds, Design
from tests.app.helpers import page_alone, shown
from webapp.jobs import proving as proof_jobs

PAGE = "proofs"
LINK = {"preset": "fencing", "workers": "3", "lease": "1", "horizon": "2", "grants": "1"}


def _crashing_proof(design: Design, bounds: Bounds, max_states: int, max_seconds: float) -> None:
    """Stands for z3 crashing inside native code: the job's process dies of SIGSEGV."""
    os.kill(os.getpid(), signal.SIGSEGV)


def _open() -> AppTest:
    """The proofs page opened from the link with the run switch on."""
    at = page_alone(PAGE, default_timeout=120)
    for key, value in {**LINK, "run": "1"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_crashed_proof_is_one_sentence_and_is_tried_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The job's function swapped for one that segfaults (the job imports it by name)."""
    monkeypatch.setattr(proof_jobs, "proof_rows", _crashing_proof)
    crashed = _open()
    assert [shown(e.value) for e in crashed.error] == [
        "z3 stopped unexpectedly (it was killed by SIGSEGV) before it could say; nothing "
        "else was affected, so you can try again."
    ]
    assert not crashed.table
    monkeypatch.undo()
    proved = _open()
    assert not proved.error and proved.table[0].value.columns[1] == "z3 says"
    assert any(m.value.startswith("#### P1, monotonic acceptance") for m in proved.markdown)
