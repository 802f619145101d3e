"""Vector search: cosine similarity as one numpy matrix product.

Each process keeps, per (space, model), a float32 matrix of every stored
vector. A search first asks the database for the count and the highest id of
the space's vectors: new rows (id above the cached maximum) are appended, and
only when rows disappeared (forget, re-embed, --force) is the matrix rebuilt.
Hits are resolved against their rows afterwards, so quarantined, expired or
deleted rows never come back even while the matrix still holds them.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np
from django.db.models import Count, Max

from memory import embeddings
from memory.embeddings import DimensionMismatch, EmbeddingsUnavailable, Target
from memory.timeview import TimeView

__all__ = ["EmbeddingsUnavailable", "VectorHit", "score_keys", "search", "similar_to_text"]

# How often the cached matrix is checked for deleted rows (see _matrix).
RECOUNT_SECONDS = 30.0

_KIND_CODE: dict[str, int] = {"item": 0, "turn": 1, "summary": 2}
_CODE_KIND: tuple[Target, ...] = ("item", "turn", "summary")


@dataclass(frozen=True, slots=True)
class VectorHit:
    target: Target
    id: int
    score: float  # cosine similarity in [-1, 1]


@dataclass
class _SpaceMatrix:
    dim: int = 0
    max_id: int = 0
    count: int = 0
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    kinds: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    counted_at: float = float("-inf")
    lock: threading.Lock = field(default_factory=threading.Lock)


_cache: dict[tuple[int, str], _SpaceMatrix] = {}
_cache_lock = threading.Lock()


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


def drop_space(space_id: int) -> None:
    """Forget this process's matrices of one space (after a hard forget or a
    wipe), so deleted vectors leave memory now rather than at the next recount."""
    with _cache_lock:
        for key in [k for k in _cache if k[0] == space_id]:
            del _cache[key]


def cached_ids(space_id: int) -> dict[Target, set[int]]:
    """The target ids this process holds vectors of for one space."""
    found: dict[Target, set[int]] = {}
    with _cache_lock:
        entries = [e for k, e in _cache.items() if k[0] == space_id]
    for entry in entries:
        with entry.lock:
            for code, target_id in zip(entry.kinds.tolist(), entry.ids.tolist(), strict=False):
                found.setdefault(_CODE_KIND[code], set()).add(int(target_id))
    return found


def _load_rows(*, space_id: int, model: str, after_id: int, dim: int | None):
    """(max id, dim, matrix, kinds, ids) of the vectors with id > after_id."""
    from memory.models import MemoryVector

    rows = list(
        MemoryVector.objects.filter(space_id=space_id, model=model, id__gt=after_id)
        .order_by("id")
        .values_list("id", "dim", "vec", "item_id", "turn_id", "summary_id")
    )
    if not rows:
        return after_id, dim, None, None, None
    dims = {r[1] for r in rows}
    if dim is not None:
        dims.add(dim)
    if len(dims) != 1:
        # Mixed dimensions under one model name cannot be compared.
        stored, other = sorted(dims)[:2]
        raise DimensionMismatch(model=model, stored=stored, configured=other)
    (found_dim,) = dims
    blob = b"".join(bytes(r[2]) for r in rows)
    matrix = np.frombuffer(blob, dtype="<f4").reshape(len(rows), found_dim)
    kinds = np.fromiter(
        (0 if r[3] is not None else 1 if r[4] is not None else 2 for r in rows),
        dtype=np.int8,
        count=len(rows),
    )
    ids = np.fromiter(
        (r[3] if r[3] is not None else r[4] if r[4] is not None else r[5] for r in rows),
        dtype=np.int64,
        count=len(rows),
    )
    return rows[-1][0], found_dim, matrix, kinds, ids


def _matrix(*, space_id: int, model: str) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """A consistent snapshot (dim, matrix, kinds, ids) of the space's vectors."""
    from memory.models import MemoryVector

    with _cache_lock:
        entry = _cache.setdefault((space_id, model), _SpaceMatrix())
    rows = MemoryVector.objects.filter(space_id=space_id, model=model)
    now = time.monotonic()
    if now - entry.counted_at >= RECOUNT_SECONDS:
        stats = rows.aggregate(n=Count("id"), top=Max("id"))
        db_count, db_max = int(stats["n"] or 0), int(stats["top"] or 0)
        entry.counted_at = now
    else:
        # MAX(id) is one index lookup; COUNT(*) walks the index, so it runs
        # only every RECOUNT_SECONDS. Until then a deleted row can linger in
        # the matrix, and hit resolution drops it (its target is gone).
        db_max = int(rows.aggregate(top=Max("id"))["top"] or 0)
        db_count = entry.count + (1 if db_max > entry.max_id else 0)
    with entry.lock:
        if db_max == entry.max_id and db_count == entry.count:
            return entry.dim, entry.matrix, entry.kinds, entry.ids
        if db_max <= entry.max_id:
            # Rows were deleted: start over.
            entry.dim, entry.max_id, entry.count = 0, 0, 0
            entry.matrix = np.zeros((0, 0), dtype=np.float32)
            entry.kinds = np.zeros(0, dtype=np.int8)
            entry.ids = np.zeros(0, dtype=np.int64)
        top, dim, matrix, kinds, ids = _load_rows(
            space_id=space_id, model=model, after_id=entry.max_id, dim=entry.dim or None
        )
        if matrix is not None:
            entry.matrix = matrix if entry.count == 0 else np.vstack([entry.matrix, matrix])
            entry.kinds = np.concatenate([entry.kinds, kinds])
            entry.ids = np.concatenate([entry.ids, ids])
            entry.dim, entry.max_id = int(dim), int(top)
            entry.count = entry.matrix.shape[0]
        if entry.counted_at == now and entry.count != db_count:
            # Deletions below the cached maximum together with inserts above
            # it: reload everything once.
            top, dim, matrix, kinds, ids = _load_rows(
                space_id=space_id, model=model, after_id=0, dim=None
            )
            entry.matrix = matrix if matrix is not None else np.zeros((0, 0), dtype=np.float32)
            entry.kinds = kinds if kinds is not None else np.zeros(0, dtype=np.int8)
            entry.ids = ids if ids is not None else np.zeros(0, dtype=np.int64)
            entry.dim, entry.max_id = int(dim or 0), int(top)
            entry.count = entry.matrix.shape[0]
        return entry.dim, entry.matrix, entry.kinds, entry.ids


def _visible(target: Target, ids: list[int], *, space_id: int, when: TimeView | None) -> set[int]:
    """Which of these rows recall may show: the same rules as the full-text
    facade (live, unquarantined facts now; what a time view admits by the
    rows' columns, recall's temporal filter deciding the rest).

    The rows are fetched by primary key only and the rules applied here:
    with the space in the WHERE clause SQLite prefers the space index and
    scans the whole space instead of doing a few key lookups."""
    from memory.models import MemoryItem, SessionSummary, Turn

    view = when or TimeView()
    known, said = view.known_at, view.valid_at
    visible: set[int] = set()
    if target == "item":
        for pk, space, screen, status, created, expired in MemoryItem.objects.filter(
            pk__in=ids
        ).values_list("pk", "space_id", "screen_status", "status", "created_at", "expired_at"):
            if space != space_id or screen != "ok" or status != "active":
                continue
            if view.is_now:
                ok = expired is None
            else:
                ok = known is None or created <= known
            if ok:
                visible.add(pk)
    elif target == "turn":
        for pk, space, screen, created, ts in Turn.objects.filter(pk__in=ids).values_list(
            "pk", "space_id", "screen_status", "created_at", "ts"
        ):
            if (
                space == space_id
                and screen == "ok"
                and (known is None or created <= known)
                and (said is None or ts <= said)
            ):
                visible.add(pk)
    else:
        for pk, space, created in SessionSummary.objects.filter(pk__in=ids).values_list(
            "pk", "space_id", "created_at"
        ):
            if space == space_id and (known is None or created <= known):
                visible.add(pk)
    return visible


def search_vector(
    vec: np.ndarray,
    *,
    space_id: int,
    limit: int,
    when: TimeView | None = None,
    targets: tuple[Target, ...] = ("item", "turn", "summary"),
) -> list[VectorHit]:
    """Rank the space's stored vectors against `vec`, best first."""
    if limit <= 0:
        return []
    model = embeddings.model_name()
    dim, matrix, kinds, ids = _matrix(space_id=space_id, model=model)
    if ids.shape[0] == 0:
        return []
    if vec.shape[0] != dim:
        raise DimensionMismatch(model=model, stored=dim, configured=int(vec.shape[0]))
    scores = matrix @ vec.astype(np.float32)
    wanted = np.isin(kinds, [_KIND_CODE[t] for t in targets])
    if not wanted.all():
        scores = np.where(wanted, scores, -np.inf)
    available = int(wanted.sum())
    hits: list[VectorHit] = []
    seen: set[tuple[int, int]] = set()
    # Over-fetch, then drop rows recall may not show; widen until `limit`
    # visible hits are found or the candidates run out.
    take = min(available, max(limit * 3, limit + 20))
    start = 0
    while start < available and len(hits) < limit:
        if take >= scores.shape[0]:
            order = np.argsort(-scores, kind="stable")
        else:
            part = np.argpartition(-scores, take - 1)[:take]
            order = part[np.argsort(-scores[part], kind="stable")]
        window = order[start:take]
        by_kind: dict[int, list[int]] = {}
        for idx in window:
            by_kind.setdefault(int(kinds[idx]), []).append(int(ids[idx]))
        visible = {
            code: _visible(_CODE_KIND[code], pks, space_id=space_id, when=when)
            for code, pks in by_kind.items()
        }
        for idx in window:
            code, pk = int(kinds[idx]), int(ids[idx])
            if pk in visible[code] and (code, pk) not in seen:
                seen.add((code, pk))
                hits.append(VectorHit(_CODE_KIND[code], pk, float(scores[idx])))
                if len(hits) == limit:
                    break
        start = take
        take = min(available, take * 4)
    return hits


def search(
    *,
    space_id: int,
    query: str,
    limit: int,
    when: TimeView | None = None,
    targets: tuple[Target, ...] = ("item", "turn", "summary"),
) -> list[VectorHit]:
    """Items, turns and summaries of the space closest to `query` by cosine.

    Raises EmbeddingsUnavailable when embeddings are off or the backend is
    down (callers degrade to their other channels), DimensionMismatch (a
    subclass) when stored vectors and the model disagree."""
    if not (query or "").strip():
        return []
    vec = embeddings.embed_query(query)
    return search_vector(vec, space_id=space_id, limit=limit, when=when, targets=targets)


def similar_to_text(
    text: str, *, space_id: int, limit: int = 8, when: TimeView | None = None
) -> list[VectorHit]:
    """Live items closest to `text` (retrieve-similar and merge in the write
    pipeline). Raises EmbeddingsUnavailable like `search`."""
    return search(space_id=space_id, query=text, limit=limit, when=when, targets=("item",))


def score_keys(
    vec: np.ndarray, *, space_id: int, keys: list[tuple[str, int]]
) -> dict[tuple[str, int], float]:
    """Cosine of `vec` with the stored vectors of exactly these (target, id)
    keys; keys with no vector yet are left out. For re-ranking candidates
    another channel found: it never brings in a row of its own, so the
    visibility rules of that channel still hold."""
    if not keys:
        return {}
    model = embeddings.model_name()
    dim, matrix, kinds, ids = _matrix(space_id=space_id, model=model)
    if ids.shape[0] == 0:
        return {}
    if vec.shape[0] != dim:
        raise DimensionMismatch(model=model, stored=dim, configured=int(vec.shape[0]))
    wanted = {(_KIND_CODE[t], int(pk)) for t, pk in keys if t in _KIND_CODE}
    rows = np.flatnonzero(np.isin(ids, np.fromiter((pk for _, pk in wanted), dtype=np.int64)))
    rows = np.array([r for r in rows if (int(kinds[r]), int(ids[r])) in wanted], dtype=np.int64)
    if rows.shape[0] == 0:
        return {}
    scores = matrix[rows] @ vec.astype(np.float32)
    return {
        (_CODE_KIND[int(kinds[r])], int(ids[r])): float(s)
        for r, s in zip(rows, scores, strict=True)
    }
