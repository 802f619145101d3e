"""Request-level guards: the body size limit, JSON for every error under
/api/, the dashboard's language (never the API's), and the
Content-Security-Policy of HTML pages."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, MutableMapping
from io import BytesIO
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.middleware.locale import LocaleMiddleware
from django.utils import translation

log = logging.getLogger("django.request")


def _too_big(size: str) -> JsonResponse:
    return JsonResponse(
        {"detail": f"request body is {size} bytes; the limit is {settings.MAX_BODY_BYTES}"},
        status=413,
    )


class BodySizeLimitMiddleware:
    """Answer 413 for a body larger than ENGRAM_MAX_BODY_BYTES before any view
    parses it.

    A declared Content-Length is checked without reading anything. A chunked
    body has no length, and Django would read it as empty, so it is read here
    up to one byte past the limit: over the limit answers 413, otherwise the
    bytes read become the request body."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = request.META.get("CONTENT_LENGTH") or ""
        if length:
            try:
                declared = int(length)
            except ValueError:
                return JsonResponse({"detail": "Content-Length is not a number"}, status=400)
            if declared > settings.MAX_BODY_BYTES:
                return _too_big(str(declared))
        elif "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            stream = request.META.get("wsgi.input")
            if stream is not None:
                body = stream.read(settings.MAX_BODY_BYTES + 1)
                if len(body) > settings.MAX_BODY_BYTES:
                    return _too_big(f"more than {settings.MAX_BODY_BYTES}")
                request.META["CONTENT_LENGTH"] = str(len(body))
                # HttpRequest.body and read() use these; the WSGI stream was
                # consumed above.
                request._body = body
                request._stream = BytesIO(body)  # type: ignore[attr-defined]
        return self.get_response(request)


class AsgiBodyLimit:
    """The same limit for the ASGI app, where Django reads the whole body
    into a temporary file before any middleware runs: a declared
    Content-Length over the limit is refused before reading, and a chunked
    body is read only up to one byte past the limit."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = int(settings.MAX_BODY_BYTES)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            if declared.isdigit() and int(declared) > limit:
                await self._refuse(send, declared.decode())
                return
            await self.app(scope, receive, send)
            return
        buffered: list[dict[str, Any]] = []
        size = 0
        while True:
            message = await receive()
            buffered.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > limit:
                await self._refuse(send, f"more than {limit}")
                return
            if not message.get("more_body", False):
                break

        async def replay() -> dict[str, Any]:
            if buffered:
                return buffered.pop(0)
            return await receive()  # type: ignore[no-any-return]

        await self.app(scope, replay, send)

    async def _refuse(self, send: Any, size: str) -> None:
        body = json.dumps(
            {"detail": f"request body is {size} bytes; the limit is {settings.MAX_BODY_BYTES}"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


class ApiJsonErrorsMiddleware:
    """Every answer under /api/ is JSON, errors included.

    django-ninja answers JSON for what reaches an operation, but some errors
    are made before or around it: an unknown path is Django's HTML 404, a
    wrong method is ninja's plain-text 405, a disallowed host is Django's HTML
    400, and an unhandled exception is Django's HTML 500. This middleware sits
    outermost and rewrites any non-JSON error under /api/ as
    `{"detail": ...}` with the same status (and headers such as Allow)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code >= 400
            and request.path.startswith("/api/")
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            return self._as_json(request, response)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not request.path.startswith("/api/") or settings.DEBUG:
            return None
        # Answering here keeps Django from logging it, so log it as it would.
        log.error("Internal Server Error: %s", request.path, exc_info=exception)
        return JsonResponse({"detail": "internal server error; it has been logged"}, status=500)

    def _as_json(self, request: HttpRequest, response: HttpResponse) -> JsonResponse:
        status = response.status_code
        where = f"{request.method} {request.path}"
        if status == 404:
            detail = f"no such endpoint: {where} (the API is described at /api/v1/docs)"
        elif status == 405:
            # ninja builds Allow from a set: sorted, it reads the same each time.
            allowed = ", ".join(
                sorted(m.strip() for m in response.get("Allow", "").split(",") if m.strip())
            )
            response["Allow"] = allowed
            detail = f"{request.method} is not allowed on {request.path}" + (
                f"; allowed: {allowed}" if allowed else ""
            )
        else:
            detail = f"{response.reason_phrase.lower()}: {where}"
        answer = JsonResponse({"detail": detail}, status=status)
        for header in ("Allow", "Retry-After", "WWW-Authenticate"):
            if header in response:
                answer[header] = response[header]
        return answer


class DashboardLocaleMiddleware(LocaleMiddleware):
    """Django's LocaleMiddleware for the dashboard and the admin, not for the
    API. An agent's client sends whatever Accept-Language its HTTP library
    likes; the API's answers (error details, enums, validation messages from
    Django or ninja) are a contract and must not change with it, and a cache
    must not see them vary by language. So under /api/ the default language is
    active and no Content-Language or Vary: Accept-Language is added."""

    def process_request(self, request: HttpRequest) -> None:
        if request.path.startswith("/api/"):
            translation.activate(settings.LANGUAGE_CODE)
            request.LANGUAGE_CODE = settings.LANGUAGE_CODE
            return
        super().process_request(request)

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if request.path.startswith("/api/"):
            return response
        return super().process_response(request, response)


class ContentSecurityPolicyMiddleware:
    """The Content-Security-Policy header (ENGRAM_CSP) on every HTML answer:
    the dashboard, the admin and the API docs load scripts only from our own
    static files, so an injected <script> or inline handler does not run.
    Django 5.2 has no CSP of its own; JSON answers need none."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        policy = str(settings.CONTENT_SECURITY_POLICY).strip()
        self.policy = "" if policy.lower() in ("off", "none", "false", "0") else policy

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            self.policy
            and "Content-Security-Policy" not in response
            and response.get("Content-Type", "").startswith("text/html")
        ):
            response["Content-Security-Policy"] = self.policy
        return response
