"""The storage process: `python -m lab.store_server ...` serves the store on a Unix socket.

One JSON request per connection: a write, a read, or the nemesis's holds. The store is the
SQLite or etcd store of `lab.storage`, or, with `--database postgres`, the PostgreSQL store
of `lab.postgres_store` on the run's own cluster (a kill of this process kills the server
too: it is a guarded child). Kept apart from the stores themselves, so that each store
module imports only what it builds on.
"""

from __future__ import annotations

import argparse
import os
import signal
import socketserver
import sys
from pathlib import Path
from typing import Any

from lab.events import EventLog
from lab.protocol import read_line, send_json
from lab.storage import EtcdTxnStore, Holds, SqliteStore, Store


def make_handler(store: Store, holds: Holds) -> type[socketserver.StreamRequestHandler]:
    """The request handler class bound to this store."""

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            import json

            line = read_line(self.connection)
            try:
                message = json.loads(line)
                answer = dispatch(store, holds, message)
            except Exception as error:  # answer every request, even a bad one
                answer = {"ok": False, "error": f"{type(error).__name__}: {error}"[:300]}
            send_json(self.connection, answer)

    return Handler


def dispatch(store: Store, holds: Holds, message: dict[str, Any]) -> dict[str, Any]:
    """Route a message: a worker's read or write, or the nemesis's hold, unhold or ping."""
    op = message.get("op")
    if op in ("read", "write"):
        return store.handle(message)
    if op == "hold":
        phase = str(message.get("phase", "deliver"))
        if store.receiver != "fenced-nonatomic" and phase == "apply":
            phase = "deliver"
        holds.set(int(message["worker"]), phase, str(message.get("kind", "any")))
        return {"ok": True}
    if op == "unhold":
        holds.release(int(message["worker"]))
        return {"ok": True}
    if op == "ping":
        return {"ok": True}
    return {"ok": False, "error": f"unknown operation {op!r}"}


class Server(socketserver.ThreadingUnixStreamServer):
    """One thread per request; threads do not keep the process alive."""

    daemon_threads = True


def main(argv: list[str] | None = None) -> int:
    """Serve until terminated."""
    parser = argparse.ArgumentParser(prog="lab.store_server")
    parser.add_argument("--socket", type=Path, required=True)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--events", type=Path, required=True)
    parser.add_argument("--t0", type=float, required=True)
    parser.add_argument("--receiver", required=True)
    parser.add_argument("--hwm", default="durable")
    parser.add_argument("--gap", type=float, default=0.0)
    parser.add_argument("--incarnation", type=int, default=1)
    parser.add_argument("--etcd", default="")
    parser.add_argument("--prefix", default="")
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--pgdata", type=Path, help="the run's PostgreSQL cluster folder")
    args = parser.parse_args(argv)
    if args.database == "postgres":
        return serve_postgres(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    log = EventLog("storage", args.t0, args.events)
    holds = Holds(log)
    common = (args.receiver, args.hwm, args.gap, log, holds)
    store: Store = (
        EtcdTxnStore(args.etcd, args.prefix, *common)
        if args.receiver == "etcd-txn"
        else SqliteStore(args.db, *common)
    )
    serve(args, store, holds, log)
    return 0


def serve_postgres(args: argparse.Namespace) -> int:
    """Start PostgreSQL on the run's cluster, serve the store on it, stop it at the end (a
    kill of this process kills the server too: it is a guarded child)."""
    from lab.postgres import Cluster, PostgresServer
    from lab.postgres_store import PostgresStore

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = PostgresServer(Cluster.at(args.pgdata))
    try:
        server.start()
        log = EventLog("storage", args.t0, args.events)
        holds = Holds(log)
        store = PostgresStore(server.connect_args(), args.receiver, args.hwm, args.gap, log, holds)
        serve(args, store, holds, log)
    finally:
        server.stop()
    return 0


def serve(args: argparse.Namespace, store: Store, holds: Holds, log: EventLog) -> None:
    """Listen on the socket and answer requests until terminated."""
    args.socket.unlink(missing_ok=True)
    with Server(str(args.socket), make_handler(store, holds)) as server:
        log.record(
            "storage-start",
            incarnation=args.incarnation,
            pid=os.getpid(),
            receiver=args.receiver,
            hwm=args.hwm,
            mark=store.start_mark(),
        )
        server.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    sys.exit(main())
