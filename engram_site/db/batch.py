"""Independent reads sent together: one round trip on PostgreSQL.

Every /context reads four unrelated things before its recall's answer is
in: the core blocks, the agent's host, the palace directory and the count
of due reviews. On PostgreSQL each was a round trip, and under load each
wait for an answer is also a wait to get the interpreter back from the
threads that ran meanwhile. `bench_http --against` (PostgreSQL, 100k facts +
100k turns, 6 connections) served 1.25x as many /context requests a second
with the four reads left out altogether (median of 6 rounds, ahead in all
6). So a caller describes each read as a `Read` (its statement, and how its
rows become the answer) and `run()` sends them at once in psycopg's
pipeline mode and reads the answers in one go. SQLite has no round trip to
save: there they run one after another, through the same cursors.

A read's `parse` runs after every statement has answered, so it may read
more (a row that turns out to need another look) or write as its plain
version would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections

from engram_site.db import prepared

T = TypeVar("T")
U = TypeVar("U")

Rows = list[tuple[Any, ...]]


@dataclass(frozen=True)
class Read(Generic[T]):
    """One statement (constant SQL, values as %s, as `prepared` wants) and
    what its rows mean."""

    sql: str
    params: Sequence[Any]
    parse: Callable[[Rows], T]

    def then(self, step: Callable[[T], U]) -> Read[U]:
        """The same statement, its answer passed on through `step`."""
        parse = self.parse
        return Read(self.sql, self.params, lambda found: step(parse(found)))


def run(*reads: Read[Any]) -> list[Any]:
    """Each read's answer, in order."""
    conn = connections[DEFAULT_DB_ALIAS]
    together = getattr(conn, "fetch_together", None)
    statements = [(r.sql, r.params) for r in reads]
    if together is not None and len(reads) > 1:
        found = together(statements)
    else:
        found = []
        for sql, params in statements:
            with prepared.cursor(conn) as cursor:
                cursor.execute(sql, params)
                found.append(cursor.fetchall())
    return [read.parse(rows) for read, rows in zip(reads, found, strict=True)]


def run_present(*reads: Read[Any] | None) -> list[Any]:
    """run() for reads a caller may not need: None answers a missing one."""
    sent = [r for r in reads if r is not None]
    answers = iter(run(*sent) if sent else [])
    return [next(answers) if r is not None else None for r in reads]


def one(read: Read[T]) -> T:
    """The answer of a read made alone."""
    answer: T = run(read)[0]
    return answer
