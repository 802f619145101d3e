"""When and how recall lets the vector channel speak (RECALL_VECTOR_MODE).

On LoCoMo a full vector channel fused with BM25 lowered Recall@10 at every
weight tried with the local models (the figures are in the embeddings issue's
closing note), so the channel is routed instead of always fused:

- ``fuse``: cosine over every stored vector of the space, fused like any
  other channel.
- ``rerank``: cosine over the candidates the other channels already found.
  It re-orders what keyword and graph search proposed and brings in nothing
  of its own, so a loose semantic neighbour cannot push out an exact match.
- ``gate``: the full channel, but only for queries where keyword search has
  no clear answer: fewer than GATE_MIN_HITS turn hits, or a flat head (the
  best turn scores under GATE_RATIO times the GATE_MIN_HITS-th). That is the
  case vectors are for (paraphrase, no shared rare word); a query with a
  standout keyword match is left to BM25.

No mode looks at anything but the query, the space's data and the other
channels' scores.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from memory import embeddings
from memory.services.recall.fusion import Key, Ranking

MODES = ("fuse", "rerank", "gate")
ALL_TYPES = frozenset({"item", "turn", "summary"})
GATE_MIN_HITS = 10
GATE_RATIO = 1.5


def mode() -> str:
    found = str(settings.ENGRAM.get("RECALL_VECTOR_MODE", "fuse"))
    return found if found in MODES else "fuse"


def _skipped() -> Ranking:
    # No types: fusion treats the channel as not applying to this query, so
    # it does not count in the score's scale either.
    return Ranking("vector", 0.0, [], frozenset())


def keyword_is_weak(others: list[Ranking]) -> bool:
    """No BM25 turn ranking, too few hits, or no standout at the top."""
    turns = next((r for r in others if r.channel == "bm25_turns"), None)
    if turns is None or len(turns.keys) < GATE_MIN_HITS:
        return True
    top = turns.raw.get(turns.keys[0], 0.0)
    floor = turns.raw.get(turns.keys[GATE_MIN_HITS - 1], 0.0)
    return floor <= 0 or top < GATE_RATIO * floor


def ranking(
    *,
    space_id: int,
    query: str,
    limit: int,
    as_of: datetime | None,
    others: list[Ranking],
    weight: float,
) -> Ranking:
    """The vector channel's ranking under the configured mode. Raises
    embeddings.EmbeddingsUnavailable for the caller to report as degraded."""
    from memory.search import vectors

    if weight <= 0:
        # A zero weight adds nothing to any score: skip the work.
        return _skipped()
    chosen = mode()
    if chosen == "gate" and not keyword_is_weak(others):
        return _skipped()
    if chosen == "rerank":
        candidates: dict[Key, None] = {}
        for other in others:
            for key in other.keys:
                candidates.setdefault(key, None)
        if not candidates:
            return _skipped()
        vec = embeddings.embed_query(query)
        scores = vectors.score_keys(vec, space_id=space_id, keys=list(candidates))
        order = sorted(scores, key=lambda k: (-scores[k], k))[:limit]
        types = frozenset(k[0] for k in candidates)
        return Ranking("vector", weight, order, types, {k: scores[k] for k in order})
    hits = vectors.search(space_id=space_id, query=query, limit=limit, as_of=as_of)
    keys: list[Key] = [(h.target, int(h.id)) for h in hits]
    return Ranking(
        "vector",
        weight,
        keys,
        ALL_TYPES,
        {k: float(h.score) for k, h in zip(keys, hits, strict=True)},
    )
