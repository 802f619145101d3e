"""RECALL_VECTOR_MODE: how recall routes the vector channel. With the real
local model: `rerank` orders only what keyword search found, `gate` speaks
only when keyword search has no standout answer, `fuse` always speaks."""

from __future__ import annotations

import pytest

from memory import embeddings
from memory.models import Session, Turn
from memory.services.recall import recall, vector_routing
from memory.services.recall.fusion import Ranking
from tests.fakes.embedding_server import embed_server, use_embeddings  # noqa: F401

pytestmark = pytest.mark.django_db

TEXTS = [
    "I adopted a golden retriever puppy last week",
    "our quarterly tax filing is due on Friday",
    "the dog chews every shoe in the house",
    "I repainted the kitchen cabinets blue",
    "the kitten sleeps on the radiator all day",
]


@pytest.fixture
def turns(space, use_embeddings, settings):  # type: ignore[no-untyped-def]  # noqa: F811
    use_embeddings("local")
    settings.ENGRAM = {**settings.ENGRAM, "RECALL_VECTOR_WEIGHT": 0.5}
    session = Session.objects.create(space=space, external_id="s1")
    rows = [
        Turn.objects.create(space=space, session=session, role="user", text=t, ref=f"r{i}")
        for i, t in enumerate(TEXTS)
    ]
    embeddings.index(space_id=space.pk, target="turn", ids=[t.pk for t in rows])
    return rows


def _mode(settings, mode: str) -> None:  # type: ignore[no-untyped-def]
    settings.ENGRAM = {**settings.ENGRAM, "RECALL_VECTOR_MODE": mode}


def test_fuse_brings_in_turns_keyword_search_cannot_find(space, turns, settings) -> None:
    _mode(settings, "fuse")
    response = recall(space=space, query="puppy kitten", k=5)
    by_ref = {r.source.turn_refs[0]: r for r in response.results}
    # "the dog chews..." shares no word with the query and is no neighbour of
    # a turn that does; only vectors find it.
    assert "r2" in by_ref and set(by_ref["r2"].channels) == {"vector"}


def test_rerank_only_reorders_what_keyword_search_found(space, turns, settings) -> None:
    _mode(settings, "rerank")
    response = recall(space=space, query="puppy kitten", k=5)
    refs = {r.source.turn_refs[0] for r in response.results}
    # The two matches and their neighbours (which inherit BM25 strength),
    # never the dog turn that only vectors would find.
    assert {"r0", "r4"} <= refs and "r2" not in refs
    for result in response.results:
        assert "vector" in result.channels and "bm25_turns" in result.channels


def test_gate_leaves_a_clear_keyword_match_to_bm25(space, turns, settings) -> None:
    _mode(settings, "gate")
    # Few keyword hits: keyword search is weak here, so vectors speak.
    response = recall(space=space, query="puppy kitten", k=5)
    assert any("vector" in r.channels for r in response.results)


def test_keyword_is_weak_reads_the_bm25_turn_head() -> None:
    keys = [("turn", i) for i in range(1, 13)]
    standout = {k: (10.0 if i == 0 else 2.0) for i, k in enumerate(keys)}
    flat = dict.fromkeys(keys, 2.0)
    strong = Ranking("bm25_turns", 1.0, keys, frozenset({"turn"}), standout)
    assert vector_routing.keyword_is_weak([strong]) is False
    assert vector_routing.keyword_is_weak([Ranking("bm25_turns", 1.0, keys, strong.types, flat)])
    few = Ranking("bm25_turns", 1.0, keys[:3], strong.types, standout)
    assert vector_routing.keyword_is_weak([few])
    assert vector_routing.keyword_is_weak([])


def test_gate_skips_vectors_when_keyword_search_has_a_standout(
    space,
    settings,
    use_embeddings,  # noqa: F811
) -> None:
    use_embeddings("local")
    settings.ENGRAM = {**settings.ENGRAM, "RECALL_VECTOR_WEIGHT": 0.5}
    _mode(settings, "gate")
    session = Session.objects.create(space=space, external_id="s1")
    rows = [
        Turn.objects.create(
            space=space,
            session=session,
            role="user",
            text=f"note {i} about the weather",
            ref=f"w{i}",
        )
        for i in range(12)
    ]
    rows.append(
        Turn.objects.create(
            space=space, session=session, role="user", text="zanzibar zanzibar weather", ref="z"
        )
    )
    embeddings.index(space_id=space.pk, target="turn", ids=[t.pk for t in rows])
    response = recall(space=space, query="zanzibar weather", k=5)
    assert response.results[0].source.turn_refs == ["z"]
    assert all("vector" not in r.channels for r in response.results)


def test_auto_uses_the_weight_measured_for_the_local_model(space, turns, settings) -> None:
    settings.ENGRAM = {**settings.ENGRAM, "RECALL_VECTOR_WEIGHT": 0.0}
    _mode(settings, "auto")
    assert vector_routing.resolve(weight=0.0) == ("gate", 0.2)
    # A weight set by the operator wins over the measured one.
    assert vector_routing.resolve(weight=0.7) == ("gate", 0.7)
    # Few keyword hits, so the gate opens and vectors speak at the measured weight.
    response = recall(space=space, query="puppy kitten", k=5)
    assert any("vector" in r.channels for r in response.results)


def test_auto_keeps_an_unmeasured_model_out_until_a_weight_is_set(
    settings,
    embed_server,  # noqa: F811
    use_embeddings,  # noqa: F811
) -> None:
    use_embeddings("ollama", url=embed_server.url, model="m")
    _mode(settings, "auto")
    assert vector_routing.resolve(weight=0.0) == ("rerank", 0.0)
    assert vector_routing.resolve(weight=0.3) == ("rerank", 0.3)


def test_off_keeps_vectors_out_of_recall(space, turns, settings) -> None:
    _mode(settings, "off")
    response = recall(space=space, query="puppy kitten", k=5)
    assert response.results and all("vector" not in r.channels for r in response.results)
