"""The tool registry: each agent tool declared once (name, LLM-facing
description, pydantic arguments and result with bounds, read-only or
destructive, examples) and served from that one declaration by the REST
endpoint POST /api/v1/tools/{name}, the GET /tools manifests and MCP.

Adapters never hold logic: they build a ToolContext, hand `call()` the raw
JSON arguments and serialise what it answers. Bad arguments raise
ToolArgumentError naming each field; domain errors (NotFound, Invalid,
Conflict) pass through unchanged for the adapter to map."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from memory.errors import NotFound
from memory.models import Space


class ToolArgs(BaseModel):
    """Arguments of a tool: unknown fields are errors, so a misspelt argument
    is named instead of silently ignored."""

    model_config = ConfigDict(extra="forbid")


class ToolResult(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class ToolContext:
    """Who calls: the space every read and write is confined to, and the
    actor recorded in the audit log."""

    space: Space
    actor: str
    # A key linked to a user space (memory.services.scopes): reads fuse both,
    # writes may ask for scope "user". Empty/None: the one space.
    user_space: Space | None = None

    @property
    def read_spaces(self) -> tuple[Space, ...]:
        from memory.services.scopes import readable

        return readable(self.space, self.user_space)


A = TypeVar("A", bound=ToolArgs)
R = TypeVar("R", bound=ToolResult)


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    description: str
    args: type[ToolArgs]
    result: type[ToolResult]
    fn: Callable[[ToolContext, Any], Any]
    read_only: bool
    destructive: bool
    examples: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    # Schemas are built once per process: pydantic's schema generation costs
    # milliseconds per model, and MCP asks for the tool list on every call.
    def input_schema(self) -> dict[str, Any]:
        return _schema(self.args, "validation")

    def output_schema(self) -> dict[str, Any]:
        return _schema(self.result, "serialization")


class ToolArgumentError(Exception):
    """The arguments do not fit the tool's schema; `errors` names each field."""

    def __init__(self, tool: str, errors: list[dict[str, str]]) -> None:
        self.tool = tool
        self.errors = errors
        self.detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
        super().__init__(self.detail)


_TOOLS: dict[str, Tool] = {}


def tool(
    name: str,
    *,
    title: str,
    description: str,
    result: type[R],
    read_only: bool,
    destructive: bool = False,
    examples: tuple[dict[str, Any], ...] = (),
) -> Callable[[Callable[[ToolContext, A], Any]], Callable[[ToolContext, A], Any]]:
    """Register a tool. The decorated function takes (ctx, args) with args an
    instance of the ToolArgs subclass its annotation names."""

    def register(fn: Callable[[ToolContext, A], Any]) -> Callable[[ToolContext, A], Any]:
        args_type = fn.__annotations__.get("args")
        if isinstance(args_type, str):
            args_type = fn.__globals__[args_type]
        assert isinstance(args_type, type) and issubclass(args_type, ToolArgs), name
        assert name not in _TOOLS, f"tool {name} declared twice"
        _TOOLS[name] = Tool(
            name=name,
            title=title,
            description=description,
            args=args_type,
            result=result,
            fn=fn,
            read_only=read_only,
            destructive=destructive,
            examples=examples,
        )
        return fn

    return register


def _loaded() -> dict[str, Tool]:
    # The tool modules register themselves on import.
    from memory.tools import catalog  # noqa: F401

    return _TOOLS


def all_tools() -> list[Tool]:
    return list(_loaded().values())


def get(name: str) -> Tool:
    found = _loaded().get(name)
    if found is None:
        raise NotFound(f"no tool named {name!r}")
    return found


def field_errors(exc: ValidationError) -> list[dict[str, str]]:
    return [
        {
            "field": ".".join(str(p) for p in e.get("loc", ())) or "arguments",
            "message": e.get("msg", "invalid"),
            "type": e.get("type", ""),
        }
        for e in exc.errors()
    ]


def parse(found: Tool, arguments: Any) -> ToolArgs:
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ToolArgumentError(
            found.name, [{"field": "arguments", "message": "must be a JSON object", "type": ""}]
        )
    try:
        return found.args.model_validate(arguments)
    except ValidationError as exc:
        raise ToolArgumentError(found.name, field_errors(exc)) from None


def call(name: str, *, ctx: ToolContext, arguments: Any) -> dict[str, Any]:
    """Run one tool and answer its JSON-ready result."""
    found = get(name)
    args = parse(found, arguments)
    out = found.fn(ctx, args)
    model = out if isinstance(out, found.result) else found.result.model_validate(out)
    return model.model_dump(mode="json")


# --- JSON schemas for function calling ------------------------------------------------------


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    """Resolve $defs references in place: LLM function-calling schemas and
    some MCP clients do not follow $ref."""
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = copy.deepcopy(defs[ref.split("/")[-1]])
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return walk({**target, **rest})
        return {k: walk(v) for k, v in node.items()}

    return walk(schema)  # type: ignore[no-any-return]


def _clean(node: Any) -> Any:
    """No titles, Optional[X] as X."""
    if isinstance(node, list):
        return [_clean(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _clean(v) for k, v in node.items() if k != "title"}
    variants = out.get("anyOf")
    if isinstance(variants, list):
        non_null = [v for v in variants if v != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(variants):
            out.pop("anyOf")
            out = {**non_null[0], **out}
    if "default" in out and out["default"] is None:
        out.pop("default")
    return out


@functools.cache
def _schema(model: type[BaseModel], mode: str) -> dict[str, Any]:
    if mode == "validation":
        return function_schema(model)
    return _nullable(_inline(copy.deepcopy(model.model_json_schema(mode="serialization"))))


def _nullable(node: Any) -> Any:
    """anyOf [X, null] as type [X, "null"]: the same constraint, and an MCP
    client validates every result against it, one type check instead of two
    subschemas per nullable field."""
    if isinstance(node, list):
        return [_nullable(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _nullable(v) for k, v in node.items()}
    variants = out.get("anyOf")
    if isinstance(variants, list) and len(variants) == 2 and {"type": "null"} in variants:
        other = next(v for v in variants if v != {"type": "null"})
        if isinstance(other.get("type"), str) and "enum" not in other and "const" not in other:
            out.pop("anyOf")
            out = {**other, **out, "type": [other["type"], "null"]}
    return out


def function_schema(model: type[BaseModel]) -> dict[str, Any]:
    raw = _inline(copy.deepcopy(model.model_json_schema()))
    raw.pop("description", None)
    cleaned: dict[str, Any] = _clean(raw)
    cleaned.setdefault("properties", {})
    cleaned.setdefault("required", [])
    cleaned["additionalProperties"] = False
    return cleaned


@functools.cache
def manifest(fmt: str = "engram") -> list[dict[str, Any]]:
    """The tool list in one of the manifest formats (built once; do not mutate)."""
    tools = all_tools()
    if fmt == "openai":
        return [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema(),
                },
            }
            for t in tools
        ]
    if fmt == "anthropic":
        return [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema()}
            for t in tools
        ]
    return [
        {
            "name": t.name,
            "title": t.title,
            "description": t.description,
            "parameters": t.input_schema(),
            "result": t.output_schema(),
            "read_only": t.read_only,
            "destructive": t.destructive,
            "examples": list(t.examples),
            "method": "POST",
            "path": f"/api/v1/tools/{t.name}",
        }
        for t in tools
    ]
