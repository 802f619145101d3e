"""Whether a space holds any session summaries, skills or document chunks,
so recall skips a channel over a kind the space has none of.

Most spaces have no documents, and many no skills or summaries yet; each of
those channels still cost a query per recall (0.1 ms on SQLite, a round
trip on PostgreSQL: 0.2 to 0.4 of SQLite recall's 4.0 ms at 100k facts +
100k turns). That a space has some is remembered for good (if they are all
deleted, the channel's own query finds nothing); that it has none, for
EMPTY_SECONDS, the freshness of the term statistics (termstats), so a
space's first summary, skill or document is searched within a second of
being stored by any process, and at once in the process that stored it
(added())."""

from __future__ import annotations

import threading
import time
from typing import Any

from django.db import connection
from django.db.models import Model

from memory.models import DocumentChunk, SessionSummary, Skill, Space
from memory.services.recall import rows

EMPTY_SECONDS = 1.0
_MODELS: dict[str, type[Model]] = {
    "summary": SessionSummary,
    "skill": Skill,
    "chunk": DocumentChunk,
}
_SOME = float("inf")
_CAP = 10_000  # spaces remembered per process; past it the marks start over

# (database, kind, space id) -> (the space row's creation time, until when
# the answer holds). The creation time, because a space id can come back
# for another space (SQLite reuses ids after a rollback).
_marks: dict[tuple[str, str, int], tuple[Any, float]] = {}
_lock = threading.Lock()
_clock = time.monotonic


def _key(kind: str, space_id: int) -> tuple[str, str, int]:
    return (connection.alias + str(connection.settings_dict.get("NAME")), kind, space_id)


def holds(kind: str, space: Space) -> bool:
    """Whether `space` has any row of `kind` ("summary", "skill", "chunk")."""
    key = _key(kind, space.pk)
    now = _clock()
    with _lock:
        mark = _marks.get(key)
    if mark is not None and mark[0] == space.created_at and now < mark[1]:
        return mark[1] == _SOME
    found = rows.any_in_space(_MODELS[kind], space.pk)
    with _lock:
        if len(_marks) >= _CAP:
            _marks.clear()
        _marks[key] = (space.created_at, _SOME if found else now + EMPTY_SECONDS)
    return found


def added(kind: str, space_id: int) -> None:
    """A row of `kind` was just stored in the space: this process looks again."""
    with _lock:
        _marks.pop(_key(kind, space_id), None)
