"""The lock in etcd: a key created in a transaction only if absent, attached to a lease.

Acquire grants a lease and creates the lock key with it if the key does not exist;
release deletes the key only if it is still this grant's (same `create_revision`), so a
late release never frees another holder's lock. Without keepalives a grant lives one TTL,
until etcd's periodic sweep revokes it (the model's lease: one fixed term from the grant);
with them (`keep_alive`, the model's Renew) each keepalive starts the TTL again, so the
lease ends one TTL after the last keepalive its holder sent. A lock without a lease (the
model's expiry `never`) is a key put with no lease: it stays until it is released. The
etcd-txn receiver writes the data key in one transaction guarded by the lock key still
existing with the writer's `create_revision`.
"""

from __future__ import annotations

import base64
import contextlib
import json
from dataclasses import dataclass
from typing import Any, Final

import etcd3gw

LOCK_KEY: Final = "lock"
DATA_KEY: Final = "data"


def encode(text: str | bytes) -> str:
    """Base64, as etcd's JSON gateway wants keys and values."""
    data = text.encode() if isinstance(text, str) else text
    return base64.b64encode(data).decode()


def decode(text: str) -> str:
    """The text of a base64 value from etcd's JSON gateway."""
    return base64.b64decode(text).decode(errors="replace")


@dataclass(frozen=True)
class Grant:
    """A lock grant as etcd reported it: the key's create revision and version, the lease."""

    revision: int
    version: int
    lease: int
    ttl: int

    def token(self, source: str) -> int:
        """The fencing token this grant carries for a token source."""
        if source == "create-revision":
            return self.revision
        if source == "version":
            return self.version
        return self.lease


def current_revision(client: etcd3gw.Etcd3Client, key: str) -> int:
    """etcd's current revision (from the header of a read of `key`)."""
    result = client.post(client.get_url("/kv/range"), json={"key": encode(key)})
    return int(result["header"]["revision"])


def key_exists(client: etcd3gw.Etcd3Client, key: str) -> bool:
    """Whether `key` exists now."""
    result = client.post(client.get_url("/kv/range"), json={"key": encode(key), "count_only": True})
    return int(result.get("count", 0)) > 0


def grant_lease(client: etcd3gw.Etcd3Client, ttl: int) -> tuple[int, int]:
    """A new lease: its id and the TTL etcd granted (it may raise a too-short TTL)."""
    result = client.post(client.get_url("/lease/grant"), json={"TTL": ttl, "ID": 0})
    return int(result["ID"]), int(result["TTL"])


def keep_alive(client: etcd3gw.Etcd3Client, lease: int) -> int:
    """Send one keepalive for a lease (etcd's `/lease/keepalive`, what `Lease.refresh()`
    sends); the TTL etcd restarted it with, or 0 when the lease had already expired."""
    return max(0, etcd3gw.Lease(lease, client).refresh())


def revoke_lease(client: etcd3gw.Etcd3Client, lease: int) -> None:
    """Revoke a lease, ignoring one that has already expired."""
    with contextlib.suppress(etcd3gw.exceptions.Etcd3Exception):
        client.post(client.get_url("/kv/lease/revoke"), json={"ID": lease})


def try_create(
    client: etcd3gw.Etcd3Client, key: str, holder: str, lease: int, ttl: int
) -> Grant | None:
    """Create the lock key with the lease if it does not exist; the grant, or None if taken."""
    txn = {
        "compare": [
            {"key": encode(key), "result": "EQUAL", "target": "CREATE", "create_revision": 0}
        ],
        "success": [
            {"request_put": {"key": encode(key), "value": encode(holder), "lease": lease}},
            {"request_range": {"key": encode(key)}},
        ],
        "failure": [],
    }
    result = client.transaction(txn)
    if not result.get("succeeded"):
        return None
    kv = result["responses"][1]["response_range"]["kvs"][0]
    return Grant(int(kv["create_revision"]), int(kv["version"]), lease, ttl)


def delete_if_mine(client: etcd3gw.Etcd3Client, key: str, revision: int) -> tuple[bool, int]:
    """Delete the lock key if it is still the grant with this create revision.

    Returns whether it was deleted and the revision etcd reported (the delete's revision,
    or the revision at which the key was found to be someone else's or gone).
    """
    txn = {
        "compare": [
            {"key": encode(key), "result": "EQUAL", "target": "CREATE", "create_revision": revision}
        ],
        "success": [{"request_delete_range": {"key": encode(key)}}],
        "failure": [],
    }
    result = client.transaction(txn)
    return bool(result.get("succeeded")), int(result["header"]["revision"])


def guarded_put(
    client: etcd3gw.Etcd3Client, lock_key: str, revision: int, data_key: str, value: dict[str, Any]
) -> tuple[bool, int]:
    """Write the data key only if the lock key still exists with this create revision.

    Returns whether it was written and the revision of the transaction.
    """
    txn = {
        "compare": [
            {
                "key": encode(lock_key),
                "result": "EQUAL",
                "target": "CREATE",
                "create_revision": revision,
            }
        ],
        "success": [{"request_put": {"key": encode(data_key), "value": encode(json.dumps(value))}}],
        "failure": [],
    }
    result = client.transaction(txn)
    return bool(result.get("succeeded")), int(result["header"]["revision"])


def read_data(client: etcd3gw.Etcd3Client, data_key: str) -> tuple[dict[str, Any], int, int]:
    """The data key's value (empty if absent), its version (puts so far) and the revision."""
    result = client.post(client.get_url("/kv/range"), json={"key": encode(data_key)})
    revision = int(result["header"]["revision"])
    kvs = result.get("kvs") or []
    if not kvs:
        return {}, 0, revision
    value = json.loads(decode(kvs[0].get("value", "")) or "{}")
    return value, int(kvs[0].get("version", 0)), revision


def delete_prefix(client: etcd3gw.Etcd3Client, prefix: str) -> None:
    """Remove every key of a run (its lock and data keys)."""
    client.delete_prefix(prefix)


def lock_keys(client: etcd3gw.Etcd3Client, lock_key: str) -> list[dict[str, Any]]:
    """The lock key as etcd holds it now: [] when it does not exist, else its create
    revision, lease and holder (for the final read of a run)."""
    result = client.post(client.get_url("/kv/range"), json={"key": encode(lock_key)})
    return [
        {
            "create_revision": int(kv.get("create_revision", 0)),
            "lease": int(kv.get("lease", 0)),
            "holder": decode(kv.get("value", ""))[:20],
        }
        for kv in result.get("kvs") or []
    ]
