"""Hostile and large files: how long a refusal takes and what it costs in memory (printed
figures, not pass/fail).

Each file is replayed by `fencing replay` in a fresh process; its wall time and peak
resident memory are printed beside those of replaying a small good trace (the cost of
starting Python and importing the model). The playground upload of the ITF bomb is timed
through AppTest in a fresh process, with the memory it adds and the memory still held
after the refusal.

Targets: a refusal under 1 s, and under 200 MB more than the small trace's peak.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lab.history import history_to_json  # noqa: E402
from model.actions import Action, ActionKind  # noqa: E402
from model.design import Bounds, Design  # noqa: E402
from model.formats.itf import trace_to_itf_json  # noqa: E402
from model.formats.trace import replay  # noqa: E402
from tests.lab.histories import paused_worker  # noqa: E402
from tests.test_reading import (  # noqa: E402
    APP_ACTION,
    APP_SETUP,
    CLI_ACTION,
    CLI_SETUP,
    PROBE,
    itf_bomb,
    many_states,
)

MEASURE = (
    "import resource, subprocess, sys, time; start = time.perf_counter(); "
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
    "print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
    "done.returncode)"
)


def replayed(path: Path) -> tuple[float, float, int]:
    """Wall seconds, peak MB and exit status of `fencing replay PATH` in a fresh process."""
    fencing = str(Path(sys.executable).parent / "fencing")
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, fencing, "replay", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, peak_kb, code = done.stdout.split()
    return float(seconds), int(peak_kb) / 1024, int(code)


def long_history() -> str:
    """A history of about 1 MB, the size a 60-second randomized run writes."""
    base = paused_worker("none", "accepted")
    more = base.events[6:8]
    events = list(base.events) + [
        dict(event, t=round(1.6 + n * 1e-4, 6)) for n in range(3_500) for event in more
    ]
    return history_to_json(base.__class__(base.scenario, base.settings, tuple(events)))


def main() -> None:
    """Print each file's figures, then the upload's."""
    good = replay(Design(), Bounds(), [Action(ActionKind.ACQUIRE, 1), Action(ActionKind.SEND, 1)])
    files = {
        "small good trace (baseline)": trace_to_itf_json(good).encode(),
        "ITF bomb: 330,000 {} records": itf_bomb(),
        "ITF: 20,000 small states": many_states(20_000),
        "JSON nested 300,000 deep": b"[" * 300_000 + b"]" * 300_000,
        "JSON number of 4,000 digits": b'{"version": ' + b"9" * 4_000 + b"}",
        "lab history of a 60 s run (good)": long_history().encode(),
    }
    print("fencing replay, each file in a fresh process (target: refused under 1 s, +200 MB)")
    baseline = 0.0
    with tempfile.TemporaryDirectory() as folder:
        for name, data in files.items():
            path = Path(folder) / "file.json"
            path.write_bytes(data)
            seconds, peak, code = replayed(path)
            baseline = baseline or peak
            print(
                f"  {name:<36} {len(data):>10,} bytes  exit {code}  {seconds:6.2f} s  "
                f"peak {peak:6.0f} MB ({peak - baseline:+.0f} MB)"
            )
        path = Path(folder) / "bomb.json"
        path.write_bytes(itf_bomb())
        for name, setup, action, args in (
            ("fencing replay (in process)", CLI_SETUP, CLI_ACTION, [str(path)]),
            ("playground upload (AppTest)", APP_SETUP, APP_ACTION, [str(path), "playground"]),
        ):
            found = in_process(setup, action, args)
            print(
                f"\nThe ITF bomb through {name}: refused in {found['seconds']:.2f} s, peak "
                f"+{found['peak_delta'] / 1e6:.0f} MB, held after {found['kept'] / 1e6:+.0f} MB"
            )


def in_process(setup: str, action: str, args: list[str]) -> dict[str, float]:
    """The refusal's own time and memory, measured inside a fresh process (imports done)."""
    script = PROBE.format(setup=setup.strip(), action=action.strip())
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, cwd=ROOT, check=True
    )
    found: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


if __name__ == "__main__":
    main()
