"""The relevance gate of GET /context: what may enter the prompt.

Recall's scores rank; they do not say a result is about the query (with
nothing better stored, the best of poor matches still scores high). So a
result enters the recalled block only if it shares a distinctive word with
the query: a content word (not a stop word) that is not in a large share of
the space's turns, where a conversation's participants and its running topic
sit. A turn that fails the gate but is the neighbour of one that passes (the
reply to a matching question, the question a matching reply answers) is
folded into that turn's line instead of standing as a result of its own."""

from __future__ import annotations

import re
from typing import Any

from memory.models import Space
from memory.search.query import STOPWORDS
from memory.services.recall import termstats

# Words in more than this share of the space's turns are not distinctive
# (only once the space has enough turns for a share to mean anything).
COMMON_SHARE = 0.3
MIN_DOCS = 50
# How far apart (turn ids within one session) a folded neighbour may be.
NEIGHBOUR_SPAN = 2
_WORD = re.compile(r"\w+", re.UNICODE)


def content_words(text: str) -> set[str]:
    """The words of a text recall matches on: stemmed, stop words left out."""
    return {
        termstats.stem(w.lower())
        for w in _WORD.findall(text or "")
        if len(w) > 1 and w.lower() not in STOPWORDS
    }


def distinctive_words(space: Space, query: str) -> set[str]:
    words = content_words(query)
    if not words:
        return set()
    stats = termstats.turn_stats(space)
    if stats.docs < MIN_DOCS:
        return words
    rare = {w for w in words if stats.df.get(w, 0) <= COMMON_SHARE * stats.docs}
    # When every word is common, the query is about the common topic itself.
    return rare or words


def gate(*, space: Space, query: str, results: list[Any]) -> tuple[list[Any], dict[str, list[Any]]]:
    """(results that pass, {passing turn's id: neighbouring turns folded into it})."""
    wanted = distinctive_words(space, query)
    if not wanted:
        return [], {}
    passed: list[Any] = []
    failed: list[Any] = []
    for r in results:
        (passed if wanted & set(termstats.tokens(r.text)) else failed).append(r)
    folded: dict[str, list[Any]] = {}
    hits = [r for r in passed if r.type == "turn"]
    for r in failed:
        if r.type != "turn":
            continue
        host = next((h for h in hits if _neighbours(h, r)), None)
        if host is not None:
            folded.setdefault(host.id, []).append(r)
    for extra in folded.values():
        extra.sort(key=lambda t: int(t.id))
    return passed, folded


def _neighbours(a: Any, b: Any) -> bool:
    return (
        a.source.session_id == b.source.session_id
        and 0 < abs(int(a.id) - int(b.id)) <= NEIGHBOUR_SPAN
    )
