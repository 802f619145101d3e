"""Prefetch: a real MCP server process (stdio, and Streamable HTTP) asked by
POST /api/v1/recall and GET /api/v1/context, its answers fused with
Engram's own as channel provider:<name>, with their provenance."""

from __future__ import annotations

import pytest

from memory.services.providers import health
from tests.providers.conftest import TOKEN, stdio_entry, warm

QUERY = "who is the lighthouse keeper on Skye"


@pytest.fixture(params=["stdio", "http"])
def notes(request, providers):  # type: ignore[no-untyped-def]
    if request.param == "stdio":
        entry = stdio_entry(mode="prefetch")
    else:
        url = request.getfixturevalue("http_memserver")
        entry = {
            "name": "notes",
            "url": url,
            "headers": {"X-Token": TOKEN},
            "mode": "prefetch",
            "timeout": 5,
        }
    (provider,) = providers(entry)
    warm(provider)
    return provider


def test_recall_fuses_the_provider_as_a_labelled_channel(api, notes) -> None:  # type: ignore[no-untyped-def]
    saved = api.post(
        "/api/v1/memory/facts",
        {"text": "The lighthouse on Skye was painted white in 2020"},
        content_type="application/json",
    )
    assert saved.status_code == 200, saved.content
    body = api.post(
        "/api/v1/recall", {"query": QUERY, "k": 8}, content_type="application/json"
    ).json()
    assert body["degraded"] == []
    external = [r for r in body["results"] if r["type"] == "provider"]
    assert external, body
    top = external[0]
    assert top["text"] == "The lighthouse keeper on Skye is named Morag"
    assert top["channels"] == {"provider:notes": 1}
    assert top["source"] == {
        "session_id": None,
        "turn_refs": [],
        "provider": "notes",
        "provider_id": "n1",
    }
    assert top["id"] == "notes:n1"
    assert top["space"] == "test-space"
    assert 0 < top["score"] <= 1
    # Engram's own fact is there too, its source without provider keys.
    own = [r for r in body["results"] if r["type"] == "fact"]
    assert own and own[0]["text"].startswith("The lighthouse on Skye")
    assert "provider" not in own[0]["source"]


def test_context_shows_the_provider_answer_framed_as_data(api, notes) -> None:  # type: ignore[no-untyped-def]
    body = api.get("/api/v1/context", {"query": QUERY}).json()
    assert body["degraded"] == []
    recalled = body["blocks"]["recalled"]
    assert "from the provider notes: The lighthouse keeper on Skye is named Morag" in recalled
    assert recalled.startswith("<engram-recalled>")


def test_types_filter_leaves_providers_out_unless_asked(api, notes) -> None:  # type: ignore[no-untyped-def]
    only_facts = api.post(
        "/api/v1/recall", {"query": QUERY, "types": ["fact"]}, content_type="application/json"
    ).json()
    assert not [r for r in only_facts["results"] if r["type"] == "provider"]
    only_provider = api.post(
        "/api/v1/recall", {"query": QUERY, "types": ["provider"]}, content_type="application/json"
    ).json()
    assert [r["source"]["provider_id"] for r in only_provider["results"]][:1] == ["n1"]
    assert all(r["type"] == "provider" for r in only_provider["results"])


def test_a_provider_leaves_the_local_scores_as_they_were(api, providers) -> None:  # type: ignore[no-untyped-def]
    for text in (
        "The lighthouse on Skye was painted white in 2020",
        "Morag took the ferry to Skye on Sunday",
    ):
        api.post("/api/v1/memory/facts", {"text": text}, content_type="application/json")

    def local() -> list[tuple[str, float]]:
        body = api.post("/api/v1/recall", {"query": QUERY}, content_type="application/json")
        return [(r["id"], r["score"]) for r in body.json()["results"] if r["type"] != "provider"]

    providers()
    alone = local()
    (notes,) = providers(stdio_entry(mode="prefetch"))
    warm(notes)
    assert alone and local() == alone


def test_an_http_provider_gets_its_headers(providers, http_memserver) -> None:  # type: ignore[no-untyped-def]
    base = {"url": http_memserver, "mode": "tools", "timeout": 5}
    providers({"name": "keyed", **base, "headers": {"X-Token": TOKEN}}, {"name": "bare", **base})
    assert health.check("keyed").ok
    refused = health.check("bare")
    assert not refused.ok and refused.detail.startswith("cannot connect: ")
