"""Thread pools whose threads keep their database connection.

Opening a connection costs about 0.9 ms on SQLite (with Engram's pragmas) and
6 ms on PostgreSQL: more than a recall channel's whole query. So helper
threads keep theirs between tasks, under the rules Django applies between two
requests (CONN_MAX_AGE, CONN_HEALTH_CHECKS, a connection left broken by an
error): every task starts with close_old_connections().

A helper's connection cannot see the calling thread's uncommitted writes, so
callers inside a transaction must not hand database work to a helper:
`try_submit()` declines there (and when every helper is busy), and the caller
does the work itself.

A pool made with `alone=True` also declines while the process answers more
than one web request (wsgi_bridge counts them, `answering()`). Handing half a
request to a helper shortens it only when a core would otherwise sit idle;
under load the other requests keep both cores busy, and the hand-off is pure
cost: a thread switch each way and one more thread contending for the
interpreter. Recall's helpers cost 0.8 ms of CPU a query for 0.1 (SQLite) to
0.7 ms (PostgreSQL) less waiting, and `bench_http` at 8 connections (2
workers of 2 threads, 100k + 100k, SQLite) answered 254 recalls a second
with them and 332-359 without.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from django.db import close_old_connections, connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper

T = TypeVar("T")

_pools: list[DbThreadPool] = []
_pools_lock = threading.Lock()

# Web requests this process is answering now (answering()).
_answering = 0
_answering_lock = threading.Lock()


@contextlib.contextmanager
def answering() -> Iterator[None]:
    """Count a web request as being answered while the block runs."""
    global _answering
    with _answering_lock:
        _answering += 1
    try:
        yield
    finally:
        with _answering_lock:
            _answering -= 1


def busy() -> bool:
    """Whether this process answers more than one web request now."""
    return _answering > 1


class DbThreadPool:
    def __init__(self, name: str, size: int, *, alone: bool = False) -> None:
        self.name = name
        self.size = size
        self.alone = alone
        self._start()
        with _pools_lock:
            _pools.append(self)

    def _start(self) -> None:
        self._executor = ThreadPoolExecutor(
            max_workers=max(1, self.size), thread_name_prefix=self.name
        )
        self._lock = threading.Lock()
        self._busy = 0  # tasks running or queued
        self._opened: list[BaseDatabaseWrapper] = []

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run fn(*args) on a helper, queueing when all of them are busy."""
        with self._lock:
            self._busy += 1
        return self._executor.submit(self._run, fn, args)

    def try_submit(self, fn: Callable[..., T], *args: Any) -> Future[T] | None:
        """Run fn(*args) on a helper if one is free now, the caller is not
        inside a transaction and (for a pool made with alone=True) the
        process answers no other request; None means: run it yourself."""
        if self.size <= 0 or connection.in_atomic_block or (self.alone and busy()):
            return None
        with self._lock:
            if self._busy >= self.size:
                return None
            self._busy += 1
        return self._executor.submit(self._run, fn, args)

    def _run(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        try:
            close_old_connections()
            return fn(*args)
        finally:
            with self._lock:
                self._busy -= 1
                for conn in connections.all(initialized_only=True):
                    if conn not in self._opened:
                        self._opened.append(conn)

    def close_connections(self) -> None:
        """Close every helper's connection; the next task opens a new one.
        For a test database about to be dropped, which PostgreSQL refuses
        while anyone is connected. Call it when no task is running."""
        with self._lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            # Each wrapper belongs to its helper thread; Django checks that.
            conn.inc_thread_sharing()
            try:
                conn.close()
            finally:
                conn.dec_thread_sharing()


def _after_fork_in_child() -> None:
    # A forked child (a pre-fork server's worker) has none of its parent's
    # threads: an executor that thinks it has them would queue work forever.
    # Nor may it share the parent's connections.
    for pool in _pools:
        pool._start()


os.register_at_fork(after_in_child=_after_fork_in_child)


def close_all_connections() -> None:
    with _pools_lock:
        pools = list(_pools)
    for pool in pools:
        pool.close_connections()
