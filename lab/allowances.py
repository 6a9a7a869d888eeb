"""The allowances a run's checks make for time, each measured in the run itself and printed.

Every time the lab records is taken on one monotonic clock, but an event is recorded a
little after it happened (a request's answer travels back, a watch delivers, a poll looks),
and a lock service ends a lease a little after its TTL. Where a check needs no allowance it
makes none (a keepalive asked for after the lease's end is refused outright: the request
was recorded before it left, the end after it happened). The allowances that remain are:

- the observation latency: the slowest request the run measured (etcd's status requests,
  asked four times a second, and every look of a polled lock service's observer); a
  history with no measurement gets `UNMEASURED_SECONDS`;
- the service's end delay: how long past a lease's TTL the service itself may take to end
  it (the lock service table's row: etcd's 500 ms lessor, ZooKeeper's tick, Redis's reads),
  or the run's own probe leases (one after another while the run goes), if etcd took longer
  than that to revoke one.

A lease ends late when it ends more than its TTL plus the end delay plus the latency after
it last started.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from lab.history import Timeline
from lab.lock_table import SERVICES

UNMEASURED_SECONDS: Final = 0.5
"""The latency allowed for when a history carries no measurement of its own."""


@dataclass(frozen=True)
class Allowances:
    """The time allowances of one run's checks, with where each comes from."""

    latency: float
    latency_from: str
    end_delay: float
    end_from: str

    @property
    def lease_end(self) -> float:
        """How long past its TTL a lease may be seen to end: the service's end delay plus
        the observation latency."""
        return self.end_delay + self.latency

    def to_dict(self) -> dict[str, float | str]:
        """JSON form: each allowance in seconds, and where it comes from."""
        return {
            "latency_seconds": round(self.latency, 6),
            "latency_from": self.latency_from,
            "lease_end_seconds": round(self.lease_end, 6),
            "end_delay_from": self.end_from,
        }

    def lines(self) -> list[str]:
        """The allowances in words, for the report."""
        return [
            f"  Allowed for: {self.latency:.3f} s of observation latency "
            f"({self.latency_from}); a lease may be seen to end up to {self.lease_end:.3f} s "
            f"past its TTL ({self.end_from}, plus that latency); a keepalive or a step after "
            "a lease's end: none"
        ]


def measured(line: Timeline, name: str) -> float | None:
    """A figure the run measured (seconds), from the history's `measured` object."""
    value = line.history.measured.get(name)
    return float(value) if isinstance(value, int | float) else None


def allowances(line: Timeline) -> Allowances:
    """The run's allowances, from its own measurements and its lock service's row."""
    service = SERVICES[line.history.settings.lock_service]
    request, observer = measured(line, "request_seconds"), measured(line, "observer_seconds")
    seen = [value for value in (request, observer) if value is not None]
    if seen:
        latency = max(seen)
        sources = [
            *(
                [f"the slowest of the run's status requests to etcd, {request:.3f} s"]
                if request is not None
                else []
            ),
            *(
                [f"the slowest look of the lab's observer of {service.short}, {observer:.3f} s"]
                if observer is not None
                else []
            ),
        ]
        latency_from = "; ".join(sources)
    else:
        latency, latency_from = UNMEASURED_SECONDS, "the history measured none"
    end, end_from = service.end_delay, service.end_delay_words
    probe = measured(line, "revocation_seconds")
    if service.ordered and probe is not None and probe > end:
        end, end_from = probe, f"the run's probe leases were revoked up to {probe:.3f} s late"
    return Allowances(latency, latency_from, end, end_from)
