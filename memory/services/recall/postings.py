"""Where each word of a space's turns (and, apart, its facts) occurs, kept
beside its term statistics (termstats.py), so the turn and fact channels
rank every match by BM25 over the space's own statistics in memory instead
of asking the full-text index.

The index answers a query by walking each word's matches and computing its
own BM25 for every one (about 4 µs a row in SQLite, more in PostgreSQL); at
100k turns that was half of a recall. Here a word's matches are one flat
array (each turn's position and the word's count in it), beside one array of
the turns' lengths, so scoring a query is a few vector operations over them,
and no scan cap is needed: every match is ranked, not only the newest few
thousand.

Positions are dense (0, 1, 2 ... in the order turns were added), so a query
scores into one array of the space's size; `ids` maps them back to row ids.
The arrays only grow: a deleted turn stays until the statistics are rebuilt
(termstats.REBUILD_SECONDS) and is dropped meanwhile where recall loads the
rows it shows, with whatever else it may not show (screening, a time view).

Beside the words, each turn's session and speaker, and whether it was
screened clean (`about`): what the turn channel weighs a candidate and its
neighbours by, which it read from the database for every query before.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import numpy as np

from memory.services.recall.turn_signals import TurnTable

# Each occurrence is one 64-bit number: the turn's position (high 32 bits)
# and the word's count in it. One append per word of a turn keeps building
# 100k turns cheap.
_CAP = 0xFFFF


class Postings:
    __slots__ = (
        "ids",
        "lengths",
        "at",
        "said",
        "sessions",
        "speakers",
        "shown",
        "names",
        "_name_at",
        "_ordered",
        "_lock",
        "_candidate",
        "_slot",
        "_dense",
    )

    def __init__(self) -> None:
        # Ranking reads the arrays through numpy views, and an array with a
        # view cannot grow: turns added on another thread wait meanwhile.
        self._lock = threading.Lock()
        self.ids = array("q")  # position -> row id
        self.lengths = array("H")  # position -> the turn's length in words
        self.at: dict[str, array] = {}  # word -> its occurrences in the text
        # word -> the turns whose speaker's name holds it: scored as words of
        # the turn, but never choosing candidates (the full-text index, which
        # holds the text alone, never found a turn by its speaker either).
        self.said: dict[str, array] = {}
        self.sessions = array("q")  # position -> session id
        self.speakers = array("I")  # position -> the speaker's place in `names`
        self.shown = bytearray()  # position -> 1 if screened clean when added
        self.names: list[str] = [""]
        self._name_at: dict[str, int] = {"": 0}
        self._ordered = True  # ids ascending, as termstats adds them
        # Scratch for rank(), one entry a position, reused under the lock:
        # whether a turn is a candidate (all False between queries, however
        # a query ends) and its place among them. Allocating them a query cost a tenth of ranking.
        self._candidate = np.zeros(0, dtype=bool)
        self._slot = np.zeros(0, dtype=np.int64)
        # (speaker's name?, word) -> [its count by position, occurrences
        # written there]: for the commonest words only (_dense_counts).
        self._dense: dict[tuple[bool, str], list[Any]] = {}

    def add(
        self,
        rows: Iterable[
            tuple[int, Mapping[str, int], Mapping[str, int], int, tuple[int, str, bool]]
        ],
    ) -> None:
        """Append turns given as (row id, count of each word of the text,
        of the speaker's name, length, (session id, speaker, screened
        clean))."""
        with self._lock:
            for pk, counts, said, size, (session, speaker, shown) in rows:
                position = len(self.ids) << 32
                if self.ids and pk <= self.ids[-1]:
                    self._ordered = False
                self.ids.append(pk)
                self.lengths.append(min(size, _CAP))
                self.sessions.append(session)
                name = self._name_at.get(speaker)
                if name is None:
                    name = self._name_at[speaker] = len(self.names)
                    self.names.append(speaker)
                self.speakers.append(name)
                self.shown.append(1 if shown else 0)
                # A word's count is at most the turn's length: only so long a
                # turn needs its counts capped.
                capped = size > _CAP
                _append(self.at, position, counts, capped)
                if said:
                    _append(self.said, position, said, capped)

    def about(self, ids: Collection[int]) -> TurnTable | None:
        """The session and speaker of the turns among `ids` held here that
        were screened clean when added; None when the ids were not added in
        order (then the caller asks the database)."""
        with self._lock:
            if not self._ordered:
                return None
            wanted = np.unique(np.fromiter(ids, dtype=np.int64, count=len(ids)))
            held = np.frombuffer(self.ids, dtype=np.int64)
            if wanted.size and held.size:
                at = np.minimum(np.searchsorted(held, wanted), held.size - 1)
                at = at[held[at] == wanted]
                at = at[np.frombuffer(self.shown, dtype=np.uint8)[at] == 1]
            else:
                at = np.zeros(0, dtype=np.intp)
            # Copies (fancy indexing), so no view outlives the lock (see __init__).
            table = TurnTable(
                ids=held[at],
                sessions=np.frombuffer(self.sessions, dtype=np.int64)[at],
                speakers=np.frombuffer(self.speakers, dtype=f"u{self.speakers.itemsize}")[
                    at
                ].astype(np.intp),
                # Only grows, so the places the table holds stay valid.
                names=self.names,
                timed=np.zeros(at.size, dtype=bool),
            )
            del held
            return table

    def _scratch(self, docs: int) -> tuple[np.ndarray, np.ndarray]:
        if self._candidate.size < docs:
            size = max(docs, self._candidate.size * 5 // 4)
            self._candidate = np.zeros(size, dtype=bool)
            self._slot = np.zeros(size, dtype=np.int64)
        return self._candidate, self._slot

    def _dense_counts(
        self, key: tuple[bool, str], packed: np.ndarray, docs: int
    ) -> np.ndarray | None:
        """A common word's count in every turn, by position (0 where absent),
        brought up to date with its occurrences; None once _DENSE_WORDS
        words a table are kept (the others are looked up as before)."""
        entry = self._dense.get(key)
        if entry is None:
            if sum(1 for said, _ in self._dense if said == key[0]) >= _DENSE_WORDS:
                return None
            entry = self._dense[key] = [np.zeros(0, dtype=np.uint16), 0]
        counts, written = entry
        if counts.size < docs:
            grown = np.zeros(max(docs, counts.size * 5 // 4), dtype=np.uint16)
            grown[: counts.size] = counts
            counts = entry[0] = grown
        if written < packed.size:
            # The arrays only grow: what was added since is all there is to write.
            new = packed[written:]
            counts[(new >> 32).astype(np.intp)] = new & _CAP
            entry[1] = packed.size
        return counts

    def rank(
        self,
        weights: dict[str, float],
        *,
        pick: Collection[str],
        limit: int,
        k1: float,
        b: float,
        avg_length: float,
        coverage: float,
    ) -> list[tuple[int, float]]:
        """The best `limit` (row id, score) among the turns holding a word of
        `pick`, each scored by BM25 over every word of `weights` (word -> IDF)
        times the share of the query's weight it holds, raised to `coverage`:
        termstats.bm25 exactly, for every candidate at once."""
        # Under the lock: see __init__.
        with self._lock:
            docs = len(self.ids)
            picked = [w for w in pick if w in self.at]
            if not docs or not picked or limit <= 0:
                return []
            candidate, slot = self._scratch(docs)
            try:
                for word in picked:
                    candidate[np.frombuffer(self.at[word], dtype=np.uint64) >> 32] = True
                # The candidates, numbered 0..n-1 in position order: each word's
                # count in them is summed with one bincount over its occurrences.
                positions = np.flatnonzero(candidate)
                slot[positions] = np.arange(positions.size)
                length = np.frombuffer(self.lengths, dtype=np.uint16)[positions].astype(np.float64)
                norm = k1 * (1 - b + b * length / avg_length)
                values = np.zeros(positions.size)
                held = np.zeros(positions.size)
                keys = positions.astype(np.uint64) << 32
                for word, idf in weights.items():
                    tf: np.ndarray | None = None
                    for table in (self.at, self.said):
                        if word not in table:
                            continue
                        packed = np.frombuffer(table[word], dtype=np.uint64)
                        dense = (
                            self._dense_counts((table is self.said, word), packed, docs)
                            if packed.size > _DENSE_SHARE * docs
                            else None
                        )
                        counted: np.ndarray
                        if dense is not None:
                            counted = dense[positions].astype(np.float64)
                        elif packed.size > _LOOKUP * positions.size:
                            # A common word: each candidate is looked up in its
                            # occurrences (sorted by position) instead of every
                            # occurrence being checked against the candidates.
                            counted = _counts_at(packed, keys)
                        else:
                            at = packed >> 32
                            if table is not self.at or word not in picked:
                                # Only where a candidate holds it.
                                keep = candidate[at]
                                packed, at = packed[keep], at[keep]
                            counted = np.bincount(
                                slot[at], weights=packed & _CAP, minlength=positions.size
                            )
                        tf = counted if tf is None else tf + counted
                        # No view may outlive the lock, or a turn added next
                        # would find its array pinned (BufferError).
                        del packed
                    if tf is None:
                        continue
                    # idf * tf * (k1 + 1) / (tf + norm), in that order (so the
                    # same floats as termstats.bm25), without a temporary a step.
                    score = tf * idf
                    score *= k1 + 1
                    score /= tf + norm
                    values += score
                    held += idf * (tf > 0)
                total = sum(weights.values())
                if coverage and total > 0:
                    values = values * (held / total) ** coverage
                found = np.flatnonzero(values > 0)
                if not found.size:
                    return []
                values = values[found]
                if found.size > limit:
                    # Everything scoring at least the limit-th best, ties included,
                    # so the cut below breaks ties by id and not by position.
                    cut = np.partition(values, found.size - limit)[found.size - limit]
                    best = values >= cut
                    found, values = found[best], values[best]
                ids = np.frombuffer(self.ids, dtype=np.int64)[positions[found]]
                # Best first; ties to the lower id, as the index's ranking did.
                order = np.lexsort((ids, -values))[:limit]
                return list(zip(ids[order].tolist(), values[order].tolist(), strict=True))
            finally:
                candidate[:docs] = False  # all clear again for the next query


# A word in more than this share of the turns keeps its count by position
# (_dense_counts): a query reads it for its candidates with one gather, where
# looking each candidate up in its occurrences was a fifth of ranking. For at
# most _DENSE_WORDS words a table (2 bytes a turn each: 12.8 MB at 100k turns
# at most; 36 words, 7 MB, on the bench_recall space).
_DENSE_SHARE = 1 / 32
_DENSE_WORDS = 64

# A word with this many times more occurrences than a query has candidates
# is looked up candidate by candidate (log of its occurrences each) rather
# than scanned. At 100k turns a query's common words have tens of thousands
# of occurrences against a few thousand candidates: the scans were 60% of
# ranking.
_LOOKUP = 4


def _counts_at(packed: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The word's count in each candidate (`keys`: their positions, shifted
    as in `packed`), 0 where it does not occur."""
    found = np.searchsorted(packed, keys)
    inside = found < packed.size
    hit = np.zeros(keys.size, dtype=bool)
    hit[inside] = (packed[found[inside]] >> 32) == (keys[inside] >> 32)
    counts = np.zeros(keys.size)
    counts[hit] = packed[found[hit]] & _CAP
    return counts


def _append(
    table: dict[str, array], position: int, counts: Mapping[str, int], capped: bool
) -> None:
    get = table.get
    for word, n in counts.items():
        found = get(word)
        if found is None:
            found = table[word] = array("Q")
        found.append(position | (min(n, _CAP) if capped else n))
