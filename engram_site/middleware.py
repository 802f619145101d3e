from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse


class BodySizeLimitMiddleware:
    """Answer 413 for a declared body larger than ENGRAM_MAX_BODY_BYTES before
    anything reads it. Bodies without a length are caught later by Django's
    DATA_UPLOAD_MAX_MEMORY_SIZE, which the API turns into a 413 as well."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = request.META.get("CONTENT_LENGTH") or "0"
        try:
            declared = int(length)
        except ValueError:
            return JsonResponse({"detail": "Content-Length is not a number"}, status=400)
        if declared > settings.MAX_BODY_BYTES:
            return JsonResponse(
                {
                    "detail": f"request body is {declared} bytes; the limit is {settings.MAX_BODY_BYTES}"
                },
                status=413,
            )
        return self.get_response(request)
