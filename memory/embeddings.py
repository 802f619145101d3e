"""Embedding backends. With ENGRAM_EMBEDDINGS=none nothing is embedded and
recall runs on its other channels."""

from __future__ import annotations

from django.conf import settings


class EmbeddingsUnavailable(Exception):
    """The configured backend cannot embed right now (down, timing out)."""


def enabled() -> bool:
    return settings.ENGRAM["EMBEDDINGS"] != "none"


def index_items(*, space_id: int, item_ids: list[int]) -> None:
    """Embed these items under the configured model (the pipeline's step 7)."""
    if not enabled():
        return
    raise EmbeddingsUnavailable(f"backend {settings.ENGRAM['EMBEDDINGS']!r} is not available")
