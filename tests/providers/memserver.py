"""A small memory server for the provider tests, written with the MCP SDK's
MCPServer: a few seeded notes, word-overlap search, a save tool, a tool
that always fails and one that adds two numbers.

    python tests/providers/memserver.py                # stdio
    python tests/providers/memserver.py --http PORT    # Streamable HTTP at /mcp
    python tests/providers/memserver.py --http PORT --token T   # X-Token: T required

MEMSERVER_DELAY (seconds) holds every search back that long, and each
search appends a line to the file MEMSERVER_CALLS names, so a test can
count the calls that reached the server."""

from __future__ import annotations

import argparse
import os
import re
import time
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

NOTES: dict[str, str] = {
    "n1": "The lighthouse keeper on Skye is named Morag",
    "n2": "Project Zephyr ships its releases on Fridays",
    "n3": "The office plant is a fiddle-leaf fig called Gerald",
}

server = MCPServer(
    "memserver", instructions="Test notes for Engram's provider tests.", log_level="WARNING"
)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 2}


@server.tool(description="Search the notes by their words.")
async def search(query: str, limit: int = 5) -> dict[str, Any]:
    calls = os.environ.get("MEMSERVER_CALLS")
    if calls:
        with open(calls, "a") as f:
            f.write(query + "\n")
    delay = float(os.environ.get("MEMSERVER_DELAY", "0") or 0)
    if delay:
        await anyio.sleep(delay)
    wanted = _words(query)
    scored = sorted(
        ((len(wanted & _words(text)), key, text) for key, text in NOTES.items()),
        key=lambda s: (-s[0], s[1]),
    )
    return {"results": [{"id": key, "text": text} for n, key, text in scored if n][:limit]}


@server.tool(description="Save a note under an id.")
def remember(text: str, id: str = "") -> str:
    key = id or f"n{len(NOTES) + 1}"
    NOTES[key] = text
    return f"saved {key}"


@server.tool(description="Always fails, with the reason given.")
def fail(reason: str) -> str:
    raise ToolError(f"refused: {reason}")


@server.tool(description="Add two numbers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="The server's process id and clock.")
def ping() -> dict[str, Any]:
    return {"pid": os.getpid(), "time": time.time()}


def _http_app(token: str) -> Any:
    """The Streamable HTTP app; with a token, requests without the header
    `X-Token: <token>` are refused with 401."""
    app = server.streamable_http_app(host="127.0.0.1")
    if not token:
        return app

    async def gate(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"x-token") != token.encode():
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"token required"})
            return
        await app(scope, receive, send)

    return gate


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0, help="serve Streamable HTTP on this port")
    parser.add_argument("--token", default="", help="over HTTP, require the header X-Token")
    options = parser.parse_args()
    if options.http:
        import uvicorn

        uvicorn.run(
            _http_app(options.token), host="127.0.0.1", port=options.http, log_level="warning"
        )
    else:
        server.run()
