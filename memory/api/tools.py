"""The tool registry over REST: POST /api/v1/tools/{name} runs a tool with
its JSON arguments, GET /api/v1/tools lists every tool in the engram, openai
or anthropic shape. One-liners over memory.tools; an external provider's
tools (tools mode) are listed and called as `<provider>.<tool>` through
memory.services.providers.proxy."""

from __future__ import annotations

import json
from typing import Any, Literal

from django.http import HttpResponse
from ninja import Query, Router, Schema

from engram_site.jsonbody import BodyError, read_object
from engram_site.openapi import raises
from engram_site.types import SpaceRequest
from memory.errors import Invalid
from memory.services.providers import proxy
from memory.tools import registry

router = Router(tags=["agent tools"])


class ToolsQuery(Schema):
    format: Literal["engram", "openai", "anthropic"] = "engram"


@router.get("/tools", response=dict[str, Any])
def list_tools(request: SpaceRequest, params: Query[ToolsQuery]) -> dict[str, Any]:
    return {
        "tools": registry.manifest(params.format)
        + proxy.manifest(request.space.name, params.format)
    }


def context(request: SpaceRequest) -> registry.ToolContext:
    return registry.ToolContext(
        space=request.space,
        actor=f"api:{request.api_key.prefix}",
        user_space=request.user_space,
    )


@router.post("/tools/{name}", response=dict[str, Any])
@raises(404, 409, 413, 502, 503)  # a tool's own not-found and conflicts; its body; a provider's
def run_tool(request: SpaceRequest, name: str) -> Any:
    proxied = proxy.is_proxied(name)
    # An unknown tool is a 404 before the body is read.
    if proxied:
        proxy.resolve(request.space.name, name)
    else:
        registry.get(name)
    # The same reading as every other body (an object, numbers in range),
    # answered 422 as this endpoint always has for arguments it cannot read.
    try:
        arguments = read_object(request.body or b"{}")
    except BodyError as exc:
        raise Invalid(exc.detail) from None
    if proxied:
        return proxy.call(request.space.name, name, arguments)
    try:
        return registry.call(name, ctx=context(request), arguments=arguments)
    except registry.ToolArgumentError as exc:
        return HttpResponse(
            json.dumps({"detail": exc.detail, "errors": exc.errors}),
            status=422,
            content_type="application/json",
        )
