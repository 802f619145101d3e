"""The NinjaAPI root at /api/v1: bearer-key auth bound to a space, error
handlers that turn bad input into 4xx answers naming the field, and one
router per area."""

from __future__ import annotations

from typing import Any, cast

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from ninja import Swagger
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.parser import Parser
from ninja.security import HttpBearer

from engram_site import ratelimit
from engram_site.jsonbody import BodyError, read_object
from engram_site.openapi import DocumentedAPI
from engram_site.types import SpaceRequest
from memory.errors import EngramError
from memory.models import ApiKey
from memory.services import scopes
from memory.services.spaces import authenticate


class ApiKeyAuth(HttpBearer):
    def __call__(self, request: HttpRequest) -> ApiKey | None:
        key = super().__call__(request)
        if key is None:
            # No key, or not a valid one: counted per client address, so
            # guessing keys is as limited as using one.
            ratelimit.check_address(request.META.get("REMOTE_ADDR") or "unknown")
        return cast(ApiKey | None, key)

    def authenticate(self, request: HttpRequest, token: str) -> ApiKey | None:
        key = authenticate(token)
        if key is None:
            return None
        ratelimit.check_key(key.prefix)
        # From here on the request is a SpaceRequest: operations declare it so.
        space_request = cast(SpaceRequest, request)
        space_request.space = key.space
        space_request.api_key = key
        space_request.user_space = scopes.linked_user_space(key)
        space_request.read_spaces = scopes.readable(key.space, space_request.user_space)
        return key


class StrictJsonParser(Parser):
    """JSON bodies read by engram_site.jsonbody: the reason when they cannot
    be read, and only objects."""

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        return read_object(request.body)


api = DocumentedAPI(
    title="Engram",
    version="1",
    description="Long-term memory for AI agents. Authenticate with `Authorization: Bearer <key>`.",
    auth=ApiKeyAuth(),
    urls_namespace="api-v1",
    parser=StrictJsonParser(),
    # validatorUrl None: Swagger UI would otherwise send the schema's URL to
    # validator.swagger.io for a badge, a request to the internet.
    docs=Swagger(settings={"validatorUrl": None}),
)


_SOURCES = ("body", "query", "path", "header", "cookie", "form", "file")


def _loc(error: dict[str, Any]) -> str:
    # ninja reports (source, [argument name,] field, ...): ("body", "payload", "text")
    # or ("query", "k"). Only the leading location is dropped, so a field that
    # happens to be called "path" or "query" keeps its name.
    loc = [str(p) for p in error.get("loc", ())]
    if loc and loc[0] in _SOURCES:
        source, loc = loc[0], loc[1:]
        if source == "body":
            # The operation's argument name ("payload") means nothing to a
            # client: alone, it is the body itself (e.g. an empty body).
            loc = loc[1:]
    return ".".join(loc) or "body"


def _message(error: dict[str, Any]) -> str:
    # pydantic prefixes our validators' ValueError text with "Value error, ".
    return str(error.get("msg", "invalid")).removeprefix("Value error, ")


@api.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = [
        {"field": _loc(e), "message": _message(e), "type": e.get("type", "")} for e in exc.errors
    ]
    summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return api.create_response(request, {"detail": summary, "errors": errors}, status=422)


@api.exception_handler(AuthenticationError)
def on_auth_error(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return api.create_response(
        request, {"detail": "missing, unknown or revoked API key"}, status=401
    )


@api.exception_handler(ratelimit.RateLimited)
def on_rate_limited(request: HttpRequest, exc: ratelimit.RateLimited) -> HttpResponse:
    response = api.create_response(request, {"detail": exc.detail}, status=429)
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(Http404)
def on_not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return api.create_response(request, {"detail": str(exc) or "not found"}, status=404)


@api.exception_handler(EngramError)
def on_engram_error(request: HttpRequest, exc: EngramError) -> HttpResponse:
    return api.create_response(request, {"detail": exc.detail}, status=exc.status_code)


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # ninja wraps whatever the parser raised as HttpError(400, "Cannot parse
    # request body"); the parser's own reason is the useful part.
    cause = exc.__cause__
    if isinstance(cause, BodyError):
        return api.create_response(request, {"detail": cause.detail}, status=cause.status)
    return api.create_response(request, {"detail": str(exc)}, status=exc.status_code)


@api.exception_handler(BodyError)
def on_body_error(request: HttpRequest, exc: BodyError) -> HttpResponse:
    # Raised directly by operations that read their body themselves
    # (POST /tools/{name}); ninja's own parsing wraps it as HttpError.
    return api.create_response(request, {"detail": exc.detail}, status=exc.status)


@api.exception_handler(OverflowError)
def on_overflow(request: HttpRequest, exc: OverflowError) -> HttpResponse:
    # The schemas bound what they can (engram_site.bounds); this is the net
    # for a value that slipped past them: a number or date beyond what Python
    # or the database holds is the client's input, not a server fault.
    return api.create_response(
        request,
        {"detail": f"a number or date is out of the range Engram can store ({exc})"},
        status=422,
    )


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
