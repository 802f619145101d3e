"""SQLite's write transactions queue on a lock file beside the database
(engram_site/db/sqlite3/base.py): one at a time across threads and
processes, handed on when the holder commits or rolls back, and a wait
bounded by the connection's timeout as SQLite's own."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator

import pytest
from django.db import OperationalError, connection, connections, transaction

from memory.models import Space

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "sqlite", reason="SQLite only: PostgreSQL has row locks"
    ),
]


@pytest.fixture
def queue_file() -> Iterator[int]:
    """A file descriptor of our own on the queue's lock file."""
    fd = os.open(f"{connection.settings_dict['NAME']}-writers", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        yield fd
    finally:
        os.close(fd)


def _free(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    fcntl.flock(fd, fcntl.LOCK_UN)
    return True


def test_a_transaction_holds_the_queue_until_it_commits(queue_file) -> None:
    with transaction.atomic():
        Space.objects.create(name="held")
        assert not _free(queue_file)
    assert _free(queue_file)


def test_a_rolled_back_transaction_lets_go_too(queue_file) -> None:
    with pytest.raises(RuntimeError), transaction.atomic():
        Space.objects.create(name="undone")
        raise RuntimeError("boom")
    assert _free(queue_file)
    assert not Space.objects.filter(name="undone").exists()


def test_a_second_writer_waits_for_the_first_to_commit() -> None:
    committed = threading.Event()
    inside = threading.Event()
    began_at: list[float] = []
    committed_at: list[float] = []

    def first() -> None:
        try:
            with transaction.atomic():
                Space.objects.create(name="first")
                inside.set()
                time.sleep(0.3)
                # The last moment inside: the second may begin only after it.
                committed_at.append(time.monotonic())
            committed.set()
        finally:
            connections.close_all()

    def second() -> None:
        try:
            inside.wait(5)
            with transaction.atomic():
                began_at.append(time.monotonic())
                Space.objects.create(name="second")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert committed.is_set() and began_at and began_at[0] >= committed_at[0]
    assert set(Space.objects.values_list("name", flat=True)) >= {"first", "second"}


def test_the_wait_is_bounded_and_a_late_lock_is_let_go(queue_file, monkeypatch) -> None:
    monkeypatch.setitem(connection.settings_dict["OPTIONS"], "timeout", 0.3)
    fcntl.flock(queue_file, fcntl.LOCK_EX)  # another writer holds the queue
    started = time.monotonic()
    with pytest.raises(OperationalError, match="database is locked"), transaction.atomic():
        Space.objects.create(name="too late")
    assert 0.25 < time.monotonic() - started < 3
    fcntl.flock(queue_file, fcntl.LOCK_UN)
    # The waiter given up on takes the lock when it comes free, and lets go.
    deadline = time.monotonic() + 3
    while not _free(queue_file) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _free(queue_file)
    with transaction.atomic():
        Space.objects.create(name="in time")
    assert Space.objects.filter(name="in time").exists()
    assert not Space.objects.filter(name="too late").exists()
