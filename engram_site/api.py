"""The NinjaAPI root at /api/v1: bearer-key auth bound to a space, error
handlers that turn bad input into 4xx answers naming the field, and one
router per area."""

from __future__ import annotations

import json
from typing import Any, cast

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI, Swagger
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.parser import Parser
from ninja.security import HttpBearer

from engram_site import ratelimit
from engram_site.types import SpaceRequest
from memory.errors import EngramError
from memory.models import ApiKey
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
        return key


class BodyError(Exception):
    """The body cannot be read as JSON; the message says why."""

    def __init__(self, detail: str, *, status: int = 400) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status


class StrictJsonParser(Parser):
    """JSON bodies with the reason when they cannot be read.

    ninja's own parser answers every failure with "Cannot parse request body";
    this one says whether the bytes are not UTF-8 or the JSON is broken, and
    where. It also refuses strings holding NUL (\\u0000): valid JSON, but
    PostgreSQL cannot store it, and SQLite would keep a text that the other
    backend then refuses."""

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        raw = request.body
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BodyError(
                f"the body is not UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start} "
                "cannot be decoded; send JSON encoded as UTF-8"
            ) from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BodyError(
                f"the body is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
            ) from None
        except RecursionError:  # deeper than Python's parser goes
            raise BodyError(_too_deep()) from None
        _check_depth(data)
        if "\\u0000" in text.lower():
            where = _nul_path(data)
            if where is not None:
                raise BodyError(
                    f"{where or 'body'}: text may not contain the NUL character (\\u0000)",
                    status=422,
                )
        return cast(dict[str, Any], data)


def _too_deep() -> str:
    limit = settings.MAX_JSON_DEPTH
    return (
        f"the body nests objects and arrays more than {limit} levels deep; the limit is "
        f"{limit} (ENGRAM_MAX_JSON_DEPTH)"
    )


def _check_depth(data: Any) -> None:
    """Refuse bodies nested deeper than ENGRAM_MAX_JSON_DEPTH: every part of
    Engram that walks a body (screening, redaction, export) recurses, and
    no real turn, fact or import nests anywhere near the limit."""
    level = [data]
    depth = 0
    while level:
        depth += 1
        if depth > settings.MAX_JSON_DEPTH:
            raise BodyError(_too_deep())
        level = [
            child
            for value in level
            if isinstance(value, (dict, list))
            for child in (value.values() if isinstance(value, dict) else value)
            if isinstance(child, (dict, list))
        ]


def _nul_path(value: Any, path: str = "") -> str | None:
    """The dotted path of the first string (or key) holding NUL, if any."""
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if "\x00" in str(key):
                return here
            found = _nul_path(item, here)
            if found is not None:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _nul_path(item, f"{path}.{i}" if path else str(i))
            if found is not None:
                return found
    return None


api = NinjaAPI(
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
