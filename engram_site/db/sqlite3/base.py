"""Django's SQLite backend, with write transactions queueing on a lock file
beside the database before they meet SQLite's own lock.

SQLite lets one writer in at a time. A writer that finds its lock taken
sleeps and tries again, at intervals growing to 100 ms, and writers that
arrive meanwhile often get in first: with 16 clients posting turns beside 32
searching, the median post took 0.36 s and the slowest 1% over 2 s
(`bench_faults --scenario load`). Here every write transaction of every
process (web threads, Celery workers, commands) first takes an exclusive
flock on `<database>-writers`. A blocked flock sleeps in the kernel and is
woken the moment the holder lets go, so the lock is handed on without
back-off and the wait is shared out fairly: p99 0.78 s on the same load.

The wait is bounded by the connection's `timeout` (20 s), as SQLite's own
is: past it the transaction fails with "database is locked", as it would
have. A flock call has no timeout of its own, so a contended one is made on
a helper thread while the caller waits for it with one; a lock that comes
too late is let go at once.

Transactions only: a write outside one (autocommit) still meets SQLite's
lock directly, and so does anything not using Django (the rate limiter's
cache has its own file). The lock is per open file, so threads of one
process queue on it like processes do; the kernel drops it if a process
dies.
"""

from __future__ import annotations

import fcntl
import os
import threading

from django.db import OperationalError
from django.db.backends.sqlite3 import base

from engram_site import running


def _queue_path(name: object) -> str | None:
    name = str(name)
    if not name or name == ":memory:" or name.startswith("file:"):
        return None  # an in-memory database: nobody else can write to it
    return f"{name}-writers"


def _take(fd: int, timeout: float) -> bool:
    """Take the exclusive flock on fd within `timeout` seconds."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        pass
    # Queued behind another writer: a web request gives up its slot to the
    # requests that can run meanwhile (running.py says why for good).
    running.step_aside()
    settled = threading.Lock()
    got = threading.Event()
    state = {"given_up": False}

    def wait() -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with settled:
            if state["given_up"]:
                fcntl.flock(fd, fcntl.LOCK_UN)
            else:
                got.set()

    threading.Thread(target=wait, name="engram-write-queue", daemon=True).start()
    if got.wait(timeout):
        return True
    with settled:
        if got.is_set():
            return True
        state["given_up"] = True
    return False


class DatabaseWrapper(base.DatabaseWrapper):
    _queue_fd: int | None = None
    _queue_pid = 0
    _in_queue = False

    def _start_transaction_under_autocommit(self) -> None:
        path = _queue_path(self.settings_dict["NAME"])
        if path is not None:
            self._forget_inherited()
            if self._queue_fd is None:
                self._queue_fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                self._queue_pid = os.getpid()
            timeout = float(self.settings_dict.get("OPTIONS", {}).get("timeout", 5))
            if not _take(self._queue_fd, timeout):
                raise OperationalError("database is locked")
            self._in_queue = True
        try:
            super()._start_transaction_under_autocommit()  # type: ignore[misc]
        except BaseException:
            self._leave_queue()
            raise

    def _forget_inherited(self) -> None:
        # A forked child (a pre-fork worker) shares its parent's open file,
        # and with it the parent's lock: it must neither use nor release it.
        if self._queue_fd is not None and self._queue_pid != os.getpid():
            os.close(self._queue_fd)
            self._queue_fd, self._in_queue = None, False

    def _leave_queue(self) -> None:
        self._forget_inherited()
        if self._in_queue and self._queue_fd is not None:
            self._in_queue = False
            fcntl.flock(self._queue_fd, fcntl.LOCK_UN)

    def _commit(self) -> None:
        try:
            super()._commit()  # type: ignore[misc]
        finally:
            self._leave_queue()

    def _rollback(self) -> None:
        try:
            super()._rollback()  # type: ignore[misc]
        finally:
            self._leave_queue()

    def _close(self) -> None:
        try:
            super()._close()  # type: ignore[misc]
        finally:
            self._leave_queue()
            if self._queue_fd is not None:
                os.close(self._queue_fd)
                self._queue_fd = None
