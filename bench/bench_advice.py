"""The advisor's cost: CPU seconds of a whole `fencing advise` process per example stack.

Each example stack of the catalogue is advised at the reference bounds in its own process
(interpreter start, imports, the stack's exploration and every neighbouring design), as an
engineer runs it; the figure is the process's user + system CPU time, which another load on
the machine barely moves (target: at most 3 s each). The neighbours explored and left out
are printed too: both are counts, so they are the same on every machine.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advise.catalogue import EXAMPLES  # noqa: E402

TARGET_SECONDS = 3.0


def advise_cpu(token: str, resource_id: str, practices: tuple[str, ...]) -> tuple[float, dict]:
    """CPU seconds of one `fencing advise --json` process, and its answer."""
    args = ["advise", "--token", token, "--resource", resource_id, "--json"]
    if practices:
        args += ["--also", *practices]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "fencing", *args], cwd=ROOT, check=True, capture_output=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return cpu, json.loads(done.stdout)


def main() -> None:
    """One line per example stack, then the largest CPU time against the target."""
    print("\nThe advisor: one `fencing advise` process per example stack, reference bounds")
    print(f"{'stack':<66}{'CPU s':>7}{'designs':>9}{'left':>6}  first fix")
    worst = 0.0
    for example in EXAMPLES:
        cpu, answer = advise_cpu(example.token, example.resource, example.practices)
        worst = max(worst, cpu)
        first = answer["fixes"][0]["kind"] if answer["fixes"] else "none"
        print(
            f"{example.title[:64]:<66}{cpu:>7.2f}{answer['neighbours_explored']:>9}"
            f"{answer['neighbours_unexplored']:>6}  {first}"
        )
    verdict = "within" if worst <= TARGET_SECONDS else "OVER"
    print(f"largest: {worst:.2f} s of CPU ({verdict} the {TARGET_SECONDS:g} s target)")


if __name__ == "__main__":
    main()
