"""The NinjaAPI root at /api/v1: bearer-key auth bound to a space, error
handlers that turn bad input into 4xx answers naming the field, and one
router per area."""

from __future__ import annotations

from typing import Any, cast

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, ValidationError
from ninja.security import HttpBearer

from engram_site.types import SpaceRequest
from memory.errors import EngramError
from memory.models import ApiKey
from memory.services.spaces import authenticate


class ApiKeyAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> ApiKey | None:
        key = authenticate(token)
        if key is None:
            return None
        # From here on the request is a SpaceRequest: operations declare it so.
        space_request = cast(SpaceRequest, request)
        space_request.space = key.space
        space_request.api_key = key
        return key


api = NinjaAPI(
    title="Engram",
    version="1",
    description="Long-term memory for AI agents. Authenticate with `Authorization: Bearer <key>`.",
    auth=ApiKeyAuth(),
    urls_namespace="api-v1",
)


_SOURCES = ("body", "query", "path", "header", "cookie", "form", "file")


def _loc(error: dict[str, Any]) -> str:
    # ninja reports (source, [argument name,] field, ...): ("body", "payload", "text")
    # or ("query", "k"). Only the leading location is dropped, so a field that
    # happens to be called "path" or "query" keeps its name.
    loc = [str(p) for p in error.get("loc", ())]
    if loc and loc[0] in _SOURCES:
        source, loc = loc[0], loc[1:]
        if source == "body" and len(loc) > 1:
            loc = loc[1:]  # the operation's argument name, e.g. "payload"
    return ".".join(loc) or "body"


@api.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = [
        {"field": _loc(e), "message": e.get("msg", "invalid"), "type": e.get("type", "")}
        for e in exc.errors
    ]
    summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return api.create_response(request, {"detail": summary, "errors": errors}, status=422)


@api.exception_handler(AuthenticationError)
def on_auth_error(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return api.create_response(
        request, {"detail": "missing, unknown or revoked API key"}, status=401
    )


@api.exception_handler(Http404)
def on_not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc) or "not found"}, status=404)


@api.exception_handler(EngramError)
def on_engram_error(request: HttpRequest, exc: EngramError) -> HttpResponse:
    return api.create_response(request, {"detail": exc.detail}, status=exc.status_code)


@api.exception_handler(RequestDataTooBig)
def on_too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return api.create_response(request, {"detail": "request body too large"}, status=413)


def _register_routers() -> None:
    from consolidation.api import router as consolidation_router
    from environment.api import router as environment_router
    from memory.api import routers as memory_routers

    for router in memory_routers:
        api.add_router("", router)
    api.add_router("", environment_router)
    api.add_router("", consolidation_router)


_register_routers()
