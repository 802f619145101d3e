"""A Django cache in a small SQLite file of its own, shared by every process
on the machine: the embedded default's cache when there is no Redis.

Django's own cross-process caches do not fit the rate limiter: the file and
database caches implement `incr` as get-then-set, so two workers counting
the same request window both read 5 and both write 6. Here `incr` is one
UPDATE ... RETURNING statement, atomic across processes, and integers are
stored as SQLite integers so that statement can add to them. Other values
are pickled, as Django's caches do.

The file is separate from the main database so counting requests never
takes the main database's write lock, which writers of turns and facts
queue on. Durability does not matter here (synchronous=OFF): a lost window
of counts after a power cut only lets a few extra requests through."""

from __future__ import annotations

import pickle
import random
import sqlite3
import threading
import time
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS cache ("
    "key TEXT PRIMARY KEY, value BLOB NOT NULL, expires REAL NOT NULL) WITHOUT ROWID"
)
# One add() in this many sweeps out the expired rows (rate windows leave one
# row per key per window behind).
_CULL_EVERY = 200
_FOREVER = float("inf")


class SQLiteCache(BaseCache):
    def __init__(self, location: str, params: dict[str, Any]) -> None:
        super().__init__(params)
        self._path = location
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    # --- connection -----------------------------------------------------------
    def _run(self, sql: str, args: tuple[Any, ...] = ()) -> tuple[int, list[Any]]:
        """(rows changed, rows returned) of one statement.

        One connection per process, used under a lock: each statement takes
        microseconds, and under ASGI every request runs on a thread of its
        own, so a connection per thread would be a new one per request."""
        with self._lock:
            if self._conn is None:
                # Autocommit: every statement is its own transaction.
                conn = sqlite3.connect(
                    self._path, timeout=5, isolation_level=None, check_same_thread=False
                )
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=OFF")
                conn.execute(_SCHEMA)
                self._conn = conn
            cursor = self._conn.execute(sql, args)
            rows = cursor.fetchall()
            return cursor.rowcount, rows

    def _expiry(self, timeout: Any) -> float:
        # Django's absolute expiry time; None (no timeout) is forever.
        expires = self.get_backend_timeout(timeout)
        return _FOREVER if expires is None else float(expires)

    @staticmethod
    def _encode(value: Any) -> Any:
        # bool is an int subclass, but must come back as a bool.
        if type(value) is int and -(2**63) <= value < 2**63:
            return value
        return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def _decode(stored: Any) -> Any:
        return stored if isinstance(stored, int) else pickle.loads(stored)

    # --- the cache API ----------------------------------------------------------
    def add(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None
    ) -> bool:
        key = self.make_and_validate_key(key, version=version)
        now = time.time()
        if random.randrange(_CULL_EVERY) == 0:
            self._run("DELETE FROM cache WHERE expires <= ?", (now,))
        changed, _ = self._run(
            "INSERT INTO cache (key, value, expires) VALUES (?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = excluded.expires "
            "WHERE cache.expires <= ?",
            (key, self._encode(value), self._expiry(timeout), now),
        )
        return changed == 1

    def get(self, key: Any, default: Any = None, version: Any = None) -> Any:
        key = self.make_and_validate_key(key, version=version)
        _, rows = self._run(
            "SELECT value FROM cache WHERE key = ? AND expires > ?", (key, time.time())
        )
        return self._decode(rows[0][0]) if rows else default

    def set(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None
    ) -> None:
        key = self.make_and_validate_key(key, version=version)
        self._run(
            "INSERT OR REPLACE INTO cache (key, value, expires) VALUES (?, ?, ?)",
            (key, self._encode(value), self._expiry(timeout)),
        )

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: Any = None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        changed, _ = self._run(
            "UPDATE cache SET expires = ? WHERE key = ? AND expires > ?",
            (self._expiry(timeout), key, time.time()),
        )
        return changed == 1

    def delete(self, key: Any, version: Any = None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        changed, _ = self._run("DELETE FROM cache WHERE key = ?", (key,))
        return changed == 1

    def has_key(self, key: Any, version: Any = None) -> bool:
        key = self.make_and_validate_key(key, version=version)
        _, rows = self._run("SELECT 1 FROM cache WHERE key = ? AND expires > ?", (key, time.time()))
        return bool(rows)

    def incr(self, key: Any, delta: int = 1, version: Any = None) -> int:
        key = self.make_and_validate_key(key, version=version)
        _, rows = self._run(
            "UPDATE cache SET value = value + ? WHERE key = ? AND expires > ? "
            "AND typeof(value) = 'integer' RETURNING value",
            (delta, key, time.time()),
        )
        if not rows:
            raise ValueError(f"Key '{key}' not found (or not an integer).")
        return int(rows[0][0])

    def clear(self) -> None:
        self._run("DELETE FROM cache")

    def close(self, **kwargs: Any) -> None:
        # Django calls this at the end of every request; the connection is
        # kept for the next one, as a database connection with CONN_MAX_AGE is.
        pass
