"""Weighted reciprocal-rank fusion.

Each channel contributes weight / (K + rank) for every candidate it ranked.
The fused score is divided by what a candidate could at best have earned,
first place in every channel that applied to the query, so the score lands
in [0, 1] with one meaning for every query:

    1.0   ranked first by every channel
    ~0.4  ranked first by the channels holding about 40% of the weight
    <0.05 found late by one weak channel

That absolute scale is what makes RECALL_SCORE_FLOOR usable by /context.
An additive ranking (an external provider's) earns its candidates a score
on that scale but does not raise the best possible one: configuring a
provider leaves every local result's score as it was.
Ties break by key, so fusion order is deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

Key = tuple[str, int]  # (type, id): ("turn", 12), ("item", 7), ("summary", 3), ("ext", 0)

RRF_K = 20


@dataclass(slots=True)
class Ranking:
    channel: str
    weight: float
    keys: list[Key]  # best first
    # which result types this channel can ever return (for normalisation)
    types: frozenset[str]
    raw: dict[Key, float] = field(default_factory=dict)
    additive: bool = False


@dataclass(slots=True)
class Fused:
    key: Key
    score: float
    channels: dict[str, float]  # channel -> 1-based rank


def fuse(rankings: Iterable[Ranking], *, rrf_k: int | None = None) -> list[Fused]:
    rrf_k = RRF_K if rrf_k is None else rrf_k
    rankings = list(rankings)
    totals: dict[Key, float] = {}
    channels: dict[Key, dict[str, float]] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking.keys, start=1):
            totals[key] = totals.get(key, 0.0) + ranking.weight / (rrf_k + rank)
            channels.setdefault(key, {})[ranking.channel] = rank
    # The best any candidate could earn: first place in every channel that
    # applied to this query (a channel with no possible types did not apply).
    best = sum(r.weight / (rrf_k + 1) for r in rankings if r.types and not r.additive)
    if not best:  # only additive channels applied (types=["provider"])
        best = sum(r.weight / (rrf_k + 1) for r in rankings if r.types)
    fused = [
        Fused(key=key, score=min(1.0, total / best) if best else 0.0, channels=channels[key])
        for key, total in totals.items()
    ]
    fused.sort(key=lambda f: (-f.score, f.key))
    return fused
