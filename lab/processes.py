"""Child processes that never outlive the lab: started in their own session, killed with it.

Every child (etcd, the storage process, each worker) is started through a two-line Python
trampoline that asks the kernel to kill it when the thread that started it dies
(`PR_SET_PDEATHSIG`) and then `exec`s the real program, so even a lab killed with SIGKILL
leaves no orphan. Normal stops go through `Child.stop`, which resumes a paused child
before terminating it, and waits for it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
STOP_GRACE_SECONDS: Final = 3.0
TRAMPOLINE: Final = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None).prctl(1, signal.SIGKILL)\n"  # 1 = PR_SET_PDEATHSIG
    "os.getppid() == int(sys.argv[1]) or os._exit(70)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)
"""Set the parent-death signal, make sure the parent is still there, become the program."""


def guarded(argv: Sequence[str]) -> list[str]:
    """The command line that runs `argv` under the parent-death trampoline."""
    return [sys.executable, "-S", "-c", TRAMPOLINE, str(os.getpid()), *argv]


def python_module(module: str, *args: str) -> list[str]:
    """The command line of `python -m module args` with this interpreter."""
    return [sys.executable, "-m", module, *args]


ENDED: Final = frozenset({"", "Z", "X"})
"""Process states of a process that has ended: gone, a zombie, or dead."""


def process_state(pid: int) -> str:
    """A process's state letter from /proc (R running, S sleeping, T stopped, Z zombie),
    or '' once it is gone. The command name in parentheses may hold any character, so the
    fields are read after its last parenthesis."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def child_environment() -> dict[str, str]:
    """The environment of a child: ours, with the project importable."""
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{path}" if path else str(ROOT)}


@dataclass
class Child:
    """One child process: its name, the process, and whether the nemesis has paused it."""

    name: str
    process: subprocess.Popen[Any]
    paused: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def pid(self) -> int:
        """The process id."""
        return int(self.process.pid)

    def alive(self) -> bool:
        """Whether the process has not exited yet."""
        return self.process.poll() is None

    def ending(self) -> str:
        """How the process ended, in words: `was killed by SIGKILL`, `exited with status 1`."""
        code = self.process.poll()
        if code is None:
            return "is still running"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"was killed by {name}"
        return "exited normally" if code == 0 else f"exited with status {code}"

    def pause(self) -> bool:
        """Stop the process with SIGSTOP (a GC pause as it sees it); False if it is gone."""
        with self.lock:
            if not self.alive() or self.paused:
                return False
            os.kill(self.pid, signal.SIGSTOP)
            self.paused = True
            return True

    def resume(self) -> bool:
        """Continue a paused process with SIGCONT; False if it was not paused."""
        with self.lock:
            if not self.paused:
                return False
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGCONT)
            self.paused = False
            return True

    def kill(self) -> None:
        """SIGKILL at once (the storage crash), resuming it first if paused, and reap it."""
        self.resume()
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        self.process.wait()

    def stop(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """Resume if paused, ask it to stop (SIGTERM), and SIGKILL it after `grace` seconds."""
        self.resume()
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def start_child(
    name: str,
    argv: Sequence[str],
    *,
    stdin: int | None = subprocess.DEVNULL,
    stdout: int | IO[Any] | None = subprocess.DEVNULL,
    stderr: int | IO[Any] | None = subprocess.DEVNULL,
    cwd: Path | None = None,
    extra_env: dict[str, str] | None = None,
) -> Child:
    """Start `argv` as a guarded child in a new session (Ctrl-C reaches only the lab);
    `extra_env` adds variables to its environment (a skewed clock)."""
    process = subprocess.Popen(
        guarded(argv),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        env={**child_environment(), **(extra_env or {})},
        start_new_session=True,
        text=True,
        bufsize=1,
    )
    return Child(name, process)


@dataclass
class Children:
    """Every child a lab run started, stopped together (paused ones resumed first)."""

    started: list[Child] = field(default_factory=list)

    def add(self, child: Child) -> Child:
        """Remember a child so that `stop_all` stops it."""
        self.started.append(child)
        return child

    def resume_all(self) -> None:
        """Continue every paused child."""
        for child in self.started:
            child.resume()

    def stop_all(self) -> None:
        """Resume every paused child, then stop each one, newest first."""
        self.resume_all()
        for child in reversed(self.started):
            child.stop()

    def pids(self) -> list[int]:
        """The process ids of every child started."""
        return [child.pid for child in self.started]
