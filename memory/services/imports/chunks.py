"""Writing a long import in chunks without starving other writers.

Each chunk is its own transaction. On SQLite a writer waiting on the lock
polls it (busy_timeout) at intervals up to 100 ms, and a loop that begins its
next transaction the instant it commits can win the lock every time: the
waiting POST /turns would then wait out several chunks instead of one. A
short pause between chunks lets it in. PostgreSQL locks rows, not the
database, so nothing waits there."""

from __future__ import annotations

import time

from django.db import connection

# Rows written per transaction: each commits in well under a second.
CHUNK = 250
PAUSE_SECONDS = 0.12


def pause_between_chunks() -> None:
    if connection.vendor == "sqlite":
        time.sleep(PAUSE_SECONDS)
