"""When and how recall lets the vector channel speak (RECALL_VECTOR_MODE).

On LoCoMo (all ten conversations, one ingest, `manage.py eval_vectors`) a
full vector channel fused with BM25 lowered Recall@10 with the default local
model at every weight from 0.2 up, so the channel is routed instead:

- ``fuse``: cosine over every stored vector of the space, fused like any
  other channel.
- ``rerank``: cosine over the candidates the other channels already found.
  It re-orders what keyword and graph search proposed and brings in nothing
  of its own, so a loose semantic neighbour cannot push out an exact match;
  and it scores a few hundred vectors instead of the whole space.
- ``gate``: the full channel, but only for queries where keyword search has
  no clear answer: fewer than GATE_MIN_HITS turn hits, or a flat head (the
  best turn scores under GATE_RATIO times the GATE_MIN_HITS-th). That is the
  case vectors are for (paraphrase, no shared rare word); a query with a
  standout keyword match is left to BM25.
- ``auto`` (the default): the mode and weight measured for the configured
  model (MEASURED), the only settings that were at least as good as
  keyword-only on every LoCoMo category and better overall. A model not
  measured here gets ``rerank`` with RECALL_VECTOR_WEIGHT (0 unless set:
  measure first). A RECALL_VECTOR_WEIGHT above 0 overrides the measured weight.
- ``off``: recall never uses vectors (the write pipeline still does).

No mode looks at anything but the query, the space's data and the other
channels' scores.
"""

from __future__ import annotations

from django.conf import settings

from memory import embeddings
from memory.services.recall.fusion import Key, Ranking
from memory.timeview import TimeView

MODES = ("auto", "fuse", "rerank", "gate", "off")
# (mode, weight) per stored model name, from eval_vectors on LoCoMo 1-10,
# measured on two states of recall (Recall@10, categories 1-4): keyword-only
# 0.6825 / 0.7358; wordllama gate 0.2 0.6832 / 0.7361, no category lower (a
# gain of about one question: noise-sized); MiniLM rerank 0.4 0.6926 / 0.7482,
# every category higher (MRR is lower: 0.548 against 0.575 on the second).
# A third state (LoCoMo R@10 0.775 keyword-only): MiniLM rerank 0.4 0.781,
# fuse 0.4 0.779 (open-domain lower), fuse 0.8 0.760, gate 0.4/0.8 0.776.
MEASURED: dict[str, tuple[str, float]] = {
    f"local:{embeddings.LOCAL_DEFAULT_MODEL}": ("gate", 0.2),
    f"local:{embeddings.LOCAL_MINILM_MODEL}": ("rerank", 0.4),
}
ALL_TYPES = frozenset({"item", "turn", "summary"})
GATE_MIN_HITS = 10
GATE_RATIO = 1.5


def mode() -> str:
    found = str(settings.ENGRAM.get("RECALL_VECTOR_MODE", "auto"))
    return found if found in MODES else "auto"


def resolve(*, weight: float) -> tuple[str, float]:
    """The (mode, weight) recall uses: RECALL_VECTOR_MODE, with ``auto``
    looked up in MEASURED for the configured model."""
    chosen = mode()
    if chosen == "off":
        return "off", 0.0
    if chosen != "auto":
        return chosen, weight
    measured_mode, measured_weight = MEASURED.get(embeddings.model_name(), ("rerank", 0.0))
    return measured_mode, weight if weight > 0 else measured_weight


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
    when: TimeView | None,
    others: list[Ranking],
    weight: float,
) -> Ranking:
    """The vector channel's ranking under the configured mode. Raises
    embeddings.EmbeddingsUnavailable for the caller to report as degraded."""
    from memory.search import vectors

    chosen, weight = resolve(weight=weight)
    if weight <= 0:
        # A zero weight adds nothing to any score: skip the work.
        return _skipped()
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
    hits = vectors.search(space_id=space_id, query=query, limit=limit, when=when)
    keys: list[Key] = [(h.target, int(h.id)) for h in hits]
    return Ranking(
        "vector",
        weight,
        keys,
        ALL_TYPES,
        {k: float(h.score) for k, h in zip(keys, hits, strict=True)},
    )
