"""POST /api/v1/recall and /api/v1/memory/search over HTTP: the contract's
shape, and hostile queries answer 200 or a clear 422, never 500."""

from __future__ import annotations

import pytest

from memory.models import MemoryItem, Session, Turn

pytestmark = pytest.mark.django_db

HOSTILE = [
    "",
    "   ",
    "the and of to a",
    "who am I",
    'NEAR(a b) OR "x" AND NOT y*',
    '"unterminated',
    "'; DROP TABLE memory_memoryitem; --",
    "col:value ^start + - ( ) { } [ ] : * ~",
    "\\\\ \\' \\\" %s %% {0}",
    "emoji 🦊🔥 only 🚀",
    "日本語のテキスト 中文 한국어",
    "x" * 10_000,
    "word " * 2_000,
    "\x01\x1f control \u200b hidden \ufeff",
    "Ωmega café naïve",
]


@pytest.fixture
def stored(space):  # type: ignore[no-untyped-def]
    s = Session.objects.create(space=space, external_id="s1")
    Turn.objects.create(
        space=space, session=s, ref="t1", role="user", text="I keep bees in the garden 🐝"
    )
    MemoryItem.objects.create(
        space=space, text="The user keeps bees", source_turn_refs=["t1"], source_session=s
    )


@pytest.mark.parametrize("path", ["/api/v1/recall", "/api/v1/memory/search"])
def test_it_answers_in_the_contract_shape(api, stored, path) -> None:
    response = api.post(path, {"query": "bees", "k": 5}, content_type="application/json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert isinstance(body["took_ms"], float)
    assert {r["type"] for r in body["results"]} == {"fact", "turn"}
    for r in body["results"]:
        assert set(r) >= {
            "id",
            "type",
            "text",
            "score",
            "channels",
            "created_at",
            "valid_from",
            "valid_to",
            "source",
        }
        assert r["source"] == {"session_id": "s1", "turn_refs": ["t1"]}
        assert isinstance(r["id"], str) and r["channels"]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_fail(api, stored, query) -> None:
    response = api.post("/api/v1/recall", {"query": query}, content_type="application/json")
    assert response.status_code == 200, response.content
    assert isinstance(response.json()["results"], list)


def test_a_nul_in_a_query_is_refused_by_name(api, stored) -> None:
    # Every JSON body refuses NUL (PostgreSQL cannot store it), reads included.
    response = api.post("/api/v1/recall", {"query": "\x00bees"}, content_type="application/json")
    assert response.status_code == 422
    assert response.json()["detail"].startswith("query: text may not contain the NUL character")


@pytest.mark.parametrize(
    "body, field",
    [
        ({"k": 5}, "query"),
        ({"query": "x", "k": 0}, "k"),
        ({"query": "x", "k": 101}, "k"),
        ({"query": "x", "as_of": "not a date"}, "as_of"),
        ({"query": "x", "types": ["memes"]}, "types"),
        ({"query": "x" * 16_001}, "query"),
        ({"query": 5}, "query"),
    ],
)
def test_bad_input_answers_422_naming_the_field(api, stored, body, field) -> None:
    response = api.post("/api/v1/recall", body, content_type="application/json")
    assert response.status_code == 422, response.content
    detail = response.json()["detail"]
    # The API root strips location words ("body", "query", ...) from error paths,
    # so a field literally called "query" is reported as "body".
    assert field in detail


def test_it_needs_a_key(client, stored) -> None:  # type: ignore[no-untyped-def]
    response = client.post("/api/v1/recall", {"query": "bees"}, content_type="application/json")
    assert response.status_code == 401


def test_another_spaces_memory_is_invisible(api, stored, client_for) -> None:
    from memory.services.spaces import create_api_key

    _, other = create_api_key(space_name="other-space")
    response = client_for(other).post(
        "/api/v1/recall", {"query": "bees"}, content_type="application/json"
    )
    assert response.status_code == 200 and response.json()["results"] == []


def test_as_of_over_http(api, space) -> None:
    MemoryItem.objects.create(
        space=space, text="favourite colour is green", created_at="2024-01-01T00:00:00Z"
    )
    before = api.post(
        "/api/v1/recall",
        {"query": "favourite colour", "as_of": "2023-06-01T00:00:00Z"},
        content_type="application/json",
    )
    after = api.post(
        "/api/v1/recall",
        {"query": "favourite colour", "as_of": "2024-06-01"},
        content_type="application/json",
    )
    assert before.status_code == after.status_code == 200
    assert before.json()["results"] == []
    assert [r["text"] for r in after.json()["results"]] == ["favourite colour is green"]
