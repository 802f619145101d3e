"""Recall with embeddings on: the vector channel takes part when the backend
answers, and recall still answers (saying "vector" is degraded) when it is
down. The background catch-up task embeds turns posted through the API."""

from __future__ import annotations

import socket

from memory import embeddings
from memory.models import MemoryVector
from memory.services.recall import recall
from memory.tasks import embed_pending
from tests.fakes.embedding_server import embed_server, use_embeddings  # noqa: F401

TURNS = [
    ("t1", "user", "I finally adopted a golden retriever puppy named Biscuit"),
    ("t2", "assistant", "Congratulations on Biscuit, golden retrievers are lovely"),
    ("t3", "user", "My sister Clara is moving to Lisbon in the spring"),
]


def _post_turns(api) -> None:  # type: ignore[no-untyped-def]
    for ref, role, text in TURNS:
        response = api.post(
            "/api/v1/turns",
            {"session_id": "s1", "role": role, "text": text, "ref": ref},
            content_type="application/json",
        )
        assert response.status_code == 202, response.content


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_turns_get_vectors_from_the_background_task(
    api,
    space,
    embed_server,  # noqa: F811
    use_embeddings,  # noqa: F811
) -> None:
    use_embeddings("ollama", url=embed_server.url, model="m")
    _post_turns(api)
    assert embed_pending.delay().get() >= 3
    assert MemoryVector.objects.filter(space=space, turn__isnull=False).count() == 3
    assert embeddings.pending_count(space_id=space.id) == 0
    assert embed_pending.delay().get() == 0  # nothing left to do


def test_recall_uses_the_vector_channel(
    api,
    space,
    settings,
    embed_server,  # noqa: F811
    use_embeddings,  # noqa: F811
) -> None:
    use_embeddings("ollama", url=embed_server.url, model="m")
    settings.ENGRAM = {**settings.ENGRAM, "RECALL_VECTOR_WEIGHT": 0.8}
    _post_turns(api)
    embed_pending.delay().get()
    response = recall(space=space, query="golden retriever puppy Biscuit", k=5)
    assert response.degraded == []
    top = response.results[0]
    assert top.source.turn_refs == ["t1"]
    assert "vector" in top.channels
    assert any(r.channels.get("vector") == 1 for r in response.results)


def test_recall_degrades_when_the_backend_is_down(
    api,
    space,
    settings,
    embed_server,  # noqa: F811
    use_embeddings,  # noqa: F811
) -> None:
    use_embeddings("ollama", url=embed_server.url, model="m")
    settings.ENGRAM = {**settings.ENGRAM, "RECALL_VECTOR_WEIGHT": 0.8}
    _post_turns(api)
    embed_pending.delay().get()
    use_embeddings("ollama", url=_dead_url(), model="m", timeout=0.5)
    response = recall(space=space, query="golden retriever puppy Biscuit", k=5)
    assert response.degraded == ["vector"]
    assert response.results and response.results[0].source.turn_refs == ["t1"]
    assert all("vector" not in r.channels for r in response.results)


def test_the_catch_up_task_survives_a_backend_that_is_down(api, space, use_embeddings) -> None:  # noqa: F811
    use_embeddings("ollama", url=_dead_url(), model="m", timeout=0.5)
    _post_turns(api)
    assert embed_pending.delay().get() == 0
    assert MemoryVector.objects.count() == 0


def test_the_recall_api_answers_and_says_vector_is_degraded(
    api,
    space,
    settings,
    embed_server,  # noqa: F811
    use_embeddings,  # noqa: F811
) -> None:
    use_embeddings("ollama", url=embed_server.url, model="m")
    settings.ENGRAM = {**settings.ENGRAM, "RECALL_VECTOR_WEIGHT": 0.8}
    _post_turns(api)
    embed_pending.delay().get()
    use_embeddings("ollama", url=_dead_url(), model="m", timeout=0.5)
    response = api.post(
        "/api/v1/recall",
        {"query": "golden retriever puppy Biscuit", "k": 5},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["degraded"] == ["vector"]
    assert body["results"][0]["source"]["turn_refs"] == ["t1"]


def test_a_zero_vector_weight_skips_the_channel_entirely(
    api,
    space,
    settings,
    embed_server,  # noqa: F811
    use_embeddings,  # noqa: F811
) -> None:
    # Weight 0 adds nothing to any score, so recall neither embeds the query
    # nor reports a down backend as degraded.
    use_embeddings("ollama", url=embed_server.url, model="m")
    settings.ENGRAM = {**settings.ENGRAM, "RECALL_VECTOR_WEIGHT": 0.0}
    _post_turns(api)
    embed_pending.delay().get()
    before = len(embed_server.requests)
    response = recall(space=space, query="golden retriever puppy Biscuit", k=5)
    assert response.degraded == [] and response.results
    assert len(embed_server.requests) == before
    assert all("vector" not in r.channels for r in response.results)
