"""The tool registry over MCP, with the official Python SDK's low-level
server: every registered tool (with its input and output schemas and the
readOnlyHint / destructiveHint annotations), core memory as resources and
/context as a prompt. Two transports share one server definition:

- stdio, for `python manage.py mcp --space NAME`: one fixed space;
- Streamable HTTP at /mcp in the ASGI app (`http_app()`): stateless, JSON
  responses, each request authenticated with its Bearer key like the REST
  API, and its Host and Origin checked against ENGRAM_ALLOWED_HOSTS.

The handlers are one-liners over memory.tools.registry; the ORM runs in a
worker thread. An external provider's tools (tools mode) are listed for the
spaces it allows as `<provider>.<tool>` and passed through to it
(memory.services.providers.proxy)."""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread
import mcp_types as types
from django.conf import settings
from django.db import close_old_connections
from django.http.request import split_domain_port, validate_host
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from engram_site import ratelimit
from memory.errors import EngramError
from memory.models import ApiKey
from memory.services.providers import proxy
from memory.services.scopes import linked_user_space
from memory.tools import registry

INSTRUCTIONS = (
    "Engram is your long-term memory. Search it (memory_search) before answering anything "
    "that depends on the past and check the evidence with memory_assess; save what will "
    "matter later (memory_save). memory_guide explains the tools."
)
CORE_URIS = {"engram://core/user": "user", "engram://core/agent": "agent"}

ContextFor = Callable[[ServerRequestContext[Any]], Awaitable[registry.ToolContext]]


async def in_thread(fn: Callable[[], Any]) -> Any:
    """Run ORM work off the event loop, with Django's per-request connection care."""

    def run() -> Any:
        close_old_connections()
        try:
            return fn()
        finally:
            close_old_connections()

    return await anyio.to_thread.run_sync(run)


@functools.cache
def _tools() -> tuple[types.Tool, ...]:
    return tuple(
        types.Tool(
            name=t.name,
            title=t.title,
            description=t.description,
            input_schema=t.input_schema(),
            output_schema=t.output_schema(),
            annotations=types.ToolAnnotations(
                title=t.title,
                read_only_hint=t.read_only,
                destructive_hint=t.destructive,
                open_world_hint=False,
            ),
        )
        for t in registry.all_tools()
    )


def tool_list() -> list[types.Tool]:
    return list(_tools())


def input_schema(name: str) -> dict[str, Any] | None:
    if proxy.is_proxied(name):
        return proxy.input_schema(name)
    try:
        return registry.get(name).input_schema()
    except EngramError:
        return None


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


async def _call_proxied(
    ctx: registry.ToolContext, name: str, arguments: Any
) -> types.CallToolResult:
    # The provider's own answer, error results included, as it gave it.
    if arguments is not None and not isinstance(arguments, dict):
        return _error(f"invalid arguments for {name}: must be a JSON object")
    try:
        answer: types.CallToolResult = await in_thread(
            lambda: proxy.call_raw(ctx.space.name, name, arguments or {})
        )
    except EngramError as exc:
        return _error(exc.detail)
    return answer


async def call(ctx: registry.ToolContext, name: str, arguments: Any) -> types.CallToolResult:
    if proxy.is_proxied(name):
        return await _call_proxied(ctx, name, arguments)
    try:
        result = await in_thread(lambda: registry.call(name, ctx=ctx, arguments=arguments))
    except registry.ToolArgumentError as exc:
        return _error(f"invalid arguments for {name}: {exc.detail}")
    except EngramError as exc:
        return _error(exc.detail)
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(result, ensure_ascii=False))],
        structured_content=result,
    )


def build_server(context_for: ContextFor) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tool_ctx = await context_for(ctx)
        proxied = (
            await in_thread(lambda: proxy.mcp_tools(tool_ctx.space.name))
            if proxy.any_configured()
            else []
        )
        return types.ListToolsResult(tools=tool_list() + proxied)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await call(await context_for(ctx), params.name, params.arguments)

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    name=f"core-{label}",
                    title=f"Core memory: {label} block",
                    uri=uri,
                    description=f"The {label} block of core memory, in every prompt.",
                    mime_type="text/plain",
                )
                for uri, label in CORE_URIS.items()
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        from mcp.shared.exceptions import MCPError

        from memory.services import core

        label = CORE_URIS.get(str(params.uri))
        if label is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown resource {params.uri}")
        tool_ctx = await context_for(ctx)
        text = await in_thread(lambda: core.get_block(space=tool_ctx.space, label=label).text)
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(uri=str(params.uri), mime_type="text/plain", text=text)
            ]
        )

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name="context",
                    title="Memory context",
                    description="The block to put in the system prompt this turn: core "
                    "memory, the host environment and memory recalled for the query.",
                    arguments=[
                        types.PromptArgument(
                            name="query", description="The user's message.", required=False
                        ),
                        types.PromptArgument(
                            name="session_id",
                            description="The conversation, for the memory_assess reminder.",
                            required=False,
                        ),
                    ],
                )
            ]
        )

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        from mcp.shared.exceptions import MCPError

        from memory.services.context import build_context

        if params.name != "context":
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown prompt {params.name}")
        tool_ctx = await context_for(ctx)
        arguments = params.arguments or {}
        built = await in_thread(
            lambda: build_context(
                space=tool_ctx.space,
                query=arguments.get("query", ""),
                session_id=arguments.get("session_id") or None,
                user_space=tool_ctx.user_space,
            )
        )
        return types.GetPromptResult(
            description="Engram memory context",
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(text=built["text"]))
            ],
        )

    return Server(
        "engram",
        version="1",
        title="Engram memory",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


# --- stdio -----------------------------------------------------------------------------------


async def serve_stdio(ctx: registry.ToolContext) -> None:
    from mcp.server.stdio import stdio_server

    async def fixed(_: ServerRequestContext[Any]) -> registry.ToolContext:
        return ctx

    server = build_server(fixed)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


# --- Streamable HTTP -----------------------------------------------------------------------------

KEY_SCOPE = "engram.api_key"


async def _from_request(ctx: ServerRequestContext[Any]) -> registry.ToolContext:
    key = ctx.request.scope.get(KEY_SCOPE) if ctx.request is not None else None
    if not isinstance(key, ApiKey):  # BearerGate lets no request through without one
        from mcp.shared.exceptions import MCPError

        raise MCPError(code=types.INVALID_REQUEST, message="missing API key")
    return registry.ToolContext(
        space=key.space, actor=f"mcp:{key.prefix}", user_space=linked_user_space(key)
    )


def _host_allowed(value: str) -> bool:
    domain, _port = split_domain_port(value)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


def _origin_allowed(origin: str) -> bool:
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and _host_allowed(parts.netloc)


async def _json(send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _counted_key(scheme: str, token: str, address: str) -> ApiKey | None:
    """The key for the token, counted against the rate limits as under
    /api/: per key, or per client address when there is no valid key."""
    from memory.services.spaces import authenticate

    key = authenticate(token) if scheme.lower() == "bearer" and token else None
    if key is None:
        ratelimit.check_address(address)
    else:
        ratelimit.check_key(key.prefix)
    return key


class BearerGate:
    """In front of the SDK's app: Host and Origin against ENGRAM_ALLOWED_HOSTS
    (DNS-rebinding protection), then the Bearer key, whose space the tools act in."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if not _host_allowed(headers.get("host", "")):
            await _json(send, 421, "host not allowed (ENGRAM_ALLOWED_HOSTS)", [])
            return
        origin = headers.get("origin")
        if origin and not _origin_allowed(origin):
            await _json(send, 403, "origin not allowed (ENGRAM_ALLOWED_HOSTS)", [])
            return
        scheme, _, token = headers.get("authorization", "").partition(" ")
        client = scope.get("client") or ("unknown", 0)
        try:
            key = await in_thread(lambda: _counted_key(scheme, token.strip(), str(client[0])))
        except ratelimit.RateLimited as exc:
            await _json(send, 429, exc.detail, [(b"retry-after", str(exc.retry_after).encode())])
            return
        if key is None:
            await _json(
                send,
                401,
                "missing, unknown or revoked API key",
                [(b"www-authenticate", b'Bearer realm="engram"')],
            )
            return
        await self.app({**scope, KEY_SCOPE: key}, receive, send)


def http_app() -> ASGIApp:
    """The Starlette app serving /mcp (its lifespan runs the session manager)."""
    tool_list()  # build the schemas now, not on the first call
    server = build_server(_from_request)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        max_request_body_size=int(settings.MAX_BODY_BYTES),
        # BearerGate checks Host and Origin against the Django allowlist.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return app
