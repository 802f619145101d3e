"""Domain errors that the API turns into clear 4xx answers."""

from __future__ import annotations


class EngramError(Exception):
    status_code = 400

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class Forbidden(EngramError):
    """The key is valid, but its space lacks a right (e.g. host_access)."""

    status_code = 403


class NotFound(EngramError):
    status_code = 404


class Conflict(EngramError):
    """E.g. an optimistic-lock version mismatch."""

    status_code = 409


class Invalid(EngramError):
    status_code = 422


class BadGateway(EngramError):
    """An external provider answered, with an error."""

    status_code = 502


class Unavailable(EngramError):
    """An external provider is down, late or its circuit is open."""

    status_code = 503
