"""The recall channels. Each one ranks candidates on its own and knows nothing
of the others; fusion.py combines them. All of them are read-only and none
calls an LLM."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from engram_site.db import batch
from memory import embeddings
from memory.models import Entity, MemoryItem, Relation, Space
from memory.search import MATCH_BUDGET, Hit, query_terms, search
from memory.services.graph import entity_ids_in_text, entity_ids_read
from memory.services.recall import answers, dates, termstats, turn_signals
from memory.services.recall import rows as recall_rows
from memory.services.recall.fusion import Key, Ranking
from memory.services.recall.turn_signals import TurnTable
from memory.timeview import TimeView

ITEM_TYPES = frozenset({"item"})
SKILL_TYPES = frozenset({"skill"})
TURN_TYPES = frozenset({"turn"})
SUMMARY_TYPES = frozenset({"summary"})
DOC_TYPES = frozenset({"chunk"})

# Default channel weights. Turns are what was actually said and carry their
# own provenance; facts are the pipeline's distillation, and a weak extractor
# (the offline rule-based one) makes short, lossy facts that must not crowd
# out the turns they came from: measured on LoCoMo conversations 1-5, item
# weight 1.0 cost 0.10 R@10 against 0.5. The graph only speaks when the query
# names an entity.
WEIGHTS = {
    "bm25_items": 0.5,
    "bm25_turns": 1.0,
    "bm25_summaries": 0.5,
    "graph": 0.4,
    "skills": 0.5,
    "vector": 0.8,
    "docs": 0.5,
    "doc_vector": 0.5,
}

# How much of a neighbouring turn's BM25 strength a turn inherits: a question
# often names the topic in one turn and the answer sits in the reply, or two
# turns on, where the same speaker answers the other's follow-up question
# (span 2 measured +0.01 R@5 over 1 on LoCoMo 1-5; the share halves at
# distance 2). Only the NEIGHBOUR_HITS strongest hits lend context.
NEIGHBOUR_SHARE = 0.8
NEIGHBOUR_SPAN = 2
NEIGHBOUR_HITS = 40
# A turn said by someone the query names: its BM25 score is multiplied by 1 + this.
SPEAKER_BOOST = 1.0
# Turns re-scored by BM25 over the asking space's own statistics (termstats.py).
SPACE_BM25 = True
# How many of the index's best turns are re-scored (at least the channel's limit).
TURN_CANDIDATES = 80
# Query words found in more than this share of the space's turns do not pick
# candidates (see _distinctive; LoCoMo 1-5: +0.011 R@5, +0.012 R@10).
CANDIDATE_MAX_SHARE = 0.2
CANDIDATE_MIN_DOCS = 50
# A "when" question: turns that place something in time count this much more
# (LoCoMo 1-5: temporal R@5 0.816->0.829).
WHEN_BOOST = 0.6
# A question asking for a name ("which city", "what movie", "where"): turns
# that name something the question does not count this much more
# (answers.py; LoCoMo R@10 1-5 0.777 -> 0.783, 6-10, not tuned on, 0.759 ->
# 0.763; multi-hop All@10 0.209 -> 0.223; no category lower).
NAME_BOOST = 1.0
# A query naming a stretch of time ("in May 2023", "last week") also takes the
# turns said in it as candidates, even those sharing no word with the query:
# "what did Anna do in January?" is answered by a turn saying "I finished my
# screenplay last Friday". Such a turn starts at this share of the best word
# match (so any real match still ranks above it), times DATED_TIME when it
# places something in time itself; the speaker boost, neighbour context and
# the date boost at materialisation then apply as to any turn. The window
# runs DATED_AFTER_DAYS past its end, because a turn tells of the days just
# before it ("last Friday"). LoCoMo R@5/R@10/All@10, 1-5: 0.700/0.764/0.707
# -> 0.702/0.769/0.712; 6-10 (not tuned on): 0.659/0.742/0.678 ->
# 0.666/0.751/0.687.
DATED_SHARE = 0.1
DATED_TIME = 1.5
DATED_AFTER_DAYS = 7
DATED_LIMIT = 120
# "in June" names no year: the Junes of this many years back are looked in.
DATED_YEARS = 10


@dataclass(frozen=True, slots=True)
class Budget:
    """How much candidate work a space's keyword channels do: the index
    rows ranked (memory.search MATCH_BUDGET and SCAN_CAP) and the turns
    re-scored (TURN_CANDIDATES, NEIGHBOUR_HITS)."""

    match: int = MATCH_BUDGET
    turns: int = TURN_CANDIDATES
    neighbours: int = NEIGHBOUR_HITS


FULL = Budget()
# A linked space (the user space a project key reads beside its own) is
# searched with half of it. The work is set by these counts, not by the
# space's size, so a user space a tenth the size of its project cost as much
# as the project, and two spaces' searches do not overlap much on two cores.
# What it gives up: the newest 1,000 matching rows are ranked instead of
# 2,000 when a query's words are everywhere (facts, and turns in a time view;
# turns as they are now are ranked from postings, every match), and 40 turns
# are kept instead of 80. `bench_recall --scopes` (100k + 100k with a
# 10k + 10k user space), when turns still came from the index: the pair's p50
# 12.2 -> 9.3 ms; the linked space's own row in the pair's top 8 for 0.417 of
# queries drawn from it, against 0.424 in full (0.406 either way since; 0.762
# against 0.768 once a fact holding the whole query kept a place in the top k).
LINKED = Budget(match=MATCH_BUDGET // 2, turns=TURN_CANDIDATES // 2, neighbours=NEIGHBOUR_HITS // 2)


def vector_weight() -> float:
    return float(settings.ENGRAM.get("RECALL_VECTOR_WEIGHT", WEIGHTS["vector"]))


def bm25_items(
    *, space: Space, query: str, limit: int, when: TimeView | None, budget: Budget = FULL
) -> Ranking:
    """BM25 over facts alone: fact_channels' first ranking (recall asks for both
    channels there, their first reads together)."""
    return fact_channels(space=space, query=query, limit=limit, when=when, budget=budget)[0]


def fact_channels(
    *, space: Space, query: str, limit: int, when: TimeView | None, budget: Budget = FULL
) -> tuple[Ranking, Ranking]:
    """BM25 over facts, and the graph channel.

    The space's facts as they are now, or as every one held so far (a
    history view, which every /context asks for), are ranked from their
    statistics' postings, as turns are: the full-text index took 1.7 of
    recall's 5.3 ms at 100k + 100k to walk and score a query's matches, and
    scored them by every space's word counts. A view at an instant (as_of,
    known_at) asks the index, whose filters keep what the view admits before
    anything is ranked; so does a space whose postings no longer match its
    texts, until they are rebuilt.

    Three reads start the two channels, sent together (on PostgreSQL one
    round trip instead of three, batch.py): the look for facts added since
    this process last saw the space, the entities the query names, and
    which of the best-ranked facts are live. So the facts are ranked before
    the look answers; when it found facts added since (a fact saved a moment
    ago, rare next to the reads), they are ranked again with them, and the
    answer is the one a look first would have given."""
    stats, look = termstats.item_stats_unlooked(space)
    naming = entity_ids_read(space_id=space.pk, text=query)
    facts = (
        _LiveFacts(space.pk, query, stats, limit=limit, budget=budget.match, when=when)
        if (when is None or when.unbounded) and not stats.stale
        else None
    )
    check = facts.first_check() if facts is not None else None
    added, entity_ids, live = batch.run_present(look, naming, check)
    hits: list[Hit] | None = None
    if facts is not None:
        if added:
            facts = _LiveFacts(space.pk, query, stats, limit=limit, budget=budget.match, when=when)
            live = None
        hits = facts.hits(live)
    if hits is None:
        hits = search(
            "item",
            space_id=space.pk,
            query=query,
            limit=limit,
            when=when,
            doc_frequency=termstats.doc_frequency(stats),
            idf=termstats.idf_of(stats),
            budget=budget.match,
        )
    items = Ranking(
        "bm25_items",
        WEIGHTS["bm25_items"],
        [("item", h.id) for h in hits],
        ITEM_TYPES,
        {("item", h.id): h.score for h in hits},
    )
    return items, _graph(space.pk, entity_ids or [], limit=limit, when=when)


# The postings hold every fact ever stored, live or not, and a superseded
# fact shares its successor's words: ranked facts are checked for being live
# this many times the wanted count at a time (one query by id).
LIVE_CHECK = 2


class _LiveFacts:
    """The best `limit` facts from the postings that the view shows (live
    ones; in a history view, former ones too), best first."""

    def __init__(
        self,
        space_id: int,
        query: str,
        stats: termstats.Stats,
        *,
        limit: int,
        budget: int,
        when: TimeView | None,
    ) -> None:
        words = {termstats.stem(t) for t in query_terms(query) if len(t) > 1}
        self.space_id, self.stats, self.limit, self.when = space_id, stats, limit, when
        self.weights = termstats.query_weights(words, stats)
        self.pick = _rarest(words, stats, budget)
        self.ranked = termstats.best_items(
            self.weights, stats, pick=self.pick, limit=LIVE_CHECK * limit
        )

    def first_check(self) -> batch.Read[set[int]] | None:
        """Which of the first ranked facts are live; None when the postings
        cannot answer or ranked none (hits() needs no check for those)."""
        if not self.ranked:
            return None
        return recall_rows.live_items_read(
            self.space_id, [pk for pk, _ in self.ranked], when=self.when
        )

    def hits(self, live: set[int] | None) -> list[Hit] | None:
        """The best facts, given the first check's answer (None: check them
        here), deeper in the ranking while too few are live; None when the
        postings cannot answer."""
        ranked, depth = self.ranked, LIVE_CHECK * self.limit
        checked = 0
        hits: list[Hit] = []
        while ranked is not None:
            batch_ = ranked[checked:]
            if live is None:
                live = recall_rows.live_items(
                    self.space_id, [pk for pk, _ in batch_], when=self.when
                )
            hits += [Hit(id=pk, score=score) for pk, score in batch_ if pk in live]
            if len(hits) >= self.limit or len(ranked) < depth:
                return hits[: self.limit]
            checked, depth, live = len(ranked), depth * LIVE_CHECK, None
            ranked = termstats.best_items(self.weights, self.stats, pick=self.pick, limit=depth)
        return None


def _rarest(words: set[str], stats: termstats.Stats, budget: int) -> set[str]:
    """The words that choose candidates: the rarest first while their
    matches stay within `budget` (the rarest always), as the index's search
    prunes a query (memory.search._prune). Every word still scores them."""
    df = {w: stats.df.get(w, 0) for w in words}
    if sum(df.values()) <= budget:
        return words
    kept: set[str] = set()
    total = 0
    for word in sorted(words, key=lambda w: (df[w], w)):
        if kept and total + df[word] > budget:
            continue
        kept.add(word)
        total += df[word]
    return kept


def no_summaries() -> Ranking:
    """The summary channel of a space without summaries: it applied, so it
    counts in the score's scale as bm25_summaries does, and found nothing."""
    return Ranking("bm25_summaries", WEIGHTS["bm25_summaries"], [], SUMMARY_TYPES)


def bm25_summaries(*, space_id: int, query: str, limit: int, when: TimeView | None) -> Ranking:
    hits = search("summary", space_id=space_id, query=query, limit=limit, when=when)
    return Ranking(
        "bm25_summaries",
        WEIGHTS["bm25_summaries"],
        [("summary", h.id) for h in hits],
        SUMMARY_TYPES,
        {("summary", h.id): h.score for h in hits},
    )


def documents(*, space_id: int, query: str, limit: int) -> Ranking:
    """BM25 over the space's document chunks (text, then section path).
    Documents are not claims with a validity window, so no time view
    applies. A query that matches no chunk (or a space with no documents)
    leaves this channel out of the score's scale, so recall over memory
    alone scores as it did before documents existed."""
    hits = search("chunk", space_id=space_id, query=query, limit=limit)
    keys: list[Key] = [("chunk", h.id) for h in hits]
    return Ranking(
        "docs",
        WEIGHTS["docs"],
        keys,
        DOC_TYPES if keys else frozenset(),
        {key: h.score for key, h in zip(keys, hits, strict=True)},
    )


def document_vectors(*, space_id: int, query: str, limit: int) -> Ranking:
    """Cosine similarity over the space's chunk vectors (stored on the
    chunks under the configured model): finds a section by meaning. Raises
    embeddings.EmbeddingsUnavailable for the caller to report as degraded."""
    scores = recall_rows.chunk_similarity(space_id, embeddings.embed_query(query))
    order = sorted(scores, key=lambda pk: (-scores[pk], pk))[:limit]
    keys: list[Key] = [("chunk", pk) for pk in order]
    return Ranking(
        "doc_vector",
        WEIGHTS["doc_vector"],
        keys,
        DOC_TYPES if keys else frozenset(),
        {key: scores[key[1]] for key in keys},
    )


def skills(*, space_id: int, query: str, limit: int, when: TimeView | None) -> Ranking:
    """BM25 over the space's enabled skills (name, description and body; the
    name counts twice). A space holds a handful of skills, so they are ranked
    in memory over statistics of their own. Drafts stay out until a person
    enables them. A query that matches no skill leaves this channel out of
    the score's scale."""
    found = {
        pk: termstats.tokens(f"{name} {name} {description} {body}")
        for pk, (name, description, body) in recall_rows.skill_texts(space_id, when=when).items()
    }
    stats = termstats.Stats()
    stats.add(found.items())
    weights = termstats.query_weights(
        {termstats.stem(t) for t in query_terms(query) if len(t) > 1}, stats
    )
    scores = {pk: termstats.bm25(weights, words, stats) for pk, words in found.items()}
    order = sorted((pk for pk, v in scores.items() if v > 0), key=lambda pk: (-scores[pk], pk))
    keys: list[Key] = [("skill", pk) for pk in order[:limit]]
    return Ranking(
        "skills",
        WEIGHTS["skills"],
        keys,
        SKILL_TYPES if keys else frozenset(),
        {key: scores[key[1]] for key in keys},
    )


def bm25_turns(
    *, space: Space, query: str, limit: int, when: TimeView | None, budget: Budget = FULL
) -> Ranking:
    """BM25 over turns, with two turn-level signals folded into the score:
    a turn said by someone the query names counts more (in a multi-party
    transcript "what did Anna say about X" is about Anna's turns, whose text
    rarely contains her own name), and each turn inherits a share of its
    neighbours' strength, so a reply to a matching turn (and the turn a
    matching reply answers) rises."""
    space_id = space.pk
    stats = termstats.turn_stats(space) if SPACE_BM25 else None
    weights = (
        termstats.query_weights(
            {termstats.stem(t) for t in query_terms(query) if len(t) > 1}, stats
        )
        if stats is not None
        else {}
    )
    depth = max(limit, budget.turns)
    # The turns of the space as it is now are ranked from the statistics'
    # postings; a time view (as_of, known_at) asks the index, whose filters
    # keep what was said and known by then before anything is ranked.
    ranked = (
        termstats.best_turns(weights, stats, pick=_distinctive_words(query, stats), limit=depth)
        if stats is not None and (when is None or when.unbounded)
        else None
    )
    if ranked is not None:
        hits = [Hit(id=pk, score=score) for pk, score in ranked]
    else:
        hits = search(
            "turn",
            space_id=space_id,
            query=_distinctive(query, stats) if stats is not None else query,
            limit=depth,
            when=when,
            doc_frequency=termstats.doc_frequency(stats) if stats is not None else None,
            budget=budget.match,
        )
    if not hits:
        return Ranking("bm25_turns", WEIGHTS["bm25_turns"], [], TURN_TYPES)
    # Turns of a session are stored in arrival order, so a turn's neighbours are
    # the adjacent ids of the same session; a gap simply means no neighbour.
    # Context is loaded around the strongest hits only: a weak hit's
    # neighbours inherit too little to rise, and the rows cost time.
    wanted = {h.id for h in hits} | {
        h.id + d
        for h in hits[: budget.neighbours]
        for d in range(-NEIGHBOUR_SPAN, NEIGHBOUR_SPAN + 1)
    }
    dated = _dated_turns(space_id, query, when) if DATED_SHARE > 0 else []
    asks_when = WHEN_BOOST > 0 and dates.asks_when(query)
    # The postings know what scoring needs of each turn they hold, except
    # whether it places something in time (a regex over every turn would
    # have made building them 60% slower): the rows are read for a question
    # that needs that or asks for a name (their text is looked at), and in
    # a time view.
    asks_name = NAME_BOOST > 0 and answers.asks_for_name(query)
    timed = asks_when or bool(dated)
    table = (
        stats.postings.about(wanted)
        if ranked is not None
        and stats is not None
        and stats.postings is not None
        and not stats.stale
        and not timed
        and not asks_name
        else None
    )
    texts: dict[int, recall_rows.TurnText] = {}  # read only when the postings cannot say
    if table is None:
        texts = recall_rows.turn_texts(space_id, wanted | set(dated), when=when)
        table = _table(texts, timed=timed)
    # Only the turns recall may show (the table) keep a score. The postings
    # still hold a turn deleted or quarantined since they were built (until
    # their rebuild), and one deleted may lend context meanwhile; recall
    # never shows it, because the rows it returns are loaded with the same
    # filters.
    at, held = table.find([h.id for h in hits])
    if ranked is None and stats is not None:
        scored = [
            termstats.bm25(
                weights, termstats.turn_tokens(texts[h.id].text, texts[h.id].speaker), stats
            )
            if found
            else 0.0
            for h, found in zip(hits, held.tolist(), strict=True)
        ]
    else:
        scored = [h.score for h in hits]
    base = np.zeros(len(table))
    base[at[held]] = np.array(scored)[held]
    if dated:
        best = float(base[at[held]].max()) if held.any() else 0.0
        floor = DATED_SHARE * (best or 1.0)
        at, found = table.find(dated)
        at = at[found]
        lifted = np.maximum(base[at], floor * np.where(table.timed[at], DATED_TIME, 1.0))
        base[at] = np.where(base[at] < floor, lifted, base[at])
    named = set(norm(query).split())
    naming = (
        np.isin(table.ids, list(_naming(texts, named | turn_signals.speaker_words(table, norm))))
        if asks_name
        else None
    )
    order = turn_signals.rank(
        table,
        base,
        span=NEIGHBOUR_SPAN,
        share=NEIGHBOUR_SHARE,
        norm=norm,
        named=named,
        speaker_boost=SPEAKER_BOOST,
        when_boost=WHEN_BOOST if asks_when else None,
        naming=naming,
        name_boost=NAME_BOOST,
        limit=limit,
    )
    return Ranking(
        "bm25_turns",
        WEIGHTS["bm25_turns"],
        [("turn", i) for i, _ in order],
        TURN_TYPES,
        {("turn", i): score for i, score in order},
    )


def _naming(texts: dict[int, recall_rows.TurnText], known: set[str]) -> set[int]:
    """The turns naming something that neither the question nor a speaker
    of these turns is called (`known`; answers.names_something)."""
    return {tid for tid, t in texts.items() if answers.names_something(t.text, known=known)}


def _table(texts: dict[int, recall_rows.TurnText], *, timed: bool) -> TurnTable:
    """What scoring needs of turns read from the database; whether each
    places something in time only when `timed` asks (a regex per turn)."""
    return TurnTable.of(
        (pk, t.session_id, t.speaker, timed and dates.mentions_time(t.text))
        for pk, t in texts.items()
    )


def _dated_turns(space_id: int, query: str, when: TimeView | None) -> list[int]:
    """The turns said in the stretches of time the query names (see
    DATED_SHARE), none when it names none."""
    found = dates.windows(query, now=(when or TimeView()).instant(timezone.now()))
    if not found:
        return []
    after = timedelta(days=DATED_AFTER_DAYS)
    ranges: list[tuple[datetime, datetime]] = []
    first: datetime | None = None
    for w in found:
        if w.month is None:
            ranges.append((w.start, w.end + after))
            continue
        # A month of any year: the latest first, back to the space's first turn.
        first = first or recall_rows.first_turn_time(space_id)
        for back in range(DATED_YEARS):
            start = w.start.replace(year=w.start.year - back)
            end = w.end.replace(year=w.end.year - back) + after
            if first is None or end <= first:
                break
            ranges.append((start, end))
    return recall_rows.turns_between(space_id, ranges, when=when, limit=DATED_LIMIT)


def _distinctive_words(query: str, stats: termstats.Stats) -> set[str]:
    """The stems of _distinctive's words, as the postings know them."""
    return {termstats.stem(t) for t in query_terms(_distinctive(query, stats)) if len(t) > 1}


def _distinctive(query: str, stats: termstats.Stats) -> str:
    """The query's words that are not in a large share of this space's turns,
    for finding candidates (all words still score them). In a conversation
    the participants' names and the topic everyone talks about are in half
    the turns; matching on them fills the candidate list with turns that
    share only that word, pushing out the ones that share the rare word."""
    terms = [t for t in query_terms(query) if len(t) > 1]
    if not terms or stats.docs < CANDIDATE_MIN_DOCS:
        # In a handful of turns every word is in a large share of them.
        return query
    df = {t: stats.df.get(termstats.stem(t), 0) for t in terms}
    kept = [t for t in terms if df[t] <= CANDIDATE_MAX_SHARE * stats.docs]
    if not any(df[t] for t in kept):
        # Nothing distinctive occurs here at all: search with everything.
        return query
    return " ".join(kept)


def vector(
    *,
    space_id: int,
    query: str,
    limit: int,
    when: TimeView | None,
    others: list[Ranking] | None = None,
) -> Ranking:
    """Cosine similarity over the space's embeddings, routed by
    RECALL_VECTOR_MODE (vector_routing.py) given the other channels'
    rankings. Raises embeddings.EmbeddingsUnavailable for the caller to
    record as degraded."""
    from memory.services.recall import vector_routing

    return vector_routing.ranking(
        space_id=space_id,
        query=query,
        limit=limit,
        when=when,
        others=others or [],
        weight=vector_weight(),
    )


def vectors_enabled() -> bool:
    return embeddings.enabled()


_NORM = re.compile(r"[^\w]+", re.UNICODE)


# Mostly speakers' names, a handful per space, normalised for every
# candidate turn of every query.
@functools.lru_cache(maxsize=4096)
def norm(text: str) -> str:
    return _NORM.sub(" ", text.lower()).strip()


def entities_in_query(*, space: Space, query: str) -> list[int]:
    return entity_ids_in_text(space_id=space.pk, text=query)


def graph(*, space: Space, query: str, limit: int, when: TimeView | None) -> Ranking:
    """The graph channel alone (fact_channels makes it with the facts')."""
    return _graph(space.pk, entities_in_query(space=space, query=query), limit=limit, when=when)


def _graph(space_id: int, entity_ids: list[int], *, limit: int, when: TimeView | None) -> Ranking:
    """Entities the query names -> facts about them (edges and subject), then
    the facts of their 1-hop neighbours, ranked in that order."""
    view = when or TimeView()
    keys: list[Key] = []
    if entity_ids:
        seen: set[int] = set()

        def add(item_ids: list[int]) -> None:
            for iid in item_ids:
                if iid not in seen and len(keys) < limit:
                    seen.add(iid)
                    keys.append(("item", iid))

        names = list(Entity.objects.filter(pk__in=entity_ids).values_list("name", flat=True))
        edges = Relation.objects.filter(space_id=space_id).filter(view.edge_q())
        direct = edges.filter(Q(src_id__in=entity_ids) | Q(dst_id__in=entity_ids))
        add(
            list(
                direct.filter(item__isnull=False)
                .order_by("-created_at", "id")
                .values_list("item_id", flat=True)[:limit]
            )
        )
        add(
            list(
                MemoryItem.objects.filter(space_id=space_id, subject__in=names)
                .filter(view.item_q())
                .order_by("-importance", "-last_seen", "id")
                .values_list("id", flat=True)[:limit]
            )
        )
        neighbours: set[int] = set()
        for src, dst in direct.values_list("src_id", "dst_id")[: limit * 4]:
            neighbours.update((src, dst))
        neighbours -= set(entity_ids)
        if neighbours and len(keys) < limit:
            add(
                list(
                    edges.filter(Q(src_id__in=neighbours) | Q(dst_id__in=neighbours))
                    .filter(item__isnull=False)
                    .order_by("-created_at", "id")
                    .values_list("item_id", flat=True)[:limit]
                )
            )
    # A query that names no entity leaves the graph out of the score's scale.
    return Ranking("graph", WEIGHTS["graph"], keys, ITEM_TYPES if entity_ids else frozenset())
