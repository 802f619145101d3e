"""The turn channel's signals beyond a turn's own words (channels.bm25_turns):
a share of its neighbours' strength, and the lifts for a speaker the query
names, for a turn placing something in time, and for a turn naming
something. Worked out for every candidate at once over arrays: as a loop
over the some 280 candidates of a query (each with four neighbours to look
up) it was a tenth of a web worker's time under recall load.

Each step does the arithmetic the loop did, in the same order, so the
scores are the same floats."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class TurnTable:
    """What the turn channel weighs candidate turns by besides their words:
    one entry per turn, ascending by id."""

    ids: np.ndarray  # int64, ascending
    sessions: np.ndarray  # int64
    speakers: np.ndarray  # each turn's speaker, as a place in `names`
    names: Sequence[str]  # speakers' names as recorded ("" for none)
    # Whether the turn places something in time (dates.mentions_time); the
    # postings do not know, so theirs say False, and a question that needs
    # it reads rows.
    timed: np.ndarray  # bool

    @classmethod
    def of(cls, rows: Iterable[tuple[int, int, str, bool]]) -> TurnTable:
        """From (turn id, session id, speaker, timed), in any order."""
        ordered = sorted(rows)
        place: dict[str, int] = {}
        return cls(
            ids=np.array([r[0] for r in ordered], dtype=np.int64),
            sessions=np.array([r[1] for r in ordered], dtype=np.int64),
            speakers=np.array([place.setdefault(r[2], len(place)) for r in ordered], dtype=np.intp),
            names=list(place),
            timed=np.array([r[3] for r in ordered], dtype=bool),
        )

    def __len__(self) -> int:
        return int(self.ids.size)

    def find(self, ids: Collection[int]) -> tuple[np.ndarray, np.ndarray]:
        """Where each of `ids` is held (positions, and whether it is)."""
        wanted = np.fromiter(ids, dtype=np.int64, count=len(ids))
        if not self.ids.size:
            return np.zeros(wanted.size, dtype=np.intp), np.zeros(wanted.size, dtype=bool)
        at = np.minimum(np.searchsorted(self.ids, wanted), self.ids.size - 1)
        return at, self.ids[at] == wanted


def rank(
    table: TurnTable,
    base: np.ndarray,
    *,
    span: int,
    share: float,
    norm: Callable[[str], str],
    named: set[str],
    speaker_boost: float,
    when_boost: float | None,
    naming: np.ndarray | None,
    name_boost: float,
    limit: int,
) -> list[tuple[int, float]]:
    """The best `limit` (turn id, score), best first and ties to the lower
    id, of the turns scoring above 0. `base`: each turn's own BM25 (0 for
    none). A turn inherits `share` of its strongest neighbour's base over
    the distance; past the adjacent turn only from a turn of the same
    recorded speaker (the same person still on the topic), and never across
    sessions. Then: times 1 + `speaker_boost` when its speaker's name holds a
    word of `named`, 1 + `when_boost` when it is timed (None: the question
    does not ask when), 1 + `name_boost` where `naming` says."""
    n = len(table)
    if not n:
        return []
    speaker, speaker_named = _speakers(table, norm, named)
    near = np.zeros(n)
    for d in range(1, span + 1):
        for other in (table.ids - d, table.ids + d):
            at = np.minimum(np.searchsorted(table.ids, other), n - 1)
            lends = (table.ids[at] == other) & (table.sessions[at] == table.sessions)
            if d > 1:
                lends &= (speaker >= 0) & (speaker[at] == speaker)
            near = np.maximum(near, np.where(lends, base[at] / d, 0.0))
    score = base + share * near
    score = np.where(speaker_named, score * (1 + speaker_boost), score)
    if when_boost is not None:
        score = np.where(table.timed, score * (1 + when_boost), score)
    if naming is not None:
        score = np.where(naming, score * (1 + name_boost), score)
    kept = np.flatnonzero(score > 0)
    ids, score = table.ids[kept], score[kept]
    order = np.lexsort((ids, -score))[:limit]
    return list(zip(ids[order].tolist(), score[order].tolist(), strict=True))


def speaker_words(table: TurnTable, norm: Callable[[str], str]) -> set[str]:
    """The words of the candidates' speakers' names, normalised."""
    return {
        w for place in np.unique(table.speakers).tolist() for w in norm(table.names[place]).split()
    }


def _speakers(
    table: TurnTable, norm: Callable[[str], str], named: set[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Each turn's speaker as one number per normalised name (-1 for none),
    and whether that name holds a word of `named`; worked out once per
    speaker among the candidates, not once per turn."""
    places = np.unique(table.speakers)
    same: dict[str, int] = {}
    number = np.empty(places.size, dtype=np.intp)
    lifted = np.empty(places.size, dtype=bool)
    for i, place in enumerate(places.tolist()):
        name = norm(table.names[place])
        number[i] = same.setdefault(name, len(same)) if name else -1
        lifted[i] = bool(name) and bool(set(name.split()) & named)
    at = np.searchsorted(places, table.speakers)
    return number[at], lifted[at]
