"""The search facade: full-text search over items, turns, summaries and
document chunks.

Callers never see SQL. SQLite uses FTS5 (memory/search/_fts.py, the only module
with FTS SQL); PostgreSQL uses its own full-text search (_pg.py). Both take the
user's raw query, turn it into safe terms and bind it as a parameter, so quotes,
operators, punctuation, emoji and empty strings never raise.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from django.db import connection

from memory.search.query import query_terms
from memory.timeview import TimeView

Target = Literal["item", "turn", "summary", "chunk"]

__all__ = ["Hit", "Target", "query_terms", "search"]


@dataclass(slots=True)  # not frozen: see recall's Result
class Hit:
    id: int
    score: float  # higher is better, comparable only within one call


def _backend():  # type: ignore[no-untyped-def]
    if connection.vendor == "postgresql":
        from memory.search import _pg as backend
    else:
        from memory.search import _fts as backend
    return backend


def search(
    target: Target,
    *,
    space_id: int,
    query: str,
    limit: int = 50,
    live_only: bool = True,
    when: TimeView | None = None,
    doc_frequency: Callable[[str], int] | None = None,
    budget: int | None = None,
    idf: Callable[[str], float] | None = None,
) -> list[Hit]:
    """Rank rows of `target` in one space against `query`, best first.

    For items, `live_only` keeps active, unexpired, unquarantined facts; a
    time view `when` (as_of, known_at, history) keeps what it admits by the
    rows' columns (memory.timeview; a known_at read finishes the job on the
    rows it loads, from their revisions).
    `doc_frequency` gives a term's row count from the caller's own
    statistics, sparing the index one count query per term.
    `budget` lowers MATCH_BUDGET and SCAN_CAP for this call (a linked
    space's lighter search; recall.channels.Budget).
    `idf` gives a term's IDF in the space: PostgreSQL then ranks by it
    (_pg.py) instead of by its own cover density, which knows no IDF."""
    budget = MATCH_BUDGET if budget is None else min(budget, MATCH_BUDGET)
    terms = query_terms(query)
    if not terms or limit <= 0:
        return []
    backend = _backend()
    matches: int | None = None
    if len(terms) > 1 or doc_frequency is not None:
        # One term is never pruned; its count is only worth having when the
        # caller knows it without asking the index.
        terms, matches = _prune(backend, target, space_id, terms, doc_frequency, budget)
    return backend.search(
        target,
        space_id=space_id,
        terms=terms,
        limit=limit,
        live_only=live_only,
        when=when,
        scan_cap=min(SCAN_CAP, budget),
        matches=matches,
        weights={t: idf(t) for t in terms} if idf is not None else None,
    )


# Ranking costs one BM25 evaluation per row matching any term, and a very
# common word can match a large share of a big index while adding almost
# nothing to BM25 (its IDF is near zero). When the query's terms together
# would touch more rows than this, the most common terms are left out, rarest
# kept first; the rarest term always stays. Small spaces never reach it.
# Measured at 100k facts + 100k turns (bench_recall, the two alternating query
# by query): 2,000 against 3,000 took p50 -0.7 ms and p95 -2 ms, and found the
# text a query was drawn from in the top 8 for 0.368 of queries against 0.372.
MATCH_BUDGET = 2000
# Pruning cannot help when even the rarest term is everywhere ("what about
# X?" where X is in most rows). So the backends rank at most SCAN_CAP matching
# rows of the space, the newest ones (highest ids): walking the index in id
# order stops early, where ranking by BM25 would have to score every match.
# Below the cap (every query in a space of normal size, and every query that
# pruning brought under MATCH_BUDGET) the result is exactly the full ranking.
SCAN_CAP = MATCH_BUDGET
_DF_TTL_SECONDS = 60.0
_DF_CACHE_SIZE = 4096
_df_cache: OrderedDict[tuple[str, str, int, str], tuple[float, int]] = OrderedDict()


_df_lock = threading.Lock()


def _cached_count(key: tuple[str, str, int, str], count: Callable[[], int]) -> int:
    # Recalls run on several threads at once (recall's helpers, /context's):
    # the cache is read and written under a lock, the count query runs outside.
    now = time.monotonic()
    with _df_lock:
        hit = _df_cache.get(key)
        if hit is not None and now - hit[0] < _DF_TTL_SECONDS:
            _df_cache.move_to_end(key)
            return hit[1]
    value = count()
    with _df_lock:
        _df_cache[key] = (now, value)
        _df_cache.move_to_end(key)
        if len(_df_cache) > _DF_CACHE_SIZE:
            _df_cache.popitem(last=False)
    return value


def drop_space(space_id: int) -> None:
    """Forget this process's cached term counts of one space: after a hard
    forget their keys are the forgotten words."""
    with _df_lock:
        for key in [k for k in _df_cache if k[2] == space_id]:
            del _df_cache[key]


def cached_terms(space_id: int) -> set[str]:
    with _df_lock:
        return {k[3] for k in _df_cache if k[2] == space_id}


def _cache_key(target: Target, space_id: int, term: str) -> tuple[str, str, int, str]:
    # Keyed by database too, for tests.
    return (connection.alias + str(connection.settings_dict.get("NAME")), target, space_id, term)


def _doc_frequency(backend, target: Target, space_id: int, term: str) -> int:  # type: ignore[no-untyped-def]
    # Per space, so one tenant's data never changes another's ranking.
    # Document frequencies drift slowly; a short cache keeps the count query
    # off the hot path for repeated words.
    return _cached_count(
        _cache_key(target, space_id, term),
        lambda: backend.doc_frequency(target, space_id=space_id, term=term, cap=MATCH_BUDGET + 1),
    )


def _space_rows(target: Target, space_id: int) -> int:
    """The space's rows, counted up to MATCH_BUDGET + 1: a space with no more
    rows than the budget can never match more, so it needs no per-term counts
    at all (every conversation-sized space)."""
    from memory.models import DocumentChunk, MemoryItem, SessionSummary, Turn

    model = {
        "item": MemoryItem,
        "turn": Turn,
        "summary": SessionSummary,
        "chunk": DocumentChunk,
    }[target]
    return _cached_count(
        _cache_key(target, space_id, ""),
        lambda: model.objects.filter(space_id=space_id)[: MATCH_BUDGET + 1].count(),  # type: ignore[attr-defined]
    )


def _prune(  # type: ignore[no-untyped-def]
    backend,
    target: Target,
    space_id: int,
    terms: list[str],
    known: Callable[[str], int] | None,
    budget: int,
) -> tuple[list[str], int | None]:
    """The terms to match, and at most how many of the space's rows they
    match: None when not counted (a space no bigger than the budget needs no
    counts) or not known (a count from the index stops at the budget)."""
    if _space_rows(target, space_id) <= budget:
        return terms, None
    if known is not None:
        counts = {t: known(t) for t in terms}
    else:
        counts = {t: _doc_frequency(backend, target, space_id, t) for t in terms}
    if (every := sum(counts.values())) <= budget:
        return terms, every
    kept: list[str] = []
    total = 0
    for term in sorted(terms, key=lambda t: (counts[t], terms.index(t))):
        if kept and total + counts[term] > budget:
            continue
        kept.append(term)
        total += counts[term]
    # An index count stops at MATCH_BUDGET + 1: past that, the total is a floor.
    capped = known is None and any(counts[t] > MATCH_BUDGET for t in kept)
    return [t for t in terms if t in kept], None if capped else total
