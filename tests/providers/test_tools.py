"""Tools mode: the provider's tools in GET /api/v1/tools (every format) and
in Engram's MCP server as <name>.<tool>, called through POST
/api/v1/tools/<name>.<tool> and over MCP with a real MCP client; a
provider's error is a clear JSON error, never a 500."""

from __future__ import annotations

import json
import os
import re
import sys

import anyio
import pytest
from django.conf import settings
from django.db import connection
from mcp import Client, StdioServerParameters

from memory.services.spaces import create_api_key
from tests.providers.conftest import memserver_command, stdio_entry, warm


@pytest.fixture
def notes(providers):  # type: ignore[no-untyped-def]
    (provider,) = providers(stdio_entry(mode="tools"))
    warm(provider)
    return provider


def _post(api, name: str, body: object):  # type: ignore[no-untyped-def]
    return api.post(f"/api/v1/tools/{name}", body, content_type="application/json")


def test_the_manifests_list_the_provider_tools_with_a_prefix(api, notes) -> None:  # type: ignore[no-untyped-def]
    tools = {t["name"]: t for t in api.get("/api/v1/tools").json()["tools"]}
    assert "memory_search" in tools
    add = tools["notes.add"]
    assert add["path"] == "/api/v1/tools/notes.add"
    assert add["provider"] == "notes"
    assert add["description"].startswith("[notes] ")
    assert set(add["parameters"]["properties"]) == {"a", "b"}
    assert {"notes.search", "notes.remember", "notes.fail", "notes.ping"} <= set(tools)
    # Function-calling APIs allow only [a-zA-Z0-9_-] in a name: there the
    # provider and the tool are joined with "__", and a call takes either.
    openai = api.get("/api/v1/tools", {"format": "openai"}).json()["tools"]
    names = {t["function"]["name"] for t in openai}
    assert "notes__add" in names and "memory_search" in names
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", n) for n in names), names
    anthropic = api.get("/api/v1/tools", {"format": "anthropic"}).json()["tools"]
    assert "notes__add" in {t["name"] for t in anthropic}
    called = _post(api, "notes__add", {"a": 1, "b": 2})
    assert called.status_code == 200 and called.json()["structured_content"] == {"result": 3}
    assert _post(api, "nobody__add", {}).status_code == 404


def test_a_proxied_call_answers_what_the_provider_said(api, notes) -> None:  # type: ignore[no-untyped-def]
    response = _post(api, "notes.add", {"a": 2, "b": 40})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["provider"] == "notes" and body["tool"] == "add"
    assert body["structured_content"] == {"result": 42}
    assert body["content"][0]["text"] == "42"


def test_provider_errors_are_clear_json_errors(api, notes) -> None:  # type: ignore[no-untyped-def]
    failed = _post(api, "notes.fail", {"reason": "no thanks"})
    assert failed.status_code == 502
    detail = failed.json()["detail"]
    assert detail.startswith("provider notes: fail failed: ") and "refused: no thanks" in detail
    unknown = _post(api, "notes.nosuch", {})
    assert unknown.status_code == 502
    assert "nosuch" in unknown.json()["detail"]
    bad_args = _post(api, "notes.add", {"a": "two"})
    assert bad_args.status_code == 502
    assert bad_args["content-type"].startswith("application/json")
    assert _post(api, "other.add", {}).status_code == 404
    assert _post(api, "notes.add", [1, 2]).status_code == 422


def test_a_dead_tools_provider_is_503_and_its_tools_are_not_listed(api, providers) -> None:  # type: ignore[no-untyped-def]
    providers({"name": "gone", "command": [sys.executable, "-c", "pass"], "mode": "tools"})
    names = {t["name"] for t in api.get("/api/v1/tools").json()["tools"]}
    assert not [n for n in names if n.startswith("gone.")]
    response = _post(api, "gone.add", {"a": 1, "b": 2})
    assert response.status_code == 503
    assert response.json()["detail"].startswith("provider gone is unavailable: ")


def test_prefetch_only_providers_offer_no_tools(api, providers) -> None:  # type: ignore[no-untyped-def]
    providers(stdio_entry(mode="prefetch"))
    names = {t["name"] for t in api.get("/api/v1/tools").json()["tools"]}
    assert not [n for n in names if n.startswith("notes.")]
    assert _post(api, "notes.add", {"a": 1, "b": 2}).status_code == 404


def _database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_engram_mcp_server_lists_and_proxies_the_provider_tools() -> None:
    """`manage.py mcp` (a real process) configured with the provider, driven
    by the MCP SDK's client: it starts the test server itself."""
    create_api_key(space_name="mcp-space")
    entries = [{"name": "notes", "command": memserver_command(), "mode": "hybrid", "timeout": 10}]
    params = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp", "--space", "mcp-space"],
        env={
            **os.environ,
            "ENGRAM_DATABASE_URL": _database_url(),
            "ENGRAM_CELERY_EAGER": "1",
            "ENGRAM_PROVIDERS": json.dumps(entries),
        },
        cwd=str(settings.BASE_DIR),
    )

    async def main() -> tuple[set[str], object, object]:
        async with Client(params) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            added = await client.call_tool("notes.add", {"a": 20, "b": 22})
            failed = await client.call_tool("notes.fail", {"reason": "over MCP"})
            return listed, added, failed

    listed, added, failed = anyio.run(main)
    assert {"memory_search", "notes.add", "notes.search"} <= listed
    assert added.structured_content == {"result": 42}  # type: ignore[attr-defined]
    assert failed.is_error  # type: ignore[attr-defined]
    assert "refused: over MCP" in failed.content[0].text  # type: ignore[attr-defined]
