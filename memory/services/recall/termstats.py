"""Per-space term statistics for ranking turns and pruning queries.

The full-text index is shared by every space, so the BM25 it computes takes
its document frequencies and average length from all spaces together: a word
that is rare in one space but common in the others is under-weighted, and one
tenant's data moves another tenant's ranking. Recall therefore ranks turns
with BM25 over statistics of the asking space only (from their postings,
postings.py, or by re-scoring the index's candidates in a time view), kept
here in memory per process: built from the space's turns on first use, then
topped up with turns added since (by id), and rebuilt from scratch on a
helper thread after REBUILD_SECONDS so deletions are forgotten too. Both
database backends get the same ranking this way, whatever their own
full-text scoring does.

Words are normalised by Snowball's English stemmer (stem below), applied the
same way to queries and turns, so "painting", "painted" and "paints" count as
one term. A turn's speaker (metadata "speaker", "name" or "author") is one more
word of the turn: a question that names someone is more often about what that
person said.

The same counts and postings are kept for facts too (item_stats): the fact
channel ranks the space's facts as they are now from them (best_items), and
in a time view they tell the search facade how common each query word is
without a count query per word (doc_frequency).
"""

from __future__ import annotations

import functools
import math
import re
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import snowballstemmer
from django.core.cache import cache
from django.db import connection

from engram_site.db import batch
from engram_site.threads import DbThreadPool
from memory.models import Space
from memory.services.recall import rows as recall_rows
from memory.services.recall.postings import Postings

# BM25 parameters: turns are short and of similar length, so length
# normalisation matters less than usual (measured on LoCoMo 1-5: k1 0.9, b 0.4
# beat the textbook 1.2/0.75 by 0.01 R@5).
K1 = 0.9
B = 0.4

REBUILD_SECONDS = 600.0
# New turns are looked for at most this often per space: a statistic a second
# old ranks the same, and the look costs a query.
REFRESH_SECONDS = 1.0
_CACHE_SIZE = 64

_WORD = re.compile(r"\w+", re.UNICODE)
# Snowball's English stemmer (the C one when PyStemmer is installed): it
# meets more forms of a word than a suffix stripper does ("peaceful" and
# "peace", "activities" and "active"). LoCoMo R@10 against the light
# stripper it replaced: 1-5 0.769 -> 0.777, 6-10 (not tuned on) 0.752 ->
# 0.759, every category up. A stemmer object is not safe to share between
# threads (PyStemmer's docs), and recall stems on several: one per thread.
_stemmers = threading.local()


# A space's vocabulary is small next to its text, so stemming each distinct
# word once per process makes tokenising a turn a few dictionary lookups.
@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A word's English stem, so inflected and derived forms of one word
    meet ("painting", "painted", "paints"). Words of three letters or fewer
    and words holding digits stay as they are. It only has to map a query
    word and a stored word the same way: nothing stores a stem."""
    if len(word) <= 3 or not word.isalpha():
        return word
    english = getattr(_stemmers, "english", None)
    if english is None:
        english = _stemmers.english = snowballstemmer.stemmer("english")
    return str(english.stemWord(word))


def tokens(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text.lower()) if len(w) > 1]


def turn_tokens(text: str, speaker: str) -> list[str]:
    words = tokens(text)
    if SPEAKER_WORD and speaker:
        words += tokens(speaker)
    return words


# A turn's session id, speaker and whether it was screened clean (Postings.add).
About = tuple[int, str, bool]
UNKNOWN: About = (0, "", True)


@dataclass(slots=True)
class Stats:
    docs: int = 0
    length: int = 0
    df: Counter[str] = field(default_factory=Counter)
    last_id: int = 0
    # the space row's creation time: a space id can come back for another
    # space (SQLite reuses ids after a rollback), which must not inherit these
    space_created: Any = None
    built: float = 0.0
    refreshed: float = 0.0
    rebuilding: bool = False
    # Turn statistics also keep where each word occurs (postings.py).
    postings: Postings | None = None
    # The space's forget mark (forgotten()) when these were built, and
    # whether a newer one has been seen since: then the postings may hold
    # forgotten turns, and the turn channel reads its candidates' rows from
    # the database until the rebuild lands.
    forgets: Any = None
    stale: bool = False

    def add(self, rows: Iterable[tuple[int, list[str]]]) -> None:
        self.add_said((pk, words, [], UNKNOWN) for pk, words in rows)

    def add_said(self, rows: Iterable[tuple[int, list[str], list[str], About]]) -> None:
        """Rows with the words of their speaker apart: those count as words
        of the row, but the postings keep them aside (see Postings.rank).
        Each row's last part is what the postings keep of a turn besides
        its words (session id, speaker, screened clean); facts' statistics
        keep no postings and ignore it."""
        page: list[tuple[int, Counter[str], Counter[str], int, About]] = []
        for pk, words, said, about in rows:
            counts, by = Counter(words), Counter(said)
            size = len(words) + len(said)
            self.docs += 1
            self.length += size
            self.df.update(counts.keys() | by.keys())
            self.last_id = max(self.last_id, pk)
            if self.postings is not None:
                page.append((pk, counts, by, size, about))
                if len(page) >= 2000:  # a page at a time, not the space's counts at once
                    self.postings.add(page)
                    page = []
        if self.postings is not None and page:
            self.postings.add(page)

    def idf(self, term: str) -> float:
        n = self.df.get(term, 0)
        return math.log(1 + (self.docs - n + 0.5) / (n + 0.5))

    @property
    def avg_length(self) -> float:
        return self.length / self.docs if self.docs else 1.0


_cache: OrderedDict[tuple[str, str, int], Stats] = OrderedDict()
_lock = threading.Lock()
_rebuilds = DbThreadPool("engram-termstats", 1)


def _new_turns(space_id: int, after: int) -> Iterable[tuple[int, list[str], list[str], About]]:
    # The speaker's words apart (turn_tokens joins them for scoring).
    return (
        (
            pk,
            tokens(text),
            tokens(speaker) if SPEAKER_WORD and speaker else [],
            (session_id, speaker, clean),
        )
        for pk, text, speaker, session_id, clean in recall_rows.turn_texts_after(space_id, after)
    )


def _new_items(space_id: int, after: int) -> Iterable[tuple[int, list[str], list[str], About]]:
    # Every stored fact, live or not: the fact channel keeps the live ones
    # among its candidates (rows.live_items), since a fact's state changes
    # after it is added and these only grow.
    return (_item_words(*row) for row in recall_rows.item_texts_after(space_id, after))


def _item_words(
    pk: int, text: str, subject: str, obj: str
) -> tuple[int, list[str], list[str], About]:
    return pk, tokens(f"{text} {subject} {obj}"), [], UNKNOWN


_LOADERS = {"turn": _new_turns, "item": _new_items}


def turn_stats(space: Space) -> Stats:
    """The space's turn statistics, brought up to date with turns added since
    the last look (one indexed query for rows past the last id seen)."""
    return _stats(space, "turn")


def item_stats(space: Space, *, look: bool = True) -> Stats:
    """Word counts and postings over the space's facts, kept like
    turn_stats but looked up to date on every use: a fact saved through the
    API is asked about at once ("remember this", then "what did I say"),
    and the look is one indexed query that finds nothing. With `look`
    False, at most once a second as for turns: for a caller that only
    weighs words, after the fact channel has looked."""
    return _stats(space, "item", every_look=look)


def item_stats_unlooked(space: Space) -> tuple[Stats, batch.Read[bool] | None]:
    """item_stats before their look, and the look, for the caller to send
    with its own reads (one round trip on PostgreSQL); its answer is
    whether it found facts added since, which the statistics then hold.
    None when they need no look (they were just built)."""
    stats, after = _cached(space, "item", every_look=True)
    if after is None:
        return stats, None
    look = recall_rows.item_texts_read(space.pk, after).then(
        lambda texts: _catch_up(stats, [_item_words(*row) for row in texts])
    )
    return stats, look


def _stats(space: Space, target: str, *, every_look: bool = False) -> Stats:
    stats, after = _cached(space, target, every_look=every_look)
    if after is not None:
        # The look runs outside the lock: on PostgreSQL it waits a round
        # trip, which other threads' recalls need not wait for.
        _catch_up(stats, list(_LOADERS[target](space.pk, after)))
    return stats


def _catch_up(stats: Stats, added: list[tuple[int, list[str], list[str], About]]) -> bool:
    """Add the rows a look found past the last id seen; whether it found
    any. Rows another thread added meanwhile are skipped."""
    if added:
        with _lock:
            stats.add_said(row for row in added if row[0] > stats.last_id)
    return bool(added)


def _cached(space: Space, target: str, *, every_look: bool) -> tuple[Stats, int | None]:
    """The statistics this process keeps (built here on first use), and
    the last id they saw when a look for rows added since is due, else
    None."""
    space_id = space.pk
    key = (connection.alias + str(connection.settings_dict.get("NAME")), target, space_id)
    created = space.created_at
    now = time.monotonic()
    with _lock:
        stats = _cache.get(key)
        if stats is None or stats.space_created != created:
            # The first look in this process builds them here, once.
            stats = _empty(target, built=now, space_created=created)
            _cache[key] = stats
            if len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
        else:
            _cache.move_to_end(key)
            if now - stats.built > REBUILD_SECONDS:
                # Rebuilt from scratch now and then, so deletions are
                # forgotten; on a helper, so that no recall waits the
                # 0.65 s it takes at 100k rows. These serve meanwhile.
                _start_rebuild(key, space_id, target, stats)
            if now - stats.refreshed < REFRESH_SECONDS and not every_look:
                return stats, None
        if now - stats.refreshed >= REFRESH_SECONDS or stats.forgets is None:
            stats.refreshed = now
            if stats.postings is not None and not stats.stale:
                if stats.forgets is None:
                    stats.forgets = _forget_mark(space_id)  # read before the first rows
                elif _forget_mark(space_id) != stats.forgets:
                    stats.stale = True
                    _start_rebuild(key, space_id, target, stats)
        if not stats.docs:
            stats.add_said(_LOADERS[target](space_id, stats.last_id))
            return stats, None
        return stats, stats.last_id


def drop_space(space_id: int) -> None:
    """Forget this process's statistics of one space."""
    with _lock:
        for key in [k for k in _cache if k[2] == space_id]:
            del _cache[key]


def forgotten(space_id: int) -> None:
    """After a hard forget: their words and postings are the forgotten
    text's. This process drops the space's statistics; every other process
    sees the space's new forget mark within REFRESH_SECONDS and stops
    trusting its postings until they are rebuilt."""
    drop_space(space_id)
    rewritten(space_id)


def rewritten(space_id: int) -> None:
    """After a stored text changed in place (a merge's denser fact): the
    postings hold its old words. Every process, this one too, sees the new
    mark within REFRESH_SECONDS and searches the index instead until its
    postings are rebuilt."""
    try:
        cache.set(_forget_key(space_id), time.time_ns(), timeout=None)
    except Exception:  # a cache away leaves the others to their rebuild
        pass


def _forget_key(space_id: int) -> str:
    return f"recall:forgot:{space_id}"


def _forget_mark(space_id: int) -> Any:
    try:
        return cache.get(_forget_key(space_id), 0)
    except Exception:  # no mark can be read: as if none changed
        return "unreadable"


def _empty(target: str, *, built: float, space_created: Any) -> Stats:
    return Stats(built=built, space_created=space_created, postings=Postings())


def _start_rebuild(key: tuple[str, str, int], space_id: int, target: str, stats: Stats) -> None:
    """Rebuild `stats` on the helper, unless that is already under way (the
    caller holds _lock)."""
    if not stats.rebuilding:
        stats.rebuilding = True
        _rebuilds.submit(_rebuild, key, space_id, target, stats)


def _rebuild(key: tuple[str, str, int], space_id: int, target: str, old: Stats) -> None:
    fresh = _empty(target, built=time.monotonic(), space_created=old.space_created)
    if fresh.postings is not None:
        fresh.forgets = _forget_mark(space_id)
    try:
        fresh.add_said(_LOADERS[target](space_id, 0))
    finally:
        old.rebuilding = False
    fresh.refreshed = time.monotonic()
    with _lock:
        if _cache.get(key) is old:
            _cache[key] = fresh


def doc_frequency(stats: Stats) -> Callable[[str], int]:
    """A query word's count in `stats`, for search(doc_frequency=...)."""
    return lambda word: stats.df.get(stem(word), 0)


def idf_of(stats: Stats) -> Callable[[str], float]:
    """A query word's IDF in `stats`, for search(idf=...)."""
    return lambda word: stats.idf(stem(word))


# A turn's score is multiplied by the share of the query's IDF weight it
# matches, raised to COVERAGE: BM25 alone lets one rare word outrank a turn
# that matches most of the question (LoCoMo 1-5: +0.013 R@5, +0.009 R@10).
COVERAGE = 1.0
# The speaker's name counts as a word of the turn (off: -0.017 R@5).
SPEAKER_WORD = True


def query_weights(words: Iterable[str], stats: Stats) -> dict[str, float]:
    """Each (stemmed) query word's IDF in the space, computed once per query.
    In sorted order: scores are sums over these words, and summed in a set's
    order (which changes with the process's hash seed) near-equal scores
    came out in a different order after a restart."""
    return {w: stats.idf(w) for w in sorted(words)}


def bm25(query: dict[str, float], doc_words: list[str], stats: Stats) -> float:
    """BM25 of one turn for a query given as query_weights()."""
    if not doc_words:
        return 0.0
    shared = [w for w in doc_words if w in query]
    if not shared:
        return 0.0
    tf = Counter(shared)
    norm = K1 * (1 - B + B * len(doc_words) / stats.avg_length)
    score = sum(query[w] * n * (K1 + 1) / (n + norm) for w, n in tf.items())
    if COVERAGE:
        total = sum(query.values())
        score *= (sum(query[w] for w in tf) / total) ** COVERAGE if total else 1.0
    return score


def best_turns(
    weights: dict[str, float], stats: Stats, *, pick: Iterable[str], limit: int
) -> list[tuple[int, float]] | None:
    """The best `limit` (turn id, bm25) of the space among the turns holding
    a word of `pick`, scored over every word of `weights` (query_weights);
    None when these statistics keep no postings."""
    return _best(weights, stats, pick=pick, limit=limit, k1=K1, b=B, coverage=COVERAGE)


# Facts are ranked as the full-text index ranked them before they had
# postings: its BM25 parameters, no coverage factor (recall weighs a fact's
# share of the query itself, when it loads the rows).
ITEM_K1 = 1.2
ITEM_B = 0.75


def best_items(
    weights: dict[str, float], stats: Stats, *, pick: Iterable[str], limit: int
) -> list[tuple[int, float]] | None:
    """The best `limit` (fact id, bm25) of the space among the facts holding
    a word of `pick`, live or not; None when these statistics keep no
    postings or no longer match the stored texts (stale)."""
    if stats.stale:
        return None
    return _best(weights, stats, pick=pick, limit=limit, k1=ITEM_K1, b=ITEM_B, coverage=0.0)


def _best(
    weights: dict[str, float],
    stats: Stats,
    *,
    pick: Iterable[str],
    limit: int,
    k1: float,
    b: float,
    coverage: float,
) -> list[tuple[int, float]] | None:
    if stats.postings is None:
        return None
    return stats.postings.rank(
        weights,
        pick=set(pick),
        limit=limit,
        k1=k1,
        b=b,
        avg_length=stats.avg_length,
        coverage=coverage,
    )
