"""Against the reference knowledge-graph memory server of the MCP project
(@modelcontextprotocol/server-memory, from the npm registry), started by
the test over stdio: its search_nodes found for prefetch, its entities read
as recall items, its create_entities used for mirroring. .ci/run installs
it into ENGRAM_NODE_PREFIX (default ~/.cache/engram-node)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from memory.services.providers import client
from memory.services.spaces import create_api_key
from tests.providers.conftest import warm

PREFIX = Path(os.environ.get("ENGRAM_NODE_PREFIX", Path.home() / ".cache" / "engram-node"))
SERVER = PREFIX / "node_modules" / ".bin" / "mcp-server-memory"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed"),
    pytest.mark.skipif(
        not SERVER.exists(),
        reason=f"@modelcontextprotocol/server-memory is not installed in {PREFIX} "
        "(npm install --prefix $ENGRAM_NODE_PREFIX @modelcontextprotocol/server-memory)",
    ),
]


@pytest.fixture
def graph(db, providers, tmp_path: Path):  # type: ignore[no-untyped-def]
    (provider,) = providers(
        {
            "name": "graph",
            "command": [str(SERVER)],
            "env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")},
            "mode": "hybrid",
            "mirror_writes": True,
            "spaces": ["alpha", "beta"],
            "timeout": 5,
        }
    )
    warm(provider)
    return provider


def _provider_results(api, query: str) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    body = api.post("/api/v1/recall", {"query": query}, content_type="application/json").json()
    assert body["degraded"] == []
    return [r for r in body["results"] if r["type"] == "provider"]


def test_prefetch_reads_the_knowledge_graph(graph, client_for) -> None:  # type: ignore[no-untyped-def]
    made = client.call_tool(
        graph,
        "create_entities",
        {
            "entities": [
                {
                    "name": "Morag",
                    "entityType": "person",
                    "observations": ["keeps the lighthouse on Skye"],
                }
            ]
        },
    )
    assert not made.is_error
    alpha = client_for(create_api_key(space_name="alpha")[1])
    found = _provider_results(alpha, "Morag")
    assert found[0]["text"] == "Morag (person): keeps the lighthouse on Skye"
    assert found[0]["source"]["provider"] == "graph"
    assert found[0]["source"]["provider_id"] == "Morag"
    assert found[0]["channels"] == {"provider:graph": 1}
    tools = {t["name"] for t in alpha.get("/api/v1/tools").json()["tools"]}
    assert {"graph.search_nodes", "graph.create_entities", "graph.read_graph"} <= tools


def test_mirrored_facts_become_entities_of_their_space_only(
    graph, client_for, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    alpha = client_for(create_api_key(space_name="alpha")[1])
    beta = client_for(create_api_key(space_name="beta")[1])
    with django_capture_on_commit_callbacks(execute=True):
        saved = alpha.post(
            "/api/v1/memory/facts",
            {"text": "The harbour master of Portree is Eilidh"},
            content_type="application/json",
        )
    key = f"engram/alpha/{saved.json()['id']}"
    read = client.call_tool(graph, "open_nodes", {"names": [key]})
    assert "Eilidh" in read.content[0].text  # type: ignore[union-attr]
    assert key in [r["source"]["provider_id"] for r in _provider_results(alpha, "Eilidh")]
    assert _provider_results(beta, "Eilidh") == []
