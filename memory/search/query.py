"""Turning a user's query string into plain search terms.

Only word characters survive, so nothing the user types can reach a full-text
query language as an operator. Stopwords are dropped unless nothing else is
left, so "who am I" still searches for something."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_TERMS = 32

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves did does doing i'm it's let's tell know""".split()
)


def query_terms(query: str, *, keep_stopwords: bool = False) -> list[str]:
    words = [w.lower() for w in _WORD.findall(query or "") if w.strip("_")]
    if not words:
        return []
    content = words if keep_stopwords else [w for w in words if w not in STOPWORDS]
    chosen = content or words
    seen: dict[str, None] = {}
    for word in chosen:
        seen.setdefault(word.strip("_"), None)
    return [w for w in seen if w][:MAX_TERMS]
