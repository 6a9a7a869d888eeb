"""A contradiction between the witnesses of a run: its code, where it is, and why in words.

Every check of a history's facts (lab.witness and the checks it gathers: the lock service's
grants and tokens, the store's life, the nemesis, the clocks) reports what no order of real
events allows as one `Impossible`, so the report lists them all alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Impossible:
    """One contradiction between the witnesses: its code, where, and why in words."""

    code: str
    event: int | None
    t: float
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"code": self.code, "event": self.event, "t": self.t, "reason": self.reason}
