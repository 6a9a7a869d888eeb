"""A worker process: takes the lock from its lock service, writes through the store, releases.

`python -m lab.worker ...` either obeys one command per line on standard input (scripted
scenarios: `acquire`, `write`, `release`, `exit`, each answered by one line on standard
output) or loops on its own until a deadline (randomized runs): acquire, K writes,
release. Like the model's worker it never checks its own lease, unless told to
(`--worker-check`): then it checks before every request and, once the lease's TTL has
passed on its own wall clock (which the nemesis may skew), gives the grant up and retires
(the model's worker is then never allowed to send or release again, so it takes no further
step either). A rejected request also makes it
give up the grant (it does not release it), exactly as in the model.

A randomized worker reports its own wall clock (which the nemesis may skew) against the
run's monotonic clock: with every acquire it invokes (`wall`, seconds since its loop
started) and once at its end (`clock`), so a skew is confirmed by the worker's own clock.

Every client operation is recorded as it is invoked and as it completes, as a Jepsen
history is: an acquire is `invoke` then `grant` (ok), `fail` (it timed out) or `info` (an
request to the lock service failed, so a lock may have been taken); a read or write is `send` (its
invoke) then `reply` (ok, or fail when the store rejected it), `fail` (the request never
reached the store) or `info` (the reply never came, or the store answered with an error
while deciding: it may have applied it); a
release is `invoke` then `release` (ok) or `info`. A worker whose operation ended in `fail`
or `info` retires, as a crashed Jepsen process does: it takes no step after it, so the
model's worker (whose request may still be in flight) and the real one stay the same.

With `--keepalive S` a holder keeps its lease alive from a thread of its own (`KeepAlive`):
every S seconds while it holds the grant it sends a keepalive through its lock client
(etcd's lease keepalive, for the recipe and for etcd's lock API; ZooKeeper and Redis take
none here), recorded as the client
operation `renew`: `invoke`, then `renew` (ok: etcd restarted the TTL), `fail` (the lease
had already expired: the keepalive came too late) or `info` (the request failed); after a
fail or info it sends no more keepalives for that grant. A paused process runs no thread,
so a paused holder's keepalives stop and its lease runs out: the real failure a lease is
for. With `--expiry never` the lock key is put with no lease at all.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from lab.events import EventLog
from lab.lock_clients import Granted, LockRequestFailed, lock_client
from lab.protocol import StorageUnavailable, StorageUnreached, request

POLL_SECONDS: Final = 0.02
"""How often a worker waiting for the lock looks again."""
REQUEST_SECONDS: Final = 150.0
"""How long a worker waits for the store's answer (a held request may wait long)."""
WRITE_THINK: Final = (0.02, 0.1)
"""Seconds a randomized worker spends computing each write of a grant (before sending it;
in read-modify-write, between the read and the write, where a pause loses an update)."""
IDLE_AFTER_RELEASE: Final = (0.0, 0.05)
"""Seconds a randomized worker waits after releasing before asking for the lock again."""


def nap(seconds: float) -> None:
    """Sleep (on a condition's timeout: libfaketime's skewed clock breaks `time.sleep`)."""
    threading.Event().wait(max(0.0, seconds))


@dataclass
class Holding:
    """The grant a worker believes it holds, and when it asked for its lease (on the run's
    clock, and on the worker's own wall clock, which is what it checks its lease with)."""

    grant: Granted
    token: int
    asked_at: float
    asked_wall: float = 0.0


class Worker:
    """One worker: its lock client, its grant (if any) and its requests to the store."""

    def __init__(self, args: argparse.Namespace, log: EventLog) -> None:
        self.number: int = args.worker
        self.leased: bool = args.expiry != "never"
        self.locks = lock_client(
            args.lock_service,
            args.service or args.etcd,
            args.prefix,
            args.ttl,
            args.token,
            leased=self.leased,
        )
        self.ttl: int = args.ttl
        self.token_source: str = args.token
        self.socket: Path = args.socket
        self.worker_check: bool = args.worker_check
        self.rmw: bool = args.workload == "rmw"
        self.keepalive: float = args.keepalive
        self.log = log
        self.steps = threading.RLock()
        """Held while the grant changes hands and while a keepalive is sent, so no
        keepalive is recorded after the worker released or gave its grant up."""
        self.holding: Holding | None = None
        self.requests = 0
        self.retired = ""
        """Why the worker stopped taking steps ('' while it works)."""
        self.wall_origin: float | None = None
        """The worker's own wall clock when its randomized loop started (None: scripted)."""

    def retire(self, kind: str, op: str, error: str, **fields: Any) -> None:
        """Record a `fail` or `info` completion and take no step after it."""
        self.log.record(kind, worker=self.number, op=op, error=error[:200], **fields)
        self.drop()
        self.retired = f"retired after the {op} ended in {kind}"

    def drop(self) -> Holding | None:
        """Forget the grant (its keepalives stop); the grant that was held."""
        with self.steps:
            holding, self.holding = self.holding, None
        return holding

    def take(self, holding: Holding) -> None:
        """Hold a new grant and, with keepalives, start keeping its lease alive."""
        with self.steps:
            self.holding = holding
        if self.keepalive > 0 and self.leased:
            KeepAlive(self, holding).start()

    def acquire(self, deadline: float) -> bool:
        """Wait for the lock until `deadline` (seconds since t0); True once granted."""
        if self.retired:
            return False
        origin = self.wall_origin
        clock = {} if origin is None else {"wall": round(time.time() - origin, 6)}
        self.log.record("invoke", worker=self.number, op="acquire", **clock)
        in_doubt = ""
        while self.log.now() < deadline:
            try:
                asked, wall = self.log.now(), time.time()
                grant = self.locks.try_acquire(f"W{self.number}")
                if grant is not None:
                    holding = Holding(grant, grant.token, asked, wall)
                    ordered = (
                        {"order_revision": grant.order} if grant.order != grant.revision else {}
                    )
                    self.log.record(
                        "grant",
                        worker=self.number,
                        revision=grant.revision,
                        version=grant.version,
                        lease=grant.lease,
                        ttl=grant.ttl,
                        token=grant.token,
                        asked=round(asked, 6),
                        **ordered,
                        **dict(grant.extra),
                    )
                    self.take(holding)
                    return True
            except LockRequestFailed as error:
                in_doubt = str(error)
                self.log.record(
                    "error", worker=self.number, during="acquire", error=str(error)[:200]
                )
            nap(POLL_SECONDS)
        if in_doubt:
            self.retire("info", "acquire", in_doubt)
        else:
            self.log.record("fail", worker=self.number, op="acquire", error="timed out")
        return False

    def lease_left(self) -> bool:
        """The worker's own check: has its lease's TTL not passed yet (measured from asking,
        on its own wall clock)?"""
        assert self.holding is not None
        return time.time() < self.holding.asked_wall + self.holding.grant.ttl

    def send(self, op: str, **fields: Any) -> dict[str, Any] | None:
        """Send one request under the current grant; None if the worker gave the grant up."""
        holding = self.holding
        if holding is None:
            return None
        if self.worker_check and not self.lease_left():
            self.log.record(
                "lease-check", worker=self.number, passed=False, grant=holding.grant.revision
            )
            self.drop()
            self.retired = "retired after its lease check failed"
            return None
        self.requests += 1
        message = {
            "op": op,
            "worker": self.number,
            "request": f"W{self.number}-{self.requests}",
            "token": holding.token,
            "grant": holding.grant.revision,
            **fields,
        }
        believed = self.locks.believes_held(holding.grant)
        said = {} if believed is None else {"client_says_held": believed}
        self.log.record("send", **{k: v for k, v in message.items() if k != "op"}, op=op, **said)
        try:
            answer = request(self.socket, message, REQUEST_SECONDS)
        except StorageUnreached as error:
            self.retire("fail", op, str(error), request=message["request"])
            return None
        except StorageUnavailable as error:
            self.retire("info", op, str(error), request=message["request"])
            return None
        if not answer.get("ok"):  # the store failed while deciding: it may have written
            self.retire("info", op, str(answer.get("error")), request=message["request"])
            return None
        heard = {k: answer[k] for k in ("version", "value") if isinstance(answer.get(k), int)}
        self.log.record(
            "reply",
            worker=self.number,
            request=message["request"],
            outcome=answer["outcome"],
            **heard,
        )
        if answer["outcome"] == "rejected":
            self.drop()  # the store said the lock was lost: give the grant up
        return answer

    def write(self, think: float = 0.0) -> str:
        """One write (after a read, in read-modify-write, `think` seconds after it); its
        outcome or why there was none."""
        if self.holding is None:
            return self.retired or "no grant"
        fields: dict[str, Any] = {"value": self.number * 1_000_000 + self.requests + 1}
        if self.rmw:
            read = self.send("read")
            if read is None:
                return self.retired or "gave up"
            fields = {"value": int(read["value"]) + 1, "read_version": int(read["version"])}
            nap(think)
        answer = self.send("write", **fields)
        return (self.retired or "gave up") if answer is None else str(answer["outcome"])

    def release(self) -> str:
        """Give the lock up through the service's client (deleted only if still this grant's)."""
        holding = self.drop()
        if holding is None:
            return self.retired or "no grant"
        self.log.record("invoke", worker=self.number, op="release", grant=holding.grant.revision)
        try:
            deleted, revision = self.locks.release(holding.grant)
        except LockRequestFailed as error:
            self.retire("info", "release", str(error), grant=holding.grant.revision)
            return "error"
        self.log.record(
            "release",
            worker=self.number,
            grant=holding.grant.revision,
            deleted=deleted,
            etcd_revision=revision,
            **({} if deleted or self.locks.orders_releases else {"ordered": False}),
        )
        return "released" if deleted else "released (lock already gone)"

    def renew(self, holding: Holding) -> bool:
        """Send one keepalive for the grant's lease, recorded as the operation `renew`;
        whether to go on (the grant is still held and the keepalive took effect). A keepalive
        taken moves the worker's own lease check on to one TTL from when it was asked for,
        as the model's Renew moves the worker's `until`."""
        with self.steps:
            if self.holding is not holding or self.retired:
                return False
            grant = holding.grant
            ids = {"worker": self.number, "grant": grant.revision, "lease": grant.lease}
            asked, wall = self.log.record("invoke", op="renew", **ids)["t"], time.time()
            try:
                ttl = self.locks.renew(grant)
            except LockRequestFailed as error:
                self.log.record("info", op="renew", error=str(error)[:200], **ids)
                return False
            if ttl <= 0:
                self.log.record("fail", op="renew", error="the lease had already expired", **ids)
                return False
            self.log.record("renew", ttl=ttl, asked=asked, **ids)
            holding.asked_at, holding.asked_wall = asked, wall
            return True


class KeepAlive(threading.Thread):
    """A holder's keepalives: one `renew` every `worker.keepalive` seconds while it holds
    this grant (stopped by a release, a rejection, a failed keepalive; and, like every
    thread of the process, by SIGSTOP and SIGKILL)."""

    def __init__(self, worker: Worker, holding: Holding) -> None:
        super().__init__(name=f"keepalive-W{worker.number}", daemon=True)
        self.worker = worker
        self.holding = holding

    def run(self) -> None:
        """Renew on a timer until the grant is gone or a keepalive fails."""
        interval = self.worker.keepalive
        due = time.monotonic() + interval
        while True:
            nap(due - time.monotonic())
            if not self.worker.renew(self.holding):
                return
            due = max(due + interval, time.monotonic())


def obey(worker: Worker) -> None:
    """Scripted mode: one command per input line, one answer per output line."""
    for line in sys.stdin:
        command = json.loads(line)
        action = command.get("do")
        if action == "exit":
            break
        if action == "acquire":
            got = worker.acquire(worker.log.now() + float(command.get("timeout", 10)))
            result = "acquired" if got else "timed out"
        elif action == "write":
            result = worker.write()
        elif action == "release":
            result = worker.release()
        else:
            result = f"unknown command {action!r}"
        print(json.dumps({"id": command.get("id"), "result": result}), flush=True)


def loop(worker: Worker, until: float, writes: int, seed: int) -> None:
    """Randomized mode: acquire, `writes` writes, release, until the deadline."""
    rng = random.Random(seed)
    wall, real = time.time(), worker.log.now()
    worker.wall_origin = wall
    while worker.log.now() < until:
        if worker.retired or not worker.acquire(until):
            break
        for _ in range(writes):
            think = rng.uniform(*WRITE_THINK)
            if not worker.rmw:
                nap(think)
            if worker.log.now() >= until or worker.write(think) != "accepted":
                break
        else:
            worker.release()
        nap(rng.uniform(*IDLE_AFTER_RELEASE))
    worker.log.record(
        "clock",
        worker=worker.number,
        wall_seconds=round(time.time() - wall, 6),
        real_seconds=round(worker.log.now() - real, 6),
    )


def main(argv: list[str] | None = None) -> int:
    """Run one worker."""
    parser = argparse.ArgumentParser(prog="lab.worker")
    parser.add_argument("--worker", type=int, required=True)
    parser.add_argument("--etcd", required=True)
    parser.add_argument("--lock-service", default="etcd")
    parser.add_argument("--service", default="", help="the lock service's address, if not etcd")
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--socket", type=Path, required=True)
    parser.add_argument("--events", type=Path, required=True)
    parser.add_argument("--t0", type=float, required=True)
    parser.add_argument("--ttl", type=int, default=1)
    parser.add_argument("--token", default="create-revision")
    parser.add_argument("--workload", default="blind")
    parser.add_argument("--worker-check", action="store_true")
    parser.add_argument("--expiry", choices=("lease", "never"), default="lease")
    parser.add_argument("--keepalive", type=float, default=0.0, help="seconds between renewals")
    parser.add_argument("--wait-go", action="store_true", help="randomized: loop after `go`")
    parser.add_argument("--writes", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    worker = Worker(args, EventLog(f"W{args.worker}", args.t0, args.events))
    print(json.dumps({"id": 0, "result": "ready"}), flush=True)
    if not args.wait_go:
        obey(worker)
        return 0
    command = json.loads(sys.stdin.readline() or "{}")
    if command.get("do") == "go":
        loop(worker, float(command["until"]), args.writes, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
