"""The page order of the app, in one place, so the home page and the menu never disagree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class PageEntry:
    """One page: its menu section, title, icon, URL path and purpose."""

    section: str
    title: str
    icon: str
    url_path: str
    purpose: str


PAGES: Final = (
    PageEntry(
        "Start",
        "Home",
        ":material/home:",
        "home",
        "What this app is for and where to go.",
    ),
    PageEntry(
        "Walkthrough",
        "0. Why a lease at all",
        ":material/lock_clock:",
        "chapter-0",
        "A lock without a lease, a lease with keepalives, and one with fencing: what a holder "
        "that pauses and one that crashes do to each, side by side.",
    ),
    PageEntry(
        "Walkthrough",
        "1. The paused worker",
        ":material/alarm:",
        "chapter-1",
        "A worker pauses past its lease and wakes up: the same run with a plain store and "
        "with fencing, side by side.",
    ),
    PageEntry(
        "Walkthrough",
        "2. The receiver must check",
        ":material/verified_user:",
        "chapter-2",
        "Tokens that are issued but not checked do nothing, and the check must be atomic "
        "with the write.",
    ),
    PageEntry(
        "Walkthrough",
        "3. The gap after expiry",
        ":material/hourglass_bottom:",
        "chapter-3",
        "The stale write fencing still accepts (P2), the lost update it causes (P5), two fixes.",
    ),
    PageEntry(
        "Walkthrough",
        "4. Where tokens come from",
        ":material/pin:",
        "chapter-4",
        "Key versions, lease IDs, clocks and counters lost in a failover: tokens that do not "
        "grow with every grant lose grant order (P3) or refuse the holder (P4).",
    ),
    PageEntry(
        "Tools",
        "Explore a design",
        ":material/search:",
        "explore",
        "Pick any design and bounds; every interleaving is checked and violations animated.",
    ),
    PageEntry(
        "Tools",
        "Check my stack",
        ":material/fact_check:",
        "stack",
        "Pick your real parts (etcd, ZooKeeper, Redis, SQL): the verdicts, the bug, the fix.",
    ),
    PageEntry(
        "Tools",
        "Compare designs",
        ":material/compare_arrows:",
        "compare",
        "Every preset against every property, and a with-versus-without view of two designs.",
    ),
    PageEntry(
        "Tools",
        "Be the scheduler",
        ":material/touch_app:",
        "playground",
        "Click every step of a run yourself; each property is checked as you go.",
    ),
    PageEntry(
        "Tools",
        "State space",
        ":material/hub:",
        "state-space",
        "Every reachable state of a small design, with a counterexample highlighted.",
    ),
    PageEntry(
        "Tools",
        "Proofs",
        ":material/functions:",
        "proofs",
        "What z3 proves per property, with the invariant or the counterexample.",
    ),
    PageEntry(
        "Tools",
        "Live lab",
        ":material/science:",
        "lab",
        "The same bugs on a real etcd, a real database and real pauses, checked by the model.",
    ),
    PageEntry(
        "Classroom",
        "Exercises",
        ":material/school:",
        "exercises",
        "Predict, break it, fix it: exercises graded by the model, with hints.",
    ),
    PageEntry(
        "Classroom",
        "Class",
        ":material/groups:",
        "class",
        "Run the exercises with a class: a link for the students, their answers live for you.",
    ),
)
