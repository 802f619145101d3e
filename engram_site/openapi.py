"""The error answers every operation really gives, in the OpenAPI schema.

django-ninja documents only the statuses an operation declares, and ours
declare their success. The errors come from shared places instead (the key
check, the JSON body parser, validation, the handlers in engram_site.api), so
they are documented from one place too: the schema of each operation gains
the error statuses that follow from what it takes (a body, parameters, a
key). An operation whose services raise something more (a 409, a 404 for an
id in its body) marks its view with `raises(...)`; what it declares in its
own `response={...}` is kept as declared."""

from __future__ import annotations

from collections.abc import Callable
from http.client import responses as http_responses
from typing import Any, TypeVar

from ninja import NinjaAPI, Schema
from ninja.openapi.schema import OpenAPISchema
from ninja.operation import Operation
from ninja.types import DictStrAny
from pydantic import Field

F = TypeVar("F", bound=Callable[..., Any])


class FieldErrorOut(Schema):
    field: str
    message: str
    type: str = ""


class ErrorOut(Schema):
    """Every error under /api/: what went wrong, naming the field."""

    detail: str
    errors: list[FieldErrorOut] | None = Field(
        default=None, description="Validation errors (422): one entry per field."
    )


def _sources(operation: Operation) -> set[str]:
    return {
        getattr(model, "__ninja_param_source__", "")
        for model in getattr(operation.signature, "models", [])
    }


def _reads_body(operation: Operation) -> bool:
    # POST /tools/{name} reads its body itself: its arguments are the tool's.
    return "body" in _sources(operation) or bool(getattr(operation, "reads_body", False))


def error_statuses(operation: Operation) -> list[int]:
    """The error statuses `operation` answers through the shared machinery."""
    sources = _sources(operation)
    statuses: list[int] = []
    if _reads_body(operation):
        statuses.append(400)  # the body is not UTF-8 or not JSON
    if operation.auth_callbacks:
        statuses.append(401)  # missing, unknown or revoked key
    if "path" in sources:
        statuses.append(404)  # an id of another space, or none at all
    if _reads_body(operation):
        statuses.append(413)  # over ENGRAM_MAX_BODY_BYTES
    if sources or _reads_body(operation):
        statuses.append(422)  # validation, named per field
    if operation.auth_callbacks:
        statuses.append(429)  # over ENGRAM_RATE_LIMIT (per key, or per address without one)
    return statuses


def raises(*statuses: int) -> Callable[[F], F]:
    """Mark an operation's view with the error statuses its services raise
    beyond the shared ones (a 404 for an id in the body, a 409), so its
    schema documents them. Put it below the router decorator."""

    def mark(view: F) -> F:
        view.__dict__.setdefault("engram_raises", set()).update(statuses)
        return view

    return mark


class _Schema(OpenAPISchema):
    def responses(self, operation: Operation) -> dict[int, DictStrAny]:
        result = super().responses(operation)
        wanted = set(error_statuses(operation))
        wanted |= getattr(operation.view_func, "engram_raises", set())
        # Wrapped the way ninja wraps a declared response model.
        error_model = operation._create_response_model(ErrorOut)
        assert error_model is not None
        for status in sorted(wanted - set(result)):
            schema = self._create_schema_from_model(  # type: ignore[type-var]
                error_model, by_alias=operation.by_alias, mode="serialization"
            )[0]
            result[status] = {
                "description": http_responses.get(status, "Error"),
                "content": {self.api.renderer.media_type: {"schema": schema}},
            }
            if status == 429:
                result[status]["headers"] = {
                    "Retry-After": {
                        "description": "Seconds until the key may call again.",
                        "schema": {"type": "integer"},
                    }
                }
        return dict(sorted(result.items()))


class DocumentedAPI(NinjaAPI):
    """NinjaAPI whose schema lists the error answers of every operation."""

    def get_openapi_schema(
        self, *, path_prefix: str | None = None, path_params: DictStrAny | None = None
    ) -> OpenAPISchema:
        if path_prefix is None:
            path_prefix = self.get_root_path(path_params or {})
        return _Schema(self, path_prefix)


def markdown_alternative() -> dict[str, Any]:
    """openapi_extra for an operation whose 200 may also be Markdown."""
    return {
        "responses": {
            200: {
                "description": "JSON, or Markdown with format=markdown",
                "content": {"text/markdown": {"schema": {"type": "string"}}},
            }
        }
    }
