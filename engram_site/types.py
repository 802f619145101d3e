"""Request types that name the attributes our auth and middleware add, so
views and API operations read them typed instead of through ignores."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

if TYPE_CHECKING:
    from memory.models import ApiKey, Space


class SpaceRequest(HttpRequest):
    """A request that passed ApiKeyAuth: every API operation acts in
    `space`, the space the bearer key `api_key` belongs to."""

    space: Space
    api_key: ApiKey
    # The user space the key is linked to (memory.services.scopes), or None;
    # `read_spaces` is what reads fuse: `space` first, then that one.
    user_space: Space | None
    read_spaces: tuple[Space, ...]


class HtmxHttpRequest(HttpRequest):
    """A dashboard request after django_htmx's HtmxMiddleware; `htmx` is
    falsy unless htmx sent it."""

    htmx: HtmxDetails
