"""Recall: the read path. No LLM and no writes, except the opt-in query rewrite
(an LLM call, counted against the space's hourly budget).

Channels (channels.py) rank candidates independently: BM25 over live facts,
BM25 over turns (with neighbouring-turn context) and session summaries,
vectors when embeddings are on, and the entity graph. Weighted reciprocal-rank
fusion (fusion.py) combines them into a score in [0, 1]; recency, frequency,
importance and a date named in the query are small boosts on
top, never filters. Then the temporal filter (temporal.py): live now by
default, bi-temporal with `as_of`. Quarantined and archived items never come
back. Rows are loaded by rows.py; an optional LLM rewrite of the query
(rewrite.py, off by default) adds more keyword queries to fuse. External
providers configured for prefetch (memory/services/providers/) are asked in
parallel and fused as channels `provider:<name>`, additively: they never
change the scale the local results are scored on.

Score scale: 1.0 means first place in every channel that can find a result of
that type; RECALL_SCORE_FLOOR is compared against this number (see
fusion.py). A floor around 0.15 keeps results that at least one main channel
put near the top.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import zip_longest
from typing import TypeVar

from django.conf import settings
from django.db import connection
from django.utils import timezone

from engram_site.threads import DbThreadPool
from memory import embeddings
from memory.models import Space
from memory.search import query_terms
from memory.services.providers import prefetch
from memory.services.providers.results import Item as ProviderItem
from memory.services.recall import channels, dates, presence, rows, temporal, termstats
from memory.services.recall import rewrite as rewrite_queries
from memory.services.recall.fusion import Fused, Key, Ranking, fuse
from memory.timeview import TimeView, Window, state_at

T = TypeVar("T")

__all__ = ["RecallResponse", "Result", "Source", "recall", "TYPES"]

TYPES = ("fact", "turn", "summary", "insight", "skill", "doc", "provider")
ITEM_RESULT_TYPES = {"fact", "insight"}

# A provider's channel weighs like the vector channel: its first answer
# scores like a local result a main channel put first, and, being additive,
# it does not lower the local results' scores (fusion.py).
PROVIDER_WEIGHT = 0.8

# Boost sizes, multiplicative on the fused score.
DATE_BOOST = 1.0  # a date the query names doubles a match in it (LoCoMo 1-5: +0.005 R@5 over 0.35)
IMPORTANCE_BOOST = 0.15  # at importance 1.0 vs 0.5 neutral
FREQUENCY_BOOST = 0.05  # per doubling, up to four doublings
RECENCY_BOOST = 0.05  # seen today, fading over a month


# Source, Result (and search.Hit) are not frozen: recall makes one for each
# of some 70-300 candidates a query, and a frozen dataclass's __init__ (each
# field through object.__setattr__) costs 2.5 times a plain one's. Recall's
# CPU in-process at 100k + 100k, 10 runs of 1,500 queries alternating with
# the frozen ones: median 3.98 -> 3.62 ms a query, cheaper in 8 of 10. Only
# recall itself sets a result's final score, before it returns it.
@dataclass(slots=True)
class Source:
    session_id: str | None
    turn_refs: list[str]
    # Document chunks: the document they are part of, and their section path.
    document_id: str | None = None
    title: str | None = None
    path: str | None = None
    section: str | None = None
    # Provider results: the provider, and the id it gave the entry (if any).
    provider: str | None = None
    provider_id: str | None = None


@dataclass(slots=True)
class Result:
    id: str
    type: str
    text: str
    score: float
    channels: dict[str, float]
    created_at: datetime
    valid_from: datetime | None
    valid_to: datetime | None
    source: Source
    # Facts and insights: true in the world at the asked instant, by what was
    # known then; None for turns, summaries and skills (episodes, not claims).
    current: bool | None = None
    # The fact that replaced this one; for a turn, the fact that replaced one
    # the turn stated ("retracted" when it was taken back without a successor).
    superseded_by: str | None = None
    space: str = ""


@dataclass(slots=True)
class RecallResponse:
    results: list[Result]
    took_ms: float
    degraded: list[str] = field(default_factory=list)


# On PostgreSQL parts of a recall run on helper threads meanwhile (a linked
# space's search, the fact channels): their queries wait on the server,
# which holds no GIL (at 100k facts + 100k turns, 2 cores,
# measured side by side: p50 12.2 -> 9.6 ms when both channels were
# searches). On SQLite the turn and fact channels rank in this process's
# memory, so a helper only takes turns with the caller on the GIL: recall
# p50 4.3 ms inline against 4.8 on a helper (CPU 4.3 against 5.4 ms), a
# linked pair 6.1 against 7.1 ms. When no helper is free, or inside a
# transaction, the parts run in turn, and while the process answers other
# requests too (threads.py: then they only add work).
_helpers = DbThreadPool("engram-recall", settings.ENGRAM["RECALL_THREADS"], alone=True)


def _beside(fn: Callable[[], T]) -> Future[T] | None:
    """fn on a helper meanwhile (PostgreSQL only, above); None: call it."""
    return _helpers.try_submit(fn) if connection.vendor == "postgresql" else None


def _pool(k: int) -> int:
    # Enough depth per channel for fusion and boosts to reorder; bounded so a
    # k of 100 does not turn into a scan.
    return min(200, max(40, 4 * k))


def recall(
    *,
    space: Space | None = None,
    spaces: Sequence[Space] = (),
    query: str,
    k: int = 8,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
    include_history: bool = False,
    types: list[str] | None = None,
    rewrite: bool = False,
) -> RecallResponse:
    """The best k results over the readable spaces: `spaces` (a linked key's
    own space first, then its user space; memory.services.scopes.readable),
    or the one `space`. Each result is labelled with the space it is from."""
    readable = tuple(spaces) or ((space,) if space is not None else ())
    if not readable:
        raise TypeError("recall() needs space or spaces")
    started = time.perf_counter()
    started_clock = time.monotonic()
    when = TimeView(as_of=as_of, known_at=known_at, history=include_history)
    wanted = set(types) if types else set(TYPES)
    degraded: list[str] = []
    if not query_terms(query) or k <= 0:
        return RecallResponse([], (time.perf_counter() - started) * 1000, degraded)
    pool = _pool(k)
    names = [s.name for s in readable]
    # Providers first: they answer while the local channels run.
    asked = prefetch.start(names, query) if "provider" in wanted else []
    # The rewrite is one LLM call for the request, counted against the key's
    # own space; its queries then search every readable space.
    pending = rewrite_queries.start(readable[0], query) if rewrite else None
    per_space = _per_space(readable, query=query, pool=pool, when=when, wanted=wanted)
    if pending is not None:
        alternatives = rewrite_queries.collect(pending, started=started_clock)
        if alternatives is None:
            degraded.append("rewrite")
        for n, alternative in enumerate(alternatives or [], start=1):
            for i, (s, rankings) in enumerate(zip(readable, per_space, strict=True)):
                rankings += [
                    replace(r, channel=f"{r.channel}~{n}", weight=r.weight * rewrite_queries.WEIGHT)
                    for r in _keyword_rankings(
                        space=s,
                        query=alternative,
                        pool=pool,
                        when=when,
                        wanted=wanted,
                        budget=_budget(i),
                    )
                ]
    if embeddings.enabled():
        try:
            for s, rankings in zip(readable, per_space, strict=True):
                rankings.append(
                    channels.vector(
                        space_id=s.pk, query=query, limit=pool, when=when, others=rankings
                    )
                )
                # Documents by meaning only when asked for by type: a full
                # cosine channel always finds something, and default recall
                # keeps the vector routing measured for memory (vector_routing).
                if types and "doc" in wanted:
                    rankings.append(
                        channels.document_vectors(space_id=s.pk, query=query, limit=pool)
                    )
        except (embeddings.EmbeddingsUnavailable, ImportError):
            degraded.append("vector")
    merged = per_space[0] if len(per_space) == 1 else merge_spaces(per_space)
    external: dict[int, tuple[str, ProviderItem]] = {}
    if asked:
        found, late = prefetch.collect(asked, started=started_clock, space_names=names)
        degraded += late
        merged = merged + _provider_rankings(found, external)
    fused = fuse(merged)
    results = _materialise(
        spaces=readable,
        fused=fused,
        k=k,
        when=when,
        wanted=wanted,
        query=query,
        external=external,
    )
    return RecallResponse(results, (time.perf_counter() - started) * 1000, degraded)


def _provider_rankings(
    found: list[prefetch.Found], external: dict[int, tuple[str, ProviderItem]]
) -> list[Ranking]:
    """One ranking per provider, in its own order; `external` gets the
    items by the key number fusion knows them by."""
    rankings = []
    for answer in found:
        keys: list[Key] = []
        for item in answer.items:
            n = len(external)
            external[n] = (answer.provider, item)
            keys.append(("ext", n))
        rankings.append(
            Ranking(
                channel=prefetch.channel(answer.provider),
                weight=PROVIDER_WEIGHT,
                keys=keys,
                types=frozenset({"provider"}),
                additive=True,
            )
        )
    return rankings


def merge_spaces(per_space: list[list[Ranking]]) -> list[Ranking]:
    """One ranking per channel over several spaces, so fusion ranks them all
    at once: a channel's lists are merged by their raw scores where every
    candidate has one (BM25 and cosine scores are on one scale across
    spaces), else taken in turns. Keys never collide: ids are table-wide."""
    by_channel: dict[str, list[Ranking]] = {}
    for rankings in per_space:
        for r in rankings:
            by_channel.setdefault(r.channel, []).append(r)
    merged: list[Ranking] = []
    for channel, parts in by_channel.items():
        raw = {key: score for r in parts for key, score in r.raw.items()}
        if all(key in raw for r in parts for key in r.keys):
            keys = sorted((key for r in parts for key in r.keys), key=lambda key: -raw[key])
        else:
            keys = [key for row in zip_longest(*(r.keys for r in parts)) for key in row if key]
        merged.append(
            Ranking(
                channel=channel,
                weight=max(r.weight for r in parts),
                keys=keys,
                types=frozenset().union(*(r.types for r in parts)),
                raw=raw,
            )
        )
    return merged


def _per_space(
    readable: Sequence[Space], *, query: str, pool: int, when: TimeView, wanted: set[str]
) -> list[list[Ranking]]:
    """Each readable space's keyword rankings. On PostgreSQL a linked
    space's are worked out on a helper meanwhile (_beside): its queries cost
    what the own space's do (the candidate counts, not the store's size,
    set the work)."""
    search = functools.partial(_keyword_rankings, query=query, pool=pool, when=when, wanted=wanted)
    beside = [
        _beside(functools.partial(search, space=s, budget=_budget(i)))
        for i, s in enumerate(readable[1:], start=1)
    ]
    own = search(space=readable[0], budget=_budget(0))
    rest = [
        f.result() if f is not None else search(space=s, budget=_budget(i))
        for i, (s, f) in enumerate(zip(readable[1:], beside, strict=True), start=1)
    ]
    return [own, *rest]


def _budget(position: int) -> channels.Budget:
    """The key's own space is searched in full, a linked one lighter."""
    return channels.FULL if position == 0 else channels.LINKED


def _keyword_rankings(
    *,
    space: Space,
    query: str,
    pool: int,
    when: TimeView,
    wanted: set[str],
    budget: channels.Budget,
) -> list[Ranking]:
    facts = functools.partial(
        _fact_rankings,
        space=space,
        query=query,
        pool=pool,
        when=when,
        wanted=wanted,
        budget=budget,
    )
    beside = _beside(facts)
    turns = (
        [channels.bm25_turns(space=space, query=query, limit=pool, when=when, budget=budget)]
        if "turn" in wanted
        else []
    )
    # The small channels after the turns, while the facts' search runs on:
    # on PostgreSQL it takes longer than the turns (3.7 against 2.4 ms at
    # 100k + 100k), and its helper used to run these after it.
    rest = _other_rankings(space=space, query=query, pool=pool, when=when, wanted=wanted)
    return (beside.result() if beside is not None else facts()) + turns + rest


def _fact_rankings(
    *,
    space: Space,
    query: str,
    pool: int,
    when: TimeView,
    wanted: set[str],
    budget: channels.Budget,
) -> list[Ranking]:
    """The channels over facts, for a helper thread."""
    if wanted & ITEM_RESULT_TYPES:
        return list(
            channels.fact_channels(space=space, query=query, limit=pool, when=when, budget=budget)
        )
    return []


def _other_rankings(
    *, space: Space, query: str, pool: int, when: TimeView, wanted: set[str]
) -> list[Ranking]:
    """The channels over summaries, skills and documents, searched for the
    kinds the space has any of (presence.py). The summary channel counts in
    the score's scale whether it finds anything or not, so a space without
    summaries gets it empty; the others count only when they find
    something."""
    rankings: list[Ranking] = []
    if "summary" in wanted:
        rankings.append(
            channels.bm25_summaries(space_id=space.pk, query=query, limit=pool, when=when)
            if presence.holds("summary", space)
            else channels.no_summaries()
        )
    if "skill" in wanted and presence.holds("skill", space):
        rankings.append(channels.skills(space_id=space.pk, query=query, limit=pool, when=when))
    if "doc" in wanted and presence.holds("chunk", space):
        # No time view: documents are not facts with validity.
        rankings.append(channels.documents(space_id=space.pk, query=query, limit=pool))
    return rankings


# A former fact (in a history view) counts this much against current ones.
# A turn that stated a fact since superseded keeps its score, because what
# was said is still the answer to questions about that time (a flat 0.5 on
# such turns cost LoCoMo 1-5 0.012 R@5 and 0.011 R@10), but it never ranks
# above the fact that replaced it (_below_successors).
FORMER_FACT_FACTOR = 0.5


@dataclass(slots=True)
class _Loaded:
    """One space's rows for the fused head, and the context to judge them."""

    ctx: _Context
    items: dict[int, rows.ItemRow]
    turns: dict[int, rows.TurnRow]
    summaries: dict[int, rows.SummaryRow]
    skills: dict[int, rows.SkillRow]
    chunks: dict[int, rows.ChunkRow]
    stated: dict[int, list[rows.Statement]]


def _load(
    space: Space,
    ids: dict[str, list[int]],
    *,
    when: TimeView,
    now: datetime,
    windows: list[dates.Window],
    query: str,
) -> _Loaded:
    # Every loader filters by the space: an id is only ever found in the
    # space it belongs to, which is what keeps unreadable spaces out.
    weights = (
        termstats.query_weights(
            {termstats.stem(t) for t in query_terms(query) if len(t) > 1},
            termstats.item_stats(space, look=False),
        )
        if ids["item"]
        else {}
    )
    ctx = _Context(
        when=when, now=now, windows=windows, revisions={}, space=space.name, weights=weights
    )
    part = _Loaded(ctx=ctx, items={}, turns={}, summaries={}, skills={}, chunks={}, stated={})
    _load_more(part, space, ids)
    return part


def _load_more(part: _Loaded, space: Space, ids: dict[str, list[int]]) -> None:
    """Add the rows of everything among `ids` to `part`. Facts, turns and
    what the turns stated are read together: on PostgreSQL one round trip
    for the three (rows.load)."""
    when = part.ctx.when
    items, turns, stated = rows.load(space.pk, items=ids["item"], turns=ids["turn"], when=when)
    stated = {pk: facts for pk, facts in stated.items() if pk in turns}
    if when.known_at is not None:
        revisions = part.ctx.revisions
        facts = set(items) | {s.item_id for ss in stated.values() for s in ss}
        revisions.update(rows.revisions(facts - revisions.keys()))
    part.items.update(items)
    part.turns.update(turns)
    part.stated.update(stated)
    part.summaries.update(rows.summaries(space.pk, ids["summary"]))
    part.skills.update(rows.skills(space.pk, ids["skill"], when=when))
    part.chunks.update(rows.chunks(space.pk, ids["chunk"]))


def _owner(loaded: list[_Loaded], key: Key) -> _Loaded | None:
    """The readable space a fused candidate's row was found in: ids are
    table-wide, so at most one holds it; none when its row is gone."""
    kind, pk = key
    for part in loaded:
        table: Collection[int] = {
            "item": part.items.keys(),
            "turn": part.turns.keys(),
            "summary": part.summaries.keys(),
            "skill": part.skills.keys(),
            "chunk": part.chunks.keys(),
        }[kind]
        if pk in table:
            return part
    return None


def _materialise(
    *,
    spaces: Sequence[Space],
    fused: list[Fused],
    k: int,
    when: TimeView,
    wanted: set[str],
    query: str,
    external: dict[int, tuple[str, ProviderItem]] | None = None,
) -> list[Result]:
    """Load the candidates' rows, drop what the temporal filter rejects, apply
    the boosts, and keep the best k.

    Only a fact's row can lift its score much (boosts and coverage); any
    other candidate scores at most its fused score, or twice that when the
    query names a date. So the head's facts load at once and the rest in
    rounds of k, best first, until none left could still reach the k-th
    place: the same k as loading them all (at 100k + 100k a recall loads 8
    turns on average of the some 40 in its head)."""
    # Boosts can lift a candidate by up to ~2.9x (a date named in the query
    # doubles a score; importance, frequency and recency add the rest), so
    # the head is a generous count rather than a cut at the k-th score.
    head = fused[: max(k * 6, 60)]
    now = timezone.now()
    windows = dates.windows(query, now=when.instant(now))
    ceiling = _ceiling(windows)
    facts = [f for f in head if f.key[0] == "item"]
    rest = [f for f in head if f.key[0] != "item"]  # best first, as fused
    batch, rest = facts + rest[:k], rest[k:]
    loaded = [
        _load(s, _ids(batch), when=when, now=now, windows=windows, query=query) for s in spaces
    ]
    scored: list[tuple[float, Key, Result]] = []
    whole: set[Key] = set()  # current facts holding every word the query weighs
    while True:
        for f in batch:
            found = _score(
                f, loaded, wanted, whole, space=spaces[0].name, now=now, external=external
            )
            if found is not None:
                scored.append(found)
        _below_successors(scored)
        scored.sort(key=lambda s: (-s[0], s[1]))
        if not rest or (len(scored) >= k and rest[0].score * ceiling < scored[k - 1][0]):
            break
        batch, rest = rest[:k], rest[k:]
        for s, part in zip(spaces, loaded, strict=True):
            _load_more(part, s, _ids(batch))
    top = _keep_a_whole_fact(scored, k, whole)
    # Scores are graded against the best result: boosts may lift it past 1.
    scale = max(1.0, top[0][0]) if top else 1.0
    out: list[Result] = []
    for score, _, result in top:
        result.score = round(min(1.0, score / scale), 6)
        out.append(result)
    return out


def _ceiling(windows: list[dates.Window]) -> float:
    """The most a candidate other than a fact can score over its fused score."""
    return 1 + DATE_BOOST if windows else 1.0


def _ids(batch: list[Fused]) -> dict[str, list[int]]:
    ids: dict[str, list[int]] = {"item": [], "turn": [], "summary": [], "skill": [], "chunk": []}
    for f in batch:
        if f.key[0] in ids:
            ids[f.key[0]].append(f.key[1])
    return ids


def _score(
    f: Fused,
    loaded: list[_Loaded],
    wanted: set[str],
    whole: set[Key],
    *,
    space: str,
    now: datetime,
    external: dict[int, tuple[str, ProviderItem]] | None,
) -> tuple[float, Key, Result] | None:
    """A candidate's boosted score and its Result; None when the temporal
    filter rejects it or its row is gone. A current fact holding every word
    the query weighs is added to `whole`."""
    kind, pk = f.key
    if kind == "ext":
        answer = (external or {}).get(pk)
        if answer is None:
            return None
        return f.score, f.key, _provider_result(f, *answer, space=space, now=now)
    part = loaded[0] if len(loaded) == 1 else _owner(loaded, f.key)
    if part is None:
        return None
    ctx = part.ctx
    found: tuple[float, Result] | None
    if kind == "item":
        row = part.items.get(pk)
        share = _share(row.text, ctx) if row is not None else 0.0
        found = _item_result(f, row, ctx, share)
        if found is not None and found[1].type not in wanted:
            return None
        if found is not None and found[1].current and ctx.weights and share >= 1:
            whole.add(f.key)
    elif kind == "turn":
        found = _turn_result(f, part.turns.get(pk), ctx, part.stated.get(pk, []))
    elif kind == "skill":
        found = _skill_result(f, part.skills.get(pk), ctx)
    elif kind == "chunk":
        found = _doc_result(f, part.chunks.get(pk), ctx)
    else:
        found = _summary_result(f, part.summaries.get(pk), ctx)
    return None if found is None else (found[0], f.key, found[1])


# The top k keep a place for the best current fact that holds every word the
# query weighs, when no fact made it on score: turns outweigh facts in fusion
# (channels.WEIGHTS), so with eight turns sharing the query's words a fact
# stating exactly what was asked was never shown (bench_recall --scopes: 0 of
# 271 queries drawn from a fact found it in the top 8). It takes the last
# place, the weakest turn's; below this k every place goes to the score.
WHOLE_FACT_MIN_K = 3


def _keep_a_whole_fact(
    scored: list[tuple[float, Key, Result]], k: int, whole: set[Key]
) -> list[tuple[float, Key, Result]]:
    top = scored[:k]
    if k < WHOLE_FACT_MIN_K or len(top) < k or any(key[0] == "item" for _, key, _ in top):
        return top
    best = next((s for s in scored[k:] if s[1] in whole), None)
    return top if best is None else [*top[:-1], best]


@dataclass(frozen=True, slots=True)
class _Context:
    when: TimeView
    now: datetime
    windows: list[dates.Window]
    revisions: dict[int, list[tuple[datetime, Window]]]
    space: str
    weights: dict[str, float]  # the query's words and their IDF among the space's facts


def _below_successors(scored: list[tuple[float, Key, Result]]) -> None:
    """A stale turn or former fact never outranks the fact that replaced it,
    when both are among the results."""
    by_id = {r.id: i for i, (_, key, r) in enumerate(scored) if key[0] == "item"}
    for i, (score, key, result) in enumerate(scored):
        successor = by_id.get(result.superseded_by or "")
        if successor is not None and score >= scored[successor][0]:
            scored[i] = (scored[successor][0] * 0.99, key, result)


# Each of these: the candidate's boosted score and its Result, or None when
# the temporal filter rejects it (or its row is gone).


def _item_result(
    f: Fused, row: rows.ItemRow | None, ctx: _Context, share: float
) -> tuple[float, Result] | None:
    """`share`: of the query's weight, what the fact's text holds (_share)."""
    if row is None:
        return None
    window = temporal.item_visible(
        row, when=ctx.when, revisions=ctx.revisions.get(row.id, []), now=ctx.now
    )
    if window is None:
        return None
    current = temporal.item_current(window, when=ctx.when, now=ctx.now)
    score = f.score * _item_boost(row, now=ctx.when.instant(ctx.now)) * _coverage(share)
    if not current:
        score *= FORMER_FACT_FACTOR
    if any(w.contains(window.valid_from or row.created_at) for w in ctx.windows):
        score *= 1 + DATE_BOOST
    return score, Result(
        id=str(row.id),
        type="insight" if row.kind == "insight" else "fact",
        text=row.text,
        score=0.0,
        channels=f.channels,
        created_at=row.created_at,
        valid_from=window.valid_from,
        valid_to=window.valid_to,
        source=Source(row.session, row.turn_refs),
        current=current,
        superseded_by=str(window.superseded_by) if window.superseded_by else None,
        space=ctx.space,
    )


def _replaced_by(statements: list[rows.Statement], ctx: _Context) -> str | None:
    """What replaced a fact this turn stated, judged in the view: the
    successor's id, "retracted", or None while all of them hold."""
    for st in statements:
        if ctx.when.known_at is not None and st.created_at > ctx.when.known_at:
            continue
        window = state_at(st.window, ctx.revisions.get(st.item_id, []), ctx.when.known_at)
        if temporal.item_current(window, when=ctx.when, now=ctx.now):
            continue
        if window.valid_from is not None and window.valid_from > ctx.when.instant(ctx.now):
            continue  # not yet true then: the turn is ahead of the view, not stale
        return str(window.superseded_by) if window.superseded_by else "retracted"
    return None


def _turn_result(
    f: Fused, row: rows.TurnRow | None, ctx: _Context, statements: list[rows.Statement]
) -> tuple[float, Result] | None:
    if row is None or not temporal.turn_visible(row, when=ctx.when):
        return None
    score = f.score
    replaced = _replaced_by(statements, ctx)
    # Said in the time asked about, or telling of it when said ("yesterday").
    if any(w.contains(row.ts) for w in ctx.windows) or dates.told_within(
        row.text, said_at=row.ts, within=ctx.windows
    ):
        score *= 1 + DATE_BOOST
    return score, Result(
        id=str(row.id),
        type="turn",
        text=row.text,
        score=0.0,
        channels=f.channels,
        created_at=row.created_at,
        valid_from=row.ts,
        valid_to=None,
        source=Source(row.session, [row.ref] if row.ref else []),
        superseded_by=replaced,
        space=ctx.space,
    )


def _summary_result(
    f: Fused, row: rows.SummaryRow | None, ctx: _Context
) -> tuple[float, Result] | None:
    if row is None or not temporal.summary_visible(row, when=ctx.when):
        return None
    score = f.score
    first, last = row.first_ts, row.last_ts
    if first and last and any(w.start <= last and first < w.end for w in ctx.windows):
        score *= 1 + DATE_BOOST
    return score, Result(
        id=str(row.id),
        type="summary",
        text=row.text,
        score=0.0,
        channels=f.channels,
        created_at=row.created_at,
        valid_from=first,
        valid_to=last,
        source=Source(row.session, []),
        space=ctx.space,
    )


def _skill_result(
    f: Fused, row: rows.SkillRow | None, ctx: _Context
) -> tuple[float, Result] | None:
    if row is None:
        return None
    text = f"{row.name}: {row.description}".rstrip(": ")
    return f.score, Result(
        id=str(row.id),
        type="skill",
        text=f"{text}\n{row.body}".strip(),
        score=0.0,
        channels=f.channels,
        created_at=row.created_at,
        valid_from=None,
        valid_to=None,
        source=Source(None, row.turn_refs),
        space=ctx.space,
    )


def _doc_result(f: Fused, row: rows.ChunkRow | None, ctx: _Context) -> tuple[float, Result] | None:
    # No temporal filter and no date boost: a document is not a claim with
    # a validity window, so as_of and known_at leave it as it is.
    if row is None:
        return None
    return f.score, Result(
        id=str(row.id),
        type="doc",
        text=row.text,
        score=0.0,
        channels=f.channels,
        created_at=row.created_at,
        valid_from=None,
        valid_to=None,
        source=Source(
            None,
            [],
            document_id=str(row.document_id),
            title=row.title,
            path=row.path,
            section=row.section,
        ),
        space=ctx.space,
    )


def _provider_result(
    f: Fused, provider: str, item: ProviderItem, *, space: str, now: datetime
) -> Result:
    # Asked for now, by the asking space: no validity window, and no boosts
    # (the provider ranked it; Engram knows nothing else about it).
    return Result(
        id=f"{provider}:{item.id}" if item.id else f"{provider}:#{f.key[1]}",
        type="provider",
        text=item.text,
        score=0.0,
        channels=f.channels,
        created_at=now,
        valid_from=None,
        valid_to=None,
        source=Source(None, [], provider=provider, provider_id=item.id or None),
        space=space,
    )


# A fact is one short sentence: how much of the query it holds says how well
# it answers it (rank fusion alone scores the best of poor matches like a
# perfect one). A fact holding none of the query's words (found through the
# graph) keeps half its score.
COVERAGE_FLOOR = 0.5


def _coverage(share: float) -> float:
    return COVERAGE_FLOOR + (1 - COVERAGE_FLOOR) * share


def _share(text: str, ctx: _Context) -> float:
    """The share of the query's IDF weight among the space's facts that the
    text holds (1.0 when the query weighs nothing)."""
    total = sum(ctx.weights.values())
    if total <= 0:
        return 1.0
    words = set(termstats.tokens(text))
    # Summed in the weights' (sorted) order, not a set's: see query_weights.
    return sum(weight for word, weight in ctx.weights.items() if word in words) / total


def _item_boost(row: rows.ItemRow, *, now: datetime) -> float:
    importance = max(0.0, min(1.0, row.importance))
    doublings = min(4.0, math.log2(max(1, row.frequency)))
    age_days = max(0.0, (now - row.last_seen).total_seconds() / 86400) if row.last_seen else 365
    return (
        (1 + IMPORTANCE_BOOST * (importance - 0.5) * 2)
        * (1 + FREQUENCY_BOOST * doublings)
        * (1 + RECENCY_BOOST * math.exp(-age_days / 30))
    )
