"""Running the `fencing` command line in-process, shared by the CLI and export tests."""

from __future__ import annotations

import pytest

from fencing.cli import main


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the CLI in-process; return the exit code, standard output and standard error."""
    try:
        code = main(args)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
