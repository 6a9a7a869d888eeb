"""A contradiction between the witnesses of a run: its code, where it is, and why in words.

Every check of a history's facts (lab.witness and the checks it gathers: the lock service's
grants and tokens, the store's life, the nemesis, the clocks) reports what no order of real
events allows as one `Impossible`, so the report lists them all alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

REFUSALS: Final = {
    "double-grant": "the lock was granted while the previous holder's lock still existed",
    "lease-early": "a lease ended before its TTL, counted from when it was asked for",
    "lease-late": "a lease ended later than its TTL plus the run's measured allowance",
    "revision-order": "etcd's revision order contradicts the times its events were observed",
    "no-lease-revoked": "a lock put with no lease vanished without a release",
    "grant-unrecorded": "a worker's grant is not in the lock service's own record",
    "grant-holder": "the service's record names another holder for a grant",
    "grant-token": "a grant's token is not the number the service's record gives it",
    "grant-unasked": "a grant went to a worker that was not asking for the lock",
    "token-order": "a counter token is not higher than every earlier grant's",
    "token-reused": "a random token was handed out twice",
    "step-unheld": "a request, keepalive or release under a grant the worker never received",
    "decision-unsent": "the store decided a request nobody sent, or not as it was sent",
    "sent-while-paused": "a worker recorded a step while it was stopped",
    "step-after-crash": "a worker recorded a step after it was killed",
    "renew-while-down": "a keepalive from a worker that was stopped or killed",
    "renew-after-end": "a keepalive taken that was asked for after its lease ended",
    "store-life": "a storage incarnation started or was killed out of turn",
    "store-pid": "a killed storage process is not the one that started, or came back",
    "store-down": "the store decided something while no storage process ran",
    "receiver": "the store ran another receiver or mark than the settings",
    "receiver-rule": "a decision the store's own receiver rule does not make",
    "mark-token": "an accepted write did not set the mark to its token",
    "mark-drift": "the store's mark is not the one it last set",
    "mark-restart": "a durable mark came back changed after a restart",
    "version-back": "the data's version went back",
    "version-gap": "the data's version jumped with no write to explain it",
    "version-step": "an accepted write did not add exactly one to the version",
    "reply-contradicts": "a worker heard another outcome than the store decided",
    "reply-undecided": "a worker heard an outcome of a request the store never decided",
    "final-version": "the final read's version is not the accepted writes'",
    "final-value": "the final read's value is not the last accepted write's",
    "final-mark": "the final read's durable mark is not the last one set",
    "final-locks": "the lock the service holds at the end is not the one the history leaves",
    "nemesis-schedule": "the recorded schedule is not the one the settings and seed draw",
    "nemesis-extra": "a fault event that is no fault of the schedule or the script",
    "fault-missing": "a fault of the schedule neither took effect nor was skipped",
    "fault-twice": "a fault of the schedule took effect more than once",
    "fault-early": "a fault took effect before its time",
    "fault-target": "a fault took effect on another target than it names",
    "fault-short": "a fault ended before its length (and before the run's end)",
    "fault-skip": "a fault was skipped for a reason the history contradicts",
    "pause-unseen": "a SIGSTOP was never seen delivered",
    "pause-unended": "a SIGSTOP was followed by no SIGCONT and no kill",
    "hold-unasked": "the store held a request while the nemesis had set no hold",
    "member-unseen": "no other etcd member saw a killed member gone",
    "member-pid": "a killed etcd member came back as the very process killed",
    "clock-skew": "a worker's own clock ran at another rate than the nemesis says",
    "clock-unreported": "a worker that ran to the end never reported its own clock",
    "clock-step": "every worker's own clock jumped alike: the machine's clock was set",
    "prediction": "the stored prediction is not the model's for the scenario and settings",
}
"""Every contradiction the witnesses can find, by code, in a few words (the lab's guide,
docs/lab.md, lists the same table; each check's own sentence names the events)."""


@dataclass(frozen=True)
class Impossible:
    """One contradiction between the witnesses: its code, where, and why in words."""

    code: str
    event: int | None
    t: float
    reason: str

    def __post_init__(self) -> None:
        if self.code not in REFUSALS:
            raise ValueError(f"unknown contradiction {self.code!r}: add it to REFUSALS")

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"code": self.code, "event": self.event, "t": self.t, "reason": self.reason}
