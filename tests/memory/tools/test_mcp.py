"""The MCP server, driven with the official MCP client SDK over both
transports against real processes: Streamable HTTP at /mcp (gunicorn with
uvicorn workers, as ./run serves it) and stdio (`manage.py mcp`). Every tool
is listed and called; REST and MCP answer the same for the same call; keys
are checked, spaces isolated, and a bad argument is a tool error naming the
field."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import httpx2
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client as DjangoClient
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from memory.management.commands.engram_run import WORKER_CLASS
from memory.models import MemoryItem
from memory.services.spaces import create_api_key
from memory.tools import registry

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def _env() -> dict[str, str]:
    return {**os.environ, "ENGRAM_DATABASE_URL": _database_url(), "ENGRAM_CELERY_EAGER": "1"}


@pytest.fixture(scope="module")
def http_url(django_db_setup, django_db_blocker) -> Iterator[str]:  # type: ignore[no-untyped-def]
    with django_db_blocker.unblock():
        env = _env()
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "engram_site.asgi:application",
            "--worker-class",
            WORKER_CLASS,
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--control-socket",
            str(settings.DATA_DIR / f"gunicorn-{port}.ctl"),
        ],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if (
                    httpx2.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=1).status_code
                    == 200
                ):
                    break
            except httpx2.HTTPError:
                time.sleep(0.2)
        else:
            raise RuntimeError("the server did not start")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def over_http(url: str, key: str | None) -> Callable[[Callable[[Client], Awaitable[Any]]], Any]:
    def run(body: Callable[[Client], Awaitable[Any]]) -> Any:
        async def main() -> Any:
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    return await body(client)

        return anyio.run(main)

    return run


def over_stdio(*args: str) -> Callable[[Callable[[Client], Awaitable[Any]]], Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp", *args],
        env=_env(),
        cwd=str(settings.BASE_DIR),
    )

    def run(body: Callable[[Client], Awaitable[Any]]) -> Any:
        async def main() -> Any:
            async with Client(params) as client:
                return await body(client)

        return anyio.run(main)

    return run


@pytest.fixture
def keys() -> dict[str, str]:
    _, a = create_api_key(space_name="mcp-a")
    _, b = create_api_key(space_name="mcp-b")
    return {"a": a, "b": b}


@pytest.fixture
def rest(keys: dict[str, str]) -> DjangoClient:
    return DjangoClient(HTTP_AUTHORIZATION=f"Bearer {keys['a']}")


def rest_call(rest: DjangoClient, name: str, arguments: dict[str, Any]) -> tuple[int, Any]:
    response = rest.post(f"/api/v1/tools/{name}", arguments, content_type="application/json")
    return response.status_code, response.json()


@pytest.fixture
def seeded(rest: DjangoClient, settings, tmp_path) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    settings.ENGRAM = {**settings.ENGRAM, "MIRROR_DIR": tmp_path / "mirror"}
    for text in ("The user's sister Anna lives in Porto.", "I live in Lisbon"):
        assert rest_call(rest, "memory_save", {"text": text})[0] == 200
    turn = {
        "session_id": "s1",
        "role": "user",
        "text": "Anna showed me her garden in Porto.",
        "ref": "t1",
    }
    assert rest.post("/api/v1/turns", turn, content_type="application/json").status_code == 202
    rest_call(
        rest,
        "memory_facts",
        {
            "facts": [
                {
                    "entity": "Anna",
                    "content": "Anna works at Acme.",
                    "predicate": "works_at",
                    "object": "Acme",
                }
            ]
        },
    )
    item = MemoryItem.objects.filter(text__contains="Anna lives").get()
    status, found = rest_call(rest, "memory_search", {"query": "Anna Porto"})
    assert status == 200 and found["results"]
    return {"item": str(item.pk), "batch": found["batch_id"], "ref": found["results"][0]["ref"]}


def calls(seeded: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """One call per tool that leaves the space as it found it (reads, dry runs,
    or answers that do not depend on being repeated)."""
    item = seeded["item"]
    return {
        "memory_search": {"query": "Anna Porto", "k": 5},
        "memory_assess": {
            "batch_id": seeded["batch"],
            "evidence_refs": [seeded["ref"], "other.1"],
            "next_strategy": "answer",
            "sufficient": True,
        },
        "recall_facts": {"query": "Anna"},
        "search_conversations": {"query": "garden Porto"},
        "recall_sessions": {"query": "garden"},
        "memory_save": {"text": "I moved to Berlin", "dry_run": True},
        "remember_fact": {"text": "The user has a cat named Tom.", "dry_run": True},
        "memory_update": {"id": item, "text": "Anna lives in Faro.", "dry_run": True},
        "memory_forget": {"item_id": item, "dry_run": True},
        "memory_facts": {"entity": "Anna", "include_invalid": True},
        "memory_report": {"id": item, "outcome": "success", "dry_run": True},
        "memory_ingest_history": {
            "jsonl": json.dumps(
                {"session_id": "old", "role": "user", "text": "I used to live in Rome."}
            )
        },
        "memory_timeline": {"limit": 10},
        "memory_episodes": {},
        "memory_examine": {"ids": [item, "999999"]},
        "memory_neighbors": {"entity": "Anna", "hops": 2},
        "memory_review": {"id": item},
        "memory_stats": {},
        "memory_audit_forgotten": {},
        "memory_distill": {"dry_run": True},
        "memory_reflect": {"dry_run": True},
        "memory_export": {"format": "json", "redacted": True},
        "memory_skills": {"query": ""},
        "memory_profile": {"action": "view"},
        "memory_guide": {"language": "ru"},
        "memory_tour": {"mode": "fixed", "limit": 5},
        "memory_review_queue": {"include_not_due": True},
    }


VOLATILE = {"took_ms", "batch_id", "ref", "exported_at"}


def normalized(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    if isinstance(value, str) and value.startswith("{"):
        try:
            return normalized(json.loads(value))
        except ValueError:
            return value
    return value


def test_the_calls_cover_every_tool(seeded):
    assert set(calls(seeded)) == {t.name for t in registry.all_tools()}


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_every_tool_answers_the_same_over_mcp_and_rest(transport, http_url, keys, rest, seeded):
    run = over_http(http_url, keys["a"]) if transport == "http" else over_stdio("--space", "mcp-a")
    plan = calls(seeded)

    async def body(client: Client) -> dict[str, Any]:
        listed = await client.list_tools()
        out: dict[str, Any] = {"tools": listed.tools, "answers": {}}
        for name, arguments in plan.items():
            # REST first, then MCP, with nothing in between.
            status, expected = await anyio.to_thread.run_sync(rest_call, rest, name, arguments)
            result = await client.call_tool(name, arguments)
            out["answers"][name] = (status, expected, result)
        return out

    got = run(body)
    manifest = {t["name"]: t for t in registry.manifest()}
    assert {t.name for t in got["tools"]} == set(manifest)
    for tool in got["tools"]:
        assert tool.annotations.read_only_hint is manifest[tool.name]["read_only"]
        assert tool.annotations.destructive_hint is manifest[tool.name]["destructive"]
        assert tool.input_schema == manifest[tool.name]["parameters"]
        assert tool.output_schema["type"] == "object"
    for name, (status, expected, result) in got["answers"].items():
        assert status == 200, (name, expected)
        assert not result.is_error, (name, result.content)
        assert normalized(result.structured_content) == normalized(expected), name
        assert json.loads(result.content[0].text) == result.structured_content
    search = got["answers"]["memory_search"][2].structured_content
    assert search["batch_id"] and all(
        r["ref"].startswith(search["batch_id"]) for r in search["results"]
    )
    assess = got["answers"]["memory_assess"][2].structured_content
    assert assess["sufficient"] is True and assess["rejected_refs"] == ["other.1"]


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_bad_argument_is_a_tool_error_naming_the_field(transport, http_url, keys):
    run = over_http(http_url, keys["a"]) if transport == "http" else over_stdio("--key", keys["a"])

    async def body(client: Client) -> list[Any]:
        return [
            await client.call_tool("memory_search", {"query": "x", "k": 1000}),
            await client.call_tool("memory_examine", {"ids": []}),
            await client.call_tool("memory_save", {"txt": "typo"}),
            await client.call_tool("memory_review", {"id": "999999"}),
            await client.call_tool("memory_teleport", {}),
        ]

    k, ids, typo, missing, unknown = run(body)
    assert k.is_error and "k:" in k.content[0].text
    assert ids.is_error and "ids:" in ids.content[0].text
    assert typo.is_error and "txt:" in typo.content[0].text
    assert missing.is_error and "not found" in missing.content[0].text
    assert unknown.is_error and "memory_teleport" in unknown.content[0].text


def test_another_spaces_ids_are_not_found(http_url, keys, seeded):
    async def body(client: Client) -> list[Any]:
        return [
            await client.call_tool("memory_review", {"id": seeded["item"]}),
            await client.call_tool("memory_examine", {"ids": [seeded["item"]]}),
            await client.call_tool("memory_forget", {"item_id": seeded["item"]}),
            await client.call_tool(
                "memory_assess",
                {"batch_id": seeded["batch"], "next_strategy": "answer", "sufficient": True},
            ),
            await client.call_tool("memory_search", {"query": "Anna Porto"}),
        ]

    review, examine, forget, assess, search = over_http(http_url, keys["b"])(body)
    assert review.is_error and "not found" in review.content[0].text
    assert examine.structured_content["items"] == []
    assert examine.structured_content["not_found"] == [seeded["item"]]
    assert forget.is_error and MemoryItem.objects.get(pk=seeded["item"]).status == "active"
    assert assess.is_error and "not found" in assess.content[0].text
    assert search.structured_content["results"] == []


def test_a_missing_or_wrong_key_is_refused(http_url, keys):
    init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    for auth in ({}, {"Authorization": "Bearer eng_deadbeef_nope"}, {"Authorization": "Basic x"}):
        response = httpx2.post(http_url, json=init, headers={**headers, **auth})
        assert response.status_code == 401, auth
        assert response.headers["www-authenticate"].startswith("Bearer")
    with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces the 401 as its own error
        over_http(http_url, "eng_deadbeef_nope")(lambda client: client.list_tools())
    with pytest.raises(Exception):  # noqa: B017
        over_http(http_url, None)(lambda client: client.list_tools())
    stdio = subprocess.run(
        [sys.executable, "manage.py", "mcp", "--key", "eng_deadbeef_nope"],
        cwd=settings.BASE_DIR,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert stdio.returncode != 0 and "API key" in stdio.stderr


def test_hosts_and_origins_outside_the_allowlist_are_refused(http_url, keys):
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {keys['a']}",
    }
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}
    assert (
        httpx2.post(http_url, json=ping, headers={**headers, "Host": "evil.example"}).status_code
        == 421
    )
    evil = {**headers, "Origin": "http://evil.example"}
    assert httpx2.post(http_url, json=ping, headers=evil).status_code == 403
    good = {**headers, "Origin": "http://localhost:3000"}
    assert httpx2.post(http_url, json=ping, headers=good).status_code != 403


def test_core_memory_is_a_resource_and_context_a_prompt(http_url, keys, rest, seeded):
    rest_call(rest, "memory_save", {"block": "user", "text": "Name: Sam. Prefers short answers."})

    async def body(client: Client) -> tuple[Any, Any, Any, Any]:
        return (
            await client.list_resources(),
            await client.read_resource("engram://core/user"),
            await client.list_prompts(),
            await client.get_prompt("context", {"query": "Anna Porto", "session_id": "default"}),
        )

    resources, user, prompts, prompt = over_http(http_url, keys["a"])(body)
    assert {str(r.uri) for r in resources.resources} == {
        "engram://core/user",
        "engram://core/agent",
    }
    assert "Prefers short answers" in user.contents[0].text
    assert [p.name for p in prompts.prompts] == ["context"]
    text = prompt.messages[0].content.text
    assert "Prefers short answers" in text and "Porto" in text
    assert "memory_assess" in text  # the seeded search is still unassessed
