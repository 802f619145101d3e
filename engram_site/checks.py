"""System checks: configuration mistakes are reported at start-up, not at the
first request that trips over them."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, Warning, register


@register()
def check_engram_settings(app_configs: Any, **kwargs: Any) -> list[Any]:
    problems: list[Any] = []
    providers = settings.ENGRAM["LLM_PROVIDERS"]
    if not isinstance(providers, list) or not all(
        isinstance(p, dict) and p.get("base_url") and p.get("model") for p in providers
    ):
        problems.append(
            Error(
                "ENGRAM_LLM_PROVIDERS must be a JSON list of objects with base_url and model",
                id="engram.E001",
            )
        )
    daily = settings.ENGRAM["CONSOLIDATE_DAILY_AT"]
    parts = daily.split(":")
    if (
        len(parts) != 2
        or not all(p.isdigit() for p in parts)
        or int(parts[0]) > 23
        or int(parts[1]) > 59
    ):
        problems.append(
            Error(f"ENGRAM_CONSOLIDATE_DAILY_AT must be HH:MM, got {daily!r}", id="engram.E002")
        )
    if (
        settings.ENGRAM["EMBEDDINGS"] in ("ollama", "openai_compat")
        and not settings.ENGRAM["EMBEDDINGS_URL"]
    ):
        problems.append(
            Error(
                "ENGRAM_EMBEDDINGS_URL is required for the ollama and openai_compat backends",
                id="engram.E003",
            )
        )
    if not settings.DEBUG and settings.SECRET_KEY.startswith("django-insecure"):
        problems.append(Warning("ENGRAM_SECRET_KEY looks like a development key", id="engram.W001"))
    return problems
