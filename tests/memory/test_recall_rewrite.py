"""The optional LLM multi-query rewrite: off unless asked, fused with the
original query when on, and never in the way when the LLM fails or is slow."""

from __future__ import annotations

import json
import time

import pytest

from memory.models import Session, Turn
from memory.services.recall import rewrite
from tests.fakes.llm_server import FakeLLM, Reply


@pytest.fixture
def fake():  # type: ignore[no-untyped-def]
    with FakeLLM() as server:
        yield server


@pytest.fixture(autouse=True)
def _fresh_cache():  # type: ignore[no-untyped-def]
    rewrite._cache.clear()
    yield
    rewrite._cache.clear()


def configure(settings, provider, **extra):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {
        **settings.ENGRAM,
        "LLM_PROVIDERS": [provider],
        "LLM_BUDGET_PER_HOUR": 100,
        "LLM_TIMEOUT_SECONDS": 5.0,
        **extra,
    }


def _conversation(space) -> None:  # type: ignore[no-untyped-def]
    s = Session.objects.create(space=space, external_id="s1")
    Turn.objects.create(space=space, session=s, ref="D1:1", role="user", text="I bought a new car")
    Turn.objects.create(space=space, session=s, ref="D1:2", role="user", text="Lunch was pasta")


def _search(api, query, **body):  # type: ignore[no-untyped-def]
    response = api.post(
        "/api/v1/recall", {"query": query, "k": 5, **body}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def _refs(answer) -> list[str]:  # type: ignore[no-untyped-def]
    return [ref for r in answer["results"] for ref in r["source"]["turn_refs"]]


def _top(answer) -> str | None:  # type: ignore[no-untyped-def]
    refs = _refs(answer)
    return refs[0] if refs else None


@pytest.mark.django_db
def test_it_is_off_unless_asked_for(api, space, settings, fake) -> None:
    configure(settings, fake.provider())
    _conversation(space)
    assert _refs(_search(api, "automobile purchase")) == []
    assert fake.requests == []


@pytest.mark.django_db
def test_rewritten_queries_find_what_the_words_of_the_question_miss(api, space, settings, fake):
    configure(settings, fake.provider())
    _conversation(space)
    fake.push(Reply(content=json.dumps({"queries": ["bought car", "automobile purchase"]})))
    answer = _search(api, "automobile purchase", rewrite=True)
    assert _top(answer) == "D1:1"
    assert answer["degraded"] == []
    assert "bm25_turns~1" in answer["results"][0]["channels"]
    # The second rewrite repeats the question's own words: it was dropped.
    assert not any("~2" in c for r in answer["results"] for c in r["channels"])
    assert len(fake.requests) == 1
    assert "automobile purchase" in fake.requests[0]["messages"][-1]["content"]
    # The same question again comes from the cache.
    assert _top(_search(api, "Automobile  purchase", rewrite=True)) == "D1:1"
    assert len(fake.requests) == 1


@pytest.mark.django_db
def test_the_setting_turns_it_on_and_context_never_uses_it(api, space, settings, fake) -> None:
    configure(settings, fake.provider(), RECALL_REWRITE=True)
    _conversation(space)
    fake.push(Reply(content=json.dumps({"queries": ["bought car"]})))
    assert _top(_search(api, "automobile purchase")) == "D1:1"
    assert len(fake.requests) == 1
    assert _refs(_search(api, "automobile delivery", rewrite=False)) == []
    response = api.get("/api/v1/context", {"query": "automobile color"})
    assert response.status_code == 200
    assert len(fake.requests) == 1


@pytest.mark.django_db
def test_a_failed_rewrite_searches_the_question_as_given(api, space, settings) -> None:
    # Nothing listens on port 9: the provider is down.
    configure(settings, {"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    _conversation(space)
    answer = _search(api, "new car", rewrite=True)
    assert _top(answer) == "D1:1"
    assert answer["degraded"] == ["rewrite"]


@pytest.mark.django_db(transaction=True)  # the rewrite runs on a helper thread
def test_a_late_rewrite_is_left_out_and_kept_for_next_time(api, space, settings, fake) -> None:
    configure(settings, fake.provider(), RECALL_REWRITE_TIMEOUT_SECONDS=0.3)
    _conversation(space)
    fake.push(Reply(content=json.dumps({"queries": ["bought car"]}), delay=1.0))
    started = time.perf_counter()
    answer = _search(api, "automobile purchase", rewrite=True)
    assert time.perf_counter() - started < 0.9
    assert answer["degraded"] == ["rewrite"] and _refs(answer) == []
    deadline = time.monotonic() + 10
    while rewrite._cached(rewrite._key(space, "automobile purchase")) == (False, None):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    answer = _search(api, "automobile purchase", rewrite=True)
    assert answer["degraded"] == [] and _top(answer) == "D1:1"
    assert len(fake.requests) == 1
