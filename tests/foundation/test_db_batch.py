"""Independent reads sent together (engram_site/db/batch.py): the answers are
each read's own, in order, on both databases; on PostgreSQL the statements
go in one pipeline, so /context's reads before its recall cost one round
trip."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from engram_site.db import batch, rows
from environment import services as environment
from memory.models import CoreBlock, MemoryItem, PalaceEntry, Space
from memory.services.context import build_context
from memory.services.palace import review, slots

pytestmark = pytest.mark.django_db


@pytest.fixture
def pipelines(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many pipelines the PostgreSQL connection ran (always none on SQLite)."""
    entered: list[int] = []
    if connection.vendor != "postgresql":
        return entered
    connection.ensure_connection()
    raw = connection.connection
    real = raw.pipeline

    def counted(*args: Any, **kwargs: Any) -> Any:
        entered.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(raw, "pipeline", counted)
    return entered


# Constant statements (Space's table is memory_space).
COUNT_SPACES = "SELECT COUNT(*) FROM memory_space"
SPACE_ID = "SELECT id FROM memory_space WHERE id = %s"


def _count(sql: str, params: list[Any]) -> batch.Read[int]:
    return batch.Read(sql, params, lambda found: int(found[0][0]))


def test_each_read_gets_its_own_answer_in_order(pipelines: list[int]) -> None:
    a = Space.objects.create(name="a")
    Space.objects.create(name="b")
    by_name, every, none = batch.run(
        rows.first_read(Space, "t.name = %s", ["a"]),
        _count(COUNT_SPACES, []),
        rows.every_read(Space, "t.name = %s", ["nobody"]),
    )
    assert by_name is not None and by_name.pk == a.pk
    assert every == Space.objects.count()
    assert none == []
    assert len(pipelines) == (1 if connection.vendor == "postgresql" else 0)


def test_a_read_alone_is_not_piped(pipelines: list[int]) -> None:
    Space.objects.create(name="alone")
    assert batch.one(rows.first_read(Space, "t.name = %s", ["alone"])) is not None
    assert pipelines == []


def test_a_parse_may_read_more_and_sees_the_transactions_writes() -> None:
    with transaction.atomic():
        space = Space.objects.create(name="inside")

        def more(found: batch.Rows) -> int:
            # A read after the pipeline, on the same connection.
            return len(found) + Space.objects.filter(name="inside").count()

        first, second = batch.run(
            rows.every_read(Space, "t.name = %s", ["inside"]).then(len),
            batch.Read(SPACE_ID, [space.pk], more),
        )
    assert (first, second) == (1, 2)


def test_a_failing_statement_raises_and_the_connection_goes_on() -> None:
    # In a savepoint, as any failing statement must be for PostgreSQL to go on
    # in the same transaction.
    with pytest.raises(DatabaseError), transaction.atomic():
        batch.run(
            _count(COUNT_SPACES, []),
            _count("SELECT COUNT(*) FROM no_such_table", []),
        )
    assert (
        batch.run(_count(COUNT_SPACES, []), _count(COUNT_SPACES, [])) == [Space.objects.count()] * 2
    )


def test_the_context_reads_its_parts_in_one_pipeline(space: Space, pipelines: list[int]) -> None:
    CoreBlock.objects.create(space=space, label="user", text="- Name: Ana", budget_tokens=500)
    environment.report_environment(
        space=space, data={"os": "Linux", "hostname": "ana-laptop", "home": "/home/ana"}
    )
    build_context(space=space, query=None)  # makes the empty agent block
    pipelines.clear()
    with CaptureQueriesContext(connection) as queries:
        out = build_context(space=space, query=None)
    assert "Name: Ana" in out["blocks"]["core_user"]
    assert "ana-laptop" in out["blocks"]["environment"]
    # The blocks, the agent's host (read once), the directory, the due count.
    assert len(queries.captured_queries) == 4
    assert len(pipelines) == (1 if connection.vendor == "postgresql" else 0)


def test_due_entries_past_the_first_batch_are_counted(
    space: Space, monkeypatch: pytest.MonkeyPatch
) -> None:
    items = [
        MemoryItem.objects.create(space=space, text=f"Standup moved to room {n} on Monday")
        for n in range(5)
    ]
    for item in items:
        slots.place_item(item, enrol=True)
    PalaceEntry.objects.filter(item__in=items).update(due_at=timezone.now() - timedelta(hours=1))
    MemoryItem.objects.filter(pk=items[1].pk).update(status=MemoryItem.Status.ARCHIVED)
    # Batches of two: the read carries the first, the rest are read after it.
    monkeypatch.setattr(review, "BATCH", 2)
    assert review.due_count(space) == 4
    assert review.due_count(space, cap=3) == 3
    assert "4 entries due for review" in build_context(space=space, query=None)["text"]
