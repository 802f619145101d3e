"""Helper threads keep their database connection between tasks, follow
Django's rules for dropping it, and never take work from inside a transaction."""

from __future__ import annotations

import os
import threading

import pytest
from django.db import connection, transaction

from engram_site.threads import DbThreadPool


def _backend_identity() -> object:
    # The DB-API connection itself: the test holds on to each one it gets,
    # so a new connection can never reuse an old one's identity.
    connection.ensure_connection()
    return connection.connection


@pytest.mark.django_db(transaction=True)
def test_a_helper_keeps_its_connection_between_tasks() -> None:
    pool = DbThreadPool("test-keep", 1)
    try:
        first = pool.submit(_backend_identity).result(timeout=10)
        second = pool.submit(_backend_identity).result(timeout=10)
        assert first is second
        pool.close_connections()
        third = pool.submit(_backend_identity).result(timeout=10)
        assert third is not first
    finally:
        pool.close_connections()


@pytest.mark.django_db(transaction=True)
def test_an_obsolete_connection_is_replaced_before_the_next_task() -> None:
    pool = DbThreadPool("test-obsolete", 1)
    try:
        first = pool.submit(_backend_identity).result(timeout=10)

        def expire() -> None:
            # What CONN_MAX_AGE running out looks like to Django.
            connection.close_at = 0

        pool.submit(expire).result(timeout=10)
        assert pool.submit(_backend_identity).result(timeout=10) is not first
    finally:
        pool.close_connections()


@pytest.mark.django_db(transaction=True)
def test_try_submit_declines_inside_a_transaction_and_when_busy() -> None:
    pool = DbThreadPool("test-busy", 1)
    release = threading.Event()
    try:
        with transaction.atomic():
            assert pool.try_submit(lambda: 1) is None
        blocker = pool.try_submit(release.wait, 10)
        assert blocker is not None
        assert pool.try_submit(lambda: 1) is None  # the only helper is busy
        release.set()
        blocker.result(timeout=10)
        later = pool.try_submit(lambda: 2)
        assert later is not None and later.result(timeout=10) == 2
    finally:
        release.set()
        pool.close_connections()


def test_a_pool_of_size_zero_never_takes_work() -> None:
    assert DbThreadPool("test-off", 0).try_submit(lambda: 1) is None


def test_a_forked_child_gets_working_helpers() -> None:
    pool = DbThreadPool("test-fork", 1)
    assert pool.submit(lambda: 1).result(timeout=10) == 1  # the parent's helper exists
    pid = os.fork()
    if pid == 0:  # the child: only plain work, then leave without cleanup
        try:
            ok = pool.submit(lambda: 42).result(timeout=10) == 42
        except BaseException:
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
