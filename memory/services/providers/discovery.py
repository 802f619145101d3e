"""Which of a provider's tools prefetch and mirroring call, and with what
arguments, read from the tools' input schemas: a provider is any MCP server,
and the configuration only has to name a tool when the usual names miss."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mcp_types as types

# Tried in order when search_tool / mirror_tool is not set.
SEARCH_TOOLS = ("search_nodes", "search", "search_memory", "search_memories", "recall", "query")
SAVE_TOOLS = ("add_memory", "save_memory", "remember", "store", "add", "create_entities")
QUERY_ARGS = ("query", "q", "text", "search", "prompt")
TEXT_ARGS = ("text", "content", "memory", "fact", "data", "message")
LIMIT_ARGS = ("limit", "k", "top_k", "max_results", "n")


def pick(tools: Sequence[types.Tool], configured: str, usual: Sequence[str]) -> types.Tool | None:
    by_name = {t.name: t for t in tools}
    if configured:
        return by_name.get(configured)
    return next((by_name[n] for n in usual if n in by_name), None)


def _props(tool: types.Tool) -> tuple[dict[str, Any], list[str]]:
    schema = tool.input_schema or {}
    props = schema.get("properties") or {}
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    return (props if isinstance(props, dict) else {}), required


def _string_arg(tool: types.Tool, preferred: Sequence[str]) -> str | None:
    props, required = _props(tool)
    for name in preferred:
        if name in props:
            return name
    strings = [n for n, p in props.items() if isinstance(p, dict) and p.get("type") == "string"]
    return next((n for n in required if n in strings), strings[0] if strings else None)


def search_arguments(tool: types.Tool, query: str, limit: int) -> dict[str, Any] | None:
    """The search tool's arguments for a query; None if it takes no string."""
    arg = _string_arg(tool, QUERY_ARGS)
    if arg is None:
        return None
    out: dict[str, Any] = {arg: query}
    props, _ = _props(tool)
    for name in LIMIT_ARGS:
        if isinstance(props.get(name), dict) and props[name].get("type") == "integer":
            out[name] = limit
            break
    return out


def save_arguments(tool: types.Tool, *, key: str, text: str) -> dict[str, Any] | None:
    """The save tool's arguments for one fact, `key` being its stable name
    at the provider; None when the tool's shape is not one we can fill."""
    if tool.name == "create_entities":  # the reference knowledge-graph server
        return {"entities": [{"name": key, "entityType": "engram_fact", "observations": [text]}]}
    arg = _string_arg(tool, TEXT_ARGS)
    if arg is None:
        return None
    out: dict[str, Any] = {arg: text}
    props, _ = _props(tool)
    for name in ("id", "key", "memory_id"):
        if name in props and name != arg:
            out[name] = key
            break
    return out
