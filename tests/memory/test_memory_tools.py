"""The agent tool surface: memory_save (core blocks and block=auto), the
legacy aliases, and the tool manifest."""

from __future__ import annotations

import pytest

from memory.models import MemoryItem


@pytest.fixture(autouse=True)
def _mirror_dir(settings, tmp_path):  # type: ignore[no-untyped-def]
    settings.ENGRAM = {**settings.ENGRAM, "MIRROR_DIR": tmp_path / "mirror"}


def post(api, path, body):  # type: ignore[no-untyped-def]
    return api.post(f"/api/v1/memory/{path}", body, content_type="application/json")


# The contract's tool names.
EXPECTED_TOOLS = {
    "memory_tour",
    "memory_review_queue",
    "memory_save",
    "memory_search",
    "memory_forget",
    "memory_timeline",
    "memory_episodes",
    "memory_examine",
    "memory_neighbors",
    "memory_facts",
    "memory_assess",
    "memory_report",
    "memory_review",
    "memory_stats",
    "memory_audit_forgotten",
    "memory_distill",
    "memory_reflect",
    "memory_profile",
    "memory_export",
    "memory_ingest_history",
    "memory_update",
    "memory_guide",
    "memory_skills",
    "remember_fact",
    "recall_facts",
    "search_conversations",
    "recall_sessions",
}


def test_manifest_lists_every_tool_with_a_json_schema(api):
    body = api.get("/api/v1/tools").json()
    tools = {t["name"]: t for t in body["tools"]}
    assert set(tools) == EXPECTED_TOOLS
    for tool in tools.values():
        params = tool["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert tool["description"] and tool["method"] == "POST"
        assert tool["path"] == f"/api/v1/tools/{tool['name']}"
        assert set(params["required"]) <= set(params["properties"])
        assert "title" not in str(list(params["properties"].values()))
        assert "$ref" not in str(params)
        assert isinstance(tool["read_only"], bool) and isinstance(tool["destructive"], bool)
    save = tools["memory_save"]["parameters"]
    assert save["properties"]["block"]["enum"] == ["user", "agent", "auto"]
    assert save["properties"]["action"]["enum"] == ["add", "replace", "remove"]
    assert save["properties"]["text"]["maxLength"] == 2000
    assert save["properties"]["items"]["maxItems"] == 10
    forget = tools["memory_forget"]["parameters"]["properties"]
    assert forget["item_id"]["type"] == "string" and forget["hard"]["type"] == "boolean"
    assert tools["memory_forget"]["destructive"] is True
    search = tools["memory_search"]["parameters"]
    assert search["required"] == ["query"] and search["properties"]["k"]["maximum"] == 100
    assert tools["memory_search"]["read_only"] is True


def test_manifest_paths_are_real_endpoints(api):
    for tool in api.get("/api/v1/tools").json()["tools"]:
        # An unknown argument is bad input for every tool, never a missing route or a crash.
        response = api.post(tool["path"], {"no_such_argument": 1}, content_type="application/json")
        assert response.status_code == 422, (tool["name"], response.status_code)
        assert "no_such_argument" in response.json()["detail"]
        if tool["parameters"]["required"]:
            response = api.post(tool["path"], {}, content_type="application/json")
            assert response.status_code == 422, (tool["name"], response.status_code)
            assert tool["parameters"]["required"][0] in response.json()["detail"]


def test_manifest_in_openai_and_anthropic_shapes(api):
    openai = api.get("/api/v1/tools?format=openai").json()["tools"]
    assert {t["type"] for t in openai} == {"function"}
    assert {t["function"]["name"] for t in openai} == EXPECTED_TOOLS
    anthropic = api.get("/api/v1/tools?format=anthropic").json()["tools"]
    assert all(t["input_schema"]["type"] == "object" for t in anthropic)
    assert api.get("/api/v1/tools?format=xml").status_code == 422


def test_manifest_needs_a_key(client):
    assert client.get("/api/v1/tools").status_code == 401


def test_save_auto_writes_a_fact_not_a_core_block(api, space):
    response = post(api, "save", {"block": "auto", "text": "Priya's favourite tea is oolong"})
    body = response.json()
    assert response.status_code == 200 and body["ok"] and body["block"] == "auto"
    assert MemoryItem.objects.filter(space=space, pk=int(body["id"])).exists()
    assert api.get("/api/v1/core/user").json()["text"] == ""
    removed = post(api, "save", {"block": "auto", "action": "remove", "old_text": "oolong tea"})
    assert removed.json()["ok"]
    assert MemoryItem.objects.get(pk=int(body["id"])).status == "forgotten"


def test_save_rejects_oversized_text(api):
    response = post(api, "save", {"block": "user", "action": "add", "text": "x" * 2001})
    assert response.status_code == 422 and "text" in response.json()["detail"]


def test_remember_fact_and_recall_facts(api):
    saved = post(
        api,
        "remember_fact",
        {"text": "Priya's brother Ravi lives in Chennai", "importance": 0.6},
    ).json()
    assert saved["action"] == "ADD" and saved["id"]
    found = post(api, "recall_facts", {"query": "Where does Ravi live?"}).json()
    assert found["results"] and found["results"][0]["id"] == saved["id"]
    assert found["results"][0]["type"] == "fact"
    assert post(api, "remember_fact", {"text": "x", "importance": 2}).status_code == 422


def test_search_conversations_and_recall_sessions_search_their_own_types(api):
    api.post(
        "/api/v1/turns",
        {"session_id": "trip", "role": "user", "text": "We booked the ferry to Hvar", "ref": "r1"},
        content_type="application/json",
    )
    turns = post(api, "search_conversations", {"query": "ferry Hvar"}).json()["results"]
    assert turns and {r["type"] for r in turns} == {"turn"}
    assert turns[0]["source"]["turn_refs"] == ["r1"]
    sessions = post(api, "recall_sessions", {"query": "ferry Hvar"}).json()["results"]
    assert {r["type"] for r in sessions} <= {"summary"}
