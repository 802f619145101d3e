"""Step 3: the live items a candidate could duplicate, update or contradict.

BM25 over the item index, plus every live item with the same subject and
predicate (a functional predicate's old value may share no words with the new
one), plus cosine neighbours when embeddings are on. A missing or failing
vector index degrades to BM25 silently: the pipeline must not stop for it."""

from __future__ import annotations

import logging

from django.db import connection

from memory import embeddings
from memory.models import MemoryItem, Space
from memory.search import search
from memory.services.pipeline.candidates import Candidate, spellings

log = logging.getLogger(__name__)

LIMIT = 8


def similar(*, space: Space, candidate: Candidate, limit: int = LIMIT) -> list[MemoryItem]:
    ids: dict[int, None] = {}
    query = " ".join(filter(None, [candidate.text, candidate.object]))
    for hit in search("item", space_id=space.pk, query=query, limit=limit):
        ids.setdefault(hit.id, None)
    if embeddings.enabled():
        try:
            from memory.search import vectors

            for vhit in vectors.search(space_id=space.pk, query=candidate.text, limit=limit):
                if vhit.target == "item":
                    ids.setdefault(vhit.id, None)
        except embeddings.EmbeddingsUnavailable as exc:
            log.info("vector neighbours unavailable, using BM25 only: %s", exc)
        except Exception:  # a broken vector index must not stop ingestion
            log.warning("vector neighbour search failed; using BM25 only", exc_info=True)
    same: list[int] = []
    if candidate.subject and candidate.predicate:
        same = _latest_values(space.pk, candidate.subject, candidate.predicate, limit)
    elif not ids:
        return []
    # Liveness is checked on the rows (the same rule as live_items) rather
    # than compiled into the query: building that ORM filter cost more than
    # running it, once per candidate inside the write path.
    rows = sorted(
        (
            item
            for item in MemoryItem.objects.filter(pk__in=[*ids, *same])
            if item.space_id == space.pk and item.is_live
        ),
        key=lambda item: item.created_at,
        reverse=True,
    )
    # Text matches first, in rank order, then the same-predicate values.
    for item in rows:
        ids.setdefault(item.pk, None)
    found = {item.pk: item for item in rows}
    return [found[pk] for pk in ids if pk in found]


def _latest_values(space_id: int, subject: str, predicate: str, limit: int) -> list[int]:
    """The latest live values of a subject and predicate (a functional
    predicate's old value may share no words with the new one), on the
    (space, subject, predicate) index."""
    names = spellings(subject)
    table = MemoryItem._meta.db_table
    sql = (
        f"SELECT id FROM {table} WHERE space_id = %s AND predicate = %s "  # noqa: S608 (constant SQL)
        f"AND subject IN ({', '.join(['%s'] * len(names))}) "
        "AND status = %s AND expired_at IS NULL AND screen_status = %s "
        "ORDER BY created_at DESC LIMIT %s"
    )
    params: list[int | str] = [space_id, predicate, *names]
    params += [str(MemoryItem.Status.ACTIVE), str(MemoryItem.Screen.OK), limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]
