"""The PostgreSQL a class server of several processes keeps its classes in.

It is the live lab's PostgreSQL (`lab.postgres`: Debian's initdb and postgres, loopback
only, a password per cluster), on a cluster that is kept: made once in a folder of its own
and started again on the next `make serve-class WORKERS=N`, so a class outlives a restart
of the server. The database `classes` is made when missing; the server processes reach it
with a connection string whose password is in a file only this user can read (libpq's
`passfile`), never on a command line or in the environment.

PostgreSQL refuses to run as root: then it runs as the user `postgres`, which must be able
to reach the cluster's folder. The default folder is `postgres` in the class folder; when
that user cannot reach it (a root's home is private), it is
`/var/lib/fencing-lab/postgres-<digest of the class folder>`, a folder only root can make.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lab.postgres import SUPERUSER, Cluster, PostgresServer, run_as

DATABASE: Final = "classes"
SYSTEM_FOLDER: Final = Path("/var/lib/fencing-lab")
"""Where root keeps the clusters of class servers whose class folder PostgreSQL cannot reach."""
CONNECTIONS_PER_PROCESS: Final = 8
"""What one server process may open (`classroom.class_database.MAX_CONNECTIONS`)."""
SPARE_CONNECTIONS: Final = 10
PASSFILE: Final = "classes.pgpass"


def reachable_by(folder: Path, uid: int, gid: int) -> bool:
    """Whether the user `uid` (group `gid`) may pass through every folder above `folder`."""
    for parent in folder.absolute().parents:
        try:
            info = parent.stat()
        except OSError:
            return False
        if info.st_uid == uid:
            bit = stat.S_IXUSR
        elif info.st_gid == gid:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if uid != 0 and not info.st_mode & bit:
            return False
    return True


def default_folder(classes_folder: Path) -> Path:
    """Where the cluster of a class folder is kept (see the module's text)."""
    beside = classes_folder / "postgres"
    uid, gid = run_as()
    if reachable_by(beside, uid, gid):
        return beside
    digest = hashlib.sha256(str(classes_folder.absolute()).encode()).hexdigest()[:12]
    return SYSTEM_FOLDER / f"postgres-{digest}"


@dataclass(frozen=True)
class ClassDatabase:
    """A running PostgreSQL with the `classes` database, and how the servers reach it."""

    server: PostgresServer
    conninfo: str


def _system_parent(folder: Path) -> None:
    """Make /var/lib/fencing-lab (root's, readable by all) when the cluster goes there."""
    if folder.parent == SYSTEM_FOLDER and not SYSTEM_FOLDER.exists():
        SYSTEM_FOLDER.mkdir(mode=0o755, parents=True)
        os.chmod(SYSTEM_FOLDER, 0o755)


def start(folder: Path, processes: int, secrets_folder: Path) -> ClassDatabase:
    """Start PostgreSQL on the cluster in `folder` (made there the first time), with enough
    connections for `processes` server processes; make the database `classes` if missing;
    write the password file into `secrets_folder` (private)."""
    import psycopg

    _system_parent(folder)
    cluster = Cluster.at(folder) if Cluster.exists_at(folder) else Cluster.create(folder)
    most = CONNECTIONS_PER_PROCESS * processes + SPARE_CONNECTIONS
    server = PostgresServer(cluster, settings=(f"max_connections={most}",)).start()
    try:
        with psycopg.connect(**server.connect_args(), autocommit=True) as admin:
            found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,))
            if found.fetchone() is None:
                admin.execute(f"CREATE DATABASE {DATABASE}")
        server.wanted_port = server.port  # a restart keeps the port the servers know
        conninfo = write_conninfo(server, secrets_folder)
    except BaseException:
        server.stop()
        raise
    return ClassDatabase(server, conninfo)


def write_conninfo(server: PostgresServer, secrets_folder: Path) -> str:
    """The connection string of the `classes` database, its password in a private file."""
    passfile = secrets_folder / PASSFILE
    fd = os.open(passfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(f"127.0.0.1:{server.port}:{DATABASE}:{SUPERUSER}:{server.cluster.password()}\n")
    from psycopg.conninfo import make_conninfo

    return make_conninfo(
        host="127.0.0.1",
        port=server.port,
        dbname=DATABASE,
        user=SUPERUSER,
        passfile=str(passfile),
        sslmode="disable",
    )
