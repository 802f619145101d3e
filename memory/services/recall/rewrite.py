"""Optional multi-query rewrite: an LLM turns the query into up to three
complementary keyword queries (synonyms, the words an answer would use, names
spelled out), each searched by the keyword channels and fused with the
original query's channels at half their weight.

Off by default (ENGRAM_RECALL_REWRITE): it puts an LLM call in front of a read
path that otherwise answers in milliseconds. When on, POST /recall and
/memory/search use it (a request can also ask with "rewrite": true), never
/context. The call waits at most ENGRAM_RECALL_REWRITE_TIMEOUT seconds and
runs while the original query is searched. Answers are cached per space and
query; a late answer still lands in the cache for the next identical query. A
failed or late rewrite leaves the original query alone and the response says
degraded: ["rewrite"].
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

import pydantic
from django.conf import settings
from django.db import connection

from engram_site import running
from engram_site.threads import DbThreadPool
from memory import llm
from memory.models import Space
from memory.search import query_terms

log = logging.getLogger(__name__)

MAX_QUERIES = 3
MAX_QUERY_CHARS = 200
# Each rewritten query's channels weigh this share of the original's.
WEIGHT = 0.5
_CACHE_SECONDS = 3600.0
_FAILED_SECONDS = 60.0  # a failure is remembered this long: no wait on every call
_CACHE_SIZE = 1024

SYSTEM = (
    "You help a memory search engine. Rewrite the user's question into at most "
    f"{MAX_QUERIES} short keyword queries that would find the stored memories "
    "answering it: use synonyms, the words an answer would contain, and full "
    "names. Each query must add something the question's own words do not. "
    'Return {"queries": [...]}; return an empty list if nothing would help.'
)


class Rewrites(pydantic.BaseModel):
    queries: list[str] = pydantic.Field(default_factory=list)


_cache: OrderedDict[tuple[str, int, str], tuple[float, list[str] | None]] = OrderedDict()
_lock = threading.Lock()
_helpers = DbThreadPool("engram-rewrite", 2)


def enabled(requested: bool | None) -> bool:
    return bool(settings.ENGRAM["RECALL_REWRITE"]) if requested is None else requested


def _key(space: Space, query: str) -> tuple[str, int, str]:
    return (str(connection.settings_dict.get("NAME")), space.pk, " ".join(query.split()).lower())


def _cached(key: tuple[str, int, str]) -> tuple[bool, list[str] | None]:
    now = time.monotonic()
    with _lock:
        hit = _cache.get(key)
        if hit is None:
            return False, None
        stored, queries = hit
        if now - stored > (_CACHE_SECONDS if queries is not None else _FAILED_SECONDS):
            del _cache[key]
            return False, None
        _cache.move_to_end(key)
        return True, queries


def _remember(key: tuple[str, int, str], queries: list[str] | None) -> None:
    with _lock:
        _cache[key] = (time.monotonic(), queries)
        _cache.move_to_end(key)
        if len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)


def _clean(query: str, proposed: list[str]) -> list[str]:
    own = set(query_terms(query))
    out: list[str] = []
    for text in proposed:
        text = " ".join(str(text).split())[:MAX_QUERY_CHARS]
        terms = set(query_terms(text))
        # A rewrite that adds no word of its own finds nothing new.
        if not terms or terms <= own or text.lower() in (q.lower() for q in out):
            continue
        out.append(text)
        if len(out) == MAX_QUERIES:
            break
    return out


def _ask(space: Space, query: str, key: tuple[str, int, str]) -> list[str] | None:
    try:
        answer = llm.complete_json(
            space=space, purpose="recall_rewrite", system=SYSTEM, user=query, schema=Rewrites
        )
    except llm.LLMError as exc:
        log.warning("query rewrite failed, searching the query as given: %s", exc)
        _remember(key, None)
        return None
    queries = _clean(query, answer.queries)
    _remember(key, queries)
    return queries


def start(space: Space, query: str) -> Future[list[str] | None]:
    """Begin rewriting `query`; collect() the result after searching it."""
    key = _key(space, query)
    known, queries = _cached(key)
    if not known and connection.in_atomic_block:
        # A helper's connection could not see this transaction's space row.
        known, queries = True, _ask(space, query, key)
    if known:
        done: Future[list[str] | None] = Future()
        done.set_result(queries)
        return done
    return _helpers.submit(_ask, space, query, key)


def collect(pending: Future[list[str] | None], *, started: float) -> list[str] | None:
    """The rewritten queries, or None when the rewrite failed or is late."""
    timeout = float(settings.ENGRAM["RECALL_REWRITE_TIMEOUT_SECONDS"])
    if not pending.done():
        running.step_aside()  # waiting on the LLM, not computing
    try:
        return pending.result(timeout=max(0.0, started + timeout - time.monotonic()))
    except FutureTimeout:
        log.warning("query rewrite later than %.1fs; searching the query as given", timeout)
        return None
    except Exception:
        # Whatever broke (the budget's row, say), recall still answers.
        log.exception("query rewrite broke; searching the query as given")
        return None
