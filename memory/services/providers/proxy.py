"""Tools mode: a provider's tools in Engram's tool lists (GET /api/v1/tools
and the MCP server), named `<provider>.<tool>`, and calls to them passed
through. Listed and callable only for the spaces the provider allows.

A listing is remembered for LISTING_TTL_SECONDS (a tool list is
configuration, the same for every space), and the last one stays listed
while the provider is away; a call always reaches the provider. What the
provider answers is passed on as it is: content blocks and structured
content."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import mcp_types as types

from memory.errors import BadGateway, NotFound, Unavailable
from memory.services import providers
from memory.services.providers import client, results
from memory.services.providers.config import Provider

log = logging.getLogger(__name__)

SEPARATOR = "."
# OpenAI's and Anthropic's function names allow only [a-zA-Z0-9_-]: their
# manifests join provider and tool with this instead, and calls take either.
FUNCTION_SEPARATOR = "__"
LISTING_TTL_SECONDS = 60.0

_lock = threading.Lock()
_listed: dict[str, tuple[float, list[types.Tool]]] = {}


def _usable(space_name: str) -> list[Provider]:
    return [p for p in providers.configured() if p.tools and p.allows(space_name)]


def listing(provider: Provider) -> list[types.Tool]:
    """The provider's tools, asked again once the last listing is stale;
    while it cannot answer, the last one it gave (or none)."""
    with _lock:
        known = _listed.get(provider.name)
    if known is not None and time.monotonic() - known[0] < LISTING_TTL_SECONDS:
        return known[1]
    try:
        tools = client.list_tools(provider)
    except client.ProviderError as exc:
        log.warning("provider %s: tools not listed: %s", provider.name, exc.detail)
        return known[1] if known is not None else []
    with _lock:
        _listed[provider.name] = (time.monotonic(), tools)
    return tools


def forget_listings() -> None:
    with _lock:
        _listed.clear()


def any_configured() -> bool:
    return any(p.tools for p in providers.configured())


def tools(space_name: str) -> list[tuple[Provider, types.Tool]]:
    return [(p, t) for p in _usable(space_name) for t in listing(p)]


def full_name(provider: Provider, tool: types.Tool) -> str:
    return f"{provider.name}{SEPARATOR}{tool.name}"


def canonical(name: str) -> str:
    """`<provider>.<tool>` for a name in either spelling (`<provider>__<tool>`
    as a function-calling manifest lists it); any other name unchanged."""
    if SEPARATOR in name:
        return name
    provider_name, sep, tool_name = name.partition(FUNCTION_SEPARATOR)
    if sep and tool_name and providers.named(provider_name) is not None:
        return f"{provider_name}{SEPARATOR}{tool_name}"
    return name


def is_proxied(name: str) -> bool:
    return SEPARATOR in canonical(name)


def _hints(tool: types.Tool) -> tuple[bool, bool]:
    ann = tool.annotations
    read_only = bool(ann and ann.read_only_hint)
    # MCP's default for a tool that is not read-only is "destructive".
    destructive = (
        bool(ann.destructive_hint) if ann and ann.destructive_hint is not None else not read_only
    )
    return read_only, destructive


def manifest(space_name: str, fmt: str) -> list[dict[str, Any]]:
    """The space's proxied tools in one of the registry's manifest formats."""
    out: list[dict[str, Any]] = []
    for provider, tool in tools(space_name):
        name = full_name(provider, tool)
        function = f"{provider.name}{FUNCTION_SEPARATOR}{tool.name}"
        description = f"[{provider.name}] {tool.description or tool.title or tool.name}"
        schema = tool.input_schema or {"type": "object", "properties": {}}
        if fmt == "openai":
            out.append(
                {
                    "type": "function",
                    "function": {
                        "name": function,
                        "description": description,
                        "parameters": schema,
                    },
                }
            )
        elif fmt == "anthropic":
            out.append({"name": function, "description": description, "input_schema": schema})
        else:
            read_only, destructive = _hints(tool)
            out.append(
                {
                    "name": name,
                    "title": tool.title or tool.name,
                    "description": description,
                    "parameters": schema,
                    "result": tool.output_schema or {},
                    "read_only": read_only,
                    "destructive": destructive,
                    "examples": [],
                    "method": "POST",
                    "path": f"/api/v1/tools/{name}",
                    "provider": provider.name,
                }
            )
    return out


def mcp_tools(space_name: str) -> list[types.Tool]:
    """The space's proxied tools for Engram's MCP server, renamed."""
    return [
        tool.model_copy(update={"name": full_name(provider, tool)})
        for provider, tool in tools(space_name)
    ]


def input_schema(name: str) -> dict[str, Any] | None:
    """A proxied tool's input schema from the last listing (None: unknown)."""
    name = canonical(name)
    provider_name, _, tool_name = name.partition(SEPARATOR)
    with _lock:
        known = _listed.get(provider_name)
    for tool in known[1] if known else []:
        if tool.name == tool_name:
            return tool.input_schema
    return None


def resolve(space_name: str, name: str) -> tuple[Provider, str]:
    """The provider and its tool for `<provider>.<tool>`, if the space may
    use it; NotFound otherwise (the same answer as for any unknown tool)."""
    name = canonical(name)
    provider_name, _, tool_name = name.partition(SEPARATOR)
    provider = providers.named(provider_name)
    if provider is None or not provider.tools or not provider.allows(space_name) or not tool_name:
        raise NotFound(f"no tool named {name!r}")
    return provider, tool_name


def call_raw(space_name: str, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """The provider's own answer (an error result included); Unavailable
    when it cannot be reached."""
    provider, tool = resolve(space_name, name)
    try:
        return client.call_tool(provider, tool, arguments)
    except client.ProviderError as exc:
        if exc.unavailable and not _answered(exc):
            raise Unavailable(f"provider {provider.name} is unavailable: {exc.detail}") from None
        raise BadGateway(f"provider {provider.name}: {tool} failed: {exc.detail}") from None


def _answered(exc: client.ProviderError) -> bool:
    # An MCP error from the server (unknown tool, bad params) is an answer.
    from mcp.shared.exceptions import MCPError

    return isinstance(exc.__cause__, MCPError)


def call(space_name: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """POST /api/v1/tools/<provider>.<tool>: the answer as JSON; a tool
    error is BadGateway (502) with what the provider said."""
    provider, tool = resolve(space_name, name)
    answer = call_raw(space_name, name, arguments)
    if answer.is_error:
        raise BadGateway(f"provider {provider.name}: {tool} failed: {results.error_text(answer)}")
    return {
        "provider": provider.name,
        "tool": tool,
        "content": [
            block.model_dump(mode="json", by_alias=True, exclude_none=True)
            for block in answer.content
        ],
        "structured_content": answer.structured_content,
    }
