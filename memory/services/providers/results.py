"""A provider's tool answer read as recall items: (provider id, text) pairs.

Memory servers answer in many shapes. This reads the common ones: JSON (the
structured content, or a text block holding JSON) that is a list of items
or an object with one list of them (results, memories, entities, ...); an
item is a string or an object whose text is under a usual key, or, for a
knowledge-graph entity, its name, type and observations. A text block that
is not JSON is one item."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types

LIST_KEYS = ("results", "memories", "items", "entities", "nodes", "documents", "hits", "data")
TEXT_KEYS = ("text", "memory", "content", "fact", "summary", "value", "document", "body")
ID_KEYS = ("id", "memory_id", "uuid", "name", "key")
MAX_TEXT = 2000


@dataclass(frozen=True)
class Item:
    id: str
    text: str


def _text_of(entry: dict[str, Any]) -> str:
    for key in TEXT_KEYS:
        value = entry.get(key)
        if isinstance(value, str) and value.strip():
            return value
    observations = entry.get("observations")
    if isinstance(observations, list):  # a knowledge-graph entity
        said = "; ".join(str(o) for o in observations if isinstance(o, str | int | float))
        kind = entry.get("entityType") or entry.get("type")
        head = f"{entry.get('name', '')}" + (f" ({kind})" if kind else "")
        return f"{head}: {said}" if said else head
    name = entry.get("name")
    return name if isinstance(name, str) else ""


def _id_of(entry: dict[str, Any]) -> str:
    for key in ID_KEYS:
        value = entry.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return ""


def _entries(data: Any) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in LIST_KEYS:
            if isinstance(data.get(key), list):
                return list(data[key])
        if "result" in data:  # FastMCP-style wrapped return values
            return _entries(data["result"])
        if _text_of(data):
            return [data]
    return [data] if isinstance(data, str) else []


def _items(data: Any) -> list[Item]:
    out = []
    for entry in _entries(data):
        if isinstance(entry, str):
            text, pid = entry, ""
        elif isinstance(entry, dict):
            text, pid = _text_of(entry), _id_of(entry)
        else:
            continue
        text = " ".join(text.split())[:MAX_TEXT]
        if text:
            out.append(Item(id=pid, text=text))
    return out


def read(result: types.CallToolResult) -> list[Item]:
    if result.structured_content is not None:
        found = _items(result.structured_content)
        if found:
            return found
    out: list[Item] = []
    for block in result.content:
        if not isinstance(block, types.TextContent) or not block.text.strip():
            continue
        try:
            data = json.loads(block.text)
        except ValueError:
            data = block.text
        out += _items(data)
    return out


def error_text(result: types.CallToolResult) -> str:
    """What a tool that reported an error said, in one line."""
    said = " ".join(
        b.text for b in result.content if isinstance(b, types.TextContent) and b.text.strip()
    )
    return " ".join(said.split())[:300] or "the tool reported an error"
