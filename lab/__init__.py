"""The live lab: the model's bugs reproduced on a real etcd, a real database and real pauses.

Worker processes take a lock in etcd (or from etcd's lock API, ZooKeeper or Redis: the
table in lab.lock_table) and write through a storage process to SQLite (or to etcd
itself); a nemesis pauses workers with SIGSTOP, holds requests and restarts the store.
Every event is recorded in a history, which is checked on its own (P1, P2, P3, P5) and
replayed through the model's step interpreter (conformance).
"""
