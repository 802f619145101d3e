"""The registry's doors over REST: the manifests validate their own examples,
arguments are checked against the declared schema with the field named."""

from __future__ import annotations

import jsonschema
import pytest

from memory.tools import registry


def test_every_example_validates_against_its_own_manifest_schema(api):
    tools = api.get("/api/v1/tools").json()["tools"]
    assert tools
    for tool in tools:
        assert tool["examples"], f"{tool['name']} has no example"
        jsonschema.Draft202012Validator.check_schema(tool["parameters"])
        jsonschema.Draft202012Validator.check_schema(tool["result"])
        for example in tool["examples"]:
            jsonschema.validate(example, tool["parameters"])


def test_a_wrong_example_fails_the_schema(api):
    # The schemas carry the bounds: they would catch a bad call.
    search = next(
        t for t in api.get("/api/v1/tools").json()["tools"] if t["name"] == "memory_search"
    )
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"query": "x", "k": 101}, search["parameters"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"query": "x", "kk": 1}, search["parameters"])


def test_openai_and_anthropic_manifests_carry_the_same_tools_and_schemas(api):
    engram = {t["name"]: t for t in api.get("/api/v1/tools").json()["tools"]}
    openai = api.get("/api/v1/tools?format=openai").json()["tools"]
    anthropic = api.get("/api/v1/tools?format=anthropic").json()["tools"]
    assert {t["function"]["name"]: t["function"]["parameters"] for t in openai} == {
        n: t["parameters"] for n, t in engram.items()
    }
    assert {t["name"]: t["input_schema"] for t in anthropic} == {
        n: t["parameters"] for n, t in engram.items()
    }


def test_a_bad_argument_is_a_422_naming_the_field(call):
    status, body = call("memory_search", query="anna", k=0)
    assert status == 422
    assert body["errors"][0]["field"] == "k" and "k:" in body["detail"]
    status, body = call("memory_facts", facts=[{"entity": "Anna", "content": ""}])
    assert status == 422 and "facts.0.content" in body["detail"]
    status, body = call("memory_assess", batch_id="x", next_strategy="guess", sufficient=True)
    assert status == 422 and "next_strategy" in body["detail"]


def test_an_unknown_tool_is_404_and_bad_json_is_4xx(api):
    response = api.post("/api/v1/tools/memory_teleport", {}, content_type="application/json")
    assert response.status_code == 404 and "memory_teleport" in response.json()["detail"]
    response = api.post("/api/v1/tools/memory_stats", b"{not json", content_type="application/json")
    assert response.status_code == 422 and "JSON" in response.json()["detail"]
    response = api.post("/api/v1/tools/memory_stats", [1, 2], content_type="application/json")
    assert response.status_code == 422 and "arguments" in response.json()["detail"]


def test_tools_need_a_key(client):
    assert (
        client.post("/api/v1/tools/memory_stats", {}, content_type="application/json").status_code
        == 401
    )


def test_each_tool_is_declared_once_with_its_kind():
    names = [t.name for t in registry.all_tools()]
    assert len(names) == len(set(names))
    by_name = {t.name: t for t in registry.all_tools()}
    assert by_name["memory_forget"].destructive and not by_name["memory_forget"].read_only
    for name in ("memory_search", "memory_examine", "memory_timeline", "memory_export"):
        assert by_name[name].read_only and not by_name[name].destructive
