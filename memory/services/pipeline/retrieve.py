"""Step 3: the live items a candidate could duplicate, update or contradict.

BM25 over the item index, plus every live item with the same subject and
predicate (a functional predicate's old value may share no words with the new
one), plus cosine neighbours when embeddings are on. A missing or failing
vector index degrades to BM25 silently: the pipeline must not stop for it."""

from __future__ import annotations

import logging

from django.db.models import Q

from memory import embeddings
from memory.models import MemoryItem, Space
from memory.search import search
from memory.selectors import live_items
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
    wanted = Q(pk__in=list(ids))
    if candidate.subject and candidate.predicate:
        # The latest values of the same subject and predicate, in the same query.
        same = live_items(space).filter(
            subject__in=spellings(candidate.subject), predicate=candidate.predicate
        )
        wanted |= Q(pk__in=same.order_by("-created_at").values("pk")[:limit])
    elif not ids:
        return []
    rows = sorted(live_items(space).filter(wanted), key=lambda item: item.created_at, reverse=True)
    # Text matches first, in rank order, then the same-predicate values.
    for item in rows:
        ids.setdefault(item.pk, None)
    found = {item.pk: item for item in rows}
    return [found[pk] for pk in ids if pk in found]
